/* SPDX-License-Identifier: MIT */
/*
 * rsync's filter rules for sweep-sync (rsync(1), FILTER RULES): the rule
 * prefixes and their long names, the modifiers (/ ! C s r p x e n w - +),
 * merge files (". FILE") read at once, per-directory merge files
 * (": FILE", -F's .rsync-filter, -C's .cvsignore) read from each
 * directory as the scan enters it, with rsync's inheritance and
 * anchoring, the CVS ignore list of -C, clear ("!") and rsync's wildcard
 * matching.
 *
 * The set holds the rules of the command line, for both sides. Each scan
 * (the source: the sender's view; the destination: the receiver's, which
 * decides what --delete may touch) makes a walk of it that keeps the
 * per-directory rules of every directory the scan entered. Directories are
 * known by the walk's ids (struct sweep_entry id and dir_id), so the scan
 * may visit them in any order as long as a directory comes before what is
 * inside it.
 */
#ifndef SWEEP_SYNC_FILTER_H
#define SWEEP_SYNC_FILTER_H

#include <stdbool.h>
#include <stdint.h>

struct filter_set;
struct filter_walk;

/* How an argument is read: --filter RULE, --exclude PAT, --include PAT. */
enum filter_arg { FILTER_RULE, FILTER_EXCLUDE, FILTER_INCLUDE };

struct filter_set *filter_set_new(void);
void filter_set_free(struct filter_set *fs);
/* --from0: filter files (merge files too, as in rsync) hold NUL-separated rules. */
void filter_set_from0(struct filter_set *fs, bool on);
/*
 * Add one argument's rules. 0; -EINVAL after rsync's message (exit 1); -EIO
 * when a merge file could not be read (exit 11); -ENOMEM.
 */
int filter_add(struct filter_set *fs, const char *arg, enum filter_arg how);
/* --exclude-from/--include-from FILE ("-": stdin). As filter_add. */
int filter_add_file(struct filter_set *fs, const char *file, bool include);
/* -C: rsync appends ":C" (each directory's .cvsignore) and "-C" (the CVS ignore list). */
int filter_add_cvs(struct filter_set *fs);
/* Whether any rule was given. */
bool filter_set_empty(const struct filter_set *fs);
/* Whether a rule of the command line is for xattr names (the 'x' modifier). */
bool filter_set_has_xattr(const struct filter_set *fs);
/* The xattr rules ('x') exclude the attribute name (-X): they replace the default that leaves system.* out. */
bool filter_xattr_excluded(const struct filter_set *fs, const char *name);

/* filter_check() results */
#define FILTER_NONE     0 /* no rule matched */
#define FILTER_INCLUDED 1
#define FILTER_EXCLUDED (-1)

/* filter_check() flags */
#define FILTER_DIR        0x1u /* the name is a directory */
#define FILTER_NO_PERISH  0x2u /* leave the perishable rules ('p', -C's list) out */
#define FILTER_AS_SENDER  0x4u /* the sender's view, on a receiver's walk (would the source list it?) */

/*
 * A side's walk. receiver: the destination's scan (protect/risk apply,
 * hide/show do not); delete_excluded: rules without a side are the
 * sender's only. NULL when out of memory.
 */
struct filter_walk *filter_walk_new(const struct filter_set *fs, bool receiver, bool delete_excluded);
void filter_walk_free(struct filter_walk *w);
/*
 * Where the walk's root number root lies: dir is its top directory as
 * named (read for the merge files of the directories above it, which a
 * per-directory merge file named with a '/' asks for), base the directory
 * its entries' names are relative to (the absolute path rules match
 * against). Call before the root's first entry.
 */
int filter_walk_root(struct filter_walk *w, uint32_t root, const char *dir, const char *base);
/*
 * A new pass (another sweep_walk, whose directory ids start over): the ids
 * of earlier passes stay known by their keys.
 */
void filter_walk_pass(struct filter_walk *w);
/* The key of directory id of this pass (0 for none), for filter_walk_root_parent(). */
uint64_t filter_walk_key(const struct filter_walk *w, uint64_t id);
/* Root number root starts below the directory of that key (a followed symlink's directory). */
int filter_walk_root_parent(struct filter_walk *w, uint32_t root, uint64_t key);
/* Whether directories must be entered (there are per-directory merge files to read). */
bool filter_walk_perdir(const struct filter_walk *w);
/*
 * Entering directory id (in directory parent_id, 0 for a root; the rules
 * of root number root): read its per-directory merge files beneath dfd,
 * the directory opened. rel is its name in the file list ("." for the
 * transfer root). 0, or -EINVAL after rsync's message for a bad rule in a
 * merge file (rsync stops with exit 1), -ENOMEM.
 */
int filter_enter(struct filter_walk *w, uint64_t parent_id, uint64_t id, uint32_t root, int dfd, const char *rel);
/*
 * The rules for rel (a name in the file list) in directory dir_id (0 for a
 * root) of root number root: FILTER_INCLUDED, FILTER_EXCLUDED or FILTER_NONE.
 */
int filter_check(const struct filter_walk *w, uint64_t dir_id, uint32_t root, const char *rel, unsigned flags);
/* The walk's fatal error (a bad rule in a merge file: exit 1), 0 when none. */
int filter_walk_error(const struct filter_walk *w);

/* rsync's wildcard match of a whole string ('*' '?' '[...]' stop at '/', '**' does not). */
bool filter_wildmatch(const char *pattern, const char *text);

#endif
