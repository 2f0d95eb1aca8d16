/* SPDX-License-Identifier: MIT */
/*
 * sweep-sync: a local `rsync -a` that reads only what changed, in one
 * physical sweep. This file parses the command line, works out rsync's
 * meaning of SRC and DEST, runs the phases (sync.h) and turns the outcome
 * into rsync's exit codes.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sweep.h>

#include "cli.h"
#include "filter.h"
#include "progress.h"
#include "sync.h"
#include "testhook.h"

void sync_error(struct sync_ctx *c, const char *path, int err)
{
	progress_clear(c->prog);
	cli_path_error(path, err);
	c->errors++;
}

void sync_vanished(struct sync_ctx *c, const char *path)
{
	progress_clear(c->prog);
	cli_msg("file has vanished: %s", cli_quote(path));
	c->vanished++;
}

volatile sig_atomic_t sync_stop_signal;
/* While files are being transferred the copy engine stops at the next file and removes what it made. */
static volatile sig_atomic_t transferring;

static void on_signal(int sig)
{
	static const char msg[] = ": received signal, exiting\n";
	const char *p = cli_prog();

	sync_stop_signal = sig;
	if (transferring)
		return;
	/* Before or after the transfer nothing half-made exists: leave at once. */
	if (write(2, p, strlen(p)) < 0 || write(2, msg, sizeof(msg) - 1) < 0)
		_exit(EXIT_SIGNAL);
	_exit(EXIT_SIGNAL);
}

static bool ends_with_slash(const char *s)
{
	size_t l = strlen(s);

	return l && s[l - 1] == '/';
}

/* rsync treats "dir/." like "dir/": copy the contents. */
static bool means_contents(const char *s)
{
	size_t l = strlen(s);

	if (!strcmp(s, ".") || ends_with_slash(s))
		return true;
	return l >= 2 && !strcmp(s + l - 2, "/.");
}

/* Copy of s without trailing slashes (and without a trailing "/."), "/" kept. */
static char *strip(const char *s)
{
	char *r = strdup(s);
	size_t l;

	if (!r)
		return NULL;
	l = strlen(r);
	for (;;) {
		while (l > 1 && r[l - 1] == '/')
			r[--l] = 0;
		if (l > 2 && !strcmp(r + l - 2, "/.")) {
			l -= 2;
			r[l] = 0;
			continue;
		}
		break;
	}
	return r;
}

static char *join(const char *a, const char *b)
{
	size_t la = strlen(a);
	char *r = malloc(la + strlen(b) + 2);

	if (!r)
		return NULL;
	sprintf(r, "%s%s%s", a, la && a[la - 1] == '/' ? "" : "/", b);
	return r;
}

/*
 * Work out one SRC operand's place in the transfer (rsync's rules): SRC/
 * gives its contents to DEST, SRC gives itself to DEST/SRC's last name, and
 * a lone file goes to DEST itself unless DEST is (or is meant as) a
 * directory. 1 added, 0 when SRC cannot be read (reported: the run goes
 * on, --delete too, as rsync's does, and ends with exit 23), -ENOMEM.
 */
static int add_root(struct sync_ctx *c, const char *arg, const char *dst, bool dst_dir);

/* Room for one more root. */
static struct sync_root *grow_roots(struct sync_ctx *c)
{
	if (c->nroots == c->caproots) {
		size_t cap = c->caproots ? c->caproots * 2 : 8;
		struct sync_root *v = realloc(c->roots, cap * sizeof(*v));

		if (!v)
			return NULL;
		c->roots = v;
		c->caproots = cap;
	}
	return &c->roots[c->nroots];
}

/*
 * A path as rsync's sanitize_path() leaves it for -R and --files-from: no
 * leading '/', no "." components, no ".." that climbs above the start,
 * no trailing '/'. "" for the start itself.
 */
static char *sanitize(const char *path)
{
	char *r = malloc(strlen(path) + 1), *out = r;
	const char *in = path;

	if (!r)
		return NULL;
	while (*in) {
		const char *slash = strchr(in, '/');
		size_t len = slash ? (size_t)(slash - in) : strlen(in);

		if (len == 2 && in[0] == '.' && in[1] == '.') {
			while (out > r && out[-1] != '/')
				out--;
			if (out > r)
				out--;
		} else if (len && !(len == 1 && in[0] == '.')) {
			if (out > r)
				*out++ = '/';
			memcpy(out, in, len);
			out += len;
		}
		in += len;
		while (*in == '/')
			in++;
	}
	*out = 0;
	return r;
}

/*
 * -R: path keeps its directories below base in DEST (rsync's "/./" marks
 * where they start; else an absolute path from "/", a relative one from
 * "."). The directories on the way are sent too, without their contents
 * (rsync's implied directories), once each. 1 added, 0 when path cannot
 * be read (reported), -ENOMEM.
 */
static int add_relative(struct sync_ctx *c, const char *base, const char *path, const char *dst)
{
	struct sync_root *rt;
	struct stat st;
	char *rel, *src;

	rel = sanitize(path);
	if (!rel)
		return -ENOMEM;
	if (!*rel) {
		free(rel);
		rel = strdup(".");
		if (!rel)
			return -ENOMEM;
	}
	src = !strcmp(rel, ".") ? strdup(base) : join(base, rel);
	if (!src) {
		free(rel);
		return -ENOMEM;
	}
	if (lstat(src, &st) < 0) {
		cli_error(-errno, "link_stat %s failed", cli_quote(src));
		free(src);
		free(rel);
		return 0;
	}
	rt = grow_roots(c);
	if (!rt) {
		free(src);
		free(rel);
		return -ENOMEM;
	}
	*rt = (struct sync_root){ .src = src, .rel0 = rel, .base = strdup(base) };
	rt->dst = !strcmp(rel, ".") ? strdup(dst) : join(dst, rel);
	rt->follow = !strcmp(rel, ".");
	rt->src_skip = strrchr(rel, '/') ? (size_t)(strrchr(rel, '/') - rel) + 1 : 0;
	c->nroots++;
	return rt->dst && rt->base ? 1 : -ENOMEM;
}

/* -R: the implied directories of every root added since first, not already roots themselves. */
static int add_implied(struct sync_ctx *c, size_t first, const char *dst)
{
	size_t n = c->nroots;

	for (size_t i = first; i < n; i++) {
		char *rel = strdup(c->roots[i].rel0);

		if (!rel)
			return -ENOMEM;
		for (char *slash = strchr(rel, '/'); slash; slash = strchr(slash + 1, '/')) {
			bool known = false;
			struct sync_root *rt;

			*slash = 0;
			for (size_t k = 0; k < c->nroots && !known; k++)
				known = !strcmp(c->roots[k].rel0, rel) && !strcmp(c->roots[k].base, c->roots[i].base);
			if (!known) {
				rt = grow_roots(c);
				if (!rt) {
					free(rel);
					return -ENOMEM;
				}
				/* rsync sends an implied directory as a real one: a symlink there is followed */
				*rt = (struct sync_root){ .src = join(c->roots[i].base, rel), .rel0 = strdup(rel),
							  .dst = join(dst, rel), .base = strdup(c->roots[i].base),
							  .implied = true, .follow = true };
				rt->src_skip = strrchr(rel, '/') ? (size_t)(strrchr(rel, '/') - rel) + 1 : 0;
				c->nroots++;
				if (!rt->src || !rt->rel0 || !rt->dst || !rt->base) {
					free(rel);
					return -ENOMEM;
				}
			}
			*slash = '/';
		}
		free(rel);
	}
	return 0;
}

/* Whether path has a ".." component. */
static bool has_dotdot(const char *path)
{
	for (const char *p = path; (p = strstr(p, "..")); p += 2)
		if ((p == path || p[-1] == '/') && (!p[2] || p[2] == '/'))
			return true;
	return false;
}

/* -R on an operand: rsync's "/./" marks the start of the part kept. 1, 0, -ENOMEM, -EINVAL (reported). */
static int add_relative_arg(struct sync_ctx *c, const char *arg, const char *dst)
{
	const char *mark = strstr(arg, "/./");
	char *base;
	int r;

	if (has_dotdot(mark ? mark + 3 : arg)) {
		/* rsync refuses a relative path that climbs: it could not be placed below DEST */
		cli_msg("found \"..\" dir in relative path: %s", arg);
		return -EINVAL;
	}

	if (mark) {
		base = mark == arg ? strdup("/") : strndup(arg, (size_t)(mark - arg));
		if (!base)
			return -ENOMEM;
		r = add_relative(c, base, mark + 3, dst);
		free(base);
		return r;
	}
	r = add_relative(c, arg[0] == '/' ? "/" : ".", arg, dst);
	if (r > 0 && arg[0] == '.' && arg[1] == '/' && arg[2]) {
		/*
		 * rsync: a leading "./" sends "." itself too, an implied
		 * directory without its contents, so DEST gets its metadata.
		 */
		for (size_t k = 0; k < c->nroots; k++)
			if (!strcmp(c->roots[k].rel0, "."))
				return r;
		struct sync_root *rt = grow_roots(c);

		if (!rt)
			return -ENOMEM;
		*rt = (struct sync_root){ .src = strdup("."), .rel0 = strdup("."), .dst = strdup(dst),
					  .base = strdup("."), .implied = true, .follow = true };
		c->nroots++;
		if (!rt->src || !rt->rel0 || !rt->dst || !rt->base)
			return -ENOMEM;
	}
	return r;
}

/*
 * --files-from: each name (a line, or NUL-terminated with --from0; blank
 * ones skipped) relative to the one SRC directory, with -R's meaning.
 * Returns the number of names, or -errno (reported).
 */
static int add_files_from(struct sync_ctx *c, const char *file, const char *base, const char *dst, int *missing)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int r = 0, count = 0;
	bool untrusted;
	FILE *f = listfile_open(file, &r, &untrusted);

	if (!f) {
		if (untrusted)
			opath_refusal_msg();
		cli_error(r, "failed to open files-from file %s", file);
		return -EIO;
	}
	while ((len = getdelim(&line, &cap, c->o.from0 ? '\0' : '\n', f)) >= 0) {
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r' || line[len - 1] == '\0'))
			line[--len] = 0;
		/* rsync skips blank lines and comments ('#' or ';' first) in a --files-from list */
		if (!len || line[0] == '#' || line[0] == ';')
			continue;
		count++;
		if (c->o.relative) {
			const char *mark = strstr(line, "/./");
			char *b = NULL;

			if (mark) {
				b = join(base, mark == line ? "" : line);
				if (b)
					b[strlen(base) + 1 + (size_t)(mark - line)] = 0;
			}
			r = add_relative(c, b ? b : base, mark ? mark + 3 : line, dst);
			free(b);
		} else {
			char *clean = sanitize(line);
			char *p = clean ? join(base, *clean ? clean : ".") : NULL;

			free(clean);

			r = p ? 0 : -ENOMEM;
			if (p && grow_roots(c))
				r = add_root(c, p, dst, true);
			else if (p)
				r = -ENOMEM;
			free(p);
		}
		if (r < 0)
			break;
		if (r == 0)
			(*missing)++;
	}
	free(line);
	fclose(f);
	return r < 0 ? r : count;
}

static int add_root(struct sync_ctx *c, const char *arg, const char *dst, bool dst_dir)
{
	struct sync_root *rt = grow_roots(c);

	if (!rt)
		return -ENOMEM;
	bool contents = means_contents(arg);
	struct stat st;

	*rt = (struct sync_root){ .src = strip(arg) };
	if (!rt->src)
		return -ENOMEM;
	if ((contents ? stat(rt->src, &st) : lstat(rt->src, &st)) < 0) {
		/* rsync: link_stat "x" failed: No such file or directory */
		cli_error(-errno, "link_stat %s failed", cli_quote(rt->src));
		free(rt->src);
		return 0;
	}
	if (S_ISDIR(st.st_mode) && contents) {
		rt->rel0 = strdup(".");
		rt->dst = strdup(dst);
		rt->follow = true;
	} else {
		const char *base = strrchr(rt->src, '/');

		base = base && base[1] ? base + 1 : rt->src;
		rt->rel0 = strdup(base);
		/* one file to a new name, or into the directory */
		rt->dst = S_ISDIR(st.st_mode) || dst_dir ? join(dst, base) : strdup(dst);
	}
	c->nroots++;
	return rt->rel0 && rt->dst ? 1 : -ENOMEM;
}

static void free_roots(struct sync_ctx *c)
{
	for (size_t i = 0; i < c->nroots; i++) {
		free(c->roots[i].src);
		free(c->roots[i].dst);
		free(c->roots[i].rel0);
		free(c->roots[i].base);
	}
	free(c->roots);
}

/* DEST could not be opened: rsync's words for a symlink of another user in the way, or the error. */
static void dest_refused(const char *dst, const char *what, int err, bool untrusted)
{
	if (untrusted)
		opath_refusal_msg();
	cli_error(err, "%s %s failed", what, cli_quote(dst));
}

/* Open DEST, a directory, through trusted symlinks only: fd, or -errno after a message. */
static int open_dest_dir(const char *dst, const char *what)
{
	bool untrusted;
	int fd = opath_open(dst, O_PATH | O_DIRECTORY | O_CLOEXEC, 0, &untrusted);

	if (fd < 0)
		dest_refused(dst, what, fd, untrusted);
	return fd;
}

/*
 * rsync's remote operands: [USER@]HOST:PATH over a remote shell, and the
 * daemon's HOST::MODULE and rsync://. Not a local name with a colon in it
 * ("./a:b"). 0 when every operand is local, -1 for a transfer over a
 * remote shell (remote.c), else the exit status after the message.
 */
static int check_remote(char **ops, int nsrc)
{
	struct hostspec h, d;
	bool src_remote = hostspec_parse(ops[0], &h), dst_remote = hostspec_parse(ops[nsrc], &d);

	if (src_remote && dst_remote) {
		cli_msg("The source and destination cannot both be remote.");
		return EXIT_SYNTAX;
	}
	for (int i = 1; i < nsrc && !src_remote; i++)
		if (hostspec_parse(ops[i], &h)) {
			cli_msg("Unexpected remote arg: %s", ops[i]);
			return EXIT_SYNTAX;
		}
	if (!src_remote && !dst_remote)
		return 0;
	if (src_remote ? h.daemon : d.daemon) {
		cli_msg("%s: the rsync daemon protocol is not supported (rsync://HOST/MODULE, HOST::MODULE)",
			src_remote ? ops[0] : ops[nsrc]);
		cli_msg("requested action not supported (code %d)", EXIT_UNSUPPORTED);
		return EXIT_UNSUPPORTED;
	}
	return -1;
}

void sync_ctx_init(struct sync_ctx *c, const struct timespec *start)
{
	c->start = *start;
	c->am_root = geteuid() == 0;
	c->orig_umask = umask(0);
	umask(c->orig_umask);
	setlocale(LC_CTYPE, "");
	c->utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");
	struct sigaction sa = { .sa_handler = on_signal }; /* no SA_RESTART: a blocked wait returns */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	c->dest_fd = -1;
	for (int i = 0; i < MAX_BASIS_DIRS; i++)
		c->basis_fd[i] = -1;
	c->backup_fd = -1;
}

int sync_dest_open(struct sync_ctx *c, const char *dest_arg, struct sync_dest *d)
{
	struct stat dstst;

	d->arg = dest_arg;
	d->dst = strip(dest_arg);
	if (!d->dst) {
		cli_msg("out of memory");
		return EXIT_PARTIAL;
	}
	/*
	 * What DEST is, as rsync's get_local_name() sees it: stat'ed as named
	 * (a trailing slash included). A directory is then opened through
	 * symlinks only of root or of the user running, and held.
	 */
	d->stat = stat(dest_arg, &dstst) == 0 ? 0 : -errno;
	d->is_dir = d->stat == 0 && S_ISDIR(dstst.st_mode);
	if (d->stat == -ENOTDIR && c->o.mkpath) {
		/* rsync's make_path() meets the non-directory on the way */
		cli_error(d->stat, "mkdir %s failed", cli_quote(dest_arg));
		return EXIT_FILEIO;
	}
	if (d->stat < 0 && d->stat != -ENOENT) {
		cli_error(d->stat, "ERROR: cannot stat destination %s", cli_quote(dest_arg));
		return EXIT_FILESELECT;
	}
	if (d->is_dir) {
		c->dest_fd = open_dest_dir(d->dst, "change_dir#1");
		if (c->dest_fd < 0) {
			int code = c->dest_fd == -ENOMEM ? EXIT_PARTIAL : EXIT_FILESELECT;

			c->dest_fd = -1;
			return code;
		}
	}
	return 0;
}

void sync_list_header(const struct sync_ctx *c, bool receiving)
{
	if (c->o.info_flist > 0 && c->o.recursive)
		puts(receiving ? "receiving incremental file list" : "sending incremental file list");
	else if (c->o.info_flist > 0 && c->o.dirs) /* rsync's, for -d without -r (no incremental recursion) */
		puts(receiving ? "receiving file list ... done" : "building file list ... done");
}

int sync_add_operands(struct sync_ctx *c, struct sync_dest *d, char **ops, int nsrc)
{
	const char *dst = d->dst;
	int r;

	if (c->o.files_from) {
		/* rsync: the names are relative to the one SRC, which is a directory */
		char *base = strip(ops[0]);

		if (!base)
			goto nomem;
		r = add_files_from(c, c->o.files_from, base, dst, &d->missing);
		free(base);
		if (r == -EIO)
			return EXIT_SYNTAX; /* rsync: a files-from file that cannot be read is a usage error */
		if (r < 0 || (c->o.relative && add_implied(c, 0, dst) < 0))
			goto nomem;
		d->container = true;
		return 0;
	}
	for (int i = 0; i < nsrc; i++) {
		size_t before = c->nroots;

		if (c->o.relative)
			r = add_relative_arg(c, ops[i], dst);
		else
			r = add_root(c, ops[i], dst, d->is_dir || nsrc > 1 || ends_with_slash(d->arg));
		if (r == -EINVAL)
			return EXIT_SYNTAX;
		if (r < 0)
			goto nomem;
		if (r == 0)
			d->missing++;
		if (r > 0 && (c->o.relative || strcmp(c->roots[before].dst, dst) || !strcmp(c->roots[before].rel0, ".")))
			d->container = true;
	}
	if (c->o.relative && add_implied(c, 0, dst) < 0)
		goto nomem;
	return 0;
nomem:
	cli_msg("out of memory");
	return EXIT_PARTIAL;
}

int sync_run(struct sync_ctx *c, struct sync_dest *d)
{
	const char *dst = d->dst;
	int r, code = 0;

	/* rsync: a missing or unreadable SRC is an I/O error, and after one nothing is deleted */
	if (d->missing)
		c->io_error = true;
	if (!c->nroots)
		goto report;
	sync_modify_window = c->o.modify_window;
	/* --progress=SECONDS: the display every sweep tool has; --progress, -P and --info=progress2: rsync's lines (report.c) */
	c->prog = progress_new(&c->o.sweep_progress);
	r = flist_scan(c);
	if (c->filter_fatal)
		return c->filter_fatal; /* a merge file stopped the run; the message is out */
	/*
	 * --usermap, --groupmap, --chown: the owners the copies get, as rsync maps
	 * the sender's (-o as root, -g). --no-super: a group that is not one of
	 * ours is no group, as for rsync's receiver that is not root (nothing to
	 * compare, nothing set: apply.c).
	 */
	for (size_t i = 0; r >= 0 && (c->o.usermap || c->o.groupmap || c->o.no_super) && i < c->list.n; i++) {
		struct sync_node *n = &c->list.v[i];

		if (!(n->flags & N_SRC))
			continue;
		if (c->o.usermap && c->o.owner && c->am_root)
			n->s.st.st_uid = idmap_map(c->o.usermap, n->s.st.st_uid, c->o.numeric_ids);
		if (c->o.groupmap && c->o.group)
			n->s.st.st_gid = idmap_map(c->o.groupmap, n->s.st.st_gid, c->o.numeric_ids);
		if (c->o.no_super && c->o.group && (n->flags & N_DST) && !sync_in_my_groups(n->s.st.st_gid))
			n->s.st.st_gid = n->d.st.st_gid;
	}
	if (r < 0) {
		if (!c->fatal)
			cli_error(r, "scanning the file lists");
		c->errors++;
		goto report;
	}
	{
		struct timespec now;

		clock_gettime(CLOCK_MONOTONIC, &now);
		c->stats.scan_secs = (double)(now.tv_sec - c->start.tv_sec) + (double)(now.tv_nsec - c->start.tv_nsec) / 1e9;
	}
	test_pause("walk", 0);
	skips_print(c, true);
	if (d->stat == 0 && !d->is_dir) {
		/* DEST is a file: rsync takes it only as the new name of one non-directory */
		size_t total = c->pruned;
		bool top_dir = false;

		for (size_t i = 0; i < c->list.n; i++)
			if (c->list.v[i].flags & N_SRC) {
				total++;
				top_dir = top_dir || S_ISDIR(c->list.v[i].s.st.st_mode);
			}
		if (total == 1 && top_dir) {
			progress_clear(c->prog);
			cli_msg("ERROR: cannot overwrite non-directory with a directory");
			return EXIT_FILESELECT;
		}
		if (total > 1 || (d->container && total)) {
			progress_clear(c->prog);
			cli_msg("ERROR: destination must be a directory when copying more than 1 file");
			return EXIT_FILESELECT;
		}
	}
	if (d->stat == -ENOENT && !ends_with_slash(d->arg) && c->nroots == 1) {
		/*
		 * rsync's get_local_name(): one entry in all (a directory not
		 * recursed into, or an empty one) to a DEST that does not exist
		 * takes DEST as its own name, as a lone file does.
		 */
		size_t total = c->pruned; /* rsync counts them: its receiver prunes later */

		for (size_t i = 0; i < c->list.n; i++)
			total += (c->list.v[i].flags & N_SRC) != 0;
		if (total == 1) {
			char *nd = strdup(dst);

			if (!nd)
				goto nomem;
			free(c->roots[0].dst);
			c->roots[0].dst = nd;
			d->container = false;
		}
	}
	if (c->o.mkpath && d->stat == -ENOENT && (strchr(d->arg, '/') || d->container)) {
		code = sync_mkpath(c, d, d->container || ends_with_slash(d->arg));
		if (code)
			return code;
	}
	if (d->container && !d->is_dir && d->mkpath_missing) {
		/* --mkpath -n: DEST's parent is not there to open, as rsync's dry run says it made DEST */
		if (c->o.itemize || c->o.name_level > 0)
			printf("created directory %s\n", dst);
	} else if (d->container && !d->is_dir && (c->list.n || ends_with_slash(d->arg))) {
		/* rsync makes DEST only when there is something to put in it, or DEST/ says it is a directory */
		/* rsync makes the last component of DEST, not its parents */
		const char *base;
		bool untrusted;
		int pfd = opath_open_parent(dst, &base, &untrusted);

		if (pfd < 0) {
			dest_refused(dst, "change_dir#2", pfd, untrusted);
			return pfd == -ENOENT ? EXIT_FILEIO : EXIT_FILESELECT;
		}
		bool made = !c->o.dry_run && mkdirat(pfd, base, 0777) == 0;
		if (!c->o.dry_run && !made && errno != EEXIST) {
			cli_error(-errno, "mkdir %s failed", cli_quote(dst));
			close(pfd);
			return EXIT_FILEIO;
		}
		/* Ours a moment ago (or there already, then not followed): a symlink there now was swapped in. */
		if (!c->o.dry_run)
			c->dest_fd = openat(pfd, base, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(pfd);
		if (!c->o.dry_run && c->dest_fd < 0) {
			cli_error(-errno, "change_dir#2 %s failed", cli_quote(dst));
			return EXIT_FILESELECT;
		}
		if (c->o.itemize || c->o.name_level > 0) {
			printf("created directory %s\n", dst);
			synclog_text("created directory %s", dst);
		}
	}
	/* rsync's -vv (debug FLIST1): its generator's first words */
	if (c->o.verbose >= 2)
		puts("delta-transmission disabled for local transfer or --whole-file");
	skips_print(c, false);
	r = flist_open_roots(c);
	if (r < 0)
		goto nomem;
	/*
	 * The destination: DEST (a symlink to a directory is used as the
	 * directory where rsync does so), or the directory of the new name
	 * when one file is copied to a name of its own. Held from here on.
	 */
	c->dest_show = strdup(dst);
	if (!c->dest_show)
		goto nomem;
	if (c->nroots == 1 && !d->container) {
		bool untrusted;

		if (c->dest_fd >= 0)
			close(c->dest_fd);
		c->dest_fd = opath_open_parent(dst, &c->dest_name, &untrusted);
		if (c->dest_fd == -ENOENT && d->mkpath_missing) {
			c->dest_fd = -1; /* --mkpath -n: the directory a real run makes; everything in it is new */
		} else if (c->dest_fd < 0) {
			dest_refused(dst, "change_dir#3", c->dest_fd, untrusted);
			c->dest_fd = -1;
			return EXIT_FILESELECT;
		}
		char *slash = strrchr(c->dest_show, '/');
		if (slash)
			*(slash == c->dest_show ? slash + 1 : slash) = 0;
		else
			c->dest_show[0] = 0;
	}
	if (c->dest_fd < 0 && !c->list.n)
		goto report; /* nothing to transfer, so DEST was not made */
	if (c->dest_fd >= 0 && !flist_dest_is_scanned(c)) {
		/* DEST, or an operand's top below it, is no longer what the scan listed: touch nothing. */
		cli_msg("the destination %s changed during the scan; nothing done", cli_quote(dst));
		return EXIT_FILEIO;
	}
	if (c->dest_fd < 0 && !c->o.dry_run) {
		cli_msg("cannot open the destination %s", cli_quote(c->dest_show[0] ? c->dest_show : "."));
		return EXIT_FILEIO;
	}
	if (c->o.nbasis && basis_open(c) < 0)
		goto nomem;
	if (backup_open(c) < 0)
		return EXIT_FILEIO;
	if (c->o.checksum) {
		r = checksum_run(c);
		if (r < 0) {
			if (!c->fatal)
				cli_error(r, "comparing checksums");
			c->errors++;
			goto report;
		}
	}
	transferring = 1;
	r = apply_run(c);
	transferring = 0;
	if (sync_stop_signal) {
		cli_msg("received signal, exiting");
		return EXIT_SIGNAL;
	}
	if (r < 0 && !c->fatal) {
		cli_error(r, "sync failed");
		c->errors++;
	}
report:
	c->errors += (unsigned long)d->missing;
	c->prog = progress_finish(c->prog, !c->fatal);
	if (!c->fatal) {
		/* rsync's -vv (debug DELTASUM1): its sender's last words; everything is literal data here */
		if (c->o.verbose >= 2)
			printf("total: matches=0  hash_hits=0  false_alarms=0 data=%s\n", report_num(c, c->sent));
		report_summary(c, &c->start);
	}
	if (c->fatal) {
		code = c->fatal_code;
		/* a remote transfer's other side gone: the client says why, once it knows (remote_client.c) */
		if (!c->peer_gone)
			cli_msg("%s (code %d)", code == EXIT_FILEIO ? "error in file IO" : code == EXIT_PARTIAL ?
				"some files/attrs were not transferred (see previous errors)" : code == EXIT_TIMEOUT ?
				"timeout in data send/receive" : code == EXIT_MALLOC ? "error allocating core memory buffers" :
				"error", code);
	} else if (c->errors) {
		code = EXIT_PARTIAL;
		cli_msg("some files/attrs were not transferred (see previous errors) (code %d)", code);
	} else if (c->skipped_deletes) {
		code = EXIT_DEL_LIMIT;
		cli_msg("the --max-delete limit stopped deletions (code %d)", code);
	} else if (c->vanished) {
		code = EXIT_VANISHED;
		cli_msg("some files vanished before they could be transferred (code %d)", code);
	}
	return code;
nomem:
	cli_msg("out of memory");
	return EXIT_PARTIAL;
}

void sync_done(struct sync_ctx *c, struct sync_dest *d)
{
	/* once: a remote side's run ends with it, and main() calls it again */
	skips_print(c, true);
	skips_print(c, false);
	flist_free(&c->list);
	free(c->digests);
	free(c->src_index);
	free(c->t_open);
	c->digests = NULL;
	c->src_index = NULL;
	c->t_open = NULL;
	c->prog = progress_free(c->prog);
	filter_set_free(c->o.filters);
	c->o.filters = NULL;
	c->o.chmod = sync_chmod_free(c->o.chmod);
	c->o.usermap = idmap_free(c->o.usermap);
	c->o.groupmap = idmap_free(c->o.groupmap);
	basis_close(c);
	backup_close(c);
	flist_close_roots(c);
	free(c->dest_show);
	c->dest_show = NULL;
	free_roots(c);
	c->roots = NULL;
	c->nroots = c->caproots = 0;
	free(d->dst);
	d->dst = NULL;
}

int main(int argc, char **argv)
{
	struct sync_ctx c = { 0 };
	struct sync_dest d = { 0 };
	struct timespec start;
	int nsrc, r, code = 0;

	/* the far side of a remote transfer, started by the client over the remote shell */
	if (argc > 1 && !strcmp(argv[1], "--server"))
		return remote_server_main(argc, argv);
	cli_init(argv[0]);
	cli_close_stdout_atexit();
	clock_gettime(CLOCK_MONOTONIC, &start);
	sync_ctx_init(&c, &start);
	r = sync_parse_options(argc, argv, &c.o);
	if (r < 0) {
		code = r == -EIO ? EXIT_FILEIO : EXIT_SYNTAX;
		goto out;
	}
	if (c.o.no_super)
		c.am_root = false; /* rsync's am_root 0: owners are not compared, read-only directories opened to us */
	nsrc = argc - optind - 1;
	code = check_remote(argv + optind, nsrc);
	if (code < 0 && sync_refuse_remote(&c.o))
		code = EXIT_SYNTAX;
	if (code < 0) {
		code = remote_client(&c, argc, argv, nsrc);
		goto out;
	}
	if (code)
		goto out;
	if (c.o.list_only) {
		/* rsync lists the SRCs; a DEST given to --list-only gets nothing */
		code = sync_list_only(&c, argv + optind, argc - optind - (argc - optind > 1));
		goto out;
	}
	if (c.o.log_file)
		code = synclog_open(&c);
	if (!code)
		code = sync_dest_open(&c, argv[argc - 1], &d);
	if (!code) {
		sync_list_header(&c, false);
		code = sync_add_operands(&c, &d, argv + optind, nsrc);
	}
	if (!code)
		code = sync_run(&c, &d);
out:
	sync_done(&c, &d);
	synclog_close();
	return code;
}
