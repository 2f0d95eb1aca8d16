/* SPDX-License-Identifier: MIT */
/*
 * metascan: per-inode planning hints from one physical sweep over the inode
 * tables of the block device, without a syscall per inode. Internal to
 * libsweep (not installed).
 *
 * The shape of the metadata engine (issues 11 and 15), and why:
 *
 *  - Names and inode numbers always come from the VFS: getdents64 on each
 *    directory. It is authoritative, and it brings only the directory's own
 *    inode into the VFS, not its children's. A raw name scan of directory
 *    blocks would miss files created since the last journal checkpoint (on
 *    xfs: since the last metadata writeback), which in a backup is silent
 *    data loss. So there is no raw name scan.
 *
 *  - The per-inode attributes that PLANNING needs (type, size, link count,
 *    first physical data byte, and for a directory where its blocks are) come
 *    from a raw read of the inode tables on the block device. They are hints,
 *    used only for order and prefetch: the device may be older than the
 *    journal and the page cache, and a concurrent writer may change anything
 *    at any time. What a tool outputs comes from fstat on the file it opened,
 *    checked by identity (DESIGN.md section 3a).
 *
 *  - So this module answers one question: given a filesystem and a sorted
 *    set of inode numbers, the hints for those inodes. It reads the blocks
 *    that hold them in ONE ascending sweep, coalesced into large requests
 *    with several in flight (posix_fadvise WILLNEED ahead of pread). Extent
 *    tree blocks (ext4 depth > 0, xfs btree format, ext2/3 indirect blocks)
 *    are read in further sorted sweeps, one per tree level.
 *
 *  - Reads are buffered, through the block device's page cache, not
 *    O_DIRECT. On ext4 that cache IS ext4's metadata cache (buffer heads live
 *    in the block device's page cache), so (1) what we read is as current as
 *    ext4's own copy, dirty buffers included, and (2) the blocks we read stay
 *    there for the iget that a later open() does (bench/results/
 *    2026-11-23-1M-profile/README.md measures both). xfs keeps its metadata
 *    in its own buffer cache and writes it to the device directly, so pages
 *    of the block device's cache can be stale there: on xfs every range is
 *    dropped from that cache before it is read and again after it was parsed.
 *
 *  - The device content is untrusted input (a corrupt or hostile image, or
 *    blocks torn by a concurrent writer). Every field is bounds-checked
 *    before it is used; checksums are verified where the filesystem has
 *    them. A bad superblock fails the open (-EUCLEAN, or -EBADMSG for a bad
 *    checksum); a bad inode or tree block only makes that hint invalid.
 *
 *  - Opening the block device needs read access to it (root, or the disk
 *    group). Without it the open fails with -EACCES or -EPERM, and the caller
 *    takes the per-inode path (statx and FIEMAP).
 *
 * The first physical byte follows EXACTLY the rule of sweep_extent_first()
 * (lib/device/extent.c): the lowest logical extent that has a usable location;
 * unwritten, inline and delayed-allocation data have none, and a file with
 * no located extent gets SWEEP_NO_PHYS. A directory's first block is found
 * the same way, so the walk can key directories by it.
 *
 * Functions return 0 or a count, or -errno; they never print; free accepts
 * NULL and returns NULL; out-parameters are untouched on failure (but for
 * -ENOMEM in the middle of sweep__metascan_inodes: out is then partly
 * filled). A handle holds one request buffer: one thread at a time.
 *
 * Integration (the walk): breadth first, per level or per batch of
 * directories,
 *   1. getdents64 on each directory of the level -> names, d_ino, d_type;
 *   2. sweep__metascan_ranges() of the next level's directory inodes, then
 *      sweep__metascan_prefetch() of those ranges: their blocks arrive in one
 *      sweep before their getdents64 asks (ext4; measured: the cold getdents
 *      pass of the 1M tree in 2.7-6.5 s instead of 8.7-29 s, see the README
 *      of bench/results/2026-11-23-1M-profile);
 *   3. sweep__metascan_inodes() of the files' inode numbers, sorted, in
 *      slices (48 bytes a hint): plan from phys/size/mode with no statx, no
 *      open and no FIEMAP. A hint that is not VALID, or has no PHYS answer,
 *      goes the per-inode way (statx, FIEMAP). Where the tables are already
 *      cached by a sweep (sweep__metascan_resident), the files' hints are
 *      left to the plan, which reads a whole batch's in inode order.
 *   4. The reader opens each file relative to its directory and checks
 *      (dev, ino, type) with fstat before using a byte; what it outputs
 *      comes from that fstat, never from the hint.
 */
#ifndef SWEEP_METASCAN_H
#define SWEEP_METASCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sweep/extent.h> /* SWEEP_NO_PHYS */

#include "device.h"

struct sweep__metascan;

/* Open flags. */
enum {
	/* Do not verify checksums (only to measure what they cost). */
	SWEEP__METASCAN_NOCSUM = 1u << 0,
};

/* sweep__inode_hint.flags */
enum {
	/* The inode is in use and mode, size, nlink and gen were read and are in range. */
	SWEEP__HINT_VALID = 1u << 0,
	/*
	 * phys follows the rule: a location, or SWEEP_NO_PHYS when the inode
	 * has no located data. Unset: unknown (a tree block was unreadable or
	 * corrupt, or the inode is not VALID): ask FIEMAP.
	 */
	SWEEP__HINT_PHYS = 1u << 1,
	/* The filesystem has checksums and the inode's (and its tree blocks') matched. */
	SWEEP__HINT_CSUM = 1u << 2,
	/* The data lives in the inode (ext4 inline_data, xfs local format, fast symlinks). */
	SWEEP__HINT_INLINE = 1u << 3,
	/*
	 * All of the file's mapped data is the one located extent at phys, from
	 * logical 0, phys_len bytes long: a full extent map (FIEMAP) would say
	 * no more. Only set when the whole map was in the inode.
	 */
	SWEEP__HINT_ONE_EXTENT = 1u << 4,
	/*
	 * VALID, but the first extent lies in a tree block that was not read
	 * (sweep__metascan_inodes_shallow): PHYS is unset, and a full
	 * sweep__metascan_inodes of the inode would find it.
	 */
	SWEEP__HINT_DEEP = 1u << 5,
};

/* Why a hint is not VALID (sweep__inode_hint.why). */
enum sweep__hint_why {
	SWEEP__HINT_OK = 0,
	SWEEP__HINT_FREE,    /* not in use on the device: mode 0, no links, or deleted */
	SWEEP__HINT_UNINIT,  /* its group's inode table is not initialised (ext4) */
	SWEEP__HINT_BADCSUM, /* checksum mismatch (torn, stale or corrupt) */
	SWEEP__HINT_CORRUPT, /* a field is out of range, or the magic is wrong */
	SWEEP__HINT_NOINO,   /* no such inode number on this filesystem */
	SWEEP__HINT_EIO,     /* the block could not be read */
	SWEEP__HINT_NOT_READ, /* not asked for: its table is in the cache, read it when needed (walk_meta.c) */
};

struct sweep__inode_hint {
	uint64_t ino;
	uint64_t size;     /* i_size in bytes */
	uint64_t phys;     /* first physical byte of data (see SWEEP__HINT_PHYS), or SWEEP_NO_PHYS */
	uint64_t phys_len; /* bytes of the extent starting at phys; 0 without a location */
	uint32_t mode;     /* type and permission bits, as st_mode */
	uint32_t nlink;
	uint32_t gen;      /* the inode's generation number */
	uint16_t flags;    /* SWEEP__HINT_* */
	uint16_t why;      /* enum sweep__hint_why; SWEEP__HINT_OK when VALID */
};

/*
 * Open the block device under the filesystem that fd (any file or directory
 * on it) lives on. ext4 (also ext2/ext3) and xfs; anything else -EOPNOTSUPP.
 * The device is found from st_dev (/dev/block/MAJ:MIN, else the DEVNAME of
 * /sys/dev/block/MAJ:MIN/uevent under /dev) and must be that very device.
 * -EACCES/-EPERM without read access to it, -ENODEV when it cannot be found,
 * -EUCLEAN when the superblock or the group descriptors are out of range,
 * -EBADMSG when the superblock's checksum does not match.
 */
int sweep__metascan_open(int fd, unsigned flags, struct sweep__metascan **ret);

/*
 * The same on an already open device or image file (a regular file holding
 * a filesystem image is fine: no mount needed). devfd is duplicated; the
 * caller keeps its own.
 */
int sweep__metascan_open_dev(int devfd, unsigned flags, struct sweep__metascan **ret);

struct sweep__metascan *sweep__metascan_free(struct sweep__metascan *m);

/* "ext4" or "xfs" (ext2 and ext3 say "ext4": one format). */
const char *sweep__metascan_fstype(const struct sweep__metascan *m);

/*
 * The formats the engine reads, registered in one table (metascan.c): what
 * each one is, and how the rest of the library must treat its raw reads.
 * The walk, the plan and the engine ask a format's properties here, never
 * its name.
 */
struct sweep__ms_fs;
/* The format of filesystems with this statfs f_type, or NULL when the engine cannot read it. */
const struct sweep__ms_fs *sweep__metascan_format(uint64_t fs_magic);
/* The format of an open handle (never NULL). */
const struct sweep__ms_fs *sweep__metascan_format_of(const struct sweep__metascan *m);
/* The filesystem's block size in bytes. */
unsigned sweep__metascan_block_size(const struct sweep__metascan *m);

/*
 * Hints for inos[0..n), which must be in ascending order (repeats allowed;
 * else -EINVAL), into out[0..n). One sweep over the inode tables, then one
 * sweep per tree level for the files whose first extent is not in the
 * inode. No syscall per inode. Returns the number of VALID hints; a hint
 * that is not valid says why, and the call still succeeds. -errno only when
 * nothing could be done (-ENOMEM, -EINVAL).
 *
 * Batches are fine: a caller with millions of inodes may pass them in
 * ascending slices, each slice one forward sweep.
 */
int sweep__metascan_inodes(struct sweep__metascan *m, const uint64_t *inos, size_t n,
			   struct sweep__inode_hint *out);
/*
 * The same from the inodes alone: a file whose first extent is not in its
 * inode is left VALID with SWEEP__HINT_DEEP instead of PHYS, and no tree
 * block is read. For a walk that hints one directory at a time: the tree
 * blocks of its files lie near their data, all over the disk, so reading
 * them a directory at a time is a seek each (4,522 such files in the
 * fragmented 84k-file tree: 14 s of the HDD model for a no-change
 * sweep-sync); the plan reads those it needs in one sweep per batch.
 */
int sweep__metascan_inodes_shallow(struct sweep__metascan *m, const uint64_t *inos, size_t n,
				   struct sweep__inode_hint *out);

/* A byte range of the device. */
struct sweep__dev_range {
	uint64_t off, len;
};

/*
 * Where the data of inos[0..n) lies (ascending, repeats allowed): every
 * located extent, as device ranges sorted by offset with neighbours merged,
 * into a malloc'ed *ret of *ret_n ranges. Meant for directories: these are
 * the blocks their getdents will read, the input of sweep__metascan_prefetch.
 * Tree blocks are not listed; on ext4 the scan itself has just read them
 * into the device's page cache, where ext4 will find them. Unwritten and
 * inline data have no range. Inodes whose hints are not VALID contribute
 * nothing. 0, or -errno (-EINVAL, -ENOMEM).
 */
int sweep__metascan_ranges(struct sweep__metascan *m, const uint64_t *inos, size_t n, struct sweep__dev_range **ret,
			   size_t *ret_n);

/*
 * Start buffered reads of r[0..n) (device bytes, any order) into the block
 * device's page cache, in one ascending sweep of coalesced requests, and
 * return without waiting (the count of requests started). On ext4 the
 * filesystem then finds its metadata there: directory blocks for getdents,
 * inode table blocks for iget (measured in bench/results/
 * 2026-11-23-1M-profile/README.md). xfs does not read through that cache:
 * -EOPNOTSUPP there (use sweep__xfs_bulkstat instead).
 */
int sweep__metascan_prefetch(struct sweep__metascan *m, const struct sweep__dev_range *r, size_t n);

/*
 * The inode tables in runs that lie next to each other on the device (ext4
 * with flex_bg: a flex group's), each the inode numbers [ino_lo, ino_hi) it
 * holds and the bytes of them in use: what one seek reads. Sorted by
 * ino_lo, disjoint, malloc'ed into *ret of *ret_n. 0, or -EOPNOTSUPP (no
 * tables: xfs), -ENOMEM.
 */
struct sweep__ms_table_run {
	uint64_t ino_lo, ino_hi;
	uint64_t bytes;
};
int sweep__metascan_table_runs(struct sweep__metascan *m, struct sweep__ms_table_run **ret, size_t *ret_n);

/*
 * Read the inode table blocks that hold inodes in use, of the tables whose
 * inode numbers start in [ino_lo, ino_hi) (0, UINT64_MAX: all of them), into
 * the block device's page cache, in one ascending sweep of large requests,
 * and wait for it (e2fsck's pass 1 reads the same). On ext4 that cache is
 * the filesystem's own metadata cache, so a walk then stats without reading
 * an inode table block of its own. Bytes read, or -EOPNOTSUPP (a format
 * without such tables: xfs), -ENOMEM.
 */
long sweep__metascan_read_tables(struct sweep__metascan *m, uint64_t ino_lo, uint64_t ino_hi);

/*
 * Whether ino's inode lies in tables this handle has read whole
 * (sweep__metascan_read_tables): its hint costs a copy from the cache, no
 * device read. False on xfs, and wherever unsure.
 */
bool sweep__metascan_resident(struct sweep__metascan *m, uint64_t ino);
/*
 * The blocks of every directory of the filesystem whose table starts in
 * [ino_lo, ino_hi) (as sweep__metascan_read_tables; 0, UINT64_MAX: all), as
 * device ranges sorted by offset with neighbours merged, into a malloc'ed
 * *ret of *ret_n: the input of sweep__metascan_prefetch for a walk.
 * Found by reading every inode in use (after sweep__metascan_read_tables
 * they come from the cache), a slice at a time. 0, or -EOPNOTSUPP (no
 * tables: xfs), -ENOMEM.
 */
int sweep__metascan_dir_blocks(struct sweep__metascan *m, uint64_t ino_lo, uint64_t ino_hi, struct sweep__dev_range **ret,
			       size_t *ret_n);

/*
 * xfs, with CAP_SYS_ADMIN: authoritative stat of inos[0..n) (ascending,
 * repeats allowed) through XFS_IOC_BULKSTAT (v5), which reads the inode
 * btree and inode clusters in inode order, in large reads, without a path
 * lookup or a file open per inode. fd is any file on the filesystem.
 * out[i].err is 0 with out[i].st filled (st_dev from fd), or -ENOENT when
 * the inode is not allocated. Returns the number found; -EPERM without the
 * capability, -ENOTTY/-EOPNOTSUPP when fd is not on xfs or the kernel or the
 * build lacks the v5 call. Then the caller uses statx.
 */
struct sweep__bstat {
	struct stat st;
	uint32_t gen;
	int err;
};
int sweep__xfs_bulkstat(int fd, const uint64_t *inos, size_t n, struct sweep__bstat *out);
/*
 * Bulkstat every inode of the xfs filesystem fd is on and throw the answers
 * away: xfs reads its inode clusters into its own buffer cache, in one
 * ascending pass over the disk on a few threads (the chunks in use counted
 * first, XFS_IOC_INUMBERS), where later stats and opens find them. The
 * number of inodes seen, or -errno (-EPERM without CAP_SYS_ADMIN,
 * -EOPNOTSUPP where it is not xfs). With on_dirs: after each call,
 * on_dirs(ctx, inos, gens, n) with that call's directories that have
 * blocks (not short-form) and their generations, ascending within the call
 * and about so from one call to the next, one call at a time, on the
 * sweep's threads, while the sweep goes on. A thread whose first call read
 * nothing from the disk (sweep__disk_reads: the inodes are cached) tells no
 * directories: there is nothing to order.
 */
typedef void (*sweep__dirs_fn)(void *ctx, const uint64_t *inos, const uint32_t *gens, size_t n);
long sweep__xfs_bulkstat_sweep(int fd, sweep__dirs_fn on_dirs, void *ctx);
/*
 * xfs, with CAP_DAC_READ_SEARCH and CAP_SYS_ADMIN: read directories' blocks
 * into xfs's own buffer cache, without their names, while the caller goes
 * on. _start makes the reader (*ret; nothing starts yet): fd is any file on
 * the filesystem (a copy is kept); at most threads threads, each holding a
 * descriptor at a time. _add hands it directories (inode numbers and
 * generations, from bulkstat), which its threads open by handle
 * (open_by_handle_at) in the order given and list; xfs reads a directory's
 * first block ahead on every open (xfs_dir_open). The threads start with
 * the first _add. 0 or -errno (-EPERM or -EOPNOTSUPP once a thread found
 * that no handle opens here: without the capabilities, or not xfs).
 * _end waits for the directories handed (stop: only for the ones being
 * opened) and frees a (NULL is fine): the number opened, or -errno.
 */
struct sweep__dirs_ahead;
int sweep__xfs_dirs_read_ahead_start(int fd, unsigned threads, struct sweep__dirs_ahead **ret);
int sweep__xfs_dirs_read_ahead_add(struct sweep__dirs_ahead *a, const uint64_t *inos, const uint32_t *gens, size_t n);
int sweep__xfs_dirs_read_ahead_end(struct sweep__dirs_ahead *a, bool stop);

/*
 * xfs, with CAP_SYS_ADMIN: the stat of every inode of the filesystem fd is
 * on, gathered by bulkstat, one allocation group at a time on up to threads
 * threads (XFS_BULK_IREQ_AGNO), while the caller goes on. A walk of a whole
 * filesystem then answers its files' stats from it instead of a path
 * lookup, a VFS inode and a cluster read per file (cold, fast storage: the
 * aged linux-lite xfs image's 58k files in about half the system time of
 * fstatat). Not started (-E2BIG) when the filesystem holds more than
 * max_inodes inodes in use (about 90 bytes each are kept). fd's st_blksize
 * stands for every file's (the page size on a mount without largeio: the
 * caller checks). The table (*ret) to ask, or -errno (-EPERM without the
 * capability, -EOPNOTSUPP where it is not xfs, -ENOMEM).
 */
struct sweep__xfs_stats;
int sweep__xfs_stats_start(int fd, unsigned threads, uint64_t max_inodes, struct sweep__xfs_stats **ret);
/*
 * Inode ino's stat into *st, waiting for its allocation group's bulkstat to
 * end: 1, or 0 when the table cannot say (not in use then, in a group
 * whose bulkstat failed, a realtime file, a table given up over memory):
 * the caller stats it itself. Any thread.
 */
int sweep__xfs_stats_get(struct sweep__xfs_stats *t, uint64_t ino, struct stat *st);
/* Stop the threads (a group not begun is not read) and free t (NULL is fine). */
void sweep__xfs_stats_free(struct sweep__xfs_stats *t);


/* ---- Between lib/metascan*.c and their unit tests; not for other modules. ---- */

/* CRC32C (Castagnoli) without pre- or post-inversion, as ext4 and xfs chain it. */
uint32_t sweep__crc32c(uint32_t crc, const void *buf, size_t len);
/* The same by table (slicing by 8), whatever the CPU: for the unit test. */
uint32_t sweep__crc32c_sw(uint32_t crc, const void *buf, size_t len);
/* CRC16 (ANSI, reflected 0xA001) as ext4's gdt_csum uses it. */
uint16_t sweep__crc16(uint16_t crc, const void *buf, size_t len);

/* Reads since open: requests and bytes, for tests and measurements. */
void sweep__metascan_io_stats(const struct sweep__metascan *m, uint64_t *ret_requests, uint64_t *ret_bytes);

/* Little- and big-endian loads from unaligned bytes. */
static inline uint16_t sweep__le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t sweep__le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t sweep__le64(const uint8_t *p) { return sweep__le32(p) | (uint64_t)sweep__le32(p + 4) << 32; }
static inline uint16_t sweep__be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t sweep__be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}
static inline uint64_t sweep__be64(const uint8_t *p) { return (uint64_t)sweep__be32(p) << 32 | sweep__be32(p + 4); }

/*
 * The sweep engine (metascan.c). A filesystem module hands it the regions
 * it wants (an inode, a tree block) in ascending device order through next();
 * the engine coalesces neighbours into requests of up to MS_MAX_REQ bytes,
 * keeps MS_DEPTH requests ahead with posix_fadvise(WILLNEED), preads each
 * request whole and hands every region to item() with its bytes, or with
 * NULL when they could not be read. Regions out of order only cost a new
 * request (a backward seek), never a wrong answer.
 */
struct sweep__ms_item {
	uint64_t off; /* device byte */
	uint32_t len; /* at most MS_MAX_REQ */
	uint32_t idx; /* the module's own index */
};
typedef int (*sweep__ms_next_fn)(void *ctx, struct sweep__ms_item *ret); /* 1: an item, 0: no more */
typedef void (*sweep__ms_item_fn)(void *ctx, const struct sweep__ms_item *it, const uint8_t *bytes);

struct sweep__ms_fs; /* one per filesystem format */

struct sweep__metascan {
	int fd; /* the block device (or image), O_RDONLY */
	unsigned flags;
	int drop_cache; /* xfs: drop the device's page cache around every read */
	uint64_t dev_size;
	const struct sweep__ms_fs *fs;
	void *fsdata;
	uint64_t ra_chunk; /* the most one posix_fadvise(WILLNEED) reads: max(read-ahead, max request) */
	uint8_t *buf;      /* one request */
	struct sweep__ms_slot *slots;
	uint64_t io_requests, io_bytes;
	/*
	 * Device ranges this handle has read whole and waited for (the inode
	 * tables of sweep__metascan_read_tables), sorted and disjoint: a later
	 * sweep inside them does not ask the device for them again.
	 */
	struct sweep__dev_range *resident;
	size_t nresident, cap_resident;
	uint64_t advice_skipped; /* requests not advised, being resident */
};

/* Read exactly len bytes at off: 0, or -EIO (short: past the end), -errno. */
int sweep__ms_pread(struct sweep__metascan *m, void *buf, size_t len, uint64_t off);
/* Run one sweep. 0 or -ENOMEM; read errors reach item() as NULL bytes. */
int sweep__ms_sweep(struct sweep__metascan *m, sweep__ms_next_fn next, sweep__ms_item_fn item, void *ctx);

/*
 * One scan (metascan.c drives it, a format module supplies the ops): a
 * sweep over the inodes, then one sorted sweep per round over the tree
 * blocks still wanted, until none is or ops->max_rounds have run. Each
 * wanted block is a pending record of ops->pend_size bytes that starts with
 * struct sweep__ms_pend; ops->block either resolves it (done) or points it
 * at the next block, and may add more (read in the next round, in order).
 * Adding may move the array: ops->block must not use its record after.
 *
 * Two modes. FIRST: the hint of each inode, with its first located extent.
 * ALL: the hints, and every located extent of each inode into the scan's
 * ranges (what a directory's getdents will read).
 */
struct sweep__ms_pend {
	uint64_t byte; /* the block to read next */
	uint32_t hint; /* index into the scan's hints */
	uint32_t done;
};
struct sweep__ms_scan;
struct sweep__ms_scan_ops {
	uint32_t inode_len, block_len;
	unsigned max_rounds;
	size_t pend_size;
	/* Device byte of inode ino: SWEEP__HINT_OK, or why it has none. */
	int (*loc)(const void *fsdata, uint64_t ino, uint64_t *ret_off);
	void (*inode)(struct sweep__ms_scan *s, struct sweep__inode_hint *h, const uint8_t *raw);
	/* blk is NULL when the block could not be read. */
	void (*block)(struct sweep__ms_scan *s, struct sweep__ms_pend *p, struct sweep__inode_hint *h, const uint8_t *blk);
};
struct sweep__ms_scan {
	struct sweep__metascan *m;
	void *fsdata;
	const struct sweep__ms_scan_ops *ops;
	const uint64_t *inos;
	struct sweep__inode_hint *out;
	size_t n, next;
	uint8_t *pend;
	size_t npend, cap, ip, round_end, max_pend;
	int all;       /* ALL mode */
	int truncated; /* ALL mode: a tree larger than the device could hold was cut short */
	int shallow;   /* read no tree block (sweep__metascan_inodes_shallow) */
	struct sweep__dev_range *ranges;
	size_t nranges, cap_ranges;
	int err;
};
/*
 * A zeroed pending record for hint h, or NULL: on -ENOMEM (the scan then
 * fails), or when more blocks are wanted than the device has (a hostile
 * tree that names the same blocks again and again; s->truncated).
 */
void *sweep__ms_pend_add(struct sweep__ms_scan *s, const struct sweep__inode_hint *h);
/* ALL mode: one located extent (device bytes). */
void sweep__ms_range_add(struct sweep__ms_scan *s, uint64_t off, uint64_t len);

struct sweep__ms_table {
	struct sweep__dev_range dev; /* where the inodes lie */
	uint64_t ino, count;         /* the inode numbers [ino, ino + count) */
};

struct sweep__ms_fs {
	const char *name;
	uint64_t magic; /* statfs f_type */
	/*
	 * The filesystem keeps its metadata in a buffer cache of its own and
	 * writes it around the block device's page cache (xfs). Then raw reads
	 * are read again by the filesystem (not by default: they cost twice),
	 * what the device's cache holds may be older than the filesystem's
	 * (dropped around every read), a prefetch into that cache does not
	 * reach the filesystem, and "no data" in a raw inode may only mean its
	 * data was not written home yet.
	 */
	bool own_cache;
	/*
	 * Read every inode in use into the filesystem's own cache through its
	 * own interface, answers thrown away (xfs: bulkstat); for the walk's
	 * inode sweep where raw reads do not run. The number of inodes, or
	 * -errno; on_dirs, when given, hears of the directories that have
	 * blocks as they go by (see sweep__xfs_bulkstat_sweep). NULL where the
	 * raw sweep of the tables does it.
	 */
	long (*cache_sweep)(int fd, sweep__dirs_fn on_dirs, void *ctx);
	/*
	 * Read directories' blocks into the filesystem's own cache, in the
	 * order given, without their names (xfs: see
	 * sweep__xfs_dirs_read_ahead_start, _add, _end). NULL where there is no such way.
	 */
	int (*dirs_read_ahead)(int fd, unsigned threads, struct sweep__dirs_ahead **ret);
	int (*dirs_read_ahead_add)(struct sweep__dirs_ahead *a, const uint64_t *inos, const uint32_t *gens, size_t n);
	int (*dirs_read_ahead_end)(struct sweep__dirs_ahead *a, bool stop);
	/*
	 * Read and validate the superblock (and what else the format needs up
	 * front) through sweep__ms_pread: 0 with *ret_fsdata, -ENOENT when the
	 * magic is not this format's, -EUCLEAN/-EBADMSG/-EOPNOTSUPP otherwise.
	 */
	int (*open)(struct sweep__metascan *m, void **ret_fsdata);
	void (*free)(void *fsdata);
	unsigned (*block_size)(const void *fsdata);
	/* Before a scan of inos[0..n) (ascending, n > 0): refresh what may have changed. May be NULL. */
	void (*prepare)(struct sweep__metascan *m, const uint64_t *inos, size_t n);
	void (*scan_ops)(const void *fsdata, struct sweep__ms_scan_ops *ret);
	/*
	 * Every run of inodes that may be in use (ext4: the initialised part of
	 * each group's inode table) with the device range that holds it, into
	 * a malloc'ed *ret of *ret_n. NULL where the format has no such tables.
	 */
	int (*tables)(struct sweep__metascan *m, struct sweep__ms_table **ret, size_t *ret_n);
};
extern const struct sweep__ms_fs sweep__ms_ext4, sweep__ms_xfs;

/* A fresh hint for ino: nothing known yet (why = EIO until something is read). */
void sweep__ms_hint_init(struct sweep__inode_hint *h, uint64_t ino);
/* 1 when mode's type is one a file can have. */
int sweep__ms_type_ok(uint32_t mode);

#endif
