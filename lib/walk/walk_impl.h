/* SPDX-License-Identifier: MIT */
/*
 * The walk's own workings, shared by the files of lib/walk/ (the traversal,
 * directory nodes and paths, the read-ahead threads, the metadata engine's
 * part, batched stats, the C-SCAN queue). What the layers above see is walk.h.
 */
#ifndef SWEEP_WALK_IMPL_H
#define SWEEP_WALK_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "walk.h"

/* --- batched stat (statx_batch.c) --- */
struct sweep__stat_req {
	const char *name; /* relative to the batch's dirfd */
	int flags;        /* AT_SYMLINK_NOFOLLOW or 0 */
	struct stat *st;  /* filled on success */
	int err;          /* 0 or -errno */
};
struct sweep__stat_batch;
/*
 * backend must be resolved (URING or SYSCALL); depth = requests per
 * submission. every_uring: with URING, every batch goes to io_uring (the
 * caller asked for it by name); otherwise inodes that are cached are
 * stat'ed with plain calls (statx_batch.c). tell_cached: the caller asks
 * sweep__stat_batch_cached() after each run (else it is always false and
 * costs nothing).
 */
struct sweep__stat_batch *sweep__stat_batch_new(enum sweep_backend backend, unsigned depth, bool every_uring,
						bool tell_cached);
struct sweep__stat_batch *sweep__stat_batch_free(struct sweep__stat_batch *b);
/* Stat reqs[0..n) relative to dirfd, in the order given; fills each req's err/st. */
int sweep__stat_batch_run(struct sweep__stat_batch *b, int dirfd, struct sweep__stat_req *reqs, size_t n);
/* Whether the last run read nothing from the disk (and sent nothing to io_uring): the inodes were cached. tell_cached only. */
bool sweep__stat_batch_cached(const struct sweep__stat_batch *b);

/* --- C-SCAN queue (walk_queue.c) --- */
/* Items are served in ascending key from the last key served; keys below it wait for the next sweep. */
struct sweep__cscan;
struct sweep__cscan *sweep__cscan_new(void);
struct sweep__cscan *sweep__cscan_free(struct sweep__cscan *q);
int sweep__cscan_push(struct sweep__cscan *q, uint64_t key, void *item);
/* 1 and *ret_item (and *ret_key if non-NULL) when an item was taken, 0 when empty. */
int sweep__cscan_pop(struct sweep__cscan *q, void **ret_item, uint64_t *ret_key);
/* The next items (at most max) pop would give in this sweep, left in the queue: their count. */
size_t sweep__cscan_peek(struct sweep__cscan *q, void **items, size_t max);
size_t sweep__cscan_len(const struct sweep__cscan *q);
/* How many times the queue wrapped to a new sweep. */
uint64_t sweep__cscan_sweeps(const struct sweep__cscan *q);

/* A directory the walk knows about: pending in the queue, being read, or an ancestor of one. */
struct dnode {
	struct dnode *parent;
	uint64_t id, dev, ino;
	uint64_t key; /* C-SCAN key: inode, or first physical byte of its blocks */
	uint64_t root_dev; /* for XDEV */
	const struct sweep_fsinfo *fs;
	unsigned refs;
	uint32_t root_index;
	int depth;
	bool follow; /* reached through a followed symlink: open without O_NOFOLLOW */
	bool prefetched; /* its blocks were prefetched (walk_meta.c), or it was read */
	int kept_fd; /* opened for its C-SCAN key and kept for its visit (-1: none; walk.c dir_key) */
	size_t name_len;
	char name[]; /* the component; for a root, the root as given */
};

/* One getdents64 record, kept while the directory is being handed out. */
struct dent {
	uint64_t ino;
	size_t name_off; /* into listing.names */
	uint32_t name_len;
	uint32_t index; /* position in the getdents64 stream */
	unsigned char type;
};

struct listing {
	struct dent *v;
	size_t n, cap;
	char *names;
	size_t nlen, ncap;
};

/*
 * A directory being handed out. Entries are stat'ed one batch at a time,
 * just before they are handed out, so a directory of a million entries
 * holds a million names but only one batch of struct stat.
 */
struct frame {
	struct dnode *dir;
	int fd;
	struct listing ls;
	size_t pos;
	size_t path_len; /* the directory's path length in walk.path */
	size_t chunk, chunk_n; /* entries [chunk, chunk + chunk_n) have their stat in st/err */
	bool chunk_cached;     /* ... and neither they nor the listing read the disk */
	bool listing_read;     /* reading the listing read the disk (or nobody can tell) */
	struct stat *st;       /* batch entries */
	int *err;
	size_t st_cap;         /* room in st and err */
	int read_err;          /* getdents64 failed part way (-errno): reported, what was read is kept */
	int fill_err;          /* a read-ahead thread could not load it (-ENOMEM) */
	/* The root this directory lies below (sweep__walk_root_fd; borrowed, -1 when none) and its path length. */
	int root_fd;
	size_t root_len;
	uint64_t root_dev, root_ino;
	/* Inode hints of entries [hint_at, hint_at + hint_n) (walk_meta.c); ms NULL: none. */
	struct sweep__metascan *ms;
	struct sweep__inode_hint *hints;
	uint64_t *hint_inos;
	size_t hint_at, hint_n;
	/* SWEEP_WALK_HINT_FILES with hints on its device: a regular file with a sized hint is not stat'ed (set before it is loaded). */
	bool hint_files;
};

/* What one thread needs to read and stat a directory: the walk's own, and each read-ahead thread's. */
struct walk_scratch {
	struct sweep__stat_batch *sb;
	struct sweep__stat_req *reqs;
	size_t *idx;
	size_t cap; /* entries reqs and idx have room for */
	char *dbuf; /* getdents64 buffer */
};

/* Open directories kept for reopening their children cheaply (and beyond PATH_MAX). */
#define FD_CACHE 8
/* Queued directories kept open from their FIEMAP to their visit: at most this, and an eighth of RLIMIT_NOFILE. */
#define KEPT_FDS 128
/* Open roots (O_PATH) handed to the callbacks as sweep_entry.root_fd. */
#define ROOT_CACHE 8

struct walk {
	const struct sweep_walk_opts *o;
	unsigned flags;
	bool cscan;
	enum sweep_order order; /* emission order within a directory */
	struct sweep_fscache *fsc;
	enum sweep_backend backend; /* resolved: how entries are stat'ed */
	struct walk_scratch scr;
	struct sweep__cscan *q;
	uint64_t next_id;
	int errors;
	int stop; /* <0: a callback or a fatal error ended the walk */
	char *path;
	size_t path_cap;
	size_t batch; /* entries per stat batch */
	struct frame *stack; /* depth-first mode */
	size_t depth, stack_cap;
	/* Recently read directories, still open: their children reopen relative to them. */
	struct {
		struct dnode *dir;
		int fd;
		uint64_t used;
	} fdc[FD_CACHE];
	uint64_t fdc_clock;
	size_t fdc_max; /* fdc entries used: FD_CACHE, fewer under a low open-file limit */
	struct {
		struct dnode *root;
		int fd;
		uint64_t used;
	} rootc[ROOT_CACHE];
	size_t kept_fds, kept_max; /* dnode.kept_fd held now, and the most that may be */
	size_t dfs_open;	   /* depth-first: frames deeper than this close their parent's fd (walk_dfs) */
	uint64_t nophys_dev; /* a device where FIEMAP/FIBMAP do not work */
	bool nophys_dev_valid;
	struct walk_meta *meta; /* the metadata engine's part, NULL when off (walk_meta.c) */
	bool auto_order; /* the caller left the order to the devices' profiles */
	struct sweep_profile prof; /* the roots' device profile: the walk's own choices (resolve_order) */
	struct walk_ahead *ahead; /* read-ahead threads, NULL when none (walk_ahead.c) */
	struct sweep__xfs_stats *xstats; /* the files' stats of a whole xfs filesystem (walk_table.c), or NULL */
	uint64_t xstats_dev;
	bool xstats_tried;
};

/* walk.c, for the read-ahead threads too */
int sweep__walk_scratch_init(struct walk_scratch *s, const struct walk *w, enum sweep_backend backend, size_t cap);
void sweep__walk_scratch_fini(struct walk_scratch *s);
void sweep__walk_frame_free(struct frame *f);
int sweep__walk_stat_entries(const struct walk *w, struct frame *f, size_t from, size_t n, struct walk_scratch *s);
int sweep__walk_frame_fill(const struct walk *w, struct frame *f, struct walk_scratch *s, size_t stat_max);

/*
 * walk_ahead.c: directories read and stat'ed ahead of the walk on worker
 * threads (the SSD class: several directories in flight). The walk submits
 * directories in the order it will hand them out and takes them back, loaded,
 * in that order.
 */
/* Start the threads when the walk should have them (w->ahead stays NULL otherwise). */
void sweep__walk_ahead_new(struct walk *w);
/* Stop the threads and drop what is still queued (closing its fds, releasing its nodes). */
void sweep__walk_ahead_free(struct walk *w);
/* Whether another directory may be submitted. */
bool sweep__walk_ahead_room(const struct walk_ahead *a);
/* Queue directory d (a reference, given) open as fd (given), its frame's hint_files set so: 0 or -ENOMEM (nothing taken). */
int sweep__walk_ahead_submit(struct walk_ahead *a, struct dnode *d, int fd, bool hint_files);
/*
 * The oldest submitted directory once loaded (f->dir, f->fd, the listing, its first stats); NULL when none.
 * One on a device without walk threads is loaded now, through own (the walk's scratch), without stats.
 */
struct frame *sweep__walk_ahead_take(struct walk_ahead *a, struct walk_scratch *own);
/* Done with the frame sweep__walk_ahead_take gave: its fd is closed and its node released if still set. */
void sweep__walk_ahead_put(struct walk_ahead *a);

/*
 * walk_table.c: a whole xfs filesystem, its files' stats from one bulkstat
 * table. Start it for root d (open as fd) when it pays and gives what stat
 * gives (swept: the walk's inode sweep has just cached every cluster; else
 * only with walk threads); whether entry i of f was answered from it
 * (*st filled; any thread); and the end of it.
 */
void sweep__walk_table_start(struct walk *w, const struct dnode *d, int fd, bool swept);
bool sweep__walk_table_stat(const struct walk *w, const struct frame *f, size_t i, struct stat *st);
void sweep__walk_table_free(struct walk *w);

/* walk_open.c */
/* A node for a directory called name under parent (NULL for a root); holds a reference to parent. */
struct dnode *sweep__walk_dnode_new(struct dnode *parent, const char *name, size_t name_len);
/* Drop a reference; frees the node, and its parents that nothing else holds. */
void sweep__walk_dnode_unref(struct dnode *d);
/* w->path: room for need bytes; "/" + name appended at len; a directory's full path. */
int sweep__walk_path_reserve(struct walk *w, size_t need);
int sweep__walk_path_join(struct walk *w, size_t len, const char *name, size_t name_len, size_t *ret_len);
int sweep__walk_path_of(struct walk *w, const struct dnode *d, size_t *ret_len);
/* open(2) flags for d: O_NOFOLLOW unless d was reached through a followed link. */
int sweep__walk_open_flags(const struct dnode *d);
/* Keep d's open fd for its children (the cache owns it now); close them all. */
void sweep__walk_fdcache_put(struct walk *w, struct dnode *d, int fd);
void sweep__walk_fdcache_clear(struct walk *w);
/* fd is the directory d describes (same device and inode). */
bool sweep__walk_same_dir(int fd, const struct dnode *d);
/* Open d again however it can be reached, checked with sweep__walk_same_dir; fd or -errno. */
int sweep__walk_dnode_reopen(struct walk *w, struct dnode *d);
/*
 * Open d ahead of its visit and let go of it (or keep it for the visit, a
 * few at a time): on xfs the open itself starts reading the directory's
 * first block (walk_meta.c). 0 or -errno.
 */
int sweep__walk_dnode_open_ahead(struct walk *w, struct dnode *d);
/*
 * An O_PATH descriptor of the root d lies below, checked to be the root that
 * was walked, kept in a small cache (the walk owns it); -1 with
 * SWEEP_WALK_FOLLOW or when the root is no longer there.
 */
int sweep__walk_root_fd(struct walk *w, struct dnode *d);
void sweep__walk_rootcache_clear(struct walk *w);


/* walk_meta.c: directory prefetch and inode hints from the block device. */
void sweep__walk_meta_new(struct walk *w);
void sweep__walk_meta_free(struct walk *w);
/* Directory c was queued: its blocks go into the next prefetch. */
void sweep__walk_meta_queued(struct walk *w, struct dnode *c);
/* d is about to be read: prefetch its generation of queued directories first. */
void sweep__walk_meta_before_read(struct walk *w, struct dnode *d);
/* xfs with its directories keyed by block: open the next directories of the queue ahead of d's visit. */
void sweep__walk_meta_open_ahead(struct walk *w, struct dnode *d);
/* f was just loaded (listing sorted): decide whether its entries get hints. */
void sweep__walk_meta_frame(struct walk *w, struct frame *f);
/* Entries [i, i + n) are about to be stat'ed: make sure their hints are read. */
void sweep__walk_meta_prepare(struct walk *w, struct frame *f, size_t i, size_t n);
const struct sweep__inode_hint *sweep__walk_meta_hint(const struct frame *f, size_t i);
/* Whether directory d (open as fd) gets frame.hint_files: SWEEP_WALK_HINT_FILES, and hints on its device. */
bool sweep__walk_meta_hint_files(struct walk *w, const struct dnode *d, int fd);
/* Whether entry i of f is a regular file whose hint is read and gives its size (sweep__walk_meta_offer's have_size). */
bool sweep__walk_meta_sizes(const struct frame *f, size_t i);
int sweep__walk_meta_dir_key(struct walk *w, const struct frame *f, size_t i, const struct stat *st, uint64_t *ret_key);
int sweep__walk_meta_dir_block(struct walk *w, uint64_t dev, uint64_t ino, uint64_t *ret_key);
/* walk.c: whether directories are keyed by where their blocks lie (order PHYSICAL) on fs. */
bool sweep__walk_keys_by_block(const struct walk *w, const struct sweep_fsinfo *fs);
int sweep__walk_meta_offer(struct walk *w, const struct frame *f, size_t i, bool stated, const struct stat *st,
		    struct sweep_entry_hint *eh);

#endif
