/*
 * LD_PRELOAD shim for bench/race-peers/run.sh: the first open of a file whose
 * last path component is $RACE_PAUSE_NAME stops until the driver has swapped
 * something and removed $RACE_PAUSE_FLAG. It stands in for sweep's own
 * pause points (test builds only) so that GNU cp, GNU tar and rsync can be
 * put through the same races. Bench tool, not part of the library.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int paused;

static void maybe_pause(const char *path)
{
	const char *name = getenv("RACE_PAUSE_NAME"), *flag = getenv("RACE_PAUSE_FLAG");
	const char *base;
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	int fd;

	if (paused || !name || !flag || !path)
		return;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (strcmp(base, name) != 0)
		return;
	paused = 1;
	fd = open(flag, O_WRONLY | O_CREAT | O_CLOEXEC, 0600); /* tells the driver where we are */
	if (fd >= 0)
		close(fd);
	for (int i = 0; i < 1000 && access(flag, F_OK) == 0; i++) /* at most 10 s */
		nanosleep(&tick, NULL);
}

#define WRAP_OPENAT(fn)                                                          \
	int fn(int dirfd, const char *path, int flags, ...)                      \
	{                                                                        \
		static int (*real)(int, const char *, int, ...);                 \
		mode_t mode = 0;                                                 \
		if (flags & (O_CREAT | __O_TMPFILE)) {                           \
			va_list ap;                                              \
			va_start(ap, flags);                                     \
			mode = va_arg(ap, mode_t);                               \
			va_end(ap);                                              \
		}                                                                \
		if (!real)                                                       \
			real = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, #fn); \
		if (!(flags & (O_CREAT | O_DIRECTORY)))                          \
			maybe_pause(path);                                       \
		return real(dirfd, path, flags, mode);                           \
	}
#define WRAP_OPEN(fn)                                                            \
	int fn(const char *path, int flags, ...)                                 \
	{                                                                        \
		static int (*real)(const char *, int, ...);                      \
		mode_t mode = 0;                                                 \
		if (flags & (O_CREAT | __O_TMPFILE)) {                           \
			va_list ap;                                              \
			va_start(ap, flags);                                     \
			mode = va_arg(ap, mode_t);                               \
			va_end(ap);                                              \
		}                                                                \
		if (!real)                                                       \
			real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, #fn); \
		if (!(flags & (O_CREAT | O_DIRECTORY)))                          \
			maybe_pause(path);                                       \
		return real(path, flags, mode);                                  \
	}

WRAP_OPENAT(openat)
WRAP_OPENAT(openat64)
WRAP_OPEN(open)
WRAP_OPEN(open64)

/* What _FORTIFY_SOURCE builds call (GNU tar on Debian): flags never hold O_CREAT here. */
int __openat_2(int dirfd, const char *path, int flags)
{
	return openat(dirfd, path, flags);
}
int __open_2(const char *path, int flags)
{
	return open(path, flags);
}
