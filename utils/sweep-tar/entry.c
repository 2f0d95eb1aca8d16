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
 */
#include <errno.h>

#include "tar.h"

int tar_entry_fill(struct tar *t, const char *name, const char *path, const char *accpath, int fd,
		   const struct stat *st)
{
	int r, err;

	archive_entry_clear(t->entry);
	archive_entry_copy_pathname(t->entry, name);
	archive_entry_copy_sourcepath(t->entry, accpath);
	r = archive_read_disk_entry_from_file(t->disk, t->entry, fd, st);
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

int tar_write_link(struct tar *t, const char *name, const char *target, const struct stat *st)
{
	struct archive_entry *e = t->entry;
	const char *owner;
	int r;

	archive_entry_clear(e);
	archive_entry_copy_pathname(e, name);
	archive_entry_copy_stat(e, st);
	archive_entry_set_size(e, 0);
	archive_entry_copy_hardlink(e, target);
	owner = archive_read_disk_uname(t->disk, st->st_uid);
	if (owner)
		archive_entry_copy_uname(e, owner);
	owner = archive_read_disk_gname(t->disk, st->st_gid);
	if (owner)
		archive_entry_copy_gname(e, owner);
	r = tar_out_header(t, e);
	if (r != 0)
		return r < 0 ? r : 0;
	return tar_out_finish(t);
}
