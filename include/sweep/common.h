/* SPDX-License-Identifier: MIT */
/*
 * Common definitions for libsweep.
 *
 * Conventions (sweep(7)): functions return 0 or a positive count on
 * success and -errno on failure; the library never prints or exits;
 * every *_free() accepts NULL; out-parameters are untouched on failure;
 * option structs begin with their own size so they can grow.
 */
#ifndef SWEEP_COMMON_H
#define SWEEP_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(SWEEP_BUILDING_LIBRARY)
#define SWEEP_EXPORT __attribute__((visibility("default")))
#else
#define SWEEP_EXPORT
#endif

/*
 * A file's metadata in a layout of its own: struct stat's layout depends on
 * the caller's _FILE_OFFSET_BITS and libc, so public structures never carry
 * one. sweep_stat_from_stat() and sweep_stat_to_stat() convert, compiled in
 * the caller's own ABI.
 */
struct sweep_stat {
	uint64_t dev, ino, rdev;
	uint64_t size;
	uint64_t blocks;   /* 512-byte units */
	uint32_t mode, nlink, uid, gid;
	uint32_t blksize;
	uint32_t reserved;
	int64_t atime_sec, mtime_sec, ctime_sec;
	uint32_t atime_nsec, mtime_nsec, ctime_nsec;
	uint32_t reserved2;
};

static inline void sweep_stat_from_stat(struct sweep_stat *d, const struct stat *s)
{
	d->dev = (uint64_t)s->st_dev;
	d->ino = (uint64_t)s->st_ino;
	d->rdev = (uint64_t)s->st_rdev;
	d->size = s->st_size > 0 ? (uint64_t)s->st_size : 0;
	d->blocks = (uint64_t)s->st_blocks;
	d->mode = (uint32_t)s->st_mode;
	d->nlink = (uint32_t)s->st_nlink;
	d->uid = (uint32_t)s->st_uid;
	d->gid = (uint32_t)s->st_gid;
	d->blksize = (uint32_t)s->st_blksize;
	d->reserved = 0;
	d->atime_sec = (int64_t)s->st_atim.tv_sec;
	d->atime_nsec = (uint32_t)s->st_atim.tv_nsec;
	d->mtime_sec = (int64_t)s->st_mtim.tv_sec;
	d->mtime_nsec = (uint32_t)s->st_mtim.tv_nsec;
	d->ctime_sec = (int64_t)s->st_ctim.tv_sec;
	d->ctime_nsec = (uint32_t)s->st_ctim.tv_nsec;
	d->reserved2 = 0;
}

static inline void sweep_stat_to_stat(struct stat *d, const struct sweep_stat *s)
{
	*d = (struct stat){ 0 };
	d->st_dev = (dev_t)s->dev;
	d->st_ino = (ino_t)s->ino;
	d->st_rdev = (dev_t)s->rdev;
	d->st_size = (off_t)s->size;
	d->st_blocks = s->blocks;
	d->st_mode = (mode_t)s->mode;
	d->st_nlink = (nlink_t)s->nlink;
	d->st_uid = (uid_t)s->uid;
	d->st_gid = (gid_t)s->gid;
	d->st_blksize = s->blksize;
	d->st_atim.tv_sec = (time_t)s->atime_sec;
	d->st_atim.tv_nsec = (long)s->atime_nsec;
	d->st_mtim.tv_sec = (time_t)s->mtime_sec;
	d->st_mtim.tv_nsec = (long)s->mtime_nsec;
	d->st_ctim.tv_sec = (time_t)s->ctime_sec;
	d->st_ctim.tv_nsec = (long)s->ctime_nsec;
}

/* How a set of files is ordered before it is read. */
enum sweep_order {
	SWEEP_ORDER_AUTO = 0,     /* what the filesystem's policy says */
	SWEEP_ORDER_PHYSICAL = 1, /* by first physical byte (FIEMAP/FIBMAP), inode as tie-break */
	SWEEP_ORDER_INODE = 2,    /* by inode number */
	SWEEP_ORDER_NAME = 3,     /* by path, bytewise (what GNU tar --sort=name does) */
	SWEEP_ORDER_NONE = 4,     /* as discovered (readdir order) */
};

/* Name of an order ("physical", "inode", "name", "none", "auto"). */
SWEEP_EXPORT const char *sweep_order_name(enum sweep_order order);
/* Parse an order name; 0 or -EINVAL. */
SWEEP_EXPORT int sweep_order_parse(const char *name, enum sweep_order *ret_order);

/*
 * How I/O is submitted. AUTO probes io_uring at run time and falls back to
 * plain syscalls; the environment variable SWEEP_BACKEND=uring|syscall
 * overrides AUTO (so tests can cover both paths).
 */
enum sweep_backend {
	SWEEP_BACKEND_AUTO = 0,
	SWEEP_BACKEND_URING = 1,
	SWEEP_BACKEND_SYSCALL = 2,
};

/* Resolve AUTO (environment, then an io_uring probe) to URING or SYSCALL. */
SWEEP_EXPORT enum sweep_backend sweep_backend_resolve(enum sweep_backend requested);
/* "auto", "uring" or "syscall". */
SWEEP_EXPORT const char *sweep_backend_name(enum sweep_backend b);

/*
 * Open path below the directory dirfd without following a symlink anywhere
 * on the way (or at the end) and without leaving dirfd's tree: what every
 * libsweep read and write after a walk goes through (sweep_open_beneath(3)).
 * flags are open(2) flags (O_NOFOLLOW and O_CLOEXEC are added), mode is
 * used with O_CREAT or O_TMPFILE. Returns a descriptor, or -ELOOP when a
 * symlink stands in the way, -EXDEV for "..", -EINVAL for an absolute path,
 * or the -errno of the open.
 */
SWEEP_EXPORT int sweep_open_beneath(int dirfd, const char *path, int flags, unsigned mode);

/* Library version string, e.g. "0.1.0". */
SWEEP_EXPORT const char *sweep_version(void);

#ifdef __cplusplus
}
#endif
#endif
