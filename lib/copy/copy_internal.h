/* SPDX-License-Identifier: MIT */
/*
 * The copy engine's internals. A file's copy flows one way, through four
 * stages, each in a file of its own; a stage calls only the stages after it
 * and the shared pieces, never one before it:
 *
 *   plan    copy_plan.c    one source entry: cp's checks against what stands
 *                          at its destination, then made at once (the shared
 *                          copy_make.c) or, a regular file, queued into the
 *                          batch that will read it
 *   read    copy_read.c    the reader's callbacks: each opened file goes to
 *                          the write stage with its data, on this thread or
 *                          on the writer thread (copy_thread.c, a transport
 *                          only); clones and kernel copies onto the source's
 *                          own filesystem are made on the clone pool
 *                          (copy_clone.c), and sources read as a stream (a
 *                          FIFO, a retry) here
 *   write   copy_write.c   one file's copy in its destination directory: the
 *                          temporary, its data, its size and metadata, its
 *                          name. What goes wrong is written into the copy
 *                          (struct fcopy), never reported from here
 *   settle  copy_settle.c  each finished copy reported on the caller's
 *                          thread, in the order it was read; the other
 *                          names of a hard-linked inode made then
 *
 * Shared pieces, which call no stage: copy_report.c (the caller's
 * callbacks), copy_dest.c (the destination root and the names below it),
 * copy_links.c (the hard-link table), copy_make.c (what is made at once:
 * directories, symlinks, special files, hard links), copy_dirs.c (directory
 * metadata, applied at the end), copy_meta.c (metadata), copy_writer.c
 * (write backends). Around them: copy.c (the engine's life cycle),
 * copy_tree.c (a tree walked into the plan stage) and copy_ops.c (the
 * destination operations of sync-like callers).
 *
 * Destination names are relative to the destination root descriptor and are
 * resolved afresh, beneath it and without following symlinks, every time a
 * directory is needed to make, name, replace or remove something
 * (sweep__dest_dir): a directory swapped for a symlink between two files is
 * then never followed, and one moved away never gets a name again. What a
 * stale directory cannot make unsafe (a look that finds nothing, an unnamed
 * O_TMPFILE) goes through a descriptor cached per thread (struct
 * dest_cache): cp -a of many small files looked the directory up three
 * times a file before, 40 syscalls a file against cp's 17.
 */
#ifndef SWEEP_COPY_INTERNAL_H
#define SWEEP_COPY_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sweep.h>
#include <sweep/copy.h>

#include "copy_meta.h"
#include "copy_writer.h"
#include "read.h" /* the layer below (and plan: copy_read.c opens planned files as the reader does) */

/*
 * A batch is bounded by memory, not by a number of files: the plan's and the
 * queue's each (so about twice this in all). On a disk every batch is a
 * sweep across it; batches of 4096 files made sweep-cp 1.50x the sequential
 * bound on the aged 115k-file ext4 image (hdd7200 model), 2.27x on xfs; one
 * batch for the tree: 1.24x and 1.29x, as sweep-tar.
 */
#define COPY_DEFAULT_BATCH_BYTES (32u << 20)
/* the preserve bits sweep_copy_new() and sweep_copy_attrs() take */
#define KNOWN_PRESERVE (SWEEP_PRESERVE_ALL | SWEEP_PRESERVE_STRICT | SWEEP_PRESERVE_OMIT_DIR_TIMES | \
			SWEEP_PRESERVE_OMIT_LINK_TIMES | SWEEP_PRESERVE_FAKE_SUPER | \
			SWEEP_PRESERVE_ATIME)
/* Prefix of a named temporary, where the filesystem has no O_TMPFILE. */
#define COPY_TMP_PREFIX ".sweep-tmp."

/*
 * One destination directory kept open between files (one cache a thread),
 * so the files of a directory do not each look it up again from the root.
 * What is done through a cached descriptor is only what a stale one cannot
 * make unsafe: a fstatat that finds nothing (the plan stage, for a regular
 * file), an unnamed O_TMPFILE (the write stage). Anything that names,
 * replaces or removes an entry looks its directory up afresh, and a copy is
 * named only through the descriptor the fresh lookup gives (copy_write.c,
 * commit()); the cache keeps the directory its copies are made in.
 */
struct dest_cache {
	char *dir; /* dst's directory part, as in the names handed to sweep__dest_dir() */
	size_t len, cap;
	bool slash; /* the name had a directory part ("x" and "/x" are not the same) */
	int fd;     /* O_PATH, looked up beneath the root without symlinks; -1: none */
	struct stat st;
	bool hit;   /* the last sweep__dest_cache_dir() returned it without a lookup */
	uint64_t gen; /* counts the directories it has held (never 0 once one is held) */
};

/* Filesystem pairs remembered as unable to clone (struct sweep_copy). */
#define COPY_NOCLONE_PAIRS 8

struct noclone {
	uint64_t src, dst;
	int err; /* the clone's errno */
};

/* ---- the data each stage hands to the next ---- */

enum { LN_PENDING, LN_DONE, LN_FAILED };

/* A later name of a hard-linked inode whose first copy is still queued. */
struct follower {
	char *src, *dst; /* one allocation; dst relative to the destination */
	struct sweep_stat st;
	uint64_t cookie;
};

/* A follower whose link was refused for want of a descriptor (copy_settle.c), and the name it links to. */
struct late_link {
	struct follower f;
	const char *target; /* its lnode's dst: kept until the copy is freed */
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
 * plan -> read: a queued regular file; its plan entry's cookie is its index.
 * Kept small: a batch holds one per file (the plan's own entry is the other part).
 */
struct qitem {
	char *src;   /* as shown; one allocation with dst */
	char *dst;   /* relative to the destination */
	char *place; /* write-through: the absolute path of the file a destination symlink names, else NULL */
	struct lnode *ln;
	uint64_t cookie;
	uint32_t mode;  /* the copy's mode when the mode is not preserved */
	bool keep_mode; /* an existing destination's mode is kept (cp without -p) */
	bool mode_given; /* SWEEP_COPY_SRC_MODE: with PRESERVE_MODE the copy gets given_mode, not the read file's */
	uint32_t given_mode;
	bool owner_given; /* SWEEP_COPY_SRC_OWNER: with PRESERVE_OWNER the copy gets given_uid/gid, not the read file's */
	uint32_t given_uid, given_gid; /* ... and SWEEP_PRESERVE_FAKE_SUPER records them */
	bool existed;   /* the destination name existed when the file was queued */
	bool into;      /* the destination is a FIFO or a device: written into, never replaced */
	bool retried;   /* read again by itself once, after the reader ran out of descriptors */
	bool carried;   /* queued again at a later flush, after that ran out too (copy_carry.c) */
	uint64_t dst_dev; /* the device of the directory it goes into, when planned: its writer's (copy_thread.c) */
};

/* A metadata step the write stage could not make (reported by the settle stage). */
struct meta_fail {
	enum sweep_copy_meta op;
	int err;
};

/* read -> write -> settle: one regular file's copy. */
struct fcopy {
	const struct qitem *q;
	/* the write stage's */
	struct dest_cache *dc; /* the thread's directory cache, or NULL (every lookup afresh) */
	int dirfd;        /* the directory it goes into, O_PATH; held only for a named temporary */
	struct stat dir_st;
	bool dir_cached;  /* made through the cache's descriptor, not one looked up for this file */
	const char *name; /* the last component of its destination (or of the write-through target) */
	int tmpfd;        /* the copy (an O_TMPFILE, a named temporary, or the FIFO/device written into) */
	char *tmpname;    /* a named temporary in dirfd; NULL for O_TMPFILE */
	size_t punch;     /* > 0: leave all-zero blocks of this size as holes */
	uint64_t size;    /* what the copy is to hold: the source's length as read */
	uint64_t bytes;   /* data bytes copied (written, cloned or copied by the kernel) */
	uint64_t wpos;    /* into: how far the stream has been written (holes as zeros) */
	char *backup;     /* what it replaced was kept under this name (in its directory) */
	enum sweep_copy_how how;
	bool placed;      /* in place under its final name */
	/* the source as read */
	struct sweep_stat st;
	int status;              /* the reader's end status */
	struct meta_blob *blob;  /* on the writer thread: the source's xattrs/ACLs, captured when it ended */
	/* the outcome, for the settle stage */
	int err;
	enum sweep_copy_op err_op;
	struct meta_fail *mfail;
	size_t nmfail, capmfail;
	int step_rc; /* on_step's negative value at SWEEP_COPY_STEP_WRITTEN */
};

/* A directory whose metadata sweep_copy_finish() applies. */
struct dirmeta {
	char *src, *dst; /* one allocation */
	struct sweep_stat st;
	struct meta_blob *blob; /* the source's xattrs/ACLs, captured when it was met */
	bool created;
};

/* A source as the plan stage sees it: reachable now (dirfd/name) and later (root_fd/rel or path). */
struct src_ref {
	int dirfd;            /* its directory, open now (a walk's dirfd), or -1 (then reached below root_fd) */
	const char *name;     /* in dirfd */
	int root_fd;          /* AT_FDCWD: path as it stands */
	const char *rel;
	const char *path;     /* as shown */
	const struct sweep_stat *st;
	const char *link;     /* a symlink's target if already read */
	unsigned flags;       /* SWEEP_COPY_SRC_FOLLOWED, SWEEP_COPY_SRC_SUPPLIED, SWEEP_COPY_SRC_MODE, _OWNER */
	const struct sweep_entry *walked; /* the walk entry, when it came from one (plans by it) */
	/* SWEEP_COPY_SRC_SUPPLIED: its attributes; a regular file's item is made into *feed, not queued */
	const struct sweep_copy_xattr *xattrs;
	size_t nxattrs;
	struct qitem *feed;
};

struct copy_thread;
struct tjob;
struct clone_pool;

struct sweep_copy {
	struct sweep_copy_opts o;
	mode_t umask;
	uid_t euid; /* who the copies are made as (the owner a new file gets: copy_write.c) */
	gid_t egid;
	int stop; /* a callback's negative value or -ECANCELED: everything stops */
	struct sweep_copy_stats stats;
	pthread_mutex_t step_mu; /* on_step calls never overlap (the writer thread makes one) */
	/* the destination (copy_dest.c) */
	int dest_fd;   /* the destination root (O_PATH directory), -1 until sweep_copy_set_dest() */
	uint64_t dest_dev;
	char *show;    /* prefix of destination names in messages */
	char *showbuf; /* sweep__dst_show() result */
	size_t showcap;
	bool no_tmpfile; /* this destination refused O_TMPFILE once: named temporaries from now on (atomic) */
	/* the plan stage's */
	struct sweep_batch *batch; /* queued regular files: sorted and read a batch at a time */
	struct qitem *q;
	size_t nq, capq;
	size_t qbytes; /* what the queue holds now, strings included (a batch is bounded by it) */
	struct lnode **links; /* copy_links.c: open addressing */
	size_t nlinks, caplinks;
	char **made; /* the destinations sweep_copy_tree() was given so far (cp's "just-created") */
	size_t nmade, capmade;
	struct dirmeta *dirs; /* copy_dirs.c */
	size_t ndirs, capdirs;
	size_t *fresh; /* copy_fresh.c: indexes into dirs of those this sweep_copy_tree() made; SIZE_MAX: free */
	size_t fresh_cap, fresh_count, fresh_from;
	bool fresh_on, fresh_is; /* in a sweep_copy_tree(); the answer for dcache's directory of generation fresh_gen */
	uint64_t fresh_gen;
	/* the read stage's */
	struct writer *writer; /* writes made on this thread */
	struct fcopy cur;      /* the file copied on this thread (cur.q NULL: none) */
	struct fcopy *names;   /* copies made on this thread waiting for their name (copy_read.c), in read order */
	size_t nnames, names_max;
	struct dest_cache dcache; /* this thread's: the plan stage's and its copies' */
	struct fcopy *wcur;    /* the copy writer's writes go to (a failed io_uring write is its failure) */
	struct copy_thread *thread; /* the writer thread, NULL when copies are made on this thread */
	struct tjob *job;      /* the file being read, when the writer thread makes its copy */
	struct clone_pool *clone; /* copy_clone.c: the clone pool of this batch, NULL: none yet */
	bool clone_off;        /* no pool could be started (too few descriptors, no CPU to spare) */
	size_t clone_pending;  /* 1 + the queue index of the file begun for the pool, 0: none */
	size_t *retry;         /* queue indexes to read again by themselves once the batch is read */
	size_t nretry, capretry;
	struct late_link *late; /* later names out of descriptors while the batch was read: linked after it */
	size_t nlate, caplate;
	const struct sweep_plan_entry *retry_entry; /* the file read again by itself now (copy_read.c) */
	struct carried *carry;  /* out of descriptors when read again too: queued at the next flush (copy_carry.c) */
	size_t ncarry, capcarry;
	/*
	 * (source, destination) filesystem pairs that could not clone: the
	 * ioctl is skipped for them. Several: copies to two destination
	 * filesystems alternate, and one remembered pair made each file to the
	 * other one try again (and stay off its writer thread).
	 */
	struct noclone noclone[COPY_NOCLONE_PAIRS];
	unsigned nnoclone, noclone_next;
	/*
	 * 1 + the device whose clones onto itself were refused (0: none yet),
	 * atomic: read by rd_read_after_begin on any disk's reader thread.
	 */
	uint64_t noclone_self;
	uint64_t plan_dst_dev; /* the plan stage's: the device of the directory of the entry planned now */
	bool batch_warm; /* the batch being read was found in the page cache: its copies are made on this thread */
	bool test_thread_all; /* test builds: SWEEP_TEST_COPY=thread */
};

/* ---- the stages ---- */

/* copy_plan.c: one entry of any type (top: named by the caller, as cp's operand). */
/* The source of a public sweep_copy_src, checked (its st looked up when NULL): 0 or -errno (reported). */
int sweep__plan_src(struct sweep_copy *c, const struct sweep_copy_src *src, uint64_t cookie, struct sweep_copy_src *in,
		    struct sweep_stat *sst, struct src_ref *s);
void sweep__plan_item_free(struct qitem *it);
int sweep__plan_entry_ref(struct sweep_copy *c, const struct src_ref *s, const char *dst, uint64_t cookie, bool top);
/* cp without -r: the data of a FIFO or a device named src, copied into dst (a regular file, or a FIFO or device there). */
int sweep__plan_stream(struct sweep_copy *c, const char *src, const struct sweep_stat *st, const char *dst);

/* copy_read.c */
extern const struct sweep_read_ops sweep__read_ops;
/* The copies made on this thread that wait for their name: named, then settled (before anything read later). */
void sweep__read_names_flush(struct sweep_copy *c);
/* A batch is about to be sorted: SWEEP_COPY_STEP_SORT with its number of files. */
int sweep__read_on_sort(const struct sweep_plan *p, void *ctx);
int sweep__read_on_batch(const struct sweep_plan *p, void *ctx);
int sweep__read_on_batch_end(const struct sweep_plan *p, int status, void *ctx);
/* Every queued item let go (the batch was read, or the run stopped); the links of those never read fail. */
void sweep__read_queue_drop(struct sweep_copy *c);
/* A source open as fd (a stream), read to its end (data) into the copy of q, then settled. 0 or -errno (reported). */
int sweep__read_stream(struct sweep_copy *c, const struct qitem *q, int fd, bool data);

/* copy_write.c: nothing here reports; failures are kept in the fcopy. */
struct fcopy *sweep__write_start(struct fcopy *f, const struct qitem *q);
/* The copy made in its directory (or the FIFO/device opened, into); -errno recorded as SWEEP_COPY_OP_CREATE. */
int sweep__write_open(struct sweep_copy *c, struct fcopy *f, bool dense);
int sweep__write_data(struct writer *w, struct fcopy *f, const void *buf, size_t len, uint64_t off, uint64_t tag);
/* Size, metadata (of the source open as srcfd, or f->blob when -1), durability, the WRITTEN step, the name. */
void sweep__write_finish(struct sweep_copy *c, struct fcopy *f, int srcfd);
/*
 * The same, but an unnamed copy (O_TMPFILE, made through a thread's cache)
 * is left to be named with others of its directory: true when it waits
 * for sweep__write_name_group, false when finished (named or failed).
 */
bool sweep__write_finish_unnamed(struct sweep_copy *c, struct fcopy *f, int srcfd);
/* Name the n copies left unnamed: through one lookup of each of their directories, made now. */
void sweep__write_name_group(const struct sweep_copy *c, struct fcopy *fs, size_t n);
/* Let go of what it holds: a named temporary of ours not put in place is removed. */
void sweep__write_close(struct fcopy *f);
/* Free what the outcome holds (after it was settled). */
void sweep__write_free(struct fcopy *f);
void sweep__write_fail(struct fcopy *f, enum sweep_copy_op op, int err);

/* copy_thread.c: the writer thread, carrying files from the read stage to the write stage. */
/* *ret NULL where copies stay on the caller's thread (one CPU, SWEEP_COPY_THREADS=0, io_uring writes). */
int sweep__thread_new(struct sweep_copy *c, struct copy_thread **ret);
/* Waits for the thread (every job must have been reaped). Accepts NULL. */
void sweep__thread_free(struct copy_thread *t);
/* Whether the thread can make this file's copy: its data read, no clone or kernel copy to try. */
bool sweep__thread_takes(const struct sweep_copy *c, const struct qitem *q, const struct sweep_file *f);
/* The file is open: hand it over (NULL: no memory, copy it here). */
struct tjob *sweep__thread_begin(struct sweep_copy *c, const struct qitem *q, uint64_t size, bool dense);
void sweep__thread_data(struct sweep_copy *c, struct tjob *j, const void *buf, size_t len, uint64_t off);
void sweep__thread_end(struct sweep_copy *c, struct tjob *j, const struct sweep_file *f, int status, uint64_t length);
/* Settle the copies the thread finished, in the order they were read; with all, wait for every one. */
void sweep__thread_reap(struct sweep_copy *c, bool all);
/* The destination root changed (no job waits): the thread's cached directory goes. Accepts NULL. */
void sweep__thread_dest_changed(struct copy_thread *t);
/* Write requests the threads made. */
uint64_t sweep__thread_write_requests(const struct copy_thread *t);
/* Writer threads that made copies (one per destination device, up to SWEEP_COPY_THREADS). */
unsigned sweep__thread_writers(const struct copy_thread *t);

/* copy_clone.c: clones and kernel copies, and the clone pool that makes them (the read stage's). */
/* FICLONE of srcfd into fc's copy: 0 (fc's how set, its size and bytes size) or the errno. */
int sweep__clone_file(struct fcopy *fc, int srcfd, uint64_t size);
/* A clone's size and bytes: what the copy holds (the source may have changed since its size was taken). */
void sweep__clone_sized(struct fcopy *fc);
/* copy_file_range over map's regions, then to the end: 1 refused with nothing copied, 0 done or failed (in fc). */
int sweep__clone_range(struct fcopy *fc, int srcfd, const struct sweep_extent *map, size_t nmap, uint64_t size);
/* SWEEP_READ_CHANGED where srcfd no longer has fc->st's size and ctime, else status. */
int sweep__clone_status(const struct fcopy *fc, int srcfd, int status);
/* Whether the pool makes this file's copy: onto its own filesystem, dense, no writer thread's. */
bool sweep__clone_takes(const struct sweep_copy *c, const struct qitem *q, const struct sweep_file *f);
/* The reader ended the file (status >= 0): its copy made on the pool, or here; settled in read order. */
void sweep__clone_submit(struct sweep_copy *c, const struct qitem *q, const struct sweep_file *f, int status);
/* Settle the pool's finished copies in read order; with all, wait for every one. */
void sweep__clone_reap(struct sweep_copy *c, bool all);
/* Every copy settled, the threads stopped. */
void sweep__clone_free(struct sweep_copy *c);

/* copy_settle.c (on the caller's thread) */
/* Report a finished copy: failed, or done (its other names linked); a file out of descriptors is kept for a retry. */
void sweep__settle_file(struct sweep_copy *c, const struct fcopy *f);
/* The first copy of n is final (or failed): its other names get their links (or the error). */
void sweep__settle_links(struct sweep_copy *c, struct lnode *n, bool ok, enum sweep_copy_op op, int err);

/* copy_carry.c (on the caller's thread) */
/* f, read again by itself (c->retry_entry) and out of descriptors again, kept for the next flush: true when it is. */
bool sweep__carry(struct sweep_copy *c, const struct fcopy *f);
/* The files carried, queued again (a full batch is read inside); those that cannot be are reported. */
void sweep__carry_requeue(struct sweep_copy *c);
/* Those never queued again reported as they failed, and the list freed. */
void sweep__carry_free(struct sweep_copy *c);

/* ---- shared pieces (they call no stage) ---- */

/* copy_report.c: the caller's callbacks. */
int sweep__copy_stopped(struct sweep_copy *c);
/* on_error; returns err (or -EINVAL for a check that has no errno). */
int sweep__report(struct sweep_copy *c, enum sweep_copy_op op, int err, const char *src, const char *dst,
		  uint64_t cookie);
void sweep__report_meta(struct sweep_copy *c, enum sweep_copy_meta op, int err, const char *src, const char *dst,
			uint64_t cookie);
void sweep__report_done(struct sweep_copy *c, const char *src, const char *dst, const struct sweep_stat *st,
			enum sweep_copy_how how, uint64_t bytes, uint64_t cookie, bool existed);
/* The same, where what stood at dst was kept under backup (as shown, or NULL). */
void sweep__report_done_backup(struct sweep_copy *c, const char *src, const char *dst, const struct sweep_stat *st,
			       enum sweep_copy_how how, uint64_t bytes, uint64_t cookie, bool existed,
			       const char *backup);
/* on_step, serialised across threads; returns the run's stop value. */
int sweep__report_step(struct sweep_copy *c, enum sweep_copy_step step, const char *src, const char *dst,
		       uint64_t cookie);
/* on_step as the writer thread calls it (does not touch the run's state): the callback's value. */
int sweep__report_step_raw(struct sweep_copy *c, enum sweep_copy_step step, const char *src, const char *dst,
			   uint64_t cookie);
void sweep__report_bytes(struct sweep_copy *c, uint64_t n);
/* Apply metadata, reporting each failed step against dst_name. */
void sweep__report_apply_meta(struct sweep_copy *c, const struct meta_ref *src, const struct meta_ref *dst,
			      const struct sweep_stat *st, unsigned what, const char *src_name, const char *dst_name,
			      uint64_t cookie);

/* copy_dest.c: the destination root and the names below it. */
/* A destination name as shown in messages (a buffer the next call reuses). */
const char *sweep__dst_show(struct sweep_copy *c, const char *dst);
/* The same into a buffer of the caller's (the writer thread's). */
const char *sweep__dst_show_in(const struct sweep_copy *c, const char *dst, char **buf, size_t *cap);
/*
 * The directory holding dst, beneath the destination root, opened O_PATH
 * without following symlinks; *ret_name points at dst's last component.
 * fd (the caller closes it) or -errno (-ELOOP: a symlink in the way).
 */
int sweep__dest_dir(const struct sweep_copy *c, const char *dst, const char **ret_name);
/* The directory a queued file's copy goes into: below the destination, or the write-through target's. */
int sweep__dest_item_dir(const struct sweep_copy *c, const struct qitem *q, const char **ret_name);
/* The source's directory and name, opened now for what can only be read by name (symlinks' xattrs). */
int sweep__src_dir(const struct src_ref *s, const char **ret_name);
/*
 * The same for a call that ends before the source's entry is let go: the
 * walk's descriptor borrowed where there is one (*closeme -1), else one
 * opened now (*closeme: it, for the caller to close). fd or -errno.
 */
int sweep__src_dir_at(const struct src_ref *s, const char **ret_name, int *closeme);
/*
 * The directory of dst: the cached descriptor (borrowed: the caller never
 * closes it) when it is dst's directory, else looked up afresh
 * (sweep__dest_dir), stat'ed and cached in place of the old one. fd or -errno.
 */
int sweep__dest_cache_dir(const struct sweep_copy *c, struct dest_cache *dc, const char *dst, const char **ret_name);
/*
 * Out of descriptors (EMFILE, ENFILE) on the caller's thread: what it
 * caches goes back (c->dcache; never from a writer thread, whose cache is
 * its own), true when anything did, so that one try more may succeed.
 */
bool sweep__fds_give_back(struct sweep_copy *c);
/* sweep__dest_dir on the caller's thread, tried once more after sweep__fds_give_back() where it ran out of descriptors. */
int sweep__dest_dir_mine(struct sweep_copy *c, const char *dst, const char **ret_name);
/* Close the cached descriptor (the engine changed the tree, or is done). */
void sweep__dest_cache_drop(struct dest_cache *dc);
void sweep__dest_cache_free(struct dest_cache *dc);
/* A temporary name: ".sweep-tmp.XXXXXXXX" into buf (at least 32 bytes). */
void sweep__dest_tmp_name(char *buf);
/* Put the entry at tmp (in dirfd) onto name: rename, or without replacing with no-clobber. */
int sweep__dest_put(const struct sweep_copy *c, int dirfd, const char *tmp, const char *name);
/*
 * Before name (in dirfd) is replaced: where the run keeps backups, what
 * stands there (not a directory) gets a second name, its backup's, in
 * *ret_backup (malloc'ed; NULL: nothing there, or no backups). 0 or -errno.
 */
int sweep__dest_backup(const struct sweep_copy *c, int dirfd, const char *name, char **ret_backup);
/* The backup bk made of dst (bk: a name in dst's directory) as shown in messages (malloc'ed, or NULL). */
char *sweep__dest_backup_show(const struct sweep_copy *c, const char *dst, const char *bk);
/* Make dst (beneath the destination) a hard link to target, through a temporary name: 0 or -errno. */
int sweep__dest_link(const struct sweep_copy *c, const char *target, const char *dst);
/* The permission bits a new copy of a source with this mode gets when modes are not preserved. */
mode_t sweep__dest_new_mode(const struct sweep_copy *c, uint32_t src_mode);

/* copy_links.c: the hard-link table. */
struct lnode *sweep__links_find(const struct sweep_copy *c, const struct sweep_stat *st);
struct lnode *sweep__links_add(struct sweep_copy *c, const struct sweep_stat *st, const char *dst);
/* A later name waits for the first copy: 0 or -ENOMEM. */
int sweep__links_follow(struct lnode *n, const char *src, const char *dst, const struct sweep_stat *st,
			uint64_t cookie);
/* n's first copy is now dst: 0 or -ENOMEM. */
int sweep__links_name(struct lnode *n, const char *dst);
void sweep__links_free(struct sweep_copy *c);

/* copy_make.c: what is made at once, each reported (done or failed). */
int sweep__make_dir(struct sweep_copy *c, const struct src_ref *s, int dirfd, const char *name, const char *dst,
		    const struct stat *dst_st, uint64_t cookie);
int sweep__make_symlink(struct sweep_copy *c, const struct src_ref *s, int dirfd, const char *name, const char *dst,
			bool existed, uint64_t cookie);
int sweep__make_special(struct sweep_copy *c, const struct src_ref *s, int dirfd, const char *name, const char *dst,
			bool existed, uint64_t cookie);
int sweep__make_link(struct sweep_copy *c, const char *target, const char *src, const char *dst,
		     const struct sweep_stat *st, uint64_t cookie);
/* As sweep__make_link, but out of descriptors it reports nothing and says -EMFILE/-ENFILE (to be tried later). */
int sweep__make_link_or_defer(struct sweep_copy *c, const char *target, const char *src, const char *dst,
			      const struct sweep_stat *st, uint64_t cookie);
/* copy_settle.c: the links deferred for want of descriptors, made now (failures reported). */
void sweep__settle_late_links(struct sweep_copy *c);
/* cp -l and -s: dst a hard link to the source, or a symlink to its path (exists: something stands at dst). */
int sweep__make_to_source(struct sweep_copy *c, const struct src_ref *s, int dirfd, const char *name,
			  const char *dst, bool exists, bool replace, bool symbolic, uint64_t cookie);

/* copy_dirs.c: directory metadata, deferred to the end. */
/* 0 or -ENOMEM; *capture_err: the source's xattrs/ACLs could not be read now (the rest is still applied). */
int sweep__dirs_add(struct sweep_copy *c, const struct src_ref *s, const char *dst, bool created, int *capture_err);
void sweep__dirs_apply(struct sweep_copy *c);
void sweep__dirs_free(struct sweep_copy *c);

/* copy_fresh.c: the directories one sweep_copy_tree() made, whose files need no look at their names. */
void sweep__fresh_begin(struct sweep_copy *c);
void sweep__fresh_end(struct sweep_copy *c);
/* c->dirs[idx], just made (with the walk on; else nothing). */
void sweep__fresh_add(struct sweep_copy *c, size_t idx);
/* dc's directory was made by this walk and still looks it (owner-only, ours). */
bool sweep__fresh_dir(struct sweep_copy *c, const struct dest_cache *dc);
/* A destination name's n bytes, hashed (FNV-1a): the fresh set's key, and the clone pool's directory key. */
static inline uint64_t sweep__name_hash(const char *s, size_t n)
{
	uint64_t h = 14695981039346656037u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211u;
	return h;
}

/* The errno a clone from src to dst failed with before (then it is not tried again), or 0. */
static inline int copy_noclone_err(const struct sweep_copy *c, uint64_t src, uint64_t dst)
{
	for (unsigned i = 0; i < c->nnoclone; i++)
		if (c->noclone[i].src == src && c->noclone[i].dst == dst)
			return c->noclone[i].err;
	return 0;
}

static inline size_t copy_batch_bytes(const struct sweep_copy *c)
{
	return c->o.batch_bytes ? c->o.batch_bytes : COPY_DEFAULT_BATCH_BYTES;
}

#endif
