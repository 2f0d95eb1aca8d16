/* SPDX-License-Identifier: MIT */
/*
 * The one way the library opens a block device by its number: the probe
 * times it (devclass.c, O_DIRECT), the metadata engine reads a
 * filesystem's tables through it (lib/metascan). The node is the one sysfs
 * names (DEVNAME in MAJ:MIN's uevent, under the sysfs root a test may
 * move: a made-up tree never reaches a real device by another way), and
 * whatever was opened must be that very block device, so a stale or odd
 * /dev never hands over another.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "device.h"

/* /dev/NAME for the DEVNAME sysfs gives bdev: 0, or -ENODEV. */
static int node_from_sysfs(uint64_t bdev, char *path, size_t size)
{
	char p[PATH_MAX], buf[512];
	if (snprintf(p, sizeof(p), "%s/dev/block/%u:%u/uevent", sweep__sysroot(), major(bdev), minor(bdev)) >=
		    (int)sizeof(p) ||
	    sweep__read_small(p, buf, sizeof(buf)) < 0)
		return -ENODEV;
	const char *name = NULL;
	char *save = NULL;
	for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strncmp(line, "DEVNAME=", 8) == 0)
			name = line + 8;
	if (!name || !*name || strstr(name, "..") || snprintf(path, size, "/dev/%s", name) >= (int)size)
		return -ENODEV;
	return 0;
}

int sweep__bdev_open(uint64_t bdev, int flags)
{
	char path[PATH_MAX];

	if (major(bdev) == 0 || node_from_sysfs(bdev, path, sizeof(path)) < 0)
		return -ENODEV; /* an anonymous device number, or one sysfs does not name */
	int fd = open(path, flags | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT || errno == ELOOP ? -ENODEV : -errno;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISBLK(st.st_mode) || (uint64_t)st.st_rdev != bdev) {
		close(fd);
		return -ENODEV; /* not the device asked about */
	}
	return fd;
}
