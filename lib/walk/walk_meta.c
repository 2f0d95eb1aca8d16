/* SPDX-License-Identifier: MIT */
/*
 * The walk's use of the metadata engine (lib/metascan/metascan.h): where the caller
 * may read the block device under an ext4 or xfs filesystem, on either
 * device class (measured on the 1M-file ext4 tree: the walk of the SSD class,
 * which stats every file, took 0.79x the time with it; the HDD class's plan
 * 0.1x; bench/results/2026-11-23-1M-engine/README.md),
 *
 *  - directory prefetch: before the walk reads the first directory of a new
 *    generation (the directories queued since the last prefetch: a level of
 *    the tree, in practice), the blocks of all of them are started in one
 *    ascending sweep of large requests (sweep__metascan_ranges, then
 *    sweep__metascan_prefetch, which is POSIX_FADV_WILLNEED on the device).
 *    ext4 finds them in the block device's page cache, so each getdents64
 *    stops waiting for its own reads. xfs does not read through that cache:
 *    no prefetch there.
 *
 *  - inode hints: before a directory's entries are stat'ed, the hints of a
 *    slice of them (ascending inode numbers, as C-SCAN mode sorts them) are
 *    read in one sweep over the inode tables. On ext4 that read leaves the
 *    inode-table blocks in the cache the following statx calls use, so they
 *    pay the VFS cost without an I/O wait. The hints also give each regular
 *    file's first physical byte, which the plan takes instead of open +
 *    FIEMAP + close, and each subdirectory's first block (its C-SCAN key).
 *    Not for files whose tables a sweep has already cached (load_hints):
 *    the plan reads those itself, a batch at a time.
 *
 * Nothing raw is trusted for output. A hint is offered to the plan only when
 * it agrees with what the walk knows from the filesystem (inode number from
 * getdents, and type, size and device from statx when the entry was
 * stat'ed), and the plan uses it only as a sort key. What a tool outputs
 * comes from the fstat of the file the reader opened beneath its root and
 * checked by identity. A device older than the page cache (a journal not yet
 * checkpointed, xfs's lazy inode writeback) only costs order: a stale or
 * torn inode fails its checksum or its agreement check and goes the FIEMAP
 * way; a stale but plausible one puts a file in a worse place in the sweep.
 *
 * Each device's profile says what of it runs there (sweep_profile.metascan,
 * decided in lib/device/devclass.c: hints on both classes, the inode sweep
 * on the HDD class; SWEEP_METASCAN=off, hdd or on changes it per device);
 * SWEEP_WALK_NO_METASCAN turns it all off for one walk. xfs's inodes are
 * not read raw unless the profile or SWEEP_WALK_PLAN_ONLY says so
 * (engine_for says why). On a disk, a walk of a whole filesystem first
 * reads every inode in one sweep, and so does a walk of a subtree once it
 * has visited enough directories to pay for it (inode_sweep).
 */
#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/statfs.h>

#include "walk_impl.h"

/* Inodes per hint sweep within one directory (48 bytes each). */
#define HINT_SLICE 4096u
/* Filesystems (devices) the walk keeps an engine for. */
#define META_DEVS 4
/* Directories whose blocks one prefetch covers, and the bytes it may start. */
#define PREFETCH_DIRS 65536u
#define PREFETCH_BYTES (256ull << 20)

struct meta_dev {
	uint64_t dev;
	const struct sweep__ms_fs *fmt; /* the engine's format for its filesystem, NULL: none reads it */
	struct sweep__metascan *m; /* NULL: not usable on this device */
	bool used;
	bool prefetch; /* the engine's prefetch reaches the filesystem (ext4) */
	bool swept; /* the inode sweep of a whole filesystem was tried, or is not for this walk (inode_sweep) */
	bool rent_known; /* rent is set (inode_sweep) */
	uint64_t rent; /* directories a subtree walk visits before the sweep pays (inode_sweep) */
	uint64_t dirs_seen;
	/* After a cold inode sweep of a format with its own cache (xfs): its directories that have blocks (dirs_heard) */
	uint64_t *dirs;
	size_t ndirs;
	bool dirs_loaded; /* the walk keys this device's directories by inode and opens the next ones ahead */
	struct sweep__dirs_ahead *dirs_ahead; /* their blocks being read (dirs_heard), ended with the walk */
	/* ext4, a subtree: the table runs, each swept on its own once the walk has paid for it (runs_visit) */
	struct run_rent *runs;
	size_t nruns;
};

struct run_rent {
	struct sweep__ms_table_run run;
	uint64_t visits, rent;
	bool swept;
	/* Once swept: the blocks of the run's directories, prefetched when the visits reach dirs_rent too. */
	struct sweep__dev_range *dirs;
	size_t ndirs;
	uint64_t dirs_rent;
};

struct walk_meta {
	struct meta_dev devs[META_DEVS];
	unsigned ndevs;
	/* Directories queued since the last prefetch (a reference each). */
	struct dnode **pend;
	size_t npend, cap_pend;
	struct sweep__walk_meta_stats stats;
};

static struct sweep__walk_meta_stats totals;

void sweep__walk_meta_totals(struct sweep__walk_meta_stats *ret)
{
	*ret = totals;
}

void sweep__walk_meta_new(struct walk *w)
{
	/* Whether each device is read raw is its profile's (engine_for); the caller may turn it all off. */
	w->meta = (w->flags & SWEEP_WALK_NO_METASCAN) ? NULL : calloc(1, sizeof(*w->meta));
}

void sweep__walk_meta_free(struct walk *w)
{
	struct walk_meta *mt = w->meta;

	if (!mt)
		return;
	for (size_t i = 0; i < mt->npend; i++)
		sweep__walk_dnode_unref(mt->pend[i]);
	free(mt->pend);
	for (unsigned i = 0; i < mt->ndevs; i++) {
		sweep__metascan_free(mt->devs[i].m);
		for (size_t k = 0; k < mt->devs[i].nruns; k++)
			free(mt->devs[i].runs[k].dirs);
		free(mt->devs[i].runs);
		free(mt->devs[i].dirs);
		if (mt->devs[i].dirs_ahead)
			mt->devs[i].fmt->dirs_read_ahead_end(mt->devs[i].dirs_ahead, true);
	}
	totals.dirs_prefetched += mt->stats.dirs_prefetched;
	totals.prefetch_bytes += mt->stats.prefetch_bytes;
	totals.prefetch_requests += mt->stats.prefetch_requests;
	totals.hints_asked += mt->stats.hints_asked;
	totals.hints_valid += mt->stats.hints_valid;
	totals.hints_offered += mt->stats.hints_offered;
	totals.dir_keys += mt->stats.dir_keys;
	totals.bulkstat_inodes += mt->stats.bulkstat_inodes;
	totals.table_bytes += mt->stats.table_bytes;
	free(mt);
	w->meta = NULL;
}

static struct meta_dev *dev_find(struct walk_meta *mt, uint64_t dev)
{
	for (unsigned i = 0; i < mt->ndevs; i++)
		if (mt->devs[i].dev == dev)
			return &mt->devs[i];
	return NULL;
}

/* The engine for directory d (open as fd), opened on first use; NULL where it cannot or should not run. */
static struct sweep__metascan *engine_for(struct walk *w, const struct dnode *d, int fd, struct meta_dev **ret_md)
{
	struct walk_meta *mt = w->meta;
	struct meta_dev *md;

	if (!mt)
		return NULL;
	md = dev_find(mt, d->dev);
	if (!md) {
		if (mt->ndevs == META_DEVS)
			return NULL;
		md = &mt->devs[mt->ndevs++];
		*md = (struct meta_dev){ .dev = d->dev, .fmt = d->fs ? sweep__metascan_format(d->fs->fs_magic) : NULL };
		unsigned meta = d->fs ? d->fs->profile.metascan : 0;
		bool want = md->fmt && (meta & SWEEP_PROFILE_META_HINTS);
		/*
		 * Not on a format with a cache of its own (xfs) unless asked for:
		 * every inode the engine reads is read again by the filesystem
		 * (and the engine's reads bridge the holes of sparse inode
		 * chunks). Aged 115k-file xfs image, hdd7200 model of the block
		 * trace: sweep-du 31.2 s with the engine against 12.8 s without
		 * (GNU du 25.1 s), sweep-plan --read 1.91x the bound against
		 * 1.36x. There the inode sweep is the format's own (bulkstat;
		 * inode_sweep).
		 */
		if (md->fmt && md->fmt->own_cache && !(meta & SWEEP_PROFILE_META_ALL) && !(w->flags & SWEEP_WALK_PLAN_ONLY))
			want = false;
		/* Directory blocks prefetched into the device's page cache reach only a format that reads through it. */
		if (want && fd >= 0 && sweep__metascan_open(fd, 0, &md->m) == 0)
			md->prefetch = !md->fmt->own_cache;
	}
	if (ret_md)
		*ret_md = md;
	return md->m;
}

/* ---- directory prefetch ---- */

void sweep__walk_meta_queued(struct walk *w, struct dnode *c)
{
	struct walk_meta *mt = w->meta;
	struct meta_dev *md;

	if (!mt || !(md = dev_find(mt, c->dev)) || !md->prefetch)
		return;
	if (sweep__grow(&mt->pend, &mt->cap_pend, mt->npend + 1, sizeof(*mt->pend), 256) < 0)
		return; /* no prefetch for it: only slower */
	c->refs++;
	mt->pend[mt->npend++] = c;
}

static int cmp_dnode_ino(const void *a, const void *b)
{
	const struct dnode *x = *(struct dnode *const *)a, *y = *(struct dnode *const *)b;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* Whether the sweep told of directory ino as one that has blocks (dirs_heard). */
static bool dir_heard(const struct meta_dev *md, uint64_t ino)
{
	size_t lo = 0, hi = md->ndirs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (md->dirs[mid] < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < md->ndirs && md->dirs[lo] == ino;
}

/*
 * xfs, after a cold inode sweep (dirs_heard): d is about to be
 * read; open the next OPEN_AHEAD directories of the queue, the ones the
 * walk reads next in the order it reads them, that have blocks and were
 * not opened yet. xfs starts reading a directory's first block whenever it
 * is opened (xfs_dir_open), and that is the only way to put a directory
 * block into its own buffer cache from here: so each is opened and let go
 * (or kept for its visit, a few at a time), and its getdents finds the
 * block cached. A walk reading one directory at a time would otherwise
 * wait for each block alone, at a rotation's latency each; this keeps up
 * to OPEN_AHEAD of them in flight, in one direction.
 */
#define OPEN_AHEAD 32u

void sweep__walk_meta_open_ahead(struct walk *w, struct dnode *d)
{
	struct meta_dev *md = w->meta && w->cscan ? dev_find(w->meta, d->dev) : NULL;
	void *next[OPEN_AHEAD];

	if (!md || !md->dirs_loaded)
		return;
	d->prefetched = true; /* opened for its visit now */
	size_t n = sweep__cscan_peek(w->q, next, OPEN_AHEAD);
	for (size_t i = 0; i < n; i++) {
		struct dnode *c = next[i];
		if (c->prefetched || c->dev != d->dev || !dir_heard(md, c->ino))
			continue;
		c->prefetched = true;
		if (sweep__walk_dnode_open_ahead(w, c) == 0)
			w->meta->stats.dirs_prefetched++;
	}
}

/*
 * d is about to be read. When it was queued after the last prefetch, start
 * the blocks of every directory queued since (up to PREFETCH_DIRS of them and
 * PREFETCH_BYTES of blocks, in inode order; the rest wait for the next one).
 */
void sweep__walk_meta_before_read(struct walk *w, struct dnode *d)
{
	struct walk_meta *mt = w->meta;

	if (!mt || d->prefetched || mt->npend == 0)
		return;
	qsort(mt->pend, mt->npend, sizeof(*mt->pend), cmp_dnode_ino);
	uint64_t *inos = malloc(HINT_SLICE * sizeof(*inos));
	size_t done = 0;
	uint64_t bytes = 0;
	while (inos && done < mt->npend && done < PREFETCH_DIRS && bytes < PREFETCH_BYTES) {
		/* One slice: directories of one device, ascending. */
		struct meta_dev *md = dev_find(mt, mt->pend[done]->dev);
		size_t n = 0, end = done;
		while (end < mt->npend && n < HINT_SLICE && mt->pend[end]->dev == mt->pend[done]->dev)
			inos[n++] = mt->pend[end++]->ino;
		struct sweep__dev_range *r = NULL;
		size_t nr = 0;
		if (md && md->m && sweep__metascan_ranges(md->m, inos, n, &r, &nr) == 0) {
			int k = sweep__metascan_prefetch(md->m, r, nr);
			for (size_t i = 0; i < nr; i++)
				bytes += r[i].len;
			mt->stats.prefetch_requests += k > 0 ? (uint64_t)k : 0;
			mt->stats.dirs_prefetched += n;
		}
		free(r);
		for (size_t i = done; i < end; i++)
			mt->pend[i]->prefetched = true;
		done = end;
	}
	free(inos);
	mt->stats.prefetch_bytes += bytes;
	if (done == 0)
		done = mt->npend; /* out of memory: give up on these */
	for (size_t i = 0; i < done; i++)
		sweep__walk_dnode_unref(mt->pend[i]);
	memmove(mt->pend, mt->pend + done, (mt->npend - done) * sizeof(*mt->pend));
	mt->npend -= done;
	d->prefetched = true;
}

/* ---- a whole filesystem: every inode in one sweep ---- */

/*
 * Whether fd is the root directory of a mount of a whole filesystem. A bind
 * mount of one directory is a mount root too, but a sweep of every inode
 * there would read the whole filesystem for a part of it: it is walked as
 * that directory would be through any other path. Where the mount table
 * cannot say, a mount root is taken for the whole.
 */
static bool mount_root(int fd)
{
	struct statx stx;
	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &stx) != 0 ||
	    !(stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) || !(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
		return false;
	return !(stx.stx_mask & STATX_MNT_ID) || sweep__mount_whole(stx.stx_mnt_id) != 0;
}

/*
 * On a disk, every inode in use is read in one ascending sweep of large
 * requests, as e2fsck's first pass does, so that the walk's stats (and the
 * reader's opens) find them cached instead of reading inode blocks one by
 * one between directory blocks:
 *  - ext4: the engine reads the initialised part of every inode table into
 *    the block device's page cache, ext4's own metadata cache, then every
 *    directory's blocks (as much of them as one prefetch may start);
 *  - xfs (CAP_SYS_ADMIN): bulkstat of every inode, which reads the inode
 *    clusters in inode order (disk order) into xfs's buffer cache, and the
 *    blocks of the directories it meets, read by handle right behind it
 *    (dirs_heard); the answers are thrown away, and the walk's stats come
 *    from a bulkstat table made from the cached clusters afterwards.
 * What callers see is unchanged. Aged 115k-file images, hdd7200 model of the
 * block trace: sweep-du on ext4 2.2 -> 1.3 s (GNU du 10.5 s), on xfs 12.8 ->
 * 3.6 s (GNU du 25.1 s); sweep-plan --read 1.26x -> 1.25x the sequential
 * bound on both.
 *
 * A walk of a whole filesystem sweeps before its first directory. A subtree
 * may hold a small part of the filesystem's inodes, so there the sweep is
 * rented, not bought: the walk first visits as many directories as the
 * sweep's bytes would take to read at SWEEP_PER_DIR per directory (each
 * directory visited without it costs about two seeks: its blocks, then its
 * inodes), then sweeps. A small subtree never pays for the sweep; a large
 * one pays for it at most twice over.
 *
 * On ext4 the rent is per run of tables (a flex group's, in practice;
 * sweep__metascan_table_runs): a subtree's inodes sit in the few flex groups
 * its directories were created in, and the other runs are never read. A
 * run is swept once as many directories with entries in it have been
 * visited as its bytes cost (runs_visit); the blocks of the run's
 * directories (found in the tables just read) are prefetched once the
 * visits have paid for their bytes too, since some of them may be others'.
 * Fragmented 115k-file ext4 image, a subtree of the root
 * (bench/results/2026-11-25-frag-reader): the walk's part of sweep-plan
 * --read went from 3,500 seeks to 80 with the whole-filesystem sweep, in the
 * model 10.7 -> 1.6 s; by runs (and with the plan reading the files' tree
 * blocks, plan_deep.c), sweep-sync's no-change re-run of it read 48 MB in 27
 * seeks instead of 115 MB in 200, 0.65 s of the model instead of 1.99 s
 * (rsync -a: 48 MB in 2,174 seeks, 2.61 s).
 */
#define SWEEP_PER_DIR (2u << 20) /* about two 8 ms seeks at 120 MB/s */
#define SWEEP_MIN_RENT 16u       /* a subtree of fewer directories never sweeps a whole xfs, however small */
#define RUN_MIN_RENT 4u          /* nor an ext4 run with fewer directories in it */

/* xfs: the bytes bulkstat of the whole filesystem reads, or -1 where unknown. */
static int64_t sweep_bytes(const struct frame *f)
{
	struct statfs sf;
	/* bulkstat reads inode clusters: used inodes at xfs's default 512 bytes each */
	if (fstatfs(f->fd, &sf) < 0 || sf.f_files < sf.f_ffree)
		return -1;
	return (int64_t)((uint64_t)(sf.f_files - sf.f_ffree) * 512u);
}

/* ext4: read the inode tables of inodes [lo, hi) (all: 0, UINT64_MAX) and wait; bytes read, or -errno. */
static long read_tables(struct walk_meta *mt, struct meta_dev *md, uint64_t lo, uint64_t hi)
{
	long n = sweep__metascan_read_tables(md->m, lo, hi);
	if (n > 0)
		mt->stats.table_bytes += (uint64_t)n;
	return n;
}

/* The directory blocks of those tables' inodes (from the cache, after read_tables), at most PREFETCH_BYTES. */
static size_t dir_blocks(struct meta_dev *md, uint64_t lo, uint64_t hi, struct sweep__dev_range **ret, uint64_t *ret_bytes)
{
	size_t nr = 0, k = 0;
	uint64_t bytes = 0;
	*ret = NULL;
	if (!md->prefetch || sweep__metascan_dir_blocks(md->m, lo, hi, ret, &nr) < 0)
		return 0;
	for (; k < nr && bytes + (*ret)[k].len <= PREFETCH_BYTES; k++)
		bytes += (*ret)[k].len;
	*ret_bytes = bytes;
	return k;
}

/* Start r[0..n) without waiting. */
static void prefetch_dirs(struct walk_meta *mt, struct meta_dev *md, const struct sweep__dev_range *r, size_t n)
{
	int q = sweep__metascan_prefetch(md->m, r, n);
	mt->stats.prefetch_requests += q > 0 ? (uint64_t)q : 0;
	for (size_t i = 0; i < n; i++)
		mt->stats.prefetch_bytes += r[i].len;
}

/* ext4, a subtree: the table runs to rent one by one; none (no sweep) where they cannot be had. */
static void runs_load(struct meta_dev *md)
{
	struct sweep__ms_table_run *r = NULL;
	size_t n = 0;
	if (sweep__metascan_table_runs(md->m, &r, &n) < 0 || n == 0 ||
	    !(md->runs = calloc(n, sizeof(*md->runs)))) {
		free(r);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t rent = r[i].bytes / SWEEP_PER_DIR;
		md->runs[i] = (struct run_rent){ .run = r[i], .rent = rent < RUN_MIN_RENT ? RUN_MIN_RENT : rent };
	}
	md->nruns = n;
	free(r);
}

/* A directory's entries inos[0..n) (ascending) are about to be stat'ed: a visit to each run they lie in. */
static void runs_visit(struct walk_meta *mt, struct meta_dev *md, const uint64_t *inos, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n && k < md->nruns;) {
		while (k < md->nruns && md->runs[k].run.ino_hi <= inos[i])
			k++;
		if (k == md->nruns)
			break;
		struct run_rent *rr = &md->runs[k];
		if (inos[i] < rr->run.ino_lo) {
			i++; /* in no table's used part: newer than the descriptors we read */
			continue;
		}
		rr->visits++;
		if (!rr->swept && rr->visits >= rr->rent) {
			rr->swept = true;
			uint64_t bytes = 0;
			if (read_tables(mt, md, rr->run.ino_lo, rr->run.ino_hi) > 0)
				rr->ndirs = dir_blocks(md, rr->run.ino_lo, rr->run.ino_hi, &rr->dirs, &bytes);
			rr->dirs_rent = bytes / SWEEP_PER_DIR;
		}
		if (rr->dirs && rr->visits >= rr->dirs_rent) {
			prefetch_dirs(mt, md, rr->dirs, rr->ndirs);
			free(rr->dirs);
			rr->dirs = NULL;
		}
		while (i < n && inos[i] < rr->run.ino_hi)
			i++;
		k++;
	}
}

/*
 * After a cold inode sweep of xfs: the directories that have blocks (not
 * short-form), as the sweep meets them, are read at once by the format's
 * reader (dirs_read_ahead: opened by handle, each open reads the first
 * block ahead, then listed), up to READ_DIRS_MAX of them, while the sweep
 * and then the walk go on. The walk alone reads them as it discovers the
 * directories, a parent before its children, a few at a time
 * (sweep__walk_meta_open_ahead): on the aged linux-lite xfs the emulated
 * drive had 0-7 of them in flight for most of that pass
 * (bench/results/2026-11-26-emudisk-xfs-visit). The reader keeps dozens
 * queued, and the drive orders them: in inode order they take the time
 * they took in the order of their first blocks (read raw from each
 * directory's inode after its cluster: 0.4 s more of inode reads on that
 * image; bench/results/2026-11-27-du-xfs), and handed over as the sweep
 * goes, they are read while the head is near their inodes. Only the
 * filesystem's own cache keeps them, so they are read through the
 * filesystem; where it cannot (no capability to open by handle) the walk
 * opens ahead as before. The walk keys the directories by inode (a
 * short-form one stays next to its parent).
 */
#define READ_DIRS_MAX 16384u
/* Threads opening them: a share of the open-file limit (none under a low one), so the walk's own opens never go short. */
#define READ_DIRS_THREADS sweep__nofile_share(16, 64)

struct dirs_heard {
	struct meta_dev *md;
	size_t cap, ahead;
	bool off; /* out of memory: no keys */
};

static void dirs_heard(void *arg, const uint64_t *inos, const uint32_t *gens, size_t n)
{
	struct dirs_heard *k = arg;
	struct meta_dev *md = k->md;

	/* (the sweep tells only what it read from the disk: warm, nothing to order) */
	if (k->off)
		return;
	if (sweep__grow(&md->dirs, &k->cap, md->ndirs + n, sizeof(*md->dirs), 256) < 0) {
		k->off = true;
		return;
	}
	memcpy(md->dirs + md->ndirs, inos, n * sizeof(*inos));
	md->ndirs += n;
	if (md->dirs_ahead && k->ahead < READ_DIRS_MAX) {
		size_t m = n < READ_DIRS_MAX - k->ahead ? n : READ_DIRS_MAX - k->ahead;
		/* a hint: the walk reads what it did not read (refused: no handle opens here, hand it no more) */
		k->ahead = md->fmt->dirs_read_ahead_add(md->dirs_ahead, inos, gens, m) == 0 ? k->ahead + m : READ_DIRS_MAX;
	}
}

static int cmp_ino(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void inode_sweep(struct walk *w, const struct frame *f)
{
	struct walk_meta *mt = w->meta;
	const struct dnode *d = f->dir;
	struct meta_dev *md = dev_find(mt, d->dev);

	if (!md || md->swept || !d->fs || !(d->fs->profile.metascan & SWEEP_PROFILE_META_SWEEP))
		return;
	if (!md->m && !(md->fmt && md->fmt->cache_sweep)) {
		md->swept = true; /* nothing to sweep with */
		return;
	}
	if (!md->rent_known) {
		md->rent_known = true;
		if (!mount_root(f->fd)) {
			if (md->m) {
				runs_load(md); /* by runs, as the walk's hints reach them */
				md->swept = true;
				return;
			}
			int64_t b = sweep_bytes(f);
			md->rent = b < 0 ? UINT64_MAX : (uint64_t)b / SWEEP_PER_DIR;
			if (md->rent < SWEEP_MIN_RENT)
				md->rent = SWEEP_MIN_RENT;
		}
	}
	if (md->dirs_seen++ < md->rent)
		return;
	md->swept = true;
	if (md->m) {
		struct sweep__dev_range *r = NULL;
		uint64_t bytes;
		if (read_tables(mt, md, 0, UINT64_MAX) > 0)
			prefetch_dirs(mt, md, r, dir_blocks(md, 0, UINT64_MAX, &r, &bytes));
		free(r);
	} else {
		struct dirs_heard k = { .md = md };
		bool keyed = sweep__walk_keys_by_block(w, f->dir->fs);
		if (keyed && md->fmt->dirs_read_ahead)
			(void)md->fmt->dirs_read_ahead(f->fd, READ_DIRS_THREADS, &md->dirs_ahead);
		long n = md->fmt->cache_sweep(f->fd, keyed ? dirs_heard : NULL, &k);
		if (n > 0)
			mt->stats.bulkstat_inodes += (uint64_t)n;
		/* The sweep's threads tell their batches as they end them: by inode, as dir_heard looks them up. */
		if (md->ndirs)
			qsort(md->dirs, md->ndirs, sizeof(*md->dirs), cmp_ino);
		/*
		 * Every cluster is cached now: a bulkstat table costs CPU only, on its
		 * own threads, and the walk's one thread stops stat'ing 58k cached
		 * inodes (aged linux-lite xfs on the emulated disk, with the sweep on
		 * 4 threads: 0.86x the wall time; alone it changed nothing, the disk
		 * being slower than the stats then).
		 */
		if (n > 0)
			sweep__walk_table_start(w, d, f->fd, true);
		/* none heard (warm, or out of memory): inode keys, not every directory at its parent's */
		md->dirs_loaded = n > 0 && !k.off && md->ndirs > 0;
		if (!md->dirs_loaded) {
			free(md->dirs);
			md->dirs = NULL;
			md->ndirs = 0;
		}
	}
}

/* ---- inode hints ---- */

void sweep__walk_meta_frame(struct walk *w, struct frame *f)
{
	f->ms = NULL;
	f->hint_at = f->hint_n = 0;
	if (!w->meta || !w->cscan)
		return; /* depth-first listings are not in inode order */
	f->ms = engine_for(w, f->dir, f->fd, NULL);
	inode_sweep(w, f);
}

/* Hints for the listing's entries [i, i + HINT_SLICE), in one sweep (the listing is in inode order). */
static void load_hints(struct walk *w, struct frame *f, size_t i)
{
	struct listing *ls = &f->ls;
	size_t n = ls->n - i < HINT_SLICE ? ls->n - i : HINT_SLICE;

	f->hint_at = i;
	f->hint_n = 0;
	if (!f->hints) {
		f->hints = malloc(HINT_SLICE * sizeof(*f->hints));
		f->hint_inos = malloc(HINT_SLICE * sizeof(*f->hint_inos));
		if (!f->hints || !f->hint_inos) {
			f->ms = NULL; /* no hints: only slower */
			return;
		}
	}
	for (size_t k = 0; k < n; k++) {
		f->hint_inos[k] = ls->v[i + k].ino;
		if (k && f->hint_inos[k] < f->hint_inos[k - 1]) {
			f->ms = NULL; /* not in inode order (cannot happen in C-SCAN mode) */
			return;
		}
	}
	struct meta_dev *md = dev_find(w->meta, f->dir->dev);
	if (md && md->runs)
		runs_visit(w->meta, md, f->hint_inos, n);
	/*
	 * Not the inodes of files whose tables are in the cache (a swept run,
	 * or the whole filesystem): the plan reads those at sort time in one
	 * dense sweep of the batch (plan_deep.c), or one by one when it needs
	 * them sooner (sweep__walk_entry_hint_now). Read here, a directory at
	 * a time, they cost a pread each wherever a directory's inodes are
	 * spread: aged 1M-file ext4 tree, 600,000 reads of 256 bytes.
	 * Directories are read: the walk keys them by their first block.
	 */
	size_t m = 0;
	for (size_t k = 0; k < n; k++) {
		uint8_t type = ls->v[i + k].type;
		if (type == DT_DIR || type == DT_UNKNOWN || !sweep__metascan_resident(f->ms, f->hint_inos[k]))
			f->hint_inos[m++] = f->hint_inos[k];
	}
	/* Not the files' extent-tree blocks: the plan reads the few it needs, a batch at a time (its DEEP entries). */
	int r = sweep__metascan_inodes_shallow(f->ms, f->hint_inos, m, f->hints);
	if (r < 0)
		return;
	w->meta->stats.hints_asked += m;
	/* Back to one hint per entry, from the last: a hint only moves to a later place. */
	for (size_t k = n; k-- > 0;) {
		uint64_t ino = ls->v[i + k].ino;
		if (m && f->hints[m - 1].ino == ino && f->hint_inos[m - 1] == ino) {
			f->hints[k] = f->hints[--m];
		} else {
			sweep__ms_hint_init(&f->hints[k], ino);
			f->hints[k].why = SWEEP__HINT_NOT_READ;
		}
	}
	f->hint_n = n;
	w->meta->stats.hints_valid += (uint64_t)r;
}

/*
 * Before entries [i, i + n) are stat'ed: their hints, read in a sweep that
 * also brings their inode-table blocks into the cache statx will use.
 */
void sweep__walk_meta_prepare(struct walk *w, struct frame *f, size_t i, size_t n)
{
	if (!f->ms || (i >= f->hint_at && i + n <= f->hint_at + f->hint_n))
		return;
	load_hints(w, f, i);
}

/* The listing entry i's hint when the sweep read it and found it valid, else NULL. */
const struct sweep__inode_hint *sweep__walk_meta_hint(const struct frame *f, size_t i)
{
	if (!f->ms || i < f->hint_at || i >= f->hint_at + f->hint_n)
		return NULL;
	const struct sweep__inode_hint *h = &f->hints[i - f->hint_at];
	if (!(h->flags & SWEEP__HINT_VALID) || h->ino != f->ls.v[i].ino)
		return NULL;
	return h;
}

/*
 * No located data and not inline: an empty file, or, on xfs, an inode
 * written home before its data was allocated (xfs writes inodes back
 * lazily; seen in fs-physical: 325 of 2000 files planned without a
 * location right after sync). Believed on ext4, whose metadata the device's
 * page cache holds current (holes-only and unwritten-only files have no
 * location either); elsewhere only what the filesystem says settles it.
 */
static bool unplaced_elsewhere(const struct frame *f, const struct sweep__inode_hint *h)
{
	return !(h->flags & SWEEP__HINT_DEEP) && (h->flags & SWEEP__HINT_PHYS) && h->phys == SWEEP_NO_PHYS &&
	       !(h->flags & SWEEP__HINT_INLINE) && sweep__metascan_format_of(f->ms)->own_cache;
}

bool sweep__walk_meta_sizes(const struct frame *f, size_t i)
{
	const struct sweep__inode_hint *h = sweep__walk_meta_hint(f, i);

	return h && S_ISREG(h->mode) && f->ls.v[i].type == DT_REG && !unplaced_elsewhere(f, h);
}

bool sweep__walk_meta_hint_files(struct walk *w, const struct dnode *d, int fd)
{
	return (w->flags & SWEEP_WALK_HINT_FILES) && w->meta && w->cscan && engine_for(w, d, fd, NULL);
}

/*
 * A subdirectory's C-SCAN key from its hint (order PHYSICAL): its first
 * block, as FIEMAP would say, without opening it. 0 with *ret_key, or -1.
 */
int sweep__walk_meta_dir_key(struct walk *w, const struct frame *f, size_t i, const struct stat *st, uint64_t *ret_key)
{
	const struct sweep__inode_hint *h = sweep__walk_meta_hint(f, i);

	if (!h || !(h->flags & SWEEP__HINT_PHYS) || h->phys == SWEEP_NO_PHYS || !S_ISDIR(h->mode) ||
	    (uint64_t)st->st_ino != h->ino || (uint64_t)st->st_dev != f->dir->dev)
		return -1;
	*ret_key = h->phys;
	w->meta->stats.dir_keys++;
	return 0;
}

/*
 * A subdirectory's C-SCAN key after a cold inode sweep (dirs_heard): 0
 * with *ret_key (its inode number, the order its blocks are being read
 * in); -ENODATA when the sweep did not tell of it (short-form: it stays
 * next to its parent); -1 when there was no such sweep on its device.
 */
int sweep__walk_meta_dir_block(struct walk *w, uint64_t dev, uint64_t ino, uint64_t *ret_key)
{
	struct meta_dev *md = w->meta ? dev_find(w->meta, dev) : NULL;

	if (!md || !md->dirs_loaded)
		return -1;
	if (!dir_heard(md, ino))
		return -ENODATA;
	*ret_key = ino;
	w->meta->stats.dir_keys++;
	return 0;
}

/*
 * What the plan may take from entry i's hint, checked against what the walk
 * knows from the filesystem: the inode number (getdents), and when the
 * entry was stat'ed, its device, type and size. Fills *eh; 0 when a hint
 * is offered.
 */
int sweep__walk_meta_offer(struct walk *w, const struct frame *f, size_t i, bool stated, const struct stat *st,
		    struct sweep_entry_hint *eh)
{
	const struct sweep__inode_hint *h = sweep__walk_meta_hint(f, i);

	if (!h && f->ms && i >= f->hint_at && i < f->hint_at + f->hint_n &&
	    f->hints[i - f->hint_at].why == SWEEP__HINT_NOT_READ &&
	    (stated ? S_ISREG(st->st_mode) : f->ls.v[i].type == DT_REG)) {
		eh->lazy = true;
		eh->dev = f->dir->dev;
		return -1;
	}
	if (!h || !S_ISREG(h->mode))
		return -1;
	if (stated && ((uint64_t)st->st_ino != h->ino || (uint64_t)st->st_dev != f->dir->dev || !S_ISREG(st->st_mode) ||
		       (uint64_t)st->st_size != h->size))
		return -1;
	if (!stated && f->ls.v[i].type != DT_REG)
		return -1;
	/* h is a regular file's, and so is the entry (checked above): sweep__walk_meta_sizes(f, i), from what is at hand. */
	if (!stated && !unplaced_elsewhere(f, h)) {
		eh->have_size = true; /* what stands in for the stat the walk left out */
		eh->size = h->size;
	}
	if (h->flags & SWEEP__HINT_DEEP) {
		eh->deep = true; /* the plan reads its tree blocks with the batch's others */
		return -1;
	}
	if (!(h->flags & SWEEP__HINT_PHYS))
		return -1;
	/* Where the filesystem says the file is empty, no location is right; else FIEMAP knows. */
	if (unplaced_elsewhere(f, h) && (!stated || st->st_size != 0))
		return -1;
	eh->have_hint = true;
	eh->phys = h->phys;
	eh->size = h->size;
	w->meta->stats.hints_offered++;
	return 0;
}

/* ---- a lazy hint, read when the plan needs it (sweep_plan_add_entry, during the callback) ---- */

const struct sweep_entry_hint *sweep__walk_entry_hint_now(const struct sweep_entry_hint *ceh)
{
	if (!ceh || !ceh->lazy)
		return ceh;
	/* The walk's own object, on its stack for the callback: a const view of it was handed out. */
	struct sweep_entry_hint *eh = (struct sweep_entry_hint *)ceh;
	struct frame *f = eh->f;
	struct sweep__inode_hint *h = &f->hints[eh->i - f->hint_at];
	uint64_t ino = f->ls.v[eh->i].ino;
	eh->lazy = false;
	if (sweep__metascan_inodes_shallow(f->ms, &ino, 1, h) < 0)
		return eh; /* no hint: the plan locates it its own way */
	eh->w->meta->stats.hints_asked++;
	eh->w->meta->stats.hints_valid += (h->flags & SWEEP__HINT_VALID) != 0;
	sweep__walk_meta_offer(eh->w, f, eh->i, eh->stated, eh->st, eh);
	return eh;
}
