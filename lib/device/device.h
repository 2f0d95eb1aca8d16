/* SPDX-License-Identifier: MIT */
/*
 * The device layer (lib/device/), for the layers above it: the filesystem
 * and block device under a path, the device class and the profile that
 * follows (devclass.c, the one place that reads the class), the one
 * block-device opener, extents. Internal to libsweep.
 */
#ifndef SWEEP_DEVICE_H
#define SWEEP_DEVICE_H

#include "internal.h"

/* --- extent (extent.c) --- */
/* The ioctl that extent.c issues (FIEMAP, FIBMAP, FIGETBSZ); same contract as ioctl(2). */
typedef int (*sweep__ioctl_fn)(int fd, unsigned long request, void *arg);
/* Replace it (NULL restores the real ioctl); returns the previous hook. Unit tests feed fake replies. */
sweep__ioctl_fn sweep__extent_set_ioctl(sweep__ioctl_fn fn);
/*
 * Whether the data of the first size bytes of the file at fd is all in the
 * page cache (of a sparse file: its data regions, the holes are never
 * read): 1 yes, 0 no, -errno when it cannot be told (cachestat refused, as
 * it is for files the caller neither owns nor may write; no cachestat and
 * not the owner). A size of 0 is cached. No I/O, nothing read.
 */
int sweep__data_cached(int fd, uint64_t size);
/* The cachestat(2) that call makes: pages of fd cached in [off, off + len). 0 or -errno (-ENOSYS: none). */
typedef int (*sweep__cachestat_fn)(int fd, uint64_t off, uint64_t len, uint64_t *ret_pages);
/* Replace it (NULL restores the real one); returns the previous hook. Unit tests reach the fallback. */
sweep__cachestat_fn sweep__extent_set_cachestat(sweep__cachestat_fn fn);

/* --- the mount table (mountinfo.c) --- */
/* One line of /proc/self/mountinfo; the strings live until the callback returns. */
struct sweep__mount {
	uint64_t id, parent, dev;
	const char *root;       /* the directory of its filesystem mounted here: "/" for the whole */
	const char *opts;       /* the mount's own options: "rw,noatime,idmapped" */
	const char *fstype;
	const char *source;
	const char *super_opts; /* the filesystem's: "rw,attr2,inode64,largeio" */
};
/*
 * fn(line, ctx) for each mount until fn returns nonzero: that value, 0 after
 * the last, -errno when the table cannot be read, -EBADMSG at a line that
 * does not parse.
 */
int sweep__mountinfo_each(int (*fn)(const struct sweep__mount *m, void *ctx), void *ctx);
/*
 * Whether mount mnt_id shows its whole filesystem (1) or one directory of it,
 * as a bind mount of a subdirectory does (0); -errno when the table cannot
 * say (-ENOENT: no such mount).
 */
int sweep__mount_whole(uint64_t mnt_id);
/* Whether word is one of the comma-separated opts. */
bool sweep__opt_has(const char *opts, const char *word);

/* --- fsinfo (fsinfo.c) --- */
/* Read sysfs under root instead of /sys (NULL restores it). For unit tests. */
void sweep__fsinfo_set_sysroot(const char *root);
/* The disk under block device dev and whether it is rotational: 1, 0, or -1 (unknown, disk ""). */
int sweep__fsinfo_disk(uint64_t dev, char *disk, size_t disk_size);
/* Where sysfs is ("/sys" unless a test moved it). */
const char *sweep__sysroot(void);
/* A small text file, trailing newlines and blanks cut: 0 or -errno. */
int sweep__read_small(const char *path, char *buf, size_t size);
/* strlcpy: src cut to fit size (size > 0). */
void sweep__copy_name(char *dst, size_t size, const char *src);
/*
 * The block device the filesystem of fd (st its fstat) is on, 0 when none:
 * st_dev itself, or for an anonymous device number (btrfs, overlay) the
 * block device the mount source names, if it names one.
 */
uint64_t sweep__fs_bdev(int fd, const struct stat *st);

/* --- block devices (bdev.c) --- */
/*
 * Open block device bdev (MAJ:MIN) with open(2) flags (O_CLOEXEC,
 * O_NOCTTY and O_NOFOLLOW added): the node sysfs names (under
 * sweep__sysroot()), checked to be that very device. fd, or -ENODEV when
 * there is none, or the -errno of the open (-EACCES, -EPERM).
 */
int sweep__bdev_open(uint64_t bdev, int flags);

/* --- device class (devclass.c) --- */
/*
 * Fill fi's device_* and probe_* fields for a filesystem on block device
 * bdev (0: none) whose disk has the given rotational flag (1, 0, -1).
 */
void sweep__device_decide(uint64_t bdev, int rotational, struct sweep_fsinfo *fi);
/*
 * The profile of a device of class cls (AUTO: nothing known) under a
 * filesystem of the given policy, the environment's overrides applied: the
 * one place that says what each class does.
 */
void sweep__profile_decide(enum sweep_device_class cls, enum sweep_order policy, struct sweep_profile *p);
/* The profile of a device nothing is known of (its filesystem could not be described). */
void sweep__profile_unknown(struct sweep_profile *p);
/* Whether fi's class was decided under another request (sweep_device_force, SWEEP_DEVICE) than stands now. */
bool sweep__device_stale(const struct sweep_fsinfo *fi);
/* 1 and the class when the caller (sweep_device_force) or SWEEP_DEVICE asks for one, else 0. */
int sweep__device_requested(enum sweep_device_class *ret_class, enum sweep_device_reason *ret_reason);
/* Tests: keep the cache across runs in dir instead of /run/sweep ("" none; NULL restores). */
void sweep__device_set_cache_dir(const char *dir);
/* Tests: how many times this process opened a device to time it. */
unsigned sweep__device_probes(void);
/*
 * The probe's early stop: whether the first n random-read times (ns, in
 * reading order) already show a disk beyond doubt, seq_ns the cost of 4 KiB
 * in a stream, contended how many reads others' requests were queued ahead of.
 */
bool sweep__probe_settled(const uint64_t *times, unsigned n, uint64_t seq_ns, unsigned contended);
/* Tests: forget what this process measured. */
void sweep__device_forget(void);

/* --- devmap (devmap.c, DESIGN §3c) --- */
/*
 * Which independent devices a filesystem's addresses lie on, so a
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

#endif
