/* SPDX-License-Identifier: MIT */
/* Shared command-line helpers: messages in the "prog: path: strerror" form, sizes. */
#ifndef SWEEP_CLI_H
#define SWEEP_CLI_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <sweep.h>

/* Set the program name used in messages (basename of argv[0]). */
void cli_init(const char *argv0);
const char *cli_prog(void);

/* "prog: message" on stderr. */
void cli_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Also hand every message cli_msg/cli_error/cli_die print ("prog: ...\n") to fn (NULL: none), as a log. */
void cli_set_message_hook(void (*fn)(const char *msg, size_t len));
/* "prog: path: strerror(-err)" on stderr; err is a negative errno. */
void cli_path_error(const char *path, int err);
/* "prog: message: strerror(-err)" */
void cli_error(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Print an error and exit with status. */
void cli_die(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

/*
 * Before anything is done: where the open-file limit leaves fewer than
 * need descriptors besides those open now, say so once and exit with
 * status (a limit too low is refused whole, not met by one error a file).
 */
void cli_need_fds(unsigned need, int status);

/* "Try 'prog --help' for more information." on stderr (after a usage error). */
void cli_try_help(void);

struct option;
/*
 * Long options abbreviated as the peer tool (cp, du, tar, rsync) would read
 * them: an abbreviation is resolved among the options not listed in own
 * (the tool's own additions, NULL-terminated), so "--b=simple" means
 * --backup as it does to cp even where the tool also has --batch; its own
 * options are written out in full. Rewrites argv in place before getopt;
 * -1 (after the message, as getopt words it) on an ambiguous or
 * unrecognized one.
 */
int cli_long_abbrev(int argc, char **argv, const struct option *opts, const char *const *own);

/*
 * A file name quoted for a message exactly as coreutils quotes it ('a b',
 * "it's", 'a'$'\n''b', $'\377'; a printable multibyte character is kept
 * when the tool has set a multibyte locale). Static buffers, four in turn,
 * so one message can quote up to four names.
 */
const char *cli_quote(const char *path);
/* The same, but only when the name needs it (coreutils quotef, for "name: reason"). */
const char *cli_quotef(const char *path);
/*
 * A name with GNU tar's escapes (its -v listing, quotearg's escape style):
 * backslash as \\, \a \b \f \n \r \t \v, every other control byte
 * and DEL as \ooo; a byte above 0x7f as \ooo unless multibyte is set and
 * it starts a printable character of the locale. Spaces stay as they are.
 * printf '%b' (shell) reverses it. Four buffers in turn; the name itself
 * when out of memory.
 */
const char *cli_escape(const char *name, bool multibyte);
/* An argument quoted as coreutils quote() does ('x' in C, curved quotes in a UTF-8 locale; two buffers). */
const char *cli_quote_locale(const char *arg);

/*
 * ls -l's mode column of a full st_mode: the type letter ('-' for a regular
 * file), then rwx with the set-id and sticky letters ("drwxr-sr-T").
 */
void cli_mode_string(unsigned mode, char out[11]);

/* Write all of buf (again after EINTR and short writes). 0 or -errno. */
int cli_write_all(int fd, const void *buf, size_t len);

/* Parse "123", "4K", "1.5M", "2G", "1T" (powers of 1024; KB/MB suffixes = 1000). 0 or -EINVAL. */
int cli_parse_size(const char *s, uint64_t *ret);

/*
 * Check stdout at exit as coreutils close_stdout does: "prog: write error"
 * (with the reason when the close itself failed) and exit status 1.
 */
void cli_close_stdout_atexit(void);

/*
 * --device=hdd|ssd|auto, the same in every tool: force the device class of
 * every filesystem for this run (sweep_device_force; auto: decide). On
 * another word, "prog: invalid --device argument 'x' (hdd, ssd or auto)"
 * and -EINVAL: the tool then exits as it does on a usage error.
 */
int cli_device_option(const char *arg);

/*
 * For -v and the like: two lines on stderr per filesystem under paths,
 * "prog: PATH: ext4 on loop3: device class ssd (probe of loop3: ...)",
 * which class it got and why (sweep_device_explain), and "prog: PATH:
 * profile: plan none, walk inode, ..." what the library does there
 * (sweep_profile_explain).
 */
void cli_device_report(const char *const *paths, size_t n);
/*
 * The order a plan of the files under path takes: the caller's order, or
 * under AUTO the plan order of path's device profile (AUTO when path cannot
 * be described). Where it is PHYSICAL the walk need not stat regular files:
 * the plan takes each file's location from the walk's raw inode hint, or
 * opens the file for FIEMAP and fstat's it then (one lookup, not two), and
 * the reader checks identity and reports from its own fstat.
 */
enum sweep_order cli_plan_order(enum sweep_order order, const char *path);

/* Print the standard --version text. */
void cli_version(const char *prog);

/*
 * Start fn(arg) on a thread of the tool's own with every signal blocked, so
 * that the tool's handlers run on its main thread (the library does the
 * same for its threads). 0 or -errno.
 */
int cli_thread_start(pthread_t *tid, void *(*fn)(void *), void *arg);

#endif
