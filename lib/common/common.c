/* SPDX-License-Identifier: MIT */
/* Small shared pieces: order and backend names, backend resolution, version. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "internal.h"

unsigned sweep__nofile_share(unsigned div, unsigned cap)
{
	struct rlimit nofile;

	if (getrlimit(RLIMIT_NOFILE, &nofile) < 0 || nofile.rlim_cur == RLIM_INFINITY || nofile.rlim_cur / div >= cap)
		return cap;
	return (unsigned)(nofile.rlim_cur / div);
}

/* Descriptors open in this process now (/proc/self/fd), or -1 where that cannot be read. */
static long fds_open(void)
{
	DIR *d = opendir("/proc/self/fd");
	long n = -1; /* the directory's own descriptor is listed too */

	if (!d)
		return -1;
	for (struct dirent *de; (de = readdir(d));)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

unsigned sweep__nofile_free(unsigned div, unsigned cap)
{
	struct rlimit nofile;

	if (getrlimit(RLIMIT_NOFILE, &nofile) < 0 || nofile.rlim_cur == RLIM_INFINITY)
		return cap;
	/* Counting costs a directory read: only where the limit could be what binds. */
	if (nofile.rlim_cur / div >= (rlim_t)cap * 4)
		return cap;
	long open = fds_open();
	if (open < 0)
		open = 16; /* no /proc: about what a tool holds before the library opens anything */
	rlim_t left = nofile.rlim_cur > (rlim_t)open ? nofile.rlim_cur - (rlim_t)open : 0;
	return left / div >= cap ? cap : (unsigned)(left / div);
}

static const char *const order_names[] = {
	[SWEEP_ORDER_AUTO] = "auto",
	[SWEEP_ORDER_PHYSICAL] = "physical",
	[SWEEP_ORDER_INODE] = "inode",
	[SWEEP_ORDER_NAME] = "name",
	[SWEEP_ORDER_NONE] = "none",
};

SWEEP_EXPORT const char *sweep_order_name(enum sweep_order order)
{
	if ((unsigned)order >= sizeof(order_names) / sizeof(order_names[0]))
		return "unknown";
	return order_names[order];
}

SWEEP_EXPORT int sweep_order_parse(const char *name, enum sweep_order *ret_order)
{
	if (!name || !ret_order)
		return -EINVAL;
	for (unsigned i = 0; i < sizeof(order_names) / sizeof(order_names[0]); i++) {
		if (strcmp(name, order_names[i]) == 0) {
			*ret_order = (enum sweep_order)i;
			return 0;
		}
	}
	return -EINVAL;
}

SWEEP_EXPORT const char *sweep_backend_name(enum sweep_backend b)
{
	switch (b) {
	case SWEEP_BACKEND_AUTO:
		return "auto";
	case SWEEP_BACKEND_URING:
		return "uring";
	case SWEEP_BACKEND_SYSCALL:
		return "syscall";
	}
	return "unknown";
}

SWEEP_EXPORT enum sweep_backend sweep_backend_resolve(enum sweep_backend requested)
{
	if (requested == SWEEP_BACKEND_SYSCALL)
		return SWEEP_BACKEND_SYSCALL;
	if (requested == SWEEP_BACKEND_AUTO) {
		const char *env = getenv("SWEEP_BACKEND");
		if (env && strcmp(env, "syscall") == 0)
			return SWEEP_BACKEND_SYSCALL;
	}
	/* URING requested explicitly, or AUTO: use it only if the kernel lets us. */
	return sweep__uring_usable() ? SWEEP_BACKEND_URING : SWEEP_BACKEND_SYSCALL;
}

SWEEP_EXPORT const char *sweep_version(void)
{
	return SWEEP_VERSION;
}
