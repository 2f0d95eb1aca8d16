/* SPDX-License-Identifier: MIT */
/*
 * -b/--backup, --backup-dir, --suffix: what a run replaces or deletes in
 * DEST is kept, as rsync keeps it: beside it under NAME~ (the suffix), or
 * at the same place below the backup directory (relative to DEST when it
 * is not absolute). A file about to be replaced gets another name (a hard
 * link: the copy then replaces the old name only); a deleted one is moved.
 * Where the backup directory is on another filesystem the file is copied
 * there. Every name is reached beneath DEST's or the backup directory's
 * descriptor, without following a symlink; the backup directory itself is
 * opened as DEST is.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sweep.h>

#include "cli.h"
#include "progress.h"
#include "sync.h"

int backup_open(struct sync_ctx *c)
{
	const char *dir = c->o.backup_dir;
	char *path = NULL;
	bool untrusted;
	int fd;

	c->backup_fd = -1;
	if (!c->o.backup || !dir || c->o.dry_run)
		return 0;
	if (dir[0] != '/') {
		const char *d = c->dest_show && c->dest_show[0] ? c->dest_show : ".";

		path = malloc(strlen(d) + strlen(dir) + 2);
		if (!path)
			return -ENOMEM;
		sprintf(path, "%s/%s", d, dir);
	}
	fd = opath_open(path ? path : dir, O_PATH | O_DIRECTORY | O_CLOEXEC, 0, &untrusted);
	if (fd == -ENOENT && !untrusted) {
		/* rsync makes the backup directory (its last component) when missing */
		const char *name;
		int pfd = opath_open_parent(path ? path : dir, &name, &untrusted);

		if (pfd >= 0) {
			if (mkdirat(pfd, name, 0777) == 0 || errno == EEXIST)
				fd = openat(pfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			fd = fd < 0 ? -errno : fd;
			close(pfd);
		} else {
			fd = pfd;
		}
	}
	if (fd < 0) {
		if (untrusted)
			opath_refusal_msg();
		cli_error(fd, "cannot use the backup directory %s", cli_quote(path ? path : dir));
		free(path);
		return fd;
	}
	free(path);
	c->backup_fd = fd;
	return 0;
}

void backup_close(struct sync_ctx *c)
{
	if (c->backup_fd >= 0)
		close(c->backup_fd);
	c->backup_fd = -1;
}

/* The directory of rel below the backup directory, made as needed (rsync's make_bak_dir). */
static int bak_parent(struct sync_ctx *c, const char *rel, const char **name)
{
	const char *slash = strrchr(rel, '/'), *p = rel;
	int fd = sweep_open_beneath(c->backup_fd, ".", O_PATH | O_DIRECTORY, 0);

	*name = slash ? slash + 1 : rel;
	while (fd >= 0 && slash && p < slash) {
		const char *end = strchr(p, '/');
		char comp[NAME_MAX + 1];
		size_t len = (size_t)(end - p);
		int nfd;

		if (len > NAME_MAX) {
			close(fd);
			return -ENAMETOOLONG;
		}
		memcpy(comp, p, len);
		comp[len] = 0;
		if (mkdirat(fd, comp, 0777) < 0 && errno != EEXIST) {
			nfd = -errno;
		} else {
			/* one component at a time, never through a symlink */
			nfd = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			nfd = nfd < 0 ? -errno : nfd;
		}
		close(fd);
		fd = nfd;
		p = end + 1;
	}
	return fd;
}

/* Copy the non-directory name in sdir to tmp in ddir, with its metadata (another filesystem). */
static int copy_entry(int sdir, const char *name, int ddir, const char *tmp, const struct stat *st)
{
	int r = 0;

	if (S_ISLNK(st->st_mode)) {
		char target[PATH_MAX];
		ssize_t n = readlinkat(sdir, name, target, sizeof(target) - 1);

		if (n < 0)
			return -errno;
		target[n] = 0;
		return symlinkat(target, ddir, tmp) < 0 ? -errno : 0;
	}
	if (!S_ISREG(st->st_mode))
		return mknodat(ddir, tmp, st->st_mode, st->st_rdev) < 0 ? -errno : 0;
	int in = openat(sdir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0)
		return -errno;
	int out = openat(ddir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0) {
		r = -errno;
		close(in);
		return r;
	}
	for (;;) {
		ssize_t n = copy_file_range(in, NULL, out, NULL, 1 << 30, 0);

		if (n == 0)
			break;
		if (n < 0) {
			char buf[65536];
			ssize_t k = read(in, buf, sizeof(buf));

			if (k == 0)
				break;
			if (k < 0 || write(out, buf, (size_t)k) != k) {
				r = -errno ? -errno : -EIO;
				break;
			}
		}
	}
	if (r == 0 && geteuid() == 0 && fchown(out, st->st_uid, st->st_gid) < 0)
		r = -errno;
	if (r == 0 && fchmod(out, st->st_mode & 07777) < 0)
		r = -errno;
	struct timespec ts[2] = { st->st_atim, st->st_mtim };
	if (r == 0 && futimens(out, ts) < 0)
		r = -errno;
	close(in);
	if (close(out) < 0 && r == 0)
		r = -errno;
	if (r < 0)
		unlinkat(ddir, tmp, 0);
	return r;
}

int backup_keep(struct sync_ctx *c, const struct sync_node *n, bool move)
{
	const char *rel = node_dst_rel(c, n), *name, *bname;
	char bak[NAME_MAX + 64], tmp[64];
	struct stat st;
	int ddir, bdir, r;

	if (!c->o.backup || c->o.dry_run)
		return 0;
	ddir = sync_parent_beneath(c->dest_fd, rel, &name);
	if (ddir < 0)
		return ddir;
	if (fstatat(ddir, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || S_ISDIR(st.st_mode)) {
		/* nothing there any more, or a directory: rsync keeps no directory */
		close(ddir);
		return 0;
	}
	if (c->backup_fd >= 0) {
		bdir = bak_parent(c, rel, &bname);
		if (bdir < 0) {
			close(ddir);
			return bdir;
		}
	} else {
		bdir = ddir;
		bname = name;
	}
	if (snprintf(bak, sizeof(bak), "%s%s", bname, c->o.suffix) >= (int)sizeof(bak)) {
		r = -ENAMETOOLONG;
		goto out;
	}
	/* a temporary name, then a rename onto the backup name: an older backup is replaced whole */
	snprintf(tmp, sizeof(tmp), ".sweep-bak.%d.%lu", (int)getpid(), (unsigned long)(n - c->list.v));
	if (move)
		r = renameat(ddir, name, bdir, bak) < 0 ? -errno : 0;
	else
		r = linkat(ddir, name, bdir, tmp, 0) < 0 ? -errno : 0;
	const char *how = move ? "RENAME" : "HLINK"; /* --debug=backup: rsync's make_backup words */
	if (r == -EXDEV) {
		r = copy_entry(ddir, name, bdir, tmp, &st);
		if (r == 0 && move && unlinkat(ddir, name, 0) < 0)
			r = -errno;
		move = false;
		how = S_ISREG(st.st_mode) ? "COPY" : S_ISLNK(st.st_mode) ? "SYMLINK" : "DEVICE";
	}
	if (r == 0 && !move && renameat(bdir, tmp, bdir, bak) < 0) {
		r = -errno;
		unlinkat(bdir, tmp, 0);
	}
	if (r == 0 && c->o.debug_backup > 0) {
		char *line = NULL;
		int len = asprintf(&line, "make_backup: %s %s successful.\n", how, n->rel);

		if (len > 0)
			out_add(c, (size_t)(n - c->list.v), line, (size_t)len);
		free(line);
	}
	if (r == 0 && c->o.info_backup > 0) {
		char *line = NULL;
		int len = asprintf(&line, "backed up %s to %s%s%s%s\n", n->rel, c->o.backup_dir ? c->o.backup_dir : "",
				   c->o.backup_dir ? "/" : "", n->rel, c->o.suffix);

		if (len > 0)
			out_add(c, (size_t)(n - c->list.v), line, (size_t)len);
		free(line);
	}
out:
	if (bdir != ddir)
		close(bdir);
	close(ddir);
	return r;
}
