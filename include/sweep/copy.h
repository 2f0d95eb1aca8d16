/* SPDX-License-Identifier: MIT */
/*
 * copy: the copy engine behind sweep-cp and sweep-sync, for any program.
 * See sweep_copy_new(3) for the whole contract; in short:
 *
 *  - Physical order. Regular files are queued into a plan and copied in
 *    batches: each batch is read in one sweep of the source, and the
 *    destination files are created and written in that same order.
 *  - Nothing outside the destination is touched. Everything the engine
 *    makes, replaces or removes is below the destination directory given to
 *    sweep_copy_set_dest(), reached from its descriptor one component at a
 *    time without following any symlink (sweep_open_beneath(3)); a
 *    directory replaced mid-run is an error for what goes in it, never
 *    followed. Sources are read the same way below their walk root, and a
 *    source file is only copied when the file opened is the one planned.
 *  - Atomic replacement. A file is written as an unnamed O_TMPFILE (or,
 *    where the filesystem has none, under a fresh name made with O_EXCL),
 *    completed with its metadata set through its own descriptor, and only
 *    then linked or renamed onto its final name: a final name holds the old
 *    entry or the complete new one, never a partial file. The engine only
 *    ever removes names it created itself in this run.
 *  - Data path per file: FICLONE, then copy_file_range on one filesystem,
 *    else the reader's data (io_uring or pread) written as it arrives.
 *  - One writer thread. Where the machine has more than one CPU, copies
 *    that take the reader's data are created, written, completed and named
 *    on a thread of the engine's own, one file after the other in read
 *    order, while the caller's thread reads the next files
 *    (SWEEP_COPY_THREADS=0 in the environment, or io_uring writes, keep
 *    them on the caller's thread). The thread blocks every signal. Every
 *    callback is made on the caller's thread, from within the engine's
 *    functions, except on_step's SWEEP_COPY_STEP_WRITTEN, which comes from
 *    the thread that completed the copy; calls to on_step never overlap.
 *
 * The engine never prints: errors go to on_error, completed entries to
 * on_done, data progress to on_bytes, and every step of every file to
 * on_step. Functions return 0 (or a count) or -errno.
 */
#ifndef SWEEP_COPY_H
#define SWEEP_COPY_H

#include <signal.h>
#include <stdbool.h>
#include <sweep/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* sweep_copy_opts.preserve: what metadata the copies get from their sources */
#define SWEEP_PRESERVE_MODE   0x01u  /* permission bits incl. set-id and sticky */
#define SWEEP_PRESERVE_OWNER  0x02u  /* uid and gid */
#define SWEEP_PRESERVE_TIMES  0x04u  /* atime and mtime, nanoseconds */
#define SWEEP_PRESERVE_XATTR  0x08u  /* extended attributes except the ACL ones */
#define SWEEP_PRESERVE_ACL    0x10u  /* POSIX access ACL, and the default ACL of directories */
#define SWEEP_PRESERVE_ALL    0x1fu
#define SWEEP_PRESERVE_STRICT 0x100u /* a destination without xattr/ACL support is an error when the source has some */
#define SWEEP_PRESERVE_OMIT_DIR_TIMES  0x200u /* with TIMES: directories keep the times they get (rsync -O) */
#define SWEEP_PRESERVE_OMIT_LINK_TIMES 0x400u /* with TIMES: symlinks keep the times they get (rsync -J) */
/*
 * rsync's --fake-super: no chown, no set-id bits, devices, FIFOs, sockets and
 * symlinks made as placeholder regular files; the wanted type, mode, device
 * and owner kept in the xattr user.rsync.%stat, other namespaces' xattrs
 * as user.rsync.NAME (sweep_copy_new(3)).
 */
#define SWEEP_PRESERVE_FAKE_SUPER 0x800u
/* the access time of non-directories, without TIMES (rsync -U without -t); TIMES sets it anyway */
#define SWEEP_PRESERVE_ATIME 0x1000u

/* sweep_copy_opts.flags */
#define SWEEP_COPY_RECURSIVE     0x001u /* sweep_copy_tree() descends into directories; else a directory is an error */
#define SWEEP_COPY_DEREF_ALL     0x002u /* follow every symlink in the source (cp -L) */
#define SWEEP_COPY_DEREF_ROOTS   0x004u /* follow a symlink named as the tree's source only (cp -H, and cp without -r) */
#define SWEEP_COPY_LINKS         0x008u /* keep hard links as hard links */
#define SWEEP_COPY_NO_CLOBBER    0x010u /* never replace an existing destination */
#define SWEEP_COPY_UPDATE        0x020u /* replace an existing destination only when the source's mtime is newer */
#define SWEEP_COPY_FSYNC         0x040u /* fsync each file before it is put in place */
#define SWEEP_COPY_NO_SAME_FILE_CHECK 0x080u /* the caller checked that source and destination are not one file */
#define SWEEP_COPY_WRITE_THROUGH 0x100u /* the destination NAMED to sweep_copy_tree() is a symlink to a file:
					   write that file (cp); never applies inside a tree */
#define SWEEP_COPY_ONE_FS        0x200u /* sweep_copy_tree() stays on the source's filesystem */
#define SWEEP_COPY_REMOVE_DEST   0x400u /* an existing destination that is another name of the source's inode
					   is replaced by a copy (cp --remove-destination) */
#define SWEEP_COPY_DEFAULT_MODES 0x800u /* without SWEEP_PRESERVE_MODE, new copies get 0666 (directories and
					   sockets 0777) less the umask, not the source's (cp --no-preserve=mode) */
#define SWEEP_COPY_FORCE         0x1000u /* an existing destination that cannot be written through is replaced:
					    a symlink named as destination that loops; with HARD_LINK or
					    SYMBOLIC_LINK, any existing non-directory (cp -f) */
#define SWEEP_COPY_WRITE_DANGLING 0x2000u /* with WRITE_THROUGH, a dangling symlink named as destination: the
					     file it names is made (POSIXLY_CORRECT cp); else an error */
#define SWEEP_COPY_HARD_LINK     0x4000u /* non-directories become hard links to their sources (cp -l) */
#define SWEEP_COPY_SYMBOLIC_LINK 0x8000u /* non-directories become symlinks to their sources' paths (cp -s) */
#define SWEEP_COPY_ATTRS_ONLY    0x10000u /* regular files: no data; an existing one keeps its data and gets the
					     metadata, a missing one is made empty (cp --attributes-only) */
#define SWEEP_COPY_CONTENTS      0x20000u /* with RECURSIVE, FIFOs and devices are read and their data copied into
					     regular files, as without it (cp --copy-contents) */

/* sweep_copy_opts.backup: what becomes of an existing non-directory an entry replaces */
enum sweep_copy_backup {
	SWEEP_COPY_BACKUP_NONE = 0,     /* replaced */
	SWEEP_COPY_BACKUP_SIMPLE = 1,   /* kept as NAME + suffix (one backup, replaced by the next) */
	SWEEP_COPY_BACKUP_NUMBERED = 2, /* kept as NAME.~N~, N one more than the highest there */
	SWEEP_COPY_BACKUP_EXISTING = 3, /* numbered where NAME already has numbered backups, else simple */
};

enum sweep_copy_reflink {
	SWEEP_COPY_REFLINK_AUTO = 0,   /* clone or copy_file_range where possible, else read and write */
	SWEEP_COPY_REFLINK_ALWAYS = 1, /* clone or fail */
	SWEEP_COPY_REFLINK_NEVER = 2,  /* always read and write */
};

enum sweep_copy_sparse {
	SWEEP_COPY_SPARSE_AUTO = 0,   /* holes where the source has holes */
	SWEEP_COPY_SPARSE_ALWAYS = 1, /* also zero-filled blocks become holes */
	SWEEP_COPY_SPARSE_NEVER = 2,  /* holes are written as zeros */
};

enum sweep_copy_writes {
	SWEEP_COPY_WRITES_AUTO = 0,   /* pwrite: measured no gain from io_uring for buffered writes */
	SWEEP_COPY_WRITES_URING = 1,  /* io_uring writes, where io_uring works */
	SWEEP_COPY_WRITES_PWRITE = 2,
};

/* What an error is about. */
enum sweep_copy_op {
	SWEEP_COPY_OP_STAT = 1,          /* cannot stat the source */
	SWEEP_COPY_OP_OPEN_SRC,          /* cannot open the source for reading (-ESTALE: replaced since it was listed) */
	SWEEP_COPY_OP_READ,              /* error reading the source */
	SWEEP_COPY_OP_OPENDIR,           /* a source directory could not be read */
	SWEEP_COPY_OP_READLINK,          /* cannot read a source symlink */
	SWEEP_COPY_OP_CREATE,            /* cannot create the destination file */
	SWEEP_COPY_OP_WRITE,             /* error writing the destination */
	SWEEP_COPY_OP_CLONE,             /* SWEEP_COPY_REFLINK_ALWAYS and the clone failed */
	SWEEP_COPY_OP_MKDIR,             /* cannot create a directory */
	SWEEP_COPY_OP_SYMLINK,           /* cannot create a symlink */
	SWEEP_COPY_OP_SPECIAL,           /* cannot create a FIFO, device or socket */
	SWEEP_COPY_OP_LINK,              /* cannot create a hard link */
	SWEEP_COPY_OP_RENAME,            /* cannot put the finished copy in place */
	SWEEP_COPY_OP_META,              /* preserving metadata (meta says which) */
	SWEEP_COPY_OP_OVERWRITE_DIR,     /* a directory is in the way of a non-directory (err 0) */
	SWEEP_COPY_OP_OVERWRITE_NONDIR,  /* a non-directory is in the way of a directory (err 0) */
	SWEEP_COPY_OP_INTO_SELF,         /* a directory copied into itself (err 0) */
	SWEEP_COPY_OP_SAME_FILE,         /* source and destination are one file (err 0) */
	SWEEP_COPY_OP_OMIT_DIR,          /* a directory without SWEEP_COPY_RECURSIVE (err 0) */
	SWEEP_COPY_OP_CHANGED,           /* warning: the source changed while it was read (err 0); the copy holds what was read */
	SWEEP_COPY_OP_DANGLING,          /* SWEEP_COPY_WRITE_THROUGH onto a dangling symlink (err 0) */
	SWEEP_COPY_OP_NEW_OVERWRITE,     /* sweep_copy_tree() onto what an earlier call of this run made (err 0) */
	SWEEP_COPY_OP_NEW_SYMLINK,       /* sweep_copy_tree() would write through a symlink an earlier call made (err 0) */
	SWEEP_COPY_OP_STAT_DEST,         /* cannot stat the destination (src is the destination as shown) */
	SWEEP_COPY_OP_BACKUP,            /* cannot back up the destination */
	SWEEP_COPY_OP_BACKUP_SOURCE,     /* the destination's backup would replace the source itself (err 0) */
	SWEEP_COPY_OP_LINK_SYMBOLIC,     /* SYMBOLIC_LINK: cannot make the destination a symlink to the source */
	SWEEP_COPY_OP_LINK_RELATIVE,     /* SYMBOLIC_LINK: a relative source, a destination outside the current
					    directory (the symlink would not name the source; err 0) */
};

/* Which metadata step failed (SWEEP_COPY_OP_META). */
enum sweep_copy_meta {
	SWEEP_COPY_META_OWNER = 1,
	SWEEP_COPY_META_XATTR = 2,
	SWEEP_COPY_META_ACL = 3,
	SWEEP_COPY_META_MODE = 4,
	SWEEP_COPY_META_TIMES = 5,
};

/*
 * Passed to on_error. The engine fills it; fields may be added at the end.
 * dst is the destination as shown (the display prefix of
 * sweep_copy_set_dest() and the name below it).
 */
struct sweep_copy_error {
	enum sweep_copy_op op;
	enum sweep_copy_meta meta; /* for SWEEP_COPY_OP_META */
	int err;                   /* negative errno, or 0 where the op says so */
	const char *src;           /* may be NULL */
	const char *dst;           /* may be NULL */
	uint64_t cookie;           /* the caller's value from sweep_copy_entry(), 0 from sweep_copy_tree() */
};

/* How an entry was made, for on_done. */
enum sweep_copy_how {
	SWEEP_COPY_HOW_DATA = 1, /* read and written */
	SWEEP_COPY_HOW_CLONE,    /* FICLONE */
	SWEEP_COPY_HOW_RANGE,    /* copy_file_range */
	SWEEP_COPY_HOW_LINK,     /* hard link to an earlier copy */
	SWEEP_COPY_HOW_DIR,      /* directory created (or an existing one reused) */
	SWEEP_COPY_HOW_SYMLINK,
	SWEEP_COPY_HOW_SPECIAL,  /* FIFO, device or socket */
	SWEEP_COPY_HOW_SKIPPED,  /* left alone: no-clobber and it exists, or update and it is not older */
};

/* Passed to on_done. */
struct sweep_copy_done {
	const char *src;
	const char *dst;
	const struct sweep_stat *st; /* the source as copied (a regular file: fstat of what was read) */
	enum sweep_copy_how how;
	uint64_t bytes;              /* data bytes copied */
	uint64_t cookie;
	bool existed;                /* the destination existed: a directory reused, or an entry replaced or left alone */
	const char *backup;          /* what it replaced was kept under this name (as shown), else NULL */
};

/* The steps of a file's copy, for on_step (progress, tracing, tests). */
enum sweep_copy_step {
	SWEEP_COPY_STEP_OPENED = 1,  /* the source file is open and checked; its copy is about to be created */
	SWEEP_COPY_STEP_WRITTEN,     /* the copy is complete under its temporary; it is about to be put in place */
	SWEEP_COPY_STEP_FLUSH,       /* a batch of files is about to be read (dst NULL) */
	SWEEP_COPY_STEP_FINISH,      /* directory metadata is about to be applied (dst NULL) */
	SWEEP_COPY_STEP_SORT,        /* a batch is about to be sorted (src, dst NULL; cookie: its number of files) */
};

struct sweep_copy_opts {
	size_t size;                      /* sizeof(struct sweep_copy_opts) */
	unsigned flags;                   /* SWEEP_COPY_* */
	unsigned preserve;                /* SWEEP_PRESERVE_* */
	enum sweep_copy_reflink reflink;
	enum sweep_copy_sparse sparse;
	enum sweep_copy_writes writes;
	enum sweep_order order;           /* source read order, AUTO = the filesystem's policy */
	enum sweep_backend backend;
	size_t batch_files;               /* files per sweep, 0 = no bound */
	size_t batch_bytes;               /* plan (and queue) memory per sweep, 0 = 32 MiB */
	unsigned queue_depth;             /* reader queue depth, 0 = from the device */
	/* <0 from a callback stops the run; the engine then returns that value. All optional. */
	int (*on_error)(const struct sweep_copy_error *err, void *ctx);
	int (*on_done)(const struct sweep_copy_done *done, void *ctx);
	void (*on_bytes)(uint64_t bytes, void *ctx);                /* data written, as it is written */
	void (*on_plan)(uint64_t files, uint64_t bytes, void *ctx); /* a file was queued (progress totals) */
	int (*on_step)(enum sweep_copy_step step, const char *src, const char *dst, uint64_t cookie, void *ctx);
	void *ctx;
	/* When *cancel becomes non-zero (a signal handler sets it), the run stops at the next file or piece
	 * of data, nothing half-made is left under a final name, and the functions return -ECANCELED. */
	volatile const sig_atomic_t *cancel;
	/* Backups of what is replaced (sweep_copy_backup_name(3)); suffix NULL: "~". */
	enum sweep_copy_backup backup;
	const char *backup_suffix;
	/*
	 * Asked before an existing non-directory at dst (shown as given to
	 * on_error) is replaced, as cp -i asks: 1 replace it, 0 leave it (done
	 * as SWEEP_COPY_HOW_SKIPPED), <0 stop. NULL: replace.
	 */
	int (*on_exists)(const char *src, const char *dst, const struct sweep_stat *dst_st, void *ctx);
	/*
	 * With SWEEP_PRESERVE_XATTR, whether the extended attribute name (not
	 * an ACL) is the copy's business (rsync's xattr filter rules, "-x"):
	 * false, and the source's is not copied and the destination's is
	 * neither removed nor changed. NULL: every one is.
	 */
	bool (*xattr_wanted)(const char *name, void *ctx);
};

/* One extended attribute of a supplied source (SWEEP_COPY_SRC_SUPPLIED); ACLs are their system.posix_acl_* ones. */
struct sweep_copy_xattr {
	const char *name;
	const void *value;
	size_t len;
};

/* A source given to sweep_copy_entry(). */
struct sweep_copy_src {
	size_t size;                 /* sizeof(struct sweep_copy_src) */
	/*
	 * Where the source is: rel below the directory root_fd, reached
	 * without following any symlink; or, with root_fd AT_FDCWD, the path
	 * rel as it stands (a name the user gave), its final component
	 * followed only with SWEEP_COPY_SRC_FOLLOWED.
	 */
	int root_fd;
	const char *rel;
	const char *path;            /* the source as shown in messages */
	const struct sweep_stat *st; /* lstat of it (stat when followed); NULL: the engine looks */
	const char *link;            /* a symlink's target when already read, else NULL */
	unsigned flags;              /* SWEEP_COPY_SRC_* */
	/* SWEEP_COPY_SRC_SUPPLIED: the source's extended attributes, those the preserve flags ask for are applied */
	const struct sweep_copy_xattr *xattrs;
	size_t nxattrs;
};

/* sweep_copy_src.flags */
#define SWEEP_COPY_SRC_FOLLOWED 0x1u /* a symlink stands at the source and st describes its target */
/*
 * The source is not on this machine (another host's file, sent by a
 * program): nothing is read from root_fd/rel. st says what it is (required),
 * link a symlink's target (required for one), xattrs its attributes; a
 * regular file's data comes from the caller through sweep_copy_feed_begin().
 */
#define SWEEP_COPY_SRC_SUPPLIED 0x2u
/* With SWEEP_PRESERVE_MODE: the copy gets st->mode's permission bits, not those of the file read (rsync --chmod). */
#define SWEEP_COPY_SRC_MODE     0x4u
/* With SWEEP_PRESERVE_OWNER: the copy gets st's uid and gid, not the read file's (rsync --usermap, --chown). */
#define SWEEP_COPY_SRC_OWNER    0x8u

struct sweep_copy_stats {
	size_t size;             /* sizeof(struct sweep_copy_stats), set by the caller */
	uint64_t files;          /* regular files copied */
	uint64_t dirs;           /* directories created or reused */
	uint64_t others;         /* symlinks, specials, hard links */
	uint64_t skipped;
	uint64_t bytes;          /* data bytes copied (any method) */
	uint64_t cloned;
	uint64_t ranged;
	uint64_t batches;        /* sweeps run */
	uint64_t errors;         /* errors reported (warnings not counted) */
	uint64_t write_requests; /* data writes submitted, not counting clones and copy_file_range */
	uint32_t writes_uring;   /* 1: the writes went through io_uring */
	uint32_t tmpfile;        /* 1: copies were made as O_TMPFILE (else named temporaries) */
	uint32_t writers;        /* writer threads that made copies: one per destination filesystem (0: none) */
};

struct sweep_copy;

SWEEP_EXPORT int sweep_copy_new(const struct sweep_copy_opts *opts, struct sweep_copy **ret);
/* Frees without finishing (queued files are dropped, nothing half-made is left). NULL-safe; returns NULL. */
SWEEP_EXPORT struct sweep_copy *sweep_copy_free(struct sweep_copy *c);

/*
 * Where copies go: the directory path (relative to dirfd, or AT_FDCWD),
 * followed as the caller named it, opened once and held. Every destination
 * name given to the other functions is relative to it. show is the prefix
 * for messages (path itself when NULL, nothing when ""). 0 or -errno
 * (-ENOTDIR when it is not a directory).
 */
SWEEP_EXPORT int sweep_copy_set_dest(struct sweep_copy *c, int dirfd, const char *path, const char *show);

/*
 * Copy the source src (any type) to dst below the destination. Directories
 * are created (or reused; their contents are not copied) and their metadata
 * is left for sweep_copy_finish(); symlinks and special files are made at
 * once; regular files are queued and written at the next flush, which
 * happens by itself when a batch is full. An existing non-directory at dst
 * is replaced atomically (subject to NO_CLOBBER/UPDATE); a directory there
 * is an error for a non-directory source, and a non-directory there is one
 * for a directory source. Returns 0 (done, queued or skipped), -errno after
 * reporting it through on_error, or a callback's negative value.
 */
SWEEP_EXPORT int sweep_copy_entry(struct sweep_copy *c, const struct sweep_copy_src *src, const char *dst,
				  uint64_t cookie);

/*
 * Copy the tree at the path src (as cp copies one operand) to dst below the
 * destination: walked in C-SCAN order, every entry through
 * sweep_copy_entry(). Refuses a directory without SWEEP_COPY_RECURSIVE, a
 * directory copied into itself, and a source that is its own destination.
 * Returns 0, -errno when src itself could not be copied, or a callback's
 * negative value; errors inside the tree are reported and the walk goes on.
 */
SWEEP_EXPORT int sweep_copy_tree(struct sweep_copy *c, const char *src, const char *dst);

/*
 * A regular file whose data the caller supplies (SWEEP_COPY_SRC_SUPPLIED),
 * copied as a queued file is: checked against what stands at dst as
 * sweep_copy_entry() does, written as an unnamed temporary in dst's
 * directory, given its metadata and put in place at sweep_copy_feed_end().
 * Copies still being made by the engine's writer thread are finished
 * first, so the destination is made in the order the caller gives it.
 * 0 with *ret (NULL when the engine's rules leave dst alone: no-clobber or
 * update; it is reported as skipped), or -errno after reporting it.
 */
struct sweep_copy_feed;
SWEEP_EXPORT int sweep_copy_feed_begin(struct sweep_copy *c, const struct sweep_copy_src *src, const char *dst,
				       uint64_t cookie, struct sweep_copy_feed **ret);
/* Data at off (what is skipped is a hole). 0, or the copy's error (-errno; reported at its end). */
SWEEP_EXPORT int sweep_copy_feed_data(struct sweep_copy_feed *f, uint64_t off, const void *buf, size_t len);
/*
 * The file's end: status 0, or SWEEP_READ_SHRANK/_GREW/_CHANGED (the
 * source changed while it was read: the copy holds what was supplied, a
 * SWEEP_COPY_OP_CHANGED warning), or -errno (the source could not be read:
 * reported as SWEEP_COPY_OP_READ, nothing is put in place). size is the
 * copy's length, st the source's stat as read (NULL: the one given at the
 * beginning). Reports the copy done or failed and frees f (NULL is
 * accepted and ignored). 0, -errno of the copy, or a callback's negative value.
 */
SWEEP_EXPORT int sweep_copy_feed_end(struct sweep_copy_feed *f, int status, uint64_t size, const struct sweep_stat *st);

/* Write every queued file now (one sweep). 0, or a callback's negative value. */
SWEEP_EXPORT int sweep_copy_flush(struct sweep_copy *c);

/*
 * Flush, then apply the deferred metadata of every directory made or reused
 * (deepest first). Returns the number of errors reported during the whole
 * run (0 when all went well), or a callback's negative value.
 */
SWEEP_EXPORT int sweep_copy_finish(struct sweep_copy *c);

SWEEP_EXPORT int sweep_copy_stats(const struct sweep_copy *c, struct sweep_copy_stats *ret);

/*
 * Destination operations for sync-like callers, all below the destination
 * and never through a symlink. None of them calls on_error: they return
 * -errno for the caller to report.
 */
/* sweep_copy_remove() flags */
#define SWEEP_COPY_REMOVE_TREE 0x1u /* a directory goes with everything in it (else only an empty one) */
/* Remove dst (a non-directory, an empty directory, or with SWEEP_COPY_REMOVE_TREE a whole tree). */
SWEEP_EXPORT int sweep_copy_remove(struct sweep_copy *c, const char *dst, unsigned flags);
/* Make dst another name of target (both below the destination), replacing what is at dst atomically. */
SWEEP_EXPORT int sweep_copy_link(struct sweep_copy *c, const char *target, const char *dst);
/* lstat of dst. */
SWEEP_EXPORT int sweep_copy_stat(struct sweep_copy *c, const char *dst, struct sweep_stat *ret);
/* chmod of dst (not through a symlink: a symlink at dst gives -ELOOP). */
SWEEP_EXPORT int sweep_copy_chmod(struct sweep_copy *c, const char *dst, unsigned mode);

/*
 * The name NAME's backup of this kind gets in the directory dirfd (NAME's
 * last component + suffix, or NAME.~N~ one past the highest there), in *ret
 * (malloc'ed; the caller frees it). suffix NULL: "~". 0, -EINVAL (kind
 * NONE, a name with a slash), -ENOMEM, or -errno reading the directory.
 */
SWEEP_EXPORT int sweep_copy_backup_name(int dirfd, const char *name, enum sweep_copy_backup kind,
					const char *suffix, char **ret);

/*
 * The name the source xattr name gets with SWEEP_PRESERVE_FAKE_SUPER (rsync
 * --fake-super -X): name itself, its part past "user.rsync.", or buf holding
 * "user.rsync." NAME; NULL when it is not copied (system.*, user.rsync.%*)
 * or does not fit in buf.
 */
SWEEP_EXPORT const char *sweep_copy_fake_xattr_name(const char *name, char *buf, size_t len);

/* sweep_copy_attrs() flags */
#define SWEEP_COPY_ATTRS_EXACT 0x1u /* also remove the xattrs/ACLs dst has and the source lacks */
/*
 * Give dst the metadata of src (preserve: SWEEP_PRESERVE_*) without
 * copying data; failures go to on_error as SWEEP_COPY_OP_META with cookie.
 * Returns the number of steps that failed, or -errno when dst or the source
 * could not be reached.
 */
SWEEP_EXPORT int sweep_copy_attrs(struct sweep_copy *c, const struct sweep_copy_src *src, const char *dst,
				  unsigned preserve, unsigned flags, uint64_t cookie);

#ifdef __cplusplus
}
#endif
#endif
