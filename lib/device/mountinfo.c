/* SPDX-License-Identifier: MIT */
/*
 * The kernel's mount table, /proc/self/mountinfo, one parsed line at a time.
 *
 * It is read by path because it is the kernel's table, not a path of the
 * tree being walked. A line is
 *   ID PARENT MAJ:MIN ROOT MOUNTPOINT MOUNT-OPTS [OPTIONAL...] - FSTYPE SOURCE SUPER-OPTS
 * where the optional fields end at a lone "-". Paths escape blanks as \040,
 * so splitting at blanks is safe.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "device.h"

/* One line into m (pointing into line, which it cuts): 0, or -EBADMSG. */
static int parse_line(char *line, struct sweep__mount *m)
{
	unsigned long long id, parent;
	unsigned maj, min;
	int root = 0, root_end = 0, off = 0;

	if (sscanf(line, "%llu %llu %u:%u %n%*s%n %*s %n", &id, &parent, &maj, &min, &root, &root_end, &off) < 4 || !off)
		return -EBADMSG;
	char *opts = line + off, *sep = strstr(opts, " - ");
	if (!sep)
		return -EBADMSG;
	char *sp = strchr(opts, ' ');
	*sp = '\0'; /* sp <= sep: the mount options end at the first blank */
	char *save = NULL;
	char *fstype = strtok_r(sep + 3, " \n", &save);
	char *source = fstype ? strtok_r(NULL, " \n", &save) : NULL;
	char *super = source ? strtok_r(NULL, " \n", &save) : NULL;
	if (!super)
		return -EBADMSG;
	line[root_end] = '\0';
	*m = (struct sweep__mount){
		.id = id, .parent = parent, .dev = makedev(maj, min), .root = line + root,
		.opts = opts, .fstype = fstype, .source = source, .super_opts = super,
	};
	return 0;
}

int sweep__mountinfo_each(int (*fn)(const struct sweep__mount *m, void *ctx), void *ctx)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -errno;
	char *line = NULL;
	size_t cap = 0;
	int r = 0;
	while (r == 0 && getline(&line, &cap, f) > 0) {
		struct sweep__mount m;
		r = parse_line(line, &m);
		if (r == 0)
			r = fn(&m, ctx);
	}
	free(line);
	fclose(f);
	return r;
}

static int root_of(const struct sweep__mount *m, void *ctx)
{
	if (m->id != *(const uint64_t *)ctx)
		return 0;
	return strcmp(m->root, "/") == 0 ? 1 : 2;
}

int sweep__mount_whole(uint64_t mnt_id)
{
	int r = sweep__mountinfo_each(root_of, &mnt_id);
	return r == 1 ? 1 : r == 2 ? 0 : r < 0 ? r : -ENOENT;
}

bool sweep__opt_has(const char *opts, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = opts; p && *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == n && !strncmp(p, word, n))
			return true;
		p = e ? e + 1 : NULL;
	}
	return false;
}
