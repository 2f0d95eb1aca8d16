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
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plan.h"

/* A filesystem met in the list: its number and the order its paths sort by. */
struct group {
	uint64_t dev;
	uint64_t id;
	enum sweep_order order;
	bool nophys; /* FIEMAP and FIBMAP gave nothing here: inode order from now on */
};

struct sweep_orderer {
	struct sweep_order_opts opts;
	struct group *groups;
	size_t ngroups, capgroups;
	size_t last; /* the group of the previous path: lists are mostly grouped already */
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
	if (!o)
		return -ENOMEM;
	o->opts = in;
	*ret = o;
	return 0;
}

SWEEP_EXPORT struct sweep_orderer *sweep_orderer_free(struct sweep_orderer *o)
{
	if (o) {
		free(o->groups);
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
	if (sweep__grow(&o->groups, &o->capgroups, o->ngroups + 1, sizeof(*o->groups), 8) < 0)
		return NULL;
	struct group *g = &o->groups[o->ngroups];
	struct sweep_fsinfo fi = { .size = sizeof(fi) };
	g->dev = dev;
	g->id = o->ngroups;
	g->nophys = false;
	g->order = o->opts.order;
	if (g->order == SWEEP_ORDER_AUTO) {
		/* The device's plan order (the SSD class: the list's own, positioning costs nothing there). */
		int r = fd >= 0 ? sweep_fsinfo_fd(fd, &fi) : sweep_fsinfo_path(path, &fi);
		g->order = r < 0 ? SWEEP_ORDER_INODE : fi.profile.plan_order;
	}
	o->last = o->ngroups++;
	return g;
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
