/* SPDX-License-Identifier: MIT */
/*
 * scan-tree: walk a tree with getdents64 only (the VFS part of the metadata
 * engine), then ask lib/metascan for the hints of every inode it found, in
 * one ascending set. For the tests it compares every hint with lstat and
 * with FIEMAP (sweep_extent_first); for bench/ it times each phase.
 *
 *   scan-tree [--check] [--bulkstat] [--statx] [--nocsum] [--dev PATH]
 *             [--repeat N] [--drop-caches] [--list] [--walk-only] DIR
 *
 * Exit: 0, 1 on a mismatch (--check), 2 on a usage error, 3 when the
 * metascan open fails (the errno name is printed: the uid-65534 test wants
 * EACCES or EPERM), 77 when DIR is not on ext4 or xfs.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "walk.h"
#include "metascan.h"

struct entry {
	uint64_t ino;
	uint32_t dir;  /* index of the directory holding it (UINT32_MAX: the root) */
	uint32_t name; /* offset into names */
	unsigned char type;
};

static struct entry *ents;
static size_t nents, cap_ents;
static char *names;
static size_t nnames, cap_names;
static uint32_t *dirs; /* entry index of each directory */
static size_t ndirs, cap_dirs;
/* file scope, so that an early exit leaves nothing the leak checker calls lost */
static uint64_t *inos;
static struct sweep__inode_hint *h;
static struct sweep__bstat *bs;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *xgrow(void *p, size_t *cap, size_t need, size_t elem)
{
	if (sweep__grow(&p, cap, need, elem, 1024) < 0) {
		fprintf(stderr, "scan-tree: out of memory\n");
		exit(2);
	}
	return p;
}

static uint32_t add_name(const char *s)
{
	size_t len = strlen(s) + 1;
	names = xgrow(names, &cap_names, nnames + len, 1);
	memcpy(names + nnames, s, len);
	nnames += len;
	return (uint32_t)(nnames - len);
}

static void add_entry(uint64_t ino, uint32_t dir, const char *name, unsigned char type)
{
	ents = xgrow(ents, &cap_ents, nents + 1, sizeof(*ents));
	ents[nents] = (struct entry){ ino, dir, add_name(name), type };
	if (type == DT_DIR) {
		dirs = xgrow(dirs, &cap_dirs, ndirs + 1, sizeof(*dirs));
		dirs[ndirs++] = (uint32_t)nents;
	}
	nents++;
}

/* The path of entry e relative to the root (the root itself is "."). */
static void path_of(size_t e, char *buf, size_t size)
{
	if (ents[e].dir == UINT32_MAX) {
		snprintf(buf, size, ".");
		return;
	}
	char tmp[PATH_MAX];
	path_of(dirs[ents[e].dir], tmp, sizeof(tmp));
	int k = strcmp(tmp, ".") == 0 ? snprintf(buf, size, "%s", names + ents[e].name)
				      : snprintf(buf, size, "%s/%s", tmp, names + ents[e].name);
	if (k < 0 || (size_t)k >= size) {
		fprintf(stderr, "scan-tree: path too long under %s\n", tmp);
		exit(2);
	}
}

static int cmp_u64(const void *a, const void *b);

/*
 * With a metascan handle: before reading the directories of the next level
 * (breadth first), find where their blocks are and start reading them all
 * in one sweep (sweep__metascan_ranges, then sweep__metascan_prefetch).
 */
static double prefetch_s;
static uint64_t prefetch_bytes, prefetch_requests;
static void prefetch_level(struct sweep__metascan *m, size_t d0, size_t d1)
{
	double t = now();
	uint64_t *inos = malloc((d1 - d0) * sizeof(*inos));
	struct sweep__dev_range *r = NULL;
	size_t nr = 0;
	for (size_t d = d0; d < d1; d++)
		inos[d - d0] = ents[dirs[d]].ino;
	qsort(inos, d1 - d0, sizeof(*inos), cmp_u64);
	if (sweep__metascan_ranges(m, inos, d1 - d0, &r, &nr) == 0) {
		int k = sweep__metascan_prefetch(m, r, nr);
		for (size_t i = 0; i < nr; i++)
			prefetch_bytes += r[i].len;
		prefetch_requests += k > 0 ? (uint64_t)k : 0;
	}
	free(r);
	free(inos);
	prefetch_s += now() - t;
}

/* Directories in the order found, each read whole with getdents64 (no stat, no open of a child file). */
static int walk(int rootfd, struct sweep__metascan *m, uint64_t *getdents_calls)
{
	static char buf[1 << 16];
	struct stat st;
	if (fstat(rootfd, &st) < 0)
		return -errno;
	add_entry(st.st_ino, UINT32_MAX, ".", DT_DIR);
	size_t level_end = 0;
	for (size_t d = 0; d < ndirs; d++) {
		char path[PATH_MAX];
		if (m && d == level_end) {
			/* breadth first: dirs [d, ndirs) are the next level, all known now */
			level_end = ndirs;
			prefetch_level(m, d, ndirs);
		}
		path_of(dirs[d], path, sizeof(path));
		int fd = openat(rootfd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			fprintf(stderr, "scan-tree: %s: %s\n", path, strerror(errno));
			continue;
		}
		for (;;) {
			long n = syscall(SYS_getdents64, fd, buf, sizeof(buf));
			(*getdents_calls)++;
			if (n <= 0)
				break;
			for (long off = 0; off < n;) {
				struct dirent64 *de = (struct dirent64 *)(buf + off);
				off += de->d_reclen;
				if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
					continue;
				add_entry(de->d_ino, (uint32_t)d, de->d_name, de->d_type);
			}
		}
		close(fd);
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int cmp_by_ino(const void *a, const void *b)
{
	uint64_t x = ents[*(const size_t *)a].ino, y = ents[*(const size_t *)b].ino;
	return x < y ? -1 : x > y;
}

static const char *why_name(unsigned w)
{
	static const char *const n[] = { "ok", "free", "uninit", "badcsum", "corrupt", "noino", "eio" };
	return w < sizeof(n) / sizeof(n[0]) ? n[w] : "?";
}

/* The hint of ino in the sorted hint array. */
static const struct sweep__inode_hint *find_hint(const struct sweep__inode_hint *h, size_t n, uint64_t ino)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (h[mid].ino < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && h[lo].ino == ino ? &h[lo] : NULL;
}

static int mismatches;
static bool blockmap; /* --blockmap: files are block-mapped (ext2/ext3) */
static void bad(const char *path, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bad(const char *path, const char *fmt, ...)
{
	va_list ap;
	if (mismatches++ < 30) {
		fprintf(stderr, "MISMATCH %s: ", path);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
}

/* What any hint may say, stale or not: never more than a valid inode could hold. */
static void sane(const struct sweep__inode_hint *h, uint64_t dev_size, unsigned bsize)
{
	char what[64];
	snprintf(what, sizeof(what), "inode %" PRIu64, h->ino);
	bool valid = h->flags & SWEEP__HINT_VALID, phys = h->flags & SWEEP__HINT_PHYS;
	if (valid != (h->why == SWEEP__HINT_OK))
		bad(what, "VALID is %d but why is %s", valid, why_name(h->why));
	if (h->why > SWEEP__HINT_EIO)
		bad(what, "why %u", h->why);
	if (!valid && (h->flags & (SWEEP__HINT_PHYS | SWEEP__HINT_ONE_EXTENT)))
		bad(what, "invalid hint with a location (flags %x)", h->flags);
	if (valid && ((h->mode & S_IFMT) == 0 || (!S_ISREG(h->mode) && !S_ISDIR(h->mode) && !S_ISLNK(h->mode) &&
						     !S_ISCHR(h->mode) && !S_ISBLK(h->mode) && !S_ISFIFO(h->mode) &&
						     !S_ISSOCK(h->mode))))
		bad(what, "mode %o", h->mode);
	if (valid && h->size > (uint64_t)INT64_MAX)
		bad(what, "size %" PRIu64, h->size);
	if (phys && h->phys == SWEEP_NO_PHYS && (h->phys_len || (h->flags & SWEEP__HINT_ONE_EXTENT)))
		bad(what, "no location but length %" PRIu64 " / one extent", h->phys_len);
	if (phys && h->phys != SWEEP_NO_PHYS &&
	    (h->phys % bsize || h->phys_len == 0 || h->phys_len % bsize || h->phys_len > dev_size ||
	     h->phys > dev_size - h->phys_len))
		bad(what, "location %" PRIu64 "+%" PRIu64 " outside the device of %" PRIu64 " bytes", h->phys,
		    h->phys_len, dev_size);
	if ((h->flags & SWEEP__HINT_INLINE) && (!phys || h->phys != SWEEP_NO_PHYS))
		bad(what, "inline data with a location");
	if (!phys && h->phys != SWEEP_NO_PHYS)
		bad(what, "unknown location but phys %" PRIu64, h->phys);
}

/* FIEMAP's located extents, touching ones merged, against sweep__metascan_ranges of the one inode. */
static void check_ranges(struct sweep__metascan *m, const char *path, uint64_t ino, const struct sweep_extent *x,
			 size_t nx)
{
	struct sweep__dev_range *want = calloc(nx ? nx : 1, sizeof(*want)), *got = NULL;
	size_t nw = 0, ng = 0;
	for (size_t i = 0; i < nx; i++) {
		if (x[i].physical == SWEEP_NO_PHYS)
			continue;
		want[nw++] = (struct sweep__dev_range){ x[i].physical, x[i].length };
	}
	/* sort by offset (insertion: few) and merge */
	for (size_t i = 1; i < nw; i++)
		for (size_t j = i; j > 0 && want[j].off < want[j - 1].off; j--) {
			struct sweep__dev_range t = want[j];
			want[j] = want[j - 1];
			want[j - 1] = t;
		}
	size_t k = 0;
	for (size_t i = 0; i < nw; i++) {
		if (k && want[i].off <= want[k - 1].off + want[k - 1].len) {
			uint64_t end = want[i].off + want[i].len;
			if (end > want[k - 1].off + want[k - 1].len)
				want[k - 1].len = end - want[k - 1].off;
		} else {
			want[k++] = want[i];
		}
	}
	nw = k;
	int r = sweep__metascan_ranges(m, &ino, 1, &got, &ng);
	if (r < 0) {
		bad(path, "ranges: %s", strerror(-r));
	} else if (ng != nw) {
		bad(path, "ranges: %zu, FIEMAP %zu", ng, nw);
	} else {
		for (size_t i = 0; i < nw; i++)
			if (got[i].off != want[i].off || got[i].len != want[i].len) {
				bad(path, "range %zu: %" PRIu64 "+%" PRIu64 ", FIEMAP %" PRIu64 "+%" PRIu64, i, got[i].off,
				    got[i].len, want[i].off, want[i].len);
				break;
			}
	}
	free(got);
	free(want);
}

struct counts {
	size_t files, phys_checked, phys_located, no_phys, fiemap_skipped, one_extent, inline_, ranges;
};

/* Compare one entry's hint with lstat and FIEMAP. */
static void check_entry(struct sweep__metascan *m, int rootfd, size_t e, const struct sweep__inode_hint *h,
			struct counts *c)
{
	char path[PATH_MAX];
	struct stat st;
	path_of(e, path, sizeof(path));
	if (fstatat(rootfd, path, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		bad(path, "lstat: %s", strerror(errno));
		return;
	}
	c->files++;
	if (!h) {
		bad(path, "no hint for inode %" PRIu64, ents[e].ino);
		return;
	}
	if (!(h->flags & SWEEP__HINT_VALID)) {
		bad(path, "hint not valid: %s", why_name(h->why));
		return;
	}
	if (h->mode != st.st_mode || h->nlink != st.st_nlink || h->size != (uint64_t)st.st_size)
		bad(path, "hint mode %o nlink %u size %" PRIu64 ", lstat mode %o nlink %lu size %lld", h->mode,
		    h->nlink, h->size, st.st_mode, (unsigned long)st.st_nlink, (long long)st.st_size);
	if (h->flags & SWEEP__HINT_INLINE)
		c->inline_++;
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		/* no FIEMAP without opening; devices and FIFOs have no data; symlinks: see --list */
		if (!S_ISLNK(st.st_mode) && (!(h->flags & SWEEP__HINT_PHYS) || h->phys != SWEEP_NO_PHYS))
			bad(path, "a special file with a location");
		return;
	}
	if (S_ISDIR(st.st_mode) && strcmp(sweep__metascan_fstype(m), "xfs") == 0) {
		/* xfs has no FIEMAP for directories, and FIBMAP says "no data": the script asks xfs_db */
		c->fiemap_skipped++;
		return;
	}
	int fd = openat(rootfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		bad(path, "open: %s", strerror(errno));
		return;
	}
	uint64_t p = SWEEP_NO_PHYS;
	int r = sweep_extent_first(fd, &p);
	if (r < 0 && r != -ENODATA) {
		c->fiemap_skipped++;
		close(fd);
		return;
	}
	c->phys_checked++;
	if (!(h->flags & SWEEP__HINT_PHYS))
		bad(path, "hint has no location answer, FIEMAP says %s", r == 0 ? "located" : "none");
	else if (h->phys != p)
		bad(path, "hint phys %" PRIu64 ", FIEMAP %" PRIu64, h->phys, p);
	if (p == SWEEP_NO_PHYS)
		c->no_phys++;
	else
		c->phys_located++;
	/* the whole map, when the hint claims to know it, and the length of the first extent */
	struct sweep_extent *x = NULL;
	size_t nx = 0;
	if (sweep_extents_get(fd, &x, &nx, NULL) == 0) {
		size_t first = nx, located = 0;
		for (size_t i = 0; i < nx; i++) {
			if (x[i].physical == SWEEP_NO_PHYS)
				continue;
			if (first == nx)
				first = i;
			located++;
		}
		/*
		 * A block map (ext2/3) has no extents: the hint's run ends where its pointer block
		 * does, FIEMAP's where the blocks stop being contiguous. Extents must agree exactly.
		 */
		if (first < nx && (h->flags & SWEEP__HINT_PHYS) &&
		    (blockmap ? h->phys_len > x[first].length || h->phys_len == 0 : h->phys_len != x[first].length))
			bad(path, "hint phys_len %" PRIu64 ", FIEMAP first extent %" PRIu64, h->phys_len, x[first].length);
		if (h->flags & SWEEP__HINT_ONE_EXTENT) {
			c->one_extent++;
			if (nx != 1 || located != 1 || x[0].logical != 0)
				bad(path, "hint says one extent, FIEMAP lists %zu (%zu located)", nx, located);
		}
		/* the whole map: every directory, every file of several extents, and a sample of the rest */
		if (S_ISDIR(st.st_mode) || nx > 1 || e % 97 == 0) {
			check_ranges(m, path, ents[e].ino, x, nx);
			c->ranges++;
		}
	}
	free(x);
	close(fd);
}

static void usage(FILE *f)
{
	fputs("usage: scan-tree [--check] [--bulkstat] [--statx] [--nocsum] [--dev PATH] [--repeat N]\n"
	      "                 [--drop-caches] [--list] [--walk-only] [--prefetch] [--blockmap]\n"
	      "                 [--inos-out FILE | --inos-in FILE] [--dir-blocks] [--read-dirs] DIR\n"
	      "--dir-blocks prints the blocks of every directory of DIR's filesystem as the\n"
	      "engine finds them from its inode tables (\"range OFFSET LENGTH\" lines) and exits.\n"
	      "--read-dirs starts reading the directories whose inode numbers come on stdin\n"
	      "(xfs, by handle), prints \"opened N\" or \"read-dirs: ERRNO\" and exits.\n"
	      "--inos-out saves the sorted inode numbers the walk found; --inos-in takes them\n"
	      "instead of walking (no names: only the hint, bulkstat and timing modes).\n",
	      f);
}

static void drop_caches(void)
{
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "3\n", 2) != 2) {
		fprintf(stderr, "scan-tree: cannot drop caches: %s\n", strerror(errno));
		exit(2);
	}
	close(fd);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "check", no_argument, NULL, 'c' },     { "bulkstat", no_argument, NULL, 'b' },
		{ "statx", no_argument, NULL, 's' },     { "nocsum", no_argument, NULL, 'n' },
		{ "dev", required_argument, NULL, 'd' }, { "repeat", required_argument, NULL, 'r' },
		{ "drop-caches", no_argument, NULL, 'D' }, { "list", no_argument, NULL, 'l' },
		{ "walk-only", no_argument, NULL, 'w' }, { "help", no_argument, NULL, 'h' },
		{ "prefetch", no_argument, NULL, 'p' }, { "blockmap", no_argument, NULL, 'B' },
		{ "inos-out", required_argument, NULL, 'O' }, { "inos-in", required_argument, NULL, 'I' },
		{ "dir-blocks", no_argument, NULL, 'k' }, { "read-dirs", no_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 },
	};
	bool check = false, bulk = false, do_statx = false, list = false, walk_only = false, drop = false;
	bool prefetch = false, dir_blocks = false, read_dirs = false;
	const char *inos_out = NULL, *inos_in = NULL;
	unsigned flags = 0;
	const char *dev = NULL;
	long repeat = 1;
	int o;
	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (o) {
		case 'c': check = true; break;
		case 'b': bulk = true; break;
		case 's': do_statx = true; break;
		case 'n': flags |= SWEEP__METASCAN_NOCSUM; break;
		case 'd': dev = optarg; break;
		case 'r': repeat = strtol(optarg, NULL, 10); break;
		case 'D': drop = true; break;
		case 'l': list = true; break;
		case 'w': walk_only = true; break;
		case 'p': prefetch = true; break;
		case 'B': blockmap = true; break;
		case 'O': inos_out = optarg; break;
		case 'I': inos_in = optarg; break;
		case 'k': dir_blocks = true; break;
		case 'R': read_dirs = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc - 1 || repeat < 1) {
		usage(stderr);
		return 2;
	}
	int rootfd = open(argv[optind], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		fprintf(stderr, "scan-tree: %s: %s\n", argv[optind], strerror(errno));
		return 2;
	}
	if (read_dirs) {
		uint64_t *v = NULL, ino;
		size_t nv = 0, cap = 0;
		while (scanf("%" SCNu64, &ino) == 1) {
			if (nv == cap && !(v = realloc(v, (cap = cap ? 2 * cap : 256) * sizeof(*v))))
				return 3;
			v[nv++] = ino;
		}
		/* Their generations from bulkstat (ascending inodes); where it is refused, 0: the opens say why. */
		uint32_t *gens = calloc(nv ? nv : 1, sizeof(*gens));
		struct sweep__bstat *bs = calloc(nv ? nv : 1, sizeof(*bs));
		if (!gens || !bs)
			return 3;
		qsort(v, nv, sizeof(*v), cmp_u64);
		if (sweep__xfs_bulkstat(rootfd, v, nv, bs) >= 0)
			for (size_t i = 0; i < nv; i++)
				gens[i] = bs[i].err ? 0 : bs[i].gen;
		struct sweep__dirs_ahead *da;
		int r = sweep__xfs_dirs_read_ahead_start(rootfd, 4, &da);
		if (r >= 0)
			r = sweep__xfs_dirs_read_ahead_add(da, v, gens, nv);
		int e = sweep__xfs_dirs_read_ahead_end(da, false);
		r = r < 0 ? r : e;
		free(v);
		free(gens);
		free(bs);
		if (r < 0)
			printf("read-dirs: %s\n", strerrorname_np(-r) ? strerrorname_np(-r) : "?");
		else
			printf("opened %d\n", r);
		return r < 0 ? 3 : 0;
	}
	if (dir_blocks) {
		struct sweep__metascan *dm = NULL;
		struct sweep__dev_range *r = NULL;
		size_t nr = 0;
		int e = sweep__metascan_open(rootfd, flags, &dm);
		long t = e < 0 ? e : sweep__metascan_read_tables(dm, 0, UINT64_MAX);
		e = t < 0 ? (int)t : sweep__metascan_dir_blocks(dm, 0, UINT64_MAX, &r, &nr);
		if (e < 0) {
			fprintf(stderr, "scan-tree: dir blocks: %s\n", strerror(-e));
			return e == -EOPNOTSUPP ? 77 : 3;
		}
		for (size_t i = 0; i < nr; i++)
			printf("range %" PRIu64 " %" PRIu64 "\n", r[i].off, r[i].len);
		free(r);
		sweep__metascan_free(dm);
		return 0;
	}

	size_t n = 0;
	if (inos_in) {
		FILE *f = fopen(inos_in, "re");
		struct stat fst;
		if (!f || fstat(fileno(f), &fst) < 0) {
			fprintf(stderr, "scan-tree: %s: %s\n", inos_in, strerror(errno));
			return 2;
		}
		n = (size_t)fst.st_size / sizeof(uint64_t);
		inos = malloc((n ? n : 1) * sizeof(*inos));
		if (!inos || fread(inos, sizeof(*inos), n, f) != n)
			return 2;
		fclose(f);
		if (check || list || do_statx || prefetch || walk_only) {
			fprintf(stderr, "scan-tree: --inos-in has no names to check, list, stat or walk\n");
			return 2;
		}
		if (drop)
			drop_caches();
		goto scan;
	}
	struct sweep__metascan *pm = NULL;
	if (prefetch) {
		int r = sweep__metascan_open(rootfd, flags, &pm);
		if (r < 0) {
			fprintf(stderr, "scan-tree: metascan open: %s\n", strerror(-r));
			return r == -EOPNOTSUPP ? 77 : 3;
		}
	}
	if (drop)
		drop_caches();
	uint64_t calls = 0;
	double t0 = now();
	if (walk(rootfd, pm, &calls) < 0)
		return 2;
	double t1 = now();
	fprintf(stderr, "walk: dirs=%zu entries=%zu getdents=%" PRIu64 " s=%.3f\n", ndirs, nents, calls, t1 - t0);
	if (pm)
		fprintf(stderr, "prefetch: MiB=%.1f requests=%" PRIu64 " s=%.3f (inside the walk)\n",
			(double)prefetch_bytes / (1 << 20), prefetch_requests, prefetch_s);
	pm = sweep__metascan_free(pm);
	if (walk_only)
		return 0;

	inos = malloc((nents ? nents : 1) * sizeof(*inos));
	if (!inos)
		return 2;
	for (size_t i = 0; i < nents; i++)
		inos[i] = ents[i].ino;
	qsort(inos, nents, sizeof(*inos), cmp_u64);
	for (size_t i = 0; i < nents; i++)
		if (n == 0 || inos[i] != inos[n - 1])
			inos[n++] = inos[i];
	double t2 = now();
	fprintf(stderr, "sort: inodes=%zu s=%.3f\n", n, t2 - t1);
	if (inos_out) {
		FILE *f = fopen(inos_out, "we");
		if (!f || fwrite(inos, sizeof(*inos), n, f) != n || fclose(f) != 0) {
			fprintf(stderr, "scan-tree: %s: %s\n", inos_out, strerror(errno));
			return 2;
		}
	}
	if (drop)
		drop_caches();

	if (do_statx) {
		/* the per-inode baseline: one statx per entry, in inode order */
		size_t *order = malloc(nents * sizeof(*order));
		if (!order)
			return 2;
		for (size_t i = 0; i < nents; i++)
			order[i] = i;
		qsort(order, nents, sizeof(*order), cmp_by_ino);
		double s0 = now();
		size_t ok = 0;
		for (size_t i = 0; i < nents; i++) {
			char path[PATH_MAX];
			struct statx sx;
			path_of(order[i], path, sizeof(path));
			if (statx(rootfd, path, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &sx) == 0)
				ok++;
		}
		fprintf(stderr, "statx: entries=%zu ok=%zu s=%.3f\n", nents, ok, now() - s0);
		free(order);
		return 0; /* a measurement of its own */
	}

scan:
	if (bulk) {
		bs = calloc(n ? n : 1, sizeof(*bs));
		double b0 = now();
		int r = sweep__xfs_bulkstat(rootfd, inos, n, bs);
		fprintf(stderr, "bulkstat: r=%d s=%.3f\n", r, now() - b0);
		if (r < 0) {
			printf("bulkstat: %s\n", strerrorname_np(-r) ? strerrorname_np(-r) : "?");
			return 3;
		}
		if (check) {
			for (size_t e = 0; e < nents; e++) {
				char path[PATH_MAX];
				struct stat st;
				path_of(e, path, sizeof(path));
				if (fstatat(rootfd, path, &st, AT_SYMLINK_NOFOLLOW) < 0)
					continue;
				size_t lo = 0, hi = n;
				while (lo < hi) {
					size_t mid = (lo + hi) / 2;
					if (inos[mid] < ents[e].ino)
						lo = mid + 1;
					else
						hi = mid;
				}
				const struct sweep__bstat *b = &bs[lo];
				if (lo >= n || inos[lo] != ents[e].ino || b->err) {
					bad(path, "bulkstat has no record");
					continue;
				}
				const struct stat *x = &b->st;
				if (x->st_ino != st.st_ino || x->st_mode != st.st_mode || x->st_nlink != st.st_nlink ||
				    x->st_size != st.st_size || x->st_uid != st.st_uid || x->st_gid != st.st_gid ||
				    x->st_blocks != st.st_blocks || x->st_rdev != st.st_rdev || x->st_dev != st.st_dev ||
				    x->st_mtim.tv_sec != st.st_mtim.tv_sec || x->st_mtim.tv_nsec != st.st_mtim.tv_nsec ||
				    x->st_ctim.tv_sec != st.st_ctim.tv_sec || x->st_ctim.tv_nsec != st.st_ctim.tv_nsec)
					bad(path, "bulkstat differs from lstat (mode %o/%o nlink %lu/%lu size %lld/%lld blocks %lld/%lld)",
					    x->st_mode, st.st_mode, (unsigned long)x->st_nlink, (unsigned long)st.st_nlink,
					    (long long)x->st_size, (long long)st.st_size, (long long)x->st_blocks,
					    (long long)st.st_blocks);
			}
			fprintf(stderr, "bulkstat check: entries=%zu mismatches=%d\n", nents, mismatches);
		}
		free(bs);
		return mismatches ? 1 : 0;
	}

	struct sweep__metascan *m = NULL;
	int r;
	if (dev) {
		int dfd = open(dev, O_RDONLY | O_CLOEXEC);
		if (dfd < 0) {
			r = -errno;
		} else {
			r = sweep__metascan_open_dev(dfd, flags, &m);
			close(dfd);
		}
	} else {
		r = sweep__metascan_open(rootfd, flags, &m);
	}
	if (r < 0) {
		printf("open: %s\n", strerrorname_np(-r) ? strerrorname_np(-r) : "?");
		fprintf(stderr, "scan-tree: metascan open: %s\n", strerror(-r));
		return r == -EOPNOTSUPP ? 77 : 3;
	}
	h = malloc((n ? n : 1) * sizeof(*h));
	if (!h)
		return 2;
	int valid = 0;
	for (long k = 0; k < repeat; k++) {
		double h0 = now();
		uint64_t req0, bytes0, req1, bytes1;
		sweep__metascan_io_stats(m, &req0, &bytes0);
		valid = sweep__metascan_inodes(m, inos, n, h);
		sweep__metascan_io_stats(m, &req1, &bytes1);
		if (valid < 0) {
			fprintf(stderr, "scan-tree: metascan: %s\n", strerror(-valid));
			return 2;
		}
		fprintf(stderr, "hints: fs=%s inodes=%zu valid=%d requests=%" PRIu64 " MiB=%.1f s=%.3f\n",
			sweep__metascan_fstype(m), n, valid, req1 - req0, (double)(bytes1 - bytes0) / (1 << 20),
			now() - h0);
		for (size_t i = 0; i < n; i++)
			sane(&h[i], m->dev_size, sweep__metascan_block_size(m));
	}

	if (list) {
		for (size_t e = 0; e < nents; e++) {
			char path[PATH_MAX];
			const struct sweep__inode_hint *x = find_hint(h, n, ents[e].ino);
			path_of(e, path, sizeof(path));
			if (!x)
				continue;
			char phys[24] = "-";
			if (x->phys != SWEEP_NO_PHYS)
				snprintf(phys, sizeof(phys), "%" PRIu64, x->phys);
			/* ino why mode(octal) nlink size phys flags(hex) path */
			printf("%" PRIu64 " %s %o %u %" PRIu64 " %s %x %s\n", x->ino, why_name(x->why), x->mode, x->nlink,
			       x->size, phys, x->flags, path);
		}
	}
	if (check) {
		struct counts c = { 0 };
		for (size_t e = 0; e < nents; e++)
			check_entry(m, rootfd, e, find_hint(h, n, ents[e].ino), &c);
		fprintf(stderr,
			"check: entries=%zu lstat=%zu fiemap=%zu located=%zu none=%zu fiemap-unavailable=%zu "
			"one-extent=%zu inline=%zu ranges=%zu mismatches=%d\n",
			nents, c.files, c.phys_checked, c.phys_located, c.no_phys, c.fiemap_skipped, c.one_extent, c.inline_,
			c.ranges, mismatches);
	}
	free(h);
	free(inos);
	sweep__metascan_free(m);
	close(rootfd);
	return mismatches ? 1 : 0;
}
