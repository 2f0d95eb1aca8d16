/* SPDX-License-Identifier: MIT */
/* Where sysfs is (unit tests point it at a made-up tree), and reading its small files. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "device.h"

static const char *sys_root = "/sys";

void sweep__fsinfo_set_sysroot(const char *root)
{
	sys_root = root ? root : "/sys";
}

const char *sweep__sysroot(void)
{
	return sys_root;
}

int sweep__read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, size - 1);
	int e = errno;
	close(fd);
	if (n < 0)
		return -e;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = '\0';
	return 0;
}
