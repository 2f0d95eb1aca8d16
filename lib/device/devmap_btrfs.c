/* SPDX-License-Identifier: MIT */
/*
 * devmap, btrfs: FIEMAP on btrfs reports logical addresses, which the
 * chunk tree maps to (device, offset) chunk by chunk (1 GiB or so each).
 * A chunk of the single or dup profile lies on one device: its stretch of
 * logical addresses goes on to that device (dup: its first copy, what a
 * read gets), so the files of a multi-device filesystem are read on every
 * device at once, each device in its own order. A striped chunk (raid0,
 * raid10, raid5, raid6) or a mirrored one (raid1, raid1c3, raid1c4) is
 * answered by its devices together: one sweep in logical order over them.
 *
 * The chunk tree is read with BTRFS_IOC_TREE_SEARCH, which needs
 * CAP_SYS_ADMIN; the device list (BTRFS_IOC_FS_INFO, BTRFS_IOC_DEV_INFO)
 * does not. Without the chunk tree the filesystem's devices are one
 * opaque spindle read in logical order, as before, and the map says why.
 */
#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <linux/btrfs.h>
#include <linux/btrfs_tree.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "devmap.h"
#include "device.h"

#define MAX_DEVS 256

struct bdevs {
	uint64_t devid[MAX_DEVS];
	uint64_t rdev[MAX_DEVS];
	char sysdir[MAX_DEVS][PATH_MAX];
	size_t n;
	char name[SWEEP__DEVMAP_NAME]; /* "btrfs-1a2b3c4d" from the fsid */
};

/* The filesystem's devices: id, device number and sysfs directory of each one present. */
static int devices(int fd, struct bdevs *d)
{
	struct btrfs_ioctl_fs_info_args fi;
	memset(&fi, 0, sizeof(fi));
	if (ioctl(fd, BTRFS_IOC_FS_INFO, &fi) < 0)
		return -errno;
	snprintf(d->name, sizeof(d->name), "btrfs-%02x%02x%02x%02x", fi.fsid[0], fi.fsid[1], fi.fsid[2], fi.fsid[3]);
	d->n = 0;
	for (uint64_t id = 1; id <= fi.max_id && d->n < MAX_DEVS; id++) {
		struct btrfs_ioctl_dev_info_args di;
		struct stat st;
		memset(&di, 0, sizeof(di));
		di.devid = id;
		if (ioctl(fd, BTRFS_IOC_DEV_INFO, &di) < 0)
			continue; /* ids of removed devices leave gaps */
		di.path[sizeof(di.path) - 1] = '\0';
		if (stat((const char *)di.path, &st) < 0 || !S_ISBLK(st.st_mode) ||
		    sweep__devmap_sysdir(st.st_rdev, d->sysdir[d->n], PATH_MAX) < 0)
			continue; /* missing (a degraded mount): nothing is read from it */
		d->devid[d->n] = id;
		d->rdev[d->n] = st.st_rdev;
		d->n++;
	}
	return 0;
}

static int dev_index(const struct bdevs *d, uint64_t devid)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->devid[i] == devid)
			return (int)i;
	return -1;
}

/* The whole filesystem as one spindle of its devices (kind), in logical order. */
static int all_as_one(struct sweep__devmap_build *b, const struct bdevs *d, enum sweep__spindle_kind kind,
		      const char *name, uint64_t from, uint64_t len)
{
	const char *dirs[MAX_DEVS];
	for (size_t i = 0; i < d->n; i++)
		dirs[i] = d->sysdir[i];
	return sweep__devmap_whole(b, kind, name, (unsigned)(d->n ? d->n : 1), dirs, d->n, from, len, from);
}

/* One chunk item: its logical range onto its device, or onto the striped or mirrored set. */
static int chunk(struct sweep__devmap_build *b, const struct bdevs *d, uint64_t logical, const unsigned char *item,
		 size_t len)
{
	struct btrfs_chunk c;
	if (len < sizeof(c))
		return 0;
	memcpy(&c, item, sizeof(c));
	uint64_t length = le64toh(c.length), type = le64toh(c.type);
	unsigned nstripes = le16toh(c.num_stripes);
	if (nstripes == 0 || len < sizeof(c) + (nstripes - 1) * sizeof(struct btrfs_stripe) || length == 0 ||
	    logical > UINT64_MAX - length)
		return 0;
	const unsigned char *sp = item + offsetof(struct btrfs_chunk, stripe);
	uint64_t profile = type & BTRFS_BLOCK_GROUP_PROFILE_MASK;
	if (profile == 0 || profile == BTRFS_BLOCK_GROUP_DUP) {
		struct btrfs_stripe s;
		memcpy(&s, sp, sizeof(s));
		int i = dev_index(d, le64toh(s.devid));
		if (i < 0) {
			sweep__devmap_explain(b, "%s: device %llu missing", d->name, (unsigned long long)le64toh(s.devid));
			return all_as_one(b, d, SWEEP__SPINDLE_OPAQUE, d->name, logical, length);
		}
		return sweep__devmap_resolve(b, d->sysdir[i], logical, length, le64toh(s.offset), 1);
	}
	/* The stripes' devices, answering together. */
	const char *dirs[MAX_DEVS];
	size_t nd = 0;
	for (unsigned k = 0; k < nstripes && nd < MAX_DEVS; k++) {
		struct btrfs_stripe s;
		memcpy(&s, sp + k * sizeof(s), sizeof(s));
		int i = dev_index(d, le64toh(s.devid));
		bool dup = false;
		for (size_t j = 0; i >= 0 && j < nd; j++)
			dup |= dirs[j] == d->sysdir[i];
		if (i >= 0 && !dup)
			dirs[nd++] = d->sysdir[i];
	}
	bool mirrored = (profile & BTRFS_BLOCK_GROUP_RAID1_MASK) != 0;
	char name[SWEEP__DEVMAP_NAME + 16];
	snprintf(name, sizeof(name), "%s-%s", d->name, mirrored ? "mirrored" : "striped"); /* "btrfs-" + 8 hex: fits */
	return sweep__devmap_whole(b, mirrored ? SWEEP__SPINDLE_MIRRORED : SWEEP__SPINDLE_STRIPED, name, (unsigned)nd,
				   dirs, nd, logical, length, logical);
}

/* Every chunk item, a search buffer at a time. -EPERM without CAP_SYS_ADMIN. */
static int chunks(struct sweep__devmap_build *b, int fd, const struct bdevs *d)
{
	struct btrfs_ioctl_search_args *args = malloc(sizeof(*args));
	uint64_t next = 0;
	int r = 0;
	if (!args)
		return -ENOMEM;
	for (;;) {
		memset(&args->key, 0, sizeof(args->key));
		args->key.tree_id = BTRFS_CHUNK_TREE_OBJECTID;
		args->key.min_objectid = args->key.max_objectid = BTRFS_FIRST_CHUNK_TREE_OBJECTID;
		args->key.min_type = args->key.max_type = BTRFS_CHUNK_ITEM_KEY;
		args->key.min_offset = next;
		args->key.max_offset = UINT64_MAX;
		args->key.max_transid = UINT64_MAX;
		args->key.nr_items = 4096;
		if (ioctl(fd, BTRFS_IOC_TREE_SEARCH, args) < 0) {
			r = -errno;
			break;
		}
		if (args->key.nr_items == 0)
			break;
		size_t at = 0;
		uint64_t last = next;
		for (uint32_t i = 0; i < args->key.nr_items && r == 0; i++) {
			struct btrfs_ioctl_search_header h;
			if (at + sizeof(h) > sizeof(args->buf))
				break;
			memcpy(&h, args->buf + at, sizeof(h));
			at += sizeof(h);
			if (h.len > sizeof(args->buf) - at)
				break;
			if (h.type == BTRFS_CHUNK_ITEM_KEY && h.objectid == BTRFS_FIRST_CHUNK_TREE_OBJECTID)
				r = chunk(b, d, h.offset, (const unsigned char *)args->buf + at, h.len);
			at += h.len;
			last = h.offset;
		}
		if (r < 0 || last == UINT64_MAX || last < next)
			break;
		next = last + 1;
	}
	free(args);
	return r;
}

int sweep__devmap_btrfs(struct sweep__devmap_build *b, int fd)
{
	struct bdevs *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	int r = devices(fd, d);
	if (r < 0) {
		sweep__devmap_explain(b, "btrfs: its devices not known: %s", strerror(-r));
		free(d);
		return 0; /* an empty build: one opaque spindle */
	}
	struct sweep__devmap_mark mark;
	sweep__devmap_mark(b, &mark);
	r = d->n ? chunks(b, fd, d) : -ENODEV;
	if (r == -ENOMEM) {
		free(d);
		return r;
	}
	if (r < 0) {
		/* Without the chunk tree: where a file lies among the devices is not known. */
		sweep__devmap_rewind(b, &mark);
		sweep__devmap_explain(b, "%s: chunk tree not readable: %s", d->name, strerror(-r));
		r = all_as_one(b, d, SWEEP__SPINDLE_OPAQUE, d->name, 0, UINT64_MAX);
	}
	free(d);
	return r;
}
