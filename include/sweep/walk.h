/* SPDX-License-Identifier: MIT */
/*
 * walk: C-SCAN directory traversal (the user-space I/O scheduling of a
 * two-pass tar). Unvisited directories wait in a queue keyed by inode number
 * (or by the directory's first physical block where FIEMAP gives one) and
 * are serviced in ascending key order from the current position, wrapping
 * once per sweep. Each directory is read whole with getdents64; its entries
 * are then stat'ed in inode order, in batches (io_uring statx where the
 * kernel has it), so the inode-table reads merge.
 */
#ifndef SWEEP_WALK_H
#define SWEEP_WALK_H

#include <sys/stat.h>
#include <sweep/common.h>
#include <sweep/fsinfo.h>

#ifdef __cplusplus
extern "C" {
#endif

/* sweep_walk_opts.flags */
#define SWEEP_WALK_FOLLOW       0x1u /* follow every symlink (du -L, cp -L) */
#define SWEEP_WALK_FOLLOW_ROOTS 0x2u /* follow symlinks named as roots only (-H) */
#define SWEEP_WALK_XDEV         0x4u /* stay on the filesystem of each root (-x) */
#define SWEEP_WALK_NO_STAT      0x8u /* do not stat non-directories: st holds only st_dev (the directory's), st_ino and the type bits of st_mode */
/*
 * Do not read the filesystem's metadata through its block device (directory
 * prefetch, inode hints for order), even where the caller may.
 * SWEEP_METASCAN=off in the environment does the same.
 */
#define SWEEP_WALK_NO_METASCAN  0x10u
/*
 * The caller plans the files but will not open them (it wants their order
 * only, as sweep-plan without --read): raw inode hints are read even on xfs,
 * where an open would make the filesystem read each inode a second time,
 * through its own cache (see sweep(7), "Metadata from the block device").
 */
#define SWEEP_WALK_PLAN_ONLY    0x20u
/*
 * Do not stat regular files (as SWEEP_WALK_NO_STAT leaves them); symlinks,
 * devices, FIFOs and sockets are stat'ed as usual. For a caller that opens
 * every regular file it is given and takes their metadata from that fstat,
 * but needs the rest whole (sweep-tar).
 */
#define SWEEP_WALK_NO_STAT_FILES 0x40u
/*
 * Leave regular files to the raw inode hints where the walk reads them (the
 * caller may read the block device under an ext4 or xfs filesystem, and the
 * order is INODE or PHYSICAL, as AUTO resolves to): a regular file its
 * hint describes is not stat'ed and is handed out as under
 * SWEEP_WALK_NO_STAT_FILES; sweep_plan_add_entry() takes its size from the
 * raw inode, which may be older than the filesystem's answer. Every other
 * entry, and every entry where the walk reads no hints, is stat'ed as
 * usual. For a caller that only orders and counts the files (sweep-plan
 * without --read): the walk then costs no VFS inode per file.
 */
#define SWEEP_WALK_HINT_FILES    0x80u

/* sweep_entry.flags */
#define SWEEP_ENTRY_FOLLOWED 0x1u /* a symlink stands at path and st describes its target (the walk followed it) */

/* Return value of on_entry for a directory: do not descend into it. */
#define SWEEP_WALK_SKIP 1

/* What the walk read of an entry from the block device, for sweep_plan_add_entry() (opaque). */
struct sweep_entry_hint;

/* One entry. Everything in it is valid only during the callback (a copy made then carries all of it). */
struct sweep_entry {
	const char *path;      /* root as given + "/" + components; roots appear as given */
	size_t path_len;       /* bytes in path (names may hold any byte but '/' and NUL) */
	const char *name;      /* last component, points into path */
	int dirfd;             /* open directory holding it (AT_FDCWD for a root) */
	const char *at_name;   /* name relative to dirfd (the root path itself for a root) */
	uint64_t dir_id;       /* walk id of the containing directory, 0 for a root */
	uint64_t id;           /* walk id of this directory (its children carry it as dir_id); 0 for non-directories */
	uint32_t dirent_index; /* position in the parent's getdents64 stream (the order a plain walk sees) */
	uint32_t root_index;   /* which root argument it came from */
	int depth;             /* 0 for a root */
	unsigned char d_type;  /* DT_* from getdents64 (after stat: from st_mode) */
	int stat_err;          /* 0, or -errno when stat failed */
	struct sweep_stat st;  /* lstat (or stat when following) result */
	const struct sweep_fsinfo *fs; /* filesystem the entry lives on */
	/*
	 * The walk root this entry lies below, open (O_PATH) while the callback
	 * runs, and the entry's path below it (pointing into path). Opening rel
	 * beneath root_fd with sweep_open_beneath() reaches this entry again
	 * without following anything a third party may have swapped in since.
	 * -1 and NULL for a root itself and, with SWEEP_WALK_FOLLOW, for every
	 * entry (its path may legitimately pass through symlinks).
	 */
	int root_fd;
	const char *rel;
	uint64_t root_dev, root_ino; /* identity of that root directory (0 when root_fd is -1) */
	unsigned flags;        /* SWEEP_ENTRY_* */
	/*
	 * The raw inode hint sweep_plan_add_entry() may take (a sort key,
	 * the size of a file the walk did not stat), NULL when the walk read
	 * none. Library-owned, valid during the callback; a copy of the entry
	 * made then keeps it.
	 */
	const struct sweep_entry_hint *hint;
};

/* What failed, for on_error. */
enum sweep_walk_op {
	SWEEP_WALK_OP_OPENDIR = 1, /* could not open a directory */
	SWEEP_WALK_OP_READDIR = 2, /* could not read a directory (part or all) */
	SWEEP_WALK_OP_STAT = 3,    /* could not stat an entry */
	SWEEP_WALK_OP_LOOP = 4,    /* a followed symlink leads back to an ancestor */
	SWEEP_WALK_OP_ROOT = 5,    /* a root argument cannot be accessed */
};

struct sweep_walk_error {
	const char *path;
	enum sweep_walk_op op;
	int err; /* negative errno (-ELOOP for SWEEP_WALK_OP_LOOP) */
};

struct sweep_walk_opts {
	size_t size;            /* sizeof(struct sweep_walk_opts) */
	unsigned flags;         /* SWEEP_WALK_* */
	/*
	 * Directory service order: AUTO follows the filesystem's policy
	 * (C-SCAN by physical block/inode, or readdir order where sorting
	 * does not pay); INODE and PHYSICAL force C-SCAN; NONE is a plain
	 * depth-first walk in readdir order, as tar and cp do; NAME is a
	 * depth-first walk with entries sorted by name.
	 */
	enum sweep_order order;
	unsigned stat_batch;    /* entries per statx batch, 0 = default */
	/*
	 * How entries are stat'ed: AUTO uses io_uring for batches whose inodes
	 * are not cached (and plain calls while they are); URING sends every
	 * batch through io_uring; SYSCALL makes plain calls only.
	 */
	enum sweep_backend backend;
	/* Called for every entry, roots first. Return 0 to go on,
	 * SWEEP_WALK_SKIP to not descend into a directory, <0 to stop the walk
	 * (sweep_walk then returns that value). */
	int (*on_entry)(const struct sweep_entry *e, void *ctx);
	/* Called for each failure; the walk carries on unless it returns <0. */
	int (*on_error)(const struct sweep_walk_error *err, void *ctx);
	void *ctx;
};

/*
 * Walk the trees under roots[0..nroots). Returns the number of errors
 * reported through on_error (0 when none), or a negative errno when the walk
 * itself could not proceed or a callback stopped it.
 */
SWEEP_EXPORT int sweep_walk(const char *const *roots, size_t nroots, const struct sweep_walk_opts *opts);

#ifdef __cplusplus
}
#endif
#endif
