/* SPDX-License-Identifier: MIT */
/*
 * The copy engine's internals, shared by copy.c (life cycle, reporting, the
 * destination), copy_entry.c (one entry of any type), copy_data.c (regular
 * files: temporaries, the reader's callbacks, putting copies in place),
 * copy_tree.c (a tree, as cp copies an operand) and copy_ops.c (the
 * destination operations sync-like callers use).
 *
 * Destination names are relative to the destination root descriptor and are
 * resolved afresh, beneath it and without following symlinks, every time a
 * directory is needed (sweep__dest_dir): a directory swapped for a symlink between
 * two files is then never followed, and one moved away is never written
 * into again. The kernel's dcache makes the lookup cheap.
 */
#ifndef SWEEP_COPY_INTERNAL_H
#define SWEEP_COPY_INTERNAL_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sweep.h>
#include <sweep/copy.h>

#include "copy_meta.h"
#include "copy_writer.h"
#include "internal.h"

/*
 * A batch is bounded by memory, not by a number of files: the plan's and the
 * queue's each (so about twice this in all). On a disk every batch is a
 * sweep across it; batches of 4096 files made sweep-cp 1.50x the sequential
 * bound on the aged 115k-file ext4 image (hdd7200 model), 2.27x on xfs; one
 * batch for the tree: 1.24x and 1.29x, as sweep-tar.
 */
#define COPY_DEFAULT_BATCH_BYTES (32u << 20)
static inline size_t copy_batch_bytes(const struct sweep_copy *c);
/* Prefix of a named temporary, where the filesystem has no O_TMPFILE. */
#define COPY_TMP_PREFIX ".sweep-tmp."

enum { LN_PENDING, LN_DONE, LN_FAILED };

/* A later name of a hard-linked inode whose first copy is still queued. */
struct follower {
	char *src, *dst; /* one allocation; dst relative to the destination */
	struct sweep_stat st;
	uint64_t cookie;
};

/* One inode with several names, keyed by the source's (dev, ino). */
struct lnode {
	uint64_t dev, ino;
	char *dst; /* destination name of the first copy */
	int state;
	struct follower *fol;
	size_t nfol, capfol;
};

/*
 * A queued regular file; its plan entry's cookie is its index. Kept small:
 * a batch holds one per file (the plan's own entry is the other part).
 */
struct qitem {
	char *src;   /* as shown; one allocation with dst */
	char *dst;   /* relative to the destination */
	char *place; /* write-through: the absolute path of the file a destination symlink names, else NULL */
	struct lnode *ln;
	uint64_t cookie;
	uint32_t mode; /* mode to give the copy when the mode is not preserved (when the copy is new) */
	bool keep_mode; /* an existing destination's mode is kept (cp without -p) */
	bool existed;   /* the destination name existed when the file was queued */
};

/*
 * The file being copied. The reader hands files over one at a time, whole
 * (begin, data, end, and the writes drained at the end), so one is enough.
 */
struct qactive {
	struct qitem *it; /* NULL: none (the queue does not move while a batch is read) */
	int dirfd;     /* the directory it goes into, O_PATH, held from begin() to end() */
	struct stat dir_st;
	const char *name; /* last component of dst (or of place) */
	int tmpfd;
	char *tmpname; /* a named temporary in dirfd; NULL for O_TMPFILE */
	int err;
	enum sweep_copy_op err_op;
	enum sweep_copy_how how;
	uint64_t size, bytes;
	size_t punch; /* > 0: leave all-zero blocks of this size as holes */
	bool placed;      /* the copy is in place under its final name */
	struct ajob *job; /* made on the writer thread (copy_async.c): what fails is kept for the caller's thread */
};

/* A directory whose metadata sweep_copy_finish() applies. */
struct dirmeta {
	char *src, *dst; /* one allocation */
	struct sweep_stat st;
	struct meta_blob *blob; /* the source's xattrs/ACLs, captured when it was met */
	bool created;
};

struct sweep_copy {
	struct sweep_copy_opts o;
	int dest_fd;   /* the destination root (O_PATH directory), -1 until sweep_copy_set_dest() */
	char *show;    /* prefix of destination names in messages */
	char *showbuf; /* sweep__dst_show() result */
	size_t showcap;
	struct sweep_batch *batch; /* queued regular files: sorted and read a batch at a time */
	struct writer *writer;
	struct qitem *q;
	size_t nq, capq;
	size_t qbytes;         /* what the queue holds now, strings included (a batch is bounded by it) */
	struct qactive act;    /* the file being copied here */
	struct copy_async *async; /* the writer thread, NULL when copies are made on the caller's thread */
	struct ajob *ajob;     /* the file being read, when the writer thread makes its copy */
	struct lnode **links; /* open addressing */
	size_t nlinks, caplinks;
	struct dirmeta *dirs;
	size_t ndirs, capdirs;
	char **made;  /* the destinations sweep_copy_tree() was given so far (cp's "just-created") */
	size_t nmade, capmade;
	struct sweep_copy_stats stats;
	mode_t umask;
	int stop; /* a callback's negative value or -ECANCELED: everything stops */
	bool no_tmpfile; /* this destination refused O_TMPFILE once: named temporaries from now on (atomic) */
	uint64_t dest_dev; /* the destination root's filesystem */
	bool test_thread_all; /* test builds: SWEEP_TEST_COPY=thread */
	/* The last (source, destination) filesystem pair that could not clone: skip the ioctl for it. */
	dev_t noclone_src, noclone_dst;
	int noclone_err;
	bool noclone;
};

/* A source as the entry functions see it: reachable now (dirfd/name) and later (root_fd/rel or path). */
struct src_ref {
	int dirfd;            /* its directory, open now (a walk's dirfd), or -1 (then reached below root_fd) */
	const char *name;     /* in dirfd */
	int root_fd;          /* AT_FDCWD: path as it stands */
	const char *rel;
	const char *path;     /* as shown */
	const struct sweep_stat *st;
	const char *link;     /* a symlink's target if already read */
	unsigned flags;       /* SWEEP_COPY_SRC_FOLLOWED */
	const struct sweep_entry *walked; /* the walk entry, when it came from one (plans by it) */
};

/* copy.c */
int sweep__copy_stopped(struct sweep_copy *c);
int sweep__copy_report(struct sweep_copy *c, enum sweep_copy_op op, int err, const char *src, const char *dst,
		uint64_t cookie);
void sweep__copy_done(struct sweep_copy *c, const char *src, const char *dst, const struct sweep_stat *st,
	       enum sweep_copy_how how, uint64_t bytes, uint64_t cookie, bool existed);
int sweep__copy_step(struct sweep_copy *c, enum sweep_copy_step step, const char *src, const char *dst, uint64_t cookie);
/* A destination name as shown in messages (a buffer the next call reuses). */
const char *sweep__dst_show(struct sweep_copy *c, const char *dst);
/* The same into a buffer of the caller's (the writer thread's). */
const char *sweep__dst_show_in(const struct sweep_copy *c, const char *dst, char **buf, size_t *cap);
/*
 * The directory holding dst, beneath the destination root, opened O_PATH
 * without following symlinks; *ret_name points at dst's last component.
 * fd (the caller closes it) or -errno (-ELOOP: a symlink in the way).
 */
int sweep__dest_dir(struct sweep_copy *c, const char *dst, const char **ret_name);
/* Apply metadata, reporting failures against sweep__dst_show. */
void sweep__copy_apply_meta(struct sweep_copy *c, const struct meta_ref *src, const struct meta_ref *dst,
		     const struct sweep_stat *st, unsigned what, const char *src_name, const char *dst_name,
		     uint64_t cookie);
/* The permission bits a new copy of a source with this mode gets when modes are not preserved. */
mode_t sweep__copy_new_mode(const struct sweep_copy *c, uint32_t src_mode);
/* The source's directory and name, opened now for what can only be read by name (symlinks' xattrs). */
int sweep__src_dir(const struct src_ref *s, const char **ret_name);

/* copy_entry.c */
int sweep__copy_entry_ref(struct sweep_copy *c, const struct src_ref *s, const char *dst, uint64_t cookie, bool top);
void sweep__copy_links_free(struct sweep_copy *c);
/* The first copy of n is final (or failed): give its other names their links. */
void sweep__link_settle(struct sweep_copy *c, struct lnode *n, bool ok, enum sweep_copy_op op, int err);
/* Make dst (beneath the destination) a hard link to target, through a temporary name: 0 or -errno. */
int sweep__link_replace(struct sweep_copy *c, const char *target, const char *dst);

/* copy_data.c */
extern const struct sweep_read_ops sweep__copy_read_ops;
int sweep__copy_on_batch(const struct sweep_plan *p, void *ctx);
int sweep__copy_on_batch_end(const struct sweep_plan *p, int status, void *ctx);
/* An io_uring write of queue entry idx failed. */
void sweep__copy_write_failed(struct sweep_copy *c, uint64_t idx, int err);
int sweep__copy_enqueue(struct sweep_copy *c, const struct src_ref *s, const char *dst, const char *place,
		 const struct stat *dst_st, struct lnode *ln, uint64_t cookie);
void sweep__copy_queue_free(struct sweep_copy *c);
/* cp without -r: the data of a FIFO or device named src, copied into a regular file at dst. */
int sweep__copy_stream(struct sweep_copy *c, const char *src, const struct sweep_stat *st, const char *dst);
/* A fresh temporary name next to nothing: ".sweep-tmp.XXXXXX" into buf (at least 32 bytes). */
void sweep__copy_tmp_name(char *buf);
/* Put the entry at tmp (in dirfd) onto name: rename, or without replacing with no-clobber. */
int sweep__copy_put_in_place(struct sweep_copy *c, int dirfd, const char *tmp, const char *name);

/* Start copying it (nothing held yet). */
struct qactive *sweep__copy_active_start(struct qactive *a, struct qitem *it);
void sweep__copy_item_fail(struct qactive *a, enum sweep_copy_op op, int err);
/* Close the copy; a named temporary (ours, made this run) is removed. */
void sweep__copy_drop_temp(struct qactive *a);
int sweep__copy_file_create(struct sweep_copy *c, struct qactive *it);
size_t sweep__copy_punch_size(const struct sweep_copy *c, bool dense, const struct stat *tst);
int sweep__copy_file_write(struct writer *w, struct qactive *it, const void *buf, size_t len, uint64_t off, uint64_t tag);
void sweep__copy_file_finish(struct sweep_copy *c, struct qactive *it, int srcfd, const struct sweep_stat *st);
void sweep__copy_file_settle(struct sweep_copy *c, const struct qitem *q, const struct qactive *it, int status,
		      const struct sweep_stat *st);

/* copy.c */
void sweep__copy_report_meta(struct sweep_copy *c, enum sweep_copy_meta op, int err, const char *src, const char *dst,
		      uint64_t cookie);

/*
 * copy_async.c: a writer thread makes the copies of the files the reader
 * hands over, in the order they are read, while the caller's thread reads on.
 */
struct ajob;
struct copy_async;
/* *ret NULL where copies stay on the caller's thread (one CPU, SWEEP_COPY_THREADS=0, io_uring writes). */
int sweep__copy_async_new(struct sweep_copy *c, struct copy_async **ret);
/* Waits for the thread (every job must have been reaped). Accepts NULL. */
void sweep__copy_async_free(struct copy_async *a);
/* Whether the thread can make this file's copy: data, no clone or kernel copy to try. */
bool sweep__copy_async_takes(const struct sweep_copy *c, const struct qitem *q, const struct sweep_file *f);
/* The file is open: hand it over (NULL: no memory, copy it here). */
struct ajob *sweep__copy_async_begin(struct sweep_copy *c, struct qitem *q, uint64_t size, bool dense);
void sweep__copy_async_data(struct sweep_copy *c, struct ajob *j, const void *buf, size_t len, uint64_t off);
void sweep__copy_async_end(struct sweep_copy *c, struct ajob *j, const struct sweep_file *f, int status);
/* Report the copies the thread finished, in the order they were read; with all, wait for every one. */
void sweep__copy_async_reap(struct sweep_copy *c, bool all);
/* On the writer thread: a metadata step failed, or the WRITTEN step (on_step, serialised). */
void sweep__copy_async_meta_failed(enum sweep_copy_meta op, int err, void *job);
int sweep__copy_async_step(struct sweep_copy *c, struct ajob *j, enum sweep_copy_step step);
/* on_step, serialised with the thread's calls. */
int sweep__copy_async_on_step(struct sweep_copy *c, enum sweep_copy_step step, const char *src, const char *dst,
		       uint64_t cookie);
/* Write requests the thread made. */
uint64_t sweep__copy_async_write_requests(const struct copy_async *a);

static inline size_t copy_batch_bytes(const struct sweep_copy *c)
{
	return c->o.batch_bytes ? c->o.batch_bytes : COPY_DEFAULT_BATCH_BYTES;
}

#endif
