/* SPDX-License-Identifier: MIT */
/*
 * meta: copy the metadata of one file onto another, selectively: mode,
 * ownership, nanosecond times, extended attributes and POSIX ACLs. Shared
 * by the copy engine (sweep-cp) and sweep-sync, which also uses it alone
 * to fix the metadata of a destination whose data is already right.
 *
 * Order matters and is fixed here so every caller gets it right: owner
 * first (chown clears set-id bits and security.capability), then xattrs,
 * then mode/ACL, then times last (every other change moves ctime only, but
 * writing an xattr on some filesystems touches mtime).
 *
 * Failures are reported one by one through a callback and do not stop the
 * remaining steps, as cp does. What cp forgives is forgiven here too:
 * chown refused (EPERM/EINVAL) to a non-root caller is not an error (the
 * group alone is then tried), and a destination without xattr/ACL support
 * is only an error with META_STRICT when the source has something to copy.
 */
#ifndef SWEEP_META_H
#define SWEEP_META_H

#include <stdint.h>
#include <sys/stat.h>

/* What to preserve (a bit set). */
#define META_MODE   0x01u /* permission bits incl. set-id and sticky */
#define META_OWNER  0x02u /* uid and gid */
#define META_TIMES  0x04u /* atime and mtime, nanoseconds */
#define META_XATTR  0x08u /* extended attributes except the ACL ones (system.posix_acl_*) */
#define META_ACL    0x10u /* POSIX access ACL, and the default ACL of directories */
#define META_ALL    0x1fu
#define META_STRICT 0x100u /* report ENOTSUP for xattrs/ACLs the source has (cp --preserve=xattr) */

/* Which step failed, for messages. */
enum meta_op {
	META_OP_OWNER = 1, /* "failed to preserve ownership for 'x'" */
	META_OP_XATTR = 2, /* "setting attributes for 'x'" / reading them from the source */
	META_OP_ACL = 3,   /* "preserving ACL for 'x'" */
	META_OP_MODE = 4,  /* "preserving permissions for 'x'" */
	META_OP_TIMES = 5, /* "preserving times for 'x'" */
};

/*
 * One side of a copy. fd >= 0 is used where it can be (regular files and
 * directories opened by the caller); otherwise path is used without
 * following a final symlink (symlinks, FIFOs, devices, sockets).
 */
struct meta_ref {
	int fd;
	const char *path;
};

/* Called once per failed step; err is a negative errno. */
typedef void (*meta_error_fn)(enum meta_op op, int err, void *ctx);

/*
 * Make dst carry the metadata of the source whose stat is st, as selected
 * by what (META_*). The source ref is read for xattrs and ACLs only.
 * Without META_MODE nothing touches the mode; the caller set it on
 * creation. Returns 0, or the first error (-errno) after trying every step.
 */
int meta_copy(const struct meta_ref *src, const struct meta_ref *dst, const struct stat *st,
	      unsigned what, meta_error_fn on_error, void *ctx);

/* The name of a step for messages ("ownership", "xattrs", "ACL", "permissions", "times"). */
const char *meta_op_name(enum meta_op op);

#endif
