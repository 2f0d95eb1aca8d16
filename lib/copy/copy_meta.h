/* SPDX-License-Identifier: MIT */
/*
 * Copying the metadata of one file onto another, selectively: mode,
 * ownership, nanosecond times, extended attributes and POSIX ACLs. Library
 * internal; the copy engine and sweep_copy_attrs() use it.
 *
 * Nothing here takes a path from the caller. A file is reached through its
 * own descriptor (regular files, directories) or as a name in a directory
 * descriptor that is never followed at the end (symlinks, FIFOs, devices):
 * fchownat/utimensat with AT_SYMLINK_NOFOLLOW, fchmodat with
 * AT_SYMLINK_NOFOLLOW (glibc does it through an O_PATH descriptor), and the
 * l*xattr calls on /proc/self/fd/DIRFD/NAME.
 *
 * Order matters and is fixed here: owner first (chown clears set-id bits and
 * security.capability), then xattrs, then mode/ACL, then times last (other
 * changes move ctime only, but writing an xattr can touch mtime).
 *
 * Failures are reported one by one and do not stop the remaining steps, as
 * cp does. What cp forgives is forgiven here: chown refused (EPERM/EINVAL)
 * to a non-root caller (the group alone is then tried), and a destination
 * without xattr/ACL support unless SWEEP_PRESERVE_STRICT.
 */
#ifndef SWEEP_COPY_META_H
#define SWEEP_COPY_META_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sweep/copy.h>

/* One side of a metadata copy. */
struct meta_ref {
	int fd;           /* the file itself, open (not O_PATH), or -1 */
	int dirfd;        /* when fd is -1: the entry name in the directory dirfd, never followed */
	const char *name;
	/* source only: attributes captured earlier (sweep__meta_capture), used instead of reading */
	const struct meta_blob *blob;
	/*
	 * destination only: a regular file this run has just made (no set-id
	 * bits, no ACL but one inherited from its directory): its mode and
	 * access ACL can be set in one call
	 */
	bool made;
	/* destination only: the owner and group it is known to have (made as them, see copy_write.c) */
	bool owner_known;
	uint32_t uid, gid;
};

/* A file's extended attributes (ACLs included), captured to be applied later. */
struct meta_blob;

typedef void (*meta_error_fn)(enum sweep_copy_meta op, int err, void *ctx);

/*
 * Make dst carry the metadata of the source whose stat is st, as selected by
 * what (SWEEP_PRESERVE_*), the xattrs o->xattr_wanted leaves out aside (o
 * may be NULL). The source ref is read for xattrs and ACLs only.
 * Returns 0, or the first error (-errno) after trying every step.
 */
int sweep__meta_copy(const struct meta_ref *src, const struct meta_ref *dst, const struct sweep_stat *st,
	      unsigned what, const struct sweep_copy_opts *o, meta_error_fn on_error, void *ctx);

/*
 * Read src's xattrs (SWEEP_PRESERVE_XATTR) and ACLs (SWEEP_PRESERVE_ACL) now.
 * *ret is a blob (empty when it has none), or NULL when what asks for neither.
 */
int sweep__meta_capture(const struct meta_ref *src, unsigned what, bool is_dir, struct meta_blob **ret);
struct meta_blob *sweep__meta_blob_free(struct meta_blob *b);
/*
 * copy_fake.c, SWEEP_PRESERVE_FAKE_SUPER (rsync's --fake-super; the names
 * xattrs get: sweep_copy_fake_xattr_name(3)): whether a
 * destination xattr stays though the source lacks it; a placeholder regular
 * file (holding content, a symlink's target, when not NULL); and the
 * wanted type, mode, device and owner of st set as far as the real file
 * allows, the rest recorded in user.rsync.%stat. 0 or -errno.
 */
bool sweep__fake_keep_xattr(const char *name);
int sweep__fake_make(int dirfd, const char *tmp, const char *content);
int sweep__fake_stat(const struct meta_ref *dst, const struct sweep_stat *st, unsigned what);

/* A blob of a supplied source's attributes (those what asks for), as sweep__meta_capture() makes one. */
int sweep__meta_blob_from(const struct sweep_copy_xattr *x, size_t n, unsigned what, bool is_dir, struct meta_blob **ret);

/* Remove from dst the xattrs (and ACLs) that src lacks: copying only adds. Errors are ignored. */
void sweep__meta_prune(const struct meta_ref *src, const struct meta_ref *dst, bool xattrs, bool acls, bool fake,
		       const struct sweep_copy_opts *o);

/* What the xattr calls use for a name in a directory: /proc/self/fd/DIRFD/NAME. */
const char *sweep__meta_at_path(int dirfd, const char *name, char *buf, size_t len);

#endif
