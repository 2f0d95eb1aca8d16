/* SPDX-License-Identifier: MIT */
/*
 * sweep-du: GNU du over the sweep. The tree is read in C-SCAN order
 * (sweep_walk, stat batched in inode order); what du needs of each entry is
 * kept in a compact store, and the report is then replayed in the order GNU
 * du's fts traversal would have produced it, so the output is byte for byte
 * GNU du's. Hard links, -L aliases and -x mount points are decided during
 * the replay, in du's order, because which path of several counts depends on
 * which one du meets first.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sweep.h>

#include "cli.h"
#include "exclude.h"
#include "progress.h"
#include "sweep-du/du.h"

#define MAGIC_NFS   0x6969u
#define MAGIC_CIFS  0xff534d42u
#define MAGIC_TMPFS 0x01021994u
#define MAGIC_EXT   0xef53u /* ext2, ext3, ext4 */
#define MAGIC_XFS   0x58465342u

/* ---- the walk: collect ---- */

/*
 * The path du would print for a walk path: the operand, then the
 * components, joined as fts joins them (no '/' added after a trailing one).
 */
static const char *du_path(struct du *du, uint32_t root, const char *walk_path, int depth)
{
	const char *r = du->roots[root], *rest;
	size_t rl = strlen(r), need;

	if (depth == 0 || strncmp(walk_path, r, rl) != 0)
		return walk_path;
	rest = walk_path + rl;
	while (*rest == '/')
		rest++;
	need = rl + strlen(rest) + 2;
	if (du_grow(&du->scratch, &du->scratch_cap, need, 1) < 0)
		return walk_path;
	sprintf(du->scratch, "%s%s%s", r, rl && r[rl - 1] == '/' ? "" : "/", rest);
	return du->scratch;
}

/* du_path() for a failure, which does not say its root: the longest operand it starts with. */
static const char *du_err_path(struct du *du, const char *walk_path)
{
	size_t best = SIZE_MAX, best_len = 0;

	for (size_t i = 0; i < du->nroots; i++) {
		size_t rl = strlen(du->roots[i]);
		if (rl >= best_len && strncmp(walk_path, du->roots[i], rl) == 0 &&
		    (walk_path[rl] == '/' || (rl && du->roots[i][rl - 1] == '/'))) {
			best = i;
			best_len = rl;
		}
	}
	return best == SIZE_MAX ? walk_path : du_path(du, (uint32_t)best, walk_path, 1);
}

static int on_error(const struct sweep_walk_error *we, void *ctx)
{
	struct du *du = ctx;
	const char *path;
	struct err *e;

	/* -L loops: du's own dev/ino set skips them silently */
	if (we->op == SWEEP_WALK_OP_LOOP)
		return 0;
	path = du_err_path(du, we->path);
	if (exclude_count(du->o.exclude) && exclude_match(du->o.exclude, path, NULL, false))
		return 0;
	if (du_grow(&du->errs, &du->errs_cap, du->nerrs + 1, sizeof(*du->errs)) < 0)
		return -ENOMEM;
	e = &du->errs[du->nerrs];
	*e = (struct err){ .path = strdup(path), .op = we->op, .err = -we->err };
	if (!e->path)
		return -ENOMEM;
	du->nerrs++;
	return 0;
}

/*
 * --progress counts as every tool does (progress.h): regular files by
 * name, their sizes (not the disk usage du reports) once a file unless -l,
 * directories, and the rest as others.
 */
static void count(struct du *du, const struct sweep_entry *e, bool dir)
{
	if (dir)
		progress_dirs(du->progress, 1);
	else if (!S_ISREG(e->st.mode))
		progress_others(du->progress, 1);
	else
		progress_plan(du->progress, 1,
			      e->st.nlink < 2 || du->o.count_links || progress_first_name(du->progress, e->st.dev, e->st.ino)
				      ? (uint64_t)e->st.size : 0);
}

static int on_entry(const struct sweep_entry *e, void *ctx)
{
	struct du *du = ctx;
	struct opts *o = &du->o;
	struct du_node n = { .parent = DU_NONE, .index = e->dirent_index };
	bool dir = e->stat_err == 0 ? S_ISDIR(e->st.mode) : e->d_type == DT_DIR;
	uint32_t idx;

	if (e->depth > 0) {
		n.parent = du_map_get(&du->ids, e->dir_id, 0);
		if (n.parent == DU_NONE) /* below an excluded or skipped directory */
			return SWEEP_WALK_SKIP;
	} else {
		if (e->root_index >= du->nroots)
			return SWEEP_WALK_SKIP;
		n.index = e->root_index;
	}
	if (exclude_count(o->exclude) &&
	    exclude_match(o->exclude, du_path(du, e->root_index, e->path, e->depth), e->name, dir)) {
		if (o->export_file && du_export_left_out(du, n.parent, e->name, DU_OUT_PATTERN, dir, 0) < 0)
			return du->fatal = -ENOMEM;
		return SWEEP_WALK_SKIP;
	}
	/*
	 * du -L stats each entry by its path: one that passes through more
	 * symlinks than the kernel follows is "cannot access ...: Too many
	 * levels of symbolic links", and not entered (the walk itself opens
	 * each directory from its parent and would go on).
	 */
	unsigned links = 0;
	if (o->follow == FOLLOW_ALL) {
		links = (n.parent != DU_NONE ? du->links[n.parent] : 0) + ((e->flags & SWEEP_ENTRY_FOLLOWED) != 0);
		if (links > DU_MAXSYMLINKS)
			links = DU_MAXSYMLINKS + 1;
	}
	bool eloop = links > DU_MAXSYMLINKS;
	if (e->stat_err || eloop) {
		n.flags = DU_NOSTAT;
		n.size = (uint64_t)(eloop ? ELOOP : -e->stat_err);
	} else if (S_ISLNK(e->st.mode) &&
		   (o->follow == FOLLOW_ALL || (o->follow == FOLLOW_ARGS && e->depth == 0))) {
		/* a dangling symlink that should have been followed (fts FTS_SLNONE):
		 * du says "cannot access" and gives no reason */
		n.flags = DU_NOSTAT;
		n.size = 0;
	} else {
		if (e->depth == 0)
			du->root_dev[e->root_index] = e->st.dev;
		else if (o->xdev && e->st.dev != du->root_dev[e->root_index]) {
			if (o->export_file && du_export_left_out(du, n.parent, e->name, DU_OUT_OTHERFS, dir, e->st.dev) < 0)
				return du->fatal = -ENOMEM;
			return SWEEP_WALK_SKIP; /* -x: not counted, not entered */
		}
		n.size = o->apparent ? e->st.size : e->st.blocks * 512;
		n.ino = e->st.ino;
		n.dev = du_tree_dev(&du->tree, e->st.dev);
		if (dir) {
			n.flags |= DU_DIR;
			if (!e->fs || (e->fs->fs_magic != MAGIC_NFS && e->fs->fs_magic != MAGIC_CIFS &&
				       e->fs->fs_magic != MAGIC_TMPFS))
				n.flags |= DU_SORTFS;
			if (e->fs && (e->fs->fs_magic == MAGIC_EXT || e->fs->fs_magic == MAGIC_XFS))
				n.flags |= DU_DINO_ST;
		} else if (e->st.nlink > 1) {
			n.flags |= DU_MULTI;
		}
	}
	idx = du_tree_add(&du->tree, &n, e->depth == 0 ? du->roots[e->root_index] : e->name);
	if (idx == DU_NONE || n.dev == DU_NONE)
		return du->fatal = -ENOMEM;
	if (o->export_file && du_export_info(du, idx, (n.flags & DU_NOSTAT) ? &(struct sweep_stat){ 0 } : &e->st) < 0)
		return du->fatal = -ENOMEM;
	if (o->follow == FOLLOW_ALL) {
		if (du_grow(&du->links, &du->links_cap, (size_t)idx + 1, sizeof(*du->links)) < 0)
			return du->fatal = -ENOMEM;
		du->links[idx] = (uint8_t)links;
		if (eloop)
			return SWEEP_WALK_SKIP;
	}
	if (o->time) {
		if (du_grow(&du->times, &du->times_cap, (size_t)idx + 1, sizeof(*du->times)) < 0)
			return du->fatal = -ENOMEM;
		du->times[idx] = o->time_kind == TIME_ATIME ? (struct timespec){ e->st.atime_sec, e->st.atime_nsec }
				 : o->time_kind == TIME_CTIME ? (struct timespec){ e->st.ctime_sec, e->st.ctime_nsec }
							      : (struct timespec){ e->st.mtime_sec, e->st.mtime_nsec };
	}
	if (e->depth == 0 && du->root_node[e->root_index] == DU_NONE)
		du->root_node[e->root_index] = idx;
	if (dir && e->id && du_map_put(&du->ids, e->id, 0, idx, NULL) < 0)
		return du->fatal = -ENOMEM;
	/* nothing is printed before the walk ends, so show that it moves */
	if (!e->stat_err)
		count(du, e, dir);
	return 0;
}


/*
 * Whether the d_ino of every entry of dir is the st_ino the walk gave: on
 * ext2/3/4 and xfs, for entries stat'ed without following, when no mount
 * point is in dir: no entry on another device, and dir's filesystem mounted
 * only once, so no bind mount of it stands there either (mounts.c).
 */
static bool dino_is_st_ino(struct du *du, const struct du_tree *t, uint32_t dir, const uint32_t *kids, uint32_t n)
{
	const struct du_node *d = &t->nodes[dir];

	if (!(d->flags & DU_DINO_ST) || du->o.follow == FOLLOW_ALL)
		return false;
	for (uint32_t j = 0; j < n; j++)
		if ((t->nodes[kids[j]].flags & DU_NOSTAT) || t->nodes[kids[j]].dev != d->dev)
			return false;
	if (du->mounts_state == 0)
		du->mounts_state = du_mounts_load(&du->mounts) == 0 ? 1 : -1;
	return du->mounts_state == 1 && du_mounts_count(&du->mounts, t->devs[d->dev]) == 1;
}

/* Whether st is the node's file (device and inode). */
static bool is_node(const struct du_tree *t, uint32_t i, const struct stat *st)
{
	return (uint64_t)st->st_ino == t->nodes[i].ino && (uint64_t)st->st_dev == t->devs[t->nodes[i].dev];
}

/*
 * dir opened again after the walk, to be read (DESIGN §3a): beneath its
 * root, opened as the user named it and checked to be the root walked, with
 * no symlink followed below it; under -L, whose paths may pass through
 * symlinks, by its path. Either way checked to be dir itself. -1 when it
 * cannot be reached or something else stands there now.
 */
static int dir_open_again(struct du *du, const struct du_tree *t, uint32_t dir)
{
	uint32_t root = dir;
	struct stat st;
	int fd = -1, rfd;

	while (t->nodes[root].parent != DU_NONE)
		root = t->nodes[root].parent;
	if (du_tree_path(t, dir, &du->scratch, &du->scratch_cap) < 0)
		return -1;
	if (du->o.follow == FOLLOW_ALL || root == dir) {
		fd = open(du->scratch, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	} else {
		rfd = open(du_name(t, root), O_PATH | O_DIRECTORY | O_CLOEXEC);
		/* du_tree_path joins the root's name and the names below it with one '/' */
		if (rfd >= 0 && fstat(rfd, &st) == 0 && is_node(t, root, &st))
			fd = sweep_open_beneath(rfd, du->scratch + strlen(du_name(t, root)) + 1, O_RDONLY | O_DIRECTORY, 0);
		if (rfd >= 0)
			close(rfd);
	}
	if (fd >= 0 && (fstat(fd, &st) < 0 || !is_node(t, dir, &st))) {
		close(fd);
		fd = -1;
	}
	return fd < 0 ? -1 : fd;
}

/* du_dino_fn: read the directory again for the d_ino values fts sorts on, unless they are the st_ino values. */
static void dino(const struct du_tree *t, uint32_t dir, const uint32_t *kids, uint32_t n, uint64_t *keys,
		 void *ctx)
{
	struct du *du = ctx;
	struct dirent *de;
	uint32_t pos = 0, j = 0;
	DIR *d;
	int fd;

	/* Reading an 18,000-entry directory again was 4% of sweep-du -s /usr/share. */
	if (dino_is_st_ino(du, t, dir, kids, n))
		return;
	fd = dir_open_again(du, t, dir);
	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while (j < n && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		while (j < n && t->nodes[kids[j]].index < pos)
			j++;
		if (j < n && t->nodes[kids[j]].index == pos && !strcmp(du_name(t, kids[j]), de->d_name))
			keys[j] = de->d_ino;
		pos++;
	}
	closedir(d);
}

/* fts_open trims two or more trailing slashes down to one. */
static char *fts_root(const char *arg)
{
	size_t len = strlen(arg);
	char *s;

	if (len > 2 && arg[len - 1] == '/')
		while (len > 1 && arg[len - 2] == '/')
			len--;
	s = strndup(arg, len);
	if (!s)
		cli_die(1, "memory exhausted");
	return s;
}

/*
 * --files0-from: the NUL-separated names in file (or stdin), as an argv.
 * Exits with du's messages when the file cannot be read.
 */
static char **read_files0(const char *file, size_t *ret_n, char **ret_buf)
{
	FILE *f = strcmp(file, "-") ? fopen(file, "re") : stdin;
	char *buf = NULL, **v = NULL;
	size_t len = 0, cap = 0, n = 0, vcap = 0;
	size_t got;

	if (!f)
		cli_die(1, "cannot open %s for reading: %s", cli_quote(file), strerror(errno));
	do {
		if (du_grow(&buf, &cap, len + 65536 + 1, 1) < 0)
			cli_die(1, "memory exhausted");
		got = fread(buf + len, 1, 65536, f);
		len += got;
	} while (got > 0);
	if (ferror(f))
		cli_die(1, "%s: read error: %s", cli_quotef(file), strerror(errno));
	if (f != stdin)
		fclose(f);
	buf[len] = 0;
	for (size_t i = 0; i < len; i += strlen(buf + i) + 1) {
		if (du_grow(&v, &vcap, n + 1, sizeof(*v)) < 0)
			cli_die(1, "memory exhausted");
		v[n++] = buf + i;
	}
	*ret_n = n;
	*ret_buf = buf;
	return v;
}

int main(int argc, char **argv)
{
	static char dot[] = ".";
	struct du du = { .ok = true };
	char **args, **list = NULL, *listbuf = NULL;
	size_t nargs;
	int ret;

	/* as du: the locale decides quotes, printable names, decimal point and dates */
	setlocale(LC_ALL, "");
	cli_init(argv[0]);
	argv[0] = (char *)cli_prog(); /* getopt's messages name the program as du's do */
	cli_close_stdout_atexit();
	/* Without --progress: a line on a terminal, while the walk runs (nothing else is printed then). */
	du.o.progress = (struct progress_opts){ .on = true, .tty_only = true };
	du_parse_args(argc, argv, &du.o);
	args = optind < argc ? argv + optind : (char *[]){ dot, NULL };
	nargs = optind < argc ? (size_t)(argc - optind) : 1;
	if (du.o.files0) {
		if (optind < argc) {
			cli_msg("extra operand %s", cli_quote_locale(argv[optind]));
			fprintf(stderr, "file operands cannot be combined with --files0-from\n");
			du_usage(1);
		}
		args = list = read_files0(du.o.files0, &nargs, &listbuf);
	}

	du.roots = calloc(nargs + 1, sizeof(*du.roots));
	du.root_node = malloc((nargs + 1) * sizeof(*du.root_node));
	du.root_dev = calloc(nargs + 1, sizeof(*du.root_dev));
	du.ops = calloc(nargs + 1, sizeof(*du.ops));
	if (!du.roots || !du.root_node || !du.root_dev || !du.ops)
		cli_die(1, "memory exhausted");
	for (size_t i = 0; i < nargs; i++) {
		struct operand *op = &du.ops[du.nops++];
		if (du.o.files0 && !strcmp(du.o.files0, "-") && !strcmp(args[i], "-")) {
			*op = (struct operand){ .root = DU_NONE, .dash = true };
			continue;
		}
		if (!args[i][0]) {
			*op = (struct operand){ .root = DU_NONE, .number = du.o.files0 ? i + 1 : 0 };
			continue;
		}
		op->root = (uint32_t)du.nroots;
		du.roots[du.nroots] = fts_root(args[i]);
		du.root_node[du.nroots++] = DU_NONE;
	}
	free(list);
	if (du.o.export_file && du.nops != 1) {
		cli_msg("--export takes one directory (ncdu's format has one top): %zu operands given", du.nops);
		du_usage(1);
	}
	free(listbuf);

	struct sweep_walk_opts wo = {
		.size = sizeof(wo),
		.flags = du.o.follow == FOLLOW_ALL ? SWEEP_WALK_FOLLOW
			 : du.o.follow == FOLLOW_ARGS ? SWEEP_WALK_FOLLOW_ROOTS : 0,
		.order = du.o.order,
		.on_entry = on_entry,
		.on_error = on_error,
		.ctx = &du,
	};
	/* Before the walk: a file that cannot be written is said at once, not after an hour of it. */
	FILE *export_f = du.o.export_file ? du_export_open(du.o.export_file) : NULL;
	if (du.o.verbose)
		cli_device_report(du.roots, du.nroots);
	du.progress = progress_new(&du.o.progress);
	ret = du.nroots ? sweep_walk(du.roots, du.nroots, &wo) : 0;
	progress_walk_done(du.progress);
	progress_done_all(du.progress);
	/* A summary when asked for; the terminal line shown without --progress is only erased. */
	if (du.o.progress.tty_only)
		du.progress = progress_free(du.progress);
	du.progress = progress_finish(du.progress, ret >= 0 && !du.fatal);
	if (du.fatal < 0)
		cli_die(1, "%s", strerror(-du.fatal));
	if (ret < 0)
		cli_error(ret, "walk failed");
	if (ret < 0)
		du.ok = false;
	if (du_tree_order(&du.tree, du.o.follow == FOLLOW_ALL, dino, &du) < 0 || du_replay(&du) < 0)
		cli_die(1, "memory exhausted");
	if (du.o.export_file) {
		int r = du_export(&du, export_f);
		if (r == -ENOMEM)
			cli_die(1, "memory exhausted");
		if (r < 0)
			du.ok = false;
	}

	for (size_t i = 0; i < du.nerrs; i++)
		free(du.errs[i].path);
	for (size_t i = 0; i < du.nroots; i++)
		free((char *)du.roots[i]);
	free(du.errs);
	free(du.ops);
	free(du.times);
	free(du.links);
	free(du.xinfo);
	free(du.xout);
	free(du.xnames);
	free(du.roots);
	free(du.root_node);
	free(du.root_dev);
	free(du.scratch);
	du_tree_free(&du.tree);
	du_map_clear(&du.ids);
	du_mounts_free(&du.mounts);
	exclude_free(du.o.exclude);
	return du.ok ? 0 : 1;
}
