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
/* Tests: forget what this process measured. */
void sweep__device_forget(void);

#endif
