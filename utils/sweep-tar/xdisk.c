/* SPDX-License-Identifier: MIT */
/*
 * -x: members written to disk through descriptors, so that nothing lands
 * outside -C however the tree below it changes meanwhile (doc/design.md
 * §3a). Anyone who can write into the extraction directory can swap a
 * directory the archive fills for a symlink, in a loop; a writer that looks
 * a path up and then opens it in a second step (libarchive's
 * archive_write_disk, GNU tar, bsdtar) is sent wherever the symlink points
 * by one of the swaps.
 *
 * Here:
 *   - -C is opened once, as the user named it, and held;
 *   - a member's directory is opened below it with sweep_open_beneath()
 *     (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), one component at a
 *     time where directories are missing, each made with mkdirat() in the
 *     directory descriptor opened before it: a symlink on the way is an
 *     error for that member, never followed;
 *   - the member is made in that verified directory: a file with
 *     O_CREAT | O_EXCL | O_NOFOLLOW (never an existing file opened for
 *     writing: what stands at its name is removed first, unless -k or
 *     --skip-old-files), a symlink with symlinkat(), a hard link with
 *     linkat() between two verified directories without following the
 *     target, FIFOs and devices with mknodat();
 *   - its owner, mode, xattrs, ACLs and times are set through its own
 *     descriptor (xmeta.c): the file's, or an O_PATH one for symlinks,
 *     FIFOs and devices, checked to be what was just made;
 *   - a directory member is made 0700 and its metadata waits for the end
 *     (a read-only directory can still be filled, and its mtime is not
 *     moved by what goes into it): each is then opened below -C again
 *     without following symlinks, checked to be the same inode as when it
 *     was made, and set through that descriptor, deepest first.
 *
 * A directory renamed away by the attacker while we hold it takes later
 * members with it only to where the attacker could write anyway: rename
 * needs write access to the new parent, so nothing the attacker cannot
 * write changes.
 *
 * Names: one with a ".." component is refused (an error, nothing of it
 * written), as bsdtar refuses it; an absolute name has lost its leading
 * '/' before it comes here (tar_read_names(), as GNU tar and bsdtar), and
 * is refused here too should one come. Nothing lands outside -C.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "tar.h"
#include "xdisk.h"

/* A directory member whose metadata waits for the end. */
struct xdir {
	char *rel;
	dev_t dev;
	ino_t ino;
	size_t order;
	unsigned depth;
	struct xmeta m;
};

struct xdisk {
	const struct xmeta_ctx *c;
	int root;       /* -C, held */
	char *pdir;     /* the member directory last opened (relative to root), and its descriptor */
	int pfd;
	struct xdir *dirs;
	size_t ndirs, cap;
};

/* Tries at replacing what stands at a name before giving up (someone keeps putting it back). */
#define MAKE_TRIES 8

int xdisk_open(const struct xmeta_ctx *c, const char *dir, struct xdisk **ret)
{
	struct xdisk *x = calloc(1, sizeof(*x));

	if (!x)
		return -ENOMEM;
	x->c = c;
	x->pfd = -1;
	x->root = open(dir ? dir : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (x->root < 0) {
		int err = -errno;
		cli_msg("%s: Cannot open: %s", tar_printable(dir ? dir : "."), strerror(-err));
		free(x);
		return err;
	}
	*ret = x;
	return 0;
}

/*
 * A member name as a name below -C: "./a//b/" -> "a/b", "." and "./" ->
 * ".". NULL after a message when it is refused (absolute, or a ".."
 * component). The result is malloc'ed.
 */
static char *member_rel(struct tar *t, const char *name, const char *shown)
{
	char *rel, *q;
	const char *p = name;

	if (name[0] == '/') {
		tar_error(t, shown, "Cannot open: Path is absolute");
		return NULL;
	}
	if (!(rel = malloc(strlen(name) + 2)))
		return NULL;
	q = rel;
	while (*p) {
		const char *end = strchrnul(p, '/');
		size_t n = (size_t)(end - p);

		if (n == 2 && p[0] == '.' && p[1] == '.') {
			tar_error(t, shown, "Cannot open: Path contains '..'");
			free(rel);
			return NULL;
		}
		if (n > 0 && !(n == 1 && p[0] == '.')) {
			if (q != rel)
				*q++ = '/';
			memcpy(q, p, n);
			q += n;
		}
		p = end;
		while (*p == '/')
			p++;
	}
	if (q == rel)
		*q++ = '.';
	*q = '\0';
	return rel;
}

/* rel's directory ("" for -C itself) and last component, split in place. */
static const char *split(char *rel, const char **dir)
{
	char *slash = strrchr(rel, '/');

	if (!slash) {
		*dir = "";
		return rel;
	}
	*slash = '\0';
	*dir = rel;
	return slash + 1;
}

static void close_parent(struct xdisk *x)
{
	if (x->pfd >= 0 && x->pfd != x->root)
		close(x->pfd);
	x->pfd = -1;
	free(x->pdir);
	x->pdir = NULL;
}

/* What an error on the way means, in the words of the message. */
static const char *way_error(int err)
{
	if (err == -ELOOP || err == -EXDEV)
		return "Cannot extract through a symlink";
	return strerror(-err);
}

/* The directories of dir made where missing, one component at a time below -C. A descriptor or -errno. */
static int make_parents(struct xdisk *x, const char *dir)
{
	char *copy = strdup(dir), *save = NULL;
	int fd = x->root, err = 0;

	if (!copy)
		return -ENOMEM;
	for (char *comp = strtok_r(copy, "/", &save); comp; comp = strtok_r(NULL, "/", &save)) {
		int nfd = -ENOENT;

		for (int tries = 0; tries < MAKE_TRIES && nfd == -ENOENT; tries++) {
			nfd = sweep_open_beneath(fd, comp, O_PATH | O_DIRECTORY, 0);
			if (nfd == -ENOENT && mkdirat(fd, comp, 0777) != 0 && errno != EEXIST) {
				nfd = -errno;
				break;
			}
		}
		if (fd != x->root)
			close(fd);
		if (nfd < 0) {
			err = nfd;
			fd = -1;
			break;
		}
		fd = nfd;
	}
	free(copy);
	return err < 0 ? err : fd;
}

/* The verified directory dir below -C ("" for -C), made where missing; kept for the next member. */
static int open_parent(struct xdisk *x, const char *dir)
{
	int fd;

	if (x->pdir && strcmp(x->pdir, dir) == 0)
		return x->pfd;
	close_parent(x);
	if (!*dir)
		fd = x->root;
	else if ((fd = sweep_open_beneath(x->root, dir, O_PATH | O_DIRECTORY, 0)) == -ENOENT)
		fd = make_parents(x, dir);
	if (fd < 0)
		return fd;
	if (!(x->pdir = strdup(dir))) {
		if (fd != x->root)
			close(fd);
		return -ENOMEM;
	}
	x->pfd = fd;
	return fd;
}

/* Is base in pfd the same file as target in tfd (a hard link made already)? */
static bool same_file(int pfd, const char *base, int tfd, const char *tbase)
{
	struct stat a, b;

	return fstatat(pfd, base, &a, AT_SYMLINK_NOFOLLOW) == 0 && fstatat(tfd, tbase, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* --backup: base in pfd renamed to its backup name; 0, or <0 after GNU tar's message. */
static int backup(struct xdisk *x, int pfd, const char *base, const char *name)
{
	struct tar *t = x->c->t;
	char *to = tar_backup_name(pfd, base), *shown = NULL;
	const char *slash = strrchr(name, '/');
	int err = 0;

	if (!to)
		return -ENOMEM;
	if (asprintf(&shown, "%.*s%s", slash ? (int)(slash - name + 1) : 0, name, to) < 0)
		shown = NULL;
	if (renameat(pfd, base, pfd, to) != 0) {
		err = errno;
		tar_error(t, name, "Cannot rename to %s", cli_quote(shown ? shown : to));
	} else if (t->o->verbose) {
		progress_clear_for(t->progress, t->listing);
		fprintf(t->listing, "Renaming %s to ", cli_quote(name));
		fprintf(t->listing, "%s\n", cli_quote(shown ? shown : to));
	}
	free(to);
	free(shown);
	return -err;
}

/*
 * Something stands at base where the member goes. 0: it was removed, try
 * again; 1: the member is skipped (-k, said; --skip-old-files, silently);
 * <0 after a message.
 */
static int make_room(struct xdisk *x, int pfd, const char *base, const char *name, bool want_dir)
{
	struct tar *t = x->c->t;
	struct stat st;

	if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		int err = errno;
		if (err == ENOENT)
			return 0;
		tar_error(t, name, "Cannot open: %s", strerror(err));
		return -err;
	}
	/* -k and --skip-old-files keep an existing directory as it is, as GNU tar does (metadata too). */
	if (want_dir && S_ISDIR(st.st_mode) && t->o->old_files == TAR_OLD_REPLACE)
		return 0;
	if (t->o->old_files == TAR_OLD_SKIP) {
		/* GNU tar's note, a warning -v turns on (WARN_EXISTING_FILE), with the exit status untouched. */
		if (t->o->verbose && tar_warning_shown("skipping existing file")) {
			progress_clear(t->progress);
			fflush(stdout);
			const char *shown = tar_printable(name);
			size_t n = strlen(shown);
			while (n > 1 && shown[n - 1] == '/')
				n--; /* GNU tar names a directory without its '/' here */
			fprintf(stderr, "%s: %.*s: skipping existing file\n", cli_prog(), (int)n, shown);
		}
		return 1;
	}
	if (want_dir && S_ISDIR(st.st_mode))
		return 1; /* -k: an existing directory is no error */
	if (t->o->old_files == TAR_OLD_KEEP) {
		tar_error(t, name, "Cannot open: %s", strerror(EEXIST));
		return 1;
	}
	/* --backup: what stands there is renamed next to itself, not removed (GNU tar's maybe_backup_file). */
	if (tar_backups() && !S_ISDIR(st.st_mode))
		return backup(x, pfd, base, name);
	if (unlinkat(pfd, base, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) != 0 && errno != ENOENT) {
		int err = errno == ENOTEMPTY ? EEXIST : errno;
		tar_error(t, name, "Cannot open: %s", strerror(err));
		return -err;
	}
	return 0;
}

/* The member's data into fd, block by block at its offsets (holes stay holes). */
static int write_data(struct xdisk *x, struct archive *in, struct archive_entry *e, int fd, const char *name,
		      bool *write_failed)
{
	const void *buf;
	size_t len;
	la_int64_t off, end = 0;
	int r;

	while ((r = archive_read_data_block(in, &buf, &len, &off)) == ARCHIVE_OK) {
		tar_checkpoint_in(x->c->t, in);
		if (*write_failed)
			continue; /* read on: the archive goes on after this member */
		for (size_t done = 0; done < len;) {
			ssize_t n = pwrite(fd, (const char *)buf + done, len - done, off + (off_t)done);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				tar_error(x->c->t, name, "Cannot write: %s", n < 0 ? strerror(errno) : "short write");
				*write_failed = true;
				break;
			}
			done += (size_t)n;
		}
		if (off + (la_int64_t)len > end)
			end = off + (la_int64_t)len;
	}
	if (r == ARCHIVE_EOF) {
		r = ARCHIVE_OK;
		/* A trailing hole: the size makes it. */
		if (!*write_failed && archive_entry_size(e) > end && ftruncate(fd, archive_entry_size(e)) != 0) {
			tar_error(x->c->t, name, "Cannot write: %s", strerror(errno));
			*write_failed = true;
		}
	}
	return r;
}

static int member_file(struct xdisk *x, struct archive *in, struct archive_entry *e, int pfd, const char *base,
		       const char *name)
{
	struct xmeta m;
	bool failed = false;
	int fd = -EEXIST, r;

	for (int tries = 0; tries < MAKE_TRIES && fd == -EEXIST; tries++) {
		fd = openat(pfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			fd = -errno;
		if (fd == -EEXIST && (r = make_room(x, pfd, base, name, false)) != 0)
			return ARCHIVE_OK;
	}
	if (fd < 0) {
		tar_error(x->c->t, name, "Cannot open: %s", strerror(-fd));
		return ARCHIVE_OK;
	}
	r = write_data(x, in, e, fd, name, &failed);
	if (xmeta_from_entry(x->c, e, &m) == 0) {
		xmeta_apply(x->c, &m, fd, false, name);
		xmeta_free(&m);
	}
	if (close(fd) != 0 && !failed)
		tar_error(x->c->t, name, "Cannot close: %s", strerror(errno));
	return r;
}

/* Open what was just made at base (O_PATH, not followed) and check it is of type fmt; -errno otherwise. */
static int open_made(int pfd, const char *base, mode_t fmt)
{
	struct stat st;
	int fd = openat(pfd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0 || (st.st_mode & S_IFMT) != fmt) {
		close(fd);
		return -EAGAIN; /* replaced since: not ours to change */
	}
	return fd;
}

/* A symlink, FIFO, device: made, then its metadata through an O_PATH descriptor of what was made. */
static void member_node(struct xdisk *x, struct archive_entry *e, int pfd, const char *base, const char *name)
{
	mode_t fmt = archive_entry_filetype(e);
	const char *target = archive_entry_symlink(e);
	struct xmeta m;
	int r = -EEXIST, fd;

	for (int tries = 0; tries < MAKE_TRIES && r == -EEXIST; tries++) {
		if (fmt == AE_IFLNK)
			r = symlinkat(target ? target : "", pfd, base);
		else
			r = mknodat(pfd, base, fmt | 0600, archive_entry_rdev(e));
		if (r != 0)
			r = -errno;
		if (r == -EEXIST && make_room(x, pfd, base, name, false) != 0)
			return;
	}
	if (r < 0) {
		tar_error(x->c->t, name, "Cannot %s: %s", fmt == AE_IFLNK ? "create symlink" : "mknod", strerror(-r));
		return;
	}
	if ((fd = open_made(pfd, base, fmt)) < 0) {
		tar_error(x->c->t, name, "Cannot change attributes: %s",
			  fd == -EAGAIN ? "replaced while extracted" : strerror(-fd));
		return;
	}
	if (xmeta_from_entry(x->c, e, &m) == 0) {
		xmeta_apply(x->c, &m, fd, true, name);
		xmeta_free(&m);
	}
	close(fd);
}

static void member_hardlink(struct xdisk *x, struct archive_entry *e, int pfd, const char *base, const char *name)
{
	struct tar *t = x->c->t;
	const char *target = archive_entry_hardlink(e), *tdir, *tbase;
	char *trel = member_rel(t, target, name);
	int tfd, r = -EEXIST;

	if (!trel)
		return;
	tbase = split(trel, &tdir);
	tfd = *tdir ? sweep_open_beneath(x->root, tdir, O_PATH | O_DIRECTORY, 0) : x->root;
	for (int tries = 0; tfd >= 0 && tries < MAKE_TRIES && r == -EEXIST; tries++) {
		r = linkat(tfd, tbase, pfd, base, 0) == 0 ? 0 : -errno;
		if (r == -EEXIST && same_file(pfd, base, tfd, tbase))
			r = 0; /* linked already: nothing to say, as GNU tar */
		else if (r == -EEXIST && make_room(x, pfd, base, name, false) != 0)
			r = 0;
	}
	if (tfd < 0 || r < 0)
		tar_error(t, name, "Cannot hard link to %s: %s", cli_quote(target), way_error(tfd < 0 ? tfd : r));
	if (tfd >= 0 && tfd != x->root)
		close(tfd);
	free(trel);
}

static int add_dir(struct xdisk *x, const char *rel, const struct stat *st, struct archive_entry *e)
{
	struct xdir *d;

	if (x->ndirs == x->cap) {
		size_t cap = x->cap ? 2 * x->cap : 64;
		struct xdir *n = realloc(x->dirs, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		x->dirs = n;
		x->cap = cap;
	}
	d = &x->dirs[x->ndirs];
	if (!(d->rel = strdup(rel)))
		return -ENOMEM;
	if (xmeta_from_entry(x->c, e, &d->m) < 0) {
		free(d->rel);
		return -ENOMEM;
	}
	d->dev = st->st_dev;
	d->ino = st->st_ino;
	d->order = x->ndirs;
	d->depth = 0;
	for (const char *p = rel; *p; p++)
		d->depth += *p == '/';
	x->ndirs++;
	return 0;
}

static void member_dir(struct xdisk *x, struct archive_entry *e, int pfd, const char *base, const char *rel,
		       const char *name)
{
	bool top = strcmp(rel, ".") == 0; /* -C itself: there already */
	bool existed = top;
	struct stat st;
	int r = 0, fd;

	for (int tries = 0; !top && tries < MAKE_TRIES; tries++) {
		if (mkdirat(pfd, base, 0700) == 0) {
			r = 0;
			break;
		}
		r = -errno;
		if (r != -EEXIST || make_room(x, pfd, base, name, true) != 0)
			break;
		if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
			r = 0; /* a directory there already: it takes the member's metadata */
			existed = true;
			break;
		}
	}
	if (r == -EEXIST)
		return; /* kept (-k, --skip-old-files) and said, or could not be removed and said */
	if (r < 0) {
		tar_error(x->c->t, name, "Cannot mkdir: %s", strerror(-r));
		return;
	}
	fd = sweep_open_beneath(top ? x->root : pfd, top ? "." : base, O_PATH | O_DIRECTORY, 0);
	if (fd < 0 || fstat(fd, &st) != 0) {
		tar_error(x->c->t, name, "Cannot open: %s", way_error(fd < 0 ? fd : -errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	close(fd);
	/* --no-overwrite-dir: a directory that was there keeps its own metadata. */
	if (existed && x->c->t->o->no_overwrite_dir)
		return;
	if (add_dir(x, rel, &st, e) < 0)
		tar_error(x->c->t, name, "Cannot keep its metadata: %s", strerror(ENOMEM));
}

int xdisk_member(struct xdisk *x, struct archive *in, struct archive_entry *e)
{
	const char *name = archive_entry_pathname(e), *dir, *base;
	char *rel = member_rel(x->c->t, name, name), *relcopy;
	int pfd, r = ARCHIVE_OK;

	if (!rel)
		return ARCHIVE_OK;
	if (!(relcopy = strdup(rel))) {
		free(rel);
		return ARCHIVE_FATAL;
	}
	base = split(rel, &dir);
	if (strcmp(relcopy, ".") == 0) {
		pfd = x->root;
	} else if ((pfd = open_parent(x, dir)) < 0) {
		tar_error(x->c->t, name, "Cannot open: %s", way_error(pfd));
		goto out;
	}
	if (archive_entry_hardlink(e))
		member_hardlink(x, e, pfd, base, name);
	else if (archive_entry_filetype(e) == AE_IFREG)
		r = member_file(x, in, e, pfd, base, name);
	else if (archive_entry_filetype(e) == AE_IFDIR)
		member_dir(x, e, pfd, base, relcopy, name);
	else if (archive_entry_filetype(e) == AE_IFLNK || archive_entry_filetype(e) == AE_IFIFO ||
		 archive_entry_filetype(e) == AE_IFCHR || archive_entry_filetype(e) == AE_IFBLK)
		member_node(x, e, pfd, base, name);
	else
		tar_error(x->c->t, name, "Cannot create: unknown file type");
out:
	free(rel);
	free(relcopy);
	return r;
}

/* The last member of one inode wins (GNU tar updates a directory's pending status by name). */
static int by_inode(const void *a, const void *b)
{
	const struct xdir *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Deepest first: a parent made unreadable cannot hide a child, nor a child's change move its times. */
static int by_depth(const void *a, const void *b)
{
	const struct xdir *x = a, *y = b;

	if (x->depth != y->depth)
		return x->depth > y->depth ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static void finish_dir(struct xdisk *x, struct xdir *d)
{
	struct stat st;
	int fd = sweep_open_beneath(x->root, d->rel, O_RDONLY | O_DIRECTORY, 0);

	/* Gone or replaced since (by a later member, or someone else): not ours to change. */
	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && st.st_dev == d->dev && st.st_ino == d->ino)
		xmeta_apply(x->c, &d->m, fd, false, d->rel);
	close(fd);
}

void xdisk_close(struct xdisk *x)
{
	size_t k = 0;

	if (!x)
		return;
	close_parent(x);
	if (x->ndirs)
		qsort(x->dirs, x->ndirs, sizeof(*x->dirs), by_inode);
	for (size_t i = 0; i < x->ndirs; i++) {
		bool last = i + 1 == x->ndirs || x->dirs[i + 1].dev != x->dirs[i].dev || x->dirs[i + 1].ino != x->dirs[i].ino;
		if (last)
			x->dirs[k++] = x->dirs[i];
		else {
			free(x->dirs[i].rel);
			xmeta_free(&x->dirs[i].m);
		}
	}
	if (k)
		qsort(x->dirs, k, sizeof(*x->dirs), by_depth);
	for (size_t i = 0; i < k; i++) {
		finish_dir(x, &x->dirs[i]);
		free(x->dirs[i].rel);
		xmeta_free(&x->dirs[i].m);
	}
	free(x->dirs);
	close(x->root);
	free(x);
}
