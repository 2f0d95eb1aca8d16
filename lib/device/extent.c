/* SPDX-License-Identifier: MIT */
/*
 * extent: where a file's data lives on the device, used only to sort reads.
 *
 * FIEMAP is asked page by page (fm_start moves past the last extent seen)
 * and never with FIEMAP_FLAG_SYNC, which would force writeback of every
 * dirty file we look at (coreutils dropped it for that reason). Extents that
 * are not yet allocated, encoded, inline or unwritten have no location worth
 * sorting by. Where FIEMAP is missing, FIBMAP (block by block, needs
 * CAP_SYS_RAWIO) is the fallback; when neither works the caller uses inode
 * order.
 *
 * Whether a file's data is in the page cache (sweep__data_cached) belongs
 * here too: where the data lies decides whether its place on the device
 * matters at all.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "device.h"

static int real_ioctl(int fd, unsigned long request, void *arg)
{
	return ioctl(fd, request, arg);
}

static sweep__ioctl_fn do_ioctl = real_ioctl;

sweep__ioctl_fn sweep__extent_set_ioctl(sweep__ioctl_fn fn)
{
	sweep__ioctl_fn old = do_ioctl;
	do_ioctl = fn ? fn : real_ioctl;
	return old;
}

#define NOLOC_FLAGS                                                                                   \
	(FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC | FIEMAP_EXTENT_ENCODED |                     \
	 FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_NOT_ALIGNED | FIEMAP_EXTENT_UNWRITTEN)

/* A growing array of extents. */
struct extvec {
	struct sweep_extent *v;
	size_t n, cap;
};

static int extvec_add(struct extvec *x, const struct sweep_extent *e)
{
	if (sweep__grow(&x->v, &x->cap, x->n + 1, sizeof(*x->v), 8) < 0)
		return -ENOMEM;
	x->v[x->n++] = *e;
	return 0;
}

static void convert(const struct fiemap_extent *fe, struct sweep_extent *e)
{
	e->logical = fe->fe_logical;
	e->length = fe->fe_length;
	e->flags = 0;
	if (fe->fe_flags & NOLOC_FLAGS) {
		e->flags |= SWEEP_EXTENT_NOLOC;
		e->physical = SWEEP_NO_PHYS;
	} else
		e->physical = fe->fe_physical;
	if (fe->fe_flags & FIEMAP_EXTENT_LAST)
		e->flags |= SWEEP_EXTENT_LAST;
	if (fe->fe_flags & FIEMAP_EXTENT_SHARED)
		e->flags |= SWEEP_EXTENT_SHARED;
}

#define FIEMAP_PAGE 64

/*
 * Page through FIEMAP. With first_only, stop at the first located extent.
 * Returns 0, or -errno of the first ioctl that failed (the caller then tries FIBMAP).
 */
static int fiemap_collect(int fd, int first_only, struct extvec *out)
{
	unsigned count = first_only ? 8 : FIEMAP_PAGE;
	size_t size = sizeof(struct fiemap) + count * sizeof(struct fiemap_extent);
	struct fiemap *fm = malloc(size);
	if (!fm)
		return -ENOMEM;
	uint64_t start = 0;
	int ret = 0;
	for (;;) {
		memset(fm, 0, size);
		fm->fm_start = start;
		fm->fm_length = FIEMAP_MAX_OFFSET - start;
		fm->fm_flags = 0; /* never FIEMAP_FLAG_SYNC */
		fm->fm_extent_count = count;
		if (do_ioctl(fd, FS_IOC_FIEMAP, fm) < 0) {
			ret = -errno;
			break;
		}
		unsigned got = fm->fm_mapped_extents;
		if (got > count)
			got = count; /* a broken reply must not walk off the buffer */
		if (got == 0)
			break;
		int last = 0, found = 0;
		for (unsigned i = 0; i < got; i++) {
			struct sweep_extent e;
			convert(&fm->fm_extents[i], &e);
			if ((ret = extvec_add(out, &e)) < 0)
				goto out;
			last |= (e.flags & SWEEP_EXTENT_LAST) != 0;
			found |= e.physical != SWEEP_NO_PHYS;
		}
		if (last || (first_only && found))
			break;
		const struct fiemap_extent *le = &fm->fm_extents[got - 1];
		uint64_t next = le->fe_logical + le->fe_length;
		if (next <= start || next >= FIEMAP_MAX_OFFSET)
			break; /* no progress: stop instead of looping */
		start = next;
	}
out:
	free(fm);
	return ret;
}

/* Filesystem block size for FIBMAP: FIGETBSZ, else st_blksize. */
static int fibmap_block_size(int fd, const struct stat *st, unsigned *ret)
{
	int bsz = 0;
	if (do_ioctl(fd, FIGETBSZ, &bsz) < 0 || bsz <= 0)
		bsz = (int)st->st_blksize;
	if (bsz <= 0)
		return -EOPNOTSUPP;
	*ret = (unsigned)bsz;
	return 0;
}

/*
 * FIBMAP block by block, merging physically contiguous runs. With
 * first_only, start at the first data region (SEEK_DATA) and stop at the
 * first mapped block. Any failure means FIBMAP is not usable here.
 */
static int fibmap_collect(int fd, int first_only, struct extvec *out)
{
	struct stat st;
	unsigned bsz;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (fibmap_block_size(fd, &st, &bsz) < 0)
		return -EOPNOTSUPP;
	uint64_t size = (uint64_t)st.st_size;
	uint64_t nblocks = (size + bsz - 1) / bsz;
	uint64_t b = 0;
	if (first_only && size > 0) {
		off_t d = lseek(fd, 0, SEEK_DATA);
		if (d < 0 && errno == ENXIO)
			return 0; /* all hole: nothing to map, and no reason to ask block by block */
		if (d > 0)
			b = (uint64_t)d / bsz;
	}
	/* FIBMAP takes an int block number: larger files cannot be mapped past it. */
	if (nblocks > (uint64_t)INT32_MAX)
		nblocks = (uint64_t)INT32_MAX;
	struct sweep_extent cur = { 0 };
	int have = 0;
	for (; b < nblocks; b++) {
		int blk = (int)b;
		if (do_ioctl(fd, FIBMAP, &blk) < 0)
			return -errno;
		if (blk == 0) /* hole */
			continue;
		uint64_t phys = (uint64_t)(unsigned)blk * bsz;
		if (have && cur.logical + cur.length == b * bsz && cur.physical + cur.length == phys) {
			cur.length += bsz;
			continue;
		}
		if (have) {
			int r = extvec_add(out, &cur);
			if (r < 0)
				return r;
		}
		cur = (struct sweep_extent){ .logical = b * bsz, .physical = phys, .length = bsz };
		have = 1;
		if (first_only)
			break;
	}
	if (have) {
		/* The last block is only partly the file's: trim to the size. */
		if (cur.logical + cur.length > size && size > cur.logical)
			cur.length = size - cur.logical;
		cur.flags |= SWEEP_EXTENT_LAST;
		return extvec_add(out, &cur);
	}
	return 0;
}

static int collect(int fd, int first_only, struct extvec *x, enum sweep_extent_source *src)
{
	int r = fiemap_collect(fd, first_only, x);
	if (r == 0) {
		*src = SWEEP_EXTENT_FIEMAP;
		return 0;
	}
	if (r == -ENOMEM || r == -EBADF)
		return r;
	x->n = 0;
	r = fibmap_collect(fd, first_only, x);
	if (r == 0) {
		*src = SWEEP_EXTENT_FIBMAP;
		return 0;
	}
	if (r == -ENOMEM || r == -EBADF)
		return r;
	*src = SWEEP_EXTENT_NONE;
	return -EOPNOTSUPP;
}

SWEEP_EXPORT int sweep_extents_get(int fd, struct sweep_extent **ret_ext, size_t *ret_n,
				   enum sweep_extent_source *ret_source)
{
	if (!ret_ext || !ret_n)
		return -EINVAL;
	struct extvec x = { 0 };
	enum sweep_extent_source src;
	int r = collect(fd, 0, &x, &src);
	if (r < 0) {
		free(x.v);
		return r;
	}
	*ret_ext = x.v;
	*ret_n = x.n;
	if (ret_source)
		*ret_source = src;
	return 0;
}

SWEEP_EXPORT int sweep_extent_first(int fd, uint64_t *ret_phys)
{
	if (!ret_phys)
		return -EINVAL;
	struct extvec x = { 0 };
	enum sweep_extent_source src;
	int r = collect(fd, 1, &x, &src);
	if (r == 0) {
		r = -ENODATA;
		/* FIEMAP lists extents in logical order: the first located one is the lowest. */
		for (size_t i = 0; i < x.n; i++) {
			if (x.v[i].physical != SWEEP_NO_PHYS) {
				*ret_phys = x.v[i].physical;
				r = 0;
				break;
			}
		}
	}
	free(x.v);
	return r;
}

SWEEP_EXPORT int sweep_data_map(int fd, uint64_t size, struct sweep_extent **ret_map, size_t *ret_n)
{
	if (!ret_map || !ret_n)
		return -EINVAL;
	struct extvec x = { 0 };
	uint64_t off = 0;
	int r = 0;
	while (off < size) {
		off_t d = lseek(fd, (off_t)off, SEEK_DATA);
		if (d < 0) {
			if (errno == ENXIO)
				break; /* only a hole from here on */
			if (errno == EINVAL || errno == EOPNOTSUPP || errno == ENOTSUP) {
				/* No SEEK_DATA here: treat the rest as data. */
				struct sweep_extent e = { off, SWEEP_NO_PHYS, size - off, 0 };
				r = extvec_add(&x, &e);
				break;
			}
			r = -errno;
			break;
		}
		if ((uint64_t)d >= size)
			break;
		off_t h = lseek(fd, d, SEEK_HOLE);
		if (h < 0) {
			r = -errno;
			break;
		}
		uint64_t end = (uint64_t)h < size ? (uint64_t)h : size;
		if (end <= (uint64_t)d)
			end = size; /* a racing writer; do not loop */
		struct sweep_extent e = { (uint64_t)d, SWEEP_NO_PHYS, end - (uint64_t)d, 0 };
		if ((r = extvec_add(&x, &e)) < 0)
			break;
		off = end;
	}
	if (r < 0) {
		free(x.v);
		return r;
	}
	if (x.n)
		x.v[x.n - 1].flags |= SWEEP_EXTENT_LAST;
	*ret_map = x.v;
	*ret_n = x.n;
	return 0;
}

/*
 * cachestat(2), Linux 6.5. glibc before 2.39 has neither the number nor the
 * structs. New system calls have had one number on every architecture since
 * 5.1 (424 on), except where the table is offset (alpha, mips, x32).
 */
#if defined(SYS_cachestat)
#define NR_CACHESTAT SYS_cachestat
#elif (defined(__x86_64__) && !defined(__ILP32__)) || defined(__i386__) || defined(__aarch64__) || \
	defined(__arm__) || defined(__riscv) || defined(__powerpc__) || defined(__s390__) || defined(__loongarch__)
#define NR_CACHESTAT 451
#endif

struct cachestat_range {
	uint64_t off, len; /* len 0: to the end of the file */
};

struct cachestat_reply {
	uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

static int real_cachestat(int fd, uint64_t off, uint64_t len, uint64_t *ret_pages)
{
#ifdef NR_CACHESTAT
	struct cachestat_range r = { off, len };
	struct cachestat_reply cs;

	if (syscall(NR_CACHESTAT, fd, &r, &cs, 0) < 0)
		return -errno;
	*ret_pages = cs.nr_cache;
	return 0;
#else
	(void)fd, (void)off, (void)len, (void)ret_pages;
	return -ENOSYS;
#endif
}

static sweep__cachestat_fn do_cachestat = real_cachestat;

sweep__cachestat_fn sweep__extent_set_cachestat(sweep__cachestat_fn fn)
{
	sweep__cachestat_fn old = do_cachestat;
	do_cachestat = fn ? fn : real_cachestat;
	return old;
}

#define MINCORE_WINDOW (16u << 20) /* bytes mapped and looked at per mincore */

/*
 * mincore() on a read-only shared mapping of [off, end) (off page-aligned),
 * where cachestat is missing. Only for the file's owner: for anyone else
 * mincore (5.2 on) reports every page resident, to close a side channel,
 * which would make a cold file look cached.
 */
static int mincore_cached(int fd, uint64_t off, uint64_t end, size_t ps)
{
	unsigned char vec[MINCORE_WINDOW / 4096];
	struct stat st;

	if (ps < 4096 || fstat(fd, &st) < 0 || st.st_uid != geteuid())
		return -EPERM;
	for (; off < end; off += MINCORE_WINDOW) {
		size_t len = end - off < MINCORE_WINDOW ? (size_t)(end - off) : MINCORE_WINDOW;
		size_t pages = (len + ps - 1) / ps;
		void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, (off_t)off);
		int r;

		if (m == MAP_FAILED)
			return -errno;
		r = mincore(m, len, vec) < 0 ? -errno : 0;
		munmap(m, len);
		if (r < 0)
			return r;
		for (size_t i = 0; i < pages; i++)
			if (!(vec[i] & 1))
				return 0;
	}
	return 1;
}

/* Whether every page of [off, off + len) is cached: 1, 0 or -errno. */
static int range_cached(int fd, uint64_t off, uint64_t len, size_t ps)
{
	uint64_t lo = off / ps * ps, hi = (off + len + ps - 1) / ps * ps, cached;
	int r = do_cachestat(fd, lo, hi - lo, &cached);

	if (r == 0)
		return cached >= (hi - lo) / ps;
	/* Refused (EPERM: not the owner and not writable) says nothing; only a kernel without it falls back. */
	return r == -ENOSYS ? mincore_cached(fd, lo, hi, ps) : r;
}

int sweep__data_cached(int fd, uint64_t size)
{
	long ps = sysconf(_SC_PAGESIZE);
	struct sweep_extent *map;
	struct stat st;
	size_t n;
	int r;

	if (size == 0)
		return 1;
	if (ps <= 0)
		return -EINVAL;
	r = range_cached(fd, 0, size, (size_t)ps);
	if (r != 0)
		return r;
	/*
	 * Pages missing. A sparse file's holes are never read (SWEEP_READ_SPARSE
	 * skips them), so they stay uncached however warm the data is: where
	 * fewer blocks are allocated than the size needs, only the data regions
	 * count. A dense file missing pages is not cached, at one fstat more.
	 */
	if (fstat(fd, &st) < 0)
		return -errno;
	if ((uint64_t)st.st_blocks * 512 >= size || sweep_data_map(fd, size, &map, &n) < 0)
		return 0;
	r = 1;
	for (size_t i = 0; i < n && r == 1; i++)
		r = range_cached(fd, map[i].logical, map[i].length, (size_t)ps);
	free(map);
	return r;
}
