/* SPDX-License-Identifier: MIT */
/*
 * sweep-tar internals. The run has one shape (DESIGN.md §4):
 *
 *   walk (C-SCAN) --> per entry: directory  -> spooled, written at the end
 *                                symlink, device, FIFO, later hard link
 *                                           -> written at once
 *                                regular file -> added to the plan
 *   plan full or walk over --> sweep_batch sorts and reads it (the
 *                              library's loop); tar_read_ops write each
 *                              file's header and data in plan order
 *   walk over --> spooled directory entries, last met first (so each
 *                 follows its subdirectories), end of archive
 *
 * Directory entries go last because GNU tar sets a directory's mode and
 * times as soon as a member outside it follows; with members in physical
 * order that would happen long before the directory's files arrive, leaving
 * wrong mtimes (and, as non-root, read-only directories that cannot be
 * filled). After everything else, both GNU tar and bsdtar restore them
 * exactly; the files' parents are created on the way as usual. (A
 * directory with a default ACL is stored when met as well: see walk.c.)
 *
 * Except a directory that holds a placeholder member. GNU tar (1.34,
 * src/extract.c) does not create a symlink whose target is absolute or
 * has a ".." component, nor a hard link to one, when it meets it:
 * extract_symlink() and extract_link() call create_placeholder_file(),
 * which leaves an empty file there, and apply_delayed_links() swaps in
 * the link at the very end, changing the directory's mtime. The
 * directory's own status waits on the delayed_set_stat list, and
 * extract_finish() sets the status of every entry there before the links
 * (apply_nonancestor_delayed_set_stat(..., false)), except the entries
 * marked after_links, which it sets once the links are in place. An entry
 * is marked only by create_placeholder_file() itself, through
 * find_direct_ancestor() and mark_after_links(), and only if the
 * directory holding the placeholder has an entry on the list at that
 * moment. With directory members at the end it has one only if GNU tar
 * created the directory on its own for an earlier member and no member
 * outside the directory has come since (that entry would have been set
 * and dropped); in some member orders (a member inside it, then one
 * outside it, then the link) it has none, nothing is marked, and the
 * directory member that comes at the end is set before the link replaces
 * the placeholder: the directory keeps the extraction time. So such a
 * directory's entry is also written right before the first placeholder
 * member in it (dir_spool_pin): it is then on the list,
 * create_placeholder_file() marks it, and its entry at the end only
 * updates the marked one (delay_set_stat() finds it by name), so GNU tar
 * sets it after everything, in every member order. The entry at the end
 * stays for bsdtar: it defers the times of a directory it creates to the
 * end, but sets those of one that exists (made for an earlier member)
 * when its entry comes, so the early entry alone would leave it wrong.
 */
#ifndef SWEEP_TAR_H
#define SWEEP_TAR_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>

#include <archive.h>
#include <archive_entry.h>
#include <sweep.h>

#include "exclude.h"
#include "progress.h"

/* opts.c: the command line into o (exits on a usage error, as GNU tar does). */
struct tar_opts;
void tar_parse(int argc, char **argv, struct tar_opts *o);
/* The unconsumed file-selection options of -c, in GNU tar's words (exit 2 at the end). */
void tar_unconsumed_report(struct tar_opts *o);

/* GNU tar's exit statuses. */
#define TAR_OK      0
#define TAR_DIFFERS 1 /* some file changed or vanished while it was archived */
#define TAR_FATAL   2 /* some file could not be archived, or the archive failed */
#define TAR_USAGE  64 /* an unknown option or a missing argument (argp's EX_USAGE, as GNU tar) */

enum tar_filter {
	TAR_FILTER_NONE = 0,
	TAR_FILTER_GZIP,
	TAR_FILTER_BZIP2,
	TAR_FILTER_XZ,
	TAR_FILTER_ZSTD,
	TAR_FILTER_PROGRAM, /* -I PROG */
};

/* One PATH operand: where to walk, and how much of the walked path the member name drops. */
struct tar_root {
	char *path;   /* -C directory + "/" + operand, or the operand */
	size_t strip; /* bytes of path before the member name: the -C prefix and its "/" */
	char *dir;    /* the -C in force for it (NULL: none): -x extracts its members there */
	unsigned nexclude; /* -c: the --exclude patterns given before it (GNU tar's are positional) */
	unsigned match;    /* -t, -x, -d, --delete: how it matches member names (exclude.h's GNU flags) */
	bool no_recursion; /* --no-recursion before it: itself, not what is below it */
};

enum tar_mode {
	TAR_CREATE = 1, /* -c */
	TAR_LIST,       /* -t */
	TAR_EXTRACT,    /* -x */
	TAR_APPEND,     /* -r */
	TAR_UPDATE,     /* -u */
	TAR_CONCAT,     /* -A */
	TAR_DELETE,     /* --delete */
	TAR_DIFF,       /* -d */
};
/* How GNU tar names a mode in messages: "-c", "--delete" ... (opts.c) */
const char *tar_mode_option(enum tar_mode m);
/* The modes that write members from the tree (-c, -r, -u). */
#define TAR_WRITES_TREE(m) ((m) == TAR_CREATE || (m) == TAR_APPEND || (m) == TAR_UPDATE)

/* -x on a name that exists (other than a directory over a directory). */
enum tar_old_files {
	TAR_OLD_REPLACE = 0, /* GNU tar's default: replace it */
	TAR_OLD_KEEP,        /* -k, --keep-old-files: keep it, an error */
	TAR_OLD_SKIP,        /* --skip-old-files: keep it, silently */
};

/* The archive format written (-H, --format). */
enum tar_format {
	TAR_FMT_PAX = 0, /* pax, posix */
	TAR_FMT_GNU,     /* gnu, oldgnu */
	TAR_FMT_USTAR,
	TAR_FMT_V7,
};

/* --exclude-tag*, --exclude-caches*: what a directory holding the tag file loses. */
enum tar_tag_how {
	TAR_TAG_CONTENTS, /* its contents but the tag file (--exclude-tag, --exclude-caches) */
	TAR_TAG_UNDER,    /* its contents (--exclude-tag-under, --exclude-caches-under) */
	TAR_TAG_ALL,      /* itself and its contents (--exclude-tag-all, --exclude-caches-all) */
};
struct tar_tag {
	const char *file;
	enum tar_tag_how how;
	bool cachedir;    /* the file must start with CACHEDIR.TAG's signature */
};

/*
 * Options that select files apply to the names after them; in -c, GNU tar
 * reports those with no name after them ("... has no effect") and exits 2
 * at the end, the archive made all the same.
 */
struct unconsumed {
	size_t n;
	struct {
		int c;
		const char *arg;
	} v[64];
};

struct tar_opts {
	enum tar_mode mode;
	const char *archive; /* -f; NULL or "-" = stdout (-c) or stdin (-t, -x) */
	const char *extract_dir; /* -x: the last -C */
	unsigned occurrence; /* --occurrence=N: -t, -x, -d, --delete act on the Nth member a name selects */
	bool wildcards_default; /* neither --wildcards nor --no-wildcards was given (GNU tar's hint) */
	unsigned strip_components; /* -x: --strip-components=N */
	enum tar_old_files old_files; /* -x: what happens to a file that exists */
	bool to_stdout;      /* -x -O: file data to stdout, nothing written to disk */
	/* -x: what is restored; <0 until parsed: then the default for the user running (root: all) */
	int same_owner;      /* --same-owner, --no-same-owner (-o) */
	int same_perms;      /* -p, --no-same-permissions */
	int xattrs, acls;    /* --xattrs, --acls, --no-xattrs, --no-acls (-c stores both by default) */
	bool numeric_owner;  /* --numeric-owner: -x uses the ids, -c stores no names */
	bool touch;          /* -m: extracted files keep the extraction time */
	enum tar_format format;
	const char *compress_program; /* -I, --use-compress-program */
	bool dereference;    /* -h: archive what symlinks point to */
	bool hard_dereference; /* --hard-dereference: every name of a file with its data */
	struct tar_tag *tags;
	size_t ntags;
	/* Reproducible archives: --mtime (with --clamp-mtime: only later times), --owner, --group */
	bool set_mtime, clamp_mtime;
	struct timespec mtime;
	bool set_owner, set_group;
	uint64_t owner_id, group_id;
	char *owner_name, *group_name; /* NULL: none stored */
	struct unconsumed unconsumed;
	unsigned blocking;   /* -b N: records of N 512-byte blocks (0: GNU tar's 20) */
	bool names_failed;   /* a -T file had a line that could not be used (said so; exit 2 at the end) */
	bool files_from;     /* -T was given: no names is an empty archive, not an error */
	bool verify;         /* -W: -c, -r, -u compare the archive with the files afterwards */
	bool show_transformed; /* --show-transformed-names: -v and -t list names as changed */
	bool remove_files;   /* --remove-files: -c, -r, -u remove what they archived */
	bool ignore_failed_read; /* --ignore-failed-read: what cannot be read is a warning, exit status kept */
	/* --xattrs-include, --xattrs-exclude: fnmatch patterns of xattr names stored and restored */
	const char **xattr_include, **xattr_exclude;
	size_t nxattr_include, nxattr_exclude;
	bool absolute_names; /* -P: -c keeps a leading '/' and '..' parts; -d compares absolute names as they are */
	bool no_overwrite_dir; /* -x: a directory that exists keeps its metadata */
	bool check_links;    /* -l: -c says which hard-linked files were not archived with all their names */
	/*
	 * -h, or operands that overlap ("dir dir", "dir dir/sub"): a file of
	 * one name met twice is a hard link the second time, as in GNU tar
	 * (its trivial_link_count), so files of one name are kept in the
	 * link table too (memory per file, as GNU tar's).
	 */
	bool track_single_links;
	const char *index_file; /* --index-file: -v's listing goes there */
	bool pax_option;     /* --pax-option was given (pax.c holds what it says) */
	const char *one_top_level; /* -x, -t, -d: --one-top-level: every name below this directory */
	enum tar_filter filter;
	unsigned verbose;    /* -v: names; -vv: -tv's long lines */
	bool totals, xdev;
	struct progress_opts progress; /* --progress[=SECONDS] */
	enum sweep_order order;
	bool walk_order_members; /* --sort=name: members in walk order, the plan as added (walk.c) */
	uint64_t memory_limit; /* plan bound in bytes */
	const char *plan_trace;
	struct exclude *exclude; /* NULL when there is no --exclude */
	struct tar_root *roots;
	size_t nroots;
};

struct links;
struct link_rec;
struct name_prefix;
struct dir_spool;

/* Where libarchive's output goes: an fd, and the first write error (errno). */
struct tar_pax_rw;
struct tar_sink {
	int fd;
	int err;
	struct tar_pax_rw *rw; /* --pax-option=exthdr.name: the stream renamed on its way (pax.c) */
	/* Uncompressed -c: the sink blocks the stream itself, libarchive passes it through (out.c). NULL: libarchive blocks. */
	char *buf;
	size_t cap, len;  /* bytes buf holds, bytes pending in it */
	size_t record;    /* the stream is padded to a whole number of these at the end */
	uint64_t written; /* bytes out so far (through buf or past it) */
};

/* A directory the walk met that holds an --exclude-tag file: of its entries only that file is archived. */
struct tar_tagged {
	uint64_t id;      /* the walk's id of the directory */
	const char *file;
};

struct tar_update;
struct tar_removals;

struct tar {
	const struct tar_opts *o;
	struct tar_update *update;    /* -u: the members' mtimes (update.c) */
	struct tar_removals *removals; /* --remove-files: what goes once the archive is written (remove.c) */
	struct tar_tagged *tagged;
	size_t ntagged;
	struct archive *out;          /* the archive being written */
	struct archive *disk;         /* archive_read_disk: metadata lookups only */
	int disk_flags;               /* its ARCHIVE_READDISK_* behavior, set per entry (entry.c) */
	struct archive_entry *entry;  /* reused for every member */
	int out_fd;
	struct tar_sink sink;
	const char *out_name;         /* for messages: the -f argument or "-" */
	bool out_is_file;             /* a regular file: never archive it into itself */
	uint64_t out_dev, out_ino;
	bool failed;                  /* the archive cannot be written: stop */
	int status;                   /* TAR_OK, TAR_DIFFERS or TAR_FATAL */
	bool proc_fd;                 /* /proc/self/fd/N/name reaches a file by its directory fd */
	bool walk_no_stat;            /* the walk does not stat regular files (SWEEP_WALK_NO_STAT_FILES) */
	struct name_prefix *prefixes; /* the name prefixes dropped so far (names.c) */
	char *xname[2];               /* --transform: the last stored names (tar_stored_name) */
	const char *list_name;        /* -v: the next member's name as given, if not its stored one */
	FILE *listing;                /* -v: stdout, or stderr when the archive is stdout */
	struct progress *progress;

	struct links *links;
	struct dir_spool *dirs;
	struct sweep_batch *batch;      /* plan and read: the library's loop (walk.c's hooks) */
	const struct sweep_plan *plan;  /* the batch being read, for the reader callbacks */
	int trace_fd;
	bool trace_header_done;

	/* The file being written by the reader callbacks. */
	bool cur_linked;              /* written as a hard link member: no data */
	struct link_rec *cur_rec;     /* it holds the data of these names (tar_link_member) */
	bool cur_begun;
	uint64_t cur_pos, cur_size;
	bool cur_opened, cur_member;  /* progress: its planned size is the one at open; it is in the archive */

	/* --totals */
	double start;
	uint64_t members, files;
	uint64_t files_opened, bytes_read; /* the test hooks' counts (read:N, bytes:N) */
};

/* names.c */
/*
 * The member name for a walked path: without the -C prefix, and without
 * what GNU tar drops so that it extracts below the current directory
 * (leading '/', everything up to a ".." component), with its note.
 */
const char *tar_member_name(struct tar *t, const char *path, size_t strip);
/*
 * The name stored for a walked path: tar_member_name() then --transform
 * for kind (TAR_XFORM_NAME: the member's own name, TAR_XFORM_LINK: a hard
 * link's target). Valid until the next call for the same kind.
 */
const char *tar_stored_name(struct tar *t, const char *path, size_t strip, int kind);
/* What tar_member_name() drops from this path, or NULL. */
const struct name_prefix *tar_name_prefix(struct tar *t, const char *path, size_t strip);
/* A hard link to a name that lost prefix p: GNU tar's note for link targets, once. */
void tar_note_link_target(struct tar *t, const struct name_prefix *p);
/* A member read from an archive: leading '/' dropped from its name and hard link target, said as GNU tar does. */
bool tar_read_names(struct tar *t, struct archive_entry *e);
void tar_names_free(struct tar *t);
/* GNU tar extracts a symlink to target through a placeholder: absolute, or a ".." component. */
bool tar_placeholder_target(const char *target);
/* A name made printable for messages and -v: GNU tar's escapes (cli_escape), in the user's locale. */
const char *tar_printable(const char *name);
/* Whether the user's locale is multibyte (printable characters beyond ASCII listed as they are). */
void tar_names_locale(bool multibyte);
/* A walked path as messages show it: relative to its -C directory, printable. */
const char *tar_display(struct tar *t, const char *path);
/* "sweep-tar: PATH: message" as a warning (exit 1) or an error (exit 2). */
void tar_warn(struct tar *t, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void tar_error(struct tar *t, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A file or directory to archive that cannot be opened, listed, stat'ed or read: tar_error(), or with
   --ignore-failed-read GNU tar's "Warning: ..." that leaves the exit status (--warning=no-failed-read: silent). */
void tar_read_failed(struct tar *t, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* --warning=KEYWORD (GNU tar's keywords, "no-" to turn one off): 0, or -EINVAL for an unknown one. */
int tar_warning_option(const char *arg);
/* Whether a warning with this text is to be shown (not turned off by --warning). */
bool tar_warning_shown(const char *text);
/* list.c */
/* -v: one line per member, in archive order (-vv: as -tv lists it). */
void tar_list(struct tar *t, struct archive_entry *e);
/* -tv's line for e, named name (NULL: its pathname): GNU tar's columns. */
void tar_list_long(struct tar *t, FILE *out, struct archive_entry *e, const char *name);

/* out.c */
/* Open a for writing into k->fd; a write error lands in k->err (see out.c). */
int tar_sink_open(struct archive *a, struct tar_sink *k, int fd);
/* The sink's pending bytes out, padded to a record; its buffer freed. Once: later calls do nothing. */
void tar_sink_finish(struct tar_sink *k);
int tar_out_open(struct tar *t);
/* Bytes in a record (-b): the archive is padded to a whole number of them. */
size_t tar_record_size(const struct tar_opts *o);
/* Work around libarchive's pax times before 1970 (changes e; write it once). */
void tar_fix_times(struct archive_entry *e);
/* Header (and -v line) for t->entry or e; <0 when the archive failed (t->failed is set). */
int tar_out_header(struct tar *t, struct archive_entry *e);
int tar_out_data(struct tar *t, const void *buf, size_t len);
int tar_out_zeros(struct tar *t, uint64_t n);
int tar_out_finish(struct tar *t);
/* n zero bytes written to fd (a hole under -O, padding after -r, -u, --delete). 0 or -errno. */
int tar_write_zeros(int fd, uint64_t n);
/* End of archive and close; 0 or <0 (message printed). */
int tar_out_close(struct tar *t);
/* GNU tar's "Total bytes written" line and ours. */
void tar_out_totals(struct tar *t);

/* entry.c */
/* A regular file's data regions as SEEK_DATA/SEEK_HOLE gave them (n = 0: no data at all). */
struct tar_data_map {
	const struct sweep_extent *map;
	size_t n;
};
/*
 * Fill t->entry for member name from the file at accpath (what libarchive
 * opens for what an fd cannot give, e.g. default ACLs), fd (-1 if none) and
 * st; path names the file in messages. dm: the data regions of a regular
 * file when known (its sparse map then comes from them), else NULL
 * (libarchive probes). 0, or -errno after a message.
 */
int tar_entry_fill(struct tar *t, const char *name, const char *path, const char *accpath, int fd,
		   const struct sweep_stat *st, const struct tar_data_map *dm);
/*
 * What libarchive may open for an entry (tar_entry_fill's accpath): the
 * name below the open directory dirfd, or dirfd itself (at_name NULL),
 * through /proc/self/fd, so that no path is looked up again from the top
 * of the tree; path when /proc is missing.
 */
const char *tar_accpath(struct tar *t, int dirfd, const char *at_name, const char *path, char *buf, size_t len);
/* The owner fields of a member as the options want them (--numeric-owner). */
void tar_entry_owner(struct tar *t, struct archive_entry *e);
/* A hard link member: name -> the data holder of r, metadata from st. <0 when the archive failed. */
int tar_write_link(struct tar *t, const char *name, const struct link_rec *r, const struct sweep_stat *st);

/* links.c: the hard-link table (names of inodes with st_nlink > 1). */
enum link_state {
	LINK_PENDING = 0, /* a name that holds the data is being archived */
	LINK_WRITTEN = 1, /* the data holder is in the archive: later names are links */
	LINK_FAILED = 2,  /* the data holder could not be archived: the next name takes its place */
};
struct link_rec {
	struct link_rec *next; /* hash chain */
	uint64_t dev, ino;
	uint64_t unseen;       /* names not met yet (st_nlink minus names seen) */
	enum link_state state;
	char *target;          /* member name of the data holder once written */
	const struct name_prefix *target_prefix; /* what its walked path lost (names.c) */
	bool placeholder;      /* GNU tar extracts every name of it through a placeholder (tar.h) */
};
struct links *links_new(void);
struct links *links_free(struct links *l);
/*
 * Member name of the inode st is about to be archived. 1: it was written
 * as a link member to the name that holds the data (or to a placeholder:
 * then the entry of directory dir_id is pinned first); 0: it holds the
 * data itself, and *ret_rec is the record to hand to tar_link_done() (NULL
 * for a file of one name); <0: the archive failed.
 */
int tar_link_member(struct tar *t, const char *name, const struct sweep_stat *st, uint64_t dir_id,
		    struct link_rec **ret_rec);
/* -l: GNU tar's "Missing links to 'NAME'." for each file archived without all its names. */
void tar_links_missing(struct tar *t);
/* The data holder of rec (walked path, -C strip) was archived (ok), or not: the next name holds the data. */
int tar_link_done(struct tar *t, struct link_rec *rec, bool ok, const char *path, size_t strip);

/* dirs.c: directory entries, kept in a temporary pax stream until the end. */
struct dir_spool *dir_spool_new(struct tar *t);
struct dir_spool *dir_spool_free(struct dir_spool *s);
/* Keep t->entry, the directory the walk calls id, for the end. 0 or <0 after a message. */
int dir_spool_add(struct tar *t, uint64_t id);
/*
 * A placeholder member (see above) is about to be written into the
 * directory the walk calls id: write that directory's entry now as well
 * (once; it still comes at the end too). 0 (also when the directory is
 * not in the archive) or <0 when the archive failed.
 */
int dir_spool_pin(struct tar *t, uint64_t id);
/* Copy every kept entry into the archive. */
int dir_spool_flush(struct tar *t);

/* pax.c: --pax-option */
void tar_pax_option(const char *arg);
/* After GNU tar's checks: a keyword that cannot be honoured is refused (exit 2). */
void tar_pax_check(void);
/* A keyword --pax-option=delete= leaves out. */
bool tar_pax_deleted(const char *keyword);
/* What delete= takes out of a member (the mtime's fraction, ACLs, the sparse map). */
void tar_pax_entry(struct archive_entry *e);
/* exthdr.name was given: the stream is rewritten on its way out. */
bool tar_pax_renames(void);
void tar_pax_free(void);
struct tar_pax_rw *tar_pax_rw_new(void);
void tar_pax_rw_free(struct tar_pax_rw *rw);
int tar_pax_rw_write(struct tar_pax_rw *rw, const char *p, size_t n, int (*out)(void *ctx, const void *p, size_t n),
		     void *ctx);

/* mode.c: --mode=CHANGES (chmod's syntax): 0, or -1 when it cannot be parsed. */
int tar_mode_parse(const char *changes);
bool tar_mode_changes(void);
mode_t tar_mode_adjust(mode_t mode, bool dir);
void tar_mode_free(void);

/* ownermap.c: --owner-map, --group-map */
void tar_owner_map_read(const char *file, bool group);
/* The map's owner (group) for id: true with *to and *name (NULL: no name), false when it has none. */
bool tar_owner_map(bool group, uint64_t id, uint64_t *to, const char **name);
void tar_owner_maps_free(void);

/* backup.c: --backup[=CONTROL], --suffix */
void tar_backup_option(const char *control, const char *suffix);
bool tar_backups(void);
/* The backup name of base in the directory dirfd (malloc'ed; NULL: out of memory). */
char *tar_backup_name(int dirfd, const char *base);

/* remove.c: --remove-files, once the archive is complete. */
/* path (as walked, st its file) is removed at the end, if it is the same file then. 0 or -ENOMEM. */
int tar_remove_later(struct tar *t, const char *path, const struct sweep_stat *st, bool dir);
void tar_remove_files(struct tar *t);
void tar_removals_free(struct tar *t);

/* transform.c: --transform, --xform */
#define TAR_XFORM_NAME    0x01 /* member names ('r') */
#define TAR_XFORM_LINK    0x02 /* hard link targets ('h') */
#define TAR_XFORM_SYMLINK 0x04 /* symlink targets ('s') */
#define TAR_XFORM_ALL     0x07
/* An expression (or several, ';'-separated); a usage error exits as GNU tar does. */
void tar_transform_add(const char *expr);
bool tar_transforms(void);
/* name transformed for kind: malloc'ed, or NULL when no expression applies to kind. */
char *tar_transform(const char *name, int kind);
void tar_transform_free(void);

/* checkpoint.c: --checkpoint, --checkpoint-action */
void tar_checkpoint_option(const char *arg);
void tar_checkpoint_action(const char *arg);
/* After the options: the defaults, and wait= signals blocked (before any thread starts). */
void tar_checkpoint_ready(void);
/* Whether checkpoints are on. */
bool tar_checkpoints(void);
/* records of the archive were written (or read) so far: the checkpoints they reach. */
void tar_checkpoint_records(struct tar *t, bool write, uint64_t records);
/* Reading: the records begun by what libarchive has consumed of in. */
void tar_checkpoint_in(struct tar *t, struct archive *in);
void tar_checkpoint_finish(void);

/* update.c: -r, -u, -A, --delete on an uncompressed archive. */
/* -r, -u: the archive opened for writing after its last member (-u: their mtimes learnt). fd or -1 after a message. */
int tar_update_open(struct tar *t);
enum tar_update_verdict {
	TAR_UPD_ADD,  /* not in the archive, or newer than its member there */
	TAR_UPD_SKIP, /* as new in the archive (a directory there: not stored again, its entries looked at) */
};
enum tar_update_verdict tar_update_check(struct tar *t, const char *name, const struct sweep_stat *st);
void tar_update_free(struct tar *t);
/* -r, -u, after the end-of-archive blocks: zeros to a whole record from the archive's start. 0 or -errno. */
int tar_update_pad(struct tar *t);
/* -A, --delete: 0, or -1 after a message. */
int tar_concat(struct tar *t);
int tar_delete(struct tar *t);

/* select.c */
/* The operand that selects member name (counting it for --occurrence), o->nroots' 0 when there are none, or -1. */
long tar_select(const struct tar_opts *o, const char *name, unsigned *found);
/* "NAME: Not found in archive" for each operand that selected nothing (exit 2). */
void tar_report_unmatched(struct tar *t, const unsigned *found);
/* Whether the xattr name is stored (archiving) or restored: --xattrs-include, --xattrs-exclude. */
bool tar_xattr_selected(const struct tar_opts *o, const char *name, bool archiving);
/* The archive came through a pipe on stdin: read it to its end, as GNU tar does (the writer sees no EPIPE). */
void tar_drain_stdin(const struct tar_opts *o);

/* read.c */
extern const struct sweep_read_ops tar_read_ops;
/* extract.c */
/*
 * -t, -x, -d (mode), or -W after writing (verify): read the archive, and
 * list, extract or compare the members the operands select.
 */
int tar_read_archive(struct tar *t, enum tar_mode mode, bool verify);

/* diff.c */
/* -d: member e compared with the file of its name below dirfd; libarchive's status of reading its data. */
int tar_diff_member(struct tar *t, struct archive *in, struct archive_entry *e, int dirfd);
/* A member name as a name below the directory compared with (no leading '/', trailing '/'). malloc'ed. */
char *tar_diff_relname(struct tar *t, const char *name);

/* walk.c */
/* The batch's hooks: trace and test pause before a batch is read, the verdict after. */
int tar_on_batch(const struct sweep_plan *p, void *ctx);
/* A batch is about to be sorted: --progress says "planning N files". */
int tar_on_sort(const struct sweep_plan *p, void *ctx);
int tar_on_batch_end(const struct sweep_plan *p, int status, void *ctx);
/* Walk the roots, planning and writing as it goes; 0 or <0 when the archive failed. */
int tar_walk(struct tar *t);

#endif
