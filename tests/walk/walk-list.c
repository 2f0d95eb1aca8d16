/* SPDX-License-Identifier: MIT */
/*
 * walk-list: print what sweep_walk finds, for comparison with find(1).
 *
 *   walk-list [-0] [-l] [--fs] [--order=O] [--follow] [--follow-roots] [--xdev]
 *             [--no-stat] [--backend=B] [--skip=NAME] [--stop-after=N]
 *             [--replace=NAME] [--quiet] ROOT...
 *   walk-list --fsinfo PATH...
 *   walk-list --extents FILE...
 *
 * Prints each entry's path (NUL-terminated with -0); -l adds
 * "depth dir_id id dirent_index ino type" before it, --fs the name of its
 * filesystem. Checks as it goes
 * that each entry is consistent: the parent was handed out before it with
 * the id it names, depth and path follow from the parent, and dirfd/at_name
 * reach the same inode. --replace=NAME swaps each directory called NAME for a
 * symlink to / as soon as it is handed out (a tree changing under the walk).
 * --quiet only counts (for timing). Errors go to stderr; exit 1 if any was reported,
 * 2 if a consistency check failed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sweep.h>

#include "walk.h" /* sweep__walk_ahead_loaded */

struct dirinfo {
	char *path;
	int depth;
};

struct ctx {
	int nul, longfmt, fsfmt, follow, no_stat, quiet;
	const char *skip, *replace;
	long stop_after, count;
	struct dirinfo *dirs; /* by id */
	size_t ndirs;
	int bad;
};

static const char *op_name(enum sweep_walk_op op)
{
	switch (op) {
	case SWEEP_WALK_OP_OPENDIR: return "opendir";
	case SWEEP_WALK_OP_READDIR: return "readdir";
	case SWEEP_WALK_OP_STAT: return "stat";
	case SWEEP_WALK_OP_LOOP: return "loop";
	case SWEEP_WALK_OP_ROOT: return "root";
	}
	return "?";
}

static void fail(struct ctx *c, const char *path, const char *what)
{
	fprintf(stderr, "walk-list: INCONSISTENT %s: %s\n", path, what);
	c->bad = 1;
}

static int on_entry(const struct sweep_entry *e, void *arg)
{
	struct ctx *c = arg;
	if (c->quiet) {
		c->count++;
		return 0;
	}
	if (strlen(e->path) != e->path_len)
		fail(c, e->path, "path_len");
	if (e->name < e->path || e->name > e->path + e->path_len)
		fail(c, e->path, "name outside path");
	if (e->depth > 0) {
		if (e->dir_id == 0 || e->dir_id >= c->ndirs || !c->dirs[e->dir_id].path) {
			fail(c, e->path, "dir_id names no directory handed out before");
		} else {
			const struct dirinfo *p = &c->dirs[e->dir_id];
			size_t pl = strlen(p->path);
			int slash = pl > 0 && p->path[pl - 1] != '/';
			if (e->depth != p->depth + 1)
				fail(c, e->path, "depth");
			if (strncmp(e->path, p->path, pl) != 0 || (slash && e->path[pl] != '/') ||
			    strcmp(e->path + pl + slash, e->at_name) != 0 || strcmp(e->name, e->at_name) != 0)
				fail(c, e->path, "path is not parent + name");
		}
	} else if (e->dir_id != 0 || e->dirfd != AT_FDCWD) {
		fail(c, e->path, "root fields");
	}
	if (!e->fs)
		fail(c, e->path, "no fs");
	if (e->stat_err == 0 && !(c->no_stat && e->d_type != DT_DIR)) {
		struct stat st;
		int fl = c->follow ? 0 : AT_SYMLINK_NOFOLLOW;
		if (fstatat(e->dirfd, e->at_name, &st, fl) < 0 && fstatat(e->dirfd, e->at_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			fail(c, e->path, "dirfd/at_name do not reach it");
		else if (st.st_ino != e->st.ino)
			fail(c, e->path, "dirfd/at_name reach another inode");
	}
	if (e->id) {
		if (e->id >= c->ndirs) {
			size_t n = e->id * 2 + 16;
			c->dirs = realloc(c->dirs, n * sizeof(*c->dirs));
			if (!c->dirs)
				abort();
			memset(c->dirs + c->ndirs, 0, (n - c->ndirs) * sizeof(*c->dirs));
			c->ndirs = n;
		}
		if (c->dirs[e->id].path)
			fail(c, e->path, "id handed out twice");
		c->dirs[e->id].path = strdup(e->path);
		c->dirs[e->id].depth = e->depth;
	}
	if (c->fsfmt)
		printf("%s ", e->fs ? e->fs->fs_name : "-");
	if (c->longfmt)
		printf("%d %llu %llu %u %llu %u ", e->depth, (unsigned long long)e->dir_id, (unsigned long long)e->id,
		       e->dirent_index, (unsigned long long)e->st.ino, e->d_type);
	fwrite(e->path, 1, e->path_len, stdout);
	putchar(c->nul ? '\0' : '\n');
	if (c->stop_after && ++c->count >= c->stop_after)
		return -ECANCELED;
	if (c->skip && strcmp(e->name, c->skip) == 0)
		return SWEEP_WALK_SKIP;
	if (c->replace && e->depth > 0 && strcmp(e->name, c->replace) == 0 && S_ISDIR(e->st.mode)) {
		/* A directory swapped for a symlink to / after it was listed: the walk must not follow it. */
		char moved[300];
		snprintf(moved, sizeof(moved), "%s.moved", e->at_name);
		if (renameat(e->dirfd, e->at_name, e->dirfd, moved) < 0 || symlinkat("/", e->dirfd, e->at_name) < 0)
			fail(c, e->path, "could not replace it");
	}
	return 0;
}

static int on_error(const struct sweep_walk_error *err, void *arg)
{
	(void)arg;
	fprintf(stderr, "walk-list: %s: %s: %s\n", err->path, op_name(err->op), strerror(-err->err));
	return 0;
}

int main(int argc, char **argv)
{
	struct ctx c = { 0 };
	int fsinfo_only = 0, extents_only = 0;
	struct sweep_walk_opts o = { .size = sizeof(o), .on_entry = on_entry, .on_error = on_error, .ctx = &c };
	int i;
	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-0") == 0)
			c.nul = 1;
		else if (strcmp(a, "-l") == 0)
			c.longfmt = 1;
		else if (strcmp(a, "--quiet") == 0)
			c.quiet = 1;
		else if (strcmp(a, "--fs") == 0)
			c.fsfmt = 1;
		else if (strcmp(a, "--fsinfo") == 0)
			fsinfo_only = 1;
		else if (strcmp(a, "--extents") == 0)
			extents_only = 1;
		else if (strncmp(a, "--order=", 8) == 0) {
			if (sweep_order_parse(a + 8, &o.order) < 0) {
				fprintf(stderr, "walk-list: bad order %s\n", a + 8);
				return 2;
			}
		} else if (strcmp(a, "--follow") == 0) {
			o.flags |= SWEEP_WALK_FOLLOW;
			c.follow = 1;
		} else if (strcmp(a, "--follow-roots") == 0)
			o.flags |= SWEEP_WALK_FOLLOW_ROOTS;
		else if (strcmp(a, "--xdev") == 0)
			o.flags |= SWEEP_WALK_XDEV;
		else if (strcmp(a, "--no-stat") == 0) {
			o.flags |= SWEEP_WALK_NO_STAT;
			c.no_stat = 1;
		} else if (strcmp(a, "--backend=uring") == 0)
			o.backend = SWEEP_BACKEND_URING;
		else if (strcmp(a, "--backend=syscall") == 0)
			o.backend = SWEEP_BACKEND_SYSCALL;
		else if (strncmp(a, "--skip=", 7) == 0)
			c.skip = a + 7;
		else if (strncmp(a, "--replace=", 10) == 0)
			c.replace = a + 10;
		else if (strncmp(a, "--stop-after=", 13) == 0)
			c.stop_after = atol(a + 13);
		else if (strncmp(a, "--batch=", 8) == 0)
			o.stat_batch = (unsigned)atoi(a + 8);
		else if (strcmp(a, "--") == 0) {
			i++;
			break;
		} else {
			fprintf(stderr, "walk-list: unknown option %s\n", a);
			return 2;
		}
	}
	if (extents_only) {
		/*
		 * --extents FILE...: per file "source S", then "ext LOGICAL PHYSICAL|-
		 * LENGTH FLAGS" lines, "first PHYSICAL|-ERRNO", "data LOGICAL LENGTH" lines.
		 */
		int rc = 0;
		for (; i < argc; i++) {
			int fd = open(argv[i], O_RDONLY | O_CLOEXEC);
			struct stat st;
			if (fd < 0 || fstat(fd, &st) < 0) {
				fprintf(stderr, "walk-list: %s: %s\n", argv[i], strerror(errno));
				rc = 1;
				continue;
			}
			struct sweep_extent *ext = NULL, *map = NULL;
			size_t n = 0, nm = 0;
			enum sweep_extent_source src = 0;
			int r = sweep_extents_get(fd, &ext, &n, &src);
			printf("file %s\nsource %d %d\n", argv[i], r, r == 0 ? (int)src : 0);
			for (size_t k = 0; k < n; k++) {
				printf("ext %llu ", (unsigned long long)ext[k].logical);
				if (ext[k].physical == SWEEP_NO_PHYS)
					printf("- ");
				else
					printf("%llu ", (unsigned long long)ext[k].physical);
				printf("%llu %s%s%s\n", (unsigned long long)ext[k].length,
				       ext[k].flags & SWEEP_EXTENT_NOLOC ? "noloc," : "",
				       ext[k].flags & SWEEP_EXTENT_LAST ? "last," : "",
				       ext[k].flags & SWEEP_EXTENT_SHARED ? "shared," : "");
			}
			uint64_t first;
			r = sweep_extent_first(fd, &first);
			if (r == 0)
				printf("first %llu\n", (unsigned long long)first);
			else
				printf("first %d\n", r);
			if (sweep_data_map(fd, (uint64_t)st.st_size, &map, &nm) == 0)
				for (size_t k = 0; k < nm; k++)
					printf("data %llu %llu\n", (unsigned long long)map[k].logical,
					       (unsigned long long)map[k].length);
			free(ext);
			free(map);
			close(fd);
		}
		return rc;
	}
	if (fsinfo_only) {
		/* --fsinfo PATH...: what sweep_fsinfo_path says, one line each. */
		int rc = 0;
		for (; i < argc; i++) {
			struct sweep_fsinfo fi = { .size = sizeof(fi) };
			int r = sweep_fsinfo_path(argv[i], &fi);
			if (r < 0) {
				fprintf(stderr, "walk-list: %s: %s\n", argv[i], strerror(-r));
				rc = 1;
				continue;
			}
			printf("fs=%s disk=%s rotational=%d policy=%s block_size=%u\n", fi.fs_name,
			       fi.disk[0] ? fi.disk : "-", fi.rotational, sweep_order_name(fi.policy), fi.block_size);
		}
		return rc;
	}
	int r = sweep_walk((const char *const *)argv + i, (size_t)(argc - i), &o);
	fflush(stdout);
	for (size_t k = 0; k < c.ndirs; k++)
		free(c.dirs[k].path);
	free(c.dirs);
	fprintf(stderr, "walk-list: backend=%s result=%d dir_fiemaps=%llu ahead=%llu\n",
		sweep_backend_name(sweep_backend_resolve(o.backend)), r, (unsigned long long)sweep__walk_dir_fiemaps(),
		(unsigned long long)sweep__walk_ahead_loaded());
	if (c.quiet)
		fprintf(stderr, "walk-list: %ld entries\n", c.count);
	if (c.bad)
		return 2;
	if (r < 0) {
		fprintf(stderr, "walk-list: walk: %s\n", strerror(-r));
		return r == -ECANCELED ? 3 : 1;
	}
	return r > 0 ? 1 : 0;
}
