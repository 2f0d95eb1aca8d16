/* SPDX-License-Identifier: MIT */
/*
 * copy, stage 3 of 4 (write): one regular file's copy in its destination
 * directory, on the caller's thread or on the writer thread. Nothing here
 * reports: what fails is written into the copy (struct fcopy) for the
 * settle stage, so the two threads run the same code.
 *
 * A copy is an O_TMPFILE in its destination directory: it has no name until
 * it is complete, so an interrupted run leaves nothing behind. Where the
 * filesystem has no O_TMPFILE, it is a fresh name made with O_EXCL, removed
 * again on failure (by this run only: nothing else is ever removed). Just
 * before the copy is put in place its directory is looked up again beneath
 * the destination root, never through a symlink, and the copy is named
 * through that descriptor: an unnamed copy in the directory that stands at
 * the path now, a named temporary only if that is the directory it was
 * made in (one replaced meanwhile is an error for the file, never
 * followed). See commit().
 *
 * A FIFO or a device the caller named as the destination is written into
 * instead (cp f /dev/null, cp f fifo): the stream gets the data in order,
 * holes as zeros, and keeps its own metadata.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "copy_internal.h"

struct fcopy *sweep__write_start(struct fcopy *f, const struct qitem *q)
{
	memset(f, 0, sizeof(*f));
	f->q = q;
	f->tmpfd = f->dirfd = -1;
	return f;
}

void sweep__write_fail(struct fcopy *f, enum sweep_copy_op op, int err)
{
	if (!f->err) {
		f->err = err;
		f->err_op = op;
	}
}

static void meta_failed(enum sweep_copy_meta op, int err, void *ctx)
{
	struct fcopy *f = ctx;

	if (sweep__grow(&f->mfail, &f->capmfail, f->nmfail + 1, sizeof(*f->mfail), 4) == 0)
		f->mfail[f->nmfail++] = (struct meta_fail){ .op = op, .err = err };
}

static bool tmpfile_unsupported(int err)
{
	return err == EOPNOTSUPP || err == EISDIR || err == EINVAL || err == ENOENT;
}

/* The copy's file: unnamed (O_TMPFILE) where the filesystem allows it, else a fresh name. */
static int make_temp(struct sweep_copy *c, struct fcopy *f)
{
	char tmp[32];

	/* Atomic: the writer thread makes copies too. */
	if (!__atomic_load_n(&c->no_tmpfile, __ATOMIC_RELAXED)) {
		int fd = openat(f->dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
		if (fd >= 0) {
			f->tmpfd = fd;
			return 0;
		}
		if (!tmpfile_unsupported(errno))
			return -errno;
		__atomic_store_n(&c->no_tmpfile, true, __ATOMIC_RELAXED);
	}
	for (int tries = 0; tries < 100; tries++) {
		sweep__dest_tmp_name(tmp);
		int fd = openat(f->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0) {
			if (!(f->tmpname = strdup(tmp))) {
				unlinkat(f->dirfd, tmp, 0);
				close(fd);
				return -ENOMEM;
			}
			f->tmpfd = fd;
			return 0;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* The FIFO or device at the destination, opened for writing (a FIFO waits for its reader, as with cp). */
static int open_into(struct fcopy *f)
{
	struct stat st;
	int fd = openat(f->dirfd, f->name, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !(S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))) {
		close(fd);
		return -ESTALE; /* replaced since it was planned: never written in place */
	}
	f->tmpfd = fd;
	return 0;
}

/*
 * As cp: with --sparse=always, and with auto for a source that has holes,
 * zero blocks of the destination's block size become holes (so the copy is
 * as sparse as the source even where block sizes differ). 0: none.
 */
static size_t punch_size(const struct sweep_copy *c, bool dense, int fd)
{
	struct stat st;

	if (c->o.sparse == SWEEP_COPY_SPARSE_ALWAYS || (c->o.sparse == SWEEP_COPY_SPARSE_AUTO && !dense))
		return fstat(fd, &st) == 0 && st.st_blksize > 0 ? (size_t)st.st_blksize : 4096;
	return 0;
}

#if SWEEP_TEST_HOOKS
/*
 * Test builds only: SWEEP_TEST_COPY_EMFILE=N makes every Nth copy's first
 * try run out of descriptors, "always" every try of every copy (the retry
 * once the batch is read, and its report, are what the tests look at).
 */
static bool test_emfile(const struct fcopy *f)
{
	static unsigned long n;
	const char *e = getenv("SWEEP_TEST_COPY_EMFILE");

	if (!e || !*e)
		return false;
	if (!strcmp(e, "always"))
		return true;
	unsigned long every = strtoul(e, NULL, 10);
	return !f->q->retried && every && __atomic_add_fetch(&n, 1, __ATOMIC_RELAXED) % every == 0;
}
#endif

/*
 * The copy made as an O_TMPFILE in the thread's cached directory (the
 * files of one directory come one after another): no lookup, no descriptor
 * to close. A cached directory removed meanwhile refuses it: -EAGAIN, and
 * the caller looks it up afresh. An unnamed file is harmless wherever it
 * is; it gets its name only in a directory looked up again (commit()).
 */
static int cached_tmpfile(struct sweep_copy *c, struct fcopy *f)
{
	int dfd = sweep__dest_cache_dir(c, f->dc, f->q->dst, &f->name);

	if (dfd < 0)
		return dfd;
#if SWEEP_TEST_HOOKS
	if (test_emfile(f))
		return -EMFILE;
#endif
	int fd = openat(dfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0) {
		sweep__dest_cache_drop(f->dc);
		return -EAGAIN;
	}
	f->tmpfd = fd;
	f->dir_st = f->dc->st;
	f->dir_cached = f->dc->hit;
	return 0;
}

int sweep__write_open(struct sweep_copy *c, struct fcopy *f, bool dense)
{
	int rc;

	if (f->dc && !f->q->place && !f->q->into && !__atomic_load_n(&c->no_tmpfile, __ATOMIC_RELAXED)) {
		rc = cached_tmpfile(c, f);
		if (rc == 0)
			f->punch = punch_size(c, dense, f->tmpfd);
		if (rc != -EAGAIN) {
			if (rc < 0)
				sweep__write_fail(f, SWEEP_COPY_OP_CREATE, rc);
			return rc;
		}
	}
	f->dirfd = sweep__dest_item_dir(c, f->q, &f->name);
#if SWEEP_TEST_HOOKS
	if (f->dirfd >= 0 && test_emfile(f)) {
		close(f->dirfd);
		f->dirfd = -EMFILE;
	}
#endif
	if (f->dirfd < 0) {
		rc = f->dirfd;
	} else if (f->q->into) {
		rc = open_into(f);
	} else {
		rc = fstat(f->dirfd, &f->dir_st) < 0 ? -errno : make_temp(c, f);
		if (rc == 0)
			f->punch = punch_size(c, dense, f->tmpfd);
	}
	/* An unnamed copy needs its directory again only to be named, looked up afresh then: one descriptor less. */
	if (rc == 0 && !f->tmpname && f->dirfd >= 0 && !f->q->into) {
		close(f->dirfd);
		f->dirfd = -1;
	}
	if (rc < 0)
		sweep__write_fail(f, SWEEP_COPY_OP_CREATE, rc);
	return rc;
}

static bool all_zero(const char *p, size_t n)
{
	return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

/* Write buf, leaving aligned all-zero blocks of blk bytes as holes. */
static int write_sparse(struct writer *w, int fd, const char *buf, size_t len, uint64_t off, size_t blk,
			uint64_t tag)
{
	size_t i = 0;

	while (i < len) {
		size_t j = i;
		bool zero = true;
		/* Extend a run of blocks that are all zero, or all not. */
		while (j < len) {
			size_t n = blk - (size_t)((off + j) % blk);
			if (n > len - j)
				n = len - j;
			bool z = all_zero(buf + j, n);
			if (j > i && z != zero)
				break;
			zero = z;
			j += n;
		}
		if (!zero) {
			int rc = sweep__writer_write(w, fd, buf + i, j - i, off + i, tag);
			if (rc < 0)
				return rc;
		}
		i = j;
	}
	return 0;
}

/* write() until done, on a stream (no offsets): 0 or -errno. */
static int write_stream(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -ENOSPC;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* A stream's bytes up to off: zeros where the source has a hole. */
static int stream_fill(struct fcopy *f, uint64_t off)
{
	static const char zeros[65536];

	while (f->wpos < off) {
		size_t n = off - f->wpos < sizeof(zeros) ? (size_t)(off - f->wpos) : sizeof(zeros);
		int rc = write_stream(f->tmpfd, zeros, n);
		if (rc < 0)
			return rc;
		f->wpos += n;
	}
	return 0;
}

int sweep__write_data(struct writer *w, struct fcopy *f, const void *buf, size_t len, uint64_t off, uint64_t tag)
{
	int rc;

	if (f->q->into) {
		rc = stream_fill(f, off);
		if (rc == 0 && (rc = write_stream(f->tmpfd, buf, len)) == 0)
			f->wpos = off + len;
	} else {
		rc = f->punch ? write_sparse(w, f->tmpfd, buf, len, off, f->punch, tag)
			      : sweep__writer_write(w, f->tmpfd, buf, len, off, tag);
	}
	if (rc < 0)
		sweep__write_fail(f, SWEEP_COPY_OP_WRITE, rc);
	else
		f->bytes += len;
	return rc;
}

/* Name the unnamed copy fd as to in dfd: 0 or -errno (-EEXIST: the name is taken). */
static int link_tmpfile(int fd, int dfd, const char *to)
{
	if (linkat(fd, "", dfd, to, AT_EMPTY_PATH) == 0)
		return 0;
	if (errno != ENOENT && errno != EPERM)
		return -errno;
	/* AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH */
	char proc[64];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	return linkat(AT_FDCWD, proc, dfd, to, AT_SYMLINK_FOLLOW) < 0 ? -errno : 0;
}

/* Where the run keeps backups, what stands at name gets its backup's name first (a failure is the copy's). */
static int backup(const struct sweep_copy *c, struct fcopy *f, int dfd, const char *name)
{
	int rc = sweep__dest_backup(c, dfd, name, &f->backup);

	if (rc < 0) {
		sweep__write_fail(f, SWEEP_COPY_OP_BACKUP, rc);
		return rc;
	}
	return 0;
}

/* Name the finished copy name in dfd, its directory checked: 0 or -errno. */
static int put_name(const struct sweep_copy *c, struct fcopy *f, int dfd, const char *name)
{
	char tmp[32];
	int rc;

	if (f->tmpname) {
		rc = backup(c, f, dfd, name);
		return rc < 0 ? rc : sweep__dest_put(c, dfd, f->tmpname, name);
	}
	/*
	 * O_TMPFILE: give it a name. Straight onto the final one where none
	 * stood when the file was queued, or with no-clobber: link refuses an
	 * existing name (never follows one), and a fresh copy saves a rename.
	 */
	bool noclobber = c->o.flags & SWEEP_COPY_NO_CLOBBER;
	if (noclobber || !f->q->existed) {
		rc = link_tmpfile(f->tmpfd, dfd, name);
		if (rc != -EEXIST || noclobber)
			return rc;
		/* one appeared meanwhile: replaced, as any existing destination is */
	}
	rc = -EEXIST;
	for (int tries = 0; tries < 100 && rc == -EEXIST; tries++) {
		sweep__dest_tmp_name(tmp);
		rc = link_tmpfile(f->tmpfd, dfd, tmp);
	}
	if (rc == 0 && (rc = backup(c, f, dfd, name)) < 0)
		unlinkat(dfd, tmp, 0); /* the name we just made */
	if (rc == 0) {
		rc = renameat(dfd, tmp, dfd, name) < 0 ? -errno : 0;
		if (rc < 0)
			unlinkat(dfd, tmp, 0); /* the name we just made */
	}
	return rc;
}

/*
 * Put the finished copy onto its name, in its directory as the path stands
 * now: looked up again beneath the root, with no symlink on the way
 * (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, every component), and
 * named through that fresh descriptor. A directory moved away never gets
 * a name again, nor one reached through a symlink swapped into any
 * ancestor (the contract tests/race/cp.sh checks: every file is named at
 * its path as it stands when the file is named, or said replaced).
 *
 * An unnamed copy (O_TMPFILE, made through the thread's cached descriptor
 * or one looked up for it) is named in whatever real directory stands
 * there now, as a copy begun after a swap would be: an unnamed file is
 * harmless wherever it was made, and what it took from the directory it
 * was made in (its group: see sweep__write_finish) was judged from that
 * directory's own stat. So no fstat of the fresh descriptor, and the cache
 * keeps the descriptor the copies are made in: openat2 and close a file,
 * where the fresh lookup that replaced the cached one took an fstat more.
 * Such copies of one directory, finished one after another, can share the
 * lookup (sweep__write_name_group). A named temporary is renamed within
 * its directory: that must be the one it was made in.
 */
static bool unnamed(const struct fcopy *f)
{
	return f->dc && !f->q->place && !f->tmpname && !f->q->into;
}

/* The directory f's copy is to be named in, looked up afresh: fd or -errno; *name in it. */
static int name_dir(const struct sweep_copy *c, struct fcopy *f, const char **name)
{
	int dfd = sweep__dest_item_dir(c, f->q, name);

	if ((dfd == -EMFILE || dfd == -ENFILE) && unnamed(f)) {
		/* Out of descriptors: the cached one is not needed to name this copy. */
		sweep__dest_cache_drop(f->dc);
		dfd = sweep__dest_item_dir(c, f->q, name);
	}
	return dfd;
}

/* Name f's copy name in dfd, just looked up for it (-errno: the lookup failed): 0 or -errno. */
static int name_in(const struct sweep_copy *c, struct fcopy *f, int dfd, const char *name)
{
	struct stat now;
	bool own = !unnamed(f);
	int rc = dfd < 0 ? dfd : 0;

	/* The directory gone or a symlink before this copy was begun through the cache: it could not be created. */
	if (rc < 0 && !own && f->dir_cached)
		sweep__write_fail(f, SWEEP_COPY_OP_CREATE, rc);
	if (rc == 0 && own && fstat(dfd, &now) < 0)
		rc = -errno;
	else if (rc == 0 && own && (now.st_dev != f->dir_st.st_dev || now.st_ino != f->dir_st.st_ino))
		rc = -ESTALE; /* the directory was replaced while the file was copied */
	if (rc == 0)
		rc = put_name(c, f, dfd, name);
	return rc;
}

/* The outcome of naming f's copy (rc: 0 or -errno). */
static void named(struct fcopy *f, int rc)
{
	if (rc < 0) {
		/* (a failed backup is already the copy's failure) */
		sweep__write_fail(f, rc == -EISDIR ? SWEEP_COPY_OP_OVERWRITE_DIR : SWEEP_COPY_OP_RENAME, rc == -EISDIR ? 0 : rc);
		return;
	}
	free(f->tmpname); /* in place now: no longer ours to remove */
	f->tmpname = NULL;
	f->placed = true;
}

static void commit(const struct sweep_copy *c, struct fcopy *f)
{
	const char *name;
	int dfd = name_dir(c, f, &name);

	named(f, name_in(c, f, dfd, name));
	if (dfd >= 0)
		close(dfd);
}

/* a and b, left unnamed: the same directory part of their names (f->name: dst's last component, with no strlen). */
static bool same_dir(const struct fcopy *a, const struct fcopy *b)
{
	size_t la = (size_t)(a->name - a->q->dst), lb = (size_t)(b->name - b->q->dst);

	return la == lb && !memcmp(a->q->dst, b->q->dst, la);
}

/*
 * One lookup a directory for the lot, made now, when they are named, and
 * each of its copies named through it right after: the window between the
 * lookup and a name is the few names before it, as it was the lookup's own
 * call for one copy.
 */
void sweep__write_name_group(const struct sweep_copy *c, struct fcopy *fs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (fs[i].placed || fs[i].err)
			continue; /* named with an earlier one of its directory (or failed there) */
		const char *name;
		int dfd = name_dir(c, &fs[i], &name);
		named(&fs[i], name_in(c, &fs[i], dfd, name));
		for (size_t j = i + 1; j < n; j++)
			if (!fs[j].placed && !fs[j].err && same_dir(&fs[i], &fs[j]))
				named(&fs[j], name_in(c, &fs[j], dfd, fs[j].name));
		if (dfd >= 0)
			close(dfd);
	}
}

/* A FIFO or device written into: the holes at the end as zeros, nothing else of it touched. */
static void finish_into(struct sweep_copy *c, struct fcopy *f)
{
	int rc = stream_fill(f, f->size);

	if (rc == 0 && (c->o.flags & SWEEP_COPY_FSYNC) && fsync(f->tmpfd) < 0 && errno != EINVAL)
		rc = -errno;
	if (rc < 0) {
		sweep__write_fail(f, SWEEP_COPY_OP_WRITE, rc);
		return;
	}
	f->placed = true;
}

/* Everything of the copy but its name: true when it is to be named, false when it failed (recorded). */
static bool complete(struct sweep_copy *c, struct fcopy *f, int srcfd)
{
	const struct qitem *q = f->q;
	char *show = NULL;
	size_t showcap = 0;

	/* Sized by its writes already when every byte of it was written (no hole left at its end). */
	bool sized = f->how == SWEEP_COPY_HOW_DATA && !f->punch && f->bytes == f->size;
	if (f->how != SWEEP_COPY_HOW_CLONE && !sized && ftruncate(f->tmpfd, (off_t)f->size) < 0) {
		sweep__write_fail(f, SWEEP_COPY_OP_WRITE, -errno);
		return false;
	}
	if (!(c->o.preserve & SWEEP_PRESERVE_MODE) && fchmod(f->tmpfd, (mode_t)q->mode) < 0)
		meta_failed(SWEEP_COPY_META_MODE, -errno, f);
	/* The owner, mode and times of the file that was read, not of what the walk saw. */
	struct meta_ref ms = { .fd = srcfd, .blob = srcfd < 0 ? f->blob : NULL }, md = { .fd = f->tmpfd, .made = true };
	/*
	 * Who owns the new file, with no fstat: it was made as euid:egid where
	 * its directory (the one it was made in, stat'ed when looked up) is
	 * ours, egid's and not set-gid, so that no other user can change what
	 * a file made in it gets (a set-gid bit, a group, grpid mounts: the
	 * directory's group) between that stat and its creation.
	 */
	if (!(f->dir_st.st_mode & S_ISGID) && f->dir_st.st_uid == c->euid && f->dir_st.st_gid == c->egid &&
	    S_ISDIR(f->dir_st.st_mode)) {
		md.owner_known = true;
		md.uid = (uint32_t)c->euid;
		md.gid = (uint32_t)c->egid;
	}
	unsigned what = c->o.preserve;
	if (srcfd < 0 && !f->blob)
		what &= ~(unsigned)(SWEEP_PRESERVE_XATTR | SWEEP_PRESERVE_ACL);
	struct sweep_stat st = f->st;
	if (q->mode_given || (what & SWEEP_PRESERVE_FAKE_SUPER))
		st.mode = (st.mode & ~07777u) | q->given_mode;
	if ((what & SWEEP_PRESERVE_FAKE_SUPER) || q->owner_given) {
		/* what the caller listed (a --fake-super record, a mapped owner), where the file read has other values */
		st.uid = q->given_uid;
		st.gid = q->given_gid;
	}
	if (what)
		sweep__meta_copy(&ms, &md, &st, what, &c->o, meta_failed, f);
	if ((c->o.flags & SWEEP_COPY_FSYNC) && fsync(f->tmpfd) < 0) {
		sweep__write_fail(f, SWEEP_COPY_OP_WRITE, -errno);
		return false;
	}
	/* The name shown is built in a buffer of this call's: the writer thread runs this too. */
	int rc = sweep__report_step_raw(c, SWEEP_COPY_STEP_WRITTEN, q->src,
					c->o.on_step ? sweep__dst_show_in(c, q->dst, &show, &showcap) : q->dst, q->cookie);
	free(show);
	if (rc < 0) {
		f->step_rc = rc;
		sweep__write_fail(f, SWEEP_COPY_OP_WRITE, rc);
		return false;
	}
	if (c->o.cancel && *c->o.cancel) {
		sweep__write_fail(f, SWEEP_COPY_OP_WRITE, -ECANCELED);
		return false;
	}
	if (f->tmpname) {
		int fd = f->tmpfd;
		f->tmpfd = -1;
		if (close(fd) < 0) { /* delayed write errors (NFS, quotas) surface here */
			sweep__write_fail(f, SWEEP_COPY_OP_WRITE, -errno);
			return false;
		}
	}
	return true;
}

void sweep__write_finish(struct sweep_copy *c, struct fcopy *f, int srcfd)
{
	if (f->q->into)
		finish_into(c, f);
	else if (complete(c, f, srcfd))
		commit(c, f);
}

bool sweep__write_finish_unnamed(struct sweep_copy *c, struct fcopy *f, int srcfd)
{
	if (!unnamed(f)) {
		sweep__write_finish(c, f, srcfd);
		return false;
	}
	return complete(c, f, srcfd);
}

void sweep__write_close(struct fcopy *f)
{
	if (f->tmpfd >= 0)
		close(f->tmpfd);
	f->tmpfd = -1;
	if (f->tmpname && f->dirfd >= 0)
		unlinkat(f->dirfd, f->tmpname, 0);
	free(f->tmpname);
	f->tmpname = NULL;
	if (f->dirfd >= 0)
		close(f->dirfd);
	f->dirfd = -1;
}

void sweep__write_free(struct fcopy *f)
{
	sweep__write_close(f);
	free(f->mfail);
	f->mfail = NULL;
	f->nmfail = f->capmfail = 0;
	f->blob = sweep__meta_blob_free(f->blob);
	free(f->backup);
	f->backup = NULL;
	f->q = NULL;
}
