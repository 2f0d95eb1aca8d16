/* SPDX-License-Identifier: MIT */
/*
 * sweep-du: which directories hold a mount point, from /proc/self/mountinfo.
 * fts sorts a big directory by d_ino and the walk gives st_ino: the same
 * number on ext2/3/4 and xfs, except for a mount point, where d_ino is the
 * directory mounted on and st_ino the root mounted there (for a bind mount
 * on the same filesystem too). Knowing that no mount point is in a
 * directory spares reading it again for its d_ino values.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "du.h"

/* mountinfo escapes space, tab, newline and backslash as \ooo: decode in place. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
		    s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
}

int du_mounts_load(struct du_mounts *m)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL, *point, *slash;
	size_t cap = 0;
	int r = 0;

	if (!f)
		return -1;
	while (r == 0 && getline(&line, &cap, f) > 0) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT ...: the fifth field */
		point = line;
		for (int k = 0; k < 4 && point; k++) {
			point = strchr(point, ' ');
			if (point)
				point++;
		}
		if (!point || !strchr(point, ' '))
			continue;
		*strchr(point, ' ') = 0;
		unescape(point);
		slash = strrchr(point, '/');
		if (!slash || !point[1])
			continue; /* "/" itself is in no directory */
		/* the directory holding it: "/" for "/proc" */
		if (slash == point)
			slash[1] = 0;
		else
			*slash = 0;
		if (du_grow(&m->dirs, &m->cap, m->n + 1, sizeof(*m->dirs)) < 0 || !(m->dirs[m->n] = strdup(point)))
			r = -1;
		else
			m->n++;
	}
	free(line);
	fclose(f);
	return r;
}

bool du_mounts_in(const struct du_mounts *m, const char *dir)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->dirs[i] && strcmp(m->dirs[i], dir) == 0)
			return true;
	return false;
}

void du_mounts_free(struct du_mounts *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->dirs[i]);
	free(m->dirs);
	memset(m, 0, sizeof(*m));
}
