/* SPDX-License-Identifier: MIT */
/* fsinfo: what filesystem and device a path lives on, and the policy that follows. */
#ifndef SWEEP_FSINFO_H
#define SWEEP_FSINFO_H

#include <sweep/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The two kinds of device the I/O policy knows (sweep(7), "Device classes").
 * HDD: positioning costs, so read in physical order. SSD: it does not, so
 * keep many requests in flight and do not bother sorting.
 */
enum sweep_device_class {
	SWEEP_DEVICE_AUTO = 0, /* only as a request: decide from the environment, a probe or sysfs */
	SWEEP_DEVICE_HDD = 1,
	SWEEP_DEVICE_SSD = 2,
};

/* Why a filesystem got its device class, most binding first. */
enum sweep_device_reason {
	SWEEP_DEVICE_BY_DEFAULT = 0, /* a block device nothing is known about: HDD, the safe guess */
	SWEEP_DEVICE_BY_CALLER = 1,  /* sweep_device_force() (a tool's --device) */
	SWEEP_DEVICE_BY_ENV = 2,     /* SWEEP_DEVICE=hdd|ssd in the environment */
	SWEEP_DEVICE_BY_PROBE = 3,   /* timed reads of the device: the probe_* fields */
	SWEEP_DEVICE_BY_SYSFS = 4,   /* the rotational flag; probe_error says why there was no probe */
	SWEEP_DEVICE_BY_NODEV = 5,   /* no block device below (memory, network, FUSE): SSD */
};

/* probe_flags */
#define SWEEP_PROBE_CACHED 0x1u /* the numbers come from an earlier run (the cache under /run) */
#define SWEEP_PROBE_BUSY 0x2u   /* others used the device during the probe: numbers perhaps high, not cached */

/* sweep_profile.metascan: what may be read raw from the block device (where the caller may read it) */
#define SWEEP_PROFILE_META_HINTS 0x1u /* inode hints (order, sizes) and directory prefetch */
#define SWEEP_PROFILE_META_SWEEP 0x2u /* a walk reads every inode table in one sweep (a subtree: once it pays) */
#define SWEEP_PROFILE_META_ALL   0x4u /* also formats that keep metadata in a cache of their own (xfs): read twice */

/* sweep_profile.env: the fields the environment set rather than the class */
#define SWEEP_PROFILE_ENV_WALK_THREADS 0x1u /* SWEEP_WALK_THREADS */
#define SWEEP_PROFILE_ENV_METASCAN     0x2u /* SWEEP_METASCAN */
#define SWEEP_PROFILE_ENV_PREFETCH     0x4u /* SWEEP_PREFETCH */

/*
 * The device profile: what the library does on one device, decided once
 * with its class (sweep(7), "Device profile"). The walk, the plan, the
 * orderer and the reader read these fields, per device; a caller's own
 * options (an order, a queue depth) still win where it gives them.
 */
struct sweep_profile {
	enum sweep_order plan_order; /* a plan's order of this device's files: PHYSICAL, INODE, NONE (as added) */
	enum sweep_order walk_order; /* directories: PHYSICAL (by first block), INODE, NONE (depth-first) */
	uint32_t walk_threads;       /* threads reading directories ahead of the walk, 0: none */
	uint32_t stat_batch;         /* entries the walk stats at once */
	uint32_t stat_uring;         /* 1: a batch that reads the disk goes to io_uring whole (plain calls while cached) */
	uint32_t metascan;           /* SWEEP_PROFILE_META_* */
	uint32_t queue_depth;        /* the reader's reads in flight */
	uint64_t ring_bytes;         /* the reader's buffers held for in-order delivery, at most */
	uint32_t prefetch;           /* 1: the reader asks for the data ahead in physical order, extent by extent */
	uint32_t env;                /* SWEEP_PROFILE_ENV_* */
};

/*
 * Size-versioned: the caller sets .size = sizeof(struct sweep_fsinfo)
 * before the call, the library fills the fields that fit (sweep_fsinfo_fd(3)).
 */
struct sweep_fsinfo {
	size_t size;             /* set by the caller */
	uint64_t dev;            /* st_dev of the filesystem */
	uint64_t fs_magic;       /* f_type from fstatfs */
	char fs_name[16];        /* "ext4", "xfs", "btrfs", "tmpfs", ... or "unknown" */
	uint32_t block_size;     /* filesystem block size (f_bsize) */
	int rotational;          /* 1 rotational, 0 not, -1 unknown (after following loop/dm/partitions) */
	char disk[32];           /* name of the underlying disk in /sys/block, "" if none */
	enum sweep_order policy; /* the order to use: PHYSICAL, INODE or NONE */
	enum sweep_device_class device_class;   /* HDD or SSD, never AUTO */
	enum sweep_device_reason device_reason; /* why */
	char device_name[32];    /* the block device the filesystem is on ("vda1", "dm-3"), "" if none */
	int probe_error;         /* 0, or -errno: why the device was not probed (-EACCES: no permission) */
	uint32_t probe_flags;    /* SWEEP_PROBE_CACHED, SWEEP_PROBE_BUSY */
	uint32_t probe_reads;    /* random reads timed; 0 when there was no probe */
	uint64_t probe_random_ns; /* 3 in 4 random 4 KiB reads took this or more (O_DIRECT, one at a time) */
	uint64_t probe_seq_ns;    /* time per 4 KiB of a sequential 1 MiB read */
	struct sweep_profile profile; /* what the library does on this device (decided with the class) */
};

/* Fill *ret for the filesystem holding the open file descriptor fd. */
SWEEP_EXPORT int sweep_fsinfo_fd(int fd, struct sweep_fsinfo *ret);
/* Same for a path (not following a final symlink). */
SWEEP_EXPORT int sweep_fsinfo_path(const char *path, struct sweep_fsinfo *ret);
/* The policy for a filesystem type (f_type magic). */
SWEEP_EXPORT enum sweep_order sweep_fsinfo_policy(uint64_t fs_magic);

/*
 * Force the device class of every filesystem this process looks at from
 * now on (HDD or SSD), or go back to deciding (AUTO). Beats SWEEP_DEVICE.
 */
SWEEP_EXPORT int sweep_device_force(enum sweep_device_class c);
/* "auto", "hdd", "ssd"; and back. Parse: 0 or -EINVAL. */
SWEEP_EXPORT const char *sweep_device_class_name(enum sweep_device_class c);
SWEEP_EXPORT int sweep_device_class_parse(const char *name, enum sweep_device_class *ret);
/* "default", "caller", "environment", "probe", "sysfs", "no-device". */
SWEEP_EXPORT const char *sweep_device_reason_name(enum sweep_device_reason r);
/*
 * One line for a person: the class and why, e.g. "hdd (probe of sda:
 * 3 in 4 random 4 KiB reads took 8.31 ms or more, sequential 0.027 ms per
 * 4 KiB, 32 reads)". Like
 * snprintf: the length it needed, or -EINVAL.
 */
SWEEP_EXPORT int sweep_device_explain(const struct sweep_fsinfo *fi, char *buf, size_t size);
/*
 * One line for a person: the profile, e.g. "plan physical, walk physical,
 * no walk threads, stat 64 at once, metascan hints+sweep, reader depth 128,
 * ring 16 MiB, prefetch" (fields the environment set say so). Like
 * snprintf: the length it needed, or -EINVAL.
 */
SWEEP_EXPORT int sweep_profile_explain(const struct sweep_fsinfo *fi, char *buf, size_t size);

/* A per-st_dev cache, so a walk asks once per filesystem. */
struct sweep_fscache;
SWEEP_EXPORT struct sweep_fscache *sweep_fscache_new(void);
SWEEP_EXPORT struct sweep_fscache *sweep_fscache_free(struct sweep_fscache *c);
/* Look up (and on a miss compute from fd) the info for dev; *ret points into the cache. */
SWEEP_EXPORT int sweep_fscache_get(struct sweep_fscache *c, uint64_t dev, int fd,
				   const struct sweep_fsinfo **ret);

#ifdef __cplusplus
}
#endif
#endif
