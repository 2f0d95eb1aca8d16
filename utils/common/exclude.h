/* SPDX-License-Identifier: MIT */
/*
 * --exclude matching shared by the tools, with the semantics of the tool
 * each one replaces:
 *
 *  EXCLUDE_GNU (du, tar): the pattern is an fnmatch(3) glob in which '*'
 *  and '?' also match '/'. It is tried against the whole path and against
 *  every suffix that starts after a '/' (gnulib exclude.c, unanchored), so
 *  "*.o", "b" and "a/b" all exclude "x/a/b". EXCLUDE_ANCHORED tries the
 *  whole path only; EXCLUDE_LEADING_DIR adds FNM_LEADING_DIR (GNU tar's
 *  default: "a/b" also matches "a/b/c"); EXCLUDE_SLASH_SPECIAL adds
 *  FNM_PATHNAME (tar --no-wildcards-match-slash); EXCLUDE_CASEFOLD adds
 *  FNM_CASEFOLD; EXCLUDE_NO_WILDCARDS compares the name as it is. A
 *  pattern without wildcards matches as a name either way, and such
 *  patterns are looked up in a hash table as gnulib keeps them: a million
 *  of them cost a few lookups per path, not a million matches.
 *
 *  EXCLUDE_RSYNC (sweep-sync): rsync's filter rules. '*' and '?' stop at
 *  '/', '**' crosses it; a pattern without '/' (other than a trailing one)
 *  and without '**' matches the last component only; a leading '/'
 *  anchors at the transfer root; otherwise it matches the tail of the path
 *  at a component boundary; a trailing '/' matches directories only;
 *  "dir/\*\*\*" matches dir and everything below. Rules are tried in the order
 *  they were added and the first that matches decides (include rules
 *  added with exclude_add_rule(..., true) let a name through).
 *
 * The path given to exclude_match is the one the tool matches on: for du
 * the path as printed (root operand + "/" + components), for tar the member
 * name, for rsync the path relative to the transfer root.
 */
#ifndef SWEEP_EXCLUDE_H
#define SWEEP_EXCLUDE_H

#include <stdbool.h>

/* exclude_new() flags: one syntax, plus modifiers. */
#define EXCLUDE_GNU           0x00u /* GNU du / GNU tar --exclude */
#define EXCLUDE_RSYNC         0x01u /* rsync --exclude / --include */
#define EXCLUDE_ANCHORED      0x10u /* GNU: match the whole path only */
#define EXCLUDE_LEADING_DIR   0x20u /* GNU: FNM_LEADING_DIR (tar's default) */
#define EXCLUDE_SLASH_SPECIAL 0x40u /* GNU: wildcards do not match '/' */
#define EXCLUDE_CASEFOLD      0x80u /* both: ignore case */
#define EXCLUDE_NO_WILDCARDS  0x100u /* GNU: the pattern is a name, '*' and '?' are themselves (tar --no-wildcards) */

struct exclude;

/* A new, empty set (matches nothing). NULL when out of memory. */
struct exclude *exclude_new(unsigned flags);
/* Add an exclude pattern: 0, -EINVAL (empty pattern) or -ENOMEM. */
int exclude_add(struct exclude *ex, const char *pattern);
/* Add a rule; include=true lets matching names through (rsync --include).
 * In GNU mode an include rule is refused with -EINVAL. */
int exclude_add_rule(struct exclude *ex, const char *pattern, bool include);
/*
 * Add a GNU pattern with flags of its own (GNU tar's matching options,
 * --anchored, --ignore-case, --wildcards and their --no- forms, apply to the
 * patterns after them): 0, -EINVAL or -ENOMEM.
 */
int exclude_add_flags(struct exclude *ex, const char *pattern, unsigned flags);
/* exclude_add_file() with each pattern's flags (GNU mode). */
int exclude_add_file_flags(struct exclude *ex, const char *file, unsigned flags);
/*
 * GNU's match of one pattern against a name (gnulib exclude_fnmatch), the
 * GNU flags above: tar uses it for the member names given to -t, -x and
 * --delete as well.
 */
bool exclude_fnmatch(const char *pattern, const char *name, unsigned flags);
/* Add one pattern per line of file ("-" = stdin), like du -X / tar -X.
 * Empty lines are skipped. 0 or -errno. */
int exclude_add_file(struct exclude *ex, const char *file);
/* Number of rules added. */
unsigned exclude_count(const struct exclude *ex);
/*
 * true when path is excluded. name is its last component (may be NULL:
 * then it is taken from path); is_dir says whether it is a directory
 * (rsync's trailing-slash rules need it).
 */
bool exclude_match(const struct exclude *ex, const char *path, const char *name, bool is_dir);
/*
 * exclude_match() with only the first n rules added (GNU tar -c: an
 * --exclude applies to the names after it, so each name is matched against
 * the patterns given before it).
 */
bool exclude_match_first(const struct exclude *ex, unsigned n, const char *path, const char *name, bool is_dir);
/* Free the set; accepts NULL, returns NULL. */
struct exclude *exclude_free(struct exclude *ex);

#endif
