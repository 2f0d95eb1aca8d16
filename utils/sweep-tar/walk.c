/* SPDX-License-Identifier: MIT */
/* The walk: every entry is spooled, written, or planned (see tar.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "tar.h"
#include "testhook.h"

static bool same_inode(int fd, const struct sweep_stat *st)
{
	struct stat now;

	return fstat(fd, &now) == 0 && (uint64_t)now.st_dev == st->dev && (uint64_t)now.st_ino == st->ino;
}

#define CACHEDIR_SIGNATURE "Signature: 8a477f597d28d172789f06886806bc55"

/* Does the directory dirfd hold tag (and, for CACHEDIR.TAG, with its signature)? */
static bool has_tag(int dirfd, const struct tar_tag *tag)
{
	char buf[sizeof(CACHEDIR_SIGNATURE) - 1];
	int fd = openat(dirfd, tag->file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	bool ok = fd >= 0;

	if (ok && tag->cachedir)
		ok = read(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf) && memcmp(buf, CACHEDIR_SIGNATURE, sizeof(buf)) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

/* The first --exclude-tag*, --exclude-caches* that the directory dirfd satisfies, or NULL. */
static const struct tar_tag *dir_tag(struct tar *t, int dirfd)
{
	for (size_t i = 0; i < t->o->ntags; i++)
		if (has_tag(dirfd, &t->o->tags[i]))
			return &t->o->tags[i];
	return NULL;
}

/* GNU tar's note, under -v only. */
static void tag_note(struct tar *t, const struct sweep_entry *e, const struct tar_tag *tag, const char *what)
{
	if (!t->o->verbose || !tar_warning_shown("contains a cache directory tag"))
		return;
	progress_clear(t->progress);
	fflush(stdout);
	fprintf(stderr, "%s: %s/: contains a cache directory tag %s; %s\n", cli_prog(), tar_display(t, e->path),
		tar_printable(tag->file), what);
}

/* A directory whose contents are left out but for its tag file (--exclude-tag, --exclude-caches). */
static int tagged_add(struct tar *t, uint64_t id, const char *file)
{
	struct tar_tagged *n = realloc(t->tagged, (t->ntagged + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	t->tagged = n;
	t->tagged[t->ntagged++] = (struct tar_tagged){ .id = id, .file = file };
	return 0;
}

/* An entry of such a directory: only its tag file is kept. */
static bool tagged_out(const struct tar *t, const struct sweep_entry *e)
{
	for (size_t i = t->ntagged; i-- > 0;)
		if (t->tagged[i].id == e->dir_id)
			return strcmp(e->name, t->tagged[i].file) != 0;
	return false;
}

/*
 * Where the files are read in the order the walk meets them (--order=none,
 * --sort=name: a depth-first walk, the plan as added), members go in that
 * order too, as GNU tar writes them: a directory when it is met,
 * before its entries, and a symlink, device or FIFO after the files the
 * walk met before it (the batch is read first). With members in walk
 * order GNU tar and bsdtar restore directories exactly, so nothing needs
 * to wait for the end (tar.h says why it must in disk order).
 */
static bool in_walk_order(const struct tar *t)
{
	return t->o->order == SWEEP_ORDER_NONE || t->o->walk_order_members;
}

/* A directory's member (t->entry), written where the walk meets it (in walk order). <0 when the archive failed. */
static int write_now(struct tar *t, const struct sweep_entry *e)
{
	int r;

	t->list_name = e->path + t->o->roots[e->root_index].strip;
	r = tar_out_header(t, NULL);
	if (r < 0)
		return r;
	return r == 0 ? tar_out_finish(t) : 0;
}

/*
 * Out of descriptors (a low open-file limit: GNU tar's suite runs at
 * ulimit -n 10): the directory's metadata through its name below the
 * walk's descriptor of its parent, as for symlinks and devices, which
 * libarchive looks up without following a symlink there; checked to be
 * the directory walked just before.
 */
static int walk_dir_nofd(struct tar *t, const struct sweep_entry *e, const char *name, bool member)
{
	char buf[64 + NAME_MAX];
	struct stat now;
	int r = 0;

	if (fstatat(e->dirfd, e->at_name, &now, t->o->dereference ? 0 : AT_SYMLINK_NOFOLLOW) != 0 ||
	    (uint64_t)now.st_dev != e->st.dev || (uint64_t)now.st_ino != e->st.ino) {
		tar_warn(t, e->path, "file changed as we read it; not dumped");
		return SWEEP_WALK_SKIP;
	}
	if (member &&
	    tar_entry_fill(t, name, e->path, tar_accpath(t, e->dirfd, e->at_name, e->path, buf, sizeof(buf)), -1, &e->st, NULL) == 0) {
		r = in_walk_order(t) ? write_now(t, e) : dir_spool_add(t, e->id);
		if (r == 0 && t->o->remove_files && tar_remove_later(t, e->path, &e->st, true) < 0)
			r = -ENOMEM;
	}
	progress_dirs(t->progress, 1);
	return r;
}

/*
 * GNU tar's reason a directory's name (with its '/') does not fit a
 * ustar or v7 header, or NULL (src/create.c, write_long_name). GNU tar
 * writes the directory's header first and leaves out what is below it
 * when it cannot; here the header comes at the end, so the name is looked
 * at before the walk goes in.
 */
static const char *unstorable(enum tar_format f, const char *name)
{
	size_t len = strlen(name), i;

	if (len <= 100 || (f != TAR_FMT_USTAR && f != TAR_FMT_V7))
		return NULL;
	if (f == TAR_FMT_V7)
		return "file name is too long (max 99); not dumped";
	if (len > 256)
		return "file name is too long (max 256); not dumped";
	/* split_long_name: the last '/' that leaves a prefix of at most 155 bytes */
	i = len > 156 ? 156 : name[len - 1] == '/' ? len - 1 : len;
	for (i = i - 1; i > 0 && name[i] != '/'; i--)
		;
	if (i == 0 || len - i - 1 > 100 || len - i - 1 == 0)
		return "file name is too long (cannot be split); not dumped";
	return NULL;
}

/* member: the directory is stored (not with -u when the archive has it). */
static int walk_dir(struct tar *t, const struct sweep_entry *e, const char *name, bool member)
{
	const struct tar_tag *tag;
	char buf[64 + NAME_MAX];
	const char *acc;
	int fd, r;

	/* Our own fd on it: xattrs and ACLs come through it, and it tells
	 * early whether the walk can read it at all. */
	fd = openat(e->dirfd, e->at_name,
		    O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK | (t->o->dereference ? 0 : O_NOFOLLOW));
	if (fd >= 0 && !same_inode(fd, &e->st)) {
		/* Another directory took its place since the walk's stat: nothing of it is stored. */
		close(fd);
		tar_warn(t, e->path, "file changed as we read it; not dumped");
		return SWEEP_WALK_SKIP;
	}
	if (fd < 0 && (errno == EMFILE || errno == ENFILE) && !t->o->ntags)
		return walk_dir_nofd(t, e, name, member);
	if (fd < 0) {
		/* GNU tar stores nothing for a directory it cannot read. */
		if (errno == ENOENT && e->depth > 0)
			tar_warn(t, e->path, "File removed before we read it");
		else
			tar_read_failed(t, e->path, "Cannot open: %s", strerror(errno));
		return SWEEP_WALK_SKIP;
	}
	if (member && (t->o->format == TAR_FMT_USTAR || t->o->format == TAR_FMT_V7)) {
		char *slashed = NULL;
		const char *why = asprintf(&slashed, "%s/", name) < 0 ? NULL : unstorable(t->o->format, slashed);
		if (why) {
			char *shown = NULL;
			if (asprintf(&shown, "%s/", e->path) >= 0)
				tar_error(t, shown, "%s", why);
			free(shown);
		}
		free(slashed);
		if (why) {
			close(fd);
			return SWEEP_WALK_SKIP;
		}
	}
	tag = t->o->ntags ? dir_tag(t, fd) : NULL;
	if (tag && tag->how == TAR_TAG_ALL) {
		tag_note(t, e, tag, "directory not dumped");
		close(fd);
		return SWEEP_WALK_SKIP;
	}
	acc = tar_accpath(t, fd, NULL, e->path, buf, sizeof(buf));
	/* On failure it said why; the directory's contents are still archived. */
	r = 0;
	if (member && tar_entry_fill(t, name, e->path, acc, fd, &e->st, NULL) == 0) {
		r = in_walk_order(t) ? write_now(t, e) : dir_spool_add(t, e->id);
		if (r == 0 && t->o->remove_files && tar_remove_later(t, e->path, &e->st, true) < 0)
			r = -ENOMEM;
		/*
		 * A directory with a default ACL is also stored now, before
		 * its contents: bsdtar (libarchive 3.6) sets a default ACL only
		 * on a directory it creates, not on one that exists by the time
		 * the entry at the end comes. Spooled first: writing changes
		 * the entry.
		 */
		if (r == 0 && !in_walk_order(t) && (archive_entry_acl_types(t->entry) & ARCHIVE_ENTRY_ACL_TYPE_DEFAULT))
			r = tar_out_header(t, NULL) < 0 ? -EIO : 0;
	}
	close(fd);
	progress_dirs(t->progress, 1);
	if (r == 0 && tag) {
		tag_note(t, e, tag, "contents not dumped");
		if (tag->how == TAR_TAG_UNDER)
			return SWEEP_WALK_SKIP;
		r = tagged_add(t, e->id, tag->file);
	}
	return r;
}

/* Symlinks, devices, FIFOs: nothing to read, so written at once. */
static int walk_special(struct tar *t, const struct sweep_entry *e, const char *name, size_t strip)
{
	char buf[64 + NAME_MAX];
	struct link_rec *rec;
	bool ok = false;
	int r;

	r = tar_link_member(t, name, &e->st, e->dir_id, &rec);
	if (r != 0)
		return r < 0 ? r : 0;
	if (tar_entry_fill(t, name, e->path, tar_accpath(t, e->dirfd, e->at_name, e->path, buf, sizeof(buf)), -1,
			   &e->st, NULL) == 0) {
		const char *target = archive_entry_symlink(t->entry);

		if (S_ISLNK(e->st.mode) && target && tar_placeholder_target(target)) {
			/* Its directory's entry first, or GNU tar may restore a wrong mtime (tar.h). */
			if (rec)
				rec->placeholder = true;
			r = dir_spool_pin(t, e->dir_id);
			if (r < 0)
				return r;
		}
		t->list_name = e->path + strip;
		r = tar_out_header(t, NULL);
		if (r < 0)
			return r;
		if (r == 0) {
			r = tar_out_finish(t);
			if (r < 0)
				return r;
			ok = true;
		}
		if (ok && t->o->remove_files && tar_remove_later(t, e->path, &e->st, false) < 0)
			return -ENOMEM;
	}
	progress_others(t->progress, 1);
	return rec ? tar_link_done(t, rec, ok, e->path, strip) : 0;
}

/* Regular files go into the plan; their hard links are decided as they are read (read.c). */
static int walk_file(struct tar *t, const struct sweep_entry *e, size_t strip)
{
	/* Planned first: a full batch is read inside the add. Without the walk's stat, the batch gives the size. */
	uint64_t size = t->walk_no_stat ? 0 : (uint64_t)e->st.size;
	int r;

	progress_plan(t->progress, 1, size);
	r = sweep_batch_add_entry(t->batch, e, strip);
	if (r < 0 && t->failed)
		return -EIO; /* added, and the batch it filled stopped the archive (tar_on_batch_end said why) */
	if (r < 0) {
		progress_replan(t->progress, -1, -(int64_t)size);
		tar_error(t, e->path, "Cannot open: %s", strerror(-r));
	}
	return 0;
}

static int on_entry(const struct sweep_entry *e, void *ctx)
{
	struct tar *t = ctx;
	size_t strip = t->o->roots[e->root_index].strip;
	/* The patterns given before this operand (GNU tar's --exclude is positional). */
	unsigned nex = t->o->roots[e->root_index].nexclude;
	const char *name;
	mode_t mode = e->st.mode;

	if (t->failed)
		return -EIO;
	if (e->stat_err)
		return 0; /* on_error said why */
	if (t->ntagged && tagged_out(t, e))
		return S_ISDIR(mode) ? SWEEP_WALK_SKIP : 0;
	name = tar_member_name(t, e->path, strip);
	/* GNU tar tries the name as given (with its leading '/') and the member name, before --transform. */
	if (t->o->exclude && (exclude_match_first(t->o->exclude, nex, e->path + strip, NULL, S_ISDIR(mode)) ||
			      (name != e->path + strip && exclude_match_first(t->o->exclude, nex, name, NULL, S_ISDIR(mode)))))
		return S_ISDIR(mode) ? SWEEP_WALK_SKIP : 0;
	name = tar_stored_name(t, e->path, strip, TAR_XFORM_NAME);
	if (t->out_is_file && (uint64_t)e->st.dev == t->out_dev && (uint64_t)e->st.ino == t->out_ino) {
		progress_clear(t->progress);
		if (tar_warning_shown("file is the archive; not dumped"))
			cli_msg("%s: file is the archive; not dumped", tar_display(t, e->path));
		return 0;
	}
	/* In walk order: after the files the walk met before it (read now, before t->entry is filled). */
	if (in_walk_order(t) && !S_ISREG(mode) && !S_ISSOCK(mode) && (sweep_batch_flush(t->batch) < 0 || t->failed))
		return -EIO;
	/* -u: what the archive has as new is not stored again (a directory's entries are looked at). */
	bool member = !t->update || tar_update_check(t, name, &e->st) == TAR_UPD_ADD;
	if (!member && !S_ISDIR(mode))
		return 0;
	switch (mode & S_IFMT) {
	case S_IFDIR: {
		int r = walk_dir(t, e, name, member);
		/* --no-recursion: the directory's own member, nothing below it. */
		return r == 0 && t->o->roots[e->root_index].no_recursion ? SWEEP_WALK_SKIP : r;
	}
	case S_IFREG:
		return walk_file(t, e, strip);
	case S_IFSOCK:
		progress_clear(t->progress);
		if (tar_warning_shown("socket ignored"))
			cli_msg("%s: socket ignored", tar_display(t, e->path));
		return 0;
	default:
		return walk_special(t, e, name, strip);
	}
}

static int on_error(const struct sweep_walk_error *err, void *ctx)
{
	struct tar *t = ctx;

	switch (err->op) {
	case SWEEP_WALK_OP_OPENDIR:
		tar_read_failed(t, err->path, "Cannot open: %s", strerror(-err->err));
		break;
	case SWEEP_WALK_OP_READDIR:
		tar_read_failed(t, err->path, "Cannot read: %s", strerror(-err->err));
		break;
	case SWEEP_WALK_OP_STAT:
		if (err->err == -ENOENT)
			tar_warn(t, err->path, "File removed before we read it");
		else
			tar_read_failed(t, err->path, "Cannot stat: %s", strerror(-err->err));
		break;
	case SWEEP_WALK_OP_LOOP:
		tar_warn(t, err->path, "File system loop detected; not dumped");
		break;
	case SWEEP_WALK_OP_ROOT:
		tar_read_failed(t, err->path, "Cannot stat: %s", strerror(-err->err));
		break;
	}
	return t->failed ? -EIO : 0;
}

int tar_on_sort(const struct sweep_plan *p, void *ctx)
{
	struct tar *t = ctx;

	progress_planning(t->progress, sweep_plan_count(p));
	return 0;
}

int tar_on_batch(const struct sweep_plan *p, void *ctx)
{
	struct tar *t = ctx;
	int r;

	if (t->failed)
		return -EIO;
	test_pause("plan", 0);
	t->plan = p;
	if (t->walk_no_stat && t->progress) {
		/* The sizes the walk did not learn: the plan's, or known when a file is opened (read.c). */
		uint64_t bytes = 0;
		int64_t unsized = 0;
		for (size_t i = 0, n = sweep_plan_count(p); i < n; i++) {
			const struct sweep_plan_entry *e = sweep_plan_entry(p, i);
			bytes += e->size;
			unsized += (e->flags & SWEEP_PLAN_UNSIZED) != 0;
		}
		progress_plan(t->progress, 0, bytes);
		progress_unsized(t->progress, unsized);
	}
	if (t->trace_fd >= 0) {
		r = sweep_trace_write(p, t->trace_fd, t->trace_header_done ? 0 : SWEEP_TRACE_HEADER);
		if (r < 0)
			cli_error(r, "%s", tar_printable(t->o->plan_trace));
		t->trace_header_done = true;
	}
	return 0;
}

int tar_on_batch_end(const struct sweep_plan *p, int status, void *ctx)
{
	struct tar *t = ctx;

	(void)p;
	t->plan = NULL;
	if (status < 0 && !t->failed) {
		progress_clear(t->progress);
		cli_error(status, "cannot read the planned files");
		cli_msg("Error is not recoverable: exiting now");
		t->failed = true;
		t->status = TAR_FATAL;
	}
	return t->failed ? -EIO : 0;
}

int tar_walk(struct tar *t)
{
	const char **roots = calloc(t->o->nroots, sizeof(*roots));
	struct sweep_walk_opts wo = {
		.size = sizeof(wo),
		.flags = t->o->xdev ? SWEEP_WALK_XDEV : 0,
		.order = t->o->order, /* directories in the order files are read */
		.on_entry = on_entry,
		.on_error = on_error,
		.ctx = t,
	};
	int r;

	if (!roots)
		return -ENOMEM;
	if (t->o->dereference)
		wo.flags |= SWEEP_WALK_FOLLOW;
	for (size_t i = 0; i < t->o->nroots; i++)
		roots[i] = t->o->roots[i].path;
	/*
	 * Regular files are stat'ed when read (read.c): the reader's fstat
	 * of the file it opened gives everything a member needs, in every
	 * device class. The walk's stat of each one only brought the inode in
	 * a second time, on the walk threads where they run (SSD class, warm
	 * /usr/share: 51k stats more than GNU tar, 13k context switches).
	 * -u compares every file's mtime with its member's as it is met.
	 */
	t->walk_no_stat = t->o->nroots && !t->update;
	if (t->walk_no_stat)
		wo.flags |= SWEEP_WALK_NO_STAT_FILES;
	r = sweep_walk(roots, t->o->nroots, &wo);
	free(roots);
	progress_walk_done(t->progress);
	test_pause("walk", 0);
	if (r < 0 && !t->failed) {
		progress_clear(t->progress);
		cli_error(r, "cannot walk the tree");
		cli_msg("Error is not recoverable: exiting now");
		t->failed = true;
		t->status = TAR_FATAL;
	}
	if (t->failed)
		return -EIO;
	r = sweep_batch_flush(t->batch);
	return t->failed || r < 0 ? -EIO : 0;
}
