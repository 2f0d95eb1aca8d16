/* SPDX-License-Identifier: MIT */
/*
 * devmap, md arrays: what /sys/block/mdN/md says (Documentation/admin-guide/
 * md.rst). A striped level (raid0, raid4, raid5, raid6, raid10) and raid1
 * answer one address space with all their members at once: one sweep in the
 * array's own order, with a queue as deep as the members together (the
 * reader multiplies). A linear array is its members one after another:
 * each member's stretch goes on to that member, so two filesystems whose
 * parts lie on different disks are read side by side. Anything else
 * (multipath, a container, a level not listed) is one opaque spindle.
 *
 * Per member, md/dev-NAME/ has slot (its place, "none" for a spare),
 * offset (where its data starts, sectors), size (what it gives, KiB) and
 * block (a link to its own sysfs directory).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devmap.h"
#include "device.h"

#define MAX_MEMBERS 256

struct member {
	char sysdir[PATH_MAX];
	uint64_t slot, offset, size; /* slot; data offset and size in bytes */
};

static int read_text(const char *dir, const char *rel, char *buf, size_t size)
{
	char p[PATH_MAX];
	if (snprintf(p, sizeof(p), "%s/%s", dir, rel) >= (int)sizeof(p))
		return -ENAMETOOLONG;
	return sweep__read_small(p, buf, size);
}

static int cmp_slot(const void *a, const void *b)
{
	const struct member *x = a, *y = b;
	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

/* The members that hold data (a slot), by slot; their count or -errno. */
static int members_of(const char *sysdir, struct member *v)
{
	char mdir[PATH_MAX];
	int n = 0;
	if (snprintf(mdir, sizeof(mdir), "%s/md", sysdir) >= (int)sizeof(mdir))
		return -ENAMETOOLONG;
	DIR *d = opendir(mdir);
	if (!d)
		return -errno;
	struct dirent *de;
	while ((de = readdir(d)) && n < MAX_MEMBERS) {
		char dev[PATH_MAX], link[PATH_MAX];
		struct member *m = &v[n];
		if (strncmp(de->d_name, "dev-", 4) != 0 ||
		    snprintf(dev, sizeof(dev), "%s/%s", mdir, de->d_name) >= (int)sizeof(dev) ||
		    snprintf(link, sizeof(link), "%s/block", dev) >= (int)sizeof(link) || !realpath(link, m->sysdir))
			continue;
		if (sweep__devmap_read_u64(dev, "slot", &m->slot) < 0)
			continue; /* "none": a spare, or a member being removed, holds nothing read */
		if (sweep__devmap_read_u64(dev, "offset", &m->offset) < 0)
			m->offset = 0;
		if (sweep__devmap_read_u64(dev, "size", &m->size) < 0)
			m->size = 0;
		m->offset *= 512;
		m->size *= 1024;
		n++;
	}
	closedir(d);
	qsort(v, (size_t)n, sizeof(*v), cmp_slot);
	return n;
}

static int whole(struct sweep__devmap_build *b, enum sweep__spindle_kind kind, const char *name, const char *sysdir,
		 const struct member *v, int n, uint64_t from, uint64_t len, uint64_t at)
{
	const char *dirs[MAX_MEMBERS];
	for (int i = 0; i < n; i++)
		dirs[i] = v[i].sysdir;
	if (n == 0) {
		dirs[0] = sysdir;
		n = 1;
	}
	return sweep__devmap_whole(b, kind, name, (unsigned)n, dirs, (size_t)n, from, len, at);
}

/* A linear array: [at, at + len) of it, member by member. */
static int linear(struct sweep__devmap_build *b, const struct member *v, int n, uint64_t from, uint64_t len,
		  uint64_t at, int hops)
{
	uint64_t start = 0, end = at + len;
	for (int i = 0; i < n && start < end; i++) {
		uint64_t lo = at > start ? at : start, hi = start + v[i].size < end ? start + v[i].size : end;
		if (lo < hi) {
			int r = sweep__devmap_resolve(b, v[i].sysdir, from + (lo - at), hi - lo, v[i].offset + (lo - start),
						      hops + 1);
			if (r < 0)
				return r;
		}
		start += v[i].size;
	}
	return 0;
}

int sweep__devmap_md(struct sweep__devmap_build *b, const char *sysdir, uint64_t from, uint64_t len, uint64_t at,
		     int hops)
{
	char level[32];
	const char *name = strrchr(sysdir, '/');
	name = name ? name + 1 : sysdir;
	if (read_text(sysdir, "md/level", level, sizeof(level)) < 0)
		return 0; /* not an md array */
	struct member *v = malloc(MAX_MEMBERS * sizeof(*v));
	if (!v)
		return -ENOMEM;
	int n = members_of(sysdir, v), r;
	if (n < 0)
		n = 0;
	if (!strcmp(level, "raid0") || !strcmp(level, "raid4") || !strcmp(level, "raid5") || !strcmp(level, "raid6") ||
	    !strcmp(level, "raid10")) {
		r = whole(b, SWEEP__SPINDLE_STRIPED, name, sysdir, v, n, from, len, at);
	} else if (!strcmp(level, "raid1")) {
		r = whole(b, SWEEP__SPINDLE_MIRRORED, name, sysdir, v, n, from, len, at);
	} else if (!strcmp(level, "linear") && n > 0) {
		r = linear(b, v, n, from, len, at, hops);
		/* Past the members' sizes (none given): the array as a whole. */
		uint64_t total = 0;
		for (int i = 0; i < n; i++)
			total += v[i].size;
		if (r == 0 && total < at + len) {
			uint64_t lo = total > at ? total : at;
			sweep__devmap_explain(b, "%s: linear members' sizes do not cover the array", name);
			r = whole(b, SWEEP__SPINDLE_OPAQUE, name, sysdir, v, n, from + (lo - at), at + len - lo, lo);
		}
	} else {
		sweep__devmap_explain(b, "%s: md level %s not followed", name, level[0] ? level : "(none)");
		r = whole(b, SWEEP__SPINDLE_OPAQUE, name, sysdir, v, n, from, len, at);
	}
	free(v);
	return r < 0 ? r : 1;
}
