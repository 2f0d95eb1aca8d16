/* SPDX-License-Identifier: MIT */
/*
 * A whole xfs filesystem walked on fast storage: its files' stats from one
 * bulkstat table (sweep__xfs_stats_start) instead of a stat each.
 *
 * On fast storage a cold walk is CPU: the aged linux-lite xfs image (58k
 * files), `perf record` of sweep-du had 67% of its samples in fstatat, most
 * of that path lookup, dentry and VFS inode setup and the inode cluster
 * reads one file at a time. Bulkstat gives the same fields from the inode
 * itself, whole allocation groups a call at a time, on a thread per group:
 * every inode of that image in 0.15 s of system time. The walk still lists
 * every directory, and stats what the table cannot answer: entries of
 * unknown type, symlinks it follows, and any entry whose inode the table
 * does not hold or holds as another type (replaced since). Subdirectories
 * too come from the table: with no mount on the filesystem, none of them
 * is a mount point, so their inode is what stat would say (XDEV and loops
 * read st_dev and st_ino; the open that follows checks both).
 *
 * Only where the answer is the one stat gives: the walk's root is the
 * mount's root (bulkstat reads every inode: it pays for a whole
 * filesystem only), no mount sits anywhere on this filesystem (stat
 * would see the mounted file; bulkstat the one beneath), the mount is not
 * idmapped (stat maps owners; bulkstat gives them raw) and not largeio
 * (st_blksize would vary per file). On the SSD class (walk threads) from
 * the start; on the HDD class once the walk's inode sweep has cached every
 * cluster (swept: the table then reads nothing from the disk). With
 * CAP_SYS_ADMIN, and up to TABLE_MAX_INODES inodes in use (about 90 bytes
 * each). A mount made on the filesystem during the walk is not seen for
 * the files the table answers, as a file replaced after its stat is not.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "walk_impl.h"

/* Inodes in use beyond which no table is made (about 90 MB of it). */
#define TABLE_MAX_INODES (1u << 20)
/* Bulkstat threads: a group each at a time. */
#define TABLE_THREADS 4u
#define XFS_MAGIC 0x58465342u

static uint64_t table_stats;

uint64_t sweep__walk_table_stats(void)
{
	return __atomic_load_n(&table_stats, __ATOMIC_RELAXED);
}

/* What mount_plain gathers from the table. */
struct plain_scan {
	uint64_t mnt_id, dev;
	uint64_t *ids; /* the mounts of dev */
	size_t nids, cap;
	bool seen, odd;
};

/* First pass: the mounts of this filesystem, and this mount's options. */
static int plain_mounts_of(const struct sweep__mount *m, void *ctx)
{
	struct plain_scan *p = ctx;
	if (m->dev != p->dev)
		return 0;
	if (sweep__grow(&p->ids, &p->cap, p->nids + 1, sizeof(*p->ids), 8) < 0)
		return -ENOMEM;
	p->ids[p->nids++] = m->id;
	if (m->id != p->mnt_id)
		return 0;
	p->seen = true;
	if (strcmp(m->root, "/") != 0 || sweep__opt_has(m->opts, "idmapped") || sweep__opt_has(m->super_opts, "largeio"))
		p->odd = true;
	return 0;
}

/* Second pass: nothing mounted on them (1 stops at the first). */
static int plain_mounted_on(const struct sweep__mount *m, void *ctx)
{
	const struct plain_scan *p = ctx;
	for (size_t i = 0; i < p->nids; i++)
		if (p->ids[i] == m->parent && m->id != m->parent)
			return 1;
	return 0;
}

/*
 * The mount fd is the root of (mount id mnt_id, device dev): its whole
 * filesystem (not a bind mount of one directory: the table would read every
 * inode for a part), not idmapped, not largeio, and no mount on any mount
 * of its filesystem. False when
 * unsure (mountinfo unreadable or odd).
 */
static bool mount_plain(uint64_t mnt_id, uint64_t dev)
{
	struct plain_scan p = { .mnt_id = mnt_id, .dev = dev };
	bool ok = sweep__mountinfo_each(plain_mounts_of, &p) == 0 && p.seen && !p.odd &&
		  sweep__mountinfo_each(plain_mounted_on, &p) == 0;
	free(p.ids);
	return ok;
}

void sweep__walk_table_start(struct walk *w, const struct dnode *d, int fd, bool swept)
{
	struct statx stx;

	if (w->xstats_tried || d->parent || !(w->ahead || swept) || !w->meta || !d->fs || d->fs->fs_magic != XFS_MAGIC)
		return;
	w->xstats_tried = true;
	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &stx) < 0 || !(stx.stx_mask & STATX_MNT_ID) ||
	    !(stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) || !(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT) ||
	    makedev(stx.stx_dev_major, stx.stx_dev_minor) != d->dev || !mount_plain(stx.stx_mnt_id, d->dev))
		return;
	if (sweep__xfs_stats_start(fd, TABLE_THREADS, TABLE_MAX_INODES, &w->xstats) == 0)
		w->xstats_dev = d->dev;
}

bool sweep__walk_table_stat(const struct walk *w, const struct frame *f, size_t i, struct stat *st)
{
	const struct dent *e = &f->ls.v[i];

	if (!w->xstats || f->dir->dev != w->xstats_dev || e->type == DT_UNKNOWN ||
	    (e->type == DT_LNK && (w->flags & SWEEP_WALK_FOLLOW)))
		return false;
	/* The inode under that number now, as the listing's type says (else replaced since: stat it). */
	if (sweep__xfs_stats_get(w->xstats, e->ino, st) != 1 || IFTODT(st->st_mode) != e->type)
		return false;
	__atomic_fetch_add(&table_stats, 1, __ATOMIC_RELAXED);
	return true;
}

void sweep__walk_table_free(struct walk *w)
{
	sweep__xfs_stats_free(w->xstats);
	w->xstats = NULL;
}
