/* SPDX-License-Identifier: MIT */
/*
 * Member metadata through libarchive's archive_read_disk. What it takes
 * from where (libarchive 3.6, archive_read_disk_entry_from_file.c):
 *   - owner and group names: from the uid/gid, cached;
 *   - file flags, xattrs, access ACL, sparse map: from fd when given (the
 *     sparse map only lseeks SEEK_DATA/SEEK_HOLE: file data is never read
 *     here, and the reader reads by offset, so the file position does not
 *     matter), else from accpath;
 *   - symlink target and a directory's default ACL: always from accpath.
 * Callers make accpath short whatever the depth of the tree:
 * /proc/self/fd/DIRFD/NAME for an entry of an open directory, or
 * /proc/self/fd/FD for an open directory itself.
 *
 * Two of those probes are skipped where their answer is already known,
 * since they cost about ten system calls per file (measured with strace
 * on a 99k-file tree: 7 lseeks, an fgetxattr and an fstat for the ACL,
 * a flistxattr):
 *   - the sparse map: the reader found the file's data regions with
 *     SEEK_DATA/SEEK_HOLE when it opened it; they are turned into
 *     libarchive's sparse map exactly as its own probe would;
 *   - xattrs and ACLs: one flistxattr on the open fd says whether the
 *     inode has any extended attribute at all. POSIX ACLs are xattrs
 *     (system.posix_acl_access/default) and are listed too, so an empty
 *     list means no xattr and no ACL beyond the mode, and libarchive's
 *     own probes would find nothing. On error libarchive still probes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include "tar.h"

/* libarchive's sparse map for a regular file with these data regions (see its setup_sparse()). */
static void set_sparse(struct archive_entry *e, const struct stat *st, const struct sweep_extent *map, size_t n)
{
	if (st->st_size <= 0)
		return;
	if (n == 0) {
		/* No data at all: one empty data entry marks it fully sparse. */
		archive_entry_sparse_add_entry(e, 0, 0);
		return;
	}
	if (n == 1 && map[0].logical == 0 && map[0].length >= (uint64_t)st->st_size)
		return; /* not sparse */
	for (size_t i = 0; i < n; i++)
		archive_entry_sparse_add_entry(e, (la_int64_t)map[i].logical, (la_int64_t)map[i].length);
}

/* --xattrs-include, --xattrs-exclude: the entry keeps the xattrs they select. */
static void filter_xattrs(struct tar *t, struct archive_entry *e)
{
	struct kept {
		char *name;
		void *val;
		size_t len;
	} *v;
	int n = archive_entry_xattr_reset(e), k = 0;
	const char *name;
	const void *val;
	size_t len;

	if (n <= 0 || !(v = calloc((size_t)n, sizeof(*v))))
		return;
	while (k < n && archive_entry_xattr_next(e, &name, &val, &len) == ARCHIVE_OK) {
		if (!tar_xattr_selected(t->o, name, true))
			continue;
		v[k].name = strdup(name);
		v[k].val = malloc(len ? len : 1);
		if (v[k].val)
			memcpy(v[k].val, val, len);
		v[k++].len = len;
	}
	archive_entry_xattr_clear(e);
	for (int i = 0; i < k; i++) {
		if (v[i].name && v[i].val)
			archive_entry_xattr_add_entry(e, v[i].name, v[i].val, v[i].len);
		free(v[i].name);
		free(v[i].val);
	}
	free(v);
}

void tar_entry_owner(struct tar *t, struct archive_entry *e)
{
	/* --numeric-owner: ids only, as GNU tar (empty uname and gname fields). */
	if (t->o->numeric_owner) {
		archive_entry_set_uname(e, NULL);
		archive_entry_set_gname(e, NULL);
	}
}

int tar_entry_fill(struct tar *t, const char *name, const char *path, const char *accpath, int fd,
		   const struct sweep_stat *sst, const struct tar_data_map *dm)
{
	int flags = 0, r, err;
	struct stat stbuf, *st = &stbuf; /* libarchive takes a struct stat */

	sweep_stat_to_stat(st, sst);

	archive_entry_clear(t->entry);
	archive_entry_copy_pathname(t->entry, name);
	archive_entry_copy_sourcepath(t->entry, accpath);
	if (fd >= 0 && flistxattr(fd, NULL, 0) == 0)
		flags |= ARCHIVE_READDISK_NO_XATTR | ARCHIVE_READDISK_NO_ACL;
	/* --no-xattrs, --no-acls: stored by default, as GNU tar --xattrs --acls. */
	if (t->o->xattrs == 0)
		flags |= ARCHIVE_READDISK_NO_XATTR;
	if (t->o->acls == 0)
		flags |= ARCHIVE_READDISK_NO_ACL;
	if (dm)
		flags |= ARCHIVE_READDISK_NO_SPARSE;
	if (flags != t->disk_flags) {
		archive_read_disk_set_behavior(t->disk, flags);
		t->disk_flags = flags;
	}
	r = archive_read_disk_entry_from_file(t->disk, t->entry, fd, st);
	if (dm && r >= ARCHIVE_WARN && S_ISREG(st->st_mode))
		set_sparse(t->entry, st, dm->map, dm->n);
	if (r >= ARCHIVE_WARN && (t->o->nxattr_include || t->o->nxattr_exclude || t->o->pax_option))
		filter_xattrs(t, t->entry);
	/* --transform applies to symlink targets too (unless its flags say S). */
	if (r >= ARCHIVE_WARN && S_ISLNK(st->st_mode) && tar_transforms() && archive_entry_symlink(t->entry)) {
		char *x = tar_transform(archive_entry_symlink(t->entry), TAR_XFORM_SYMLINK);
		if (x)
			archive_entry_copy_symlink(t->entry, x);
		free(x);
	}
	tar_entry_owner(t, t->entry);
	/*
	 * With an extended ACL, libarchive's mode carries the ACL's group
	 * entry where stat has the mask (it ties the two; setting one sets
	 * the other). Extraction restores both exactly; only tar --compare
	 * sees a different mode.
	 */
	if (r == ARCHIVE_OK)
		return 0;
	err = archive_errno(t->disk);
	if (r == ARCHIVE_WARN) {
		/* The member is still stored; an xattr or ACL may be missing. */
		tar_warn(t, path, "%s", archive_error_string(t->disk));
		return 0;
	}
	tar_error(t, path, "%s", archive_error_string(t->disk));
	return err > 0 ? -err : -EIO;
}

const char *tar_accpath(struct tar *t, int dirfd, const char *at_name, const char *path, char *buf, size_t len)
{
	if (!t->proc_fd || dirfd < 0)
		return path;
	snprintf(buf, len, "/proc/self/fd/%d%s%s", dirfd, at_name ? "/" : "", at_name ? at_name : "");
	return buf;
}

int tar_write_link(struct tar *t, const char *name, const struct link_rec *rec, const struct sweep_stat *sst)
{
	struct archive_entry *e = t->entry;
	struct stat stbuf, *st = &stbuf;
	const char *owner;
	int r;

	sweep_stat_to_stat(st, sst);
	archive_entry_clear(e);
	archive_entry_copy_pathname(e, name);
	archive_entry_copy_stat(e, st);
	archive_entry_set_size(e, 0);
	tar_note_link_target(t, rec->target_prefix);
	archive_entry_copy_hardlink(e, rec->target);
	owner = archive_read_disk_uname(t->disk, st->st_uid);
	if (owner)
		archive_entry_copy_uname(e, owner);
	owner = archive_read_disk_gname(t->disk, st->st_gid);
	if (owner)
		archive_entry_copy_gname(e, owner);
	tar_entry_owner(t, e);
	r = tar_out_header(t, e);
	if (r != 0)
		return r < 0 ? r : 0;
	return tar_out_finish(t);
}
