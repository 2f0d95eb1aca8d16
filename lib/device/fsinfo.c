/* SPDX-License-Identifier: MIT */
/*
 * fsinfo: which filesystem and which disk a file lives on, and the ordering
 * policy that follows from it. Physical order only pays on filesystems that
 * report block locations and sit on a real device; on network, FUSE and
 * in-memory filesystems sorting costs time and buys nothing (gnulib's fts saw
 * du get 9x slower on Lustre when it sorted).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "device.h"

struct fstype {
	uint64_t magic;
	const char *name;
	enum sweep_order policy;
};

/* f_type values from linux/magic.h (and the filesystems' own headers). */
static const struct fstype fstypes[] = {
	{ 0xEF53, "ext4", SWEEP_ORDER_PHYSICAL }, /* ext2/3/4 share it; mountinfo refines the name */
	{ 0x58465342, "xfs", SWEEP_ORDER_PHYSICAL },
	{ 0x9123683E, "btrfs", SWEEP_ORDER_PHYSICAL }, /* approximate: extents move with COW */
	{ 0xF2F52010, "f2fs", SWEEP_ORDER_PHYSICAL },
	{ 0xCA451A4E, "bcachefs", SWEEP_ORDER_PHYSICAL },
	{ 0x52654973, "reiserfs", SWEEP_ORDER_PHYSICAL },
	{ 0x3153464A, "jfs", SWEEP_ORDER_PHYSICAL },
	{ 0x7461636F, "ocfs2", SWEEP_ORDER_PHYSICAL },
	{ 0x01161970, "gfs2", SWEEP_ORDER_PHYSICAL },
	{ 0x3434, "nilfs2", SWEEP_ORDER_PHYSICAL },
	{ 0x482B, "hfsplus", SWEEP_ORDER_PHYSICAL },
	{ 0x4D44, "vfat", SWEEP_ORDER_PHYSICAL },
	{ 0x2011BAB0, "exfat", SWEEP_ORDER_PHYSICAL },
	{ 0x5346544E, "ntfs", SWEEP_ORDER_PHYSICAL },
	{ 0x7366746E, "ntfs3", SWEEP_ORDER_PHYSICAL },
	{ 0x15013346, "udf", SWEEP_ORDER_PHYSICAL },
	{ 0x9660, "iso9660", SWEEP_ORDER_PHYSICAL },
	/* No block map for user space, but inode numbers follow the layout. */
	{ 0x73717368, "squashfs", SWEEP_ORDER_INODE },
	{ 0xE0F5E1E2, "erofs", SWEEP_ORDER_INODE },
	{ 0x28CD3D45, "cramfs", SWEEP_ORDER_INODE },
	{ 0x2FC12FC1, "zfs", SWEEP_ORDER_INODE },
	/* In memory, over the network, or in user space: do not sort. */
	{ 0x01021994, "tmpfs", SWEEP_ORDER_NONE },
	{ 0x858458F6, "ramfs", SWEEP_ORDER_NONE },
	{ 0x9FA0, "proc", SWEEP_ORDER_NONE },
	{ 0x62656572, "sysfs", SWEEP_ORDER_NONE },
	{ 0x1CD1, "devpts", SWEEP_ORDER_NONE },
	{ 0x63677270, "cgroup2", SWEEP_ORDER_NONE },
	{ 0x27E0EB, "cgroup", SWEEP_ORDER_NONE },
	{ 0x64626720, "debugfs", SWEEP_ORDER_NONE },
	{ 0x74726163, "tracefs", SWEEP_ORDER_NONE },
	{ 0x6969, "nfs", SWEEP_ORDER_NONE },
	{ 0x517B, "smb", SWEEP_ORDER_NONE },
	{ 0xFF534D42, "cifs", SWEEP_ORDER_NONE },
	{ 0xFE534D42, "smb2", SWEEP_ORDER_NONE },
	{ 0x65735546, "fuse", SWEEP_ORDER_NONE },
	{ 0x794C7630, "overlay", SWEEP_ORDER_NONE },
	{ 0x0BD00BD0, "lustre", SWEEP_ORDER_NONE },
	{ 0x00C36400, "ceph", SWEEP_ORDER_NONE },
	{ 0x01021997, "9p", SWEEP_ORDER_NONE },
	{ 0x6B414653, "afs", SWEEP_ORDER_NONE },
	{ 0x47504653, "gpfs", SWEEP_ORDER_NONE },
};

static const struct fstype *fstype_find(uint64_t magic)
{
	for (size_t i = 0; i < sizeof(fstypes) / sizeof(fstypes[0]); i++)
		if (fstypes[i].magic == magic)
			return &fstypes[i];
	return NULL;
}

SWEEP_EXPORT enum sweep_order sweep_fsinfo_policy(uint64_t fs_magic)
{
	const struct fstype *t = fstype_find(fs_magic);
	/* Unknown local filesystems: inode order is cheap and rarely hurts (fts does the same). */
	return t ? t->policy : SWEEP_ORDER_INODE;
}

void sweep__copy_name(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src);
	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

struct find_scan {
	uint64_t id, dev;
	bool by_id;
	char *fstype, *source;
	size_t fstype_size, source_size;
};

static int find_one(const struct sweep__mount *m, void *ctx)
{
	struct find_scan *f = ctx;
	if (f->by_id ? m->id != f->id : m->dev != f->dev)
		return 0;
	sweep__copy_name(f->fstype, f->fstype_size, m->fstype);
	sweep__copy_name(f->source, f->source_size, m->source);
	return 1;
}

/*
 * The mountinfo line of the mount that fd is on (by mount id, when statx
 * gives it), else the first one for dev: its fstype (ext2/ext3/ext4 share a
 * magic) and its source (btrfs files carry an anonymous st_dev that is not
 * even the one mountinfo shows; the source names the disk).
 */
static int mountinfo_find(int fd, uint64_t dev, char *fstype, size_t fstype_size, char *source, size_t source_size)
{
	struct find_scan f = { .dev = dev, .fstype = fstype, .source = source,
			       .fstype_size = fstype_size, .source_size = source_size };
#ifdef STATX_MNT_ID
	struct statx stx;
	if (fd >= 0 && statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) == 0 && (stx.stx_mask & STATX_MNT_ID)) {
		f.id = stx.stx_mnt_id;
		f.by_id = true;
	}
#endif
	int r = sweep__mountinfo_each(find_one, &f);
	return r == 1 ? 0 : r < 0 ? r : -ENOENT;
}

/*
 * Follow a block device down to the disk(s) that hold its data: a
 * partition to its disk, a loop device to the device of its backing file,
 * device-mapper and md to their slaves. Rotational when any disk below is.
 */
static int disk_of(uint64_t dev, int hops, char *disk, size_t disk_size);
static int disk_of_fd(int fd, const struct stat *st, int hops, char *disk, size_t disk_size);


int sweep__fsinfo_disk(uint64_t dev, char *disk, size_t disk_size)
{
	disk[0] = '\0';
	int r = disk_of(dev, 0, disk, disk_size);
	if (r < 0)
		disk[0] = '\0';
	return r < 0 ? -1 : r;
}

static int disk_of_sysdir(const char *sysdir, int hops, char *disk, size_t disk_size)
{
	char path[PATH_MAX], buf[PATH_MAX];
	const char *base = strrchr(sysdir, '/');
	base = base ? base + 1 : sysdir;

	/* Partition: the disk is the parent directory. */
	snprintf(path, sizeof(path), "%s/partition", sysdir);
	if (access(path, F_OK) == 0) {
		char parent[PATH_MAX];
		sweep__copy_name(parent, sizeof(parent), sysdir);
		char *slash = strrchr(parent, '/');
		if (!slash)
			return -1;
		*slash = '\0';
		return disk_of_sysdir(parent, hops + 1, disk, disk_size);
	}
	/* Loop: rotational-ness of wherever the backing file is stored. */
	snprintf(path, sizeof(path), "%s/loop/backing_file", sysdir);
	if (sweep__read_small(path, buf, sizeof(buf)) == 0) {
		struct stat st;
		int bfd = open(buf, O_PATH | O_CLOEXEC);
		if (bfd < 0)
			return -1;
		int r = fstat(bfd, &st) < 0 ? -1 : disk_of_fd(bfd, &st, hops + 1, disk, disk_size);
		close(bfd);
		return r;
	}
	/* Device-mapper, md: the slaves. */
	snprintf(path, sizeof(path), "%s/slaves", sysdir);
	int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		DIR *d = fdopendir(dfd);
		int rot = -2;
		if (d) {
			struct dirent *de;
			while ((de = readdir(d))) {
				if (de->d_name[0] == '.')
					continue;
				char sub[PATH_MAX], real[PATH_MAX], one[32] = "";
				if (snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name) >= (int)sizeof(sub) ||
				    !realpath(sub, real))
					continue;
				int r = disk_of_sysdir(real, hops + 1, one, sizeof(one));
				if (!disk[0] && one[0])
					sweep__copy_name(disk, disk_size, one);
				if (r > rot)
					rot = r;
			}
			closedir(d);
		} else
			close(dfd);
		if (rot != -2)
			return rot;
	}
	snprintf(path, sizeof(path), "%s/queue/rotational", sysdir);
	if (sweep__read_small(path, buf, sizeof(buf)) < 0)
		return -1;
	sweep__copy_name(disk, disk_size, base);
	return buf[0] == '1' ? 1 : 0;
}

static int disk_of(uint64_t dev, int hops, char *disk, size_t disk_size)
{
	char link[PATH_MAX], real[PATH_MAX];
	/* Loops of loop devices are legal; a bound keeps a bad setup from recursing forever. */
	if (hops > 16 || major(dev) == 0)
		return -1;
	if (snprintf(link, sizeof(link), "%s/dev/block/%u:%u", sweep__sysroot(), major(dev), minor(dev)) >= (int)sizeof(link) ||
	    !realpath(link, real))
		return -1;
	return disk_of_sysdir(real, hops, disk, disk_size);
}

/*
 * The block device the filesystem of fd is on, 0 when none: st_dev itself,
 * or for an anonymous device number (btrfs, overlay, tmpfs) the block
 * device the mount source names, if it names one.
 */
uint64_t sweep__fs_bdev(int fd, const struct stat *st)
{
	if (major(st->st_dev) != 0)
		return st->st_dev;
	char type[32], source[PATH_MAX];
	struct stat bst;
	if (mountinfo_find(fd, st->st_dev, type, sizeof(type), source, sizeof(source)) < 0 || source[0] != '/' ||
	    stat(source, &bst) < 0 || !S_ISBLK(bst.st_mode))
		return 0;
	return bst.st_rdev;
}

/* The disk under the open file fd, whatever its st_dev looks like. */
static int disk_of_fd(int fd, const struct stat *st, int hops, char *disk, size_t disk_size)
{
	uint64_t bdev = sweep__fs_bdev(fd, st);
	return bdev ? disk_of(bdev, hops, disk, disk_size) : -1;
}

static int fsinfo_fill(int fd, const struct stat *st, struct sweep_fsinfo *ret, uint64_t *ret_bdev)
{
	struct statfs sfs;
	if (fstatfs(fd, &sfs) < 0)
		return -errno;
	struct sweep_fsinfo fi;
	memset(&fi, 0, sizeof(fi));
	fi.size = sizeof(fi);
	fi.dev = st->st_dev;
	fi.fs_magic = (uint64_t)(unsigned long)sfs.f_type;
	fi.block_size = (uint32_t)sfs.f_bsize;
	const struct fstype *t = fstype_find(fi.fs_magic);
	sweep__copy_name(fi.fs_name, sizeof(fi.fs_name), t ? t->name : "unknown");
	if (fi.fs_magic == 0xEF53) {
		char type[32], source[16];
		if (mountinfo_find(fd, fi.dev, type, sizeof(type), source, sizeof(source)) == 0 &&
		    strncmp(type, "ext", 3) == 0)
			sweep__copy_name(fi.fs_name, sizeof(fi.fs_name), type);
	}
	fi.policy = sweep_fsinfo_policy(fi.fs_magic);
	uint64_t bdev = sweep__fs_bdev(fd, st);
	fi.rotational = bdev ? disk_of(bdev, 0, fi.disk, sizeof(fi.disk)) : -1;
	if (fi.rotational < 0) {
		fi.rotational = -1;
		fi.disk[0] = '\0';
	}
	sweep__device_decide(bdev, fi.rotational, &fi);
	*ret = fi;
	if (ret_bdev)
		*ret_bdev = bdev;
	return 0;
}

/* The first layout with a size field: an older caller's struct holds at least this (sweep__out_begin). */
#define FSINFO_SIZE_MIN (offsetof(struct sweep_fsinfo, probe_seq_ns) + sizeof(uint64_t))

SWEEP_EXPORT int sweep_fsinfo_fd(int fd, struct sweep_fsinfo *ret)
{
	struct stat st;
	struct sweep_fsinfo fi;
	int r = sweep__out_begin(&fi, sizeof(fi), ret, FSINFO_SIZE_MIN);
	if (r < 0)
		return r;
	if (fstat(fd, &st) < 0)
		return -errno;
	r = fsinfo_fill(fd, &st, &fi, NULL);
	if (r == 0)
		sweep__out_put(ret, &fi, sizeof(fi));
	return r;
}

SWEEP_EXPORT int sweep_fsinfo_path(const char *path, struct sweep_fsinfo *ret)
{
	struct sweep_fsinfo fi;
	if (!path)
		return -EINVAL;
	int r = sweep__out_begin(&fi, sizeof(fi), ret, FSINFO_SIZE_MIN);
	if (r < 0)
		return r;
	/* O_PATH|O_NOFOLLOW: a final symlink is described where it lives, not where it points. */
	int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	r = fstat(fd, &st) < 0 ? -errno : 0;
	if (r == 0)
		r = fsinfo_fill(fd, &st, &fi, NULL);
	close(fd);
	if (r == 0)
		sweep__out_put(ret, &fi, sizeof(fi));
	return r;
}

/*
 * Few filesystems per walk: a small array of separately allocated entries
 * keeps pointers stable. Each remembers its block device, so that a class
 * forced or released after it was filled (sweep_device_force, SWEEP_DEVICE)
 * is seen on the next lookup.
 */
struct fscache_entry {
	struct sweep_fsinfo fi; /* first: the pointer handed out */
	uint64_t bdev;
};

struct sweep_fscache {
	struct fscache_entry **v;
	size_t n, cap;
};

SWEEP_EXPORT struct sweep_fscache *sweep_fscache_new(void)
{
	return calloc(1, sizeof(struct sweep_fscache));
}

SWEEP_EXPORT struct sweep_fscache *sweep_fscache_free(struct sweep_fscache *c)
{
	if (c) {
		for (size_t i = 0; i < c->n; i++)
			free(c->v[i]);
		free(c->v);
		free(c);
	}
	return NULL;
}

/* Decide the class (and so the profile) again when what is asked for differs from what the entry holds. */
static void fscache_refresh(struct fscache_entry *e)
{
	if (sweep__device_stale(&e->fi))
		sweep__device_decide(e->bdev, e->fi.rotational, &e->fi);
}

SWEEP_EXPORT int sweep_fscache_get(struct sweep_fscache *c, uint64_t dev, int fd,
				   const struct sweep_fsinfo **ret)
{
	if (!c || !ret)
		return -EINVAL;
	for (size_t i = 0; i < c->n; i++) {
		if (c->v[i]->fi.dev == dev) {
			fscache_refresh(c->v[i]);
			*ret = &c->v[i]->fi;
			return 0;
		}
	}
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if ((uint64_t)st.st_dev != dev)
		return -EXDEV; /* fd is not on the device asked about */
	if (sweep__grow(&c->v, &c->cap, c->n + 1, sizeof(*c->v), 4) < 0)
		return -ENOMEM;
	struct fscache_entry *e = malloc(sizeof(*e));
	if (!e)
		return -ENOMEM;
	int r = fsinfo_fill(fd, &st, &e->fi, &e->bdev);
	if (r < 0) {
		free(e);
		return r;
	}
	c->v[c->n++] = e;
	*ret = &e->fi;
	return 0;
}
