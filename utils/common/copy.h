/* SPDX-License-Identifier: MIT */
/*
 * copy: the copy engine shared by sweep-cp and sweep-sync. A library with
 * an options struct; the tools only parse arguments and print.
 *
 * What it guarantees:
 *  - Atomic replacement. Every non-directory is made under a temporary name
 *    in the destination directory (COPY_TMP_PREFIX followed by random
 *    characters), its data and metadata completed (fsync with COPY_FSYNC),
 *    and only then renamed onto its final name. A final name therefore
 *    holds the old entry or the complete new one, never a partial file; an
 *    interrupted run can leave only names starting with COPY_TMP_PREFIX.
 *    On any failure the temporary is removed and the destination is left
 *    as it was.
 *  - Physical order. Regular files are queued into a libsweep plan and
 *    copied in batches: each batch is sorted into one sweep of the source
 *    and the destination files are created and written in that same order,
 *    so the copy lands contiguously. Directories, symlinks and special
 *    files are made at once (a queued file's directory exists before the
 *    file is written), and directory metadata is applied by copy_finish(),
 *    after everything inside was written.
 *  - Data path per file, in this order of preference:
 *      FICLONE (reflink), unless COPY_REFLINK_NEVER;
 *      copy_file_range, when source and destination are on one filesystem
 *        and reflink is not NEVER (holes kept with sparse AUTO/ALWAYS);
 *      the libsweep reader (io_uring or pread in plan order), with the
 *        engine writing each piece as it arrives.
 *    COPY_REFLINK_ALWAYS makes a failed clone an error (COPY_OP_CLONE).
 *  - Sparse files: AUTO keeps the source's holes (SEEK_DATA/SEEK_HOLE),
 *    ALWAYS also turns zero-filled blocks into holes, NEVER writes zeros.
 *  - Hard links (COPY_LINKS): a second name of an inode already copied in
 *    this run becomes a hard link to the first copy (atomically, through a
 *    temporary link), also when the first copy is still queued.
 *
 * The engine never prints: errors go to on_error, completed entries to
 * on_done (for -v, itemized output), data progress to on_bytes.
 * Functions return 0 (or a count) on success and -errno on failure, as
 * libsweep does. Paths are relative to the current directory or absolute,
 * and may be longer than PATH_MAX inside a tree: the engine then reaches
 * them through a descriptor of their directory (not when writing through a
 * destination symlink, which needs realpath).
 */
#ifndef SWEEP_COPY_H
#define SWEEP_COPY_H

#include <stdbool.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sweep/common.h>
#include "meta.h"

/* Prefix of every temporary name the engine creates. */
#define COPY_TMP_PREFIX ".sweep-tmp."

enum copy_reflink {
	COPY_REFLINK_AUTO = 0,   /* clone or copy_file_range where possible, else read+write */
	COPY_REFLINK_ALWAYS = 1, /* clone or fail */
	COPY_REFLINK_NEVER = 2,  /* always read and write the data */
};

enum copy_sparse {
	COPY_SPARSE_AUTO = 0,   /* holes where the source has holes */
	COPY_SPARSE_ALWAYS = 1, /* also zero-filled blocks become holes */
	COPY_SPARSE_NEVER = 2,  /* holes are written as zeros */
};

/*
 * How data read by the libsweep reader is written (copy_file_range and
 * clones do not go through this). Measured between two ext4 loop images,
 * cold cache, wall time including the final sync (sweep-cp(1), NOTES):
 * io_uring writes gave no gain over pwrite for buffered writes, which land
 * in the page cache either way (48,637 files of /usr/share, 792 MB: 17-28 s
 * vs 18-21 s, and 3,700-7,300 destination write requests vs 3,500-4,200;
 * 16 files of 50 MB: 2.2-3.4 s either way, 713 requests either way), so
 * AUTO means PWRITE.
 */
enum copy_writes {
	COPY_WRITES_AUTO = 0,
	COPY_WRITES_URING = 1,  /* io_uring writes, unless the backend resolves to syscalls (SWEEP_BACKEND=syscall) or io_uring is refused */
	COPY_WRITES_PWRITE = 2, /* synchronous pwrite */
};

/* copy_opts.flags */
#define COPY_RECURSIVE    0x001u /* copy_tree() descends into directories (-r); else a directory root is an error */
#define COPY_DEREF_ALL    0x002u /* follow every symlink in the source (-L) */
#define COPY_DEREF_ROOTS  0x004u /* follow symlinks named as roots only (-H, and cp without -r) */
#define COPY_LINKS        0x008u /* keep hard links as hard links (--preserve=links) */
#define COPY_NO_CLOBBER   0x010u /* never replace an existing destination (-n) */
#define COPY_UPDATE       0x020u /* replace an existing destination only when the source's mtime is newer (-u) */
#define COPY_FSYNC        0x040u /* fsync each file before renaming it into place */
#define COPY_NO_SAME_FILE_CHECK 0x080u /* the caller checked that src and dst are not one file */
#define COPY_WRITE_THROUGH 0x100u /* a symlink at dst whose target exists: replace the target, not the link (cp) */
#define COPY_ONE_FS       0x200u /* copy_tree() does not descend into directories on other filesystems (-x) */
#define COPY_REMOVE_DEST  0x400u /* --remove-destination: never write through a symlink at dst, and replace
				    another name of the source's inode at dst by a copy (cp) */

/* What an error is about; copy_error_format() turns it into cp's wording. */
enum copy_op {
	COPY_OP_STAT = 1,        /* cannot stat 'src' */
	COPY_OP_OPEN_SRC,        /* cannot open 'src' for reading */
	COPY_OP_READ,            /* error reading 'src' */
	COPY_OP_OPENDIR,         /* cannot access 'src' (a directory could not be read) */
	COPY_OP_READLINK,        /* cannot read symbolic link 'src' */
	COPY_OP_CREATE,          /* cannot create regular file 'dst' */
	COPY_OP_WRITE,           /* error writing 'dst' */
	COPY_OP_CLONE,           /* failed to clone 'dst' from 'src' */
	COPY_OP_MKDIR,           /* cannot create directory 'dst' */
	COPY_OP_SYMLINK,         /* cannot create symbolic link 'dst' */
	COPY_OP_SPECIAL,         /* cannot create special file 'dst' (FIFO, device, socket) */
	COPY_OP_LINK,            /* cannot create hard link 'dst' to 'src' */
	COPY_OP_RENAME,          /* cannot move the finished copy onto 'dst' */
	COPY_OP_META,            /* preserving metadata (meta_op says which) for 'dst' */
	COPY_OP_OVERWRITE_DIR,   /* cannot overwrite directory 'dst' with non-directory (err 0) */
	COPY_OP_OVERWRITE_NONDIR,/* cannot overwrite non-directory 'dst' with directory 'src' (err 0) */
	COPY_OP_INTO_SELF,       /* cannot copy a directory, 'src', into itself, 'dst' (err 0) */
	COPY_OP_SAME_FILE,       /* 'src' and 'dst' are the same file (err 0) */
	COPY_OP_OMIT_DIR,        /* -r not specified; omitting directory 'src' (err 0) */
	COPY_OP_CHANGED,         /* warning: 'src' changed while it was read (err 0); the copy holds what was read */
	COPY_OP_DANGLING,        /* not writing through dangling symlink 'dst' (err 0; COPY_WRITE_THROUGH) */
};

struct copy_error {
	enum copy_op op;
	enum meta_op meta_op; /* for COPY_OP_META */
	int err;              /* negative errno, or 0 where the op says so */
	const char *src;      /* may be NULL */
	const char *dst;      /* may be NULL */
	uint64_t cookie;      /* the caller's value from copy_entry(), 0 from copy_tree() */
};

/* How an entry was made, for on_done. */
enum copy_how {
	COPY_HOW_DATA = 1,   /* data read (libsweep reader) and written */
	COPY_HOW_CLONE,      /* FICLONE */
	COPY_HOW_RANGE,      /* copy_file_range */
	COPY_HOW_LINK,       /* hard link to an earlier copy */
	COPY_HOW_DIR,        /* directory created (or existing one reused) */
	COPY_HOW_SYMLINK,
	COPY_HOW_SPECIAL,    /* FIFO, device or socket */
	COPY_HOW_SKIPPED,    /* left alone: -n and the destination exists, or -u and it is not older */
};

struct copy_done {
	const char *src;
	const char *dst;
	const struct stat *st; /* the source as copied */
	enum copy_how how;
	uint64_t bytes;        /* data bytes copied */
	uint64_t cookie;
	bool existed;          /* dst existed before: a directory reused, or an entry replaced or left alone */
};

struct copy_opts {
	size_t size;               /* sizeof(struct copy_opts) */
	unsigned flags;            /* COPY_* */
	unsigned preserve;         /* META_* (META_MODE should come with META_ACL, as cp does) */
	enum copy_reflink reflink;
	enum copy_sparse sparse;
	enum sweep_order order;    /* source read order, AUTO = the filesystem's policy */
	enum sweep_backend backend;
	size_t batch_files;        /* files per sweep, 0 = default (4096) */
	size_t batch_bytes;        /* plan memory per sweep, 0 = default */
	unsigned queue_depth;      /* reader queue depth, 0 = from the device */
	/* <0 from a callback stops the run (the engine then returns it). All optional. */
	int (*on_error)(const struct copy_error *err, void *ctx);
	int (*on_done)(const struct copy_done *done, void *ctx);
	void (*on_bytes)(uint64_t bytes, void *ctx); /* data written, as it is written */
	void *ctx;
	/* A regular file of st_size bytes was queued (for a progress display's totals). Optional. */
	void (*on_plan)(uint64_t files, uint64_t bytes, void *ctx);
	/*
	 * Optional: when *cancel becomes non-zero (a signal handler sets it),
	 * the run stops at the next file or piece of data, temporaries are
	 * removed, and the engine's functions return -ECANCELED.
	 */
	volatile const sig_atomic_t *cancel;
	enum copy_writes writes; /* added later: callers with a smaller size get AUTO */
};

struct copy_stats {
	uint64_t files;   /* regular files copied */
	uint64_t dirs;    /* directories created or reused */
	uint64_t others;  /* symlinks, specials, hard links */
	uint64_t skipped; /* COPY_HOW_SKIPPED */
	uint64_t bytes;   /* data bytes copied (any method) */
	uint64_t cloned;  /* files cloned */
	uint64_t ranged;  /* files copied with copy_file_range */
	uint64_t batches; /* sweeps run */
	uint64_t errors;  /* errors reported (warnings not counted) */
	uint64_t write_requests; /* data writes submitted (io_uring or pwrite), not counting clones and copy_file_range */
	bool writes_uring;       /* the writes went through io_uring */
};

struct copy_engine;

int copy_engine_new(const struct copy_opts *opts, struct copy_engine **ret);
/* Frees without flushing: call copy_finish() first. Accepts NULL, returns NULL. */
struct copy_engine *copy_engine_free(struct copy_engine *e);

/*
 * Copy the entry src (any type) to the final name dst. st is the source's
 * lstat (stat when following), or NULL to let the engine lstat it.
 * Directories are created (or reused when one exists; their contents are
 * not copied) and their metadata is left for copy_finish(); symlinks and
 * special files are made at once; regular files are queued and written at
 * the next flush, which happens by itself when a batch is full. dst's
 * directory must exist when the entry is written. An existing
 * non-directory at dst is replaced atomically, subject to -n/-u; an
 * existing directory is an error for a non-directory source
 * (COPY_OP_OVERWRITE_DIR). Returns 0 (done, queued or skipped), or -errno
 * after reporting it through on_error, or a callback's negative value.
 */
int copy_entry(struct copy_engine *e, const char *src, const struct stat *st, const char *dst,
	       uint64_t cookie);

/* Write every queued file now (one sweep). Returns 0, or a callback's negative value. */
int copy_flush(struct copy_engine *e);

/*
 * Copy the tree at src to the final name dst, as cp does for one operand:
 * the source is walked in C-SCAN order (libsweep walk), entries are handed
 * to copy_entry(). Refuses, with cp's errors, a directory without
 * COPY_RECURSIVE, copying a directory into itself, and a source that is its
 * own destination. Returns 0, or -errno when src itself could not be
 * copied, or a callback's negative value; errors inside the tree are
 * reported and counted and the walk goes on.
 */
int copy_tree(struct copy_engine *e, const char *src, const char *dst);

/*
 * Flush the queue, then apply the deferred metadata of every directory made
 * or reused (deepest first). Returns the number of errors reported during
 * the whole run (0 when all went well), or a callback's negative value.
 */
int copy_finish(struct copy_engine *e);

void copy_engine_stats(const struct copy_engine *e, struct copy_stats *ret);

/*
 * cp's wording for an error, without the program name, e.g.
 * "cannot open 'a/b' for reading: Permission denied". Returns buf.
 */
const char *copy_error_format(const struct copy_error *err, char *buf, size_t len);

#endif
