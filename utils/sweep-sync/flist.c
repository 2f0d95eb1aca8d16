/* SPDX-License-Identifier: MIT */
/*
 * The file lists: both trees are scanned metadata-only with sweep_walk (in
 * C-SCAN order, so the inode tables are read in one sweep), then paired by
 * relative path and sorted into rsync's file-list order, which decides the
 * itemized output and the leader of each hard-link group. The two walks
 * run at once, the destination's in a thread of its own: on a cold cache
 * each waits on its own device, as rsync's sender and receiver do.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sweep.h>

#include "cli.h"
#include "filter.h"
#include "sync.h"

/* The two walks report errors (and count them in the context) one at a time. */
static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;

static void report_error(struct sync_ctx *c, const char *path, int err, bool vanished)
{
	pthread_mutex_lock(&report_lock);
	if (vanished) {
		sync_vanished(c, path);
	} else {
		sync_error(c, path, err);
		/* rsync: an I/O error while listing forbids deletion */
		c->io_error = true;
	}
	pthread_mutex_unlock(&report_lock);
}

struct link_ent;

struct scan {
	struct sync_ctx *c;
	bool is_src;
	/* the walk at hand: its root k is operand map[k], a path of root_len[k] bytes */
	const uint32_t *map;
	const size_t *root_len;
	struct scan_ent *v;
	size_t n, cap;
	struct filter_walk *fw; /* this side's view of the filter rules */
	struct link_ent *links;  /* symlinks to directories to follow (the source's) */
	size_t nlinks, caplinks;
	int err; /* -ENOMEM, or a merge file's error */
};

void fst_pack(struct fst *d, const struct sweep_stat *s)
{
	d->st_dev = s->dev;
	d->st_ino = s->ino;
	d->st_rdev = s->rdev;
	d->st_size = (int64_t)s->size;
	d->st_mode = s->mode;
	d->st_uid = s->uid;
	d->st_gid = s->gid;
	d->st_nlink = s->nlink;
	d->st_atim = (struct timespec){ (time_t)s->atime_sec, (long)s->atime_nsec };
	d->st_mtim = (struct timespec){ (time_t)s->mtime_sec, (long)s->mtime_nsec };
	d->st_ctim = (struct timespec){ (time_t)s->ctime_sec, (long)s->ctime_nsec };
}

const struct stat *fst_stat(const struct fst *s, struct stat *b)
{
	memset(b, 0, sizeof(*b));
	b->st_dev = s->st_dev;
	b->st_ino = s->st_ino;
	b->st_rdev = s->st_rdev;
	b->st_size = s->st_size;
	b->st_mode = s->st_mode;
	b->st_uid = s->st_uid;
	b->st_gid = s->st_gid;
	b->st_nlink = s->st_nlink;
	b->st_atim = s->st_atim;
	b->st_mtim = s->st_mtim;
	b->st_ctim = s->st_ctim;
	return b;
}

const struct sweep_stat *fst_sweep(const struct fst *s, struct sweep_stat *b)
{
	struct stat st;

	sweep_stat_from_stat(b, fst_stat(s, &st));
	return b;
}

static char *rel_join(const char *rel0, const char *tail, size_t tail_len)
{
	size_t l0 = strcmp(rel0, ".") ? strlen(rel0) : 0;
	char *r = malloc(l0 + 1 + tail_len + 1);

	if (!r)
		return NULL;
	if (l0) {
		memcpy(r, rel0, l0);
		r[l0] = '/';
		memcpy(r + l0 + 1, tail, tail_len);
		r[l0 + 1 + tail_len] = 0;
	} else {
		memcpy(r, tail, tail_len);
		r[tail_len] = 0;
	}
	return r;
}

static char *read_link(int dirfd, const char *name, size_t hint)
{
	size_t cap = hint ? hint + 1 : 256;

	for (;;) {
		char *b = malloc(cap);
		ssize_t n;

		if (!b)
			return NULL;
		n = readlinkat(dirfd, name, b, cap);
		if (n < 0) {
			free(b);
			return NULL;
		}
		if ((size_t)n < cap) {
			b[n] = 0;
			return b;
		}
		free(b);
		cap *= 2;
	}
}

/* Whether this type is transferred at all with the options given. */
static bool type_wanted(const struct sync_opts *o, mode_t m)
{
	/* a listing shows what rsync's sender lists: every type (its receiver is the one that skips) */
	if (S_ISREG(m) || S_ISDIR(m) || o->list_only)
		return true;
	if (S_ISLNK(m))
		return o->links;
	if (S_ISCHR(m) || S_ISBLK(m))
		return o->devices;
	return o->specials;
}

/*
 * An entry the options leave out: rsync names it on stdout ("skipping
 * directory", "skipping non-regular file"). The names are kept and printed
 * in list order once the scan is done (skips_print), not in the walk's
 * physical order. Takes rel.
 */
static int note_skip(struct scan *s, char *rel, bool is_dir)
{
	struct sync_ctx *c = s->c;
	struct skip *v;

	if (c->nskips == c->capskips) {
		size_t cap = c->capskips ? c->capskips * 2 : 16;

		v = realloc(c->skips, cap * sizeof(*v));
		if (!v) {
			free(rel);
			s->err = -ENOMEM;
			return -ENOMEM;
		}
		c->skips = v;
		c->capskips = cap;
	}
	c->skips[c->nskips++] = (struct skip){ .rel = rel, .is_dir = is_dir };
	return is_dir ? SWEEP_WALK_SKIP : 0;
}

/*
 * The filter rules on an entry below a root. The source: an excluded
 * entry is left out (1). The destination: one the receiver's rules
 * exclude is kept from --delete (N_PROTECT; N_PERISH when only
 * perishable rules exclude it, which --delete ignores inside a directory
 * it removes) but still listed, since it may be the old copy of a source
 * entry; an excluded directory is entered only when the source may list
 * what is inside, or --delete may remove it with its directory.
 */
static int filter_entry(struct scan *s, const struct sweep_entry *e, uint32_t root, const char *rel, bool is_dir,
			unsigned *flags, bool *descend)
{
	unsigned ff = is_dir ? FILTER_DIR : 0;

	*flags = 0;
	*descend = true;
	if (filter_check(s->fw, e->dir_id, root, rel, ff) != FILTER_EXCLUDED)
		return 0;
	if (s->is_src)
		return 1;
	if (filter_check(s->fw, e->dir_id, root, rel, ff | FILTER_NO_PERISH) != FILTER_EXCLUDED) {
		*flags = N_PERISH;
		*descend = s->c->o.delete || filter_check(s->fw, e->dir_id, root, rel, ff | FILTER_AS_SENDER) != FILTER_EXCLUDED;
	} else {
		*flags = N_PROTECT;
		*descend = filter_check(s->fw, e->dir_id, root, rel, ff | FILTER_AS_SENDER) != FILTER_EXCLUDED;
	}
	return 0;
}

/* A directory about to be entered: its per-directory merge files. 0, or <0 to stop the walk. */
static int filter_dir(struct scan *s, const struct sweep_entry *e, uint32_t root, const char *rel)
{
	struct stat st;
	int dfd, r;

	if (!filter_walk_perdir(s->fw))
		return 0;
	if (e->dirfd == AT_FDCWD)
		dfd = open(e->at_name, O_PATH | O_DIRECTORY | O_CLOEXEC);
	else
		dfd = openat(e->dirfd, e->at_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd >= 0 && (fstat(dfd, &st) < 0 || (uint64_t)st.st_ino != e->st.ino || (uint64_t)st.st_dev != e->st.dev)) {
		close(dfd);
		dfd = -1; /* not the directory listed: its merge files are not read (its entries will not be either) */
	}
	if (dfd < 0)
		return 0;
	r = filter_enter(s->fw, e->dir_id, e->id, root, dfd, rel);
	close(dfd);
	if (r < 0) {
		s->err = r;
		return r;
	}
	return 0;
}

/* A source symlink to follow into a directory (-L, --copy-unsafe-links, -k): walked after this pass, as a root of its own. */
struct link_ent {
	char *path, *rel;
	uint32_t root;
	uint64_t parent_key; /* the filter state of the directory holding it */
	struct sweep_stat st; /* the directory it leads to */
};

static int defer_link(struct scan *s, const struct sweep_entry *e, uint32_t root, char *rel, const struct sweep_stat *st)
{
	struct link_ent *l;

	if (s->nlinks == s->caplinks) {
		size_t cap = s->caplinks ? s->caplinks * 2 : 16;

		l = realloc(s->links, cap * sizeof(*l));
		if (!l)
			return -ENOMEM;
		s->links = l;
		s->caplinks = cap;
	}
	l = &s->links[s->nlinks];
	l->path = strdup(e->path);
	if (!l->path)
		return -ENOMEM;
	l->rel = rel;
	l->root = root;
	l->parent_key = filter_walk_key(s->fw, e->dir_id);
	l->st = *st;
	s->nlinks++;
	return 0;
}

/*
 * A source symlink under -L, --copy-unsafe-links or -k: whether it is
 * followed (rsync's readlink_stat()/link_stat() on the sender). 1 with
 * *st its referent's, 0 kept as a symlink, -1 when it leads nowhere
 * (rsync's "symlink has no referent", an I/O error: no deletions).
 */
static int follow_link(struct scan *s, const struct sweep_entry *e, const char *rel, struct stat *st)
{
	const struct sync_opts *o = &s->c->o;
	bool want = o->copy_links || o->copy_dirlinks;

	if (!want && o->copy_unsafe_links) {
		char *target = read_link(e->dirfd, e->at_name, (size_t)e->st.size);

		want = !target || sync_unsafe_symlink(target, rel);
		free(target);
	}
	if (!want)
		return 0;
	if (fstatat(e->dirfd, e->at_name, st, 0) < 0) {
		if (o->copy_dirlinks && !o->copy_links && !o->copy_unsafe_links)
			return 0; /* -k follows what leads to a directory; a dangling link stays a link */
		pthread_mutex_lock(&report_lock);
		progress_clear(s->c->prog);
		cli_msg("symlink has no referent: %s", cli_quote(e->path));
		s->c->errors++;
		s->c->io_error = true;
		pthread_mutex_unlock(&report_lock);
		return -1;
	}
	if (!o->copy_links && !o->copy_unsafe_links && !S_ISDIR(st->st_mode))
		return 0;
	return 1;
}

/* --max-alloc: an array of n items of size would exceed it (said once, the run stops: rsync's exit 22) */
static bool over_max_alloc(struct scan *s, size_t n, size_t size)
{
	uint64_t max = s->c->o.max_alloc;

	if (!max || n < max / size)
		return false;
	pthread_mutex_lock(&report_lock);
	if (!s->c->filter_fatal) {
		progress_clear(s->c->prog);
		cli_msg("[%s] exceeded --max-alloc=%" PRIu64 " setting (the file list)", s->is_src ? "sender" : "generator",
			max);
		s->c->filter_fatal = EXIT_MALLOC;
	}
	pthread_mutex_unlock(&report_lock);
	s->err = -E2BIG;
	return true;
}

static int on_entry(const struct sweep_entry *e, void *ctx)
{
	struct scan *s = ctx;
	struct sync_ctx *c = s->c;
	struct scan_ent *x;
	struct sweep_stat st = e->st; /* the entry, or with a symlink followed, its referent */
	bool followed = false;
	uint32_t root = s->map[e->root_index];
	size_t root_len = s->root_len[e->root_index];
	char *rel;

	if (e->stat_err)
		return 0; /* reported through on_error */
	if (e->depth == 0) {
		rel = strdup(c->roots[root].rel0);
	} else {
		const char *tail = e->path + root_len + 1;

		rel = rel_join(c->roots[root].rel0, tail, e->path_len - root_len - 1);
	}
	if (!rel)
		goto nomem;
	if (s->is_src && e->depth > 0 && S_ISLNK(st.mode) &&
	    (c->o.copy_links || c->o.copy_unsafe_links || c->o.copy_dirlinks)) {
		struct stat ref;
		int f = follow_link(s, e, rel, &ref);

		if (f < 0) {
			free(rel);
			return 0;
		}
		if (f > 0) {
			sweep_stat_from_stat(&st, &ref);
			followed = true;
		}
	}
	if (c->o.fake_super && !followed) {
		int f = fake_overlay(c, e->dirfd, e->at_name, e->path, &st);

		if (f == -EBADMSG) {
			free(rel);
			s->err = f; /* rsync's RERR_FILEIO: the run stops */
			return f;
		}
		if (f < 0) {
			report_error(c, e->path, f, f == -ENOENT);
			free(rel);
			return 0;
		}
	}
	bool is_dir = S_ISDIR(st.mode);
	unsigned eflags = 0;
	bool no_descend = false, descend = true;

	/* the rules see what the sender lists: a followed symlink as its referent (a directory's "dir/" rules too) */
	if (e->depth > 0 && filter_entry(s, e, root, rel, is_dir, &eflags, &descend)) {
		free(rel);
		return S_ISDIR(e->st.mode) ? SWEEP_WALK_SKIP : 0;
	}
	no_descend = !descend;
	if (followed && is_dir) {
		/* listed, with what is inside, by a walk of its own after this one (flist_scan) */
		if (!c->o.recursive && !c->o.dirs) {
			int r = note_skip(s, rel, true);

			return r < 0 ? r : 0;
		}
		if (defer_link(s, e, root, rel, &st) < 0)
			goto nomem_rel;
		return 0;
	}

	if (is_dir && !c->o.recursive) {
		/* rsync without -r: the directory is not copied at all; with -d it is, without what is inside */
		if (s->is_src && !c->o.dirs)
			return note_skip(s, rel, true);
		no_descend = no_descend || !(e->depth == 0 && !strcmp(c->roots[root].rel0, "."));
	}
	if (is_dir && e->depth == 0 && c->roots[root].implied)
		no_descend = true;
	if (s->is_src && !type_wanted(&c->o, st.mode)) {
		/* still in rsync's file list, so in its "total size" */
		if (S_ISLNK(st.mode))
			c->total_size += st.size;
		if (c->o.info_nonreg < 1) {
			free(rel);
			return 0;
		}
		/* rsync's wording, on stdout as rsync prints it */
		return note_skip(s, rel, false);
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1024;
		struct scan_ent *v = over_max_alloc(s, cap, sizeof(*v)) ? NULL : realloc(s->v, cap * sizeof(*v));

		if (!v && s->err == -E2BIG) {
			free(rel);
			return s->err;
		}

		if (!v) {
			free(rel);
			goto nomem;
		}
		s->v = v;
		s->cap = cap;
	}
	if (is_dir && !no_descend && filter_dir(s, e, root, rel) < 0) {
		free(rel);
		return s->err;
	}
	x = &s->v[s->n];
	x->rel = rel;
	x->root = root;
	x->flags = eflags | (followed ? N_SFOLLOW : 0);
	fst_pack(&x->sd.st, &st);
	x->sd.link = NULL;
	x->sidx = UINT32_MAX;
	if (S_ISLNK(st.mode)) {
		bool placeholder = S_ISREG(e->st.mode); /* --fake-super's symlink: a file holding the target */

		x->sd.link = placeholder ? fake_read_target(e->dirfd, e->at_name)
					 : read_link(e->dirfd, e->at_name, (size_t)st.size);
		if (x->sd.link && placeholder)
			x->sd.st.st_size = (int64_t)strlen(x->sd.link);
		if (!x->sd.link) {
			int err = errno ? -errno : -EIO;

			if (err == -ENOMEM)
				goto nomem_rel;
			if (s->is_src) {
				report_error(c, e->path, err, err == -ENOENT);
				free(rel);
				return 0;
			}
			x->sd.link = strdup("");
			if (!x->sd.link)
				goto nomem_rel;
		}
	}
	s->n++;
	/* The scanning line: the source side only, which is walked on the caller's thread (walk_both). */
	if (s->is_src && is_dir)
		progress_dirs(c->prog, 1);
	else if (s->is_src && S_ISREG(st.mode))
		progress_scanned(c->prog, 1, (uint64_t)st.size);
	return no_descend ? SWEEP_WALK_SKIP : 0;

nomem_rel:
	free(rel);
nomem:
	s->err = -ENOMEM;
	return -ENOMEM;
}

static int on_error(const struct sweep_walk_error *we, void *ctx)
{
	struct scan *s = ctx;
	struct sync_ctx *c = s->c;

	/* A missing destination is simply empty. */
	if (!s->is_src && (we->err == -ENOENT || (we->err == -ENOTDIR && we->op == SWEEP_WALK_OP_ROOT)))
		return 0;
	report_error(c, we->path, we->err, s->is_src && we->err == -ENOENT && we->op != SWEEP_WALK_OP_ROOT);
	return 0;
}

/*
 * Which operands a side walks. The source: all of them. The destination:
 * the container once when some SRC ends in '/' (it holds every other
 * operand's top entry too), else each distinct top name once.
 */
static bool side_walks(const struct scan *s, size_t i)
{
	const struct sync_ctx *c = s->c;

	if (s->is_src)
		return true;
	for (size_t j = 0; j < c->nroots; j++)
		if (!strcmp(c->roots[j].rel0, ".") && !c->roots[j].implied)
			return j == i;
	for (size_t j = 0; j < i; j++)
		if (!strcmp(c->roots[j].rel0, c->roots[i].rel0))
			return false;
	return true;
}

/* The directory a root's entries are named relative to: its path less rel0's components. */
static char *root_base(const char *path, const char *rel0)
{
	size_t l = strlen(path);
	char *b;

	if (strcmp(rel0, ".")) {
		for (const char *p = rel0; p; p = strchr(p + 1, '/')) {
			while (l > 1 && path[l - 1] == '/')
				l--;
			while (l && path[l - 1] != '/')
				l--;
		}
		while (l > 1 && path[l - 1] == '/')
			l--;
	}
	if (!l)
		return strdup(".");
	b = strndup(path, l);
	return b;
}

static int walk_group(struct scan *s, const char **paths, const uint32_t *map, const size_t *lens, size_t n,
		      bool follow)
{
	struct sweep_walk_opts wo = {
		.size = sizeof(wo),
		.flags = (s->c->o.one_fs ? SWEEP_WALK_XDEV : 0) | (follow ? SWEEP_WALK_FOLLOW_ROOTS : 0),
		.order = SWEEP_ORDER_AUTO,
		.on_entry = on_entry,
		.on_error = on_error,
		.ctx = s,
	};
	int r;

	s->map = map;
	s->root_len = lens;
	for (size_t k = 0; k < n; k++) {
		char *base = root_base(paths[k], s->c->roots[map[k]].rel0);

		r = base ? filter_walk_root(s->fw, map[k], paths[k], base) : -ENOMEM;
		free(base);
		if (r < 0)
			return r;
	}
	r = sweep_walk(paths, n, &wo);
	if (s->err)
		return s->err;
	return r < 0 ? r : 0;
}

/* Walk one side's operands: one C-SCAN over all of them, or two when only some may follow a symlink. */
static int walk_side(struct scan *s)
{
	struct sync_ctx *c = s->c;
	const char **paths = calloc(c->nroots + 1, sizeof(*paths));
	uint32_t *map = calloc(c->nroots + 1, sizeof(*map));
	size_t *lens = calloc(c->nroots + 1, sizeof(*lens));
	int r = paths && map && lens ? 0 : -ENOMEM;

	for (int follow = 1; follow >= 0 && r >= 0; follow--) {
		size_t n = 0;

		for (size_t i = 0; i < c->nroots; i++) {
			if (c->roots[i].follow != (bool)follow || !side_walks(s, i))
				continue;
			paths[n] = s->is_src ? c->roots[i].src : c->roots[i].dst;
			lens[n] = strlen(paths[n]);
			map[n++] = (uint32_t)i;
		}
		if (n)
			r = walk_group(s, paths, map, lens, n, follow);
	}
	free(paths);
	free(map);
	free(lens);
	return r;
}

static int cmp_ent_rel(const void *a, const void *b)
{
	const struct scan_ent *x = *(const struct scan_ent *const *)a, *y = *(const struct scan_ent *const *)b;

	return strcmp(x->rel, y->rel);
}

/* Whether link l leads back to a directory above it (or to its operand's top): following it would never end. */
static bool link_loops(struct scan *s, struct scan_ent **dirs, size_t ndirs, const struct link_ent *l)
{
	char *p = strdup(l->rel);
	bool loop = false;

	if (!p)
		return true;
	for (;;) {
		char *slash = strrchr(p, '/');
		struct scan_ent key = { .rel = slash ? p : (char *)"." }, *kp = &key, **hit;

		if (slash)
			*slash = 0;
		hit = bsearch(&kp, dirs, ndirs, sizeof(*dirs), cmp_ent_rel);
		if (hit && (*hit)->sd.st.st_dev == l->st.dev && (*hit)->sd.st.st_ino == l->st.ino)
			loop = true;
		if (!slash || loop)
			break;
	}
	free(p);
	(void)s;
	return loop;
}

/* A followed directory symlink as a root of its own (sync_root.linked). Takes nothing; -ENOMEM. */
static int add_link_root(struct sync_ctx *c, const struct link_ent *l)
{
	const struct sync_root *up = &c->roots[l->root];
	const char *tail = !strcmp(up->rel0, ".") ? l->rel : l->rel + strlen(up->rel0) + 1;
	struct sync_root *rt;

	if (c->nroots == c->caproots) {
		size_t cap = c->caproots ? c->caproots * 2 : 8;
		struct sync_root *v = realloc(c->roots, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		c->roots = v;
		c->caproots = cap;
		up = &c->roots[l->root];
	}
	rt = &c->roots[c->nroots];
	*rt = (struct sync_root){ .src = strdup(l->path), .rel0 = strdup(l->rel), .follow = true, .linked = true,
				  .src_skip = strlen(l->rel) + 1 };
	if (rt->src && rt->rel0 && asprintf(&rt->dst, "%s/%s", up->dst, tail) < 0)
		rt->dst = NULL;
	if (!rt->src || !rt->rel0 || !rt->dst) {
		free(rt->src);
		free(rt->rel0);
		free(rt->dst);
		return -ENOMEM;
	}
	c->nroots++;
	return 0;
}

/*
 * The directories the source's followed symlinks lead to, each walked as a
 * root of its own, pass after pass (a followed link inside one is found by
 * the next), until none is left. A link back to a directory above it is an
 * error (ELOOP), not followed.
 */
static int walk_links(struct scan *s)
{
	struct sync_ctx *c = s->c;
	int r = 0;

	for (unsigned pass = 0; s->nlinks && r >= 0; pass++) {
		struct link_ent *l = s->links;
		size_t n = s->nlinks, ndirs = 0, m = 0;
		struct scan_ent **dirs = malloc((s->n ? s->n : 1) * sizeof(*dirs));
		const char **paths = calloc(n, sizeof(*paths));
		uint32_t *map = calloc(n, sizeof(*map));
		size_t *lens = calloc(n, sizeof(*lens));

		s->links = NULL;
		s->nlinks = s->caplinks = 0;
		if (!dirs || !paths || !map || !lens)
			r = -ENOMEM;
		for (size_t i = 0; r >= 0 && i < s->n; i++)
			if (S_ISDIR(s->v[i].sd.st.st_mode))
				dirs[ndirs++] = &s->v[i];
		if (ndirs)
			qsort(dirs, ndirs, sizeof(*dirs), cmp_ent_rel);
		for (size_t i = 0; r >= 0 && i < n; i++) {
			if (pass >= 40 || link_loops(s, dirs, ndirs, &l[i])) {
				report_error(c, l[i].path, -ELOOP, false);
				continue;
			}
			r = add_link_root(c, &l[i]);
			if (r >= 0)
				r = filter_walk_root(s->fw, (uint32_t)(c->nroots - 1), l[i].path, l[i].path);
			if (r >= 0)
				r = filter_walk_root_parent(s->fw, (uint32_t)(c->nroots - 1), l[i].parent_key);
			if (r < 0)
				break;
			paths[m] = c->roots[c->nroots - 1].src;
			lens[m] = strlen(paths[m]);
			map[m++] = (uint32_t)(c->nroots - 1);
		}
		filter_walk_pass(s->fw);
		if (r >= 0 && m)
			r = walk_group(s, paths, map, lens, m, true);
		for (size_t i = 0; i < n; i++) {
			free(l[i].path);
			free(l[i].rel);
		}
		free(l);
		free(dirs);
		free(paths);
		free(map);
		free(lens);
	}
	return r;
}

struct walk_job {
	struct scan *s;
	int ret;
};

static void *walk_thread(void *arg)
{
	struct walk_job *j = arg;

	j->ret = walk_side(j->s);
	return NULL;
}

/*
 * The source side: walked here, or, receiving a remote transfer, the list
 * the sender sends (remote_recv.c) taken as it comes, while the
 * destination is walked.
 */
static int source_side(struct scan *s)
{
	if (s->c->role == ROLE_RECEIVER)
		return remote_recv_flist(s->c, &s->v, &s->n, &s->cap);
	return walk_side(s);
}

/* Walk both sides, the destination in a second thread when one can be had (the sender of a remote transfer: the source alone). */
static int walk_both(struct sync_ctx *c, struct scan *s, struct scan *d)
{
	struct walk_job dj = { .s = d };
	pthread_t t;
	int r;

	if (c->role == ROLE_SENDER)
		return walk_side(s);
	if (cli_thread_start(&t, walk_thread, &dj) < 0) {
		r = source_side(s);
		return r < 0 ? r : walk_side(d);
	}
	r = source_side(s);
	pthread_join(t, NULL);
	return r < 0 ? r : dj.ret;
}

static int cmp_rel(const void *a, const void *b)
{
	const struct scan_ent *x = a, *y = b;
	int r = strcmp(x->rel, y->rel);

	return r ? r : x->root < y->root ? -1 : x->root > y->root;
}

/*
 * Sort a side by name. Of entries that two operands give the same name,
 * keep a directory if one is (its contents are listed too), else the
 * first operand's, as rsync's clean_flist does.
 */
static void sort_unique(struct scan *s)
{
	size_t k = 0;

	if (!s->n)
		return;
	qsort(s->v, s->n, sizeof(*s->v), cmp_rel);
	for (size_t i = 0; i < s->n; i++) {
		struct scan_ent *drop = &s->v[i];

		if (k && !strcmp(s->v[k - 1].rel, s->v[i].rel)) {
			if (!S_ISDIR(s->v[k - 1].sd.st.st_mode) && S_ISDIR(s->v[i].sd.st.st_mode)) {
				struct scan_ent t = s->v[k - 1];

				s->v[k - 1] = s->v[i];
				s->v[i] = t;
			}
			free(drop->rel);
			free(drop->sd.link);
			continue;
		}
		s->v[k++] = s->v[i];
	}
	s->n = k;
}

/*
 * rsync's order: a directory, then its non-directories by name, then each
 * subdirectory by name followed by everything below it. "." comes first.
 */
static int rsync_cmp(const char *a, bool a_dir, const char *b, bool b_dir)
{
	size_t i = 0, start = 0;

	if (!strcmp(a, "."))
		return strcmp(b, ".") ? -1 : 0;
	if (!strcmp(b, "."))
		return 1;
	while (a[i] && a[i] == b[i]) {
		if (a[i] == '/')
			start = i + 1;
		i++;
	}
	if (!a[i] && !b[i])
		return 0;
	const char *pa = a + start, *pb = b + start;
	const char *sa = strchr(pa, '/'), *sb = strchr(pb, '/');
	bool da = sa || a_dir, db = sb || b_dir;

	if (da != db)
		return da ? 1 : -1;
	size_t la = sa ? (size_t)(sa - pa) : strlen(pa);
	size_t lb = sb ? (size_t)(sb - pb) : strlen(pb);
	int r = memcmp(pa, pb, la < lb ? la : lb);

	if (r)
		return r;
	if (la != lb)
		return la < lb ? -1 : 1;
	/* same component: the directory itself before what is inside it */
	return !sa ? -1 : !sb ? 1 : 0;
}

static int cmp_skip(const void *a, const void *b)
{
	const struct skip *x = a, *y = b;

	return rsync_cmp(x->rel, x->is_dir, y->rel, y->is_dir);
}

void skips_print(struct sync_ctx *c, bool dirs)
{
	size_t k = 0;

	if (c->nskips)
		qsort(c->skips, c->nskips, sizeof(*c->skips), cmp_skip);
	for (size_t i = 0; i < c->nskips; i++) {
		if (c->skips[i].is_dir != dirs) {
			c->skips[k++] = c->skips[i];
			continue;
		}
		if (c->skips[i].is_dir)
			printf("skipping directory %s\n", c->skips[i].rel);
		else
			printf("skipping non-regular file \"%s\"\n", c->skips[i].rel);
		free(c->skips[i].rel);
	}
	c->nskips = k;
	if (!k) {
		free(c->skips);
		c->skips = NULL;
		c->capskips = 0;
	}
}

static bool node_is_dir(const struct sync_node *n)
{
	return S_ISDIR((n->flags & N_SRC ? n->s.st : n->d.st).st_mode);
}

static int cmp_node(const void *a, const void *b)
{
	const struct sync_node *x = a, *y = b;

	return rsync_cmp(x->rel, node_is_dir(x), y->rel, node_is_dir(y));
}

static const struct sync_node *sorted_list_base;

static int cmp_idx(const void *a, const void *b)
{
	return strcmp(sorted_list_base[*(const uint32_t *)a].rel, sorted_list_base[*(const uint32_t *)b].rel);
}

static uint32_t find_rel(const struct sync_list *l, const uint32_t *idx, const char *rel, size_t len)
{
	size_t lo = 0, hi = l->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const char *r = l->v[idx[mid]].rel;
		int d = strncmp(r, rel, len);

		if (!d && r[len])
			d = 1;
		if (d < 0)
			lo = mid + 1;
		else if (d > 0)
			hi = mid;
		else
			return idx[mid];
	}
	return UINT32_MAX;
}

/* Link each node to its parent directory's node, and chain hard-link groups in order. */
static int link_nodes(struct sync_ctx *c)
{
	struct sync_list *l = &c->list;
	uint32_t *idx = malloc((l->n ? l->n : 1) * sizeof(*idx));

	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < l->n; i++)
		idx[i] = (uint32_t)i;
	sorted_list_base = l->v;
	qsort(idx, l->n, sizeof(*idx), cmp_idx);
	for (size_t i = 0; i < l->n; i++) {
		struct sync_node *n = &l->v[i];
		const char *slash = strrchr(n->rel, '/');

		n->hl_next = UINT32_MAX;
		n->hl_first = UINT32_MAX;
		n->hl_leader = UINT32_MAX;
		n->depth = 0;
		for (const char *p = n->rel; *p; p++)
			n->depth += *p == '/';
		if (strcmp(n->rel, "."))
			n->depth++;
		if (slash)
			n->parent = find_rel(l, idx, n->rel, (size_t)(slash - n->rel));
		else if (strcmp(n->rel, "."))
			n->parent = find_rel(l, idx, ".", 1); /* the container, when an operand is SRC/ */
		else
			n->parent = UINT32_MAX;
	}
	free(idx);
	return 0;
}

static int cmp_hl(const void *a, const void *b)
{
	const struct sync_node *x = &sorted_list_base[*(const uint32_t *)a];
	const struct sync_node *y = &sorted_list_base[*(const uint32_t *)b];

	if (x->s.st.st_dev != y->s.st.st_dev)
		return x->s.st.st_dev < y->s.st.st_dev ? -1 : 1;
	if (x->s.st.st_ino != y->s.st.st_ino)
		return x->s.st.st_ino < y->s.st.st_ino ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* -H: chain the source names of each multiply-linked non-directory, in rsync order. */
static int group_hard_links(struct sync_ctx *c)
{
	struct sync_list *l = &c->list;
	uint32_t *idx = malloc((l->n ? l->n : 1) * sizeof(*idx));
	size_t m = 0;

	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < l->n; i++) {
		const struct sync_node *n = &l->v[i];

		/* every non-directory, as rsync's -H (devices, FIFOs and symlinks can share an inode too) */
		if ((n->flags & N_SRC) && !S_ISDIR(n->s.st.st_mode) && n->s.st.st_nlink > 1)
			idx[m++] = (uint32_t)i;
	}
	sorted_list_base = l->v;
	qsort(idx, m, sizeof(*idx), cmp_hl);
	for (size_t i = 0; i < m; i++)
		l->v[idx[i]].hl_first = idx[i];
	for (size_t i = 0; i + 1 < m; i++) {
		struct sync_node *a = &l->v[idx[i]], *b = &l->v[idx[i + 1]];

		if (a->s.st.st_dev == b->s.st.st_dev && a->s.st.st_ino == b->s.st.st_ino) {
			a->hl_next = idx[i + 1];
			a->flags |= N_HL;
			b->flags |= N_HL;
			b->hl_first = a->hl_first;
		}
	}
	free(idx);
	return 0;
}

/*
 * -m: a source directory with nothing but directories below it, once the
 * filters have had their say, is left out of the transfer as rsync leaves it
 * out of its file list (so --delete removes the destination's); DEST's own
 * "." stays.
 */
static size_t prune_empty_dirs(struct sync_list *l)
{
	size_t pruned = 0;

	bool *keep = calloc(l->n ? l->n : 1, sizeof(*keep));

	if (!keep)
		return 0; /* nothing pruned is a full copy, never a lost file */
	for (size_t i = 0; i < l->n; i++) {
		if (!(l->v[i].flags & N_SRC) || S_ISDIR(l->v[i].s.st.st_mode))
			continue;
		for (uint32_t p = l->v[i].parent; p != UINT32_MAX && !keep[p]; p = l->v[p].parent)
			keep[p] = true;
	}
	for (size_t i = 0; i < l->n; i++)
		if ((l->v[i].flags & N_SRC) && S_ISDIR(l->v[i].s.st.st_mode) && !keep[i] && strcmp(l->v[i].rel, ".")) {
			l->v[i].flags &= ~N_SRC;
			pruned++;
		}
	free(keep);
	return pruned;
}

int flist_scan(struct sync_ctx *c)
{
	struct scan s = { .c = c, .is_src = true };
	struct scan d = { .c = c, .is_src = false };
	struct sync_list *l = &c->list;
	size_t i = 0, j = 0;
	int r;

	s.fw = filter_walk_new(c->o.filters, false, c->o.delete_excluded);
	d.fw = filter_walk_new(c->o.filters, true, c->o.delete_excluded);
	if (!s.fw || !d.fw) {
		r = -ENOMEM;
		goto out;
	}
	r = walk_both(c, &s, &d);
	if (r >= 0 && s.nlinks)
		r = walk_links(&s);
	/* a merge file's bad rule (exit 1) or missing merge file (exit 11) stops the run, as in rsync */
	if (filter_walk_error(s.fw) || filter_walk_error(d.fw))
		c->filter_fatal = filter_walk_error(s.fw) == -EIO || filter_walk_error(d.fw) == -EIO ? EXIT_FILEIO : EXIT_SYNTAX;
	/* a corrupt --fake-super record (said): rsync's RERR_FILEIO; --max-alloc set its own */
	if ((s.err == -EBADMSG || d.err == -EBADMSG) && !c->filter_fatal)
		c->filter_fatal = EXIT_FILEIO;
	if (r < 0)
		goto out;
	sort_unique(&s);
	sort_unique(&d);
	l->cap = s.n + d.n + 1;
	if (over_max_alloc(&s, l->cap, sizeof(*l->v))) {
		r = -E2BIG;
		goto out;
	}
	l->v = calloc(l->cap, sizeof(*l->v));
	if (!l->v) {
		r = -ENOMEM;
		goto out;
	}
	while (i < s.n || j < d.n) {
		struct sync_node *n = &l->v[l->n++];
		int cmp = i == s.n ? 1 : j == d.n ? -1 : strcmp(s.v[i].rel, d.v[j].rel);

		n->sidx = UINT32_MAX;
		if (cmp <= 0) {
			n->rel = s.v[i].rel;
			n->root = s.v[i].root;
			n->sidx = s.v[i].sidx;
			n->s = s.v[i].sd;
			/* rsync's "total size": the listed files' and symlinks' sizes */
			if (S_ISREG(n->s.st.st_mode) || S_ISLNK(n->s.st.st_mode))
				c->total_size += (uint64_t)n->s.st.st_size;
			n->flags |= N_SRC | s.v[i].flags;
			s.v[i++].rel = NULL;
			/* --chmod: the sender's listed mode (a remote receiver's list has it from its sender) */
			if (c->o.chmod && c->role != ROLE_RECEIVER && !S_ISLNK(n->s.st.st_mode))
				n->s.st.st_mode = sync_chmod_apply(c->o.chmod, n->s.st.st_mode, c->orig_umask);
		}
		if (cmp >= 0) {
			if (n->rel) {
				free(d.v[j].rel);
			} else {
				n->rel = d.v[j].rel;
				n->root = d.v[j].root;
			}
			n->d = d.v[j].sd;
			n->flags |= N_DST | d.v[j].flags;
			d.v[j++].rel = NULL;
		}
	}
	s.n = d.n = 0;
	if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), cmp_node);
	r = link_nodes(c);
	if (r < 0)
		goto out;
	if (c->o.prune_empty_dirs && c->role != ROLE_SENDER)
		c->pruned = prune_empty_dirs(l);
	for (size_t k = 0; k < l->n; k++)
		if (l->v[k].flags & N_SRC) {
			c->stats.files[report_type(l->v[k].s.st.st_mode)]++;
			c->src_total++;
		}
	if (c->o.progress && l->n) {
		/* rsync's to-chk: the entries after each one */
		uint64_t seen = 0;

		c->src_index = malloc(l->n * sizeof(*c->src_index));
		c->t_open = calloc(l->n, sizeof(*c->t_open));
		if (!c->src_index || !c->t_open) {
			r = -ENOMEM;
			goto out;
		}
		for (size_t k = 0; k < l->n; k++) {
			c->src_index[k] = (uint32_t)seen;
			seen += (l->v[k].flags & N_SRC) != 0;
		}
	}
	if (c->o.hard_links && c->role != ROLE_SENDER)
		r = group_hard_links(c);
	/* the sender's list is what it sends: an entry's index on the wire is its place */
	for (size_t k = 0; c->role == ROLE_SENDER && k < l->n; k++)
		l->v[k].sidx = (uint32_t)k;
	if (r >= 0 && c->role == ROLE_RECEIVER)
		r = remote_recv_check(c);
out:
	for (size_t k = 0; k < s.n; k++) {
		free(s.v[k].rel);
		free(s.v[k].sd.link);
	}
	for (size_t k = 0; k < d.n; k++) {
		free(d.v[k].rel);
		free(d.v[k].sd.link);
	}
	free(s.v);
	free(d.v);
	filter_walk_free(s.fw);
	filter_walk_free(d.fw);
	for (size_t k = 0; k < s.nlinks; k++) {
		free(s.links[k].path);
		free(s.links[k].rel);
	}
	free(s.links);
	return r;
}

static const char *node_path(const char *root, const char *rel0, const struct sync_node *n, char **buf)
{
	const char *tail;
	size_t rl = strlen(root);
	char *b;

	if (!strcmp(n->rel, rel0))
		tail = "";
	else if (!strcmp(rel0, "."))
		tail = n->rel;
	else
		tail = n->rel + strlen(rel0) + 1;
	b = realloc(*buf, rl + 1 + strlen(tail) + 1);
	if (!b)
		return NULL;
	*buf = b;
	memcpy(b, root, rl);
	if (*tail) {
		b[rl] = '/';
		strcpy(b + rl + 1, tail);
	} else {
		b[rl] = 0;
	}
	return b;
}

const char *node_src_path(struct sync_ctx *c, const struct sync_node *n, char **buf)
{
	return node_path(c->roots[n->root].src, c->roots[n->root].rel0, n, buf);
}

const char *node_dst_path(struct sync_ctx *c, const struct sync_node *n, char **buf)
{
	return node_path(c->roots[n->root].dst, c->roots[n->root].rel0, n, buf);
}

const char *node_src_rel(const struct sync_ctx *c, const struct sync_node *n)
{
	/* a followed directory symlink's root: below the directory it leads to, which is "." itself */
	if (c->roots[n->root].linked && strlen(n->rel) < c->roots[n->root].src_skip)
		return ".";
	/* -R: below the directory holding the operand, as for an operand without -R */
	return n->rel + c->roots[n->root].src_skip;
}

const char *node_dst_rel(const struct sync_ctx *c, const struct sync_node *n)
{
	return c->dest_name ? c->dest_name : n->rel;
}

/* The directory holding path, as the user named it ("." for a bare name). */
static int open_parent(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, (size_t)(slash - path)) : NULL;
	int fd;

	if (slash && !dir)
		return -ENOMEM;
	fd = open(!slash ? "." : slash == path ? "/" : dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	return fd < 0 ? -errno : fd;
}

/* The node of an operand's top entry (rel0), or NULL when the scan did not list it. */
static const struct sync_node *top_node(const struct sync_ctx *c, uint32_t root)
{
	for (size_t i = 0; i < c->list.n; i++)
		if (c->list.v[i].root == root && (c->list.v[i].flags & N_SRC) && !strcmp(c->list.v[i].rel, c->roots[root].rel0))
			return &c->list.v[i];
	return NULL;
}

int flist_open_roots(struct sync_ctx *c)
{
	c->src_fd = malloc((c->nroots ? c->nroots : 1) * sizeof(*c->src_fd));
	if (!c->src_fd)
		return -ENOMEM;
	/* receiving a remote transfer, no source is here: it comes from the wire */
	for (size_t i = 0; c->role == ROLE_RECEIVER && i < c->nroots; i++)
		c->src_fd[i] = -1;
	for (size_t i = 0; c->role != ROLE_RECEIVER && i < c->nroots; i++) {
		const struct sync_root *rt = &c->roots[i];
		const struct sync_node *top = top_node(c, (uint32_t)i);
		struct stat st;
		int fd;

		/* SRC/: the operand itself, followed as named; SRC: the directory holding it (entries are rel0/...). */
		fd = strcmp(rt->rel0, ".") && !rt->linked ? open_parent(rt->src)
						       : open(rt->src, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0 && fd != -ENOMEM)
			fd = -errno;
		/* The operand must still be what was scanned: a root that vanished or was replaced is an I/O error. */
		if (fd >= 0 && top && (!strcmp(rt->rel0, ".") || rt->linked) &&
		    (fstat(fd, &st) < 0 || (uint64_t)st.st_dev != top->s.st.st_dev ||
		     (uint64_t)st.st_ino != top->s.st.st_ino)) {
			close(fd);
			fd = -ESTALE;
		}
		c->src_fd[i] = fd;
		if (fd < 0 && top) {
			sync_error(c, rt->src, fd == -ESTALE ? -ESTALE : fd);
			c->io_error = true;
		}
	}
	return 0;
}

bool flist_dest_is_scanned(const struct sync_ctx *c)
{
	for (size_t i = 0; i < c->list.n; i++) {
		const struct sync_node *n = &c->list.v[i];
		struct stat st;
		int r;

		/* the top entries: DEST itself (".") or an operand's name right below it */
		if (!(n->flags & N_DST) || strcmp(n->rel, c->roots[n->root].rel0))
			continue;
		if (!strcmp(n->rel, "."))
			r = fstat(c->dest_fd, &st);
		else
			r = fstatat(c->dest_fd, node_dst_rel(c, n), &st, AT_SYMLINK_NOFOLLOW);
		if (r < 0 || (uint64_t)st.st_dev != n->d.st.st_dev || (uint64_t)st.st_ino != n->d.st.st_ino)
			return false;
	}
	return true;
}

void flist_close_roots(struct sync_ctx *c)
{
	for (size_t i = 0; c->src_fd && i < c->nroots; i++)
		if (c->src_fd[i] >= 0)
			close(c->src_fd[i]);
	free(c->src_fd);
	c->src_fd = NULL;
	if (c->dest_fd >= 0)
		close(c->dest_fd);
	c->dest_fd = -1;
}

void flist_free(struct sync_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].rel);
		free(l->v[i].s.link);
		free(l->v[i].d.link);
	}
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}
