/* SPDX-License-Identifier: MIT */
/*
 * order: put any list of paths into read order, for programs that already
 * take a list of files (tar -T, restic --files-from-raw, borg
 * --paths-from-stdin, scripts). Each path gets a sort key from its
 * filesystem's policy: its first physical byte (FIEMAP) where that pays,
 * its inode number where only that is known, or its place in the list
 * where sorting does not pay (tmpfs, network filesystems, SSD class).
 * Filesystems keep the order in which the list first names them.
 *
 * Keys compare the same across calls on one orderer, so a list too large
 * for memory can be ordered in sorted runs and merged (sweep-order does).
 */
#ifndef SWEEP_ORDER_H
#define SWEEP_ORDER_H

#include <sweep/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* sweep_order_opts.flags */
#define SWEEP_ORDER_FOLLOW 0x1u /* stat through a symlink in the list (default: the link itself) */

struct sweep_order_opts {
	size_t size;            /* sizeof(struct sweep_order_opts) */
	enum sweep_order order; /* AUTO: each filesystem's policy; PHYSICAL, INODE, NONE force one */
	unsigned flags;         /* SWEEP_ORDER_* */
};

/* Where a path sorts. Compare with sweep_order_key_cmp(). */
struct sweep_order_key {
	/*
	 * Numbered in order of first appearance: in physical order, the
	 * independent device the path's first byte lies on (a disk, or a
	 * striped set; a filesystem over several disks has several); in inode
	 * or list order, the filesystem. sweep_orderer_device() tells which
	 * disks a group is on.
	 */
	uint64_t group;
	uint64_t major;  /* the offset of the first byte on that device, inode number, or position */
	uint64_t minor;  /* inode number (tie-break) */
	uint64_t seq;    /* position in the list: the final, stable tie-break */
};

struct sweep_orderer;

SWEEP_EXPORT int sweep_orderer_new(const struct sweep_order_opts *opts, struct sweep_orderer **ret);
SWEEP_EXPORT struct sweep_orderer *sweep_orderer_free(struct sweep_orderer *o);
/*
 * The key of path, the seq'th of the list. 0, or -errno when the path
 * cannot be stat'ed (*ret untouched): such paths are the caller's to pass
 * through, after the others.
 */
SWEEP_EXPORT int sweep_orderer_key(struct sweep_orderer *o, const char *path, uint64_t seq,
				   struct sweep_order_key *ret);
/*
 * The disks a key's group lies on, for running one reader per disk
 * (sweep-order --split-by-device): a name for them into name (at most size
 * bytes with the NUL: "sdb", "md0", "loop3", "dm-2", "btrfs-1a2b3c4d",
 * "nodev-0-45" for a filesystem on no block device), and a number, the
 * same for every group that shares a disk with this one (those must be read
 * one after another, not side by side), as far as the paths keyed so far
 * tell: ask once the whole list is keyed. -EINVAL for a group not made.
 */
SWEEP_EXPORT int sweep_orderer_device(struct sweep_orderer *o, uint64_t group, char *name, size_t size);
/* <0, 0, >0 as a sorts before, with, after b. */
SWEEP_EXPORT int sweep_order_key_cmp(const struct sweep_order_key *a, const struct sweep_order_key *b);

/*
 * Order paths[0..n) in memory: ret_perm[0..n) gets the indexes of paths in
 * read order; paths that cannot be stat'ed come last, in list order, and
 * their number is returned (0 when all could be). -errno on failure.
 */
SWEEP_EXPORT int sweep_order_paths(const char *const *paths, size_t n, const struct sweep_order_opts *opts,
				   size_t *ret_perm);

#ifdef __cplusplus
}
#endif
#endif
