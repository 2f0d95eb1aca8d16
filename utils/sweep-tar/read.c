/* SPDX-License-Identifier: MIT */
/*
 * Regular files: header and data into the archive as the reader delivers
 * them, in plan order, with GNU tar's treatment of files that change,
 * shrink, grow, vanish or cannot be read. The header carries the size
 * fstat gave right after open; whatever happens afterwards, exactly that
 * many bytes follow it (zeros where the file fell short), so the archive
 * stays valid and is never silently short.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "tar.h"
#include "testhook.h"

/*
 * --progress: the file is open, so its size is known; the plan's total had
 * the planned one (0 when the plan did not know it, SWEEP_PLAN_UNSIZED).
 */
static void progress_opened(struct tar *t, const struct sweep_file *f)
{
	t->cur_opened = true;
	if (f->entry->flags & SWEEP_PLAN_UNSIZED)
		progress_unsized(t->progress, -1);
	progress_replan(t->progress, 0, (int64_t)f->st.size - (int64_t)f->entry->size);
}

/* --progress, as a file ends: a member counts as done, anything else leaves the totals. */
static void progress_ended(struct tar *t, const struct sweep_file *f, uint64_t tail)
{
	if (t->cur_member) {
		progress_add(t->progress, 1, tail);
	} else if (t->cur_opened) {
		progress_replan(t->progress, -1, -(int64_t)f->st.size);
	} else {
		/* never opened: as planned */
		if (f->entry->flags & SWEEP_PLAN_UNSIZED)
			progress_unsized(t->progress, -1);
		progress_replan(t->progress, -1, -(int64_t)f->entry->size);
	}
	t->cur_opened = t->cur_member = false;
}

static int rd_begin(const struct sweep_file *f, void *ctx)
{
	struct tar *t = ctx;
	const char *path = f->entry->path;
	const char *name = tar_stored_name(t, path, (size_t)f->entry->cookie, TAR_XFORM_NAME);
	struct tar_data_map dm;
	char acc[64];
	int r;

	t->cur_begun = t->cur_linked = false;
	t->cur_rec = NULL;
	if (t->failed)
		return -EIO;
	progress_opened(t, f);
	test_pause("read", ++t->files_opened);
	if (!S_ISREG(f->st.mode)) {
		/* Replaced by something else between the walk and now. */
		tar_warn(t, path, "file changed as we read it");
		return SWEEP_READ_SKIP;
	}
	if (t->out_is_file && f->st.dev == t->out_dev && f->st.ino == t->out_ino) {
		/* Seen here when the walk's inode number was not the file's own (a file mounted over another). */
		progress_clear(t->progress);
		cli_msg("%s: file is the archive; not dumped", tar_display(t, path));
		t->cur_linked = true; /* nothing to report at the end */
		return SWEEP_READ_SKIP;
	}
	r = tar_link_member(t, name, &f->st, 0, &t->cur_rec);
	if (r != 0) {
		t->cur_linked = r > 0;
		/* A link member: a file (a name) whose data the first name's member counted. */
		if (r > 0) {
			t->cur_member = true;
			progress_replan(t->progress, 0, -(int64_t)f->st.size);
		}
		return r < 0 ? r : SWEEP_READ_SKIP;
	}
	dm.map = f->data_map;
	dm.n = f->data_map_len;
	/* Metadata from this descriptor only: the file the reader checked, not whatever the path names now. */
	if (tar_entry_fill(t, name, path, tar_accpath(t, f->fd, NULL, path, acc, sizeof(acc)), f->fd, &f->st, &dm) < 0)
		return SWEEP_READ_SKIP;
	t->list_name = path + (size_t)f->entry->cookie;
	r = tar_out_header(t, NULL);
	if (r != 0)
		return r < 0 ? r : SWEEP_READ_SKIP;
	t->cur_begun = t->cur_member = true;
	t->cur_pos = 0;
	t->cur_size = (uint64_t)f->st.size;
	return 0;
}

static int rd_data(const struct sweep_file *f, uint64_t offset, const void *buf, size_t len, void *ctx)
{
	struct tar *t = ctx;
	int r;

	(void)f;
	if (!t->cur_begun || offset < t->cur_pos || offset >= t->cur_size)
		return t->failed ? -EIO : 0;
	/* A hole (sparse reads skip them): libarchive wants the whole stream and drops what its map calls a hole. */
	r = tar_out_zeros(t, offset - t->cur_pos);
	if (r < 0)
		return r;
	if (len > t->cur_size - offset)
		len = (size_t)(t->cur_size - offset);
	r = tar_out_data(t, buf, len);
	if (r < 0)
		return r;
	/* the hole's zeros count as the data they stand for: a member's bytes are its size */
	progress_add(t->progress, 0, offset + len - t->cur_pos);
	t->cur_pos = offset + len;
	t->bytes_read += len;
	test_pause("bytes", t->bytes_read);
	return 0;
}

/*
 * The reader refused what stands at the path now (-ESTALE). Say why as GNU
 * tar would, which opens the name O_NOFOLLOW below its directory: a symlink
 * there, or on the way (a directory swapped for one), gives ELOOP, a file
 * where a directory was ENOTDIR; anything else is another file. Looked at
 * with O_PATH below the walk root, following nothing and reading nothing.
 */
static int replaced_why(struct tar *t, const struct sweep_plan_entry *e)
{
	struct stat st;
	int fd;

	if (e->root == SWEEP_PLAN_NO_ROOT)
		fd = openat(AT_FDCWD, e->path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	else
		fd = sweep_open_beneath(sweep_plan_root_fd(t->plan, e->root), e->path + e->rel, O_PATH, 0);
	if (e->root == SWEEP_PLAN_NO_ROOT && fd < 0)
		fd = -errno;
	if (fd < 0)
		return fd == -EXDEV ? -ELOOP : fd;
	if (fstat(fd, &st) != 0)
		st.st_mode = 0;
	close(fd);
	return S_ISLNK(st.st_mode) ? -ELOOP : -ESTALE;
}

/* Report how the file ended, in GNU tar's words and exit statuses. */
static void report(struct tar *t, const struct sweep_file *f, int status, uint64_t short_by)
{
	const char *path = f->entry->path;

	/*
	 * SHRANK and GREW also come for a file that changed between the plan
	 * and the open (what GNU tar's stat and read would see): its header
	 * has the size at open and all of it followed, so it only changed.
	 */
	if (status == SWEEP_READ_SHRANK && short_by > 0)
		tar_warn(t, path, "File shrank by %llu bytes; padding with zeros", (unsigned long long)short_by);
	else if (status == SWEEP_READ_SHRANK || status == SWEEP_READ_GREW || status == SWEEP_READ_CHANGED)
		tar_warn(t, path, "file changed as we read it");
	else if (status < 0 && t->cur_begun)
		tar_read_failed(t, path, "Read error at byte %llu: %s; padding with zeros",
			  (unsigned long long)t->cur_pos, strerror(-status));
	else if (status == -ENOENT)
		tar_warn(t, path, "File removed before we read it");
	else if (status == -ESTALE)
		/*
		 * Another file stands at the name now. GNU tar would archive
		 * it (with its own metadata); the reader refuses a file it
		 * did not plan, so nothing of it is archived.
		 */
		tar_warn(t, path, "file changed as we read it; not dumped");
	else if (status < 0)
		tar_read_failed(t, path, "Cannot open: %s", strerror(-status));
}

static int rd_end(const struct sweep_file *f, int status, void *ctx)
{
	struct tar *t = ctx;
	struct link_rec *rec = t->cur_rec;
	bool ok = t->cur_begun, member = t->cur_member;
	uint64_t short_by = t->cur_begun ? t->cur_size - t->cur_pos : 0;
	int r = 0;

	t->cur_rec = NULL;
	progress_ended(t, f, short_by); /* the tail is written as zeros (below) */
	if (t->cur_linked) {
		/* A link member, or the archive itself: no data of it went in. */
		t->cur_linked = false;
		if (member && t->o->remove_files && tar_remove_later(t, f->entry->path, &f->st, false) < 0)
			return -ENOMEM;
		return t->failed ? -EIO : 0;
	}
	if (t->cur_begun) {
		/* A trailing hole, or a file that shrank: the header promised cur_size bytes. */
		r = tar_out_zeros(t, t->cur_size - t->cur_pos);
		if (r == 0)
			r = tar_out_finish(t);
	}
	report(t, f, status, short_by);
	t->cur_begun = false;
	t->files++;
	if (r < 0 || t->failed)
		return r < 0 ? r : -EIO;
	/* --remove-files: a member whole (not one padded with zeros: its data would be lost). */
	if (ok && t->o->remove_files && status >= 0 && short_by == 0 && tar_remove_later(t, f->entry->path, &f->st, false) < 0)
		return -ENOMEM;
	if (rec)
		r = tar_link_done(t, rec, ok, f->entry->path, (size_t)f->entry->cookie);
	return r < 0 ? r : 0;
}

/* The reader's end(): a refused file gets GNU tar's reason first. */
static int rd_end_planned(const struct sweep_file *f, int status, void *ctx)
{
	if (status == -ESTALE)
		status = replaced_why(ctx, f->entry);
	return rd_end(f, status, ctx);
}

const struct sweep_read_ops tar_read_ops = {
	.size = sizeof(struct sweep_read_ops),
	.begin = rd_begin,
	.data = rd_data,
	.end = rd_end_planned,
};
