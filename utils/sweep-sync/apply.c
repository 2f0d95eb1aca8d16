/* SPDX-License-Identifier: MIT */
/*
 * Deciding and applying the changes. Entries are decided in rsync's
 * file-list order (so the itemized lines and the hard-link leaders come out
 * as rsync's do); regular files that need data are handed to the copy
 * engine (sweep_copy_new(3)), which queues them and writes them in one
 * physical sweep of the source, each as an unnamed temporary in its
 * directory put in place when complete. Deletions come after every
 * transfer, and only when nothing failed. Directory metadata is applied
 * last, deepest first.
 *
 * Nothing here names a file by path: sources are reached beneath their
 * operand's descriptor and the destination beneath DEST's, through the
 * engine (struct sweep_copy_src, and sweep_copy_remove/link/stat/chmod/attrs
 * for what sync does besides copying). Paths are only for messages.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sweep.h>

#include "cli.h"
#include "copy_msg.h"
#include "progress.h"
#include "filter.h"
#include "sync.h"
#include "testhook.h"

#define NONE UINT32_MAX

struct apply {
	struct sync_ctx *c;
	char *sb, *db, *lb; /* path buffers */
	uint64_t written;   /* data bytes written so far */
	uint64_t files_read, files_written; /* test hook counters */
	unsigned preserve;  /* SWEEP_PRESERVE_* */
	int basis;          /* >= 0: the next copy's data comes from that --copy-dest DIR's file (from_basis) */
	struct fst basis_st; /* ... the file as basis_find() saw it */
	/* --delay-updates: the files written as DIR/.~tmp~/NAME, renamed into place after the last flush */
	struct delayed {
		uint32_t node;
		char *tmp;
	} *delayed;
	size_t ndelayed, capdelayed;
};

#define DELAY_DIR ".~tmp~"

/*
 * --delay-updates: where n's copy is written, DIR/.~tmp~/NAME, that
 * directory made (owner-only, as rsync's partial dir) when missing: the
 * name, recorded for delayed_finish(), or NULL with *err.
 */
static const char *delayed_name(struct apply *a, size_t i, int *err)
{
	struct sync_ctx *c = a->c;
	const char *rel = node_dst_rel(c, &c->list.v[i]), *name;
	const char *slash = strrchr(rel, '/');
	int dfd = sync_parent_beneath(c->dest_fd, rel, &name);
	struct stat st;
	char *tmp = NULL;

	*err = dfd < 0 ? dfd : 0;
	if (dfd < 0)
		return NULL;
	if (mkdirat(dfd, DELAY_DIR, 0700) < 0 && errno != EEXIST)
		*err = -errno;
	else if (fstatat(dfd, DELAY_DIR, &st, AT_SYMLINK_NOFOLLOW) < 0)
		*err = -errno;
	else if (!S_ISDIR(st.st_mode))
		*err = -ENOTDIR; /* a symlink or a file there is never written through */
	close(dfd);
	if (*err == 0 && asprintf(&tmp, "%.*s%s" DELAY_DIR "/%s", slash ? (int)(slash - rel) : 0, rel,
				  slash ? "/" : "", name) < 0) {
		tmp = NULL;
		*err = -ENOMEM;
	}
	if (*err == 0 && a->ndelayed == a->capdelayed) {
		size_t cap = a->capdelayed ? a->capdelayed * 2 : 64;
		struct delayed *v = realloc(a->delayed, cap * sizeof(*v));

		if (!v)
			*err = -ENOMEM;
		else
			a->delayed = v, a->capdelayed = cap;
	}
	if (*err) {
		free(tmp);
		return NULL;
	}
	a->delayed[a->ndelayed++] = (struct delayed){ .node = (uint32_t)i, .tmp = tmp };
	c->list.v[i].flags |= N_DELAYED;
	return tmp;
}

/* --delay-updates, after the last flush: each written file renamed into place, the .~tmp~ directories removed when empty */
static void delayed_finish(struct apply *a)
{
	struct sync_ctx *c = a->c;

	for (size_t k = 0; k < a->ndelayed; k++) {
		struct sync_node *n = &c->list.v[a->delayed[k].node];
		const char *rel = node_dst_rel(c, n), *name, *tname;
		int dfd, tfd, r = 0;

		n->flags &= ~N_DELAYED;
		if (n->flags & (N_FAILED | N_QUEUED))
			continue; /* not written: nothing to put in place (the engine left no part of it) */
		dfd = sync_parent_beneath(c->dest_fd, rel, &name);
		tfd = dfd < 0 ? dfd : sync_parent_beneath(c->dest_fd, a->delayed[k].tmp, &tname);
		if (dfd < 0 || tfd < 0)
			r = dfd < 0 ? dfd : tfd;
		else if (renameat(tfd, tname, dfd, name) < 0)
			r = -errno;
		if (r < 0) {
			char *tp = NULL;

			progress_clear(c->prog);
			if (asprintf(&tp, "%s/%s", c->dest_show, a->delayed[k].tmp) > 0)
				cli_error(r, "rename %s -> \"%s\"", cli_quote(tp), n->rel);
			free(tp);
			c->errors++;
			n->flags |= N_FAILED;
		}
		if (tfd >= 0)
			close(tfd);
		/* the directory of .~tmp~, once its last file is out (a stale file of another run keeps it) */
		if (dfd >= 0 && (k + 1 == a->ndelayed || c->list.v[a->delayed[k + 1].node].parent != n->parent))
			(void)unlinkat(dfd, DELAY_DIR, AT_REMOVEDIR);
		if (dfd >= 0)
			close(dfd);
	}
	for (size_t k = 0; k < a->ndelayed; k++)
		free(a->delayed[k].tmp);
	free(a->delayed);
	a->delayed = NULL;
	a->ndelayed = a->capdelayed = 0;
}

static bool same_type(mode_t a, mode_t b)
{
	return (a & S_IFMT) == (b & S_IFMT);
}

static void mark_parent_dirty(struct sync_ctx *c, const struct sync_node *n)
{
	if (n->parent != NONE)
		c->list.v[n->parent].flags |= N_DIRTY;
}

/* ---- copy engine callbacks ---- */

static bool is_space_error(int err)
{
	return err == -ENOSPC || err == -EDQUOT;
}

static int on_copy_error(const struct sweep_copy_error *e, void *ctx)
{
	struct apply *a = ctx;
	struct sync_ctx *c = a->c;
	struct sync_node *n = e->cookie < c->list.n ? &c->list.v[e->cookie] : NULL;
	bool src_side = e->op == SWEEP_COPY_OP_STAT || e->op == SWEEP_COPY_OP_OPEN_SRC || e->op == SWEEP_COPY_OP_READ ||
			e->op == SWEEP_COPY_OP_OPENDIR || e->op == SWEEP_COPY_OP_READLINK || e->op == SWEEP_COPY_OP_CHANGED;
	const char *path = src_side ? e->src : e->dst;

	if (!path)
		path = e->src ? e->src : e->dst ? e->dst : "?";
	if (e->op == SWEEP_COPY_OP_CHANGED) {
		/*
		 * The copy holds what was read, and the next run picks up the rest.
		 * rsync sends what it read without a word and exits 0; a warning
		 * here, but nothing vanished: not exit 24.
		 */
		progress_clear(c->prog);
		cli_msg("WARNING: %s changed while it was read; the copy holds what was read", cli_quote(path));
		c->changed++;
		return 0;
	}
	if (e->err == -ECANCELED && sync_stop_signal)
		return 0; /* the signal is reported once, at the end */
	if (n)
		n->flags |= N_FAILED;
	if (src_side && e->err == -ENOENT) {
		sync_vanished(c, path);
		return 0;
	}
	if (src_side && e->err == -ESTALE) {
		/* the reader refused it: not the file that was scanned (swapped, or a symlink on the way) */
		progress_clear(c->prog);
		cli_msg("%s: replaced since the scan; not transferred", cli_quote(path));
		c->errors++;
		return 0;
	}
	if (e->op == SWEEP_COPY_OP_META) {
		progress_clear(c->prog);
		cli_error(e->err, "%s: failed to preserve %s", path, copy_meta_name(e->meta));
		c->errors++;
		return 0;
	}
	sync_error(c, path, e->err);
	if (is_space_error(e->err)) {
		/* nothing more will fit: stop, as rsync does, leaving the old files intact */
		c->fatal = true;
		c->fatal_code = EXIT_FILEIO;
		return e->err;
	}
	return 0;
}

static int on_copy_done(const struct sweep_copy_done *d, void *ctx)
{
	struct apply *a = ctx;
	struct sync_ctx *c = a->c;
	struct sync_node *n;

	if (d->cookie >= c->list.n)
		return 0;
	n = &c->list.v[d->cookie];
	if (!(n->flags & N_QUEUED))
		return 0;
	n->flags &= ~N_QUEUED;
	n->flags |= N_SYNCED;
	progress_copy_done(c->prog, d);
	c->stats.xferred_size += d->bytes;
	itemize_print(c, n, n->iflags, NULL);
	out_settled(c);
	report_file_done(c, (size_t)d->cookie, d->bytes,
			 c->t_open && c->t_open[d->cookie] > 0 ? report_now() - c->t_open[d->cookie] : 0);
	return 0;
}

static void on_copy_bytes(uint64_t bytes, void *ctx)
{
	struct apply *a = ctx;

	progress_add(a->c->prog, 0, bytes);
	a->written += bytes;
	a->c->sent += bytes;
	if (a->c->o.progress == 2 && report_now() - a->c->last_progress >= 0.5)
		report_progress2(a->c);
	test_pause("bytes", a->written);
}

/* The engine's steps: a batch sorted for the progress display, the test hooks' "read" and "write" points. */
/* --stop-at, --stop-after: the time has come (said once; the run stops as after a fatal error, exit 30) */
/* -X with xattr filter rules: the names they leave to the copy engine */
static bool xattr_wanted(const char *name, void *ctx)
{
	const struct apply *a = ctx;

	return !filter_xattr_excluded(a->c->o.filters, name);
}

static bool stop_time(struct sync_ctx *c)
{
	time_t now = time(NULL);

#if SWEEP_TEST_HOOKS
	/* the test build: SWEEP_TEST_TIME_SHIFT=SECONDS moves the clock this check reads (tests/sync/options.sh) */
	const char *shift = getenv("SWEEP_TEST_TIME_SHIFT");
	if (shift)
		now += (time_t)strtol(shift, NULL, 10);
#endif
	if (!c->o.stop_at || now < c->o.stop_at)
		return false;
	if (!c->fatal) {
		progress_clear(c->prog);
		cli_msg("stopping at requested limit");
		c->fatal = true;
		c->fatal_code = EXIT_TIMEOUT;
	}
	return true;
}

static int on_copy_step(enum sweep_copy_step step, const char *src, const char *dst, uint64_t cookie, void *ctx)
{
	struct apply *a = ctx;

	(void)src;
	(void)dst;
	if (stop_time(a->c))
		return -ETIMEDOUT; /* the engine stops, and leaves nothing half-made */
	if (step == SWEEP_COPY_STEP_SORT) {
		progress_planning(a->c->prog, cookie); /* cookie: the batch's files */
		return 0;
	}
	if (step == SWEEP_COPY_STEP_OPENED && a->c->t_open && cookie < a->c->list.n)
		a->c->t_open[cookie] = report_now();
	if (step == SWEEP_COPY_STEP_OPENED)
		test_pause("read", ++a->files_read);
	else if (step == SWEEP_COPY_STEP_WRITTEN)
		test_pause("write", ++a->files_written);
	else if (step == SWEEP_COPY_STEP_FLUSH)
		test_pause("plan", 0);
	return 0;
}

/* ---- helpers ---- */

bool sync_in_my_groups(uint32_t gid)
{
	gid_t g[256];
	int n = getgroups(256, g);

	if (gid == getegid())
		return true;
	for (int i = 0; i < n; i++)
		if (g[i] == gid)
			return true;
	return false;
}

/*
 * The source of node n as the engine takes it: beneath its operand's
 * descriptor, or, receiving a remote transfer, described by what the
 * sender sent (its data comes through sweep_copy_feed_*(), remote_recv.c).
 */
const struct sweep_copy_src *sync_src_of(struct sync_ctx *c, const struct sync_node *n, const char *sp,
					 struct sweep_copy_src *src, struct sweep_stat *st)
{
	*src = (struct sweep_copy_src){
		.size = sizeof(*src),
		.root_fd = c->role == ROLE_RECEIVER ? -1 : c->src_fd[n->root],
		.rel = node_src_rel(c, n),
		.path = sp,
		.st = fst_sweep(&n->s.st, st),
		.link = n->s.link,
	};
	if (c->role == ROLE_RECEIVER) {
		src->flags = SWEEP_COPY_SRC_SUPPLIED;
		src->xattrs = remote_xattrs(c, n, &src->nxattrs);
	} else {
		if (c->o.chmod)
			src->flags = SWEEP_COPY_SRC_MODE; /* --chmod changed the listed mode: the copy gets that one */
		if (c->o.usermap || c->o.groupmap)
			src->flags |= SWEEP_COPY_SRC_OWNER; /* the owner mapped (main.c): the copy gets that one */
		if (c->o.owner != c->o.group) {
			/* -g without -o (or -o without -g): the other id stays the copy's own (chown keeps it for -1) */
			if (!c->o.owner)
				st->uid = (uint32_t)-1;
			else
				st->gid = (uint32_t)-1;
			src->flags |= SWEEP_COPY_SRC_OWNER;
		}
		if (c->o.no_super && (c->o.owner || c->o.group)) {
			/*
			 * --no-super: as another user would, the uid stays the copy's own
			 * (chown keeps it for -1), and the group follows only to one of
			 * ours (rsync's is_in_group())
			 */
			st->uid = (uint32_t)-1;
			if (!c->o.group || !sync_in_my_groups(st->gid))
				st->gid = (uint32_t)-1;
			src->flags |= SWEEP_COPY_SRC_OWNER;
		}
	}
	if (c->role != ROLE_RECEIVER && (n->flags & N_SFOLLOW)) {
		/* a symlink -L (or --copy-unsafe-links) follows: its referent, by the path the user gave */
		src->root_fd = AT_FDCWD;
		src->rel = sp;
		src->flags |= SWEEP_COPY_SRC_FOLLOWED;
		src->link = NULL;
	}
	/* without -p, a new entry gets rsync's mode (perms.c); what exists keeps its own (-E: its x bits follow) */
	if (!c->o.perms) {
		bool exists = (n->flags & N_DST) && !(n->flags & N_GONE) &&
			      (n->d.st.st_mode & S_IFMT) == (n->s.st.st_mode & S_IFMT);

		if (!exists)
			st->mode = perms_new_mode(c, n);
		else if (c->o.executability)
			st->mode = perms_exec_mode(n->s.st.st_mode, n->d.st.st_mode);
		if (c->o.executability && c->role != ROLE_RECEIVER)
			src->flags |= SWEEP_COPY_SRC_MODE;
	}
	return src;
}

static const struct sweep_copy_src *src_of(struct apply *a, const struct sync_node *n, const char *sp,
					   struct sweep_copy_src *src, struct sweep_stat *st)
{
	return sync_src_of(a->c, n, sp, src, st);
}

/* Make the destination's attributes those of the source (data already equal); -A/-X make the sets equal. */
static void fix_attrs(struct apply *a, size_t i, const char *sp, unsigned what)
{
	struct sync_ctx *c = a->c;
	struct sync_node *n = &c->list.v[i];
	struct sweep_copy_src src;
	struct sweep_stat st;
	int r = sweep_copy_attrs(c->eng, src_of(a, n, sp, &src, &st), node_dst_rel(c, n), what,
				 (c->o.acls || c->o.xattrs) ? SWEEP_COPY_ATTRS_EXACT : 0, i);

	if (r < 0 && !(r == -ECANCELED && sync_stop_signal)) {
		char *db = NULL;
		sync_error(c, node_dst_path(c, n, &db), r);
		free(db);
	}
}

static bool is_below(const char *rel, const char *dir)
{
	size_t l = strlen(dir);

	if (!strcmp(dir, "."))
		return strcmp(rel, ".") != 0;
	return !strncmp(rel, dir, l) && rel[l] == '/';
}

/* -b: keep what is about to be replaced (or, move, deleted). <0 when it could not be kept: then leave it alone. */
static int keep_backup(struct sync_ctx *c, struct sync_node *n, bool move)
{
	int r;

	if (c->o.safe_links && S_ISLNK(n->d.st.st_mode) && sync_unsafe_symlink(n->d.link, n->rel)) {
		/* --safe-links: an unsafe symlink is not kept as a backup (rsync 3.4), only replaced or removed */
		if (c->o.verbose > 0) {
			progress_clear(c->prog);
			printf("not backing up unsafe symlink \"%s\" -> \"%s\"\n", n->rel, n->d.link ? n->d.link : "");
		}
		r = move ? sweep_copy_remove(c->eng, node_dst_rel(c, n), 0) : 0;
		if (r < 0) {
			char *db = NULL;

			sync_error(c, node_dst_path(c, n, &db) ? db : n->rel, r);
			free(db);
			n->flags |= N_FAILED;
		}
		return r;
	}
	r = backup_keep(c, n, move);

	if (r < 0) {
		char *db = NULL;

		progress_clear(c->prog);
		cli_error(r, "backup failed for %s", node_dst_path(c, n, &db) ? db : n->rel);
		free(db);
		c->errors++;
		n->flags |= N_FAILED;
	}
	return r;
}

/*
 * Not root, a directory about to be emptied must be writable: rsync makes
 * one of ours that is not writable so (u+w) before it deletes inside it.
 * n's destination side, if it is such a directory.
 */
static void open_to_delete(struct sync_ctx *c, struct sync_node *n)
{
	if (c->am_root || c->o.dry_run || !S_ISDIR(n->d.st.st_mode) || (n->d.st.st_mode & S_IWUSR) ||
	    n->d.st.st_uid != geteuid())
		return;
	if (sweep_copy_chmod(c->eng, node_dst_rel(c, n), (n->d.st.st_mode & 07777) | S_IWUSR) == 0)
		n->d.st.st_mode |= S_IWUSR;
}

/*
 * The destination holds another type at n's name: remove it. A non-empty
 * directory goes only with --delete or --force (rsync refuses otherwise); its contents
 * are itemized as deletions. Returns 0 when the way is clear.
 */
static int make_way(struct apply *a, size_t i, const char *dp)
{
	struct sync_ctx *c = a->c;
	struct sync_node *n = &c->list.v[i];
	bool nonempty = false;

	if (S_ISDIR(n->d.st.st_mode)) {
		for (size_t k = 0; k < c->list.n && !nonempty; k++)
			nonempty = (c->list.v[k].flags & N_DST) && is_below(c->list.v[k].rel, n->rel);
		if (nonempty && !c->o.delete && !c->o.force) {
			progress_clear(c->prog);
			/* rsync's delete_item() says the first on stdout (FINFO), its generator the second on stderr */
			printf("cannot delete non-empty directory: %s\n", n->rel);
			fflush(stdout);
			cli_msg("could not make way for new %s: %s",
				S_ISDIR(n->s.st.st_mode) ? "directory" : S_ISLNK(n->s.st.st_mode) ? "symlink" :
				S_ISREG(n->s.st.st_mode) ? "regular file" : "special file", n->rel);
			c->errors++;
			n->flags |= N_FAILED;
			return -ENOTEMPTY;
		}
		/* deepest first, as the removal happens */
		for (size_t k = c->list.n; k-- > 0;) {
			struct sync_node *x = &c->list.v[k];

			if ((x->flags & N_DST) && !(x->flags & N_GONE) && is_below(x->rel, n->rel)) {
				itemize_deleting(c, i, x->rel, S_ISDIR(x->d.st.st_mode));
				c->stats.deleted[report_type(x->d.st.st_mode)]++;
				x->flags |= N_GONE;
			}
		}
	}
	if (!c->o.dry_run) {
		int r;

		for (size_t k = 0; k < c->list.n; k++) {
			struct sync_node *x = &c->list.v[k];

			if ((x->flags & N_DST) && (x == n || is_below(x->rel, n->rel)))
				open_to_delete(c, x);
		}
		if (c->o.backup && !S_ISDIR(n->d.st.st_mode)) {
			/* -b: the entry in the way is kept, not removed */
			if (keep_backup(c, n, true) < 0)
				return -EIO;
			r = 0;
		} else {
			r = sweep_copy_remove(c->eng, node_dst_rel(c, n), SWEEP_COPY_REMOVE_TREE);
		}

		if (r < 0 && r != -ENOENT) {
			sync_error(c, dp, r);
			n->flags |= N_FAILED;
			return r;
		}
	}
	n->flags |= N_GONE;
	mark_parent_dirty(c, n);
	return 0;
}

static bool quick_check_ok(const struct sync_ctx *c, const struct sync_node *n)
{
	if (n->s.st.st_size != n->d.st.st_size)
		return false;
	if (c->o.checksum) {
		const struct digests *g = &c->digests[n - c->list.v];

		return (n->flags & (N_DIGEST_S | N_DIGEST_D)) == (N_DIGEST_S | N_DIGEST_D) &&
		       !memcmp(g->s, g->d, 16);
	}
	if (c->o.size_only)
		return true;
	return !c->o.ignore_times && same_mtime(&n->s.st, &n->d.st);
}

/* --max-size, --min-size and -u: a regular file left as it is (rsync names it at -vv). */
static bool skipped_by_rule(struct sync_ctx *c, struct sync_node *n, bool have)
{
	const char *why = NULL;

	if (c->o.max_size >= 0 && n->s.st.st_size > c->o.max_size)
		why = "is over max-size";
	else if (c->o.min_size >= 0 && n->s.st.st_size < c->o.min_size)
		why = "is under min-size";
	else if (c->o.update && have && S_ISREG(n->d.st.st_mode) &&
		 (long long)n->s.st.st_mtim.tv_sec - (long long)n->d.st.st_mtim.tv_sec <
			 (c->o.modify_window > 0 ? c->o.modify_window : 0))
		why = "is newer";
	if (!why)
		return false;
	if (c->o.info_skip > 0) {
		char *line = NULL;
		int len = asprintf(&line, "%s %s\n", n->rel, why);

		if (len > 0)
			out_add(c, (size_t)(n - c->list.v), line, (size_t)len);
		free(line);
	}
	return true;
}

/* Hand an entry to the copy engine (or, in a dry run, only pretend to). */
static int engine_copy(struct apply *a, size_t i, const char *sp, const char *dp)
{
	struct sync_ctx *c = a->c;
	struct sync_node *n = &c->list.v[i];
	struct sweep_copy_src src;
	struct sweep_stat st;
	int r;

	if (c->o.dry_run)
		return 0;
	src_of(a, n, sp, &src, &st);
	if (a->basis >= 0) {
		/*
		 * rsync's copy_altdest_file(): the data of the basis file (the
		 * same size and time as the source), read beneath its DIR; the
		 * source's attributes.
		 */
		src.root_fd = c->basis_fd[a->basis];
		src.rel = node_dst_rel(c, n);
		src.flags &= ~SWEEP_COPY_SRC_FOLLOWED;
		/* the identity the engine checks while it reads (replaced, changed) is the basis file's */
		st.dev = a->basis_st.st_dev;
		st.ino = a->basis_st.st_ino;
		st.size = (uint64_t)a->basis_st.st_size;
		st.ctime_sec = a->basis_st.st_ctim.tv_sec;
		st.ctime_nsec = (uint32_t)a->basis_st.st_ctim.tv_nsec;
	}
	const char *dst = node_dst_rel(c, n);
	if (c->o.delay_updates && S_ISREG(n->s.st.st_mode) && !(dst = delayed_name(a, i, &r))) {
		sync_error(c, dp, r);
		n->flags |= N_FAILED;
		return r == -ENOMEM ? r : 1;
	}
	r = sweep_copy_entry(c->eng, &src, dst, i);
	if (r < 0) {
		n->flags |= N_FAILED;
		if (c->fatal)
			return r;
		return r == -ENOMEM ? r : 1;
	}
	return 0;
}

/* Transfer a regular file's data: queue it, itemize when it is written. */
static int transfer(struct apply *a, size_t i, unsigned f, const char *sp, const char *dp)
{
	struct sync_ctx *c = a->c;
	struct sync_node *n = &c->list.v[i];
	int r;

	if (c->o.checksum && !(f & IT_NEW))
		f |= IT_CHANGE;
	n->iflags = f;
	mark_parent_dirty(c, n);
	if (c->o.dry_run) {
		itemize_print(c, n, f, NULL);
		return 0;
	}
	if (!(f & IT_NEW) && (n->flags & N_DST) && !(n->flags & N_GONE) && keep_backup(c, n, false) < 0)
		return 0;
	progress_plan(c->prog, 1, (uint64_t)n->s.st.st_size);
	n->flags |= N_QUEUED;
	/* a remote source: asked of the sender, written as its data comes (remote_flush) */
	r = c->role == ROLE_RECEIVER ? remote_request(c, i) : engine_copy(a, i, sp, dp);
	if (r)
		n->flags &= ~N_QUEUED;
	return r < 0 ? r : 0;
}

/* Every queued file written: read here in one sweep, or sent by a remote sender. */
static int flush_all(struct sync_ctx *c)
{
	int r = c->role == ROLE_RECEIVER ? remote_flush(c) : 0;

	return r < 0 ? r : sweep_copy_flush(c->eng);
}

/* Link member i of a hard-link group to its leader's destination. */
static int hlink_to_leader(struct apply *a, size_t i)
{
	struct sync_ctx *c = a->c;
	struct sync_node *n = &c->list.v[i];
	struct sync_node *l = &c->list.v[n->hl_leader];
	bool have = (n->flags & N_DST) && !(n->flags & N_GONE);
	unsigned f = IT_LOCAL | IT_HLINK;
	const char *dp, *lp;
	char *lbuf = NULL;
	int r = 0;

	if (l->flags & N_FAILED) {
		n->flags |= N_FAILED;
		return 0;
	}
	dp = node_dst_path(c, n, &a->db);
	lp = node_dst_path(c, l, &lbuf);
	if (!dp || !lp) {
		free(lbuf);
		return -ENOMEM;
	}
	if (have) {
		struct sweep_stat lst;
		bool same;

		/* already one inode with the leader's copy: nothing to do */
		if (!c->o.dry_run)
			same = sweep_copy_stat(c->eng, node_dst_rel(c, l), &lst) == 0 && lst.dev == n->d.st.st_dev &&
			       lst.ino == n->d.st.st_ino;
		else
			same = (l->flags & N_DST) && !(l->iflags & IT_TRANSFER) &&
			       l->d.st.st_dev == n->d.st.st_dev && l->d.st.st_ino == n->d.st.st_ino;
		if (same) {
			n->flags |= N_SYNCED;
			/* as rsync's hard_link_check(): "hf" at -ii, "NAME is uptodate" at -vv */
			itemize_print(c, n, IT_LOCAL | IT_HLINK | itemize_attrs(c, n), "");
			free(lbuf);
			return 0;
		}
	}
	if (have)
		f |= itemize_attrs(c, n);
	else
		f |= IT_NEW;
	if (!c->o.dry_run && have && keep_backup(c, n, false) < 0) {
		free(lbuf);
		return 0;
	}
	if (!c->o.dry_run) {
		r = sweep_copy_link(c->eng, node_dst_rel(c, l), node_dst_rel(c, n));
		if (r < 0) {
			progress_clear(c->prog);
			cli_error(r, "link %s => %s failed", dp, lp);
			c->errors++;
			n->flags |= N_FAILED;
			free(lbuf);
			return 0;
		}
	}
	n->flags |= N_SYNCED;
	mark_parent_dirty(c, n);
	itemize_print(c, n, f, l->rel);
	free(lbuf);
	return 0;
}

static void set_leader(struct sync_ctx *c, size_t i)
{
	struct sync_node *n = &c->list.v[i];

	c->list.v[n->hl_first].hl_leader = (uint32_t)i;
	n->hl_leader = (uint32_t)i;
	n->flags |= N_HL_LEADER;
	/* members deferred so far wait for this leader */
	for (uint32_t k = n->hl_first; k != NONE && k != i; k = c->list.v[k].hl_next)
		if (c->list.v[k].flags & N_HL_WAIT)
			c->list.v[k].hl_leader = (uint32_t)i;
}

/* Link the waiting members of i's group to it, now that it is in place. */
static int link_waiters(struct apply *a, size_t i)
{
	struct sync_ctx *c = a->c;
	int r = 0;

	for (uint32_t k = c->list.v[i].hl_first; k != NONE && r >= 0; k = c->list.v[k].hl_next) {
		struct sync_node *m = &c->list.v[k];

		if ((m->flags & N_HL_WAIT) && m->hl_leader == i) {
			m->flags &= ~N_HL_WAIT;
			r = hlink_to_leader(a, k);
		}
	}
	return r;
}

/*
 * An entry missing from DEST, looked up in the --link-dest/--compare-dest/
 * --copy-dest DIRs as rsync's try_dests_reg() and try_dests_non() do.
 * 0 when it was dealt with (linked, left out, or queued as a local copy
 * itemized against the basis entry), 1 when no DIR has it (transfer it as
 * new), <0 on a fatal error.
 */
static int from_basis(struct apply *a, size_t i)
{
	struct sync_ctx *c = a->c;
	struct sync_node *n = &c->list.v[i];
	struct fst b;
	int which, level = basis_find(c, n, &b, &which);
	bool exact;
	unsigned f;
	char *sb = NULL;
	const char *sp;
	int r;

	if (level == 0)
		return 1;
	f = itemize_attrs_vs(c, n, &b, c->basis_fd[which]);
	exact = level == 3;
	if (level == 3 && c->o.basis_kind != BASIS_COPY) {
		if (c->o.basis_kind == BASIS_COMPARE) {
			/* unchanged against the DIR: nothing goes to DEST */
			n->flags |= N_SYNCED;
			itemize_print(c, n, f | IT_MATCHED, NULL);
			return 0;
		}
		r = c->o.dry_run ? 0 : basis_link(c, n, which);
		if (r == 0) {
			n->flags |= N_SYNCED;
			mark_parent_dirty(c, n);
			itemize_print(c, n, IT_LOCAL | IT_HLINK | IT_MATCHED | f, "");
			return 0;
		}
		/* rsync copies what it could not link (another filesystem, too many links) */
		level = 2;
	}
	sp = node_src_path(c, n, &sb);
	if (!sp)
		return -ENOMEM;
	/* level 2: the same data, copied locally ('c') from the basis; level 1: transferred against the basis */
	/*
	 * (The engine gives the copy the mode and times of the file it read:
	 * unless the basis has the source's, as at level 3 with -pt, the
	 * source's data is copied instead.)
	 */
	if (exact && b.st_mode == n->s.st.st_mode && b.st_mtim.tv_sec == n->s.st.st_mtim.tv_sec &&
	    b.st_mtim.tv_nsec == n->s.st.st_mtim.tv_nsec) {
		a->basis = which;
		a->basis_st = b;
	}
	r = transfer(a, i, (level >= 2 ? IT_LOCAL : IT_TRANSFER) | f, sp, NULL);
	a->basis = -1;
	free(sb);
	return r < 0 ? r : 0;
}

static int do_regular(struct apply *a, size_t i, const char *sp, const char *dp)
{
	struct sync_ctx *c = a->c;
	struct sync_node *n = &c->list.v[i];
	bool have = (n->flags & N_DST) && !(n->flags & N_GONE);

	if (skipped_by_rule(c, n, have))
		return 0;

	if (n->flags & N_HL) {
		struct sync_node *first = &c->list.v[n->hl_first];

		if (first->hl_leader != NONE) {
			struct sync_node *l = &c->list.v[first->hl_leader];

			n->hl_leader = first->hl_leader;
			if (l->flags & (N_QUEUED | N_DELAYED)) {
				n->flags |= N_HL_WAIT;
				return 0;
			}
			return hlink_to_leader(a, i);
		}
		if (!have && n->hl_next != NONE) {
			/* rsync waits for a member whose destination can be kept, else the last */
			n->flags |= N_HL_WAIT;
			return 0;
		}
		set_leader(c, i);
	}
	if (!have && c->o.nbasis && !(n->flags & N_HL)) {
		int r = from_basis(a, i);

		if (r <= 0)
			return r;
		/* r > 0: not from a basis: an ordinary transfer */
	}
	if (!have) {
		int r = transfer(a, i, IT_TRANSFER | IT_NEW, sp, dp);

		if (r >= 0 && (n->flags & N_HL) && !(n->flags & N_QUEUED))
			r = link_waiters(a, i);
		return r;
	}
	if (quick_check_ok(c, n)) {
		unsigned f = itemize_attrs(c, n);

		n->flags |= N_SYNCED;
		itemize_print(c, n, f, NULL);
		if ((f & ~IT_SIZE) && !c->o.dry_run)
			fix_attrs(a, i, sp, a->preserve);
		return (n->flags & N_HL) ? link_waiters(a, i) : 0;
	}
	int r = transfer(a, i, IT_TRANSFER | itemize_attrs(c, n), sp, dp);
	if (r >= 0 && (n->flags & N_HL) && !(n->flags & N_QUEUED))
		r = link_waiters(a, i);
	return r;
}

/* Symlinks, devices, FIFOs and sockets: made at once by the copy engine. */
static int do_other(struct apply *a, size_t i, const char *sp, const char *dp)
{
	struct sync_ctx *c = a->c;
	struct sync_node *n = &c->list.v[i];
	bool have = (n->flags & N_DST) && !(n->flags & N_GONE);
	unsigned f;
	int r;

	if (n->flags & N_HL) {
		/* -H: made at once, so the first name of the group leads and the others link to it */
		struct sync_node *first = &c->list.v[n->hl_first];

		if (first->hl_leader != NONE) {
			n->hl_leader = first->hl_leader;
			return hlink_to_leader(a, i);
		}
		set_leader(c, i);
	}

	if (!have && c->o.nbasis) {
		struct fst b;
		int which, level = basis_find(c, n, &b, &which);

		if (level == 3 && c->o.basis_kind != BASIS_COPY) {
			unsigned bf = itemize_attrs_vs(c, n, &b, c->basis_fd[which]) | IT_MATCHED;

			if (c->o.basis_kind == BASIS_COMPARE) {
				n->flags |= N_SYNCED;
				itemize_print(c, n, bf, NULL);
				return 0;
			}
			if ((c->o.dry_run ? 0 : basis_link(c, n, which)) == 0) {
				n->flags |= N_SYNCED;
				mark_parent_dirty(c, n);
				itemize_print(c, n, IT_LOCAL | IT_HLINK | bf, "");
				return 0;
			}
			/*
			 * The destination would not hard-link it (a symlink on a
			 * filesystem that answers ENOTSUP, EPERM, ENOSYS): made anew
			 * below, and itemized once, as the match it is ('cL          '
			 * with -ii or -vv), as rsync does.
			 */
			f = IT_LOCAL | bf;
		} else {
			f = level >= 1 ? IT_LOCAL | itemize_attrs_vs(c, n, &b, c->basis_fd[which]) : IT_LOCAL | IT_NEW;
		}
	} else if (!have) {
		f = IT_LOCAL | IT_NEW;
	} else {
		bool same = S_ISLNK(n->s.st.st_mode) ? !strcmp(n->s.link, n->d.link ? n->d.link : "")
			  : (S_ISCHR(n->s.st.st_mode) || S_ISBLK(n->s.st.st_mode)) ? n->s.st.st_rdev == n->d.st.st_rdev
			  : true;

		f = itemize_attrs(c, n);
		if (same) {
			n->flags |= N_SYNCED;
			itemize_print(c, n, f, NULL);
			if (f && !c->o.dry_run)
				fix_attrs(a, i, sp, a->preserve);
			return 0;
		}
		f |= IT_LOCAL | IT_CHANGE;
		if (!c->o.dry_run && keep_backup(c, n, false) < 0)
			return 0;
	}
	r = engine_copy(a, i, sp, dp);
	if (r < 0)
		return r;
	if (r == 0) {
		n->flags |= N_SYNCED;
		mark_parent_dirty(c, n);
		itemize_print(c, n, f, NULL);
	}
	return 0;
}

static int do_dir(struct apply *a, size_t i, const char *sp, const char *dp)
{
	struct sync_ctx *c = a->c;
	struct sync_node *n = &c->list.v[i];
	bool have = (n->flags & N_DST) && !(n->flags & N_GONE);
	int r;

	if (have) {
		unsigned f = itemize_attrs(c, n);

		itemize_print(c, n, f, NULL);
		/*
		 * New permissions now, as rsync does (the rest waits for the end):
		 * a directory that becomes writable must be so before its contents
		 * are written. Without root, keep it open to us until then.
		 */
		if ((f & IT_PERMS) && !c->o.dry_run &&
		    (r = sweep_copy_chmod(c->eng, node_dst_rel(c, n), c->o.fake_super ? (n->s.st.st_mode & 0777) | S_IRWXU
						    : (n->s.st.st_mode & 07777) | (c->am_root ? 0 : S_IRWXU))) < 0)
			sync_error(c, dp, r);
		else if (!(f & IT_PERMS) && !c->am_root && !c->o.dry_run &&
			 (n->d.st.st_mode & S_IRWXU) != S_IRWXU) {
			/* a read-only directory is opened to us while we work in it (restore_tweaked) */
			if (sweep_copy_chmod(c->eng, node_dst_rel(c, n), (n->d.st.st_mode & 07777) | S_IRWXU) == 0)
				n->flags |= N_TWEAKED;
		}
		/* -A/-X: the sets become equal now (the rest of the metadata waits for the end) */
		if ((f & (IT_ACL | IT_XATTR)) && !c->o.dry_run)
			fix_attrs(a, i, sp, a->preserve & (SWEEP_PRESERVE_XATTR | SWEEP_PRESERVE_ACL));
		if (f)
			n->flags |= N_DIRTY;
		return 0;
	}
	r = engine_copy(a, i, sp, dp);
	if (r < 0)
		return r;
	if (r > 0) {
		n->flags |= N_SKIPDIR;
		progress_clear(c->prog);
		cli_msg("*** Skipping any contents from this failed directory ***");
		return 0;
	}
	n->flags |= N_NEWDIR;
	mark_parent_dirty(c, n);
	if (c->o.nbasis) {
		/* rsync itemizes a new directory against a --*-dest DIR's one of that name */
		struct fst b;
		int which;

		if (basis_find(c, n, &b, &which) > 0) {
			itemize_print(c, n, IT_LOCAL | IT_MATCHED | itemize_attrs_vs(c, n, &b, c->basis_fd[which]), NULL);
			return 0;
		}
	}
	itemize_print(c, n, IT_LOCAL | IT_NEW, NULL);
	return 0;
}

static int decide(struct apply *a, size_t i)
{
	struct sync_ctx *c = a->c;
	struct sync_node *n = &c->list.v[i];
	const char *sp, *dp;

	if (n->parent != NONE && (c->list.v[n->parent].flags & (N_SKIPDIR | N_FAILED))) {
		n->flags |= N_SKIPDIR;
		return 0;
	}
	if (!(n->flags & N_SRC) || (n->flags & N_FAILED))
		return 0;
	sp = node_src_path(c, n, &a->sb);
	dp = node_dst_path(c, n, &a->db);
	if (!sp || !dp)
		return -ENOMEM;
	if ((n->flags & N_DST) && !(n->flags & N_GONE) && n->d.st.st_nlink > 1 && !S_ISDIR(n->d.st.st_mode) &&
	    !c->o.dry_run) {
		/*
		 * Another name of this DEST inode may have had its attributes set
		 * already in this run: look again, as rsync's generator stats each
		 * name when it comes to it.
		 */
		struct sweep_stat now;

		if (sweep_copy_stat(c->eng, node_dst_rel(c, n), &now) == 0 && now.ino == n->d.st.st_ino &&
		    now.dev == n->d.st.st_dev && (!c->o.fake_super || fake_overlay_at(c, c->dest_fd, node_dst_rel(c, n), &now) == 0))
			fst_pack(&n->d.st, &now);
	}
	bool have = (n->flags & N_DST) && !(n->flags & N_GONE);
	if ((c->o.existing && !have && strcmp(n->rel, ".")) || (c->o.ignore_existing && have && !S_ISDIR(n->s.st.st_mode))) {
		/* --existing: nothing new is made (a directory's contents neither); --ignore-existing: nothing existing updated */
		if (S_ISDIR(n->s.st.st_mode))
			n->flags |= N_SKIPDIR;
		if (c->o.info_skip > 0) {
			char *line = NULL;
			int len = have ? asprintf(&line, "%s exists\n", n->rel)
				       : asprintf(&line, "not creating new %s \"%s\"\n",
						  S_ISDIR(n->s.st.st_mode) ? "directory" : "file", n->rel);

			if (len > 0)
				out_add(c, i, line, (size_t)len);
			free(line);
		}
		return 0;
	}
	if ((n->flags & N_DST) && !(n->flags & N_GONE) && !same_type(n->s.st.st_mode, n->d.st.st_mode)) {
		if (make_way(a, i, dp) < 0)
			return 0;
	}
	if (S_ISDIR(n->s.st.st_mode))
		return do_dir(a, i, sp, dp);
	if (S_ISREG(n->s.st.st_mode))
		return do_regular(a, i, sp, dp);
	if (S_ISLNK(n->s.st.st_mode) && c->o.safe_links && sync_unsafe_symlink(n->s.link, n->rel)) {
		/* --safe-links: a symlink that leads out of the tree is not made (what DEST has there stays) */
		if (c->o.name_level > 0) {
			char *line = NULL;
			int len = asprintf(&line, "ignoring unsafe symlink \"%s\" -> \"%s\"\n", n->rel, n->s.link);

			if (len > 0)
				out_add(c, i, line, (size_t)len);
			free(line);
		}
		return 0;
	}
	return do_other(a, i, sp, dp);
}

/*
 * Groups whose later members were all skipped (their directory could not be
 * made, say) never got a leader: the last waiting member carries the data
 * then, as rsync does for a skipped hard link.
 */
static int promote_orphans(struct apply *a)
{
	struct sync_ctx *c = a->c;
	bool queued = false;
	int r = 0;

	for (size_t i = c->list.n; i-- > 0 && r >= 0;) {
		struct sync_node *n = &c->list.v[i];
		const char *sp, *dp;
		bool have = (n->flags & N_DST) && !(n->flags & N_GONE);

		if (!(n->flags & N_HL_WAIT) || c->list.v[n->hl_first].hl_leader != NONE)
			continue;
		n->flags &= ~N_HL_WAIT;
		set_leader(c, i);
		sp = node_src_path(c, n, &a->sb);
		dp = node_dst_path(c, n, &a->db);
		if (!sp || !dp)
			return -ENOMEM;
		r = transfer(a, i, IT_TRANSFER | (have ? itemize_attrs(c, n) : IT_NEW), sp, dp);
		queued = true;
	}
	if (queued && r >= 0 && !c->o.dry_run && !c->fatal)
		r = flush_all(c);
	return r;
}

/* Members still waiting for a leader that was queued: link them now that it is written. */
static int link_after_flush(struct apply *a)
{
	struct sync_ctx *c = a->c;
	int r = 0;

	for (size_t i = 0; i < c->list.n && r >= 0; i++) {
		struct sync_node *n = &c->list.v[i];

		if (!(n->flags & N_HL_WAIT))
			continue;
		n->flags &= ~N_HL_WAIT;
		if (n->hl_leader == NONE)
			continue;
		r = hlink_to_leader(a, i);
	}
	return r;
}

/* Each node's children, in list order: kids[kstart[p] .. kstart[p + 1]). */
struct children {
	uint32_t *kids;
	size_t *kstart;
};

static int children_build(const struct sync_ctx *c, struct children *ch)
{
	size_t n = c->list.n;

	ch->kids = malloc((n ? n : 1) * sizeof(*ch->kids));
	ch->kstart = calloc(n + 2, sizeof(*ch->kstart));
	if (!ch->kids || !ch->kstart)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (c->list.v[i].parent != NONE)
			ch->kstart[c->list.v[i].parent + 2]++;
	for (size_t p = 0; p < n; p++)
		ch->kstart[p + 2] += ch->kstart[p + 1];
	for (size_t i = 0; i < n; i++)
		if (c->list.v[i].parent != NONE)
			ch->kids[ch->kstart[c->list.v[i].parent + 1]++] = (uint32_t)i;
	return 0;
}

static void children_free(struct children *ch)
{
	free(ch->kids);
	free(ch->kstart);
}

/* rsync's is_backup_file(): without --backup-dir, a name ending in the suffix is a backup already. */
static bool is_backup_name(const struct sync_ctx *c, const char *rel)
{
	size_t l = strlen(rel), sl = strlen(c->o.suffix);

	return l > sl && !strcmp(rel + l - sl, c->o.suffix);
}

/*
 * Remove extraneous node k; a directory loses what is inside it first. As
 * rsync's delete_dir_contents(), the entries of a directory go in reverse
 * list order. Returns false when k could not go (its parent stays then).
 */
static bool delete_one(struct apply *a, const struct children *ch, size_t k)
{
	struct sync_ctx *c = a->c;
	struct sync_node *n = &c->list.v[k];
	bool dir = S_ISDIR(n->d.st.st_mode), emptied = true;
	const char *dp;

	/* not there: gone already, or (-m) a source directory left out that DEST never had */
	if ((n->flags & (N_GONE | N_DELETED)) || !(n->flags & N_DST))
		return true;
	if (n->flags & N_PROTECT)
		return false; /* the filter rules keep it (perishable ones do not inside a directory being deleted) */
	if (dir) {
		open_to_delete(c, n);
		for (size_t x = ch->kstart[k + 1]; x-- > ch->kstart[k];)
			if (!delete_one(a, ch, ch->kids[x]))
				emptied = false;
	}
	if (c->o.max_delete >= 0 && c->deleted >= (uint64_t)c->o.max_delete) {
		c->skipped_deletes++;
		return false;
	}
	dp = node_dst_path(c, n, &a->db);
	if (!dp)
		return false;
	if (!c->o.dry_run) {
		int r;

		if (c->o.backup && !dir && (c->o.backup_dir || !is_backup_name(c, n->rel))) {
			/* -b: a deleted file is kept (moved to its backup name), unless it is a backup itself */
			if (keep_backup(c, n, true) < 0)
				return false;
			r = 0;
		} else {
			r = emptied ? sweep_copy_remove(c->eng, node_dst_rel(c, n), 0) : -ENOTEMPTY;
		}

		if (r == -ENOTEMPTY || r == -EEXIST) {
			/* something excluded (so protected), or that could not go, is still inside */
			progress_clear(c->prog);
			printf("cannot delete non-empty directory: %s\n", n->rel);
			return false;
		}
		if (r < 0 && r != -ENOENT) {
			sync_error(c, dp, r);
			return false;
		}
	}
	n->flags |= N_DELETED;
	c->deleted++;
	c->stats.deleted[report_type(n->d.st.st_mode)]++;
	itemize_deleting(c, SIZE_MAX, n->rel, dir);
	mark_parent_dirty(c, n);
	return true;
}

/*
 * --delete: remove what the source no longer has, after every transfer
 * (rsync's --delete-after): the directories in list order, the
 * extraneous entries of each in reverse list order, so the lines come out
 * as rsync's --delete-after prints them.
 */
static void delete_extraneous(struct apply *a)
{
	struct sync_ctx *c = a->c;
	struct children ch;

	if (children_build(c, &ch) < 0) {
		children_free(&ch);
		sync_error(c, c->dest_show, -ENOMEM);
		return;
	}
	for (size_t d = 0; d < c->list.n; d++) {
		struct sync_node *dn = &c->list.v[d];
		uint32_t p;

		if (!(dn->flags & N_SRC) || !S_ISDIR(dn->s.st.st_mode) || (dn->flags & (N_SKIPDIR | N_FAILED)))
			continue;
		/* only below directories that were synced (not skipped or failed) */
		for (p = dn->parent; p != NONE; p = c->list.v[p].parent)
			if (c->list.v[p].flags & (N_SKIPDIR | N_FAILED))
				break;
		if (p != NONE)
			continue;
		for (size_t x = ch.kstart[d + 1]; x-- > ch.kstart[d];) {
			struct sync_node *n = &c->list.v[ch.kids[x]];

			if ((n->flags & (N_SRC | N_DST | N_PROTECT | N_PERISH)) == N_DST)
				delete_one(a, &ch, ch.kids[x]);
		}
	}
	children_free(&ch);
}

/* Give the directories opened to us for the run their mode back, deepest first. */
static void restore_tweaked(struct apply *a)
{
	struct sync_ctx *c = a->c;

	for (size_t k = c->list.n; k-- > 0;) {
		struct sync_node *n = &c->list.v[k];
		const char *dp;

		int r;

		if (!(n->flags & N_TWEAKED) || !(dp = node_dst_path(c, n, &a->db)))
			continue;
		r = sweep_copy_chmod(c->eng, node_dst_rel(c, n), ((c->o.perms ? n->s.st.st_mode : n->d.st.st_mode) & 07777) |
				     (c->o.fake_super ? S_IRWXU : 0));
		if (r < 0)
			sync_error(c, dp, r);
	}
}

/* Directories whose metadata must be (re)applied go to the engine, which does it at copy_finish(). */
static int queue_dirty_dirs(struct apply *a)
{
	struct sync_ctx *c = a->c;

	for (size_t i = 0; i < c->list.n; i++) {
		struct sync_node *n = &c->list.v[i];
		struct sweep_copy_src src;
		struct sweep_stat st;
		const char *sp;
		int r;

		if ((n->flags & (N_SRC | N_DIRTY | N_NEWDIR | N_SKIPDIR | N_FAILED)) != (N_SRC | N_DIRTY) ||
		    !S_ISDIR(n->s.st.st_mode))
			continue;
		sp = node_src_path(c, n, &a->sb);
		if (!sp)
			return -ENOMEM;
		r = sweep_copy_entry(c->eng, src_of(a, n, sp, &src, &st), node_dst_rel(c, n), i);
		if (r == -ENOMEM)
			return r;
	}
	return 0;
}

/*
 * --remove-source-files: the non-directories whose destination matches now
 * (transferred or already up to date) leave the source, as rsync's sender
 * removes them. Only the entry that was scanned: one changed or replaced
 * since is kept ("not removing").
 */
void sync_remove_sources(struct sync_ctx *c)
{
	char *sb = NULL;

	for (size_t i = 0; i < c->list.n; i++) {
		struct sync_node *n = &c->list.v[i];
		const char *rel = node_src_rel(c, n), *slash, *name;
		const char *sp;
		struct stat st;
		char *dir;
		int dfd;

		if ((n->flags & (N_SRC | N_SYNCED | N_FAILED)) != (N_SRC | N_SYNCED) || S_ISDIR(n->s.st.st_mode) ||
		    c->src_fd[n->root] < 0)
			continue;
		sp = node_src_path(c, n, &sb);
		if (!sp)
			break;
		slash = strrchr(rel, '/');
		name = slash ? slash + 1 : rel;
		dir = slash ? strndup(rel, (size_t)(slash - rel)) : NULL;
		if (slash && !dir)
			break;
		dfd = sweep_open_beneath(c->src_fd[n->root], dir ? dir : ".", O_PATH | O_DIRECTORY, 0);
		free(dir);
		if (dfd < 0) {
			sync_error(c, sp, dfd);
			continue;
		}
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			sync_error(c, sp, -errno);
		} else if ((uint64_t)st.st_dev != n->s.st.st_dev || (uint64_t)st.st_ino != n->s.st.st_ino ||
			   st.st_size != n->s.st.st_size || st.st_mtim.tv_sec != n->s.st.st_mtim.tv_sec ||
			   st.st_mtim.tv_nsec != n->s.st.st_mtim.tv_nsec) {
			progress_clear(c->prog);
			cli_msg("WARNING: %s changed since it was synced: not removing it", cli_quote(sp));
		} else if (unlinkat(dfd, name, 0) < 0) {
			progress_clear(c->prog);
			cli_error(-errno, "sender failed to remove %s", sp);
			c->errors++;
		} else if (c->o.info_remove > 0) {
			printf("sender removed %s\n", n->rel);
		}
		close(dfd);
	}
	free(sb);
}

int apply_run(struct sync_ctx *c)
{
	struct apply a = { .c = c, .basis = -1 };
	int r = 0;

	/* -E without -p: every mode the engine applies is the one sync_src_of() worked out */
	if (c->o.perms || c->o.executability)
		a.preserve |= SWEEP_PRESERVE_MODE;
	if (c->o.owner || c->o.group)
		a.preserve |= SWEEP_PRESERVE_OWNER;
	if (c->o.times)
		a.preserve |= SWEEP_PRESERVE_TIMES;
	if (c->o.omit_dir_times)
		a.preserve |= SWEEP_PRESERVE_OMIT_DIR_TIMES;
	if (c->o.omit_link_times)
		a.preserve |= SWEEP_PRESERVE_OMIT_LINK_TIMES;
	if (c->o.xattrs)
		a.preserve |= SWEEP_PRESERVE_XATTR;
	if (c->o.acls)
		a.preserve |= SWEEP_PRESERVE_ACL | SWEEP_PRESERVE_MODE;
	if (c->o.fake_super)
		a.preserve |= SWEEP_PRESERVE_FAKE_SUPER;
	if (c->o.atimes)
		a.preserve |= SWEEP_PRESERVE_ATIME;
	if (!c->o.dry_run) {
		struct sweep_copy_opts co = {
			.size = sizeof(co),
			.flags = SWEEP_COPY_NO_SAME_FILE_CHECK,
			.preserve = a.preserve,
			.sparse = c->o.sparse ? SWEEP_COPY_SPARSE_ALWAYS : SWEEP_COPY_SPARSE_AUTO,
			.order = SWEEP_ORDER_AUTO,
			.on_error = on_copy_error,
			.on_done = on_copy_done,
			.on_bytes = on_copy_bytes,
			.on_step = on_copy_step,
			.ctx = &a,
			.cancel = &sync_stop_signal,
			.xattr_wanted = filter_set_has_xattr(c->o.filters) ? xattr_wanted : NULL,
		};

		/* without -p the modes of new entries come from perms.c, whole: the engine must not mask them again */
		c->perm_cache_parent = UINT32_MAX;
		if (!c->o.perms)
			umask(0);
		r = sweep_copy_new(&co, &c->eng);
		if (r < 0)
			return r;
		r = sweep_copy_set_dest(c->eng, c->dest_fd, ".", c->dest_show);
		if (r < 0) {
			sync_error(c, c->dest_show, r);
			c->eng = sweep_copy_free(c->eng);
			c->fatal = true;
			c->fatal_code = EXIT_FILEIO;
			return 0;
		}
	}
	if (r >= 0 && !c->fatal && c->o.delete && c->o.delete_before && !sync_stop_signal) {
		/* --delete-before: the same rules, before anything is transferred */
		if (c->errors || c->io_error) {
			if (!c->o.quiet)
				puts("IO error encountered -- skipping file deletion");
		} else {
			delete_extraneous(&a);
		}
	}
	if (r >= 0)
		r = out_init(c);
	for (size_t i = 0; i < c->list.n && r >= 0 && !c->fatal && !sync_stop_signal && !stop_time(c); i++) {
		r = decide(&a, i);
		out_decided(c, i + 1);
	}
	progress_walk_done(c->prog); /* every transfer is planned: the totals grow no more */
	if (!c->o.dry_run && r >= 0 && !c->fatal)
		r = flush_all(c);
	/* rsync's handle_delayed_updates(): before the hard links to them */
	if (!c->fatal && !sync_stop_signal)
		delayed_finish(&a);
	if (r >= 0 && !c->fatal)
		r = promote_orphans(&a);
	if (r >= 0 && !c->fatal)
		r = link_after_flush(&a);
	out_drain(c);
	if (r >= 0 && !c->fatal && c->o.delete && !c->o.delete_before && !sync_stop_signal) {
		/* rsync's rule: after any error (a missing or unreadable operand, an I/O error) nothing is deleted */
		if (c->errors || c->io_error) {
			progress_clear(c->prog);
			if (!c->o.quiet)
				puts("IO error encountered -- skipping file deletion"); /* rsync says it on stdout */
		} else {
			test_pause("delete", 0);
			delete_extraneous(&a);
		}
	}
	if (!c->o.dry_run) {
		if (r >= 0 && !c->fatal && !sync_stop_signal)
			r = queue_dirty_dirs(&a);
		if (!c->fatal && !sync_stop_signal) {
			int f = sweep_copy_finish(c->eng);

			if (f < 0 && r >= 0)
				r = f;
		}
		if (!sync_stop_signal)
			restore_tweaked(&a);
		c->eng = sweep_copy_free(c->eng);
		/* a remote source is the sender's to remove: it is told which */
		if (c->o.remove_source && !c->fatal && !sync_stop_signal && c->role == ROLE_RECEIVER)
			remote_remove_sources(c);
		else if (c->o.remove_source && !c->fatal && !sync_stop_signal)
			sync_remove_sources(c);
	}
	if (c->skipped_deletes) {
		progress_clear(c->prog);
		cli_msg("Deletions stopped due to --max-delete limit (%" PRIu64 " skipped)", c->skipped_deletes);
	}
	for (size_t k = 0; k < a.ndelayed; k++)
		free(a.delayed[k].tmp); /* stopped before they were put in place */
	free(a.delayed);
	free(a.sb);
	free(a.db);
	free(a.lb);
	if (c->fatal || (r == -ECANCELED && sync_stop_signal))
		return 0;
	return r < 0 ? r : 0;
}
