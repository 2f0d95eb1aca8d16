/* SPDX-License-Identifier: MIT */
/*
 * Paths the operator names (DEST, --exclude-from and the like files) are
 * resolved one component at a time, following a symlink only when root or
 * the user running owns it, as rsync 3.4's open_no_attacker_symlinks does.
 * Root running over a directory another user can write must not be led
 * elsewhere by a symlink that user planted (/backup -> /mnt/disk, made by
 * root, still works). The symlink is opened itself (O_PATH|O_NOFOLLOW), its
 * owner read from that descriptor and its target read through it, so a
 * link exchanged for another between the check and the read is never used.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "sync.h"

#define OPATH_MAX_LINKS 40

bool opath_insecure;

static bool trusted_owner(uid_t uid)
{
	return opath_insecure || uid == 0 || uid == geteuid();
}

int opath_open(const char *path, int flags, mode_t mode, bool *untrusted)
{
	return opath_openat(AT_FDCWD, path, flags, mode, untrusted);
}

int opath_openat(int at, const char *path, int flags, mode_t mode, bool *untrusted)
{
	char *rest, *buf;
	int dfd = AT_FDCWD, links = 0, r;
	size_t cap;

	if (untrusted)
		*untrusted = false;
	if (!path || !*path)
		return -ENOENT;
	if (at != AT_FDCWD && *path != '/') {
		/* our own descriptor of the starting directory: the walk closes the one it holds */
		dfd = fcntl(at, F_DUPFD_CLOEXEC, 0);
		if (dfd < 0)
			return -errno;
	}
	cap = strlen(path) + 1;
	if (cap < PATH_MAX * 2)
		cap = PATH_MAX * 2;
	buf = malloc(cap);
	if (!buf) {
		if (dfd >= 0)
			close(dfd);
		return -ENOMEM;
	}
	strcpy(buf, path);
	rest = buf;
	for (;;) {
		if (*rest == '/') {
			if (dfd >= 0)
				close(dfd);
			dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (dfd < 0) {
				r = -errno;
				goto out;
			}
			while (*rest == '/')
				rest++;
		}
		if (!*rest) {
			/* the path was "/" (or a link to it): open the directory itself */
			r = openat(dfd, ".", flags & ~O_CREAT, mode);
			r = r < 0 ? -errno : r;
			goto out;
		}
		char *slash = strchr(rest, '/');
		if (slash)
			*slash = 0;
		char *next = slash ? slash + 1 : NULL;
		while (next && *next == '/')
			next++;
		bool last = !next || !*next;
		int lfd = openat(dfd, rest, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		struct stat st;

		if (lfd < 0 || fstat(lfd, &st) < 0) {
			r = -errno;
			if (lfd >= 0)
				close(lfd);
			if (r == -ENOENT && last && (flags & O_CREAT)) {
				/* a leaf to create: a symlink planted meanwhile is refused by O_NOFOLLOW */
				r = openat(dfd, rest, flags | O_NOFOLLOW, mode);
				r = r < 0 ? -errno : r;
			}
			goto out;
		}
		if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX];
			ssize_t n;

			if (!trusted_owner(st.st_uid)) {
				close(lfd);
				if (untrusted)
					*untrusted = true;
				r = -ELOOP;
				goto out;
			}
			n = readlinkat(lfd, "", target, sizeof(target) - 1);
			close(lfd);
			if (n < 0 || ++links > OPATH_MAX_LINKS) {
				r = n < 0 ? -errno : -ELOOP;
				goto out;
			}
			target[n] = 0;
			/* the target takes the link's place in what is left to resolve */
			size_t tl = (size_t)n, nl = next ? strlen(next) : 0;
			if (tl + 1 + nl + 1 > cap) {
				r = -ENAMETOOLONG;
				goto out;
			}
			memmove(buf + tl + 1, next ? next : "", nl + 1);
			memcpy(buf, target, tl);
			buf[tl] = nl ? '/' : 0;
			rest = buf;
			if (!*rest) {
				r = -ENOENT;
				goto out;
			}
			continue;
		}
		if (last) {
			if ((flags & O_PATH) && !(flags & O_DIRECTORY)) {
				r = lfd; /* the O_PATH descriptor is the answer */
				goto out;
			}
			close(lfd);
			r = openat(dfd, rest, (flags & ~O_CREAT) | O_NOFOLLOW, mode);
			r = r < 0 ? -errno : r;
			goto out;
		}
		if (!S_ISDIR(st.st_mode)) {
			close(lfd);
			r = -ENOTDIR;
			goto out;
		}
		if (dfd >= 0)
			close(dfd);
		dfd = lfd;
		rest = next;
	}
out:
	if (dfd >= 0)
		close(dfd);
	free(buf);
	return r;
}

int opath_open_parent(const char *path, const char **ret_name, bool *untrusted)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int fd;

	if (untrusted)
		*untrusted = false;
	*ret_name = slash ? slash + 1 : path;
	if (!slash)
		return opath_open(".", O_PATH | O_DIRECTORY | O_CLOEXEC, 0, untrusted);
	dir = strndup(path, slash == path ? 1 : (size_t)(slash - path));
	if (!dir)
		return -ENOMEM;
	fd = opath_open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC, 0, untrusted);
	free(dir);
	return fd;
}

void opath_refusal_msg(void)
{
	cli_msg("refusing to follow a symlink owned by an untrusted user (--insecure-links turns this check off)");
}
