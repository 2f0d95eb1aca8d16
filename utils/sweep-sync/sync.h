/* SPDX-License-Identifier: MIT */
/*
 * sweep-sync internals. The run has fixed phases (see main.c):
 *   scan     both trees, metadata only, with sweep_walk (C-SCAN order);
 *   merge    pair source and destination entries by relative path and sort
 *            the pairs into rsync's file-list order;
 *   checksum (-c) read the candidate files of both sides in one physical
 *            sweep per filesystem and digest them;
 *   apply    decide each pair in rsync order, itemize, and hand the work to
 *            the copy engine, which reads the changed files in one sweep;
 *   delete   (--delete) only when nothing failed;
 *   finish   directory metadata, deepest first.
 */
#ifndef SWEEP_SYNC_H
#define SWEEP_SYNC_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <signal.h>
#include <time.h>

#include "progress.h"

struct sweep_copy;
struct sweep_copy_xattr;
struct sweep_stat;

/* rsync exit codes that sweep-sync uses. */
#define EXIT_SYNTAX   1  /* syntax or usage error */
#define EXIT_FILESELECT 3 /* errors selecting input/output files, dirs */
#define EXIT_UNSUPPORTED 4 /* requested action not supported */
#define EXIT_FILEIO   11 /* error in file I/O (destination full, cannot create the destination) */
#define EXIT_SIGNAL   20 /* received SIGINT/SIGTERM */
#define EXIT_PARTIAL  23 /* partial transfer due to error */
#define EXIT_VANISHED 24 /* some source files vanished */

#define EXIT_DEL_LIMIT 25 /* skipped some deletes due to --max-delete */
#define EXIT_MALLOC   22 /* --max-alloc exceeded */
#define EXIT_TIMEOUT  30 /* --stop-at, --stop-after reached */
#define MAX_BASIS_DIRS 20

enum basis_kind { BASIS_COMPARE, BASIS_COPY, BASIS_LINK };

struct sync_opts {
	bool recursive, links, perms, times, owner, group, devices, specials;
	bool hard_links, acls, xattrs, dry_run, delete, checksum, one_fs;
	bool no_recursive, no_relative; /* --no-r, --no-R given */
	bool quiet, update, dirs, relative, numeric_ids, size_only, partial, from0;
	bool delete_before, delete_excluded, backup, remove_source, stats_opt, do_progress;
	bool existing, ignore_existing; /* --existing (--ignore-non-existing), --ignore-existing */
	/* -L, --copy-unsafe-links, -k: the source's symlinks followed; --safe-links: unsafe ones left out */
	bool copy_links, copy_unsafe_links, copy_dirlinks, safe_links;
	bool ignore_times; /* -I: the quick check never passes (rsync's quick_check_ok(): after -c and --size-only) */
	bool sparse; /* -S: zero-filled blocks become holes too (the source's holes always stay holes) */
	struct sync_chmod *chmod; /* --chmod, NULL without */
	bool prune_empty_dirs; /* -m: source directories with no non-directory below them are left out */
	bool super; /* --super: what root does (refused for other users) */
	bool no_super; /* --no-super: as root, the receiver acts as another user would (rsync's am_root 0): no uid given away */
	bool executability; /* -E: without -p, an existing file's execute bits follow the source's */
	bool mkpath; /* --mkpath: the missing directories on the way to DEST are made */
	bool omit_dir_times, omit_link_times; /* -O, -J: with -t, directories (symlinks) keep the times they get */
	bool fake_super; /* --fake-super: what root would set is read from and kept in user.rsync.%stat (copy_fake.c) */
	const char *log_file, *log_file_format; /* --log-file, --log-file-format (NULL: rsync's "%i %n%L") */
	struct idmap *usermap, *groupmap; /* --usermap, --groupmap, --chown (idmap.c); NULL for none */
	uint64_t max_alloc; /* --max-alloc: the file lists' bound in bytes, 0 for none */
	time_t stop_at;     /* --stop-at, --stop-after: when the transfer stops (exit 30), 0 for never */
	int debug_backup; /* --debug=backup: rsync's make_backup lines */
	bool atimes; /* -U: non-directories' access times kept (compared, itemized 'u') */
	bool list_only; /* --list-only, or one operand: the source is listed (listonly.c) */
	bool delay_updates; /* --delay-updates: regular files written into DIR/.~tmp~/, renamed into place at the end */
	bool force; /* --force: a non-empty directory in the way of a non-directory is removed (as --delete does) */
	int itemize; /* -i count */
	int verbose; /* -v count */
	int progress; /* rsync's: --progress (1) or --info=progress2 (2) */
	struct progress_opts sweep_progress; /* --progress=SECONDS: the sweep tools' display */
	int human;    /* rsync's human_readable: 1 digits with commas, 2 units of 1000, 3 of 1024 */
	/* --info levels (from -v and -q unless --info set them) */
	int name_level, stats, info_del, info_nonreg, info_skip, info_remove, info_backup, info_flist;
	long long modify_window; /* seconds; -1: to the nanosecond */
	long long max_delete; /* --max-delete, -1 for no limit */
	int64_t max_size, min_size; /* -1 for none */
	const char *files_from;
	const char *backup_dir, *suffix;
	const char *basis[MAX_BASIS_DIRS];
	int nbasis;
	enum basis_kind basis_kind;
	const char *refused; /* an rsync option sweep-sync does not have */
	/* a remote transfer (remote.c): -e, --rsync-path, -z and its level and choice, -s, --old-args */
	const char *rsh, *rsync_path, *compress_choice;
	bool compress, compress_level_set, protect_args, old_args;
	bool sent_view; /* the receiving server of a push: transfers are itemized '<', as the client sent them */
	int compress_level;
	/*
	 * Filter rules (filter.h): the source's scan keeps the sender's view
	 * (exclude/include, hide/show) of what is listed, the destination's
	 * the receiver's (exclude/include unless --delete-excluded,
	 * protect/risk) of what --delete may touch.
	 */
	struct filter_set *filters;
};

/* rsync's keep_time: whether -t (less -O, -J) preserves the mtime of an entry of this mode */
bool sync_keep_time(const struct sync_opts *o, unsigned mode);

/* chmod.c, --chmod: rsync's mode changes, parsed (0, -EINVAL for a bad spec, -ENOMEM) and applied to a source mode */
struct sync_chmod;
int sync_chmod_add(struct sync_chmod **ch, const char *spec);
unsigned sync_chmod_apply(const struct sync_chmod *ch, unsigned mode, unsigned umask_bits);
struct sync_chmod *sync_chmod_free(struct sync_chmod *ch);

/* options.c: parse argv into o. 0, -EINVAL (usage error: exit 1) or -EIO (a rules file: exit 11). */
int sync_parse_options(int argc, char **argv, struct sync_opts *o);
/* The options a transfer over a remote shell cannot honour yet: said, and EXIT_SYNTAX; else 0. */
int sync_refuse_remote(const struct sync_opts *o);


/*
 * One SRC operand. Its top entry is named rel0 in the file list ("." when
 * SRC ends in '/', else SRC's last component) and lives at src and dst; an
 * entry rel0/x at src/x and dst/x. dst is the exact destination name when a
 * single file is copied to a new name.
 */
struct sync_root {
	char *src, *dst, *rel0;
	char *base;   /* -R: the directory rel0 is relative to (entries are named rel below it), else NULL */
	bool follow;  /* SRC/ (and its destination) may be a symlink to a directory */
	bool implied; /* -R: a directory on the way to a named one, sent without its contents */
	/*
	 * -R: the length of rel0's directories (and the '/'): the source is
	 * reached below the directory holding the operand, as named (symlinks
	 * on the way followed, as rsync's sender does), by rel less those.
	 */
	size_t src_skip;
	/*
	 * A symlink to a directory that -L, --copy-unsafe-links or -k follow:
	 * src is the link, opened as the directory it leads to; its entries
	 * (rel0/...) are reached beneath that (src_skip is rel0's length + 1).
	 */
	bool linked;
};

/*
 * The stat fields sweep-sync keeps per entry: 96 bytes instead of a struct
 * stat's 144, twice per entry, which matters for lists of millions.
 */
struct fst {
	uint64_t st_dev, st_ino, st_rdev;
	int64_t st_size;
	uint32_t st_mode, st_uid, st_gid, st_nlink;
	struct timespec st_atim, st_mtim, st_ctim;
};
void fst_pack(struct fst *d, const struct sweep_stat *s);
/* A struct stat for the APIs that take one (fields not kept are zero). */
const struct stat *fst_stat(const struct fst *s, struct stat *buf);
/* The same as libsweep's struct sweep_stat. */
const struct sweep_stat *fst_sweep(const struct fst *s, struct sweep_stat *buf);

/* One side of an entry: what lstat said, and a symlink's target. */
struct side {
	struct fst st;
	char *link; /* symlink target, NULL otherwise */
};

/* sync_node.flags */
#define N_SRC       0x0001u /* exists in the source */
#define N_DST       0x0002u /* exists in the destination */
#define N_DIGEST_S  0x0004u /* sdigest is valid */
#define N_DIGEST_D  0x0008u /* ddigest is valid */
#define N_GONE      0x0010u /* destination entry already removed (type change) */
#define N_DIRTY     0x0020u /* directory whose contents or metadata change: reapply its metadata */
#define N_DELETED   0x0040u /* removed by --delete */
#define N_FAILED    0x0080u /* this entry failed */
#define N_SKIPDIR   0x0100u /* directory whose contents are skipped (it could not be made) */
#define N_HL_WAIT   0x0200u /* hard link made after the transfers (its leader is queued) */
#define N_HL_LEADER 0x0400u /* leader of a hard-link group */
#define N_NEWDIR    0x0800u /* directory created in this run */
#define N_HL        0x1000u /* member of a hard-link group (-H) */
#define N_QUEUED    0x2000u /* regular file handed to the copy engine, not yet written */
#define N_TWEAKED   0x4000u /* read-only directory opened to us (not root) for the run: restore its mode */
#define N_SYNCED    0x8000u /* the destination matches the source now (--remove-source-files may remove it) */
#define N_PROTECT  0x10000u /* destination entry the receiver's filter rules exclude: --delete leaves it */
#define N_PERISH   0x20000u /* ... by perishable rules only: it goes when its directory is deleted */
#define N_SFOLLOW  0x40000u /* the source is a symlink followed to a non-directory (-L, --copy-unsafe-links) */
#define N_DELAYED  0x80000u /* --delay-updates: written under DIR/.~tmp~/, not in place yet */

/* A source entry, a destination entry, or both, under one relative path. */
struct sync_node {
	char *rel;          /* path relative to the transfer root; "." for the root itself */
	struct side s, d;   /* source, destination (valid per N_SRC / N_DST) */
	unsigned flags;
	uint32_t depth;     /* components in rel ("." = 0) */
	uint32_t root;      /* index of the SRC operand it came from (roots) */
	uint32_t parent;    /* index of the parent directory's node, UINT32_MAX for none */
	uint32_t hl_next;   /* next member of the hard-link group in rsync order, UINT32_MAX at the end */
	uint32_t hl_first;  /* first member of the group (it holds the group's leader in hl_leader) */
	uint32_t hl_leader; /* the member the others link to, UINT32_MAX while none is chosen */
	unsigned iflags;    /* itemize flags decided for a queued transfer */
	uint32_t sidx;      /* a remote transfer: the source entry's index on the wire (UINT32_MAX: none) */
};

/* -c: the digests of both sides of node i, in an array beside the list. */
struct digests {
	unsigned char s[16], d[16];
};

struct sync_list {
	struct sync_node *v;
	size_t n, cap;
};

/* Lines waiting for their turn (out.c): one string per node. */
struct sync_out {
	char **text;
	size_t *len;
	char **log;     /* --log-file's lines, in the same turns */
	size_t *loglen;
	size_t next;    /* the first node not printed yet */
	size_t decided; /* nodes before this one have been decided */
};

/* An entry the options leave out, named on stdout after the scan. */
struct skip {
	char *rel;
	bool is_dir;
};

/* --stats: by type (report_type: reg, dir, link, dev, special). */
struct sync_stats {
	uint64_t files[5], created[5], deleted[5];
	uint64_t xferred, xferred_size;
	double scan_secs;
};

/* Which part of a transfer this process plays (remote.c): both, or one side of a remote one. */
enum sync_role { ROLE_LOCAL, ROLE_SENDER, ROLE_RECEIVER };
struct remote;

struct sync_ctx {
	struct sync_opts o;
	enum sync_role role;
	struct remote *remote; /* the connection, in a remote transfer */
	struct sync_stats stats;
	struct timespec start;  /* the run's start (CLOCK_MONOTONIC) */
	uint64_t src_total;     /* source entries listed (rsync's file count) */
	size_t pruned;          /* -m: source directories left out (still in rsync's count of what DEST receives) */
	uint32_t *src_index;    /* --progress: each node's place among them */
	double *t_open;         /* --progress: when each node's file was opened */
	double last_progress;   /* --info=progress2: when the line was last drawn */
	mode_t orig_umask;      /* the umask the run started with (cleared while copying without -p) */
	uint32_t perm_cache_parent, perm_cache_dflt; /* perms.c: the last parent's default permissions */
	bool perm_cache_sgid;
	/* the SRC operands; when two give the same name, the first one's entry is used, as in rsync */
	struct sync_root *roots;
	size_t nroots, caproots;
	struct sync_list list;
	struct sync_out out;
	struct skip *skips;
	size_t nskips, capskips;
	struct digests *digests; /* -c only: one per node */
	struct sweep_copy *eng;
	/*
	 * After the scan nothing is reached by path again: each operand's
	 * entries are opened beneath src_fd[root] (the operand itself for
	 * SRC/, else the directory holding it: entries are named rel there),
	 * and the destination's beneath dest_fd (DEST, or the directory of the
	 * new name when one file is copied to a new name: dest_name).
	 */
	int *src_fd;
	int dest_fd;
	int backup_fd; /* --backup-dir, -1 without */
	int basis_fd[MAX_BASIS_DIRS]; /* --link-dest and the like, -1 where one could not be opened */
	const char *dest_name;  /* set when one file goes to a new name */
	char *dest_show;        /* DEST (or its directory) as messages show it */
	struct progress *prog;
	bool am_root;
	bool utf8; /* the locale's character set is UTF-8 (names are printed as rsync prints them) */
	/* outcome */
	unsigned long errors;   /* errors that make the exit 23 */
	unsigned long vanished; /* source files that vanished (exit 24) */
	bool io_error;          /* an error that forbids deletion */
	int filter_fatal;       /* a merge file met during the scan stopped the run: rsync's exit status */
	uint64_t total_size;    /* -v: sizes of the listed files and symlinks, as rsync's "total size" */
	uint64_t sent;          /* -v: file data bytes written */
	bool fatal;             /* stop now (destination full, signal, the connection lost) */
	bool peer_gone;         /* a remote transfer's other side is gone (said), or ended the run itself */
	int fatal_code;
	uint64_t deleted;       /* entries deleted */
	uint64_t skipped_deletes; /* deletions --max-delete stopped */
	unsigned long changed;  /* source files that changed while read (a warning: rsync exits 0) */
};

/* symlinks.c: rsync's unsafe symlink: target climbs above the transfer's top from rel (or is absolute). */
bool sync_unsafe_symlink(const char *target, const char *rel);

/*
 * fakesuper.c, --fake-super: a user.rsync.%stat record parsed (0, -EINVAL
 * when it is not rsync's exact format), and the entry name in dirfd listed
 * as its record says (st changed in place). 0, -EBADMSG for a corrupt record (said,
 * naming shown) or -errno.
 */
struct fake_stat {
	uint32_t mode, uid, gid;
	uint64_t rdev;
};
int fake_parse(const char *rec, struct fake_stat *f);
int fake_overlay(const struct sync_ctx *c, int dirfd, const char *name, const char *shown, struct sweep_stat *st);
/* The same for rel beneath the directory root. */
int fake_overlay_at(const struct sync_ctx *c, int root, const char *rel, struct sweep_stat *st);
/* A placeholder symlink's target (its data, at most PATH_MAX bytes, no NUL): malloc'ed, or NULL with errno. */
char *fake_read_target(int dirfd, const char *name);

/* hostspec.c: whether an operand names another machine, as rsync reads it. */
struct hostspec {
	const char *user, *host, *path; /* user and host are not NUL-terminated: see the lengths */
	size_t user_len, host_len;
	bool daemon; /* HOST::MODULE or rsync://: rsync's daemon protocol */
};
bool hostspec_parse(const char *arg, struct hostspec *h);

/*
 * opath.c: open a path the operator named, following a symlink on the way
 * (or at the end) only when root or the user running owns it. fd or
 * -errno; -ELOOP with *untrusted set when a symlink of another user was
 * in the way. opath_open_parent opens the directory holding path's last
 * component (*ret_name).
 */
int opath_open(const char *path, int flags, mode_t mode, bool *untrusted);
/* The same for a relative path beneath the directory at (AT_FDCWD: the working directory). */
int opath_openat(int at, const char *path, int flags, mode_t mode, bool *untrusted);
int opath_open_parent(const char *path, const char **ret_name, bool *untrusted);
/* rsync's message for such a symlink, on stderr. */
void opath_refusal_msg(void);
/* --insecure-links: follow every symlink in those paths, as rsync before 3.4 did. */
extern bool opath_insecure;

/* A side's entry as its scan lists it (flist.c), or as a remote sender sends it (remote_recv.c). */
struct scan_ent {
	char *rel;
	uint32_t root;
	uint32_t sidx; /* index on the wire */
	unsigned flags; /* N_PROTECT, N_PERISH */
	struct side sd;
};

/* flist.c: scan and merge. */
int flist_scan(struct sync_ctx *c);
/* The source or destination path of a node, for messages (a buffer that the next call reuses: copy it). */
const char *node_src_path(struct sync_ctx *c, const struct sync_node *n, char **buf);
const char *node_dst_path(struct sync_ctx *c, const struct sync_node *n, char **buf);
/* The name of a node below src_fd[n->root] or dest_fd. */
const char *node_src_rel(const struct sync_ctx *c, const struct sync_node *n);
const char *node_dst_rel(const struct sync_ctx *c, const struct sync_node *n);
/* Open the descriptors above (after the scan, once DEST exists). 0 or -errno (message printed). */
int flist_open_roots(struct sync_ctx *c);
void flist_close_roots(struct sync_ctx *c);
/* The destination entries the scan listed at the top lie below dest_fd (same device and inode). */
bool flist_dest_is_scanned(const struct sync_ctx *c);
void flist_free(struct sync_list *l);
/*
 * Print (in list order) and free the names the scan left out: the
 * directories (rsync's sender names them, before DEST is made) or the
 * rest (its generator's "skipping non-regular file", after).
 */
void skips_print(struct sync_ctx *c, bool dirs);

/* itemize.c: rsync's %i strings. */
#define IT_ATIME    (1u << 0)
#define IT_CHANGE   (1u << 1)
#define IT_SIZE     (1u << 2)
#define IT_TIME     (1u << 3)
#define IT_PERMS    (1u << 4)
#define IT_OWNER    (1u << 5)
#define IT_GROUP    (1u << 6)
#define IT_ACL      (1u << 7)
#define IT_XATTR    (1u << 8)
#define IT_NEW      (1u << 13)
#define IT_LOCAL    (1u << 14) /* created or changed here, without a data transfer ('c', or 'h' with a link target) */
#define IT_TRANSFER (1u << 15) /* data transferred ('>') */
#define IT_HLINK    (1u << 16) /* 'h': a hard link to xname */
#define IT_MATCHED  (1u << 17) /* matched a basis (--link-dest and the like): no 'T' without -t */
/* Flags that make an item worth printing with a single -i. */
#define IT_SIGNIFICANT (~(unsigned)IT_LOCAL & ~(unsigned)IT_HLINK & ~(unsigned)IT_MATCHED)

/* Times equal as rsync's quick check sees them (whole seconds, or --modify-window). */
extern long long sync_modify_window;
bool same_mtime(const struct fst *a, const struct fst *b);
/* Compare source and destination attributes of n as rsync's itemize() does. */
unsigned itemize_attrs(struct sync_ctx *c, struct sync_node *n);
/* The same against another entry d of n's name in the tree held by d_root (a --link-dest DIR). */
unsigned itemize_attrs_vs(struct sync_ctx *c, struct sync_node *n, const struct fst *d, int d_root);

/*
 * basis.c: --link-dest, --compare-dest, --copy-dest. basis_open holds the
 * DIRs (relative ones below DEST, as rsync takes them), once DEST is open.
 * basis_find looks n up in each, as rsync's try_dests_*: 0 none, 1 an entry
 * of n's type, 2 the same data (or symlink target, device), 3 and the same
 * attributes too; *st and *which say which DIR's entry is the best.
 * basis_link makes n's destination a hard link to that entry.
 */
int basis_open(struct sync_ctx *c);
void basis_close(struct sync_ctx *c);
int basis_find(struct sync_ctx *c, struct sync_node *n, struct fst *st, int *which);
int basis_link(struct sync_ctx *c, const struct sync_node *n, int which);
/* The directory holding rel beneath root (no symlink followed), and rel's last component: fd or -errno. */
int sync_parent_beneath(int root, const char *rel, const char **name);

/*
 * backup.c: -b, --backup-dir, --suffix. backup_open holds the backup
 * directory (made when missing) once DEST is open. backup_keep keeps n's
 * destination entry (a non-directory) before it is replaced (a hard link,
 * move false) or deleted (moved, move true): 0 or -errno.
 */
int backup_open(struct sync_ctx *c);
void backup_close(struct sync_ctx *c);
int backup_keep(struct sync_ctx *c, const struct sync_node *n, bool move);
/* Print the line for n ("%i %n%L"); xname is the hard-link target or NULL. */
void itemize_print(struct sync_ctx *c, const struct sync_node *n, unsigned iflags, const char *xname);
/* "*deleting   path" (or "deleting path" for -v), in node at's place (SIZE_MAX: now). */
void itemize_deleting(struct sync_ctx *c, size_t at, const char *rel, bool is_dir);
/* A name (or any text from outside) printed as rsync prints names: control bytes as \#ooo. */
void sync_put_name(const struct sync_ctx *c, FILE *f, const char *s);
/* Format the 11-character code into buf[12]. */
void itemize_code(const struct sync_opts *o, mode_t mode, unsigned iflags, char buf[12]);

/*
 * out.c: stdout lines in rsync's list order. out_add keeps text for node
 * idx; lines are printed once every node before is decided and settled
 * (not waiting for the copy engine or for its hard-link group's first
 * copy). out_decided: nodes before n are decided; out_settled: a node
 * stopped waiting; out_drain: print the rest (end of the apply phase).
 */
int out_init(struct sync_ctx *c);
void out_add(struct sync_ctx *c, size_t idx, const char *text, size_t len);
/* The same for one --log-file line (text[len] must be its NUL: synclog_record() prefixes and escapes it). */
void out_add_log(struct sync_ctx *c, size_t idx, const char *text, size_t len);
void out_decided(struct sync_ctx *c, size_t n);
void out_settled(struct sync_ctx *c);
void out_drain(struct sync_ctx *c);

/*
 * synclog.c, --log-file and --log-file-format: rsync's log file. Each
 * line "YYYY/MM/DD HH:MM:SS [PID] TEXT", control bytes (C0 but tab, C1)
 * and a backslash starting "\#ddd" in TEXT escaped as \#ooo (rsync's
 * logit()). synclog_open: the file (opened as the operator's paths are,
 * opath.c), its first line; 0 (a file that cannot be opened is said and
 * the run goes on without a log, as rsync's).
 * synclog_format_check: a --log-file-format string's escapes are ones
 * we have (0, or -EINVAL said). synclog_item: the line of an entry,
 * in its turn (out.c); synclog_text: a line now (printf format).
 */
int synclog_open(struct sync_ctx *c);
void synclog_close(void);
bool synclog_on(void);
int synclog_format_check(const char *fmt);
/* One line of text (a final newline dropped, any other escaped); NUL-separated ones (out.c's slots). */
void synclog_record(const char *text, size_t len);
void synclog_write(const char *text, size_t len);
void synclog_text(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void synclog_item(struct sync_ctx *c, const struct sync_node *n, unsigned iflags, const char *xname);
void synclog_deleting(struct sync_ctx *c, size_t at, const char *rel, bool is_dir);

/*
 * idmap.c: --usermap, --groupmap, --chown. idmap_parse: a FROM:TO,... list
 * (0, -EINVAL said, -ENOMEM); idmap_map: the id a source id maps to (itself
 * when no FROM matches; numeric: --numeric-ids, names are not looked at).
 */
struct idmap;
int idmap_parse(const char *arg, bool users, struct idmap **ret);
uint32_t idmap_map(const struct idmap *m, uint32_t id, bool numeric);
struct idmap *idmap_free(struct idmap *m);

/* listonly.c: list the SRC operands ops[0..nsrc) as rsync --list-only: the exit status. */
int sync_list_only(struct sync_ctx *c, char **ops, int nsrc);

/* report.c: rsync's numbers (-h), closing lines, --stats and progress lines. */
const char *report_num(const struct sync_ctx *c, uint64_t n);
int report_type(mode_t m);
void report_summary(const struct sync_ctx *c, const struct timespec *start);
void report_file_done(struct sync_ctx *c, size_t idx, uint64_t bytes, double secs);
void report_progress2(struct sync_ctx *c);
double report_now(void);

/*
 * perms.c: without -p, the mode rsync gives n when it is new: the source's
 * bits masked by its DEST directory's default ACL (else the umask), no
 * set-id or sticky bits (but a set-group-ID parent's, for a directory).
 */
uint32_t perms_new_mode(struct sync_ctx *c, const struct sync_node *n);
/* -E without -p: an existing entry's mode, its execute bits following the source's (rsync's dest_mode()) */
uint32_t perms_exec_mode(uint32_t src_mode, uint32_t dst_mode);

/* digest.c: a 128-bit streaming digest for -c (not cryptographic). */
struct digest {
	uint64_t h1, h2, len;
	unsigned char tail[16];
	size_t ntail;
};
void digest_init(struct digest *d);
void digest_update(struct digest *d, const void *data, size_t len);
void digest_final(struct digest *d, unsigned char out[16]);

/* checksum.c: digest both sides of the -c candidates, one sweep per filesystem. */
int checksum_run(struct sync_ctx *c);

/* apply.c */
int apply_run(struct sync_ctx *c);

/*
 * main.c: the phases of a run, for a local transfer and for the receiving
 * side of a remote one. DEST as rsync's receiver sees it:
 */
struct sync_dest {
	char *dst;       /* DEST without trailing slashes */
	const char *arg; /* DEST as given */
	int stat;        /* 0, or -errno of stat(DEST) */
	bool is_dir;
	bool container;  /* DEST is a directory the transfer goes into, made when missing */
	int missing;     /* SRC operands that could not be read */
	bool mkpath_missing; /* --mkpath -n: directories on the way to DEST that a real run would make */
};
/* The context's defaults (descriptors, locale, signals). */
void sync_ctx_init(struct sync_ctx *c, const struct timespec *start);
/* Stat DEST, hold it when it is a directory: 0, or the exit status after the message. */
int sync_dest_open(struct sync_ctx *c, const char *dest_arg, struct sync_dest *d);
/* rsync's first line with -v: "sending incremental file list" (receiving: "receiving ..."). */
void sync_list_header(const struct sync_ctx *c, bool receiving);
/* The SRC operands (or --files-from's names) as roots of the transfer: 0, or the exit status after the message. */
int sync_add_operands(struct sync_ctx *c, struct sync_dest *d, char **ops, int nsrc);
/* Once the roots are known: scan, compare, transfer, delete, report. The exit status. */
int sync_run(struct sync_ctx *c, struct sync_dest *d);
/*
 * mkpath.c, --mkpath: make the missing directories of DEST (whole) or of the
 * directory holding it, counted on stdout as rsync does. 0, or the exit
 * status after the message.
 */
int sync_mkpath(struct sync_ctx *c, struct sync_dest *d, bool whole);
/* Free what the run holds. */
void sync_done(struct sync_ctx *c, struct sync_dest *d);

/*
 * listfile.c: the files options name, read whole once on the client
 * (listfile_open), sent to a server, which reads only those.
 */
FILE *listfile_open(const char *name, int *err, bool *untrusted);
int listfile_add(const char *name, const void *data, size_t len);
void listfile_server(void);
size_t listfile_count(void);
void listfile_get(size_t i, const char **name, const char **data, size_t *len);
void listfile_free_all(void);

/*
 * remote*.c: a transfer over a remote shell. The client starts
 * "sweep-sync --server" at the other end; the sender walks and reads its
 * side, the receiver runs sync_run() with the source's list, data and
 * digests taken from the wire instead of a local tree.
 */
int remote_client(struct sync_ctx *c, int argc, char **argv, int nsrc);
int remote_server_main(int argc, char **argv);
/* the receiver's hooks in flist.c, checksum.c and apply.c */
int remote_recv_flist(struct sync_ctx *c, struct scan_ent **v, size_t *n, size_t *cap);
int remote_recv_check(struct sync_ctx *c);
int remote_csum_want(struct sync_ctx *c, size_t i);
int remote_csum_send(struct sync_ctx *c);
int remote_csum_collect(struct sync_ctx *c);
int remote_request(struct sync_ctx *c, size_t i);
int remote_flush(struct sync_ctx *c);
void remote_remove_sources(struct sync_ctx *c);
/* The bytes on the wire so far, as the client sent and received them (report.c's closing lines). */
void remote_wire_counts(const struct sync_ctx *c, uint64_t *sent, uint64_t *received);
/* A source entry's attributes as the sender sent them (-A, -X), or NULL. */
const struct sweep_copy_xattr *remote_xattrs(const struct sync_ctx *c, const struct sync_node *n, size_t *count);
/* apply.c: the source of n as the copy engine takes it (sp: its path as shown). */
struct sweep_copy_src;
const struct sweep_copy_src *sync_src_of(struct sync_ctx *c, const struct sync_node *n, const char *sp,
					 struct sweep_copy_src *src, struct sweep_stat *st);
/* apply.c: --no-super: gid is the user's group or one of its supplementary groups (rsync's is_in_group()) */
bool sync_in_my_groups(uint32_t gid);
/* apply.c: --remove-source-files on this side's list (the sender of a remote transfer runs it too). */
void sync_remove_sources(struct sync_ctx *c);
/* checksum.c: a source file could not be digested (reported, counted, left out). */
void checksum_source_failed(struct sync_ctx *c, size_t i, const char *path, int status);

/* main.c: report an error about path, count it. */
void sync_error(struct sync_ctx *c, const char *path, int err);
void sync_vanished(struct sync_ctx *c, const char *path);
/* The signal that asked us to stop (0 for none); the copy engine sees it as its cancel flag. */
extern volatile sig_atomic_t sync_stop_signal;

#endif
