/* SPDX-License-Identifier: MIT */
/* fsinfo: what filesystem and device a path lives on, and the policy that follows. */
#ifndef SWEEP_FSINFO_H
#define SWEEP_FSINFO_H

#include <sweep/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sweep_fsinfo {
	uint64_t dev;            /* st_dev of the filesystem */
	uint64_t fs_magic;       /* f_type from fstatfs */
	char fs_name[16];        /* "ext4", "xfs", "btrfs", "tmpfs", ... or "unknown" */
	uint32_t block_size;     /* filesystem block size (f_bsize) */
	int rotational;          /* 1 rotational, 0 not, -1 unknown (after following loop/dm/partitions) */
	char disk[32];           /* name of the underlying disk in /sys/block, "" if none */
	enum sweep_order policy; /* the order to use: PHYSICAL, INODE or NONE */
};

/* Fill *ret for the filesystem holding the open file descriptor fd. */
SWEEP_EXPORT int sweep_fsinfo_fd(int fd, struct sweep_fsinfo *ret);
/* Same for a path (not following a final symlink). */
SWEEP_EXPORT int sweep_fsinfo_path(const char *path, struct sweep_fsinfo *ret);
/* The policy for a filesystem type (f_type magic). */
SWEEP_EXPORT enum sweep_order sweep_fsinfo_policy(uint64_t fs_magic);

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
