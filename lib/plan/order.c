/* SPDX-License-Identifier: MIT */
/*
 * order: sort keys for arbitrary paths (see include/sweep/order.h).
 *
 * A path given by a user or a program is taken as it stands (its directories
 * followed as named); only its last component is not followed unless
 * SWEEP_ORDER_FOLLOW says so, as tar and backup tools archive a symlink as a
 * symlink. Nothing is read: an open for FIEMAP where the filesystem gives
 * locations, a stat otherwise.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plan.h"

/*
 * A filesystem met in the list: the order its paths sort by, its device
 * map, and the key group of its paths when they do not sort by location.
 */
struct group {
	uint64_t dev;
	uint64_t id;  /* the key group of its paths in inode or list order */
	enum sweep_order order;
	bool nophys; /* FIEMAP and FIBMAP gave nothing here: inode order from now on */
	struct sweep__devmap *map; /* NULL: none could be made (then every path of it is in group id) */
};

/*
 * A key group: the paths of one spindle, in its offsets (physical order,
 * DESIGN §3c), or the paths of one filesystem (inode or list order).
 * Numbered as the list first reaches them.
 */
struct slot {
	uint32_t spindle; /* the spindle its paths lie on (or the filesystem's first): its disks */
	bool fs;          /* a filesystem's paths, not a spindle's */
};

struct sweep_orderer {
	struct sweep_order_opts opts;
	struct group *groups;
	size_t ngroups, capgroups;
	size_t last; /* the group of the previous path: lists are mostly grouped already */
	struct sweep__spindles *spindles;
	struct slot *slots;
	size_t nslots, capslots;
	uint64_t *slot_of; /* the key group of each spindle's located paths, UINT64_MAX: none yet */
	size_t capslot_of;
	uint32_t *disk;    /* sweep_orderer_device: each spindle's disk group, as of ndisk slots */
	size_t ndisk;
};

SWEEP_EXPORT int sweep_orderer_new(const struct sweep_order_opts *opts, struct sweep_orderer **ret)
{
	struct sweep_orderer *o;
	struct sweep_order_opts in;
	int rc;

	if (!ret)
		return -EINVAL;
	rc = sweep__opts_copy(&in, sizeof(in), opts, offsetof(struct sweep_order_opts, order) + sizeof(in.order));
	if (rc < 0)
		return rc;
	if (sweep__flags_check(in.flags, SWEEP_ORDER_FOLLOW) < 0 || (unsigned)in.order > SWEEP_ORDER_NONE ||
	    in.order == SWEEP_ORDER_NAME)
		return -EINVAL;
	o = calloc(1, sizeof(*o));
	if (!o || !(o->spindles = sweep__spindles_new())) {
		free(o);
		return -ENOMEM;
	}
	o->opts = in;
	*ret = o;
	return 0;
}

SWEEP_EXPORT struct sweep_orderer *sweep_orderer_free(struct sweep_orderer *o)
{
	if (o) {
		for (size_t i = 0; i < o->ngroups; i++)
			sweep__devmap_free(o->groups[i].map);
		free(o->groups);
		free(o->slots);
		free(o->slot_of);
		free(o->disk);
		sweep__spindles_free(o->spindles);
		free(o);
	}
	return NULL;
}

/* The group of dev, made when the list first names it (fd: an open file on it, or -1). */
static struct group *group_of(struct sweep_orderer *o, uint64_t dev, const char *path, int fd)
{
	if (o->last < o->ngroups && o->groups[o->last].dev == dev)
		return &o->groups[o->last];
	for (size_t i = 0; i < o->ngroups; i++) {
		if (o->groups[i].dev == dev) {
			o->last = i;
			return &o->groups[i];
		}
	}
	if (sweep__grow(&o->groups, &o->capgroups, o->ngroups + 1, sizeof(*o->groups), 8) < 0 ||
	    sweep__grow(&o->slots, &o->capslots, o->nslots + 1, sizeof(*o->slots), 8) < 0)
		return NULL;
	struct group *g = &o->groups[o->ngroups];
	struct sweep_fsinfo fi = { .size = sizeof(fi) };
	g->dev = dev;
	g->nophys = false;
	/* Its map: from the path's own descriptor, or one that only looks (a symlink, a socket). */
	int mfd = fd >= 0 ? fd : open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (mfd < 0 || sweep__devmap_new(o->spindles, mfd, dev, &g->map) < 0)
		g->map = NULL;
	if (mfd >= 0 && mfd != fd)
		close(mfd);
	g->id = o->nslots;
	o->slots[o->nslots++] = (struct slot){ .spindle = g->map ? sweep__devmap_home(g->map) : UINT32_MAX, .fs = true };
	g->order = o->opts.order;
	if (g->order == SWEEP_ORDER_AUTO) {
		/* The device's plan order (the SSD class: the list's own, positioning costs nothing there). */
		int r = fd >= 0 ? sweep_fsinfo_fd(fd, &fi) : sweep_fsinfo_path(path, &fi);
		g->order = r < 0 ? SWEEP_ORDER_INODE : fi.profile.plan_order;
	}
	o->last = o->ngroups++;
	return g;
}

/* The key group of the located paths on spindle sp, made when the list first reaches it. -ENOMEM. */
static int64_t spindle_slot(struct sweep_orderer *o, uint32_t sp)
{
	if (sp >= o->capslot_of) {
		size_t old = o->capslot_of;
		if (sweep__grow(&o->slot_of, &o->capslot_of, (size_t)sp + 1, sizeof(*o->slot_of), 8) < 0)
			return -ENOMEM;
		for (size_t i = old; i < o->capslot_of; i++)
			o->slot_of[i] = UINT64_MAX;
	}
	if (o->slot_of[sp] == UINT64_MAX) {
		if (sweep__grow(&o->slots, &o->capslots, o->nslots + 1, sizeof(*o->slots), 8) < 0)
			return -ENOMEM;
		o->slots[o->nslots] = (struct slot){ .spindle = sp, .fs = false };
		o->slot_of[sp] = o->nslots++;
	}
	return (int64_t)o->slot_of[sp];
}

SWEEP_EXPORT int sweep_orderer_key(struct sweep_orderer *o, const char *path, uint64_t seq,
				   struct sweep_order_key *ret)
{
	bool follow;
	struct stat st;
	struct group *g;
	int fd = -1;

	if (!o || !path || !ret)
		return -EINVAL;
	follow = o->opts.flags & SWEEP_ORDER_FOLLOW;
	if (fstatat(AT_FDCWD, path, &st, follow ? 0 : AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	/* Only regular files and directories have data whose place is worth asking. */
	if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
		fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOATIME | (follow ? 0 : O_NOFOLLOW));
		if (fd < 0 && errno == EPERM)
			fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
	}
	g = group_of(o, (uint64_t)st.st_dev, path, fd);
	if (!g) {
		if (fd >= 0)
			close(fd);
		return -ENOMEM;
	}
	struct sweep_order_key k = { .group = g->id, .minor = (uint64_t)st.st_ino, .seq = seq };
	switch (g->order) {
	case SWEEP_ORDER_PHYSICAL: {
		uint64_t phys = SWEEP_NO_PHYS;
		int r = fd >= 0 && !g->nophys ? sweep_extent_first(fd, &phys) : -ENODATA;
		if (r == -EOPNOTSUPP)
			g->nophys = true;
		/* Empty, inline or unlocated: by inode after the located ones, as a plan sorts them. */
		k.major = r == 0 ? phys : SWEEP_NO_PHYS;
		/* Located: on the spindle its first byte lies on, in that spindle's offsets (DESIGN §3c). */
		if (g->map) {
			uint32_t sp = sweep__devmap_home(g->map);
			uint64_t off = SWEEP_NO_PHYS;
			if (r == 0)
				sweep__devmap_locate(g->map, phys, &sp, &off);
			int64_t slot = spindle_slot(o, sp);
			if (slot < 0) {
				if (fd >= 0)
					close(fd);
				return -ENOMEM;
			}
			k.group = (uint64_t)slot;
			k.major = off;
		}
		break;
	}
	case SWEEP_ORDER_INODE:
		k.major = (uint64_t)st.st_ino;
		break;
	default:
		k.major = seq; /* sorting does not pay here: keep the list's order */
		k.minor = 0;
		break;
	}
	if (fd >= 0)
		close(fd);
	*ret = k;
	return 0;
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

SWEEP_EXPORT int sweep_orderer_device(struct sweep_orderer *o, uint64_t group, char *name, size_t size)
{
	if (!o || (!name && size) || group >= o->nslots)
		return -EINVAL;
	uint32_t sp = o->slots[group].spindle;
	size_t ns = sweep__spindles_count(o->spindles);
	if (sp >= ns) {
		/* A filesystem whose map could not be made: a disk of its own, named by its group. */
		if (size)
			snprintf(name, size, "group-%" PRIu64, group);
		return (int)(ns + group < INT32_MAX ? ns + group : INT32_MAX);
	}
	/* The disk groups among the spindles the list reached, worked out again when it reached more. */
	if (o->ndisk != o->nslots) {
		uint32_t *d = realloc(o->disk, (ns ? ns : 1) * sizeof(*d));
		unsigned char *used = calloc(ns ? ns : 1, 1);
		if (!d || !used) {
			free(used);
			if (d)
				o->disk = d;
			return -ENOMEM;
		}
		o->disk = d;
		for (size_t i = 0; i < o->nslots; i++)
			if (o->slots[i].spindle < ns)
				used[o->slots[i].spindle] = 1;
		int r = sweep__spindles_groups(o->spindles, used, o->disk);
		free(used);
		if (r < 0)
			return r;
		o->ndisk = o->nslots;
	}
	uint32_t disk = o->disk[sp];
	if (size)
		snprintf(name, size, "%s", sweep__spindle_name(o->spindles, disk));
	return (int)disk;
}

SWEEP_EXPORT int sweep_order_key_cmp(const struct sweep_order_key *a, const struct sweep_order_key *b)
{
	int c = cmp_u64(a->group, b->group);
	if (!c)
		c = cmp_u64(a->major, b->major);
	if (!c)
		c = cmp_u64(a->minor, b->minor);
	if (!c)
		c = cmp_u64(a->seq, b->seq);
	return c;
}

static int cmp_keys(const void *a, const void *b)
{
	return sweep_order_key_cmp(a, b);
}

SWEEP_EXPORT int sweep_order_paths(const char *const *paths, size_t n, const struct sweep_order_opts *opts,
				   size_t *ret_perm)
{
	struct sweep_orderer *o = NULL;
	struct sweep_order_key *keys;
	size_t nk = 0, nbad = 0;
	int rc;

	if ((!paths && n) || (!ret_perm && n))
		return -EINVAL;
	rc = sweep_orderer_new(opts, &o);
	if (rc < 0)
		return rc;
	keys = malloc((n ? n : 1) * sizeof(*keys));
	if (!keys) {
		sweep_orderer_free(o);
		return -ENOMEM;
	}
	/* Unstat-able paths are put at the end of ret_perm, in list order, while the keys fill keys[]. */
	for (size_t i = 0; i < n; i++) {
		rc = sweep_orderer_key(o, paths[i], i, &keys[nk]);
		if (rc == 0)
			nk++;
		else if (rc == -ENOMEM)
			goto out;
		else
			nbad++;
	}
	qsort(keys, nk, sizeof(*keys), cmp_keys);
	for (size_t i = 0; i < nk; i++)
		ret_perm[i] = (size_t)keys[i].seq;
	/* The rest: every index not keyed, in order (keys[] is sorted by key, so mark by seq). */
	{
		unsigned char *seen = calloc(n ? n : 1, 1);
		if (!seen) {
			rc = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < nk; i++)
			seen[keys[i].seq] = 1;
		size_t j = nk;
		for (size_t i = 0; i < n; i++)
			if (!seen[i])
				ret_perm[j++] = i;
		free(seen);
	}
	rc = nbad > INT32_MAX ? INT32_MAX : (int)nbad;
out:
	free(keys);
	sweep_orderer_free(o);
	return rc;
}
