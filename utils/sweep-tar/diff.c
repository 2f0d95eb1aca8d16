/* SPDX-License-Identifier: MIT */
/*
 * -d (--diff, --compare), and -W (--verify) after -c, -r, -u: each member
 * compared with the file of its name, as GNU tar compares them
 * (src/compare.c): type, mode, owner, mtime, size and contents of regular
 * files, holes of sparse ones, targets of symlinks, the inode of hard
 * links, device numbers. Each difference is a line "NAME: WHAT differs" on
 * the listing stream, exit status 1; a file that cannot be looked at is a
 * warning (missing) or an error (exit 2).
 *
 * Nothing is written. The file is looked at below the -C in force without
 * following a symlink at its own name (GNU tar's O_NOFOLLOW), through the
 * descriptor that was opened, so what is compared is one file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "tar.h"

#define DIFF_BLOCK (64 * 1024)

/* GNU tar's report_difference: "NAME: message" on the listing, exit status 1. */
static void __attribute__((format(printf, 3, 4))) differs(struct tar *t, const char *name, const char *fmt, ...)
{
	FILE *out = t->listing ? t->listing : stdout;
	va_list ap;

	if (t->status < TAR_DIFFERS)
		t->status = TAR_DIFFERS;
	if (!fmt)
		return;
	fflush(stdout);
	fprintf(out, "%s: ", tar_printable(name));
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	fputc('\n', out);
}

/* The file's status, not following a symlink at its name; false after GNU tar's words. */
static bool look(struct tar *t, int dirfd, const char *name, const char *shown, struct stat *st)
{
	if (fstatat(dirfd, name, st, t->o->dereference ? 0 : AT_SYMLINK_NOFOLLOW) == 0)
		return true;
	if (errno == ENOENT)
		tar_warn(t, shown, "Warning: Cannot stat: %s", strerror(errno));
	else
		tar_error(t, shown, "Cannot stat: %s", strerror(errno));
	if (t->status < TAR_DIFFERS)
		t->status = TAR_DIFFERS;
	return false;
}

static bool all_zero(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* Bytes of the file at off: n, fewer at its end, -1 after a message. */
static ssize_t read_at(struct tar *t, int fd, char *buf, size_t n, off_t off, const char *shown)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = pread(fd, buf + got, n - got, off + (off_t)got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			tar_error(t, shown, "Read error at byte %lld, while reading %zu bytes: %s", (long long)(off + (off_t)got),
				  n - got, strerror(errno));
			return -1;
		}
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

/*
 * The member's data against the file's. A sparse member: its holes must
 * read as zeros up to its last data region (GNU tar's sparse_diff_file).
 * Returns libarchive's status of reading the data.
 */
static int compare_data(struct tar *t, struct archive *in, struct archive_entry *e, int fd, const char *name)
{
	bool sparse = archive_entry_sparse_count(e) > 0, same = true;
	const void *blk;
	size_t len;
	la_int64_t off, pos = 0;
	char *buf = malloc(DIFF_BLOCK);
	int r;

	if (!buf) {
		archive_read_data_skip(in);
		tar_error(t, name, "%s", strerror(ENOMEM));
		return ARCHIVE_OK;
	}
	while ((r = archive_read_data_block(in, &blk, &len, &off)) == ARCHIVE_OK) {
		tar_checkpoint_in(t, in);
		if (!same)
			continue; /* read on: the archive goes on after this member */
		/* A hole before this block. */
		for (la_int64_t h = pos; same && sparse && h < off;) {
			size_t want = off - h < DIFF_BLOCK ? (size_t)(off - h) : DIFF_BLOCK;
			ssize_t k = read_at(t, fd, buf, want, h, name);
			if (k < 0)
				same = false, differs(t, name, NULL);
			else if (k == 0)
				same = false, differs(t, name, "Size differs");
			else if (!all_zero(buf, (size_t)k))
				same = false, differs(t, name, "File fragment at %lld is not a hole", (long long)h);
			h += k > 0 ? k : 0;
		}
		for (size_t done = 0; same && done < len;) {
			size_t want = len - done < DIFF_BLOCK ? len - done : DIFF_BLOCK;
			ssize_t k = read_at(t, fd, buf, want, off + (la_int64_t)done, name);
			if (k < 0)
				same = false, differs(t, name, NULL);
			else if ((size_t)k < want && sparse)
				same = false, differs(t, name, "Size differs");
			else if ((size_t)k < want)
				same = false, differs(t, name, "Could only read %zu of %zu bytes", (size_t)k, want);
			else if (memcmp(buf, (const char *)blk + done, want) != 0)
				same = false, differs(t, name, "Contents differ");
			done += want;
		}
		pos = off + (la_int64_t)len;
	}
	free(buf);
	return r == ARCHIVE_EOF ? ARCHIVE_OK : r;
}

static bool mode_differs(struct archive_entry *e, const struct stat *st)
{
	return (archive_entry_mode(e) & 07777) != (st->st_mode & 07777);
}

static int diff_file(struct tar *t, struct archive *in, struct archive_entry *e, int dirfd, const char *rel,
		     const char *name)
{
	struct stat st, fst;
	int fd, r;

	if (!look(t, dirfd, rel, name, &st))
		return ARCHIVE_OK;
	if (!S_ISREG(st.st_mode)) {
		differs(t, name, "File type differs");
		return ARCHIVE_OK;
	}
	if (mode_differs(e, &st))
		differs(t, name, "Mode differs");
	if ((uid_t)archive_entry_uid(e) != st.st_uid)
		differs(t, name, "Uid differs");
	if ((gid_t)archive_entry_gid(e) != st.st_gid)
		differs(t, name, "Gid differs");
	/* Nanoseconds count where the header can hold them: pax (GNU tar's NS_PRECISION_FORMAT_MASK). */
	bool ns = (archive_format(in) & ARCHIVE_FORMAT_BASE_MASK) == ARCHIVE_FORMAT_TAR &&
		  (archive_format(in) == ARCHIVE_FORMAT_TAR_PAX_INTERCHANGE ||
		   archive_format(in) == ARCHIVE_FORMAT_TAR_PAX_RESTRICTED);
	if (archive_entry_mtime(e) != st.st_mtim.tv_sec || (ns && archive_entry_mtime_nsec(e) != st.st_mtim.tv_nsec))
		differs(t, name, "Mod time differs");
	if (archive_entry_size(e) != st.st_size) {
		differs(t, name, "Size differs");
		return ARCHIVE_OK;
	}
	fd = openat(dirfd, rel, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (t->o->dereference ? 0 : O_NOFOLLOW));
	if (fd < 0) {
		tar_error(t, name, "Cannot open: %s", strerror(errno));
		differs(t, name, NULL);
		return ARCHIVE_OK;
	}
	/* What was opened is what was looked at (nothing swapped in between). */
	if (fstat(fd, &fst) != 0 || fst.st_dev != st.st_dev || fst.st_ino != st.st_ino) {
		differs(t, name, "File type differs");
		close(fd);
		return ARCHIVE_OK;
	}
	r = compare_data(t, in, e, fd, name);
	close(fd);
	return r;
}

static void diff_link(struct tar *t, struct archive_entry *e, int dirfd, const char *rel, const char *name)
{
	const char *target = archive_entry_hardlink(e);
	char *trel = tar_diff_relname(t, target);
	struct stat a, b;

	if (trel && look(t, dirfd, rel, name, &a) && look(t, dirfd, trel, target, &b) &&
	    (a.st_dev != b.st_dev || a.st_ino != b.st_ino))
		differs(t, name, "Not linked to %s", tar_printable(target));
	free(trel);
}

static void diff_symlink(struct tar *t, struct archive_entry *e, int dirfd, const char *rel, const char *name)
{
	const char *target = archive_entry_symlink(e) ? archive_entry_symlink(e) : "";
	size_t len = strlen(target);
	char *buf = malloc(len + 2);
	ssize_t n;

	if (!buf) {
		tar_error(t, name, "%s", strerror(ENOMEM));
		return;
	}
	n = readlinkat(dirfd, rel, buf, len + 1);
	if (n < 0) {
		if (errno == ENOENT)
			tar_warn(t, name, "Warning: Cannot readlink: %s", strerror(errno));
		else
			tar_error(t, name, "Cannot readlink: %s", strerror(errno));
		differs(t, name, NULL);
	} else if ((size_t)n != len || memcmp(buf, target, len) != 0) {
		differs(t, name, "Symlink differs");
	}
	free(buf);
}

static void diff_special(struct tar *t, struct archive_entry *e, int dirfd, const char *rel, const char *name)
{
	mode_t type = archive_entry_filetype(e);
	struct stat st;

	if (!look(t, dirfd, rel, name, &st))
		return;
	if ((st.st_mode & S_IFMT) != type) {
		differs(t, name, "File type differs");
		return;
	}
	if ((type == AE_IFCHR || type == AE_IFBLK) && st.st_rdev != archive_entry_rdev(e)) {
		differs(t, name, "Device number differs");
		return;
	}
	if (mode_differs(e, &st))
		differs(t, name, "Mode differs");
}

static void diff_dir(struct tar *t, struct archive_entry *e, int dirfd, const char *rel, const char *name)
{
	struct stat st;

	if (!look(t, dirfd, rel, name, &st))
		return;
	if (!S_ISDIR(st.st_mode))
		differs(t, name, "File type differs");
	else if (mode_differs(e, &st))
		differs(t, name, "Mode differs");
}

char *tar_diff_relname(struct tar *t, const char *name)
{
	const char *p = name;
	size_t n;

	/* -P: an absolute name is that file (openat ignores the directory then); else below -C. */
	while (*p == '/' && !t->o->absolute_names)
		p++;
	n = strlen(p);
	while (n > 1 && p[n - 1] == '/')
		n--;
	return n ? strndup(p, n) : strdup(".");
}

int tar_diff_member(struct tar *t, struct archive *in, struct archive_entry *e, int dirfd)
{
	const char *name = archive_entry_pathname(e);
	char *rel = tar_diff_relname(t, name);
	int r = ARCHIVE_OK;

	if (!rel) {
		tar_error(t, name, "%s", strerror(ENOMEM));
		return ARCHIVE_OK;
	}
	if (archive_entry_hardlink(e)) {
		diff_link(t, e, dirfd, rel, name);
	} else {
		switch (archive_entry_filetype(e)) {
		case AE_IFREG:
			r = diff_file(t, in, e, dirfd, rel, name);
			break;
		case AE_IFDIR:
			diff_dir(t, e, dirfd, rel, name);
			break;
		case AE_IFLNK:
			diff_symlink(t, e, dirfd, rel, name);
			break;
		case AE_IFCHR:
		case AE_IFBLK:
		case AE_IFIFO:
			diff_special(t, e, dirfd, rel, name);
			break;
		default:
			tar_error(t, name, "Unknown file type, diffed as normal file");
			r = diff_file(t, in, e, dirfd, rel, name);
			break;
		}
	}
	free(rel);
	return r;
}
