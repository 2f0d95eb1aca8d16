/* SPDX-License-Identifier: MIT */
/*
 * LD_PRELOAD hook for sweep-tar's fault tests: changes a file while it is
 * being read, right after its first read at offset 0 returned data.
 *
 *   SWEEP_TEST_SHRINK=NAME  truncate NAME to the bytes read so far
 *   SWEEP_TEST_GROW=NAME    append 64 KiB to NAME
 *   SWEEP_TEST_TOUCH=NAME   rewrite NAME's first byte (same size, new ctime)
 *
 * NAME is a file's last path component. It hooks pread (the syscall
 * backend, SWEEP_BACKEND=syscall), not io_uring, which bypasses libc.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
/* Hook pread and pread64 each under its own name (off_t is 64-bit here anyway). */
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

typedef ssize_t (*pread_fn)(int, void *, size_t, off_t);

/* The path of fd when its last component is the value of env, else NULL. */
static const char *matches(int fd, const char *env, char *buf, size_t len)
{
	const char *want = getenv(env), *base;
	char link[64];
	ssize_t n;

	if (!want)
		return NULL;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, len - 1);
	if (n <= 0)
		return NULL;
	buf[n] = 0;
	base = strrchr(buf, '/');
	base = base ? base + 1 : buf;
	return strcmp(base, want) == 0 ? buf : NULL;
}

static void after_read(int fd, const void *data, ssize_t got, off_t off)
{
	static int shrunk, grown, touched;
	char path[4096];
	int wfd;

	if (got <= 0 || off != 0)
		return;
	if (!shrunk && matches(fd, "SWEEP_TEST_SHRINK", path, sizeof(path))) {
		shrunk = 1;
		if (truncate(path, got) != 0)
			perror("fault-hook: truncate");
	}
	if (!grown && matches(fd, "SWEEP_TEST_GROW", path, sizeof(path))) {
		static char more[65536];
		grown = 1;
		memset(more, 'G', sizeof(more));
		wfd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
		if (wfd < 0 || write(wfd, more, sizeof(more)) != (ssize_t)sizeof(more))
			perror("fault-hook: append");
		if (wfd >= 0)
			close(wfd);
	}
	if (!touched && matches(fd, "SWEEP_TEST_TOUCH", path, sizeof(path))) {
		touched = 1;
		/* Past the coarse clock's tick, so that the new ctime differs from the one at open. */
		usleep(50000);
		wfd = open(path, O_WRONLY | O_CLOEXEC);
		if (wfd < 0 || pwrite(wfd, data, 1, 0) != 1)
			perror("fault-hook: rewrite");
		if (wfd >= 0)
			close(wfd);
	}
}

static ssize_t call(const char *sym, int fd, void *buf, size_t n, off_t off)
{
	pread_fn real = (pread_fn)dlsym(RTLD_NEXT, sym);
	ssize_t got = real(fd, buf, n, off);

	after_read(fd, buf, got, off);
	return got;
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	return call("pread", fd, buf, n, off);
}

ssize_t pread64(int fd, void *buf, size_t n, off_t off)
{
	return call("pread64", fd, buf, n, off);
}
