/* SPDX-License-Identifier: MIT */
/*
 * devmap's own workings, for the files that build a map (devmap.c,
 * devmap_md.c, devmap_dm.c, devmap_btrfs.c) and for tests. What the layers
 * above use (spindles, groups, a filesystem's map) is in device.h.
 */
#ifndef SWEEP_DEVMAP_H
#define SWEEP_DEVMAP_H

#include "device.h"

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
