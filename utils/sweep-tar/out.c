/* SPDX-License-Identifier: MIT */
/* The archive being written: pax through libarchive, to -f FILE or stdout. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "tar.h"

static const char zeros[64 * 1024];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Writes go through this callback rather than archive_write_open_fd():
 * after a failed write libarchive would enter its FATAL state, in which it
 * no longer closes (and frees) its filters. Here a failure is recorded in
 * the sink and later writes are discarded, so the caller sees the error
 * right after the call that hit it, and libarchive can still be closed.
 */
/* About 1 MB, a whole number of GNU tar's 10240-byte records (the last one is padded to a record). */
#define OUT_BLOCK (100 * 10240)

/*
 * Uncompressed -c into a pipe or a file: libarchive passes the stream
 * through unblocked (bytes_per_block 0) and the sink blocks it. Headers,
 * padding and small data are gathered in k->buf; a piece of SINK_DIRECT
 * bytes or more (the data of all but small files, which the reader hands
 * over whole or in big chunks) goes from the caller's buffer straight to
 * the archive, in one writev with what k->buf holds before it.
 * libarchive's own blocking copied every data byte into its block first
 * (warm /usr/share: memmove 5-6% of sweep-tar's CPU, where GNU tar reads
 * into its record buffer). The bytes, their order and the padding of the
 * last record are the same; only where the writes break differs, which a
 * pipe or a file does not keep (a tape would: it keeps libarchive's
 * blocks). No write is larger than k->buf, so none overfills the pipe
 * that out_block() sized.
 */
#define SINK_DIRECT (16 * 1024)

/* a[0..na) then b[0..nb), whole: one writev while both have bytes. */
static int write_two(int fd, const char *a, size_t na, const char *b, size_t nb)
{
	while (na + nb > 0) {
		struct iovec iov[2] = { { (void *)a, na }, { (void *)b, nb } };
		ssize_t n = na ? writev(fd, iov, 2) : write(fd, b, nb);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		size_t k = (size_t)n < na ? (size_t)n : na;
		a += k;
		na -= k;
		b += (size_t)n - k;
		nb -= (size_t)n - k;
	}
	return 0;
}

static int sink_out(void *ctx, const void *buf, size_t len)
{
	struct tar_sink *k = ctx;
	const char *p = buf;
	int r;

	if (!k->buf)
		return cli_write_all(k->fd, buf, len);
	k->written += len;
	while (len >= SINK_DIRECT) {
		size_t take = k->cap - k->len < len ? k->cap - k->len : len;
		if ((r = write_two(k->fd, k->buf, k->len, p, take)) < 0)
			return r;
		k->len = 0;
		p += take;
		len -= take;
	}
	while (len > 0) {
		size_t take = k->cap - k->len < len ? k->cap - k->len : len;
		memcpy(k->buf + k->len, p, take);
		k->len += take;
		p += take;
		len -= take;
		if (k->len == k->cap) {
			if ((r = cli_write_all(k->fd, k->buf, k->len)) < 0)
				return r;
			k->len = 0;
		}
	}
	return 0;
}

void tar_sink_finish(struct tar_sink *k)
{
	int r = 0;

	if (!k->buf)
		return;
	/* The last record padded, as libarchive pads it with bytes_in_last_block. */
	for (uint64_t pad = (k->record - k->written % k->record) % k->record; pad > 0 && r == 0 && k->err == 0;) {
		size_t n = pad < sizeof(zeros) ? (size_t)pad : sizeof(zeros);
		r = sink_out(k, zeros, n);
		pad -= n;
	}
	if (r == 0 && k->err == 0 && k->len)
		r = cli_write_all(k->fd, k->buf, k->len);
	if (r < 0 && k->err == 0)
		k->err = -r;
	free(k->buf);
	k->buf = NULL;
	k->len = 0;
}

static la_ssize_t sink_write(struct archive *a, void *ctx, const void *buf, size_t len)
{
	struct tar_sink *k = ctx;
	int r;

	(void)a;
	if (k->err == 0 && (r = k->rw ? tar_pax_rw_write(k->rw, buf, len, sink_out, k) : sink_out(k, buf, len)) < 0)
		k->err = -r;
	return (la_ssize_t)len;
}

int tar_sink_open(struct archive *a, struct tar_sink *k, int fd)
{
	k->fd = fd;
	k->err = 0;
	/* k->rw: set by the caller, or none */
	return archive_write_open2(a, k, NULL, sink_write, NULL, NULL);
}

/* A write to the archive failed: say so once, like GNU tar, and stop. */
static int out_failed(struct tar *t)
{
	int err = t->sink.err ? t->sink.err : archive_errno(t->out);

	if (!t->failed) {
		progress_clear(t->progress);
		if (err > 0)
			cli_msg("%s: Cannot write: %s", tar_printable(t->out_name), strerror(err));
		else
			cli_msg("%s: Cannot write: %s", tar_printable(t->out_name),
				archive_error_string(t->out) ? archive_error_string(t->out) : "unknown error");
		cli_msg("Error is not recoverable: exiting now");
		t->failed = true;
		t->status = TAR_FATAL;
	}
	return err > 0 ? -err : -EIO;
}

static int add_filter(struct archive *a, enum tar_filter f)
{
	switch (f) {
	case TAR_FILTER_NONE:
		return archive_write_add_filter_none(a);
	case TAR_FILTER_GZIP:
		return archive_write_add_filter_gzip(a);
	case TAR_FILTER_BZIP2:
		return archive_write_add_filter_bzip2(a);
	case TAR_FILTER_XZ:
		return archive_write_add_filter_xz(a);
	case TAR_FILTER_ZSTD:
		return archive_write_add_filter_zstd(a);
	case TAR_FILTER_PROGRAM:
		return ARCHIVE_FATAL; /* add_filter_program() */
	}
	return ARCHIVE_FATAL;
}

static int set_format(struct archive *a, enum tar_format f)
{
	switch (f) {
	case TAR_FMT_PAX:
		return archive_write_set_format_pax(a);
	case TAR_FMT_GNU:
		return archive_write_set_format_gnutar(a);
	case TAR_FMT_USTAR:
		return archive_write_set_format_ustar(a);
	case TAR_FMT_V7:
		return archive_write_set_format_v7tar(a);
	}
	return ARCHIVE_FATAL;
}

/*
 * Bytes per write to fd. Into a pipe, a write larger than the pipe blocks
 * until the reader has drained it, whatever their speeds: a 1 MB block
 * through a 64 KiB pipe put sweep-tar to sleep 16 times a block (warm
 * /usr/share piped to cat: 10,800 context switches, GNU tar's 10 KiB
 * records about 800). So the pipe is grown to a block where the kernel
 * allows it, and the block shrunk to the pipe where it does not.
 */
size_t tar_record_size(const struct tar_opts *o)
{
	return o->blocking ? (size_t)o->blocking * 512 : 10240;
}

static size_t out_block(int fd)
{
	struct stat st;
	int have, grown;

	if (fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode))
		return OUT_BLOCK;
	have = fcntl(fd, F_GETPIPE_SZ);
	/* F_SETPIPE_SZ returns the size the pipe now has (at least the size asked for). */
	if (have >= 0 && have < OUT_BLOCK && (grown = fcntl(fd, F_SETPIPE_SZ, OUT_BLOCK)) >= 0)
		have = grown;
	if (have < 0 || have >= OUT_BLOCK)
		return OUT_BLOCK;
	return have < 10240 ? 10240 : (size_t)have / 10240 * 10240;
}

static int backup_archive(struct tar *t, const char *file)
{
	char *copy = strdup(file), *slash = copy ? strrchr(copy, '/') : NULL, *to;
	const char *base = slash ? slash + 1 : copy;
	struct stat st;
	int dirfd, r = 0;

	if (!copy)
		return -ENOMEM;
	if (slash)
		*slash = '\0';
	dirfd = open(slash ? (*copy ? copy : "/") : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd >= 0 && fstatat(dirfd, base, &st, 0) == 0 && S_ISREG(st.st_mode) && (to = tar_backup_name(dirfd, base))) {
		if (renameat(dirfd, base, dirfd, to) != 0) {
			cli_msg("%s: Cannot rename to %s", tar_printable(file), cli_quote(to));
			r = -1;
		} else if (t->o->verbose) {
			fprintf(t->listing, "Renaming %s to ", cli_quote(file));
			fprintf(t->listing, "%s%s%s\n", slash ? copy : "", slash ? "/" : "", to);
		}
		free(to);
	}
	if (dirfd >= 0)
		close(dirfd);
	free(copy);
	return r;
}

int tar_out_open(struct tar *t)
{
	const char *file = t->o->archive;
	struct stat st;

	t->start = now();
	if (!file || strcmp(file, "-") == 0) {
		t->out_fd = STDOUT_FILENO;
		t->out_name = "-";
	} else if (t->o->mode == TAR_APPEND || t->o->mode == TAR_UPDATE) {
		/* After the archive's last member (update.c). */
		t->out_name = file;
		if ((t->out_fd = tar_update_open(t)) < 0)
			return -EIO;
	} else {
		/* --backup: an archive there is renamed first (GNU tar's maybe_backup_file). */
		if (tar_backups() && backup_archive(t, file) < 0)
			return -EIO;
		t->out_fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		t->out_name = file;
		if (t->out_fd < 0) {
			cli_msg("%s: Cannot open: %s", tar_printable(file), strerror(errno));
			cli_msg("Error is not recoverable: exiting now");
			return -errno;
		}
	}
	if (isatty(t->out_fd)) {
		cli_msg("Refusing to write archive contents to terminal (missing -f option?)");
		cli_msg("Error is not recoverable: exiting now");
		return -ENOTTY;
	}
	if (fstat(t->out_fd, &st) != 0)
		st.st_mode = 0;
	if (S_ISREG(st.st_mode)) {
		t->out_is_file = true;
		t->out_dev = st.st_dev;
		t->out_ino = st.st_ino;
	}

	t->out = archive_write_new();
	if (!t->out)
		return -ENOMEM;
	if ((t->o->filter == TAR_FILTER_PROGRAM ? archive_write_add_filter_program(t->out, t->o->compress_program)
						: add_filter(t->out, t->o->filter)) != ARCHIVE_OK ||
	    set_format(t->out, t->o->format) != ARCHIVE_OK) {
		cli_msg("cannot set up the archive: %s", archive_error_string(t->out));
		return -EINVAL;
	}
	/* GNU tar reads SCHILY.xattr.* and warns about LIBARCHIVE.xattr.*; bsdtar reads both. */
	if (t->o->format == TAR_FMT_PAX)
		archive_write_set_options(t->out, "xattrheader=SCHILY");
	/*
	 * Uncompressed: pad the last record to 10240 bytes as GNU tar does.
	 * Compressed: do not pad the compressed stream (gzip and friends
	 * complain about trailing zeros). -r, -u: the records count from the
	 * start of the archive, not from where the new members start:
	 * tar_update_pad() pads after the end.
	 */
	archive_write_set_bytes_in_last_block(t->out, t->o->filter == TAR_FILTER_NONE && t->o->mode == TAR_CREATE
							      ? (int)tar_record_size(t->o) : 1);
	/*
	 * Written in 1 MB blocks, not GNU tar's 10 KiB records: the same
	 * bytes, with a hundredth of the write calls, and into a pipe the
	 * reader is woken once per pipe-full rather than once per record
	 * (out_block() for the pipe's size).
	 */
	size_t block = out_block(t->out_fd) / tar_record_size(t->o) * tar_record_size(t->o);
	if (t->o->filter == TAR_FILTER_NONE && t->o->mode == TAR_CREATE && (S_ISFIFO(st.st_mode) || S_ISREG(st.st_mode))) {
		/* The sink blocks the stream (sink_out); libarchive passes it through. */
		if (!(t->sink.buf = malloc(block))) {
			cli_msg("out of memory");
			return -ENOMEM;
		}
		t->sink.cap = block;
		t->sink.record = tar_record_size(t->o);
		block = 0;
	}
	archive_write_set_bytes_per_block(t->out, (int)block);
	if (tar_pax_renames() && !(t->sink.rw = tar_pax_rw_new())) {
		cli_msg("out of memory");
		return -ENOMEM;
	}
	if (tar_sink_open(t->out, &t->sink, t->out_fd) != ARCHIVE_OK || t->sink.err) {
		out_failed(t);
		return -EIO;
	}
	return 0;
}

/*
 * libarchive 3.6 writes a pax time before 1970 with a fraction as
 * "-SEC.FRAC" from (sec, nsec) = (-SEC, FRAC), which means -SEC - FRAC,
 * not -SEC + FRAC. Hand it (sec + 1, 1e9 - nsec) so that it writes the
 * true time, as GNU tar writes and reads it. (libarchive's reader has the
 * mirror bug, so bsdtar 3.6 misreads such times from any pax archive,
 * GNU tar's included.) A time between -1 and 0 s would need "-0.FRAC",
 * which libarchive cannot write (its seconds carry the sign): as it is, it
 * would come out as -1 - FRAC, up to 2 s early, so it is rounded to the
 * nearest whole second, -1 or 0, off by half a second at most (GNU tar's
 * suite, time01).
 */
static void fix_time(struct archive_entry *e, int (*is_set)(struct archive_entry *),
		     time_t (*sec)(struct archive_entry *), long (*nsec)(struct archive_entry *),
		     void (*set)(struct archive_entry *, time_t, long))
{
	time_t s;
	long ns;

	if (!is_set(e) || (s = sec(e)) >= 0 || (ns = nsec(e)) <= 0)
		return;
	if (s < -1)
		set(e, s + 1, 1000000000 - ns);
	else
		set(e, ns < 500000000 ? -1 : 0, 0);
}

void tar_fix_times(struct archive_entry *e)
{
	fix_time(e, archive_entry_mtime_is_set, archive_entry_mtime, archive_entry_mtime_nsec, archive_entry_set_mtime);
	fix_time(e, archive_entry_atime_is_set, archive_entry_atime, archive_entry_atime_nsec, archive_entry_set_atime);
	fix_time(e, archive_entry_ctime_is_set, archive_entry_ctime, archive_entry_ctime_nsec, archive_entry_set_ctime);
}

/* libarchive's message for e, without the "NAME: " it sometimes starts with. */
static const char *reason(struct archive *a, struct archive_entry *e)
{
	const char *why = archive_error_string(a), *name = archive_entry_pathname(e);
	size_t len = name ? strlen(name) : 0;

	if (!why)
		return "unknown error";
	if (len && strncmp(why, name, len) == 0 && why[len] == ':' && why[len + 1] == ' ')
		return why + len + 2;
	return why;
}

/*
 * What every member gets whatever its file has: no atime or ctime (they
 * change with every read and every chmod, so two archives of one tree
 * would differ; GNU tar's pax headers carry them unless told
 * --pax-option=delete=atime,delete=ctime), and --mtime, --owner, --group.
 */
static void reproducible(const struct tar_opts *o, struct archive_entry *e)
{
	archive_entry_unset_atime(e);
	archive_entry_unset_ctime(e);
	archive_entry_unset_birthtime(e);
	if (o->set_mtime && (!o->clamp_mtime || archive_entry_mtime(e) > o->mtime.tv_sec ||
			     (archive_entry_mtime(e) == o->mtime.tv_sec && archive_entry_mtime_nsec(e) > o->mtime.tv_nsec)))
		archive_entry_set_mtime(e, o->mtime.tv_sec, o->mtime.tv_nsec);
	/* --owner-map, --group-map first; --owner, --group for the ids they do not name (GNU tar's map.c). */
	uint64_t to;
	const char *mapped;
	if (tar_owner_map(false, (uint64_t)archive_entry_uid(e), &to, &mapped)) {
		archive_entry_set_uid(e, (la_int64_t)to);
		archive_entry_copy_uname(e, o->numeric_owner ? NULL : mapped);
	} else if (o->set_owner) {
		archive_entry_set_uid(e, (la_int64_t)o->owner_id);
		archive_entry_copy_uname(e, o->numeric_owner ? NULL : o->owner_name);
	}
	if (tar_owner_map(true, (uint64_t)archive_entry_gid(e), &to, &mapped)) {
		archive_entry_set_gid(e, (la_int64_t)to);
		archive_entry_copy_gname(e, o->numeric_owner ? NULL : mapped);
	} else if (o->set_group) {
		archive_entry_set_gid(e, (la_int64_t)o->group_id);
		archive_entry_copy_gname(e, o->numeric_owner ? NULL : o->group_name);
	}
	/* --pax-option=delete= */
	tar_pax_entry(e);
	/* --mode, as chmod would change it. */
	if (tar_mode_changes())
		archive_entry_set_perm(e, tar_mode_adjust(archive_entry_perm(e), archive_entry_filetype(e) == AE_IFDIR));
}

/* --checkpoint: the records the tar stream has filled so far. */
static void checkpoint_out(struct tar *t)
{
	la_int64_t n = archive_filter_bytes(t->out, 0);

	if (n > 0)
		tar_checkpoint_records(t, true, (uint64_t)n / tar_record_size(t->o));
}

int tar_out_header(struct tar *t, struct archive_entry *e)
{
	int r;

	if (t->failed)
		return -EIO;
	if (!e)
		e = t->entry;
	reproducible(t->o, e);
	tar_fix_times(e);
	r = archive_write_header(t->out, e);
	if (r == ARCHIVE_FATAL || t->sink.err)
		return out_failed(t);
	if (r == ARCHIVE_FAILED) {
		/* This member cannot be stored (the archive itself is fine): skip it, in GNU tar's words where it has some. */
		const char *why = reason(t->out, e);
		if (strcmp(why, "Pathname too long") == 0 && t->o->format == TAR_FMT_V7)
			why = "file name is too long (max 99); not dumped";
		else if (strcmp(why, "Pathname too long") == 0 && t->o->format == TAR_FMT_USTAR)
			why = "file name is too long (cannot be split); not dumped";
		tar_error(t, archive_entry_pathname(e), "%s", why);
		return 1;
	}
	/*
	 * ARCHIVE_WARN: stored, but not exactly. Except for a name that is
	 * not valid UTF-8: libarchive then stores its bytes as they are
	 * (hdrcharset=BINARY), which is exact, so there is nothing to say.
	 */
	if (r == ARCHIVE_WARN) {
		const char *why = archive_error_string(t->out);
		if (why && strncmp(why, "Can't translate", 15) != 0)
			tar_warn(t, archive_entry_pathname(e), "%s", reason(t->out, e));
	}
	t->members++;
	tar_list(t, e);
	if (tar_checkpoints())
		checkpoint_out(t);
	return 0;
}

int tar_out_data(struct tar *t, const void *buf, size_t len)
{
	if (t->failed)
		return -EIO;
	/* With checkpoints, a record at a time: each one's actions run as it is filled. */
	size_t step = tar_checkpoints() ? tar_record_size(t->o) : len;
	for (size_t done = 0; done < len;) {
		size_t k = len - done < step ? len - done : step;
		if (archive_write_data(t->out, (const char *)buf + done, k) < 0 || t->sink.err)
			return out_failed(t);
		done += k;
		if (step < len)
			checkpoint_out(t);
	}
	return 0;
}

int tar_out_zeros(struct tar *t, uint64_t n)
{
	while (n > 0) {
		size_t k = n < sizeof(zeros) ? (size_t)n : sizeof(zeros);
		int r = tar_out_data(t, zeros, k);
		if (r < 0)
			return r;
		n -= k;
	}
	return 0;
}

int tar_write_zeros(int fd, uint64_t n)
{
	int r = 0;

	while (n > 0 && r == 0) {
		size_t k = n < sizeof(zeros) ? (size_t)n : sizeof(zeros);
		r = cli_write_all(fd, zeros, k);
		n -= k;
	}
	return r;
}

int tar_out_finish(struct tar *t)
{
	if (t->failed)
		return -EIO;
	if (archive_write_finish_entry(t->out) == ARCHIVE_FATAL || t->sink.err)
		return out_failed(t);
	return 0;
}

int tar_out_close(struct tar *t)
{
	if (t->failed)
		return -EIO;
	if (archive_write_close(t->out) != ARCHIVE_OK || t->sink.err)
		return out_failed(t);
	tar_sink_finish(&t->sink);
	if (t->sink.err)
		return out_failed(t);
	/* The last record, padded. */
	if (tar_checkpoints()) {
		uint64_t rs = tar_record_size(t->o);
		tar_checkpoint_records(t, true, ((uint64_t)archive_filter_bytes(t->out, 0) + rs - 1) / rs);
	}
	if ((t->o->mode == TAR_APPEND || t->o->mode == TAR_UPDATE) && (t->sink.err = -tar_update_pad(t)) != 0)
		return out_failed(t);
	/* --remove-files: the archive's data on its device before anything in it is removed (remove.c). */
	if (t->o->remove_files && fdatasync(t->out_fd) != 0 && errno != EINVAL && errno != EROFS) {
		cli_msg("%s: Cannot write: %s", tar_printable(t->out_name), strerror(errno));
		t->failed = true;
		t->status = TAR_FATAL;
		return -EIO;
	}
	/* Close -f FILE here to see late errors (NFS, quotas). */
	if (t->out_fd != STDOUT_FILENO) {
		if (close(t->out_fd) != 0) {
			t->out_fd = -1;
			cli_msg("%s: Cannot close: %s", tar_printable(t->out_name), strerror(errno));
			t->failed = true;
			t->status = TAR_FATAL;
			return -EIO;
		}
		t->out_fd = -1;
	}
	return 0;
}

/* GNU tar's human-readable size: "512B", "1.4MiB", "134MiB". */
static void human(char *buf, size_t len, double v, const char *suffix)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	unsigned u = 0;

	while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	if (u > 0 && v < 10)
		snprintf(buf, len, "%.1f%s%s", v, units[u], suffix);
	else
		snprintf(buf, len, "%.0f%s%s", v, units[u], suffix);
}

void tar_out_totals(struct tar *t)
{
	/*
	 * Bytes of the tar stream before compression, in whole 10240-byte
	 * records as GNU tar counts them (libarchive's count stops before the
	 * last record's padding): the archive's size when uncompressed.
	 */
	uint64_t bytes = ((uint64_t)archive_filter_bytes(t->out, 0) + 10239) / 10240 * 10240;
	double elapsed = now() - t->start;
	char size[32], rate[32];

	human(size, sizeof(size), (double)bytes, "");
	human(rate, sizeof(rate), elapsed > 0 ? (double)bytes / elapsed : 0, "/s");
	progress_clear(t->progress);
	fflush(stdout);
	fprintf(stderr, "Total bytes written: %llu (%s, %s)\n", (unsigned long long)bytes, size, rate);
	struct sweep_batch_stats bs = { .size = sizeof(bs) };
	sweep_batch_stats(t->batch, &bs);
	fprintf(stderr, "Members: %llu, files read: %llu in %llu batch%s, plan memory: %.0f bytes per file (peak %llu bytes)\n",
		(unsigned long long)t->members, (unsigned long long)t->files,
		(unsigned long long)bs.batches, bs.batches == 1 ? "" : "es",
		bs.files ? (double)bs.plan_memory_sum / (double)bs.files : 0.0,
		(unsigned long long)bs.plan_memory_peak);
}
