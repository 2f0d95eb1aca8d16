/* SPDX-License-Identifier: MIT */
/*
 * Opening a name below a directory we hold, never following a symlink on
 * the way and never leaving that directory's tree (doc/design.md §3a). Anyone who
 * can write into a tree can swap a directory for a symlink between our walk
 * and our open; a path lookup from the top would then follow it anywhere.
 *
 * openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS) does
 * it in one call where the kernel has it (5.6+). Without it (ENOSYS, or a
 * seccomp filter answering EPERM), and for names longer than PATH_MAX, the
 * name is walked one component at a time: every directory opened O_PATH |
 * O_DIRECTORY | O_NOFOLLOW relative to the previous one, the last one with
 * O_NOFOLLOW. Both refuse "..", which the callers never produce.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#define BENEATH_RESOLVE (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)

static int have_openat2;
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static int force_components; /* test hook */

/* A harmless openat2 of "." says whether the kernel (and any seccomp filter) lets us use it. */
static void probe(void)
{
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC, .resolve = BENEATH_RESOLVE };
	long fd = syscall(SYS_openat2, AT_FDCWD, ".", &how, sizeof(how));

	have_openat2 = fd >= 0;
	if (fd >= 0)
		close((int)fd);
}

void sweep__open_beneath_force_components(int on)
{
	force_components = on;
}

int sweep__openat2_usable(void)
{
	if (force_components)
		return 0;
	pthread_once(&probe_once, probe);
	return have_openat2;
}

static bool is_symlink(int dirfd, const char *name)
{
	struct stat st;
	return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
}

/* The component walk. rel is relative; a trailing "/" or "." is allowed. */
static int open_components(int dirfd, const char *rel, int flags, mode_t mode)
{
	char name[NAME_MAX + 1];
	const char *p = rel;
	int fd = dirfd, err;

	for (;;) {
		while (*p == '/')
			p++;
		const char *end = strchrnul(p, '/');
		size_t n = (size_t)(end - p);
		const char *rest = end;
		while (*rest == '/')
			rest++;
		bool last = *rest == '\0';
		if (n > NAME_MAX) {
			err = -ENAMETOOLONG;
			goto fail;
		}
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			err = -EXDEV; /* what RESOLVE_BENEATH says for an escape */
			goto fail;
		}
		memcpy(name, p, n);
		name[n] = '\0';
		if (n == 0)
			strcpy(name, ".");
		if (last) {
			int r = openat(fd, name, flags | O_NOFOLLOW | O_CLOEXEC, mode);
			err = r < 0 ? -errno : r;
			/* O_DIRECTORY|O_NOFOLLOW on a symlink says ENOTDIR: say what it is. */
			if (err == -ENOTDIR && is_symlink(fd, name))
				err = -ELOOP;
			if (fd != dirfd)
				close(fd);
			return err;
		}
		if (n == 1 && p[0] == '.') {
			p = rest;
			continue;
		}
		int nfd = openat(fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0) {
			err = -errno;
			/* A symlink where a directory was: say so the way openat2 does. */
			if (err == -ENOTDIR && is_symlink(fd, name))
				err = -ELOOP;
			goto fail;
		}
		if (fd != dirfd)
			close(fd);
		fd = nfd;
		p = rest;
	}
fail:
	if (fd != dirfd)
		close(fd);
	return err;
}

int sweep__open_beneath(int dirfd, const char *rel, int flags, mode_t mode)
{
	if (!rel || rel[0] == '/' || (dirfd < 0 && dirfd != AT_FDCWD))
		return -EINVAL;
	if (!rel[0])
		rel = ".";
	if (sweep__openat2_usable()) {
		struct open_how how = {
			.flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC),
			.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0,
			.resolve = BENEATH_RESOLVE,
		};
		/*
		 * EAGAIN: a rename or mount anywhere on the machine while a ".."
		 * was resolved made the kernel give up; asked again, it
		 * usually succeeds. The walk is as safe, but refuses every ".."
		 * (EXDEV): "d/a/../a/f" failed so on a busy machine.
		 */
		long fd;
		int tries = 0;
		do
			fd = syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));
		while (fd < 0 && errno == EAGAIN && ++tries < 64);
		if (fd >= 0)
			return (int)fd;
		/* ENAMETOOLONG: longer than PATH_MAX, walk it. EAGAIN still: walk it. */
		if (errno == ENOTDIR && (flags & O_DIRECTORY))
			return open_components(dirfd, rel, flags, mode); /* a trailing symlink: let it say ELOOP */
		if (errno != ENAMETOOLONG && errno != EAGAIN)
			return -errno;
	}
	return open_components(dirfd, rel, flags, mode);
}

SWEEP_EXPORT int sweep_open_beneath(int dirfd, const char *path, int flags, unsigned mode)
{
	/* O_PATH callers get what they ask; everybody gets O_NOFOLLOW and O_CLOEXEC. */
	return sweep__open_beneath(dirfd, path, flags, (mode_t)mode);
}
