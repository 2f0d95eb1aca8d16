/* SPDX-License-Identifier: MIT */
/*
 * LD_PRELOAD test hook: a source file vanishes between the walk and the read.
 * When a file whose last component is $SWEEP_TEST_VANISH is opened for
 * reading without O_NOFOLLOW (the reader's open; the plan's FIEMAP probe
 * uses O_NOFOLLOW), it is unlinked first, so the open fails with ENOENT the
 * way a file deleted by someone else mid-run does; one named
 * $SWEEP_TEST_SHRINK is cut to 1000 bytes instead. Needs the syscall
 * backend (io_uring opens do not go through libc).
 */
/* Define open and open64 as two symbols: no large-file renaming here. */
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int (*openat_fn)(int, const char *, int, ...);

static bool named(const char *path, const char *var)
{
	const char *target = getenv(var);
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	return target && *target && strcmp(base, target) == 0;
}

static void maybe_vanish(int dirfd, const char *path, int flags)
{
	if ((flags & (O_NOFOLLOW | O_DIRECTORY | O_PATH)) || (flags & O_ACCMODE) != O_RDONLY)
		return;
	if (named(path, "SWEEP_TEST_VANISH"))
		unlinkat(dirfd, path, 0);
	if (named(path, "SWEEP_TEST_SHRINK")) { /* to 1000 bytes, after it was planned */
		int fd = ((openat_fn)dlsym(RTLD_NEXT, "openat"))(dirfd, path, O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			(void)!ftruncate(fd, 1000);
			close(fd);
		}
	}
}

static int call_openat(const char *sym, int dirfd, const char *path, int flags, mode_t mode)
{
	openat_fn real = (openat_fn)dlsym(RTLD_NEXT, sym);
	maybe_vanish(dirfd, path, flags);
	return real(dirfd, path, flags, mode);
}

#define MODE_ARG(flags, mode)                                   \
	do {                                                    \
		if ((flags) & (O_CREAT | __O_TMPFILE)) {        \
			va_list ap;                             \
			va_start(ap, flags);                    \
			mode = va_arg(ap, mode_t);              \
			va_end(ap);                             \
		}                                               \
	} while (0)

int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;
	MODE_ARG(flags, mode);
	return call_openat("openat", dirfd, path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;
	MODE_ARG(flags, mode);
	return call_openat("openat64", dirfd, path, flags, mode);
}

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	MODE_ARG(flags, mode);
	return call_openat("openat", AT_FDCWD, path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
	mode_t mode = 0;
	MODE_ARG(flags, mode);
	return call_openat("openat64", AT_FDCWD, path, flags, mode);
}
