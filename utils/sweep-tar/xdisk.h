/* SPDX-License-Identifier: MIT */
/*
 * -x's disk writer (xdisk.c) and the member metadata it sets (xmeta.c).
 * libarchive reads the archive; everything written to disk goes through
 * descriptors held here, never through a path looked up from the top.
 */
#ifndef SWEEP_TAR_XDISK_H
#define SWEEP_TAR_XDISK_H

#include <stdbool.h>
#include <sys/stat.h>
#include <time.h>

#include <archive.h>
#include <archive_entry.h>

struct tar;

struct xattr_kv {
	char *name;
	void *val;
	size_t len;
};

/* A member's metadata, resolved (owner names to ids) when the member is read. */
struct xmeta {
	mode_t mode;             /* file type and permission bits as the archive has them */
	uid_t uid;
	gid_t gid;
	struct timespec ts[2];   /* atime, mtime; UTIME_OMIT where the archive has none */
	size_t nx;
	struct xattr_kv *x;      /* extended attributes (not the ACLs) */
	struct xattr_kv acl[2];  /* access, default: the kernel's raw form; val NULL = none */
	unsigned long fl_set, fl_clear; /* file flags (chattr) */
};

/* What is restored, and how (the options resolved for the user running). */
struct xmeta_ctx {
	struct tar *t;             /* for messages and the exit status */
	struct archive *lookup;    /* archive_write_disk: its cached name -> id lookups */
	bool same_owner;           /* --same-owner (root's default) */
	bool same_perms;           /* -p (root's default); else the mode less the umask */
	bool numeric;              /* --numeric-owner: ids as stored, names ignored */
	bool xattrs, acls, fflags;
	bool times;                /* not -m */
	mode_t umask;
};

int xmeta_from_entry(const struct xmeta_ctx *c, struct archive_entry *e, struct xmeta *m);
void xmeta_free(struct xmeta *m);
/*
 * Set m on the file fd (open on it; or, opath, an O_PATH descriptor of a
 * symlink, FIFO or device). Each failure is reported under name; returns
 * 0, or -errno when the owner or mode could not be set.
 */
int xmeta_apply(const struct xmeta_ctx *c, const struct xmeta *m, int fd, bool opath, const char *name);

struct xdisk;
/*
 * Extract below the directory dir (NULL: the current one), named as the
 * user named it and held open from now on. 0 or -errno after a message.
 */
int xdisk_open(const struct xmeta_ctx *c, const char *dir, struct xdisk **ret);
/*
 * Write the member e, its data read from in. Whatever fails is reported
 * (exit status 2) and the rest goes on. Returns libarchive's status of
 * reading the member's data: ARCHIVE_OK, or worse when the archive itself
 * failed there.
 */
int xdisk_member(struct xdisk *x, struct archive *in, struct archive_entry *e);
/* Every directory member's final metadata, through its descriptor; then free. NULL-safe. */
void xdisk_close(struct xdisk *x);

#endif
