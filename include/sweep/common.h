/* SPDX-License-Identifier: MIT */
/*
 * Common definitions for libsweep.
 *
 * Conventions (DESIGN.md §3): functions return 0 or a positive count on
 * success and -errno on failure; the library never prints or exits;
 * every *_free() accepts NULL; out-parameters are untouched on failure;
 * option structs begin with their own size so they can grow.
 */
#ifndef SWEEP_COMMON_H
#define SWEEP_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(SWEEP_BUILDING_LIBRARY)
#define SWEEP_EXPORT __attribute__((visibility("default")))
#else
#define SWEEP_EXPORT
#endif

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
