/* SPDX-License-Identifier: MIT */
/*
 * -t (list) and -x (extract): the archive read in one stream through
 * libarchive, members handled in archive order.
 *
 * Extraction goes through archive_write_disk with bsdtar's secure flags,
 * whoever runs it: no member name with a ".." component
 * (ARCHIVE_EXTRACT_SECURE_NODOTDOT), no absolute name
 * (SECURE_NOABSOLUTEPATHS), and nothing written through a symlink met on
 * the way (SECURE_SYMLINKS: a member "l/x" after a member "l -> /etc" is
 * refused). Such a member is an error (exit status 2) and nothing of it is
 * written; the rest goes on, as bsdtar does. GNU tar strips a leading
 * "../" or "/" instead and extracts below the current directory; either
 * way nothing lands outside -C. As root the owner, mode (with set-id
 * bits), ACLs, xattrs and file flags are restored as well (GNU tar -p
 * --same-owner --xattrs --acls); otherwise mode minus umask and times, as
 * GNU tar without -p. Sparse members keep their holes: data is copied
 * block by block at the offsets the archive gives. Directory modes and
 * times are set at the end (libarchive's fixup list), so a read-only
 * directory is still filled and keeps its mtime.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "tar.h"

/* Is name selected by the operands (a member named so, or below one)? Marks the operand that matched. */
static bool selected(const struct tar_opts *o, const char *name, bool *matched)
{
	size_t nlen = strlen(name);

	while (nlen > 1 && name[nlen - 1] == '/')
		nlen--;
	if (o->nroots == 0)
		return true;
	for (size_t i = 0; i < o->nroots; i++) {
		const char *want = o->roots[i].path + o->roots[i].strip;
		size_t wlen = strlen(want);

		while (wlen > 1 && want[wlen - 1] == '/')
			wlen--;
		if (nlen < wlen || memcmp(name, want, wlen) != 0)
			continue;
		if (nlen == wlen || (!o->no_recursion && name[wlen] == '/')) {
			matched[i] = true;
			return true;
		}
	}
	return false;
}

/* GNU tar -tv's type letter and mode bits ("drwxr-xr-x", "hrw-r--r--" for a hard link). */
static void mode_string(struct archive_entry *e, char *m)
{
	mode_t mode = archive_entry_mode(e);
	static const char rwx[] = "rwxrwxrwx";

	switch (archive_entry_filetype(e)) {
	case AE_IFDIR: m[0] = 'd'; break;
	case AE_IFLNK: m[0] = 'l'; break;
	case AE_IFCHR: m[0] = 'c'; break;
	case AE_IFBLK: m[0] = 'b'; break;
	case AE_IFIFO: m[0] = 'p'; break;
	case AE_IFSOCK: m[0] = 's'; break;
	default: m[0] = archive_entry_hardlink(e) ? 'h' : '-'; break;
	}
	for (int i = 0; i < 9; i++)
		m[1 + i] = (mode & (0400 >> i)) ? rwx[i] : '-';
	if (mode & S_ISUID)
		m[3] = (mode & S_IXUSR) ? 's' : 'S';
	if (mode & S_ISGID)
		m[6] = (mode & S_IXGRP) ? 's' : 'S';
	if (mode & S_ISVTX)
		m[9] = (mode & S_IXOTH) ? 't' : 'T';
	m[10] = '\0';
}

/*
 * GNU tar -tv's line: the owner/group/size column grows to the widest seen
 * so far (from 19), the date is local "YYYY-MM-DD HH:MM".
 */
static void list_verbose(FILE *out, struct archive_entry *e)
{
	static int ugswidth = 19;
	char mode[11], size[48], user[32], group[32], date[64];
	const char *un = archive_entry_uname(e), *gn = archive_entry_gname(e);
	time_t mt = archive_entry_mtime(e);
	struct tm tm;
	int pad;

	mode_string(e, mode);
	if (!un || !*un)
		snprintf(user, sizeof(user), "%lld", (long long)archive_entry_uid(e));
	if (!gn || !*gn)
		snprintf(group, sizeof(group), "%lld", (long long)archive_entry_gid(e));
	if (archive_entry_filetype(e) == AE_IFCHR || archive_entry_filetype(e) == AE_IFBLK)
		snprintf(size, sizeof(size), "%llu,%llu", (unsigned long long)archive_entry_rdevmajor(e),
			 (unsigned long long)archive_entry_rdevminor(e));
	else
		snprintf(size, sizeof(size), "%lld", (long long)archive_entry_size(e));
	if (localtime_r(&mt, &tm))
		strftime(date, sizeof(date), "%Y-%m-%d %H:%M", &tm);
	else
		snprintf(date, sizeof(date), "%lld", (long long)mt);
	un = un && *un ? un : user;
	gn = gn && *gn ? gn : group;
	pad = (int)(strlen(un) + 1 + strlen(gn) + 1 + strlen(size));
	if (pad > ugswidth)
		ugswidth = pad;
	fprintf(out, "%s %s/%s %*s %-16s ", mode, un, gn, ugswidth - pad + (int)strlen(size), size, date);
	fputs(tar_printable(archive_entry_pathname(e)), out);
	if (archive_entry_filetype(e) == AE_IFLNK && archive_entry_symlink(e))
		fprintf(out, " -> %s", tar_printable(archive_entry_symlink(e)));
	else if (archive_entry_hardlink(e))
		fprintf(out, " link to %s", tar_printable(archive_entry_hardlink(e)));
	fputc('\n', out);
}

/*
 * libarchive 3.6 reads a pax time "-S.F" as -S + .F (see tar_fix_times()):
 * the time meant is -S - .F = (-S - 1) + (1 - .F). Times between -1 and 0
 * cannot be told from positive ones and stay as read.
 */
static void fix_times(struct archive_entry *e)
{
	if (archive_entry_mtime_is_set(e) && archive_entry_mtime(e) < 0 && archive_entry_mtime_nsec(e) > 0)
		archive_entry_set_mtime(e, archive_entry_mtime(e) - 1, 1000000000 - archive_entry_mtime_nsec(e));
	if (archive_entry_atime_is_set(e) && archive_entry_atime(e) < 0 && archive_entry_atime_nsec(e) > 0)
		archive_entry_set_atime(e, archive_entry_atime(e) - 1, 1000000000 - archive_entry_atime_nsec(e));
}

/* Data of the current member to disk, block by block at its offsets (holes stay holes). */
static int copy_data(struct archive *in, struct archive *disk)
{
	const void *buf;
	size_t len;
	la_int64_t off;
	int r;

	while ((r = archive_read_data_block(in, &buf, &len, &off)) == ARCHIVE_OK)
		if (archive_write_data_block(disk, buf, len, off) < ARCHIVE_WARN)
			return ARCHIVE_FAILED;
	return r == ARCHIVE_EOF ? ARCHIVE_OK : r;
}

/*
 * --strip-components: name without its first n components (as GNU tar
 * counts them: runs of '/' separate, "." is one), or NULL when nothing is
 * left (the member is then skipped).
 */
static const char *strip_components(const char *name, unsigned n)
{
	for (; n > 0; n--) {
		const char *s = strchr(name, '/');

		if (!s)
			return NULL;
		while (*s == '/')
			s++;
		name = s;
	}
	return *name ? name : NULL;
}

/* Set the entry's name (or hard-link target) to its stripped form; false: skip the member. */
static bool strip_entry(struct archive_entry *e, unsigned n)
{
	const char *name = strip_components(archive_entry_pathname(e), n);
	const char *link = archive_entry_hardlink(e);
	char *copy;

	if (!name)
		return false;
	if (link && !(link = strip_components(link, n)))
		return false; /* a hard link to a name that is stripped away: GNU tar skips it too */
	/* Copies first: the stripped names point into the entry's own strings. */
	if (link) {
		if (!(copy = strdup(link)))
			return false;
		archive_entry_set_hardlink(e, copy);
		free(copy);
	}
	if (!(copy = strdup(name)))
		return false;
	archive_entry_set_pathname(e, copy);
	free(copy);
	return true;
}

/*
 * lstat(2) of a member's name below the current directory (-C), following no
 * symlink on the way (sweep_open_beneath): a name reached through a symlink
 * is not looked at, here or by the disk writer, which refuses it. 0 or -1.
 */
static int lstat_member(const char *name, struct stat *st)
{
	size_t n = strlen(name);
	char *copy;
	int dfd, r;

	while (n > 1 && name[n - 1] == '/')
		n--;
	if (!(copy = strndup(name, n)))
		return -1;
	char *base = strrchr(copy, '/');
	if (base) {
		*base++ = '\0';
		dfd = sweep_open_beneath(AT_FDCWD, copy, O_PATH | O_DIRECTORY, 0);
	} else {
		base = copy;
		dfd = AT_FDCWD;
	}
	r = dfd == AT_FDCWD || dfd >= 0 ? fstatat(dfd, base, st, AT_SYMLINK_NOFOLLOW) : -1;
	if (dfd >= 0)
		close(dfd);
	free(copy);
	return r;
}

/*
 * -k and --skip-old-files: does the member's name exist already (anything
 * but a directory for a directory member)? Nothing is written on the
 * strength of this (the disk writer is told not to overwrite as well, for
 * a name that appears after this look).
 */
static bool exists_already(struct archive_entry *e)
{
	struct stat st;

	if (lstat_member(archive_entry_pathname(e), &st) != 0)
		return false;
	return !(S_ISDIR(st.st_mode) && archive_entry_filetype(e) == AE_IFDIR);
}

/* A hard-link member whose name is that file already: not in the way (GNU tar -k says nothing). */
static bool linked_already(struct archive_entry *e)
{
	const char *link = archive_entry_hardlink(e);
	struct stat st, target;

	return link && lstat_member(archive_entry_pathname(e), &st) == 0 && lstat_member(link, &target) == 0 &&
	       st.st_dev == target.st_dev && st.st_ino == target.st_ino;
}

/* n zero bytes to stdout: a hole of a sparse member under -O. 0 or -errno. */
static int zeros_to_stdout(uint64_t n)
{
	static const char zeros[65536];
	int r = 0;

	while (n > 0 && r == 0) {
		size_t k = n < sizeof(zeros) ? (size_t)n : sizeof(zeros);
		r = cli_write_all(STDOUT_FILENO, zeros, k);
		n -= k;
	}
	return r;
}

/* -O: the member's data to stdout, holes as zeros. 0, or -errno (-EIO: the archive failed). */
static int data_to_stdout(struct archive *in, struct archive_entry *e)
{
	const void *buf;
	size_t len;
	la_int64_t off, pos = 0;
	int r;

	while ((r = archive_read_data_block(in, &buf, &len, &off)) == ARCHIVE_OK) {
		if (off > pos && (r = zeros_to_stdout((uint64_t)(off - pos))) < 0)
			return r;
		if ((r = cli_write_all(STDOUT_FILENO, buf, len)) < 0)
			return r;
		pos = off + (la_int64_t)len;
	}
	if (r != ARCHIVE_EOF)
		return -EIO;
	return archive_entry_size(e) > pos ? zeros_to_stdout((uint64_t)(archive_entry_size(e) - pos)) : 0;
}

static int open_in(struct tar *t, struct archive **ret)
{
	const char *file = t->o->archive;
	struct archive *a = archive_read_new();
	int r;

	if (!a)
		return -ENOMEM;
	archive_read_support_filter_all(a);
	archive_read_support_format_tar(a);
	if (!file || strcmp(file, "-") == 0) {
		if (isatty(STDIN_FILENO)) {
			cli_msg("Refusing to read archive contents from terminal (missing -f option?)");
			cli_msg("Error is not recoverable: exiting now");
			archive_read_free(a);
			return -ENOTTY;
		}
		r = archive_read_open_fd(a, STDIN_FILENO, 64 * 1024);
	} else {
		r = archive_read_open_filename(a, file, 64 * 1024);
	}
	if (r != ARCHIVE_OK) {
		cli_msg("%s: Cannot open: %s", tar_printable(file ? file : "-"), archive_error_string(a));
		cli_msg("Error is not recoverable: exiting now");
		archive_read_free(a);
		return -EIO;
	}
	*ret = a;
	return 0;
}

static struct archive *open_disk(const struct tar_opts *o)
{
	struct archive *d = archive_write_disk_new();
	int flags = ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_SECURE_NODOTDOT |
		    ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS;

	if (!d)
		return NULL;
	if (geteuid() == 0)
		flags |= ARCHIVE_EXTRACT_OWNER | ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_ACL |
			 ARCHIVE_EXTRACT_XATTR | ARCHIVE_EXTRACT_FFLAGS;
	if (o->old_files != TAR_OLD_REPLACE)
		flags |= ARCHIVE_EXTRACT_NO_OVERWRITE;
	archive_write_disk_set_options(d, flags);
	archive_write_disk_set_standard_lookup(d);
	return d;
}

int tar_read_archive(struct tar *t, bool extract)
{
	const struct tar_opts *o = t->o;
	struct archive *in = NULL, *disk = NULL;
	struct archive_entry *e;
	bool *matched = calloc(o->nroots ? o->nroots : 1, sizeof(*matched));
	int r;

	t->status = TAR_OK;
	if (!matched)
		return -ENOMEM;
	/* The archive is named relative to where we started, the members to -C. */
	if (open_in(t, &in) < 0) {
		free(matched);
		return -EIO;
	}
	if (extract && o->extract_dir && chdir(o->extract_dir) != 0) {
		r = -errno;
		cli_msg("%s: Cannot open: %s", tar_printable(o->extract_dir), strerror(-r));
		cli_msg("Error is not recoverable: exiting now");
		archive_read_free(in);
		free(matched);
		return r;
	}
	if (extract && !o->to_stdout && !(disk = open_disk(o))) {
		archive_read_free(in);
		free(matched);
		return -ENOMEM;
	}
	while ((r = archive_read_next_header(in, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN) {
		const char *name = archive_entry_pathname(e);

		/*
		 * A name that is not valid UTF-8 (pax hdrcharset=BINARY, or
		 * GNU tar's raw bytes) comes as its bytes, which is exact:
		 * libarchive's note about the conversion is not a problem.
		 */
		if (r == ARCHIVE_WARN && !strstr(archive_error_string(in) ? archive_error_string(in) : "", "can't be converted"))
			tar_warn(t, name, "%s", archive_error_string(in));
		if (!name || !selected(o, name, matched))
			continue;
		fix_times(e);
		if (extract && o->strip_components && !strip_entry(e, o->strip_components))
			continue;
		if (!extract || o->verbose) {
			FILE *out = extract ? t->listing : stdout;
			if (o->verbose && !extract)
				list_verbose(out, e);
			else
				fprintf(out, "%s\n", tar_printable(name));
		}
		if (!extract)
			continue;
		if (o->to_stdout) {
			/* Regular files' data only, as GNU tar -O; a hard link member has none. */
			if (archive_entry_filetype(e) == AE_IFREG && !archive_entry_hardlink(e) &&
			    (r = data_to_stdout(in, e)) < 0) {
				cli_msg("write error: %s", strerror(-r));
				cli_msg("Error is not recoverable: exiting now");
				t->status = TAR_FATAL;
				break;
			}
			r = ARCHIVE_OK;
			continue;
		}
		if (o->old_files != TAR_OLD_REPLACE && exists_already(e)) {
			if (o->old_files == TAR_OLD_KEEP && !linked_already(e))
				tar_error(t, archive_entry_pathname(e), "Cannot open: %s", strerror(EEXIST));
			continue;
		}
		r = archive_write_header(disk, e);
		if (r == ARCHIVE_OK || r == ARCHIVE_WARN) {
			if (r == ARCHIVE_WARN)
				tar_warn(t, name, "%s", archive_error_string(disk));
			if (archive_entry_size(e) > 0)
				r = copy_data(in, disk);
			if (r < ARCHIVE_WARN && r != ARCHIVE_FATAL)
				tar_error(t, name, "Cannot write: %s", archive_error_string(disk));
			if (archive_write_finish_entry(disk) < ARCHIVE_WARN)
				tar_error(t, name, "%s", archive_error_string(disk));
		} else {
			/* Refused (a ".." component, an absolute name, a symlink on the way) or impossible. */
			tar_error(t, name, "Cannot open: %s", archive_error_string(disk));
		}
		if (r == ARCHIVE_FATAL)
			break;
	}
	if (r == ARCHIVE_FATAL) {
		cli_msg("%s", archive_error_string(in) ? archive_error_string(in) : "Unexpected EOF in archive");
		cli_msg("Error is not recoverable: exiting now");
		t->status = TAR_FATAL;
	}
	/* Directory modes and times, deferred to the end. */
	if (disk && archive_write_close(disk) != ARCHIVE_OK) {
		cli_msg("%s", archive_error_string(disk));
		t->status = TAR_FATAL;
	}
	for (size_t i = 0; i < o->nroots; i++)
		if (!matched[i]) {
			tar_error(t, o->roots[i].path + o->roots[i].strip, "Not found in archive");
		}
	archive_write_free(disk);
	archive_read_free(in);
	free(matched);
	return 0;
}
