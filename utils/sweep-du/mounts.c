/* SPDX-License-Identifier: MIT */
/*
 * sweep-du: how many times each filesystem is mounted, from
 * /proc/self/mountinfo. fts sorts a big directory by d_ino and the walk gives
 * st_ino: the same number on ext2/3/4 and xfs, except at a mount point, where
 * d_ino is the directory mounted on and st_ino the root mounted there. A
 * mount point of another filesystem shows in the entry's st_dev; one of the
 * same filesystem (a bind mount) does not, but then that filesystem is
 * mounted more than once. So a directory none of whose entries has another
 * st_dev, on a filesystem mounted once, holds no mount point and need not be
 * read again for its d_ino values. Only device numbers are compared: no path
 * of the tree is looked up again after the walk (DESIGN §3a).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "du.h"

int du_mounts_load(struct du_mounts *m)
{
	FILE *f = fopen("/proc/self/mountinfo", "re"); /* the kernel's own table, not a path of the tree */
	char *line = NULL;
	size_t cap = 0;
	unsigned maj, min;
	int r = 0;

	if (!f)
		return -1;
	while (r == 0 && getline(&line, &cap, f) > 0) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT ...: the third field */
		if (sscanf(line, "%*u %*u %u:%u", &maj, &min) != 2)
			continue;
		if (du_grow(&m->devs, &m->cap, m->n + 1, sizeof(*m->devs)) < 0)
			r = -1;
		else
			m->devs[m->n++] = (uint64_t)makedev(maj, min);
	}
	free(line);
	fclose(f);
	return r;
}

size_t du_mounts_count(const struct du_mounts *m, uint64_t dev)
{
	size_t n = 0;

	for (size_t i = 0; i < m->n; i++)
		n += m->devs[i] == dev;
	return n;
}

void du_mounts_free(struct du_mounts *m)
{
	free(m->devs);
	memset(m, 0, sizeof(*m));
}
