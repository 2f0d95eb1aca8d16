/* SPDX-License-Identifier: MIT */
/*
 * devmap: a filesystem's addresses onto the independent devices under it
 * (devmap.h says what a spindle and a group are). The stacks of block
 * devices are followed through sysfs: a partition adds its start, a loop
 * device goes to the disk holding its file, md and device-mapper to their
 * tables (devmap_md.c, devmap_dm.c); btrfs brings its own map, the chunk
 * tree (devmap_btrfs.c). Everything here only ever decides which reader a
 * file goes to and where it sorts: contents always come from the file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "devmap.h"
#include "device.h"

#define MAX_HOPS 16
#define MAX_SEGS 65536u   /* a map larger than this is a layer we do not follow: one opaque spindle */
#define MAX_LEAVES 256u   /* disks under one striped or opaque spindle that are remembered */
#define BTRFS_MAGIC 0x9123683Eu

/* ---- the spindles ---- */

struct spindle {
	char name[SWEEP__DEVMAP_NAME];
	enum sweep__spindle_kind kind;
	unsigned members;
	uint32_t *leaves; /* the disks under it: indexes into sweep__spindles.leaves */
	size_t nleaves, capleaves;
};

struct sweep__spindles {
	struct spindle *v;
	size_t n, cap;
	char (*leaves)[SWEEP__DEVMAP_NAME]; /* every disk met, once */
	size_t nleaves, capleaves;
};

struct sweep__spindles *sweep__spindles_new(void)
{
	return calloc(1, sizeof(struct sweep__spindles));
}

struct sweep__spindles *sweep__spindles_free(struct sweep__spindles *s)
{
	if (s) {
		for (size_t i = 0; i < s->n; i++)
			free(s->v[i].leaves);
		free(s->v);
		free(s->leaves);
		free(s);
	}
	return NULL;
}

size_t sweep__spindles_count(const struct sweep__spindles *s)
{
	return s ? s->n : 0;
}

const char *sweep__spindle_name(const struct sweep__spindles *s, uint32_t id)
{
	return s && id < s->n ? s->v[id].name : "";
}

enum sweep__spindle_kind sweep__spindle_kind(const struct sweep__spindles *s, uint32_t id)
{
	return s && id < s->n ? s->v[id].kind : SWEEP__SPINDLE_OPAQUE;
}

unsigned sweep__spindle_members(const struct sweep__spindles *s, uint32_t id)
{
	return s && id < s->n ? s->v[id].members : 1;
}

static uint32_t find(uint32_t *parent, uint32_t id)
{
	while (parent[id] != id) {
		parent[id] = parent[parent[id]];
		id = parent[id];
	}
	return id;
}

int sweep__spindles_groups(const struct sweep__spindles *s, const unsigned char *used, uint32_t *ret)
{
	uint32_t *owner = malloc((s->nleaves ? s->nleaves : 1) * sizeof(*owner));
	if (!owner)
		return -ENOMEM;
	for (size_t i = 0; i < s->nleaves; i++)
		owner[i] = UINT32_MAX;
	for (uint32_t id = 0; id < s->n; id++)
		ret[id] = id;
	for (uint32_t id = 0; id < s->n; id++) {
		if (used && !used[id])
			continue;
		for (size_t k = 0; k < s->v[id].nleaves; k++) {
			uint32_t l = s->v[id].leaves[k];
			if (owner[l] == UINT32_MAX) {
				owner[l] = id;
				continue;
			}
			/* A disk under both: one group, named by its smallest spindle. */
			uint32_t a = find(ret, owner[l]), b = find(ret, id);
			if (a < b)
				ret[b] = a;
			else if (b < a)
				ret[a] = b;
		}
	}
	for (uint32_t id = 0; id < s->n; id++)
		ret[id] = find(ret, id);
	free(owner);
	return 0;
}

/* The disk name under spindle sp, once. */
static int leaf_add(struct sweep__spindles *s, struct spindle *sp, const char *name)
{
	size_t l = 0;
	while (l < s->nleaves && strcmp(s->leaves[l], name) != 0)
		l++;
	if (l == s->nleaves) {
		if (sweep__grow(&s->leaves, &s->capleaves, s->nleaves + 1, sizeof(*s->leaves), 8) < 0)
			return -ENOMEM;
		sweep__copy_name(s->leaves[l], sizeof(s->leaves[l]), name);
		s->nleaves++;
	}
	for (size_t k = 0; k < sp->nleaves; k++)
		if (sp->leaves[k] == l)
			return 0;
	if (sweep__grow(&sp->leaves, &sp->capleaves, sp->nleaves + 1, sizeof(*sp->leaves), 4) < 0)
		return -ENOMEM;
	sp->leaves[sp->nleaves++] = (uint32_t)l;
	return 0;
}

/* The spindle of this kind and name (made when new), over the disks leaves[0..nleaves). id or -ENOMEM. */
static int64_t spindle_add(struct sweep__spindles *s, enum sweep__spindle_kind kind, const char *name,
			   unsigned members, char (*leaves)[SWEEP__DEVMAP_NAME], size_t nleaves)
{
	uint32_t id = UINT32_MAX;
	for (size_t i = 0; i < s->n; i++) {
		if (s->v[i].kind == kind && strcmp(s->v[i].name, name) == 0) {
			id = (uint32_t)i;
			if (members > s->v[i].members)
				s->v[i].members = members;
			break;
		}
	}
	if (id == UINT32_MAX) {
		if (s->n >= UINT32_MAX - 1 || sweep__grow(&s->v, &s->cap, s->n + 1, sizeof(*s->v), 8) < 0)
			return -ENOMEM;
		id = (uint32_t)s->n++;
		struct spindle *sp = &s->v[id];
		memset(sp, 0, sizeof(*sp));
		sweep__copy_name(sp->name, sizeof(sp->name), name);
		sp->kind = kind;
		sp->members = members ? members : 1;
	}
	for (size_t i = 0; i < nleaves; i++)
		if (leaf_add(s, &s->v[id], leaves[i]) < 0)
			return -ENOMEM;
	return id;
}

/* ---- building a map ---- */

struct seg {
	uint64_t start, len; /* filesystem addresses */
	uint64_t to;         /* the offset of start on the spindle */
	uint32_t spindle;
};

struct sweep__devmap_build {
	struct sweep__spindles *s;
	struct seg *v;
	size_t n, cap;
	bool overflow; /* more than MAX_SEGS: the map is dropped for one opaque spindle */
	char note[160];
};

struct sweep__devmap {
	struct seg *v;
	size_t n;
	uint32_t home;
	size_t nspindles;
	char note[160];
};

void sweep__devmap_explain(struct sweep__devmap_build *b, const char *fmt, ...)
{
	if (b->note[0])
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(b->note, sizeof(b->note), fmt, ap);
	va_end(ap);
}

void sweep__devmap_mark(const struct sweep__devmap_build *b, struct sweep__devmap_mark *ret)
{
	ret->n = b->n;
	ret->last_len = b->n ? b->v[b->n - 1].len : 0;
}

void sweep__devmap_rewind(struct sweep__devmap_build *b, const struct sweep__devmap_mark *m)
{
	b->n = m->n;
	if (b->n)
		b->v[b->n - 1].len = m->last_len; /* it may have grown by a merge since */
}

static int seg_add(struct sweep__devmap_build *b, uint64_t from, uint64_t len, uint32_t spindle, uint64_t to)
{
	if (len == 0)
		return 0;
	/* Contiguous with the last one on the same spindle (a btrfs filesystem's chunks, a partition's runs): one. */
	if (b->n) {
		struct seg *l = &b->v[b->n - 1];
		if (l->spindle == spindle && l->start + l->len == from && l->to + l->len == to) {
			l->len += len;
			return 0;
		}
	}
	if (b->n >= MAX_SEGS) {
		b->overflow = true;
		return 0;
	}
	if (sweep__grow(&b->v, &b->cap, b->n + 1, sizeof(*b->v), 4) < 0)
		return -ENOMEM;
	b->v[b->n++] = (struct seg){ .start = from, .len = len, .to = to, .spindle = spindle };
	return 0;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

int sweep__devmap_sysdir(uint64_t bdev, char *buf, size_t size)
{
	char link[PATH_MAX], real[PATH_MAX];
	if (major(bdev) == 0 && minor(bdev) == 0)
		return -ENOENT;
	if (snprintf(link, sizeof(link), "%s/dev/block/%u:%u", sweep__sysroot(), major(bdev), minor(bdev)) >=
		    (int)sizeof(link) ||
	    !realpath(link, real) || strlen(real) >= size)
		return -ENOENT;
	memcpy(buf, real, strlen(real) + 1);
	return 0;
}

static bool has(const char *sysdir, const char *rel)
{
	char p[PATH_MAX];
	return snprintf(p, sizeof(p), "%s/%s", sysdir, rel) < (int)sizeof(p) && access(p, F_OK) == 0;
}

int sweep__devmap_read_u64(const char *sysdir, const char *rel, uint64_t *ret)
{
	char p[PATH_MAX], buf[64], *end;
	if (snprintf(p, sizeof(p), "%s/%s", sysdir, rel) >= (int)sizeof(p))
		return -ENAMETOOLONG;
	int r = sweep__read_small(p, buf, sizeof(buf));
	if (r < 0)
		return r;
	errno = 0;
	unsigned long long v = strtoull(buf, &end, 10);
	if (errno || end == buf)
		return -EINVAL;
	*ret = v;
	return 0;
}

/*
 * The block device under a loop device (0: none known): the one its file is
 * on, or the block device it is bound to; and where its offset 0 lies there.
 * The file named in sysfs is looked at first without opening it (O_PATH),
 * and opened for FIEMAP only when it is a regular file.
 */
static uint64_t loop_below(const char *sysdir, uint64_t *ret_start)
{
	char p[PATH_MAX], file[PATH_MAX];
	struct stat st;
	uint64_t bdev = 0, phys = 0, off = 0;

	*ret_start = 0;
	if (snprintf(p, sizeof(p), "%s/loop/backing_file", sysdir) >= (int)sizeof(p) ||
	    sweep__read_small(p, file, sizeof(file)) < 0)
		return 0;
	int fd = open(file, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) == 0 && S_ISBLK(st.st_mode)) {
		bdev = st.st_rdev;
	} else if (S_ISREG(st.st_mode)) {
		bdev = sweep__fs_bdev(fd, &st);
		/*
		 * Its first block as where the device's offset 0 lies: exact
		 * for an image written in one piece, a sort key otherwise (and
		 * 0 where the file may not be read).
		 */
		char self[64];
		snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
		int rfd = bdev ? open(self, O_RDONLY | O_NONBLOCK | O_CLOEXEC) : -1;
		struct stat again;
		if (rfd >= 0 && fstat(rfd, &again) == 0 && again.st_ino == st.st_ino && again.st_dev == st.st_dev &&
		    sweep_extent_first(rfd, &phys) < 0)
			phys = 0;
		if (rfd >= 0)
			close(rfd);
	}
	close(fd);
	(void)sweep__devmap_read_u64(sysdir, "loop/offset", &off);
	*ret_start = phys + off;
	return bdev;
}

/* Append the disks under the block device at sysdir to leaves (at most MAX_LEAVES, no repeats). */
static void leaves_of(const char *sysdir, int hops, char (*leaves)[SWEEP__DEVMAP_NAME], size_t *n)
{
	char p[PATH_MAX], sub[PATH_MAX];
	if (hops > MAX_HOPS)
		return;
	if (has(sysdir, "partition")) {
		sweep__copy_name(p, sizeof(p), sysdir);
		char *slash = strrchr(p, '/');
		if (slash) {
			*slash = '\0';
			leaves_of(p, hops + 1, leaves, n);
		}
		return;
	}
	uint64_t start;
	uint64_t below = has(sysdir, "loop") ? loop_below(sysdir, &start) : 0;
	if (below) {
		if (sweep__devmap_sysdir(below, sub, sizeof(sub)) == 0)
			leaves_of(sub, hops + 1, leaves, n);
		return;
	}
	bool any = false;
	if (!has(sysdir, "loop") && snprintf(p, sizeof(p), "%s/slaves", sysdir) < (int)sizeof(p)) {
		DIR *d = opendir(p);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			char link[PATH_MAX];
			if (snprintf(link, sizeof(link), "%s/%s", p, de->d_name) < (int)sizeof(link) && realpath(link, sub)) {
				leaves_of(sub, hops + 1, leaves, n);
				any = true;
			}
		}
		if (d)
			closedir(d);
	}
	if (any)
		return;
	const char *name = base_name(sysdir);
	for (size_t i = 0; i < *n; i++)
		if (strcmp(leaves[i], name) == 0)
			return;
	if (*n < MAX_LEAVES)
		sweep__copy_name(leaves[(*n)++], SWEEP__DEVMAP_NAME, name);
}

int sweep__devmap_whole(struct sweep__devmap_build *b, enum sweep__spindle_kind kind, const char *name,
			unsigned members, const char *const *sysdirs, size_t n, uint64_t from, uint64_t len, uint64_t at)
{
	char (*leaves)[SWEEP__DEVMAP_NAME] = malloc(MAX_LEAVES * sizeof(*leaves));
	size_t nl = 0;
	if (!leaves)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		leaves_of(sysdirs[i], 0, leaves, &nl);
	if (nl == 0)
		sweep__copy_name(leaves[nl++], SWEEP__DEVMAP_NAME, name); /* nothing below known: the device itself */
	int64_t id = spindle_add(b->s, kind, name, members ? members : (unsigned)(n ? n : 1), leaves, nl);
	free(leaves);
	if (id < 0)
		return (int)id;
	/* Its own addresses: the order the set reads in (md's, the filesystem's on btrfs). */
	return seg_add(b, from, len, (uint32_t)id, at);
}

/* The device at sysdir as a whole, of unknown layout, in the filesystem's address order. */
static int opaque(struct sweep__devmap_build *b, const char *sysdir, uint64_t from, uint64_t len, uint64_t at)
{
	const char *dirs[1] = { sysdir };
	return sweep__devmap_whole(b, SWEEP__SPINDLE_OPAQUE, base_name(sysdir), 0, dirs, 1, from, len, at);
}

/* A disk: the end of the stack. */
static int disk(struct sweep__devmap_build *b, const char *name, uint64_t from, uint64_t len, uint64_t at)
{
	char leaf[1][SWEEP__DEVMAP_NAME];
	sweep__copy_name(leaf[0], sizeof(leaf[0]), name);
	int64_t id = spindle_add(b->s, SWEEP__SPINDLE_DISK, name, 1, leaf, 1);
	return id < 0 ? (int)id : seg_add(b, from, len, (uint32_t)id, at);
}

int sweep__devmap_resolve(struct sweep__devmap_build *b, const char *sysdir, uint64_t from, uint64_t len,
			  uint64_t at, int hops)
{
	char p[PATH_MAX];
	uint64_t v;
	int r;

	if (hops > MAX_HOPS) {
		sweep__devmap_explain(b, "%s: devices stacked too deep", base_name(sysdir));
		return opaque(b, sysdir, from, len, at);
	}
	/* A partition: its disk, from where it starts. */
	if (has(sysdir, "partition")) {
		sweep__copy_name(p, sizeof(p), sysdir);
		char *slash = strrchr(p, '/');
		if (!slash || sweep__devmap_read_u64(sysdir, "start", &v) < 0) {
			sweep__devmap_explain(b, "%s: partition start not known", base_name(sysdir));
			return opaque(b, sysdir, from, len, at);
		}
		*slash = '\0';
		return sweep__devmap_resolve(b, p, from, len, at + v * 512, hops + 1);
	}
	/* A loop device: the disk its file is on, or itself where no disk holds the file (tmpfs, FUSE). */
	if (has(sysdir, "loop")) {
		uint64_t start, below = loop_below(sysdir, &start);
		if (below)
			return sweep__devmap_resolve_dev(b, below, from, len, start + at, hops + 1);
		return disk(b, base_name(sysdir), from, len, at);
	}
	if ((r = sweep__devmap_md(b, sysdir, from, len, at, hops)) != 0)
		return r < 0 ? r : 0;
	if ((r = sweep__devmap_dm(b, sysdir, from, len, at, hops)) != 0)
		return r < 0 ? r : 0;
	/* Something else built on other devices (bcache, drbd...): they answer together, how is not known. */
	if (snprintf(p, sizeof(p), "%s/slaves", sysdir) < (int)sizeof(p)) {
		DIR *d = opendir(p);
		struct dirent *de;
		bool any = false;
		while (d && (de = readdir(d)))
			if (de->d_name[0] != '.')
				any = true;
		if (d)
			closedir(d);
		if (any) {
			sweep__devmap_explain(b, "%s: a stacked device of a kind not followed", base_name(sysdir));
			return opaque(b, sysdir, from, len, at);
		}
	}
	return disk(b, base_name(sysdir), from, len, at);
}

int sweep__devmap_resolve_dev(struct sweep__devmap_build *b, uint64_t bdev, uint64_t from, uint64_t len, uint64_t at,
			      int hops)
{
	char sysdir[PATH_MAX];
	if (sweep__devmap_sysdir(bdev, sysdir, sizeof(sysdir)) < 0) {
		char name[SWEEP__DEVMAP_NAME];
		snprintf(name, sizeof(name), "dev-%u-%u", major(bdev), minor(bdev));
		sweep__devmap_explain(b, "%s: not in sysfs", name);
		return sweep__devmap_whole(b, SWEEP__SPINDLE_OPAQUE, name, 1, NULL, 0, from, len, at);
	}
	return sweep__devmap_resolve(b, sysdir, from, len, at, hops);
}

/* ---- a map, made and used ---- */

static int cmp_seg(const void *a, const void *b)
{
	const struct seg *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* The build's segments become the map; an empty or overflowing one, a single opaque spindle named name. */
static int finish(struct sweep__devmap_build *b, const char *name, struct sweep__devmap **ret)
{
	int r = 0;
	if (b->overflow || b->n == 0) {
		if (b->overflow)
			sweep__devmap_explain(b, "%s: more than %u pieces", name, MAX_SEGS);
		b->n = 0;
		r = sweep__devmap_whole(b, SWEEP__SPINDLE_OPAQUE, name, 1, NULL, 0, 0, UINT64_MAX, 0);
		if (r < 0)
			return r;
	}
	struct sweep__devmap *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	qsort(b->v, b->n, sizeof(*b->v), cmp_seg);
	m->v = b->v;
	m->n = b->n;
	b->v = NULL;
	m->home = m->v[0].spindle;
	size_t ns = sweep__spindles_count(b->s);
	unsigned char *seen = calloc(ns ? ns : 1, 1);
	if (!seen) {
		free(m->v);
		free(m);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->n; i++) {
		m->nspindles += !seen[m->v[i].spindle];
		seen[m->v[i].spindle] = 1;
	}
	free(seen);
	memcpy(m->note, b->note, sizeof(m->note));
	*ret = m;
	return 0;
}

/* The size in bytes of the block device at sysdir (sysfs counts 512-byte sectors); a huge range when unknown. */
static uint64_t dev_bytes(const char *sysdir)
{
	uint64_t sectors;
	return sweep__devmap_read_u64(sysdir, "size", &sectors) == 0 && sectors && sectors < UINT64_MAX / 512 ? sectors * 512
												  : UINT64_MAX / 2;
}

int sweep__devmap_new_bdev(struct sweep__spindles *s, uint64_t bdev, struct sweep__devmap **ret)
{
	struct sweep__devmap_build b = { .s = s };
	char sysdir[PATH_MAX], name[SWEEP__DEVMAP_NAME];
	int r;

	if (!s || !ret)
		return -EINVAL;
	snprintf(name, sizeof(name), "dev-%u-%u", major(bdev), minor(bdev));
	if (sweep__devmap_sysdir(bdev, sysdir, sizeof(sysdir)) == 0) {
		sweep__copy_name(name, sizeof(name), base_name(sysdir));
		r = sweep__devmap_resolve(&b, sysdir, 0, dev_bytes(sysdir), 0, 0);
	} else {
		sweep__devmap_explain(&b, "%s: not in sysfs", name);
		r = 0;
	}
	if (r == 0)
		r = finish(&b, name, ret);
	free(b.v);
	return r;
}

int sweep__devmap_new(struct sweep__spindles *s, int fd, uint64_t dev, struct sweep__devmap **ret)
{
	struct statfs sfs;
	struct stat st;

	if (!s || !ret)
		return -EINVAL;
	if (fstat(fd, &st) < 0 || fstatfs(fd, &sfs) < 0)
		return -errno;
	(void)dev; /* the filesystem is fd's; dev only names it where nothing else does */
	if ((uint32_t)sfs.f_type == BTRFS_MAGIC) {
		struct sweep__devmap_build b = { .s = s };
		int r = sweep__devmap_btrfs(&b, fd);
		if (r == 0)
			r = finish(&b, "btrfs", ret);
		free(b.v);
		return r;
	}
	uint64_t bdev = sweep__fs_bdev(fd, &st);
	if (bdev)
		return sweep__devmap_new_bdev(s, bdev, ret);
	/* Memory, network, FUSE: the filesystem is its own device (two NFS servers are read side by side). */
	struct sweep__devmap_build b = { .s = s };
	char name[SWEEP__DEVMAP_NAME];
	snprintf(name, sizeof(name), "nodev-%u-%u", major(st.st_dev), minor(st.st_dev));
	int r = sweep__devmap_whole(&b, SWEEP__SPINDLE_NODEV, name, 1, NULL, 0, 0, UINT64_MAX, 0);
	if (r == 0)
		r = finish(&b, name, ret);
	free(b.v);
	return r;
}

struct sweep__devmap *sweep__devmap_free(struct sweep__devmap *m)
{
	if (m) {
		free(m->v);
		free(m);
	}
	return NULL;
}

void sweep__devmap_locate(const struct sweep__devmap *m, uint64_t addr, uint32_t *ret_spindle, uint64_t *ret_off)
{
	size_t lo = 0, hi = m->n;
	/* The last segment starting at or below addr. */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->v[mid].start <= addr)
			lo = mid;
		else
			hi = mid;
	}
	const struct seg *g = &m->v[lo];
	if (addr >= g->start && addr - g->start < g->len) {
		*ret_spindle = g->spindle;
		*ret_off = g->to + (addr - g->start);
	} else {
		*ret_spindle = m->home;
		*ret_off = addr;
	}
}

uint32_t sweep__devmap_home(const struct sweep__devmap *m)
{
	return m->home;
}

size_t sweep__devmap_spindles(const struct sweep__devmap *m)
{
	return m->nspindles;
}

const char *sweep__devmap_note(const struct sweep__devmap *m)
{
	return m->note;
}
