/* SPDX-License-Identifier: MIT */
/*
 * sweep-du internals. The walk visits the tree in C-SCAN order; du_tree
 * keeps just enough per entry (name, parent, readdir position, size, inode)
 * to replay the tree afterwards in the order GNU du's fts would have seen it.
 */
#ifndef SWEEP_DU_H
#define SWEEP_DU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <sweep.h>

#include "progress.h"

#define DU_NONE UINT32_MAX
/* The kernel's limit of symlinks in one path (MAXSYMLINKS): du -L cannot stat a path through more. */
#define DU_MAXSYMLINKS 40

/* du_node.flags */
#define DU_DIR     0x01u /* a directory */
#define DU_MULTI   0x02u /* st_nlink > 1: may be a hard link seen twice */
#define DU_SORTFS  0x04u /* a directory on a filesystem where fts sorts big directories by inode */
#define DU_NOSTAT  0x08u /* stat failed: size holds the positive errno (0: dangling symlink under -L) */
#define DU_DINO_ST 0x10u /* a directory on ext2/3/4 or xfs: readdir's d_ino is st_ino, but at a mount point */

struct du_node {
	uint64_t size;  /* bytes (allocated or apparent, as the options say) */
	uint64_t ino;
	uint64_t name;  /* offset of the NUL-terminated name in the names arena (roots: the operand) */
	uint32_t parent;
	uint32_t index; /* getdents64 position in the parent; root: operand position */
	uint32_t dev;   /* index into the device table */
	uint8_t flags;
};

/* A map from two 64-bit keys to a 32-bit value (open addressing). */
struct du_map {
	uint64_t *keys; /* 2 per slot; a slot is free when its value is DU_NONE */
	uint32_t *vals;
	size_t cap, n;
};
/* Value for (a, b), or DU_NONE. */
uint32_t du_map_get(const struct du_map *m, uint64_t a, uint64_t b);
/* Insert unless present. 1 inserted, 0 already there (*old gets the value), -ENOMEM. */
int du_map_put(struct du_map *m, uint64_t a, uint64_t b, uint32_t val, uint32_t *old);
void du_map_clear(struct du_map *m);

struct du_tree {
	struct du_node *nodes;
	uint32_t n, cap;
	char *names;
	uint64_t names_len, names_cap;
	uint64_t *devs;
	uint32_t ndevs;
	/* after du_tree_order(): children of i are kids[first[i] .. first[i + 1]) in fts order */
	uint32_t *first, *kids;
};

/* Make *pp hold at least need elements of elem bytes (doubling); 0 or -ENOMEM. */
int du_grow(void *pp, size_t *cap, size_t need, size_t elem);

/* Append a node; returns its index or DU_NONE when out of memory. */
uint32_t du_tree_add(struct du_tree *t, const struct du_node *tmpl, const char *name);
/* Small index for a st_dev value (DU_NONE when out of memory). */
uint32_t du_tree_dev(struct du_tree *t, uint64_t dev);
/*
 * For a directory whose entries fts sorts: set keys[k] to the d_ino that
 * getdents64 gives for kids[k] (kids in readdir order; keys come in holding
 * st_ino). fts sorts on d_ino, which differs from st_ino for mount points
 * and, under -L, for symlinks.
 */
typedef void du_dino_fn(const struct du_tree *t, uint32_t dir, const uint32_t *kids, uint32_t n,
			uint64_t *keys, void *ctx);
/*
 * Group children under their parents in the order fts reads them: getdents64
 * order, except that a directory with more than 10,000 entries is sorted by
 * inode number in batches of 100,000 (gnulib fts_build) when it is on a
 * filesystem other than NFS, CIFS or tmpfs (DU_SORTFS), or on any
 * filesystem when sort_any is set (fts under FTS_LOGICAL cannot tell the
 * type). 0 or -ENOMEM.
 */
int du_tree_order(struct du_tree *t, bool sort_any, du_dino_fn *dino, void *ctx);
/* The walk path of node i (root operand + "/" + names) into *buf; 0 or -ENOMEM. */
int du_tree_path(const struct du_tree *t, uint32_t i, char **buf, size_t *cap);
void du_tree_free(struct du_tree *t);

static inline const char *du_name(const struct du_tree *t, uint32_t i)
{
	return t->names + t->nodes[i].name;
}

/*
 * Format ts in local time with a strftime format that may also hold %N
 * (nanoseconds), as du --time does. 0, or -1 when the time is out of range
 * (buf then holds the seconds, as du prints them).
 */
int du_time_format(char *buf, size_t cap, const char *fmt, struct timespec ts);

/* The device of every mount, as /proc/self/mountinfo lists them (mounts.c says why). */
struct du_mounts {
	uint64_t *devs;
	size_t n, cap;
};
/* Read them: 0, or -1 when mountinfo cannot be read (then nothing is known). */
int du_mounts_load(struct du_mounts *m);
/* How many mounts show the filesystem of device dev (st_dev). */
size_t du_mounts_count(const struct du_mounts *m, uint64_t dev);
void du_mounts_free(struct du_mounts *m);

/* Output sizes the way GNU du's human_readable does. */
#define DU_AUTOSCALE 0x1
#define DU_SI        0x2
#define DU_BASE1024  0x4
#define DU_SUFFIX_B  0x8
#define DU_GROUP     0x10 /* a leading ' in the block size: thousands separators */
struct du_units {
	uint64_t block; /* output block size */
	int opts;       /* DU_* above */
};
/* Parse a --block-size spec (or BLOCK_SIZE etc. when spec is NULL): 0, -EINVAL,
 * -EILSEQ (bad suffix) or -ERANGE. */
int du_units_parse(const char *spec, struct du_units *u);
/* Format n bytes into buf (at least 128 bytes); returns a pointer into buf. */
char *du_units_format(uint64_t n, const struct du_units *u, char *buf);

/* ---- the tool's state, shared by the option parser, the walk and the replay ---- */

struct exclude;
struct progress;

enum time_kind { TIME_MTIME, TIME_ATIME, TIME_CTIME };

enum follow { FOLLOW_NONE, FOLLOW_ARGS, FOLLOW_ALL };

struct opts {
	bool all, apparent, total, summarize, xdev, separate, count_links, inodes, nul;
	bool depth_given;
	uint64_t max_depth;
	int64_t threshold;
	enum follow follow;
	enum sweep_order order;
	bool time;              /* --time: also print the newest time in each subtree */
	enum time_kind time_kind;
	const char *time_style; /* --time-style as given (NULL: TIME_STYLE or long-iso) */
	const char *time_format;
	const char *files0;     /* --files0-from */
	bool verbose;           /* --verbose: the device class of each filesystem on stderr (not in GNU du) */
	struct progress_opts progress; /* --progress[=SECONDS]; without it, a line on a terminal only */
	const char *export_file; /* -o/--export: ncdu's export format into it ("-": standard output, instead of du's lines) */
	const char *shaping;     /* the last long option given that shapes du's lines (refused with --export=-) */
	char shaping_short;      /* or the last short one */
	struct du_units units;
	struct exclude *exclude;
};

/* --export: what ncdu wants of an entry beyond the tree's node (export.c). */
struct du_xinfo {
	uint64_t asize, dsize;
	uint32_t nlink;
	uint32_t mode;
};

/* --export: an entry du left out, written with ncdu's reason. */
enum du_left_out { DU_OUT_PATTERN, DU_OUT_OTHERFS };
struct du_xout {
	uint32_t parent;   /* its directory's node */
	uint64_t name;     /* offset in du.xnames */
	uint64_t dev;      /* DU_OUT_OTHERFS: its device */
	enum du_left_out why;
	bool dir;
};

/* An operand: a walk root, or an empty name du complains about in its turn. */
struct operand {
	uint32_t root;         /* index into roots, or DU_NONE for a name du refuses */
	bool dash;             /* refused: "-" in a --files0-from list read from stdin */
	unsigned long number;  /* its position in --files0-from, 0 on the command line */
};

/* A failure reported by the walk, printed where du would print it. */
struct err {
	char *path;
	enum sweep_walk_op op;
	int err; /* positive errno */
	bool used;
};

struct du {
	struct opts o;
	struct du_tree tree;
	struct du_map ids;       /* walk directory id -> node */
	const char **roots;      /* operands as fts sees them (extra trailing slashes trimmed) */
	size_t nroots;
	uint32_t *root_node;     /* per root: its node, or DU_NONE (not reached) */
	struct operand *ops;     /* every operand in order, the empty ones too */
	size_t nops;
	uint64_t *root_dev;      /* per root: its st_dev, for -x */
	struct err *errs;
	size_t nerrs, errs_cap;
	char *scratch;           /* du-style path of the entry at hand */
	size_t scratch_cap;
	bool ok;
	int fatal;               /* -errno when the store ran out of memory */
	struct progress *progress; /* on a terminal: entries and bytes seen so far */
	struct timespec *times;  /* --time: per node, the time du reports */
	size_t times_cap;
	uint8_t *links;          /* -L: per node, the symlinks followed on its path (up to DU_MAXSYMLINKS + 1) */
	size_t links_cap;
	struct du_mounts mounts; /* read when a big directory first needs them */
	struct du_xinfo *xinfo;  /* --export: per node */
	size_t xinfo_cap;
	struct du_xout *xout;    /* --export: entries left out */
	size_t nxout, xout_cap;
	char *xnames;            /* their names */
	size_t xnames_len, xnames_cap;
	int mounts_state;        /* 0 not read, 1 read, -1 unreadable */
};

/* Parse the command line into *o (exits with du's messages on a bad one). */
void du_parse_args(int argc, char **argv, struct opts *o);
/* "Try ... --help" and exit(status), or the help text and exit(0). */
__attribute__((noreturn)) void du_usage(int status);
/* Print the report for what the walk collected, in GNU du's order. 0 or -ENOMEM. */
int du_replay(struct du *du);

/* export.c: --export. Node idx's sizes and link count (st: its stat, zeros when it had none). 0 or -ENOMEM. */
int du_export_info(struct du *du, uint32_t idx, const struct sweep_stat *st);
/* An entry of directory parent du leaves out (--exclude, -x). 0 or -ENOMEM. */
int du_export_left_out(struct du *du, uint32_t parent, const char *name, enum du_left_out why, bool dir,
		       uint64_t dev);
/* Open FILE for the export before the walk ("-": stdout); exits with du's message when it cannot. */
FILE *du_export_open(const char *file);
/* Write the export into f and close it (after du_tree_order and du_replay): 0, or -errno (said why). */
int du_export(struct du *du, FILE *f);

#endif
