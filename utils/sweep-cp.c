/* SPDX-License-Identifier: MIT */
/*
 * sweep-cp: cp -r / cp -a that reads the source in one physical sweep and
 * writes the copy in the same order. This file only parses arguments,
 * decides the target names the way cp does, and prints; the copying is
 * libsweep's copy engine (sweep_copy_new(3)).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sweep.h>

#include "cli.h"
#include "copy_msg.h"
#include "progress.h"
#include "testhook.h"

/* The signal that asked us to stop; the engine sees it through copy_opts.cancel. */
static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/* INT, TERM, HUP: stop, remove the temporaries, then die of the same signal. */
static void catch_signals(void)
{
	struct sigaction sa = {.sa_handler = on_signal}; /* no SA_RESTART: a blocked wait returns */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

static void die_of_signal(void)
{
	int sig = stop_signal;
	signal(sig, SIG_DFL);
	raise(sig);
	exit(128 + sig);
}

struct cp {
	bool verbose;
	bool failed;
	bool interactive; /* -i: ask before replacing */
	bool force;       /* -f or --remove-destination: how -i words its question */
	struct progress *progress;
};

/* on_done's cookie for a directory --parents made on the way: cp -v names those unquoted. */
#define PARENT_COOKIE 1

static void usage(void)
{
	printf("Usage: %s [OPTION]... [-T] SOURCE DEST\n"
	       "  or:  %s [OPTION]... SOURCE... DIRECTORY\n"
	       "  or:  %s [OPTION]... -t DIRECTORY SOURCE...\n"
	       "Copy SOURCE to DEST, or multiple SOURCE(s) to DIRECTORY, reading the sources\n"
	       "in physical disk order and writing the copies in the same order.\n\n"
	       "  -a, --archive                same as -dR --preserve=all\n"
	       "      --attributes-only        don't copy the file data, just the attributes\n"
	       "      --backup[=CONTROL]       make a backup of each existing destination file\n"
	       "  -b                           like --backup but does not accept an argument\n"
	       "      --copy-contents          copy contents of special files when recursive\n"
	       "  -d                           same as --no-dereference --preserve=links\n"
	       "  -H                           follow command-line symbolic links in SOURCE\n"
	       "  -L, --dereference            always follow symbolic links in SOURCE\n"
	       "  -P, --no-dereference         never follow symbolic links in SOURCE\n"
	       "  -i, --interactive            prompt before overwrite (overrides a previous -n\n"
	       "                                 option)\n"
	       "  -l, --link                   hard link files instead of copying\n"
	       "  -n, --no-clobber             do not overwrite an existing file (overrides\n"
	       "                                 a previous -i option)\n"
	       "  -p                           same as --preserve=mode,ownership,timestamps\n"
	       "      --preserve[=ATTR_LIST]   preserve the specified attributes (default:\n"
	       "                                 mode,ownership,timestamps); also links, xattr, all\n"
	       "      --no-preserve=ATTR_LIST  don't preserve the specified attributes\n"
	       "      --parents                use full source file name under DIRECTORY\n"
	       "  -r, -R, --recursive          copy directories recursively\n"
	       "      --reflink[=WHEN]         clone data: auto (default), always, never\n"
	       "      --sparse=WHEN            holes: auto (default), always, never\n"
	       "      --strip-trailing-slashes  remove any trailing slashes from each SOURCE\n"
	       "                                 argument\n"
	       "  -s, --symbolic-link          make symbolic links instead of copying\n"
	       "  -S, --suffix=SUFFIX          override the usual backup suffix\n"
	       "  -t, --target-directory=DIRECTORY  copy all SOURCE arguments into DIRECTORY\n"
	       "  -T, --no-target-directory    treat DEST as a normal file\n"
	       "  -u, --update                 copy only when SOURCE is newer than DEST or DEST is missing\n"
	       "  -v, --verbose                explain what is being done\n"
	       "  -f, --force                  replace a destination symlink that loops, and with\n"
	       "                                 -l or -s an existing destination (copies always\n"
	       "                                 replace atomically)\n"
	       "      --remove-destination     replace an existing destination, never write through\n"
	       "                                 a symbolic link found there\n"
	       "  -x, --one-file-system        stay on this file system\n"
	       "      --fsync                  flush each file to disk before renaming it into place\n"
	       "      --order=ORDER            read order: auto, physical, inode, name, none\n"
	       "      --batch=N                files per physical sweep (default: as many as 32 MiB holds)\n"
	       "      --writes=HOW             write the data with: auto (default), uring, pwrite\n"
	       "      --progress[=SECONDS]     show progress: a line redrawn on a terminal, else\n"
	       "                                 (or with SECONDS) a line every SECONDS (default 10)\n"
	       "      --stats                  print how the files were copied, on stderr, at the end\n"
	       "      --device=CLASS           hdd, ssd or auto (default): the device class of every\n"
	       "                               filesystem (--stats says which class and why)\n"
	       "  -Z                           (no SELinux here: nothing to set; refused where there is)\n"
	       "      --help                   display this help and exit\n"
	       "      --version                output version information and exit\n\n"
	       "The backup suffix is '~', unless set with --suffix or SIMPLE_BACKUP_SUFFIX.\n"
	       "The version control method may be selected via the --backup option or through\n"
	       "the VERSION_CONTROL environment variable: none, off (never make backups);\n"
	       "numbered, t (make numbered backups); existing, nil (numbered if numbered\n"
	       "backups exist, simple otherwise); simple, never (always make simple backups).\n"
	       "An abbreviated long option means what it means to cp: sweep-cp's own options\n"
	       "(--batch, --device, --fsync, --order, --progress, --stats, --writes) are\n"
	       "written out in full.\n\n"
	       "Each file is written as an unnamed temporary in its destination directory\n"
	       "(or, where the filesystem has none, under a name starting with '.sweep-tmp.')\n"
	       "and put in place when complete. Nothing outside DEST is ever written: no\n"
	       "symlink below DEST, nor one swapped in while it runs, is followed.\n",
	       cli_prog(), cli_prog(), cli_prog());
}

static void bad_usage(const char *fmt, const char *arg)
{
	if (fmt)
		cli_msg(fmt, arg);
	cli_try_help();
	exit(1);
}

/* Whether this kernel enforces SELinux (what cp's --preserve=context needs). */
static bool selinux_enabled(void)
{
	return access("/sys/fs/selinux/enforce", F_OK) == 0;
}

/*
 * "mode,ownership,..." -> SWEEP_PRESERVE_* bits, hard links in *links, and
 * whether the list names mode (mode or all) in *mode, the security context
 * in *context.
 */
static unsigned parse_preserve(const char *list, bool *links, bool *mode, bool *context)
{
	unsigned bits = 0;
	char *copy = strdup(list), *save = NULL;
	if (!copy)
		cli_die(1, "out of memory");
	for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		if (!strcmp(w, "mode")) {
			bits |= SWEEP_PRESERVE_MODE | SWEEP_PRESERVE_ACL;
			*mode = true;
		}
		else if (!strcmp(w, "ownership"))
			bits |= SWEEP_PRESERVE_OWNER;
		else if (!strcmp(w, "timestamps"))
			bits |= SWEEP_PRESERVE_TIMES;
		else if (!strcmp(w, "links"))
			*links = true;
		else if (!strcmp(w, "xattr"))
			bits |= SWEEP_PRESERVE_XATTR;
		else if (!strcmp(w, "all")) {
			bits |= SWEEP_PRESERVE_ALL;
			*links = true;
			*mode = true;
		} else if (!strcmp(w, "context")) {
			*context = true;
		} else {
			fprintf(stderr, "%s: invalid argument %s for '--preserve'\n", cli_prog(), cli_quote(w));
			free(copy);
			bad_usage(NULL, NULL);
		}
	}
	free(copy);
	return bits;
}

static int parse_when(const char *opt, const char *arg, const char *const *words)
{
	for (int i = 0; words[i]; i++)
		if (!strcmp(arg, words[i]))
			return i;
	fprintf(stderr, "%s: invalid argument %s for '%s'\n", cli_prog(), cli_quote(arg), opt);
	bad_usage(NULL, NULL);
	return 0;
}

static int on_error(const struct sweep_copy_error *ce, void *ctx)
{
	struct cp *c = ctx;
	char buf[8192];
	/* A file that changed while read was still copied as read; cp does not warn either. */
	if (ce->op == SWEEP_COPY_OP_CHANGED)
		return 0;
	progress_clear(c->progress);
	cli_msg("%s", copy_error_format(ce, buf, sizeof(buf)));
	c->failed = true;
	return 0;
}

static int on_done(const struct sweep_copy_done *d, void *ctx)
{
	struct cp *c = ctx;

	progress_copy_done(c->progress, d);
	/* cp -v names what it makes: not an existing directory it merges into. */
	if (c->verbose && d->how != SWEEP_COPY_HOW_SKIPPED && !(d->how == SWEEP_COPY_HOW_DIR && d->existed)) {
		progress_clear(c->progress);
		if (d->cookie == PARENT_COOKIE) { /* cp prints --parents' directories as they are */
			printf("%s -> %s\n", d->src, d->dst);
			return 0;
		}
		char *s = strdup(cli_quote(d->src));
		printf("%s -> %s", s ? s : d->src, cli_quote(d->dst));
		if (d->backup)
			printf(" (backup: %s)", cli_quote(d->backup));
		putchar('\n');
		free(s);
	}
	return 0;
}

/* fd 0 was closed when we started: /dev/null, write-only, holds its place (see guard_stdin). */
static bool stdin_was_closed;

/*
 * cp run with stdin closed: its number is held by /dev/null opened
 * write-only, so no file the copy opens becomes "stdin" (cp -i would read
 * its answers from it), and reading an answer fails as it does for cp.
 */
static void guard_stdin(void)
{
	if (fcntl(0, F_GETFD) >= 0 || errno != EBADF)
		return;
	stdin_was_closed = true;
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd > 0)
		close(fd); /* (0 is the lowest free number: it is 0 or nothing) */
}

/*
 * cp's close_stdin at exit: an answer that could not be read (stdin
 * closed, or not readable) is "error closing file" and exit 1, with the
 * close's error where it failed (a closed stdin: EBADF).
 */
static void close_stdin(void)
{
	bool read_failed = ferror(stdin);

	errno = 0;
	int err = fclose(stdin) != 0 ? errno : 0;
	if (stdin_was_closed)
		err = EBADF;
	if (read_failed || (err && err != EBADF)) {
		/* not cli_msg: stdout is closed already */
		if (err)
			fprintf(stderr, "%s: error closing file: %s\n", cli_prog(), strerror(err));
		else
			fprintf(stderr, "%s: error closing file\n", cli_prog());
		_exit(1);
	}
}

/* A line from stdin that says yes (cp's yesno: it starts with y or Y). */
static bool yes(void)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n = getline(&line, &cap, stdin);
	bool ok = n > 0 && (line[0] == 'y' || line[0] == 'Y');

	free(line);
	return ok;
}

/* cp -i: asked before an existing non-directory is replaced, in cp's words. */
static int on_exists(const char *src, const char *dst, const struct sweep_stat *st, void *ctx)
{
	struct cp *c = ctx;

	(void)src;
	if (!c->interactive)
		return 1;
	progress_clear(c->progress);
	fflush(stdout);
	if (!S_ISLNK(st->mode) && faccessat(AT_FDCWD, dst, W_OK, AT_EACCESS) < 0 && errno == EACCES) {
		char perms[11];
		cli_mode_string(st->mode, perms);
		fprintf(stderr,
			c->force ? "%s: replace %s, overriding mode %04o (%s)? " : "%s: unwritable %s (mode %04o, %s); try anyway? ",
			cli_prog(), cli_quote(dst), st->mode & 07777, perms + 1);
	} else {
		fprintf(stderr, "%s: overwrite %s? ", cli_prog(), cli_quote(dst));
	}
	return yes() ? 1 : 0;
}

/*
 * A backup method as cp reads it (an exact word, or an abbreviation whose
 * matches all mean one method); what names it in the message: "backup type"
 * for --backup's argument, "$VERSION_CONTROL" for the environment's.
 */
static enum sweep_copy_backup parse_backup(const char *arg, const char *what)
{
	static const struct { const char *word; enum sweep_copy_backup kind; } words[] = {
		{ "none", SWEEP_COPY_BACKUP_NONE },         { "off", SWEEP_COPY_BACKUP_NONE },
		{ "simple", SWEEP_COPY_BACKUP_SIMPLE },     { "never", SWEEP_COPY_BACKUP_SIMPLE },
		{ "existing", SWEEP_COPY_BACKUP_EXISTING }, { "nil", SWEEP_COPY_BACKUP_EXISTING },
		{ "numbered", SWEEP_COPY_BACKUP_NUMBERED }, { "t", SWEEP_COPY_BACKUP_NUMBERED },
	};
	int found = -1;
	bool ambiguous = false;
	size_t n = strlen(arg);

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		if (!strcmp(arg, words[i].word))
			return words[i].kind;
		if (n && !strncmp(arg, words[i].word, n)) {
			if (found >= 0 && words[found].kind != words[i].kind)
				ambiguous = true;
			found = (int)i;
		}
	}
	if (found >= 0 && !ambiguous)
		return words[found].kind;
	fprintf(stderr, "%s: %s argument %s for %s\n", cli_prog(), ambiguous ? "ambiguous" : "invalid", cli_quote(arg),
		cli_quote_locale(what));
	fprintf(stderr, "Valid arguments are:\n  - 'none', 'off'\n  - 'simple', 'never'\n  - 'existing', 'nil'\n"
			"  - 'numbered', 't'\n");
	bad_usage(NULL, NULL);
	return SWEEP_COPY_BACKUP_NONE;
}

/* A path without its trailing slashes ("a//" -> "a", "/" stays), in place. */
static void strip_slashes(char *p)
{
	size_t n = strlen(p);
	while (n > 1 && p[n - 1] == '/')
		p[--n] = '\0';
}

/*
 * cp --parents: the directories on the way to SOURCE's copy under the target
 * directory, each a copy of the source's directory there (mode, and with -p
 * owner and times, applied at the end as for any directory), where the
 * copy's directory is not there yet; with preserve (-p, -a, --preserve)
 * one that is there gets the source directory's attributes too, as cp's
 * re_protect() gives them (coreutils tests/cp/parent-perm.sh); rel is
 * SOURCE without its leading slashes. 0, or -1 after cp's message.
 */
static int make_parents(struct sweep_copy *e, const char *target, const char *src, const char *rel, bool preserve)
{
	const char *last = strrchr(rel, '/');
	size_t lead = (size_t)(rel - src);
	struct stat st;

	for (const char *p = strchr(rel, '/'); last && p && p <= last; p = strchr(p + 1, '/')) {
		char *sdir = strndup(src, lead + (size_t)(p - rel)), *ddir = strndup(rel, (size_t)(p - rel)), *path;
		if (!sdir || !ddir || asprintf(&path, "%s/%s", target, ddir) < 0)
			cli_die(1, "out of memory");
		int rc = 0;
		bool there = stat(path, &st) == 0;
		if (there && !S_ISDIR(st.st_mode)) { /* it must be a directory, as cp checks */
			cli_msg("%s exists but is not a directory", cli_quote(path));
			rc = -1;
		} else if (there && !preserve) {
			/* left as it is: cp -p gives an existing one the source's attributes too */
		} else if (stat(sdir, &st) < 0 || !S_ISDIR(st.st_mode)) {
			int err = errno;
			cli_msg("failed to get attributes of %s: %s", cli_quote(sdir),
				strerror(S_ISDIR(st.st_mode) ? err : ENOTDIR));
			rc = -1;
		} else {
			struct sweep_stat sst;
			sweep_stat_from_stat(&sst, &st);
			struct sweep_copy_src s = { .size = sizeof(s), .root_fd = AT_FDCWD, .rel = sdir, .path = sdir,
						    .st = &sst, .flags = SWEEP_COPY_SRC_FOLLOWED };
			rc = sweep_copy_entry(e, &s, ddir, PARENT_COOKIE) < 0 ? -1 : 0;
		}
		free(sdir);
		free(ddir);
		free(path);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* The engine's steps: a batch sorted for --progress, the test hooks' points (compiled in only with -Dtest_hooks=true). */
static int on_step(enum sweep_copy_step step, const char *src, const char *dst, uint64_t cookie, void *ctx)
{
	static uint64_t read, written, batches;

	(void)src, (void)dst;
	if (step == SWEEP_COPY_STEP_SORT)
		progress_planning(((struct cp *)ctx)->progress, cookie); /* cookie: the batch's files */
	else if (step == SWEEP_COPY_STEP_FLUSH)
		test_pause("plan", ++batches);
	else if (step == SWEEP_COPY_STEP_OPENED)
		test_pause("read", ++read);
	else if (step == SWEEP_COPY_STEP_WRITTEN)
		test_pause("write", ++written);
	return 0;
}

static void on_bytes(uint64_t n, void *ctx)
{
	static uint64_t total;

	progress_add(((struct cp *)ctx)->progress, 0, n);
	test_pause("bytes", total += n);
}

static void on_plan(uint64_t files, uint64_t bytes, void *ctx)
{
	progress_plan(((struct cp *)ctx)->progress, files, bytes);
}

/* The last component of a source, trailing slashes ignored ("a/b/" -> "b"). */
static char *base_name(const char *src)
{
	size_t n = strlen(src);
	while (n > 1 && src[n - 1] == '/')
		n--;
	size_t b = n;
	while (b > 0 && src[b - 1] != '/')
		b--;
	return strndup(src + b, n - b);
}

/*
 * DEST as the directory it goes in and its name there: "a/b/c" -> "a/b" and
 * "c", "c" -> "." and "c", "/c" -> "/" and "c"; trailing slashes stay on the
 * name ("a/c/" -> "a", "c/"), where they mean "must be a directory".
 */
static void split_dest(const char *dest, char **ret_dir, const char **ret_name)
{
	size_t end = strlen(dest);
	while (end > 1 && dest[end - 1] == '/')
		end--;
	size_t b = end;
	while (b > 0 && dest[b - 1] != '/')
		b--;
	*ret_name = dest + b;
	if (b == 0)
		*ret_dir = strdup(".");
	else if (b == 1)
		*ret_dir = strdup("/");
	else
		*ret_dir = strndup(dest, b - 1);
	if (!*ret_dir)
		cli_die(1, "out of memory");
}

/* Is path a directory (following symlinks)? If not, *err says why (-ENOENT, -ENOTDIR, ...). */
static bool is_dir(const char *path, int *err)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		*err = -errno;
		return false;
	}
	*err = S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
	return !*err;
}

/* An operand seen before: its name as given and the file it named. */
struct seen_src {
	const char *name;
	dev_t dev;
	ino_t ino;
};

/* gnulib's same_name: the same last component in the same directory ("a" and "./a"). */
static bool same_name(const char *a, const char *b)
{
	char *ba = base_name(a), *bb = base_name(b);
	bool same = ba && bb && !strcmp(ba, bb);

	free(ba);
	free(bb);
	if (!same)
		return false;
	char *da = NULL, *db = NULL;
	const char *na, *nb;
	struct stat sa, sb;
	split_dest(a, &da, &na);
	split_dest(b, &db, &nb);
	same = stat(da, &sa) == 0 && stat(db, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	free(da);
	free(db);
	return same;
}

/* A non-directory operand given before (the same name for the same file), else remembered in seen[*n]. */
static bool source_again(const char *src, bool follow, struct seen_src *seen, int *n)
{
	struct stat st;

	if ((follow ? stat(src, &st) : lstat(src, &st)) < 0 || S_ISDIR(st.st_mode))
		return false;
	for (int i = 0; i < *n; i++)
		if (seen[i].dev == st.st_dev && seen[i].ino == st.st_ino && same_name(seen[i].name, src))
			return true;
	seen[(*n)++] = (struct seen_src){ .name = src, .dev = st.st_dev, .ino = st.st_ino };
	return false;
}

static void print_stats(const struct sweep_copy *e)
{
	struct sweep_copy_stats s = { .size = sizeof(s) };
	sweep_copy_stats(e, &s);
	fprintf(stderr,
		"%s: files %llu (cloned %llu, copy_file_range %llu, read %llu), dirs %llu, other %llu, skipped %llu, "
		"bytes %llu, sweeps %llu, errors %llu, write requests %llu (%s, %s), writer threads %u\n",
		cli_prog(), (unsigned long long)s.files, (unsigned long long)s.cloned, (unsigned long long)s.ranged,
		(unsigned long long)(s.files - s.cloned - s.ranged), (unsigned long long)s.dirs,
		(unsigned long long)s.others, (unsigned long long)s.skipped, (unsigned long long)s.bytes,
		(unsigned long long)s.batches, (unsigned long long)s.errors, (unsigned long long)s.write_requests,
		s.writes_uring ? "io_uring" : "pwrite", s.tmpfile ? "O_TMPFILE" : "named temporaries", (unsigned)s.writers);
}

enum { OPT_PRESERVE = 256, OPT_NO_PRESERVE, OPT_REFLINK, OPT_SPARSE, OPT_PROGRESS, OPT_FSYNC, OPT_ORDER,
       OPT_BATCH, OPT_STATS, OPT_REMOVE_DEST, OPT_WRITES, OPT_DEVICE, OPT_HELP, OPT_VERSION, OPT_ATTRS_ONLY,
       OPT_COPY_CONTENTS, OPT_PARENTS, OPT_STRIP_SLASHES };

int main(int argc, char **argv)
{
	/* In cp's order: an ambiguous abbreviation lists its possibilities in this order, as cp does. */
	static const struct option longopts[] = {
		{"archive", no_argument, NULL, 'a'},
		{"attributes-only", no_argument, NULL, OPT_ATTRS_ONLY},
		{"backup", optional_argument, NULL, 'b'},
		{"copy-contents", no_argument, NULL, OPT_COPY_CONTENTS},
		{"dereference", no_argument, NULL, 'L'},
		{"force", no_argument, NULL, 'f'},
		{"interactive", no_argument, NULL, 'i'},
		{"link", no_argument, NULL, 'l'},
		{"no-clobber", no_argument, NULL, 'n'},
		{"no-dereference", no_argument, NULL, 'P'},
		{"no-preserve", required_argument, NULL, OPT_NO_PRESERVE},
		{"no-target-directory", no_argument, NULL, 'T'},
		{"one-file-system", no_argument, NULL, 'x'},
		{"parents", no_argument, NULL, OPT_PARENTS},
		{"path", no_argument, NULL, OPT_PARENTS}, /* cp's old name for it */
		{"preserve", optional_argument, NULL, OPT_PRESERVE},
		{"recursive", no_argument, NULL, 'R'},
		{"remove-destination", no_argument, NULL, OPT_REMOVE_DEST},
		{"sparse", required_argument, NULL, OPT_SPARSE},
		{"reflink", optional_argument, NULL, OPT_REFLINK},
		{"strip-trailing-slashes", no_argument, NULL, OPT_STRIP_SLASHES},
		{"suffix", required_argument, NULL, 'S'},
		{"symbolic-link", no_argument, NULL, 's'},
		{"target-directory", required_argument, NULL, 't'},
		{"update", no_argument, NULL, 'u'},
		{"verbose", no_argument, NULL, 'v'},
		{"context", optional_argument, NULL, 'Z'},
		{"help", no_argument, NULL, OPT_HELP},
		{"version", no_argument, NULL, OPT_VERSION},
		/* sweep-cp's own */
		{"writes", required_argument, NULL, OPT_WRITES},
		{"fsync", no_argument, NULL, OPT_FSYNC},
		{"order", required_argument, NULL, OPT_ORDER},
		{"device", required_argument, NULL, OPT_DEVICE},
		{"batch", required_argument, NULL, OPT_BATCH},
		{"progress", optional_argument, NULL, OPT_PROGRESS},
		{"stats", no_argument, NULL, OPT_STATS},
		{NULL, 0, NULL, 0},
	};
	static const char *const reflink_words[] = {"auto", "always", "never", NULL};
	static const char *const sparse_words[] = {"auto", "always", "never", NULL};
	static const char *const writes_words[] = {"auto", "uring", "pwrite", NULL};
	struct cp c = {0};
	struct sweep_copy_opts o = {.size = sizeof(o), .on_error = on_error, .on_done = on_done, .on_bytes = on_bytes,
			      .on_plan = on_plan, .on_step = on_step, .ctx = &c, .cancel = &stop_signal};
	char deref = 0; /* 'L', 'H', 'P' or 0 for cp's default */
	bool links = false, no_target = false, stats = false, remove_dest = false;
	bool no_mode = false, want_context = false, make_backups = false, parents = false, strip = false;
	const char *version_control = NULL, *suffix = NULL;
	static const char *const own[] = {"batch", "device", "fsync", "order", "progress", "stats", "writes", NULL};
	struct progress_opts progress = { 0 };
	const char *target_dir = NULL;
	int opt;

	cli_init(argv[0]);
	guard_stdin();
	atexit(close_stdin); /* (after stdout's close: atexit runs them last first) */
	cli_close_stdout_atexit();
	if (cli_long_abbrev(argc, argv, longopts, own) < 0)
		bad_usage(NULL, NULL);
	while ((opt = getopt_long(argc, argv, "abdfHiLlnPpRrS:st:TuvxZ", longopts, NULL)) != -1) {
		switch (opt) {
		case 'b':
			make_backups = true;
			if (optarg)
				version_control = optarg;
			break;
		case 'S':
			make_backups = true;
			suffix = optarg;
			break;
		case 'i':
			c.interactive = true; /* the last of -i and -n wins */
			o.flags &= ~SWEEP_COPY_NO_CLOBBER;
			break;
		case 'l':
			o.flags |= SWEEP_COPY_HARD_LINK;
			break;
		case 's':
			o.flags |= SWEEP_COPY_SYMBOLIC_LINK;
			break;
		case OPT_ATTRS_ONLY:
			o.flags |= SWEEP_COPY_ATTRS_ONLY;
			break;
		case OPT_COPY_CONTENTS:
			o.flags |= SWEEP_COPY_CONTENTS;
			break;
		case OPT_PARENTS:
			parents = true;
			break;
		case OPT_STRIP_SLASHES:
			strip = true;
			break;
		case 'Z':
			/* as cp: without SELinux there is no context to set (a named one is warned of) */
			if (selinux_enabled())
				cli_die(1, "cannot set security contexts: not supported");
			if (optarg)
				cli_msg("warning: ignoring --context; it requires an SELinux-enabled kernel");
			break;
		case 'a':
			deref = 'P';
			links = true;
			o.flags |= SWEEP_COPY_RECURSIVE;
			o.preserve |= SWEEP_PRESERVE_ALL;
			break;
		case 'd':
			deref = 'P';
			links = true;
			break;
		case 'f':
			o.flags |= SWEEP_COPY_FORCE;
			c.force = true;
			break;
		case 'H':
		case 'L':
		case 'P':
			deref = (char)opt;
			break;
		case 'n':
			o.flags |= SWEEP_COPY_NO_CLOBBER;
			c.interactive = false;
			break;
		case 'p':
			o.preserve |= SWEEP_PRESERVE_MODE | SWEEP_PRESERVE_ACL | SWEEP_PRESERVE_OWNER | SWEEP_PRESERVE_TIMES;
			break;
		case OPT_PRESERVE:
			if (optarg) {
				bool mode = false, context = false;
				unsigned bits = parse_preserve(optarg, &links, &mode, &context);
				o.preserve |= bits;
				if (bits & SWEEP_PRESERVE_XATTR)
					o.preserve |= SWEEP_PRESERVE_STRICT;
				if (mode)
					no_mode = false;
				if (context)
					want_context = true;
			} else {
				o.preserve |= SWEEP_PRESERVE_MODE | SWEEP_PRESERVE_ACL | SWEEP_PRESERVE_OWNER | SWEEP_PRESERVE_TIMES;
			}
			break;
		case OPT_NO_PRESERVE: {
			bool nolinks = false, mode = false, context = false;
			o.preserve &= ~parse_preserve(optarg, &nolinks, &mode, &context);
			if (nolinks)
				links = false;
			if (mode)
				no_mode = true; /* cp: new copies get the default modes, not the source's */
			if (context)
				want_context = false;
			break;
		}
		case 'r':
		case 'R':
			o.flags |= SWEEP_COPY_RECURSIVE;
			break;
		case OPT_REFLINK:
			o.reflink = optarg ? (enum sweep_copy_reflink)parse_when("--reflink", optarg, reflink_words)
					   : SWEEP_COPY_REFLINK_ALWAYS;
			break;
		case OPT_SPARSE:
			o.sparse = (enum sweep_copy_sparse)parse_when("--sparse", optarg, sparse_words);
			break;
		case 't':
			target_dir = optarg;
			break;
		case 'T':
			no_target = true;
			break;
		case 'u':
			o.flags |= SWEEP_COPY_UPDATE;
			break;
		case 'v':
			c.verbose = true;
			break;
		case OPT_REMOVE_DEST:
			remove_dest = true;
			c.force = true;
			break;
		case 'x':
			o.flags |= SWEEP_COPY_ONE_FS;
			break;
		case OPT_WRITES:
			o.writes = (enum sweep_copy_writes)parse_when("--writes", optarg, writes_words);
			break;
		case OPT_FSYNC:
			o.flags |= SWEEP_COPY_FSYNC;
			break;
		case OPT_ORDER:
			if (sweep_order_parse(optarg, &o.order) < 0)
				bad_usage("invalid order '%s'", optarg);
			break;
		case OPT_DEVICE:
			if (cli_device_option(optarg) < 0) {
				cli_try_help();
				return 2;
			}
			break;
		case OPT_PROGRESS:
			if (progress_parse(optarg, &progress) < 0)
				bad_usage(NULL, NULL);
			break;
		case OPT_BATCH: {
			uint64_t n;
			if (cli_parse_size(optarg, &n) < 0 || n == 0 || n > (1u << 30))
				bad_usage("invalid batch size '%s'", optarg);
			o.batch_files = (size_t)n;
			break;
		}
		case OPT_STATS:
			stats = true;
			break;
		case OPT_HELP:
			usage();
			return 0;
		case OPT_VERSION:
			cli_version("sweep-cp");
			return 0;
		default:
			bad_usage(NULL, NULL);
		}
	}
	/* cp: without SELinux there is no context to keep; with it, sweep-cp cannot keep one either. */
	if (want_context)
		cli_die(1, selinux_enabled() ? "cannot preserve security context: not supported"
					     : "cannot preserve security context without an SELinux-enabled kernel");
	if (c.interactive) /* (asked only then: the engine replaces what it is told to) */
		o.on_exists = on_exists;
	if ((o.flags & SWEEP_COPY_HARD_LINK) && (o.flags & SWEEP_COPY_SYMBOLIC_LINK))
		bad_usage("cannot make both hard and symbolic links", NULL);
	if (make_backups && (o.flags & SWEEP_COPY_NO_CLOBBER))
		bad_usage("options --backup and --no-clobber are mutually exclusive", NULL);
	if (make_backups) {
		const char *env = getenv("VERSION_CONTROL");
		o.backup = version_control ? parse_backup(version_control, "backup type")
			 : env && *env     ? parse_backup(env, "$VERSION_CONTROL")
					   : SWEEP_COPY_BACKUP_EXISTING;
		if (!suffix)
			suffix = getenv("SIMPLE_BACKUP_SUFFIX");
		o.backup_suffix = suffix;
	}
	/* POSIX cp makes the file a dangling symlink names; GNU cp does only when asked this way. */
	if (getenv("POSIXLY_CORRECT"))
		o.flags |= SWEEP_COPY_WRITE_DANGLING;
	if (links)
		o.flags |= SWEEP_COPY_LINKS;
	if (no_mode)
		o.flags |= SWEEP_COPY_DEFAULT_MODES;
	/*
	 * cp writes a file through a symlink at the destination it is given;
	 * with --remove-destination it removes the name first instead, which
	 * the engine's rename onto the name does atomically. Inside a tree, a
	 * symlink at the destination is replaced, never written through (unlike
	 * GNU cp: it would write outside DEST; sweep-cp(1), NOTES).
	 */
	o.flags |= remove_dest ? SWEEP_COPY_REMOVE_DEST : SWEEP_COPY_WRITE_THROUGH;
	/* cp follows symlinks only when not copying recursively, unless told otherwise. */
	if (deref == 'L' || (deref == 0 && (o.flags & SWEEP_COPY_RECURSIVE) && (o.flags & SWEEP_COPY_HARD_LINK)))
		o.flags |= SWEEP_COPY_DEREF_ALL; /* (cp -rl follows every symlink: it links what they name) */
	else if (deref == 'H' || (deref == 0 && !(o.flags & SWEEP_COPY_RECURSIVE)))
		o.flags |= SWEEP_COPY_DEREF_ROOTS;

	char **ops = argv + optind;
	int nops = argc - optind;
	if (target_dir && no_target)
		bad_usage("cannot combine --target-directory (-t) and --no-target-directory (-T)", NULL);
	if (nops < 1)
		bad_usage("missing file operand", NULL);
	if (!target_dir && nops == 1)
		bad_usage("missing destination file operand after %s", cli_quote(ops[0]));
	if (no_target && nops > 2)
		bad_usage("extra operand %s", cli_quote(ops[2]));

	/* Decide: copy into a directory, or one SOURCE to the name DEST. */
	const char *dir = target_dir;
	int err = 0;
	if (!dir && !no_target && is_dir(ops[nops - 1], &err))
		dir = ops[nops - 1];
	if (target_dir && !is_dir(target_dir, &err))
		cli_die(1, "target directory %s: %s", cli_quote(target_dir), strerror(-err));
	if (!dir && nops > 2)
		cli_die(1, "target %s: %s", cli_quote(ops[nops - 1]), strerror(-err));
	if (parents && !dir)
		bad_usage("with --parents, the destination must be a directory", NULL);
	int nsrc = target_dir ? nops : nops - 1;
	for (int i = 0; strip && i < nsrc; i++)
		strip_slashes(ops[i]);
	/*
	 * cp --force --backup foo foo: a copy of foo under its backup name (cp
	 * turns it into cp --force foo fooSUFFIX).
	 */
	char *self_backup = NULL;
	struct stat self_st;
	if (!dir && (o.flags & SWEEP_COPY_FORCE) && o.backup != SWEEP_COPY_BACKUP_NONE && !strcmp(ops[0], ops[1]) &&
	    lstat(ops[0], &self_st) == 0 && S_ISREG(self_st.st_mode)) {
		char *d = NULL;
		const char *base;
		split_dest(ops[1], &d, &base);
		int dfd = open(d, O_PATH | O_DIRECTORY | O_CLOEXEC);
		char *bk = NULL;
		if (dfd < 0 || sweep_copy_backup_name(dfd, base, o.backup, o.backup_suffix, &bk) < 0 ||
		    asprintf(&self_backup, "%.*s%s", (int)(base - ops[1]), ops[1], bk) < 0)
			cli_die(1, "cannot backup %s", cli_quote(ops[1]));
		if (dfd >= 0)
			close(dfd);
		free(bk);
		free(d);
		ops[1] = self_backup;
		o.backup = SWEEP_COPY_BACKUP_NONE;
	}

	/*
	 * The destination's root, the walk's directory and root (or the batch's
	 * root), and a copy's source, directory and file: under that the copy
	 * would fail file by file (tests/cp/cp-nofile-low.sh copies at 8).
	 */
	cli_need_fds(5, 1);
	catch_signals();
	c.progress = progress_new(&progress);
	struct sweep_copy *e = NULL;
	int rc = sweep_copy_new(&o, &e);
	if (rc < 0)
		cli_die(1, "cannot start the copy engine: %s", strerror(-rc));
	/*
	 * Everything is written below one directory the engine holds: the
	 * target directory, or the directory DEST is to be made in. Names
	 * below it are never looked up through a symlink.
	 */
	char *dest_dir = NULL;
	const char *dest_name = NULL;
	if (dir) {
		rc = sweep_copy_set_dest(e, AT_FDCWD, dir, dir);
		if (rc < 0)
			cli_die(1, "target directory %s: %s", cli_quote(dir), strerror(-rc));
	} else {
		split_dest(ops[nops - 1], &dest_dir, &dest_name);
		rc = sweep_copy_set_dest(e, AT_FDCWD, dest_dir, dest_name == ops[nops - 1] ? "" : dest_dir);
		if (rc < 0) {
			/* cp's words for a destination whose directory is not there */
			char buf[8192];
			struct sweep_copy_error ce = { .op = SWEEP_COPY_OP_CREATE, .err = rc, .src = ops[0], .dst = ops[nops - 1] };
			cli_msg("%s", copy_error_format(&ce, buf, sizeof(buf)));
			c.failed = true;
		}
	}
	if (stats) /* which device class each source got, and why, before the copy */
		cli_device_report((const char *const *)ops, (size_t)nsrc);
	/* (with backups, an operand given twice is copied twice: each backs the other up, as cp does) */
	struct seen_src *seen = dir && nsrc > 1 && o.backup == SWEEP_COPY_BACKUP_NONE ? calloc((size_t)nsrc, sizeof(*seen))
										      : NULL;
	int nseen = 0;
	for (int i = 0; i < nsrc && rc >= 0 && !stop_signal; i++) {
		if (seen && source_again(ops[i], (o.flags & (SWEEP_COPY_DEREF_ALL | SWEEP_COPY_DEREF_ROOTS)) != 0, seen,
					 &nseen)) {
			/* cp: a warning, not an error, and the file is copied once */
			cli_msg("warning: source file %s specified more than once", cli_quote(ops[i]));
			continue;
		}
		if (parents) {
			char *src = strdup(ops[i]);
			if (!src)
				cli_die(1, "out of memory");
			strip_slashes(src);
			const char *rel = src;
			while (*rel == '/')
				rel++;
			if (!*rel || make_parents(e, dir, src, rel, o.preserve != 0) < 0)
				c.failed = true;
			else
				rc = sweep_copy_tree(e, ops[i], rel);
			free(src);
		} else if (dir) {
			char *base = base_name(ops[i]);
			if (!base)
				cli_die(1, "out of memory");
			/* cp -R src/.. dest copies into dest itself, never into dest/.. */
			rc = sweep_copy_tree(e, ops[i], strcmp(base, "..") ? base : ".");
			free(base);
		} else {
			rc = sweep_copy_tree(e, ops[i], dest_name);
		}
		if (rc > 0) /* not an error in the tree itself */
			rc = 0;
		else if (rc < 0 && rc != -ENOMEM && rc != -ECANCELED)
			rc = 0; /* reported; go on with the next operand */
	}
	free(dest_dir);
	free(seen);
	free(self_backup);
	/* Every operand walked: what is queued is all there is (the finish reads the last batch). */
	progress_walk_done(c.progress);
	rc = sweep_copy_finish(e);
	c.progress = progress_finish(c.progress, !stop_signal && rc >= 0);
	if (stats)
		print_stats(e);
	sweep_copy_free(e);
	if (stop_signal)
		die_of_signal();
	return rc != 0 || c.failed ? 1 : 0;
}
