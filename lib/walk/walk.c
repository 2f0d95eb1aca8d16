/* SPDX-License-Identifier: MIT */
/*
 * walk: the directory traversal.
 *
 * C-SCAN mode (seed: userspace-io-scheduling-tar §3, Listing 1): a directory
 * is read whole with getdents64, sorted by inode, its entries stat'ed in
 * batches (io_uring statx, statx_batch.c) just before they are handed to the
 * caller, and its subdirectories wait in the C-SCAN queue (walk_queue.c)
 * keyed by inode -- or, with order PHYSICAL (AUTO's choice where the
 * filesystem gives block locations), by the directory's first block. The
 * next directory read is the next key above the current one, wrapping once
 * per sweep, so inode tables and directory blocks are visited in one
 * direction.
 *
 * Depth-first mode (order NONE or NAME): what tar and cp do, for filesystems
 * where sorting does not pay or for callers that want name order.
 *
 * A pending directory never holds a file descriptor (a wide tree would
 * exhaust them): it keeps its name and a reference to its parent, enough to
 * reopen it (walk_open.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "walk_impl.h"

#define DBUF_SIZE (64 * 1024)
/*
 * Depth-first mode keeps ancestors' fds open up to this depth (and a
 * sixteenth of RLIMIT_NOFILE), then reopens on the way back.
 */
#define DFS_OPEN_FDS 48

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static int report(struct walk *w, const char *path, enum sweep_walk_op op, int err)
{
	w->errors++;
	if (w->o->on_error) {
		struct sweep_walk_error e = { .path = path, .op = op, .err = err };
		int r = w->o->on_error(&e, w->o->ctx);
		if (r < 0 && !w->stop)
			w->stop = r;
	}
	return w->stop;
}

static int fatal(struct walk *w, int err)
{
	if (!w->stop)
		w->stop = err;
	return err;
}

/* ---- reading a directory ---- */

static int listing_add(struct listing *ls, const struct linux_dirent64 *de, uint32_t index)
{
	size_t nl = strlen(de->d_name);
	if (sweep__grow(&ls->v, &ls->cap, ls->n + 1, sizeof(*ls->v), 64) < 0 ||
	    sweep__grow(&ls->names, &ls->ncap, ls->nlen + nl + 1, 1, 1024) < 0)
		return -ENOMEM;
	struct dent *e = &ls->v[ls->n++];
	e->ino = de->d_ino;
	e->name_off = ls->nlen;
	e->name_len = (uint32_t)nl;
	e->index = index;
	e->type = de->d_type;
	memcpy(ls->names + ls->nlen, de->d_name, nl + 1);
	ls->nlen += nl + 1;
	return 0;
}

void sweep__walk_frame_free(struct frame *f)
{
	free(f->ls.v);
	free(f->ls.names);
	free(f->st);
	free(f->err);
	free(f->hints);
	free(f->hint_inos);
	memset(f, 0, sizeof(*f));
}

int sweep__walk_scratch_init(struct walk_scratch *s, const struct walk *w, enum sweep_backend backend, size_t cap)
{
	*s = (struct walk_scratch){ .cap = cap };
	s->sb = sweep__stat_batch_new(backend, (unsigned)w->batch, w->o->backend == SWEEP_BACKEND_URING,
				      w->order == SWEEP_ORDER_PHYSICAL);
	s->reqs = calloc(cap, sizeof(*s->reqs));
	s->idx = calloc(cap, sizeof(*s->idx));
	s->dbuf = malloc(DBUF_SIZE);
	if (!s->sb || !s->reqs || !s->idx || !s->dbuf) {
		sweep__walk_scratch_fini(s);
		return -ENOMEM;
	}
	return 0;
}

void sweep__walk_scratch_fini(struct walk_scratch *s)
{
	sweep__stat_batch_free(s->sb);
	free(s->reqs);
	free(s->idx);
	free(s->dbuf);
	memset(s, 0, sizeof(*s));
}

/*
 * Read the whole directory with getdents64 through dbuf (DBUF_SIZE bytes).
 * -ENOMEM when the listing cannot grow; a failure of getdents64 part way is
 * *ret_err (what was read is kept), for the caller to report. Touches nothing
 * of the walk's: the read-ahead threads call it too (walk_ahead.c).
 */
static int getdents_all(int fd, char *dbuf, struct listing *ls, int *ret_err)
{
	uint32_t index = 0;
	ls->n = 0;
	ls->nlen = 0;
	*ret_err = 0;
	for (;;) {
		long n = syscall(SYS_getdents64, fd, dbuf, DBUF_SIZE);
		if (n == 0)
			return 0;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			*ret_err = -errno;
			return 0;
		}
		for (long off = 0; off < n;) {
			const struct linux_dirent64 *de = (const void *)(dbuf + off);
			off += de->d_reclen;
			const char *nm = de->d_name;
			if (nm[0] == '.' && (nm[1] == '\0' || (nm[1] == '.' && nm[2] == '\0')))
				continue;
			if (listing_add(ls, de, index++) < 0)
				return -ENOMEM;
		}
	}
}

static const char *dent_name(const struct listing *ls, const struct dent *e)
{
	return ls->names + e->name_off;
}

static int cmp_ino(const void *a, const void *b)
{
	const struct dent *x = a, *y = b;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int cmp_name(const void *a, const void *b, void *arg)
{
	const struct listing *ls = arg;
	/* strcmp compares as unsigned char: bytewise, like GNU tar --sort=name. */
	return strcmp(dent_name(ls, a), dent_name(ls, b));
}

static int cmp_idx_ino(const void *a, const void *b, void *arg)
{
	const struct listing *ls = arg;
	return cmp_ino(&ls->v[*(const size_t *)a], &ls->v[*(const size_t *)b]);
}

/* Whether listing entry i of f is stat'ed. Asked when its batch is stat'ed and again when it is handed out: the same answer. */
static bool needs_stat(const struct walk *w, const struct frame *f, size_t i)
{
	const struct dent *e = &f->ls.v[i];

	if (f->hint_files && e->type == DT_REG && sweep__walk_meta_sizes(f, i))
		return false;
	if (w->flags & SWEEP_WALK_NO_STAT_FILES)
		return e->type != DT_REG;
	if (!(w->flags & SWEEP_WALK_NO_STAT))
		return true;
	/* Directories are always stat'ed (XDEV, loops, ids); unknown types must be. */
	return e->type == DT_DIR || e->type == DT_UNKNOWN || (e->type == DT_LNK && (w->flags & SWEEP_WALK_FOLLOW));
}

/* Small listings (most directories): an insertion sort, with no call per comparison. */
#define INSERTION_MAX 24

/* v[0..n) by inode, stable (ties keep their order): an insertion sort. */
static void insertion_by_inode(struct dent *v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct dent e = v[i];
		size_t j = i;
		for (; j > 0 && v[j - 1].ino > e.ino; j--)
			v[j] = v[j - 1];
		v[j] = e;
	}
}

/*
 * v[0..n) by inode, stable, through tmp (room for n): runs of INSERTION_MAX
 * sorted in place, then merged pairwise. The middle sizes, where qsort's
 * call per comparison was most of the sorting (warm /usr/share: glibc
 * msort 1.4% of sweep-du's CPU), and a radix sort's passes do not pay yet.
 * Returns the buffer that holds the result (v or tmp).
 */
static struct dent *merge_by_inode(struct dent *v, struct dent *tmp, size_t n)
{
	for (size_t i = 0; i < n; i += INSERTION_MAX)
		insertion_by_inode(v + i, n - i < INSERTION_MAX ? n - i : INSERTION_MAX);
	struct dent *src = v, *dst = tmp;
	for (size_t w = INSERTION_MAX; w < n; w *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			size_t a = lo, b = mid, o = lo;
			while (a < mid && b < hi)
				dst[o++] = src[b].ino < src[a].ino ? src[b++] : src[a++];
			while (a < mid)
				dst[o++] = src[a++];
			while (b < hi)
				dst[o++] = src[b++];
		}
		struct dent *t = src;
		src = dst;
		dst = t;
	}
	return src;
}

/*
 * The listing by inode, ties in getdents order (the index each entry got
 * there, which is also its place in the listing now): an insertion sort for
 * a few entries, a merge sort for some, a radix sort for many, qsort
 * without memory.
 */
static void sort_by_inode(struct listing *ls)
{
	size_t n = ls->n;

	if (n <= INSERTION_MAX) {
		insertion_by_inode(ls->v, n);
		return;
	}
	if (!sweep__key_sort_pays(n)) {
		struct dent *tmp = malloc(n * sizeof(*tmp));
		if (tmp) {
			/* Copied back, so the listing keeps its room for the next directory. */
			if (merge_by_inode(ls->v, tmp, n) == tmp)
				memcpy(ls->v, tmp, n * sizeof(*tmp));
			free(tmp);
			return;
		}
	} else {
		struct sweep__key_rec *k = malloc(n * sizeof(*k));
		struct dent *out = malloc(n * sizeof(*out));
		if (k && out) {
			for (size_t i = 0; i < n; i++)
				k[i] = (struct sweep__key_rec){ .key = ls->v[i].ino, .idx = (uint32_t)i };
			if (sweep__key_sort(k, n) == 0) {
				for (size_t i = 0; i < n; i++)
					out[i] = ls->v[k[i].idx];
				free(ls->v);
				ls->v = out;
				ls->cap = n;
				free(k);
				return;
			}
		}
		free(k);
		free(out);
	}
	qsort(ls->v, n, sizeof(*ls->v), cmp_ino);
}

/* Put the listing in emission order: inode (C-SCAN), name, or as read. */
static void sort_listing(const struct walk *w, struct listing *ls)
{
	if (ls->n < 2)
		return; /* also keeps qsort away from a NULL array (UBSan) */
	if (w->order == SWEEP_ORDER_NAME)
		qsort_r(ls->v, ls->n, sizeof(*ls->v), cmp_name, ls);
	else if (w->order != SWEEP_ORDER_NONE)
		sort_by_inode(ls);
}

/* f->st and f->err: room for n entries. */
static int frame_stat_room(struct frame *f, size_t n)
{
	if (f->st_cap >= n)
		return 0;
	struct stat *st = realloc(f->st, n * sizeof(*st));
	if (!st)
		return -ENOMEM;
	f->st = st;
	int *err = realloc(f->err, n * sizeof(*err));
	if (!err)
		return -ENOMEM;
	f->err = err;
	f->st_cap = n;
	return 0;
}

/*
 * Stat listing entries [from, from + n) (n <= f->st_cap, and <= the
 * scratch's batch size) into f->st/f->err, which then describe entries
 * [from, from + n): in inode order, through the scratch's stat batch. Only
 * reads the walk's settings, so the read-ahead threads call it too, each
 * with its own scratch.
 */
int sweep__walk_stat_entries(const struct walk *w, struct frame *f, size_t from, size_t n, struct walk_scratch *s)
{
	struct listing *ls = &f->ls;
	size_t m = 0;
	f->chunk = from;
	f->chunk_n = n;
	for (size_t i = from; i < from + n; i++) {
		const struct dent *e = &ls->v[i];
		f->err[i - from] = 0;
		if (needs_stat(w, f, i)) {
			if (!sweep__walk_table_stat(w, f, i, &f->st[i - from]))
				s->idx[m++] = i;
		} else {
			struct stat *st = &f->st[i - from];
			memset(st, 0, sizeof(*st));
			st->st_dev = (dev_t)f->dir->dev; /* a bind-mounted file would differ: the reader's identity check says so */
			st->st_ino = e->ino;
			st->st_mode = DTTOIF(e->type);
		}
	}
	/* Name order is for the caller; the disk still prefers inode order. */
	if (w->order == SWEEP_ORDER_NAME)
		qsort_r(s->idx, m, sizeof(*s->idx), cmp_idx_ino, ls);
	int flags = (w->flags & SWEEP_WALK_FOLLOW) ? 0 : AT_SYMLINK_NOFOLLOW;
	for (size_t k = 0; k < m; k++) {
		size_t i = s->idx[k];
		s->reqs[k] = (struct sweep__stat_req){
			.name = dent_name(ls, &ls->v[i]), .flags = flags, .st = &f->st[i - from]
		};
	}
	int r = sweep__stat_batch_run(s->sb, f->fd, s->reqs, m);
	if (r < 0)
		return r;
	f->chunk_cached = m > 0 && !f->listing_read && sweep__stat_batch_cached(s->sb);
	for (size_t k = 0; k < m; k++) {
		size_t j = s->idx[k] - from;
		int err = s->reqs[k].err;
		/* A dangling symlink under FOLLOW is reported as the link itself (as find -L does). */
		if (err == -ENOENT && flags == 0)
			err = fstatat(f->fd, s->reqs[k].name, &f->st[j], AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
		f->err[j] = err;
	}
	return 0;
}

/* Stat the next batch of entries from f->pos, in inode order within the batch. */
static int load_chunk(struct walk *w, struct frame *f)
{
	if (frame_stat_room(f, w->batch) < 0)
		return fatal(w, -ENOMEM);
	size_t n = f->ls.n - f->pos < w->batch ? f->ls.n - f->pos : w->batch;
	/* The inode-table blocks of these entries (and more) in one sweep, before statx asks for them. */
	sweep__walk_meta_prepare(w, f, f->pos, n);
	int r = sweep__walk_stat_entries(w, f, f->pos, n, &w->scr);
	return r < 0 ? fatal(w, r) : 0;
}

/* ---- handing entries out ---- */

static const struct sweep_fsinfo *fs_for(struct walk *w, int dirfd, const char *at_name, const struct stat *st,
					 const struct sweep_fsinfo *parent_fs, int follow)
{
	if (parent_fs && parent_fs->dev == (uint64_t)st->st_dev)
		return parent_fs;
	const struct sweep_fsinfo *fi = NULL;
	int fd = openat(dirfd, at_name, O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
	if (fd >= 0) {
		if (sweep_fscache_get(w->fsc, (uint64_t)st->st_dev, fd, &fi) < 0)
			fi = NULL;
		close(fd);
	}
	return fi ? fi : parent_fs;
}

static bool is_loop(const struct dnode *d, const struct stat *st)
{
	for (; d; d = d->parent)
		if (d->dev == (uint64_t)st->st_dev && d->ino == (uint64_t)st->st_ino)
			return true;
	return false;
}

static const char *last_component(const char *path, size_t len)
{
	while (len > 1 && path[len - 1] == '/')
		len--;
	while (len > 0 && path[len - 1] != '/')
		len--;
	return path + len;
}

/*
 * Whether the subdirectories of a directory on fs are keyed by where their
 * blocks lie: under AUTO as that device's profile says (a tree may span
 * devices), else as the caller said.
 */
bool sweep__walk_keys_by_block(const struct walk *w, const struct sweep_fsinfo *fs)
{
	return (w->auto_order && fs ? fs->profile.walk_order : w->order) == SWEEP_ORDER_PHYSICAL;
}

/* Directories opened for FIEMAP to key them, over the process (tests check when the walk skips it). */
static uint64_t dir_fiemaps;

uint64_t sweep__walk_dir_fiemaps(void)
{
	return __atomic_load_n(&dir_fiemaps, __ATOMIC_RELAXED);
}

static int emit(struct walk *w, const struct sweep_entry *e)
{
	if (!w->o->on_entry)
		return 0;
	int r = w->o->on_entry(e, w->o->ctx);
	if (r < 0 && !w->stop)
		w->stop = r;
	return r;
}

/*
 * The directory's C-SCAN key. By inode, the seed's choice: the parent's
 * stat batch has just read the inode, so what reading the directory costs
 * is its blocks. With order PHYSICAL the key is where those blocks are
 * (FIEMAP on the directory, as ext4 allows); a directory without a
 * location (inline in its inode) stays next to its parent. xfs has no FIEMAP
 * for directories: after a cold inode sweep the ones that have blocks are
 * read in inode order as the sweep meets them, and the walk follows with
 * inode keys (sweep__walk_meta_dir_block); otherwise it keeps inode keys
 * too (an open for GETBMAPX would read the block ahead): its inode numbers encode
 * where the inode lies, and before the sweep the walk reads each
 * directory's inodes right after its blocks. (Keys from GETBMAPX were
 * tried: on the aged 115k-file xfs image the hdd7200 model of sweep-du
 * took 5.1 s with them against 3.6 s with inode keys.)
 */
static uint64_t dir_key(struct walk *w, struct dnode *c, int dirfd, const char *name, uint64_t parent_key,
			const struct frame *f, size_t li, const struct stat *st)
{
	uint64_t key;

	if (!sweep__walk_keys_by_block(w, c->fs))
		return c->ino;
	/* The raw inode's first block, as FIEMAP would give it, without opening the directory. */
	if (f && sweep__walk_meta_dir_key(w, f, li, st, &key) == 0)
		return key;
	int r = sweep__walk_meta_dir_block(w, c->dev, c->ino, &key);
	if (r != -1)
		return r == 0 ? key : parent_key;
	if (w->nophys_dev_valid && w->nophys_dev == c->dev)
		return c->ino;
	/*
	 * Neither its directory's listing nor the batch that stat'ed it read
	 * the disk (sweep__disk_reads, not a clock): the tree is warm, where
	 * its blocks lie matters little, and it is keyed by inode instead of
	 * being opened for FIEMAP (warm /usr/share, HDD class: 3,400 opens and
	 * FIEMAPs, about 5% of sweep-du's CPU). On
	 * xfs, where FIEMAP has nothing for directories, that is the key anyway
	 * (also after the inode sweep of a whole filesystem, which leaves every
	 * inode cached); on ext4 as root the raw inode gave the key above.
	 */
	if (f && f->chunk_cached)
		return c->ino;
	int fd = openat(dirfd, name, sweep__walk_open_flags(c));
	if (fd < 0)
		return parent_key;
	uint64_t phys;
	r = sweep_extent_first(fd, &phys);
	__atomic_fetch_add(&dir_fiemaps, 1, __ATOMIC_RELAXED);
	/* Kept for its visit, which then needs no open of its own (a few at a time). */
	if (r == 0 && c->kept_fd < 0 && w->kept_fds < w->kept_max) {
		c->kept_fd = fd;
		w->kept_fds++;
	} else {
		close(fd);
	}
	if (r == 0)
		return phys;
	if (r == -EOPNOTSUPP) {
		/* This filesystem gives no locations: stop asking, use inodes. */
		w->nophys_dev = c->dev;
		w->nophys_dev_valid = true;
		return c->ino;
	}
	return parent_key;
}

static int enqueue(struct walk *w, struct dnode *c, int dirfd, const char *name, uint64_t parent_key,
		   const struct frame *f, size_t li, const struct stat *st)
{
	c->key = dir_key(w, c, dirfd, name, parent_key, f, li, st);
	if (sweep__cscan_push(w->q, c->key, c) < 0) {
		sweep__walk_dnode_unref(c);
		return fatal(w, -ENOMEM);
	}
	sweep__walk_meta_queued(w, c);
	return 0;
}

/*
 * Hand out the frame's entries from f->pos. In C-SCAN mode every
 * subdirectory goes to the queue and all entries are handed out; in
 * depth-first mode it stops at the first subdirectory to descend into and
 * returns its new node (w->path then holds the subdirectory's path).
 */
static struct dnode *frame_emit(struct walk *w, struct frame *f)
{
	struct dnode *d = f->dir;
	while (f->pos < f->ls.n && !w->stop) {
		if (f->pos >= f->chunk + f->chunk_n && load_chunk(w, f) < 0)
			return NULL;
		const struct stat *dst = &f->st[f->pos - f->chunk];
		int derr = f->err[f->pos - f->chunk];
		size_t li = f->pos;
		struct dent *de = &f->ls.v[f->pos++];
		const char *name = dent_name(&f->ls, de);
		size_t len;
		if (sweep__walk_path_join(w, f->path_len, name, de->name_len, &len) < 0) {
			fatal(w, -ENOMEM);
			return NULL;
		}
		struct sweep_entry e = {
			.path = w->path,
			.path_len = len,
			.name = w->path + len - de->name_len,
			.dirfd = f->fd,
			.at_name = name,
			.dir_id = d->id,
			.dirent_index = de->index,
			.root_index = d->root_index,
			.depth = d->depth + 1,
			.d_type = de->type,
			.stat_err = derr,
			.fs = d->fs,
			.root_fd = f->root_fd,
		};
		if (f->root_fd >= 0) {
			e.rel = w->path + f->root_len + (w->path[f->root_len] == '/');
			e.root_dev = f->root_dev;
			e.root_ino = f->root_ino;
		}
		bool descend = false;
		if (derr) {
			memset(&e.st, 0, sizeof(e.st));
			e.st.ino = de->ino;
			if (report(w, w->path, SWEEP_WALK_OP_STAT, derr) < 0)
				return NULL;
		} else {
			sweep_stat_from_stat(&e.st, dst);
			if (de->type == DT_LNK && !S_ISLNK(dst->st_mode))
				e.flags |= SWEEP_ENTRY_FOLLOWED;
			e.d_type = IFTODT(dst->st_mode);
			if (needs_stat(w, f, li) || S_ISDIR(dst->st_mode))
				e.fs = fs_for(w, f->fd, name, dst, d->fs, (w->flags & SWEEP_WALK_FOLLOW) != 0);
			if (S_ISDIR(dst->st_mode)) {
				if (is_loop(d, dst)) {
					if (report(w, w->path, SWEEP_WALK_OP_LOOP, -ELOOP) < 0)
						return NULL;
					continue;
				}
				e.id = ++w->next_id;
				descend = !(w->flags & SWEEP_WALK_XDEV) || (uint64_t)dst->st_dev == d->root_dev;
			}
		}
		/* What the plan may take from the raw inode: the entry carries it, and so does any copy of it. */
		struct sweep_entry_hint eh = { .stated = !derr && needs_stat(w, f, li), .w = w, .f = f, .i = li, .st = dst };
		if (!derr && S_ISREG(dst->st_mode))
			sweep__walk_meta_offer(w, f, li, eh.stated, dst, &eh);
		e.hint = derr ? NULL : &eh;
		int r = emit(w, &e);
		if (r < 0)
			return NULL;
		if (!descend || r == SWEEP_WALK_SKIP)
			continue;
		struct dnode *c = sweep__walk_dnode_new(d, name, de->name_len);
		if (!c) {
			fatal(w, -ENOMEM);
			return NULL;
		}
		c->id = e.id;
		c->dev = (uint64_t)dst->st_dev;
		c->ino = (uint64_t)dst->st_ino;
		c->fs = e.fs;
		c->follow = (w->flags & SWEEP_WALK_FOLLOW) && de->type == DT_LNK;
		if (!w->cscan)
			return c;
		if (enqueue(w, c, f->fd, name, d->key, f, li, dst) < 0)
			return NULL;
	}
	return NULL;
}

/*
 * Read f->fd whole into f->ls (getdents_all), noting in f->listing_read
 * whether that had to read the disk: the directory is then cold, and its
 * subdirectories are keyed by where they lie (dir_key), whatever their
 * inodes' blocks happened to be read with (inode read-ahead often brings a
 * cold directory's inodes in with its parent's).
 */
static int list_dir(const struct walk *w, struct frame *f, struct walk_scratch *s)
{
	if (!sweep__walk_keys_by_block(w, f->dir->fs)) /* no key asks */
		return getdents_all(f->fd, s->dbuf, &f->ls, &f->read_err);
	int64_t before = sweep__disk_reads_sampled();
	int r = getdents_all(f->fd, s->dbuf, &f->ls, &f->read_err);
	f->listing_read = before < 0 || sweep__disk_reads_sampled() != before;
	return r;
}

/*
 * The read-ahead threads' part of loading a directory (walk_ahead.c): read
 * f->fd whole, sort the listing, stat its first entries (up to stat_max and
 * s->cap; 0 for a directory the walk loads itself).
 * getdents64's failure is left in f->read_err for the walk to report. 0 or
 * -ENOMEM.
 */
int sweep__walk_frame_fill(const struct walk *w, struct frame *f, struct walk_scratch *s, size_t stat_max)
{
	int r = list_dir(w, f, s);
	if (r < 0)
		return r;
	sort_listing(w, &f->ls);
	/* Which files need a stat is known once the walk's thread has read their hints. */
	if (stat_max > s->cap)
		stat_max = s->cap;
	size_t n = f->hint_files ? 0 : f->ls.n < stat_max ? f->ls.n : stat_max;
	f->chunk = f->chunk_n = 0;
	if (n == 0)
		return 0;
	if (frame_stat_room(f, n > w->batch ? n : w->batch) < 0)
		return -ENOMEM;
	return sweep__walk_stat_entries(w, f, 0, n, s);
}

/* Directory d, open as fd, about to be handed out from frame f (w->path holds its path). */
static void frame_begin(struct walk *w, struct frame *f, struct dnode *d, int fd, size_t path_len)
{
	f->dir = d;
	f->fd = fd;
	f->pos = 0;
	f->path_len = path_len;
	f->root_fd = sweep__walk_root_fd(w, d);
	if (f->root_fd >= 0) {
		const struct dnode *r = d;
		while (r->parent)
			r = r->parent;
		f->root_len = r->name_len;
		f->root_dev = r->dev;
		f->root_ino = r->ino;
	}
}

/* Read directory d (open as fd, path in w->path) into frame f. */
static int frame_load(struct walk *w, struct frame *f, struct dnode *d, int fd, size_t path_len)
{
	frame_begin(w, f, d, fd, path_len);
	if (list_dir(w, f, &w->scr) < 0)
		return fatal(w, -ENOMEM);
	if (f->read_err && report(w, w->path, SWEEP_WALK_OP_READDIR, f->read_err) < 0)
		return w->stop;
	f->chunk = f->chunk_n = 0;
	sort_listing(w, &f->ls);
	f->hint_files = sweep__walk_meta_hint_files(w, d, fd);
	sweep__walk_meta_frame(w, f);
	return 0;
}

/* ---- the two traversals ---- */

/*
 * The next directory from the queue, opened and checked to be the one that
 * was listed: 1 with *ret_d (the queue's reference) and *ret_fd, 0 when the
 * queue is empty or the walk stops.
 */
static int next_dir(struct walk *w, struct dnode **ret_d, int *ret_fd)
{
	void *item;
	while (!w->stop && sweep__cscan_pop(w->q, &item, NULL)) {
		struct dnode *d = item;
		size_t len;
		/* A new generation of directories: their blocks in one sweep before the first getdents. */
		sweep__walk_meta_before_read(w, d);
		sweep__walk_meta_open_ahead(w, d);
		int fd = sweep__walk_dnode_reopen(w, d);
		if (fd >= 0 && !d->parent)
			sweep__walk_table_start(w, d, fd, false);
		if (fd < 0) {
			if (sweep__walk_path_of(w, d, &len) == 0)
				report(w, w->path, SWEEP_WALK_OP_OPENDIR, fd);
			else
				fatal(w, -ENOMEM);
			sweep__walk_dnode_unref(d);
			continue;
		}
		*ret_d = d;
		*ret_fd = fd;
		return 1;
	}
	return 0;
}

/* Hand out a loaded directory's entries, then keep it open for its subdirectories, queued with nearby keys. */
static void visit(struct walk *w, struct frame *f)
{
	frame_emit(w, f);
	sweep__walk_fdcache_put(w, f->dir, f->fd);
	sweep__walk_dnode_unref(f->dir);
	f->fd = -1;
	f->dir = NULL;
}

/*
 * With read-ahead threads (walk_ahead.c): the next directories of the queue
 * are opened here, a window of them ahead, and read and stat'ed by the
 * threads; each is handed out here once loaded, in the order it was taken
 * from the queue, so the order depends on the window's size only, never on
 * timing.
 */
static void walk_cscan_ahead(struct walk *w)
{
	struct dnode *d;
	int fd;
	struct frame *f;

	for (;;) {
		while (sweep__walk_ahead_room(w->ahead) && next_dir(w, &d, &fd) > 0) {
			if (sweep__walk_ahead_submit(w->ahead, d, fd, sweep__walk_meta_hint_files(w, d, fd)) < 0) {
				close(fd);
				sweep__walk_dnode_unref(d);
				fatal(w, -ENOMEM);
			}
		}
		if (!(f = sweep__walk_ahead_take(w->ahead, &w->scr)))
			break;
		size_t len;
		if (!w->stop && f->fill_err)
			fatal(w, f->fill_err);
		if (!w->stop && sweep__walk_path_of(w, f->dir, &len) < 0)
			fatal(w, -ENOMEM);
		if (!w->stop) {
			frame_begin(w, f, f->dir, f->fd, len);
			if (f->read_err)
				report(w, w->path, SWEEP_WALK_OP_READDIR, f->read_err);
		}
		if (!w->stop) {
			sweep__walk_meta_frame(w, f);
			visit(w, f);
		}
		/* Stopping: what was read ahead is dropped (sweep__walk_ahead_put closes and releases it). */
		sweep__walk_ahead_put(w->ahead);
	}
}

static void walk_cscan(struct walk *w)
{
	struct frame f = { 0 };
	struct dnode *d;
	int fd;
	void *item;

	if (w->ahead) {
		walk_cscan_ahead(w);
	} else {
		while (next_dir(w, &d, &fd) > 0) {
			size_t len;
			/* sweep__walk_dnode_reopen may have used w->path for an ancestor: the path again. */
			if (sweep__walk_path_of(w, d, &len) < 0 || frame_load(w, &f, d, fd, len) < 0) {
				close(fd);
				sweep__walk_dnode_unref(d);
				break;
			}
			visit(w, &f);
		}
	}
	sweep__walk_frame_free(&f);
	/* Stopped early: release whatever is still queued. */
	while (sweep__cscan_pop(w->q, &item, NULL))
		sweep__walk_dnode_unref(item);
}

static int push_frame(struct walk *w, struct dnode *d, int fd, size_t path_len)
{
	size_t old_cap = w->stack_cap;
	if (sweep__grow(&w->stack, &w->stack_cap, w->depth + 1, sizeof(*w->stack), 16) < 0) {
		close(fd);
		sweep__walk_dnode_unref(d);
		return fatal(w, -ENOMEM);
	}
	/* New slots start with no listing memory. */
	memset(w->stack + old_cap, 0, (w->stack_cap - old_cap) * sizeof(*w->stack));
	struct frame *f = &w->stack[w->depth++];
	return frame_load(w, f, d, fd, path_len);
}

static void pop_frame(struct walk *w)
{
	struct frame *f = &w->stack[--w->depth];
	struct frame *p = w->depth ? &w->stack[w->depth - 1] : NULL;
	if (p && p->fd < 0 && f->fd >= 0) {
		/* The parent was closed on the way down: ".." gets it back in one step, if it is still it. */
		int fd = openat(f->fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0 && !sweep__walk_same_dir(fd, p->dir))
			close(fd);
		else if (fd >= 0)
			p->fd = fd;
	}
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	sweep__walk_dnode_unref(f->dir);
	f->dir = NULL;
	/* The listing's memory stays with the slot for the next directory at this depth. */
}

/* The ancestors' descriptors (all frames but the top) and the cache's go; each is reopened when needed. */
static void dfs_release_fds(struct walk *w)
{
	for (size_t i = 0; i + 1 < w->depth; i++) {
		if (w->stack[i].fd >= 0) {
			close(w->stack[i].fd);
			w->stack[i].fd = -1;
		}
	}
	sweep__walk_fdcache_clear(w);
	sweep__walk_rootcache_clear(w);
}

/*
 * Open subdirectory c of the top frame f. Out of descriptors (a low
 * open-file limit, or the caller's files): the ancestors' let go and one
 * try more; then f's own too, and c by its path, checked to be the
 * directory listed. Only when even that one descriptor cannot be had is it
 * an error. w->path may be rebuilt.
 */
static int dfs_open_child(struct walk *w, struct frame *f, struct dnode *c)
{
	int fd = openat(f->fd, c->name, sweep__walk_open_flags(c));
	if (fd >= 0)
		return fd;
	if (errno != EMFILE && errno != ENFILE)
		return -errno;
	dfs_release_fds(w);
	fd = openat(f->fd, c->name, sweep__walk_open_flags(c));
	if (fd >= 0)
		return fd;
	if (errno != EMFILE && errno != ENFILE)
		return -errno;
	close(f->fd);
	f->fd = -1;
	return sweep__walk_dnode_reopen(w, c);
}

static void walk_dfs(struct walk *w, struct dnode *root, int fd, size_t path_len)
{
	push_frame(w, root, fd, path_len);
	while (w->depth > 0 && !w->stop) {
		struct frame *f = &w->stack[w->depth - 1];
		if (f->fd < 0) {
			/* Closed on the way down to spare descriptors: reopen to finish it. */
			int r = sweep__walk_dnode_reopen(w, f->dir);
			if (r == -EMFILE || r == -ENFILE) {
				dfs_release_fds(w);
				r = sweep__walk_dnode_reopen(w, f->dir);
			}
			size_t len;
			if (sweep__walk_path_of(w, f->dir, &len) < 0) {
				fatal(w, -ENOMEM);
				break;
			}
			if (r < 0) {
				report(w, w->path, SWEEP_WALK_OP_OPENDIR, r);
				pop_frame(w);
				continue;
			}
			f->fd = r;
		}
		struct dnode *c = frame_emit(w, f);
		if (!c) {
			pop_frame(w);
			continue;
		}
		size_t clen = strlen(w->path);
		int cfd = dfs_open_child(w, f, c);
		if (cfd < 0) {
			/* dfs_open_child may have rebuilt w->path for c: the child's path again. */
			size_t len;
			if (sweep__walk_path_of(w, c, &len) < 0) {
				sweep__walk_dnode_unref(c);
				fatal(w, -ENOMEM);
				break;
			}
			report(w, w->path, SWEEP_WALK_OP_OPENDIR, cfd);
			sweep__walk_dnode_unref(c);
			continue;
		}
		if (f->fd >= 0 && w->depth >= w->dfs_open) {
			close(f->fd);
			f->fd = -1;
		}
		if (sweep__walk_path_of(w, c, &clen) < 0) {
			close(cfd);
			sweep__walk_dnode_unref(c);
			fatal(w, -ENOMEM);
			break;
		}
		push_frame(w, c, cfd, clen);
	}
	while (w->depth > 0)
		pop_frame(w);
}

/* ---- roots ---- */

static int do_root(struct walk *w, const char *root, uint32_t index)
{
	bool follow = w->flags & (SWEEP_WALK_FOLLOW | SWEEP_WALK_FOLLOW_ROOTS);
	size_t len = strlen(root);
	struct stat st;
	if (fstatat(AT_FDCWD, root, &st, follow ? 0 : AT_SYMLINK_NOFOLLOW) < 0) {
		int e = -errno;
		/* A dangling symlink root is still an entry (the link itself). */
		if (!(follow && e == -ENOENT && fstatat(AT_FDCWD, root, &st, AT_SYMLINK_NOFOLLOW) == 0))
			return report(w, root, SWEEP_WALK_OP_ROOT, e);
		follow = false;
	}
	if (sweep__walk_path_reserve(w, len + 1) < 0)
		return fatal(w, -ENOMEM);
	memcpy(w->path, root, len + 1);

	const struct sweep_fsinfo *fs = NULL;
	int pfd = open(root, O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
	if (pfd >= 0) {
		if (sweep_fscache_get(w->fsc, (uint64_t)st.st_dev, pfd, &fs) < 0)
			fs = NULL;
		close(pfd);
	}
	struct sweep_entry e = {
		.path = w->path,
		.path_len = len,
		.name = last_component(w->path, len),
		.dirfd = AT_FDCWD,
		.at_name = root,
		.root_index = index,
		.d_type = IFTODT(st.st_mode),
		.fs = fs,
		.root_fd = -1,
	};
	sweep_stat_from_stat(&e.st, &st);
	struct stat lst;
	if (follow && !S_ISLNK(st.st_mode) && fstatat(AT_FDCWD, root, &lst, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISLNK(lst.st_mode))
		e.flags |= SWEEP_ENTRY_FOLLOWED;
	if (S_ISDIR(st.st_mode))
		e.id = ++w->next_id;
	int r = emit(w, &e);
	if (r < 0 || !S_ISDIR(st.st_mode) || r == SWEEP_WALK_SKIP)
		return w->stop;

	struct dnode *d = sweep__walk_dnode_new(NULL, root, len);
	if (!d)
		return fatal(w, -ENOMEM);
	d->id = e.id;
	d->dev = d->root_dev = (uint64_t)st.st_dev;
	d->ino = (uint64_t)st.st_ino;
	d->fs = fs;
	d->root_index = index;
	d->follow = follow;
	if (w->cscan)
		return enqueue(w, d, AT_FDCWD, root, 0, NULL, 0, NULL);
	int fd = open(root, sweep__walk_open_flags(d));
	if (fd < 0) {
		report(w, root, SWEEP_WALK_OP_OPENDIR, -errno);
		sweep__walk_dnode_unref(d);
		return w->stop;
	}
	walk_dfs(w, d, fd, len);
	return w->stop;
}

/*
 * The walk's own choices, from the profile of the first root whose device
 * is worth walking in C-SCAN order (sweep_profile.walk_order not NONE):
 * AUTO becomes that order (PHYSICAL: directories keyed by their first
 * block; INODE: by inode), else plain readdir order; and the stat batch and
 * the read-ahead threads are that device's. Directory-block keys measured
 * on an aged ext4 image: about half the seeks of inode keys
 * (tests/walk/measure-dir-keys.sh). Each directory's key and metadata
 * reads then follow its own device's profile (dir_key, walk_meta.c).
 */
static enum sweep_order resolve_order(const struct sweep_walk_opts *o, const char *const *roots, size_t nroots,
				      struct sweep_profile *ret_prof)
{
	sweep__profile_unknown(ret_prof);
	for (size_t i = 0; i < nroots; i++) {
		struct sweep_fsinfo fi = { .size = sizeof(fi) };
		if (sweep_fsinfo_path(roots[i], &fi) == 0 && fi.profile.walk_order != SWEEP_ORDER_NONE) {
			*ret_prof = fi.profile;
			if (o->order == SWEEP_ORDER_AUTO)
				return fi.profile.walk_order;
			/*
			 * An order the caller chose is walked as one pass, as on a
			 * disk: threads of the SSD class would stat each directory's
			 * first entries before its raw hints are read, and the plan
			 * would then locate those files itself (unless the
			 * environment asks for the threads by name).
			 */
			if (!(fi.profile.env & SWEEP_PROFILE_ENV_WALK_THREADS))
				ret_prof->walk_threads = 0;
			return o->order;
		}
	}
	if (o->order != SWEEP_ORDER_AUTO)
		return o->order;
	return nroots ? SWEEP_ORDER_NONE : SWEEP_ORDER_INODE;
}

#define WALK_FLAGS \
	(SWEEP_WALK_FOLLOW | SWEEP_WALK_FOLLOW_ROOTS | SWEEP_WALK_XDEV | SWEEP_WALK_NO_STAT | SWEEP_WALK_NO_METASCAN | \
	 SWEEP_WALK_PLAN_ONLY | SWEEP_WALK_NO_STAT_FILES | SWEEP_WALK_HINT_FILES)

SWEEP_EXPORT int sweep_walk(const char *const *roots, size_t nroots, const struct sweep_walk_opts *in)
{
	struct sweep_walk_opts o;
	const struct sweep_walk_opts *opts = &o;
	int rc;

	if ((!roots && nroots) || !in)
		return -EINVAL;
	rc = sweep__opts_copy(&o, sizeof(o), in, offsetof(struct sweep_walk_opts, ctx) + sizeof(void *));
	if (rc < 0)
		return rc;
	if (sweep__flags_check(o.flags, WALK_FLAGS) < 0 || (unsigned)o.order > SWEEP_ORDER_NONE ||
	    (unsigned)o.backend > SWEEP_BACKEND_SYSCALL)
		return -EINVAL;
	struct walk w = { .o = opts, .flags = opts->flags };
	w.auto_order = opts->order == SWEEP_ORDER_AUTO;
	w.order = resolve_order(opts, roots, nroots, &w.prof);
	w.cscan = w.order == SWEEP_ORDER_INODE || w.order == SWEEP_ORDER_PHYSICAL;
	w.fsc = sweep_fscache_new();
	w.batch = opts->stat_batch ? opts->stat_batch : w.prof.stat_batch;
	w.kept_max = sweep__nofile_share(8, KEPT_FDS);
	w.dfs_open = sweep__nofile_share(16, DFS_OPEN_FDS);
	w.fdc_max = sweep__nofile_share(32, FD_CACHE);
	/* AUTO: io_uring for the batches that read the disk, where the profile says so; a backend named is the caller's. */
	w.backend = sweep_backend_resolve(opts->backend == SWEEP_BACKEND_AUTO && !w.prof.stat_uring ? SWEEP_BACKEND_SYSCALL
												    : opts->backend);
	/* Under a low open-file limit (ulimit -n 10) a ring's descriptor is one the files need: plain statx. */
	if (opts->backend == SWEEP_BACKEND_AUTO && w.backend == SWEEP_BACKEND_URING && w.fdc_max == 0)
		w.backend = SWEEP_BACKEND_SYSCALL;
	int ret = sweep__walk_scratch_init(&w.scr, &w, w.backend, w.batch);
	w.q = sweep__cscan_new();
	sweep__walk_meta_new(&w);
	if (!ret && (!w.fsc || !w.q))
		ret = -ENOMEM;
	if (!ret)
		sweep__walk_ahead_new(&w);
	for (size_t i = 0; !ret && i < nroots && !w.stop; i++)
		do_root(&w, roots[i], (uint32_t)i);
	if (!ret && w.cscan && !w.stop)
		walk_cscan(&w);
	sweep__walk_ahead_free(&w);
	sweep__walk_table_free(&w);
	sweep__walk_fdcache_clear(&w);
	sweep__walk_rootcache_clear(&w);
	sweep__walk_meta_free(&w);
	if (w.q) {
		void *item;
		while (sweep__cscan_pop(w.q, &item, NULL))
			sweep__walk_dnode_unref(item);
	}
	for (size_t i = 0; i < w.stack_cap; i++)
		sweep__walk_frame_free(&w.stack[i]);
	free(w.stack);
	sweep__walk_scratch_fini(&w.scr);
	free(w.path);
	sweep__cscan_free(w.q);
	sweep_fscache_free(w.fsc);
	if (ret)
		return ret;
	return w.stop ? w.stop : w.errors;
}
