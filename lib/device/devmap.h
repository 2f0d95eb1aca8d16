/* SPDX-License-Identifier: MIT */
/*
 * devmap: which independent devices a filesystem's addresses lie on, so a
 * tree spanning several disks is read on all of them at once (DESIGN §3c).
 *
 * A *spindle* here is what one sweep runs across: a disk (or a loop
 * device whose file no disk holds), or a set of disks that answer one
 * address space together (md RAID0/4/5/6/10/1, dm-striped, a btrfs
 * striped or mirrored profile), read in that set's own order with a queue
 * as deep as its members. Spindles that share a disk are in one *group*:
 * they are read one after another, never side by side, since two sweeps
 * on one disk would pull its head between them. Groups are what a reader
 * runs per.
 *
 * A filesystem's *map* sends each byte address its files' extents report
 * (FIEMAP: the block device's offset on ext4/xfs, the logical address on
 * btrfs) to a spindle and an offset on it: through partitions, loop
 * devices, dm-linear and dm-crypt tables, md linear arrays and the btrfs
 * chunk tree. Where a layer cannot be read (a dm table without
 * CAP_SYS_ADMIN, a dm target of an unknown kind, the btrfs chunk tree
 * without CAP_SYS_ADMIN), everything under it is one spindle of unknown
 * layout, read in the filesystem's own address order: one sweep, as
 * before, and the map says why (sweep__devmap_note).
 */
#ifndef SWEEP_DEVMAP_H
#define SWEEP_DEVMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sweep__spindle_kind {
	SWEEP__SPINDLE_DISK = 0,     /* one disk (or a loop device whose file no disk holds) */
	SWEEP__SPINDLE_STRIPED = 1,  /* md raid0/4/5/6/10, dm-striped, btrfs raid0/10/5/6: members in turn */
	SWEEP__SPINDLE_MIRRORED = 2, /* md raid1, btrfs raid1/1c3/1c4: any member answers */
	SWEEP__SPINDLE_OPAQUE = 3,   /* a layer whose mapping could not be read: its disks as one */
	SWEEP__SPINDLE_NODEV = 4,    /* a filesystem on no block device (tmpfs, NFS, FUSE): itself */
};

/* The spindles and groups met so far: one per plan or orderer, never shared between threads. */
struct sweep__spindles;

struct sweep__spindles *sweep__spindles_new(void);
struct sweep__spindles *sweep__spindles_free(struct sweep__spindles *s);
size_t sweep__spindles_count(const struct sweep__spindles *s);
/* A spindle's name ("sdb", "md0", "loop3", "btrfs-1a2b3c4d-raid0", "nodev-0-45"), kind and members. */
const char *sweep__spindle_name(const struct sweep__spindles *s, uint32_t id);
enum sweep__spindle_kind sweep__spindle_kind(const struct sweep__spindles *s, uint32_t id);
unsigned sweep__spindle_members(const struct sweep__spindles *s, uint32_t id);
/*
 * The groups among the spindles marked in used[0..count) (NULL: all):
 * ret[id] (count entries) is the smallest used id that id shares a disk
 * with, directly or through other used spindles; an unused id is its own.
 * Only the spindles a batch reads count: a btrfs filesystem's mirrored
 * metadata spans both its disks, and holds none of its files' data.
 * 0 or -ENOMEM.
 */
int sweep__spindles_groups(const struct sweep__spindles *s, const unsigned char *used, uint32_t *ret);

/* One filesystem's map. */
struct sweep__devmap;

/* The map of a block device's own addresses (what a filesystem on it reports), its spindles added to s. */
int sweep__devmap_new_bdev(struct sweep__spindles *s, uint64_t bdev, struct sweep__devmap **ret);

/*
 * The map of the filesystem holding fd (st_dev dev), its spindles added to
 * s. Never fails for want of knowledge (an unknown layer is one opaque
 * spindle); -ENOMEM, or -errno when fd cannot be looked at.
 */
int sweep__devmap_new(struct sweep__spindles *s, int fd, uint64_t dev, struct sweep__devmap **ret);
struct sweep__devmap *sweep__devmap_free(struct sweep__devmap *m);
/* Where address addr lies: its spindle and the offset there (addr itself where no segment holds it). */
void sweep__devmap_locate(const struct sweep__devmap *m, uint64_t addr, uint32_t *ret_spindle, uint64_t *ret_off);
/* The spindle of the filesystem's files that were not located (the first of its map). */
uint32_t sweep__devmap_home(const struct sweep__devmap *m);
/* Spindles the map reaches (1 for a filesystem on one disk). */
size_t sweep__devmap_spindles(const struct sweep__devmap *m);
/* "" when every layer was read, else why not ("dm-3: table not readable: Operation not permitted"). */
const char *sweep__devmap_note(const struct sweep__devmap *m);

/* ---- for the layers (devmap_md.c, devmap_dm.c, devmap_btrfs.c) ---- */

#define SWEEP__DEVMAP_NAME 40

/* A map being built: segments of the filesystem's address space, each on a spindle. */
struct sweep__devmap_build;

/*
 * Map [at, at + len) of the block device whose sysfs directory is sysdir
 * onto filesystem addresses [from, from + len), through whatever stacks
 * there (hops: how deep already). 0 or -ENOMEM; what cannot be followed
 * becomes an opaque spindle.
 */
int sweep__devmap_resolve(struct sweep__devmap_build *b, const char *sysdir, uint64_t from, uint64_t len,
			  uint64_t at, int hops);
/* The same for a block device number (0:0 or no sysfs entry: an opaque spindle of the name "unknown"). */
int sweep__devmap_resolve_dev(struct sweep__devmap_build *b, uint64_t bdev, uint64_t from, uint64_t len, uint64_t at,
			      int hops);
/*
 * [from, from + len) onto a spindle of its own kind (STRIPED, MIRRORED or
 * OPAQUE) named name, over the disks under the block devices sysdirs[0..n)
 * (sysfs directories), with members disks at once (0: n); from the set's
 * own address at (md's order for an array; btrfs's logical address).
 */
int sweep__devmap_whole(struct sweep__devmap_build *b, enum sweep__spindle_kind kind, const char *name,
			unsigned members, const char *const *sysdirs, size_t n, uint64_t from, uint64_t len, uint64_t at);
/* Where a build stands, to undo what a layer added when it turns out not to be understood. */
struct sweep__devmap_mark {
	size_t n;
	uint64_t last_len;
};
void sweep__devmap_mark(const struct sweep__devmap_build *b, struct sweep__devmap_mark *ret);
void sweep__devmap_rewind(struct sweep__devmap_build *b, const struct sweep__devmap_mark *m);
/* Record why a layer could not be read (the first reason is kept). */
void sweep__devmap_explain(struct sweep__devmap_build *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A decimal number from sysfs file dir/rel: 0 or -errno ("none" and the like: -EINVAL). */
int sweep__devmap_read_u64(const char *dir, const char *rel, uint64_t *ret);
/* The sysfs directory of block device bdev (realpath of /sys/dev/block/M:m): 0 or -ENOENT. */
int sweep__devmap_sysdir(uint64_t bdev, char *buf, size_t size);

/* md (devmap_md.c): 1 when sysdir is an md array (mapped, or made opaque), 0 when it is not one. */
int sweep__devmap_md(struct sweep__devmap_build *b, const char *sysdir, uint64_t from, uint64_t len, uint64_t at,
		     int hops);
/* device-mapper (devmap_dm.c): the same for a dm device. */
int sweep__devmap_dm(struct sweep__devmap_build *b, const char *sysdir, uint64_t from, uint64_t len, uint64_t at,
		     int hops);
/*
 * The text of a dm device's table, as `dmsetup table` prints it (one line
 * per target: start length type args, devices as MAJ:MIN). From the kernel
 * (DM_TABLE_STATUS, needs CAP_SYS_ADMIN); under a test sysfs root, from the
 * file dm/table in the device's directory there. 0 or -errno; *ret malloc'ed.
 */
int sweep__dm_table(const char *sysdir, char **ret);
/*
 * btrfs (devmap_btrfs.c): the whole map of the btrfs filesystem holding
 * fd, from its chunk tree (CAP_SYS_ADMIN) and device list; where the chunk
 * tree cannot be read, its devices as one opaque spindle. 0 or -ENOMEM.
 */
int sweep__devmap_btrfs(struct sweep__devmap_build *b, int fd);

#endif
