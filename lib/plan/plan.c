/* SPDX-License-Identifier: MIT */
/*
 * plan: one batch of files, sorted into one sweep.
 *
 * Memory layout (aim: <= 200 bytes per file): entries live in fixed-size
 * chunks so that pointers handed out by sweep_plan_entry() stay valid while
 * more files are added; paths and extent lists live in a chunked bump
 * arena; the sort permutes a 32-bit index array, never the entries, so the
 * insertion index doubles as the final, stable tie-break.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plan.h"
#include "plan_group.h"

#define ENTRY_CHUNK 1024u           /* entries per chunk */
#define ARENA_CHUNK (256u * 1024u)  /* bytes per arena chunk (larger requests get their own) */

struct arena_chunk {
	struct arena_chunk *next;
	size_t cap;
	size_t used;
	max_align_t data[];
};

/* A bump allocator whose memory is never moved, reset without freeing. */
struct arena {
	struct arena_chunk *head; /* first chunk (reused after a reset) */
	struct arena_chunk *cur;  /* chunk being filled */
	size_t used;              /* bytes handed out since the last reset */
};

/* A directory entries of this batch are opened beneath (a duplicate the plan owns). */
struct plan_root {
	int fd;
	uint64_t dev, ino;
};

/*
 * A device the plan's files lie on: its profile, decided with its class
 * (lib/device/devclass.c), and the order its files take, the caller's or
 * the profile's. A tree may span devices; each keeps its own. Kept for the
 * plan's life, as the batches of one run see the same devices.
 */
struct plan_dev {
	uint64_t dev;
	enum sweep_order order;
	struct sweep_profile prof;
};

struct sweep_plan {
	struct sweep_plan_opts opts;
	struct plan_root roots[SWEEP_PLAN_MAX_ROOTS];
	uint32_t nroots;
	uint32_t last_root; /* the root the previous entry used: most entries share it */
	struct plan_dev *devs;
	size_t ndevs, cap_devs;
	size_t last_dev; /* the device the previous lookup found: most entries share it */
	struct sweep_plan_entry **chunks;
	size_t nchunks, chunks_cap;
	size_t count;
	uint32_t *idx; /* read order: indexes into the chunks */
	size_t idx_cap;
	struct arena arena;
	bool defer;      /* locate files when sorting, several at once (sweep__plan_defer_locate) */
	size_t npending; /* entries added with SWEEP__PLAN_PENDING */
	struct sweep__plan_deep *deep; /* the engine that locates them by a raw sweep first (plan_deep.c) */
	bool cached;     /* the last sort found the batch in the page cache: not located, in inode order */
	bool warm;       /* the last sort found the batch's data in the page cache (cached, or nothing was to locate) */
	/*
	 * Devices' maps and the groups of the last sort (plan_group.c): made at
	 * the first sort that sorts by device, kept for the plan's life.
	 */
	struct sweep__grouping *grouping;
	bool grouped;                  /* the last sort made groups; else one group, whole */
	struct sweep__plan_group whole; /* that one group */
};

/* How the plans of this process placed their files (locate_one runs on several threads: atomic). */
static struct sweep__plan_stats totals;

void sweep__plan_count(enum sweep__located_by how)
{
	uint64_t *c = how == SWEEP__BY_HINT	   ? &totals.hinted
		      : how == SWEEP__BY_DEEP	   ? &totals.deep
		      : how == SWEEP__SIZED_BY_HINT ? &totals.sized
						   : &totals.located;
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

void sweep__plan_totals(struct sweep__plan_stats *ret)
{
	ret->hinted = __atomic_load_n(&totals.hinted, __ATOMIC_RELAXED);
	ret->located = __atomic_load_n(&totals.located, __ATOMIC_RELAXED);
	ret->deep = __atomic_load_n(&totals.deep, __ATOMIC_RELAXED);
	ret->sized = __atomic_load_n(&totals.sized, __ATOMIC_RELAXED);
}

static void *arena_alloc(struct arena *a, size_t size, size_t align)
{
	struct arena_chunk *c = a->cur;
	size_t off;

	for (;;) {
		if (c) {
			off = (c->used + align - 1) & ~(align - 1);
			if (off + size <= c->cap) {
				a->used += off + size - c->used;
				c->used = off + size;
				return (char *)c->data + off;
			}
			if (c->next) { /* a chunk kept from before a reset */
				c = a->cur = c->next;
				c->used = 0;
				continue;
			}
		}
		size_t cap = size + align > ARENA_CHUNK ? size + align : ARENA_CHUNK;
		struct arena_chunk *n = malloc(sizeof(*n) + cap);
		if (!n)
			return NULL;
		n->next = NULL;
		n->cap = cap;
		n->used = 0;
		if (c)
			c->next = n;
		else
			a->head = n;
		c = a->cur = n;
	}
}

static void arena_reset(struct arena *a)
{
	a->cur = a->head;
	if (a->cur)
		a->cur->used = 0;
	a->used = 0;
}

static void arena_free(struct arena *a)
{
	struct arena_chunk *c = a->head;

	while (c) {
		struct arena_chunk *n = c->next;
		free(c);
		c = n;
	}
	a->head = a->cur = NULL;
	a->used = 0;
}

SWEEP_EXPORT int sweep_plan_new(const struct sweep_plan_opts *opts, struct sweep_plan **ret)
{
	struct sweep_plan *p;

	struct sweep_plan_opts o;
	int rc;

	if (!ret)
		return -EINVAL;
	rc = sweep__opts_copy(&o, sizeof(o), opts, offsetof(struct sweep_plan_opts, order) + sizeof(o.order));
	if (rc < 0)
		return rc;
	if ((unsigned)o.order > SWEEP_ORDER_NONE ||
	    sweep__flags_check(o.flags, SWEEP_PLAN_EXTENTS | SWEEP_PLAN_LOCATE | SWEEP_PLAN_CACHE_CHECK) < 0)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->opts = o;
	*ret = p;
	return 0;
}

static void roots_close(struct sweep_plan *p)
{
	for (uint32_t i = 0; i < p->nroots; i++)
		close(p->roots[i].fd);
	p->nroots = 0;
}

SWEEP_EXPORT struct sweep_plan *sweep_plan_free(struct sweep_plan *p)
{
	if (!p)
		return NULL;
	roots_close(p);
	sweep__plan_deep_free(p->deep);
	sweep__grouping_free(p->grouping);
	free(p->devs);
	for (size_t i = 0; i < p->nchunks; i++)
		free(p->chunks[i]);
	free(p->chunks);
	free(p->idx);
	arena_free(&p->arena);
	free(p);
	return NULL;
}

SWEEP_EXPORT size_t sweep_plan_memory(const struct sweep_plan *p)
{
	if (!p)
		return 0;
	/* What this batch occupies: its entries, its place in the order array, its arena bytes. */
	return p->count * (sizeof(struct sweep_plan_entry) + sizeof(uint32_t)) + p->arena.used;
}

static int plan_full(const struct sweep_plan *p)
{
	if (p->nroots >= SWEEP_PLAN_MAX_ROOTS)
		return 1;
	if (p->opts.max_entries && p->count >= p->opts.max_entries)
		return 1;
	if (p->opts.max_bytes && sweep_plan_memory(p) >= p->opts.max_bytes)
		return 1;
	return 0;
}

/* A slot for one more entry (not yet counted), or NULL. */
static struct sweep_plan_entry *entry_slot(struct sweep_plan *p)
{
	size_t c = p->count / ENTRY_CHUNK;

	if (p->count >= UINT32_MAX)
		return NULL;
	if (c >= p->nchunks) {
		if (p->nchunks == p->chunks_cap) {
			size_t ncap = p->chunks_cap ? 2 * p->chunks_cap : 16;
			struct sweep_plan_entry **n = realloc(p->chunks, ncap * sizeof(*n));
			if (!n)
				return NULL;
			p->chunks = n;
			p->chunks_cap = ncap;
		}
		p->chunks[p->nchunks] = malloc(ENTRY_CHUNK * sizeof(struct sweep_plan_entry));
		if (!p->chunks[p->nchunks])
			return NULL;
		p->nchunks++;
	}
	if (p->count >= p->idx_cap) {
		size_t ncap = p->idx_cap ? 2 * p->idx_cap : ENTRY_CHUNK;
		uint32_t *n = realloc(p->idx, ncap * sizeof(*n));
		if (!n)
			return NULL;
		p->idx = n;
		p->idx_cap = ncap;
	}
	return &p->chunks[c][p->count % ENTRY_CHUNK];
}

static struct sweep_plan_entry *entry_at(const struct sweep_plan *p, uint32_t i)
{
	return &p->chunks[i / ENTRY_CHUNK][i % ENTRY_CHUNK];
}

/* How the reader will reach an entry: beneath which root, from which byte of path, following or not. */
struct reach {
	uint32_t root, rel, flags;
};

static const struct reach by_path = { .root = SWEEP_PLAN_NO_ROOT };

/* Fill and count a new entry; extents (n of them) are copied into the arena. */
static int plan_push(struct sweep_plan *p, const char *path, const struct sweep_stat *st, uint64_t phys,
		     const struct sweep_extent *ext, size_t n, uint64_t cookie, const struct reach *how)
{
	struct sweep_plan_entry *e;
	size_t len;
	char *copy;

	if (!path || !st)
		return -EINVAL;
	e = entry_slot(p);
	if (!e)
		return -ENOMEM;
	len = strlen(path) + 1;
	copy = arena_alloc(&p->arena, len, 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, path, len);
	memset(e, 0, sizeof(*e));
	e->path = copy;
	e->dev = st->dev;
	e->ino = st->ino;
	e->size = st->size;
	e->phys = phys;
	e->ctime_sec = st->ctime_sec;
	e->ctime_nsec = st->ctime_nsec;
	e->cookie = cookie;
	e->root = how->root;
	e->rel = how->rel;
	e->flags = how->flags;
	if (n > 0 && (p->opts.flags & SWEEP_PLAN_EXTENTS)) {
		struct sweep_extent *x = arena_alloc(&p->arena, n * sizeof(*x), _Alignof(struct sweep_extent));
		if (!x)
			return -ENOMEM; /* the path bytes stay in the arena until the next clear: harmless */
		memcpy(x, ext, n * sizeof(*x));
		e->extents = x;
		e->nextents = (uint32_t)n;
	}
	p->idx[p->count] = (uint32_t)p->count;
	p->count++;
	return plan_full(p);
}

/* The device dev when the plan knows it already, else NULL. */
static struct plan_dev *dev_find(struct sweep_plan *p, uint64_t dev)
{
	if (p->last_dev < p->ndevs && p->devs[p->last_dev].dev == dev)
		return &p->devs[p->last_dev];
	for (size_t i = 0; i < p->ndevs; i++) {
		if (p->devs[i].dev == dev) {
			p->last_dev = i;
			return &p->devs[i];
		}
	}
	return NULL;
}

/*
 * The device dev, met for the first time: its profile from fs (the walk's,
 * when it describes dev), else from the file at fd, else from path; where
 * none can be had, the profile of a device nothing is known of (inode
 * order). NULL only without memory.
 */
static struct plan_dev *dev_add(struct sweep_plan *p, uint64_t dev, const struct sweep_fsinfo *fs, int fd,
				const char *path)
{
	struct sweep_fsinfo fi = { .size = sizeof(fi) };
	struct plan_dev *d;

	if (sweep__grow(&p->devs, &p->cap_devs, p->ndevs + 1, sizeof(*p->devs), 4) < 0)
		return NULL;
	d = &p->devs[p->ndevs];
	d->dev = dev;
	if (fs && fs->dev == dev)
		d->prof = fs->profile;
	else if ((fd >= 0 ? sweep_fsinfo_fd(fd, &fi) : path ? sweep_fsinfo_path(path, &fi) : -ENOENT) == 0 &&
		 fi.dev == dev)
		d->prof = fi.profile;
	else
		sweep__profile_unknown(&d->prof);
	/* AUTO: the profile's (the SSD class: as added, no FIEMAP; a disk: physical where the filesystem allows). */
	d->order = p->opts.order != SWEEP_ORDER_AUTO ? p->opts.order : d->prof.plan_order;
	p->last_dev = p->ndevs++;
	return d;
}

static struct plan_dev *dev_of(struct sweep_plan *p, uint64_t dev, const struct sweep_fsinfo *fs, int fd,
			       const char *path)
{
	struct plan_dev *d = dev_find(p, dev);
	return d ? d : dev_add(p, dev, fs, fd, path);
}

const struct sweep_profile *sweep__plan_profile(const struct sweep_plan *p, uint64_t dev)
{
	for (size_t i = 0; p && i < p->ndevs; i++)
		if (p->devs[i].dev == dev)
			return &p->devs[i].prof;
	return NULL;
}

/* Open for FIEMAP: name relative to dirfd as it stands, or (beneath) below dirfd without symlinks. */
static int open_noatime(int dirfd, const char *name, bool follow, bool beneath)
{
	int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW);
	int fd;

	for (int noatime = O_NOATIME;; noatime = 0) {
		if (beneath) {
			fd = sweep__open_beneath(dirfd, name, flags | noatime, 0);
		} else {
			fd = openat(dirfd, name, flags | noatime);
			if (fd < 0)
				fd = -errno;
		}
		/* O_NOATIME is refused on files we do not own unless we have CAP_FOWNER. */
		if (fd != -EPERM || !noatime)
			return fd;
	}
}

/* The first located byte of the extent list (lowest logical offset with a location). */
static uint64_t first_located(const struct sweep_extent *ext, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!(ext[i].flags & SWEEP_EXTENT_NOLOC) && ext[i].physical != SWEEP_NO_PHYS)
			return ext[i].physical;
	return SWEEP_NO_PHYS;
}

/*
 * The file's location from dirfd/name (opened as open_noatime says), then the
 * entry. eh: what the walk knows beyond the entry (NULL when not from a walk).
 */
/* The plan looks the files of d up: it sorts them by location, or the caller wants them (extents for a trace, or shown). */
static bool locates(const struct sweep_plan *p, const struct plan_dev *d)
{
	return d->order == SWEEP_ORDER_PHYSICAL || (p->opts.flags & (SWEEP_PLAN_EXTENTS | SWEEP_PLAN_LOCATE));
}

/* Whether an entry of d reached so is left pending, to be located when the batch is sorted. */
static bool sort_locates(const struct sweep_plan *p, const struct plan_dev *d, const struct reach *how)
{
	return p->defer && d->order == SWEEP_ORDER_PHYSICAL && !(p->opts.flags & SWEEP_PLAN_EXTENTS) &&
	       how->root != SWEEP_PLAN_NO_ROOT && !(how->flags & SWEEP_PLAN_FOLLOW);
}

/* An unstated entry's stat with the size its raw inode gives, in *own. */
static const struct sweep_stat *hinted_stat(struct sweep_stat *own, const struct sweep_stat *st, uint64_t size,
					    struct reach *reach)
{
	*own = *st;
	own->size = size; /* for the batch's byte counts; the reader compares nothing with it */
	own->ctime_sec = 0;
	own->ctime_nsec = 0;
	reach->flags |= SWEEP__PLAN_UNSTATED;
	return own;
}

static int add_located(struct sweep_plan *p, int dirfd, const char *name, bool follow, bool beneath,
		       const char *path, const struct sweep_stat *st, uint64_t cookie, const struct reach *how,
		       const struct sweep_entry_hint *eh, const struct sweep_fsinfo *fs)
{
	struct sweep_extent *ext = NULL;
	size_t n = 0;
	uint64_t phys = SWEEP_NO_PHYS;
	int fd = -1, r;
	struct sweep_stat own;
	struct reach reach = *how;
	bool unstated = eh && !eh->stated;

	struct plan_dev *d = dev_of(p, st->dev, fs, -1, path);

	if (!d)
		return -ENOMEM;
	/* The walk did not read the inode: fine when this plan's own raw sweep of the batch will (plan_deep.c). */
	if (eh && eh->lazy && !(sort_locates(p, d, &reach) && p->roots[reach.root].dev == eh->dev))
		eh = sweep__walk_entry_hint_now(eh);
	/*
	 * The raw inode's first byte as the sort key, without open, FIEMAP and
	 * close. A key only: the reader opens the file beneath its root, checks
	 * its identity and takes everything it outputs from that file's fstat.
	 */
	if (eh && eh->have_hint && locates(p, d) && !(p->opts.flags & SWEEP_PLAN_EXTENTS)) {
		if (unstated)
			st = hinted_stat(&own, st, eh->size, &reach);
		sweep__plan_count(SWEEP__BY_HINT);
		return plan_push(p, path, st, eh->phys, NULL, 0, cookie, &reach);
	}
	/* Neither located nor stat'ed, its size from the raw inode (SWEEP_WALK_HINT_FILES): nothing to open. */
	if (unstated && eh->have_size && !locates(p, d)) {
		sweep__plan_count(SWEEP__SIZED_BY_HINT);
		return plan_push(p, path, hinted_stat(&own, st, eh->size, &reach), SWEEP_NO_PHYS, NULL, 0, cookie, &reach);
	}
	/*
	 * Reached beneath a root and only a sort key wanted: leave the open,
	 * FIEMAP and close to sweep_plan_sort(), which does them for the
	 * whole batch on several threads at once (locate_pending).
	 */
	if (sort_locates(p, d, &reach)) {
		bool deep = eh && (eh->deep || eh->lazy); /* the walk left it to the plan's raw sweep */
		reach.flags |= SWEEP__PLAN_PENDING | (unstated ? SWEEP__PLAN_UNSTATED | SWEEP_PLAN_UNSIZED : 0) |
			       (deep ? SWEEP__PLAN_DEEP : 0);
		r = plan_push(p, path, st, SWEEP_NO_PHYS, NULL, 0, cookie, &reach);
		if (r >= 0)
			p->npending++;
		return r;
	}
	if (locates(p, d))
		fd = open_noatime(dirfd, name, follow, beneath);
	if (unstated) {
		struct stat raw;
		/* Not stat'ed by the walk: the file just opened says what it is (one lookup, not two). */
		if (fd >= 0 && fstat(fd, &raw) == 0) {
			sweep_stat_from_stat(&own, &raw);
			st = &own;
		} else {
			reach.flags |= SWEEP__PLAN_UNSTATED | SWEEP_PLAN_UNSIZED;
		}
	}
	if (fd >= 0 && locates(p, d)) {
		/* No location is not an error: the file sorts after the located ones. */
		if (p->opts.flags & SWEEP_PLAN_EXTENTS) {
			enum sweep_extent_source src;
			if (sweep_extents_get(fd, &ext, &n, &src) == 0)
				phys = first_located(ext, n);
		} else {
			uint64_t v;
			if (sweep_extent_first(fd, &v) == 0)
				phys = v;
		}
	}
	if (fd >= 0) {
		if (locates(p, d))
			sweep__plan_count(SWEEP__BY_FIEMAP);
		close(fd);
	}
	r = plan_push(p, path, st, phys, ext, n, cookie, &reach);
	free(ext);
	return r;
}

SWEEP_EXPORT int sweep_plan_add(struct sweep_plan *p, int dirfd, const char *name, const char *path,
				const struct sweep_stat *st, uint64_t cookie)
{
	if (!p || !name || !path || !st)
		return -EINVAL;
	return add_located(p, dirfd, name, false, false, path, st, cookie, &by_path, NULL, NULL);
}

/* The index of the root at fd (same device and inode as one the batch has, or a new duplicate). */
static int root_index(struct sweep_plan *p, int fd, uint64_t dev, uint64_t ino, uint32_t *ret)
{
	struct stat st;

	if (dev == 0 && ino == 0) {
		if (fstat(fd, &st) < 0)
			return -errno;
		if (!S_ISDIR(st.st_mode))
			return -ENOTDIR;
		dev = st.st_dev;
		ino = st.st_ino;
	}
	if (p->last_root < p->nroots && p->roots[p->last_root].dev == dev && p->roots[p->last_root].ino == ino) {
		*ret = p->last_root;
		return 0;
	}
	for (uint32_t i = 0; i < p->nroots; i++) {
		if (p->roots[i].dev == dev && p->roots[i].ino == ino) {
			*ret = p->last_root = i;
			return 0;
		}
	}
	if (p->nroots >= SWEEP_PLAN_MAX_ROOTS)
		return -ENOBUFS;
	int dup = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (dup < 0)
		return -errno;
	p->roots[p->nroots] = (struct plan_root){ .fd = dup, .dev = dev, .ino = ino };
	*ret = p->last_root = p->nroots++;
	return 0;
}

/* rel must be a plain relative name: no "..", not absolute, inside path. */
static int beneath_reach(struct sweep_plan *p, int root_fd, uint64_t dev, uint64_t ino, const char *rel,
			 const char *path, struct reach *how)
{
	size_t pl = strlen(path), rl = strlen(rel);

	if (!rel[0] || rel[0] == '/' || rl > pl || strcmp(path + pl - rl, rel) || pl - rl > UINT32_MAX)
		return -EINVAL;
	how->rel = (uint32_t)(pl - rl);
	how->flags = 0;
	return root_index(p, root_fd, dev, ino, &how->root);
}

SWEEP_EXPORT int sweep_plan_add_beneath(struct sweep_plan *p, int root_fd, const char *rel, const char *path,
					const struct sweep_stat *st, uint64_t cookie)
{
	struct reach how;
	int r;

	if (!p || root_fd < 0 || !rel || !path || !st)
		return -EINVAL;
	r = beneath_reach(p, root_fd, 0, 0, rel, path, &how);
	if (r < 0)
		return r;
	return add_located(p, root_fd, rel, false, true, path, st, cookie, &how, NULL, NULL);
}

SWEEP_EXPORT int sweep_plan_add_entry(struct sweep_plan *p, const struct sweep_entry *e, uint64_t cookie)
{
	struct reach how = by_path;
	bool follow;
	int r;

	if (!p || !e || !e->path || !e->at_name)
		return -EINVAL;
	follow = (e->flags & SWEEP_ENTRY_FOLLOWED) != 0;
	if (e->root_fd >= 0 && e->rel && !follow) {
		r = beneath_reach(p, e->root_fd, e->root_dev, e->root_ino, e->rel, e->path, &how);
		/*
		 * No descriptor left to keep a new root: the file is planned by
		 * its path, as a followed one is. The reader checks that what it
		 * opens there is still the file planned (device, inode), so a
		 * swapped ancestor gets it refused, not read.
		 */
		if (r == -EMFILE || r == -ENFILE)
			how = by_path;
		else if (r < 0)
			return r;
	} else if (follow) {
		how.flags = SWEEP_PLAN_FOLLOW;
	}
	return add_located(p, e->dirfd, e->at_name, follow, false, e->path, &e->st, cookie, &how,
			   e->hint, e->fs);
}

int sweep__plan_add_path(struct sweep_plan *p, const char *path, const struct sweep_stat *st, bool follow,
			 uint64_t cookie)
{
	struct reach how = { .root = SWEEP_PLAN_NO_ROOT, .flags = follow ? SWEEP_PLAN_FOLLOW : 0 };

	if (!p || !path || !st)
		return -EINVAL;
	return add_located(p, AT_FDCWD, path, follow, false, path, st, cookie, &how, NULL, NULL);
}

SWEEP_EXPORT int sweep_plan_root_fd(const struct sweep_plan *p, uint32_t root)
{
	return p && root < p->nroots ? p->roots[root].fd : -1;
}

SWEEP_EXPORT int sweep_plan_add_located(struct sweep_plan *p, const char *path, const struct sweep_stat *st,
					uint64_t phys, uint64_t cookie)
{
	if (!p || !path || !st)
		return -EINVAL;
	struct plan_dev *d = dev_find(p, st->dev);
	if (!d) {
		if (!(d = dev_add(p, st->dev, NULL, -1, path)))
			return -ENOMEM;
		/* AUTO, and the caller located the device's first file: the caller wants them sorted by it. */
		if (p->opts.order == SWEEP_ORDER_AUTO && phys != SWEEP_NO_PHYS)
			d->order = SWEEP_ORDER_PHYSICAL;
	}
	return plan_push(p, path, st, phys, NULL, 0, cookie, &by_path);
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

/* The order the files of device dev are sorted in: the device's, or inode order for a batch found in the page cache. */
static enum sweep_order sort_order(struct sweep_plan *p, uint64_t dev)
{
	const struct plan_dev *d = dev_find(p, dev);
	enum sweep_order o = d ? d->order : p->opts.order;
	return p->cached && o == SWEEP_ORDER_PHYSICAL ? SWEEP_ORDER_INODE : o;
}

/*
 * The caller's NAME order: by path bytewise, then inode, then insertion
 * index. It ignores devices, as the caller's NONE order does.
 */
static int cmp_names(const void *va, const void *vb, void *vp)
{
	struct sweep_plan *p = vp;
	uint32_t ia = *(const uint32_t *)va, ib = *(const uint32_t *)vb;
	const struct sweep_plan_entry *a = entry_at(p, ia), *b = entry_at(p, ib);
	int c = strcmp(a->path, b->path); /* C strcmp compares as unsigned char: bytewise */

	if (!c)
		c = cmp_u64(a->ino, b->ino);
	return c ? c : cmp_u64(ia, ib);
}

void sweep__plan_defer_locate(struct sweep_plan *p, bool on)
{
	if (p)
		p->defer = on;
}

bool sweep__plan_cached(const struct sweep_plan *p)
{
	return p && p->cached;
}

bool sweep__plan_warm(const struct sweep_plan *p)
{
	return p && p->warm;
}

/*
 * Open, (fstat,) FIEMAP and close one pending entry: what add_located does at
 * once for the others. With cached, also whether the file's data is all in
 * the page cache (false when that cannot be told).
 */
static void locate_one(struct sweep_plan *p, struct sweep_plan_entry *e, bool *cached)
{
	int fd = open_noatime(p->roots[e->root].fd, e->path + e->rel, false, true);
	struct stat raw;
	uint64_t v;

	e->flags &= ~SWEEP__PLAN_PENDING;
	if (fd < 0)
		return; /* no location: the reader meets the same error and reports it */
	if ((e->flags & SWEEP__PLAN_UNSTATED) && fstat(fd, &raw) == 0) {
		struct sweep_stat st;
		sweep_stat_from_stat(&st, &raw);
		e->dev = st.dev;
		e->ino = st.ino;
		e->size = st.size;
		e->ctime_sec = st.ctime_sec;
		e->ctime_nsec = st.ctime_nsec;
		e->flags &= ~(SWEEP__PLAN_UNSTATED | SWEEP_PLAN_UNSIZED);
	}
	if (sweep_extent_first(fd, &v) == 0)
		e->phys = v;
	if (cached)
		*cached = sweep__data_cached(fd, e->size) == 1;
	sweep__plan_count(SWEEP__BY_FIEMAP);
	close(fd);
}

struct locator {
	struct sweep_plan *p;
	size_t next;  /* the first entry index of the next chunk, shared by the threads */
	size_t chunk; /* entries taken at once */
};

/*
 * Each thread takes a run of neighbouring entries (in walk order: one
 * directory's files, by inode) rather than the next entry: on xfs every
 * lookup in a directory and every read of an inode cluster takes that
 * buffer's lock, even to read, so threads working side by side in one
 * directory queued on the same locks; the 1M-file tree as uid 65534 took
 * 56 s of system time on 4 threads against 21 s on one.
 */
static void *locate_worker(void *arg)
{
	struct locator *l = arg;
	size_t i;

	while ((i = __atomic_fetch_add(&l->next, l->chunk, __ATOMIC_RELAXED)) < l->p->count) {
		size_t end = i + l->chunk < l->p->count ? i + l->chunk : l->p->count;
		for (; i < end; i++) {
			struct sweep_plan_entry *e = entry_at(l->p, (uint32_t)i);
			if (e->flags & SWEEP__PLAN_PENDING)
				locate_one(l->p, e, NULL);
		}
	}
	return NULL;
}

/* Threads for locate_pending: SWEEP_LOCATE_THREADS, else twice the CPUs (the opens wait for inode reads), 2..8. */
static unsigned locate_threads(size_t pending)
{
	const char *env = getenv("SWEEP_LOCATE_THREADS");
	long n;

	if (env && *env) {
		n = strtol(env, NULL, 10);
	} else {
		n = sysconf(_SC_NPROCESSORS_ONLN);
		n = n > 0 ? 2 * n : 2;
		if (n < 2)
			n = 2;
	}
	if (n > 8)
		n = 8;
	if (n < 1 || pending < 64)
		n = 1; /* a few files: threads cost more than they save */
	return (unsigned)n;
}

/*
 * The pending entries (only those the walk left to it: only_deep) by a raw
 * sweep where it may run (plan_deep.c); what it cannot locate stays pending
 * for locate_pending.
 */
static void locate_deep(struct sweep_plan *p, bool only_deep)
{
	struct sweep_plan_entry **v = malloc(p->npending * sizeof(*v));
	size_t n = 0;

	for (size_t i = 0; v && i < p->count && n < p->npending; i++) {
		struct sweep_plan_entry *e = entry_at(p, (uint32_t)i);
		if ((e->flags & SWEEP__PLAN_PENDING) && (!only_deep || (e->flags & SWEEP__PLAN_DEEP)))
			v[n++] = e;
	}
	/* Only where the device's profile lets the plan read it raw (SWEEP_METASCAN=off: nowhere). */
	const struct plan_dev *d = v && n ? dev_find(p, p->roots[v[0]->root].dev) : NULL;
	if (!d || !(d->prof.metascan & SWEEP_PROFILE_META_HINTS)) {
		free(v);
		return;
	}
	size_t located = sweep__plan_deep_locate(&p->deep, p->roots[v[0]->root].fd, v, n);
	p->npending -= located < p->npending ? located : p->npending;
	free(v);
}

/*
 * Locate every pending entry of the batch. Each open is a lookup and, for an
 * inode not in memory yet, an inode read: the per-file kernel work that made
 * planning without device access cost twice a find. Done by several threads,
 * it overlaps with itself across CPUs and keeps several inode reads in flight.
 * Each thread writes only the entries it took; the plan is not touched
 * otherwise until they are joined.
 */
static void locate_pending(struct sweep_plan *p)
{
	pthread_t tid[8];
	unsigned n = locate_threads(p->npending), started = 0;
	/* Two runs per thread: apart from each other, with some balance left for the ones that find inodes cached. */
	size_t chunk = p->count / (2 * n);
	struct locator l = { .p = p, .next = 0, .chunk = chunk > 32 ? chunk : 32 };

	while (started + 1 < n && sweep__thread_start(&tid[started], locate_worker, &l) == 0)
		started++;
	locate_worker(&l); /* this thread takes its share too; alone, it does them all */
	for (unsigned i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	p->npending = 0;
}

/* Files of a batch looked at to tell whether its data is in the page cache. */
#define CACHE_SAMPLE 16
/*
 * Samples that may miss in a batch still taken as cached. A warm tree on a
 * machine short of memory always has a few files partly evicted (warm
 * /usr/share, right after a full read, on a busy 24 GiB machine: 242 of
 * 50,754 files not wholly cached): one of them among the samples sent the
 * whole batch down the cold path, an open and FIEMAP of every file and the
 * prefetch thread opening each again (sweep-cp 1.37x cp -a's CPU).
 */
#define CACHE_MISSES_OK 1

/*
 * Whether e's data is all in the page cache, opened as the reader opens it
 * (false when that cannot be told). Its size goes to *size: an unstated
 * entry's (the SSD class's walk leaves sizes to the reader) from fstat.
 */
static bool probe_cached(const struct sweep_plan *p, const struct sweep_plan_entry *e, uint64_t *size)
{
	int fd = sweep__plan_open_entry(p, e, O_RDONLY | O_NONBLOCK | O_NOATIME);
	struct stat st;
	bool in = false;

	*size = e->size;
	if (fd == -EPERM) /* O_NOATIME on a file not ours */
		fd = sweep__plan_open_entry(p, e, O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		return false;
	if (!(e->flags & SWEEP__PLAN_UNSTATED))
		in = sweep__data_cached(fd, e->size) == 1;
	else if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		*size = (uint64_t)st.st_size;
		in = sweep__data_cached(fd, *size) == 1;
	}
	close(fd);
	return in;
}

/*
 * Up to CACHE_SAMPLE files with data, one from each stretch of the batch:
 * whether their data is in the page cache. With locate, pending files,
 * located as the threads would locate them (their indexes go to tried[]);
 * without, files of known size, only opened and asked.
 */
static bool sample_cached(struct sweep_plan *p, bool locate, uint32_t *tried, size_t *ret_ntried)
{
	size_t ntried = 0, seen = 0, missed = 0;

	for (size_t k = 0; k < CACHE_SAMPLE && ntried < 2 * CACHE_SAMPLE; k++) {
		size_t end = (k + 1) * p->count / CACHE_SAMPLE;
		for (size_t i = k * p->count / CACHE_SAMPLE; i < end && ntried < 2 * CACHE_SAMPLE; i++) {
			struct sweep_plan_entry *e = entry_at(p, (uint32_t)i);
			bool cached = false;
			uint64_t size;

			/* Only a file with data says anything (an unstated one's size is known once it is opened). */
			if ((locate && !(e->flags & SWEEP__PLAN_PENDING)) || (e->size == 0 && !(e->flags & SWEEP__PLAN_UNSTATED)))
				continue;
			if (locate) {
				tried[ntried] = (uint32_t)i;
				locate_one(p, e, &cached);
				size = e->size;
			} else {
				cached = probe_cached(p, e, &size);
			}
			ntried++;
			if (size == 0)
				continue;
			if (!cached && ++missed > CACHE_MISSES_OK)
				goto out;
			seen += cached;
			break;
		}
	}
out:
	if (ret_ntried)
		*ret_ntried = ntried;
	return missed <= CACHE_MISSES_OK && seen && missed < seen;
}

/*
 * SWEEP_PLAN_CACHE_CHECK: whether the batch's data is already in the page
 * cache, where physical order saves nothing and locating every file (open,
 * FIEMAP, close) is most of what the plan costs (warm /usr/share: sweep-tar
 * at 1.2-1.3x GNU tar's CPU time). Up to CACHE_SAMPLE pending files with
 * data, one from each stretch of the batch, are located as the threads
 * would locate them and asked with cachestat(2) on the same descriptor. The
 * second one not wholly cached (CACHE_MISSES_OK) ends it: a cold batch pays
 * two more system calls and keeps every location found, so its plan is the
 * one it would have had. Cached: the rest are not located, and the few that
 * were lose their location, so the whole batch is in inode order alike.
 */
static bool batch_cached(struct sweep_plan *p)
{
	uint32_t tried[2 * CACHE_SAMPLE];
	size_t ntried;

	if (!sample_cached(p, true, tried, &ntried))
		return false;
	for (size_t i = 0; i < p->count; i++)
		entry_at(p, (uint32_t)i)->flags &= ~(SWEEP__PLAN_PENDING | SWEEP__PLAN_DEEP);
	for (size_t i = 0; i < ntried; i++)
		entry_at(p, tried[i])->phys = SWEEP_NO_PHYS;
	return true;
}

/*
 * An open file on device dev for its map: one of the batch's files there
 * (as the reader would open it), else a root on it. -1 when none opens.
 */
static int open_on(struct sweep_plan *p, uint64_t dev)
{
	unsigned tries = 0;

	for (size_t i = 0; i < p->count && tries < 8; i++) {
		const struct sweep_plan_entry *e = entry_at(p, (uint32_t)i);
		struct stat st;
		if (e->dev != dev)
			continue;
		tries++;
		int fd = sweep__plan_open_entry(p, e, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd >= 0 && fstat(fd, &st) == 0 && (uint64_t)st.st_dev == dev)
			return fd;
		if (fd >= 0)
			close(fd);
	}
	for (uint32_t r = 0; r < p->nroots; r++)
		if (p->roots[r].dev == dev)
			return dup(p->roots[r].fd);
	return -1;
}

/* The map of d's filesystem (made the first time), NULL where none could be made. */
static const struct sweep__devmap *dev_map(struct sweep_plan *p, const struct plan_dev *d)
{
	bool known;
	const struct sweep__devmap *m = sweep__grouping_map(p->grouping, d->dev, -1, &known);
	if (known)
		return m;
	int fd = open_on(p, d->dev);
	m = sweep__grouping_map(p->grouping, d->dev, fd, &known);
	if (fd >= 0)
		close(fd);
	return m;
}

/*
 * Where each entry sorts (plan_group.h): on a device in physical order, the
 * spindle and offset its first byte maps to (unknown: after the located
 * files of the filesystem's first spindle, by inode); otherwise the
 * device's files together in the group of its first spindle, by inode or
 * as added.
 */
static int sort_keys(struct sweep_plan *p, struct sweep__sort_key *keys)
{
	const uint64_t dev_mark = 1ull << 63; /* above every spindle id: a device's own run */
	const struct sweep__devmap **maps = calloc(p->ndevs ? p->ndevs : 1, sizeof(*maps));
	enum sweep_order *orders = malloc((p->ndevs ? p->ndevs : 1) * sizeof(*orders));
	size_t last = 0;

	if (!maps || !orders) {
		free(maps);
		free(orders);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->ndevs; i++) {
		maps[i] = dev_map(p, &p->devs[i]);
		orders[i] = sort_order(p, p->devs[i].dev);
	}
	for (size_t i = 0; i < p->count; i++) {
		const struct sweep_plan_entry *e = entry_at(p, (uint32_t)i);
		struct sweep__sort_key *k = &keys[i];
		if (last >= p->ndevs || p->devs[last].dev != e->dev)
			for (last = 0; last < p->ndevs && p->devs[last].dev != e->dev; last++)
				;
		const struct sweep__devmap *m = last < p->ndevs ? maps[last] : NULL;
		enum sweep_order o = last < p->ndevs ? orders[last] : SWEEP_ORDER_INODE;
		uint32_t home = m ? sweep__devmap_home(m) : UINT32_MAX;

		*k = (struct sweep__sort_key){ .spindle = home, .k1 = dev_mark | last, .idx = (uint32_t)i };
		switch (o) {
		case SWEEP_ORDER_PHYSICAL:
			k->k3 = e->ino;
			if (!m) {
				k->k2 = e->phys;
			} else if (e->phys == SWEEP_NO_PHYS) {
				k->k1 = home;
				k->k2 = SWEEP_NO_PHYS;
			} else {
				sweep__devmap_locate(m, e->phys, &k->spindle, &k->k2);
				k->k1 = k->spindle;
			}
			break;
		case SWEEP_ORDER_INODE:
			k->k2 = e->ino;
			break;
		default:
			k->k2 = i; /* as added */
			break;
		}
		/* A device without a map: a group of its own after the mapped ones, by device number. */
		if (k->spindle == UINT32_MAX) {
			k->k0 = dev_mark | e->dev;
			k->k1 = dev_mark | last;
		}
	}
	free(maps);
	free(orders);
	return 0;
}

/* Sort by device groups (plan_group.c); -errno leaves the batch as added. */
static int group_sort(struct sweep_plan *p)
{
	if (!p->grouping && !(p->grouping = sweep__grouping_new()))
		return -ENOMEM;
	struct sweep__sort_key *keys = malloc((p->count ? p->count : 1) * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	int r = sort_keys(p, keys);
	if (r == 0)
		r = sweep__grouping_sort(p->grouping, keys, p->count, p->idx);
	free(keys);
	p->grouped = r == 0;
	return r;
}

/* Whether the batch stays as added: every device's files are (NONE) and there is one device, or the caller says so. */
static bool as_added(const struct sweep_plan *p)
{
	if (p->opts.order != SWEEP_ORDER_AUTO)
		return p->opts.order == SWEEP_ORDER_NONE;
	if (p->ndevs > 1)
		return false; /* several devices: grouped, each device's files still as added */
	for (size_t i = 0; i < p->ndevs; i++)
		if (p->devs[i].order != SWEEP_ORDER_NONE)
			return false;
	return true;
}

SWEEP_EXPORT int sweep_plan_sort(struct sweep_plan *p)
{
	if (!p)
		return -EINVAL;
	p->cached = false;
	p->warm = false;
	/*
	 * What the walk left to the raw sweep (its DEEP and lazy entries) is
	 * located first, as if the walk had: the cache check is for the files
	 * that would cost an open each, and a batch of hinted files keeps its
	 * physical order, warm or cold, as root or not.
	 */
	if (p->npending)
		locate_deep(p, true);
	if (p->npending && (p->opts.flags & SWEEP_PLAN_CACHE_CHECK) && !(p->opts.flags & SWEEP_PLAN_LOCATE))
		p->cached = batch_cached(p);
	/*
	 * Nothing to locate (the SSD class, or every file hinted): the order
	 * stays, but a warm batch is read through a small ring (the reader's
	 * setup), so that its data is still in the CPU's caches when the caller
	 * writes it on. The same sample, opened and asked only.
	 */
	else if (!p->npending && (p->opts.flags & SWEEP_PLAN_CACHE_CHECK))
		p->warm = sample_cached(p, false, NULL, NULL);
	p->warm = p->warm || p->cached;
	if (p->cached)
		p->npending = 0;
	if (p->npending)
		locate_deep(p, false);
	if (p->npending)
		locate_pending(p);
	p->grouped = false;
	for (size_t i = 0; i < p->count; i++)
		p->idx[i] = (uint32_t)i;
	if (as_added(p) || p->count == 0)
		return 0;
	if (p->opts.order == SWEEP_ORDER_NAME) {
		qsort_r(p->idx, p->count, sizeof(*p->idx), cmp_names, p);
		return 0;
	}
	/* Out of memory for the keys: as added, readable all the same. */
	if (group_sort(p) < 0)
		for (size_t i = 0; i < p->count; i++)
			p->idx[i] = (uint32_t)i;
	return 0;
}

size_t sweep__plan_groups(const struct sweep_plan *p, const struct sweep__plan_group **ret)
{
	const struct sweep__plan_group *g = NULL;
	size_t n;

	if (!p || p->count == 0) {
		*ret = NULL;
		return 0;
	}
	if (p->grouped && (n = sweep__grouping_groups(p->grouping, &g)) > 0) {
		*ret = g;
		return n;
	}
	/* Not grouped: the whole batch, one reader (const: a view the plan owns). */
	struct sweep_plan *w = (struct sweep_plan *)p;
	w->whole = (struct sweep__plan_group){ .first = 0, .end = p->count, .spindle = UINT32_MAX, .members = 1 };
	*ret = &w->whole;
	return 1;
}

const char *sweep__plan_group_name(const struct sweep_plan *p, const struct sweep__plan_group *g)
{
	if (!p || !g || g->spindle == UINT32_MAX || !p->grouping)
		return "";
	return sweep__spindle_name(sweep__grouping_spindles(p->grouping), g->spindle);
}

SWEEP_EXPORT size_t sweep_plan_count(const struct sweep_plan *p)
{
	return p ? p->count : 0;
}

SWEEP_EXPORT const struct sweep_plan_entry *sweep_plan_entry(const struct sweep_plan *p, size_t i)
{
	if (!p || i >= p->count)
		return NULL;
	return entry_at(p, p->idx[i]);
}

SWEEP_EXPORT void sweep_plan_clear(struct sweep_plan *p)
{
	if (!p)
		return;
	p->count = 0;
	p->npending = 0;
	p->cached = false;
	p->warm = false;
	p->grouped = false;
	sweep__grouping_clear(p->grouping);
	arena_reset(&p->arena);
	roots_close(p);
}

SWEEP_EXPORT enum sweep_order sweep_plan_order(const struct sweep_plan *p)
{
	if (!p)
		return SWEEP_ORDER_AUTO;
	/* AUTO: the first device's, once a file was added. */
	return p->opts.order != SWEEP_ORDER_AUTO || !p->ndevs ? p->opts.order : p->devs[0].order;
}

/* A path as it stands, longer than PATH_MAX: one directory at a time, following (the path is the caller's). */
static int open_long_path(const char *path, int flags)
{
	char *copy = strdup(path), *comp, *slash;
	int dirfd = AT_FDCWD, fd, err;

	if (!copy)
		return -ENOMEM;
	comp = copy;
	if (*comp == '/') {
		dirfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dirfd < 0)
			goto fail;
		while (*comp == '/')
			comp++;
	}
	while ((slash = strchr(comp, '/'))) {
		*slash = '\0';
		if (*comp) {
			int nfd = openat(dirfd, comp, O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (nfd < 0)
				goto fail;
			if (dirfd >= 0)
				close(dirfd);
			dirfd = nfd;
		}
		comp = slash + 1;
	}
	fd = openat(dirfd, *comp ? comp : ".", flags);
	if (fd < 0)
		goto fail;
	if (dirfd >= 0)
		close(dirfd);
	free(copy);
	return fd;
fail:
	err = -errno;
	if (dirfd >= 0)
		close(dirfd);
	free(copy);
	return err;
}

bool sweep__plan_entry_is(const struct sweep_plan_entry *e, const struct sweep_stat *st)
{
	return S_ISREG(st->mode) && (!e->ino || (st->ino == e->ino && st->dev == e->dev));
}

int sweep__plan_open_entry(const struct sweep_plan *p, const struct sweep_plan_entry *e, int flags)
{
	if (e->root != SWEEP_PLAN_NO_ROOT) {
		int rfd = sweep_plan_root_fd(p, e->root);
		return rfd < 0 ? -EBADF : sweep__open_beneath(rfd, e->path + e->rel, flags, 0);
	}
	if (!(e->flags & SWEEP_PLAN_FOLLOW))
		flags |= O_NOFOLLOW;
	int fd = openat(AT_FDCWD, e->path, flags | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	return errno == ENAMETOOLONG ? open_long_path(e->path, flags | O_CLOEXEC) : -errno;
}
