/* SPDX-License-Identifier: MIT */
/*
 * The command line: GNU tar's options, spellings, messages and exit
 * statuses (its traditional bundles, TAR_OPTIONS, -T lists with options
 * in them), into struct tar_opts.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "tar.h"

/*
 * The plan's memory per batch: at about 110 bytes a file, 2.4 million files
 * in one batch, so most trees are read in one sweep. A tree split into
 * batches is swept once per batch, and on an aged disk neighbours of one
 * batch are separated by files of the others: the aged 1M-file ext4 tree in
 * 64 MiB batches took 601,142 read requests and 101.4 s of the HDD model,
 * in one batch 365,121 and 71.3 s. The limit is a bound, not a reservation.
 */
#define DEFAULT_MEMORY_LIMIT (256u << 20)

enum {
	OPT_TOTALS = 256,
	OPT_EXCLUDE,
	OPT_ONE_FS,
	OPT_ZSTD,
	OPT_ORDER,
	OPT_MEMORY_LIMIT,
	OPT_PROGRESS,
	OPT_PLAN_TRACE,
	OPT_FORMAT,
	OPT_NULL,
	OPT_NO_NULL,
	OPT_NO_RECURSION,
	OPT_RECURSION,
	OPT_DEVICE,
	OPT_STRIP_COMPONENTS,
	OPT_SKIP_OLD_FILES,
	OPT_OVERWRITE,
	OPT_VERBATIM,
	OPT_NO_VERBATIM,
	OPT_SAME_OWNER,
	OPT_NO_SAME_OWNER,
	OPT_NO_SAME_PERMS,
	OPT_NUMERIC_OWNER,
	OPT_XATTRS,
	OPT_NO_XATTRS,
	OPT_ACLS,
	OPT_NO_ACLS,
	OPT_EXCLUDE_VCS,
	OPT_EXCLUDE_CACHES,
	OPT_EXCLUDE_CACHES_UNDER,
	OPT_EXCLUDE_CACHES_ALL,
	OPT_EXCLUDE_TAG,
	OPT_EXCLUDE_TAG_UNDER,
	OPT_EXCLUDE_TAG_ALL,
	OPT_HARD_DEREF,
	OPT_SORT,
	OPT_MTIME,
	OPT_CLAMP_MTIME,
	OPT_OWNER,
	OPT_GROUP,
	OPT_WARNING,
	OPT_RECORD_SIZE,
	OPT_DELETE,
	OPT_OCCURRENCE,
	OPT_ANCHORED,
	OPT_NO_ANCHORED,
	OPT_IGNORE_CASE,
	OPT_NO_IGNORE_CASE,
	OPT_WILDCARDS,
	OPT_NO_WILDCARDS,
	OPT_WILDCARDS_MATCH_SLASH,
	OPT_NO_WILDCARDS_MATCH_SLASH,
	OPT_EXCLUDE_BACKUPS,
	OPT_POSIX,
	OPT_CHECKPOINT,
	OPT_REMOVE_FILES,
	OPT_IGNORE_FAILED_READ,
	OPT_XATTRS_INCLUDE,
	OPT_MODE,
	OPT_PAX_OPTION,
	OPT_OWNER_MAP,
	OPT_GROUP_MAP,
	OPT_ADD_FILE,
	OPT_INDEX_FILE,
	OPT_NO_OVERWRITE_DIR,
	OPT_OVERWRITE_DIR,
	OPT_HOLE_DETECTION,
	OPT_BACKUP,
	OPT_SUFFIX,
	OPT_XATTRS_EXCLUDE,
	OPT_TRANSFORM,
	OPT_SHOW_TRANSFORMED,
	OPT_SHOW_STORED,
	OPT_ONE_TOP_LEVEL,
	OPT_CHECKPOINT_ACTION,
	OPT_USAGE,
	OPT_HELP,
	OPT_VERSION,
};

#define SHORT_OPTS "ctxruAdWPlf:C:T:vX:zjJkOpmohH:I:aSsb:"

static const struct option long_opts[] = {
	{ "create", no_argument, NULL, 'c' },
	{ "list", no_argument, NULL, 't' },
	{ "extract", no_argument, NULL, 'x' },
	{ "get", no_argument, NULL, 'x' },
	{ "append", no_argument, NULL, 'r' },
	{ "update", no_argument, NULL, 'u' },
	{ "catenate", no_argument, NULL, 'A' },
	{ "concatenate", no_argument, NULL, 'A' },
	{ "delete", no_argument, NULL, OPT_DELETE },
	{ "diff", no_argument, NULL, 'd' },
	{ "compare", no_argument, NULL, 'd' },
	{ "verify", no_argument, NULL, 'W' },
	{ "occurrence", optional_argument, NULL, OPT_OCCURRENCE },
	{ "anchored", no_argument, NULL, OPT_ANCHORED },
	{ "no-anchored", no_argument, NULL, OPT_NO_ANCHORED },
	{ "ignore-case", no_argument, NULL, OPT_IGNORE_CASE },
	{ "no-ignore-case", no_argument, NULL, OPT_NO_IGNORE_CASE },
	{ "wildcards", no_argument, NULL, OPT_WILDCARDS },
	{ "no-wildcards", no_argument, NULL, OPT_NO_WILDCARDS },
	{ "wildcards-match-slash", no_argument, NULL, OPT_WILDCARDS_MATCH_SLASH },
	{ "no-wildcards-match-slash", no_argument, NULL, OPT_NO_WILDCARDS_MATCH_SLASH },
	{ "exclude-backups", no_argument, NULL, OPT_EXCLUDE_BACKUPS },
	{ "posix", no_argument, NULL, OPT_POSIX },
	{ "checkpoint", optional_argument, NULL, OPT_CHECKPOINT },
	{ "remove-files", no_argument, NULL, OPT_REMOVE_FILES },
	{ "ignore-failed-read", no_argument, NULL, OPT_IGNORE_FAILED_READ },
	{ "xattrs-include", required_argument, NULL, OPT_XATTRS_INCLUDE },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "pax-option", required_argument, NULL, OPT_PAX_OPTION },
	{ "owner-map", required_argument, NULL, OPT_OWNER_MAP },
	{ "group-map", required_argument, NULL, OPT_GROUP_MAP },
	{ "add-file", required_argument, NULL, OPT_ADD_FILE },
	{ "index-file", required_argument, NULL, OPT_INDEX_FILE },
	{ "no-overwrite-dir", no_argument, NULL, OPT_NO_OVERWRITE_DIR },
	{ "overwrite-dir", no_argument, NULL, OPT_OVERWRITE_DIR },
	{ "hole-detection", required_argument, NULL, OPT_HOLE_DETECTION },
	{ "backup", optional_argument, NULL, OPT_BACKUP },
	{ "suffix", required_argument, NULL, OPT_SUFFIX },
	{ "absolute-names", no_argument, NULL, 'P' },
	{ "check-links", no_argument, NULL, 'l' },
	{ "xattrs-exclude", required_argument, NULL, OPT_XATTRS_EXCLUDE },
	{ "transform", required_argument, NULL, OPT_TRANSFORM },
	{ "xform", required_argument, NULL, OPT_TRANSFORM },
	{ "show-transformed-names", no_argument, NULL, OPT_SHOW_TRANSFORMED },
	{ "show-stored-names", no_argument, NULL, OPT_SHOW_STORED },
	{ "one-top-level", optional_argument, NULL, OPT_ONE_TOP_LEVEL },
	{ "checkpoint-action", required_argument, NULL, OPT_CHECKPOINT_ACTION },
	{ "files-from", required_argument, NULL, 'T' },
	{ "null", no_argument, NULL, OPT_NULL },
	{ "no-null", no_argument, NULL, OPT_NO_NULL },
	{ "no-recursion", no_argument, NULL, OPT_NO_RECURSION },
	{ "recursion", no_argument, NULL, OPT_RECURSION },
	{ "verbatim-files-from", no_argument, NULL, OPT_VERBATIM },
	{ "no-verbatim-files-from", no_argument, NULL, OPT_NO_VERBATIM },
	{ "strip-components", required_argument, NULL, OPT_STRIP_COMPONENTS },
	{ "keep-old-files", no_argument, NULL, 'k' },
	{ "skip-old-files", no_argument, NULL, OPT_SKIP_OLD_FILES },
	{ "overwrite", no_argument, NULL, OPT_OVERWRITE },
	{ "to-stdout", no_argument, NULL, 'O' },
	{ "preserve-permissions", no_argument, NULL, 'p' },
	{ "same-permissions", no_argument, NULL, 'p' },
	{ "no-same-permissions", no_argument, NULL, OPT_NO_SAME_PERMS },
	{ "same-owner", no_argument, NULL, OPT_SAME_OWNER },
	{ "no-same-owner", no_argument, NULL, OPT_NO_SAME_OWNER },
	{ "numeric-owner", no_argument, NULL, OPT_NUMERIC_OWNER },
	{ "xattrs", no_argument, NULL, OPT_XATTRS },
	{ "no-xattrs", no_argument, NULL, OPT_NO_XATTRS },
	{ "acls", no_argument, NULL, OPT_ACLS },
	{ "no-acls", no_argument, NULL, OPT_NO_ACLS },
	{ "touch", no_argument, NULL, 'm' },
	{ "exclude-vcs", no_argument, NULL, OPT_EXCLUDE_VCS },
	{ "exclude-caches", no_argument, NULL, OPT_EXCLUDE_CACHES },
	{ "exclude-caches-under", no_argument, NULL, OPT_EXCLUDE_CACHES_UNDER },
	{ "exclude-caches-all", no_argument, NULL, OPT_EXCLUDE_CACHES_ALL },
	{ "exclude-tag", required_argument, NULL, OPT_EXCLUDE_TAG },
	{ "exclude-tag-under", required_argument, NULL, OPT_EXCLUDE_TAG_UNDER },
	{ "exclude-tag-all", required_argument, NULL, OPT_EXCLUDE_TAG_ALL },
	{ "use-compress-program", required_argument, NULL, 'I' },
	{ "dereference", no_argument, NULL, 'h' },
	{ "hard-dereference", no_argument, NULL, OPT_HARD_DEREF },
	{ "sort", required_argument, NULL, OPT_SORT },
	{ "mtime", required_argument, NULL, OPT_MTIME },
	{ "clamp-mtime", no_argument, NULL, OPT_CLAMP_MTIME },
	{ "owner", required_argument, NULL, OPT_OWNER },
	{ "group", required_argument, NULL, OPT_GROUP },
	{ "warning", required_argument, NULL, OPT_WARNING },
	{ "auto-compress", no_argument, NULL, 'a' },
	{ "sparse", no_argument, NULL, 'S' },
	{ "same-order", no_argument, NULL, 's' },
	{ "preserve-order", no_argument, NULL, 's' },
	{ "blocking-factor", required_argument, NULL, 'b' },
	{ "record-size", required_argument, NULL, OPT_RECORD_SIZE },
	{ "file", required_argument, NULL, 'f' },
	{ "directory", required_argument, NULL, 'C' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "totals", no_argument, NULL, OPT_TOTALS },
	{ "exclude", required_argument, NULL, OPT_EXCLUDE },
	{ "exclude-from", required_argument, NULL, 'X' },
	{ "one-file-system", no_argument, NULL, OPT_ONE_FS },
	{ "gzip", no_argument, NULL, 'z' },
	{ "bzip2", no_argument, NULL, 'j' },
	{ "xz", no_argument, NULL, 'J' },
	{ "zstd", no_argument, NULL, OPT_ZSTD },
	{ "order", required_argument, NULL, OPT_ORDER },
	{ "device", required_argument, NULL, OPT_DEVICE },
	{ "memory-limit", required_argument, NULL, OPT_MEMORY_LIMIT },
	{ "progress", optional_argument, NULL, OPT_PROGRESS },
	{ "plan-trace", required_argument, NULL, OPT_PLAN_TRACE },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "usage", no_argument, NULL, OPT_USAGE },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

/* GNU tar's hint after a usage error. */
static void tar_try_help(void)
{
	fprintf(stderr, "Try '%s --help' or '%s --usage' for more information.\n", cli_prog(), cli_prog());
}

/* A usage error in GNU tar's words: the message, the hint, exit 2. */
static void __attribute__((format(printf, 1, 2), noreturn)) usage_error(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", cli_prog());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	tar_try_help();
	exit(TAR_FATAL);
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: %s -c|-r|-u [OPTION...] [PATH...]\n"
		"  or:  %s -t|-x|-d|--delete [OPTION...] [MEMBER...]\n"
		"  or:  %s -A [OPTION...] ARCHIVE...\n"
		"Create a pax archive of PATHs, reading the files in physical disk order;\n"
		"list, extract, compare or change an archive.\n"
		"\n"
		"  -c, --create               create an archive\n"
		"  -r, --append               add PATHs at the end of the archive\n"
		"  -u, --update               add PATHs newer than their members in the archive\n"
		"  -A, --concatenate          add the members of other archives at the end\n"
		"      --delete               delete the MEMBERs from the archive (in place,\n"
		"                             or from stdin to stdout with -f -)\n"
		"                             (-r, -u, -A, --delete: uncompressed archives only)\n"
		"  -t, --list                 list the members (with -v: as GNU tar -tv)\n"
		"  -x, --extract              extract the members (below -C: a leading '/' is\n"
		"                             dropped; no '..', no writes through symlinks)\n"
		"  -d, --diff, --compare      compare the members with the files on disk\n"
		"      --occurrence[=N]       -t, -x, -d, --delete: the Nth member of each name\n"
		"      --wildcards, --no-wildcards  MEMBERs are patterns (not by default)\n"
		"      --anchored, --no-anchored, --ignore-case, --no-ignore-case,\n"
		"      --wildcards-match-slash, --no-wildcards-match-slash\n"
		"                             how the patterns and MEMBERs after them match\n"
		"      --exclude-backups      leave out backup and lock files (*~, #*#, .#*)\n"
		"      --checkpoint[=[.]N]    act every N records (10) written or read: \"Write\n"
		"                             checkpoint N\" by default, dots with \".\"\n"
		"      --checkpoint-action=ACTION  dot, bell, echo[=TEXT], ttyout=TEXT,\n"
		"                             sleep=SECONDS, exec=COMMAND, totals, wait=SIGNAL\n"
		"      --xattrs-include=MASK, --xattrs-exclude=MASK  the xattrs stored and\n"
		"                             restored (fnmatch patterns; imply --xattrs)\n"
		"      --pax-option=LIST      -c, -r, -u: delete=PATTERN (atime, ctime, mtime's\n"
		"                             fraction, SCHILY.xattr.*, SCHILY.acl.*, GNU.sparse.*),\n"
		"                             exthdr.name=NAME (%%d, %%f, %%p), globexthdr.name=NAME\n"
		"      --mode=CHANGES         -c: every member's mode changed as chmod would\n"
		"      --owner-map=FILE, --group-map=FILE  -c: owners and groups by their ids\n"
		"      --add-file=FILE        FILE is a PATH, even when it starts with '-'\n"
		"      --index-file=FILE      -v's listing into FILE\n"
		"      --no-overwrite-dir     -x: directories that exist keep their metadata\n"
		"      --backup[=CONTROL], --suffix=SUFFIX  -x: rename files that would be\n"
		"                             replaced (simple, numbered, existing, none); -c: the\n"
		"                             archive replaced\n"
		"  -P, --absolute-names       -c: keep a leading '/' and '..' parts; -d: compare\n"
		"                             absolute names as they are (refused with -x)\n"
		"  -l, --check-links          -c: say which hard-linked files lost names\n"
		"      --hole-detection=seek  holes found with SEEK_HOLE (the only way)\n"
		"      --ignore-failed-read   -c, -r, -u: what cannot be read is a warning, not\n"
		"                             an error (exit status kept)\n"
		"      --remove-files         -c, -r, -u: remove what was archived, once the\n"
		"                             archive is written and on its device\n"
		"      --transform=EXPRESSION, --xform=EXPRESSION  change member names with a\n"
		"                             sed s/REGEX/REPLACEMENT/[gixrRhHsS0-9] expression\n"
		"      --show-transformed-names  -v, -t: names as changed (--show-stored-names)\n"
		"      --one-top-level[=DIR]  -x: every member below DIR (the archive's name\n"
		"                             without its suffix)\n"
		"  -W, --verify               -c, -r, -u: compare the archive with the files after\n"
		"                             writing it (as -d does)\n"
		"  -f, --file=FILE            the archive ('-' or none: stdout, or stdin for -t/-x)\n"
		"  -C, --directory=DIR        change to DIR for the PATHs that follow (-x: extract there)\n"
		"  -T, --files-from=FILE      take PATHs from FILE, one a line ('-': stdin)\n"
		"      --null                 -T files that follow are NUL-separated (names only)\n"
		"      --verbatim-files-from  lines of -T files that follow are names, even those\n"
		"                             starting with '-' (otherwise '-C DIR' lines change\n"
		"                             directory, as in GNU tar)\n"
		"      --no-recursion         the PATHs themselves, not what is below them\n"
		"      --strip-components=N   -x: drop N leading components of member names\n"
		"  -k, --keep-old-files       -x: keep files that exist, as errors\n"
		"      --skip-old-files       -x: keep files that exist, silently\n"
		"      --overwrite            -x: replace files that exist (the default)\n"
		"  -O, --to-stdout            -x: file data to stdout, nothing written to disk\n"
		"  -v, --verbose              list members as they are written or extracted\n"
		"      --totals               print the bytes written and the plan's memory use,\n"
		"                             and each operand's device class and why\n"
		"      --device=CLASS         hdd, ssd or auto (default): the device class of every filesystem\n"
		"      --exclude=PATTERN      leave out members matching PATTERN (GNU tar globs)\n"
		"  -X, --exclude-from=FILE    leave out members matching patterns in FILE\n"
		"      --one-file-system      stay on the filesystem of each PATH\n"
		"  -z, --gzip  -j, --bzip2  -J, --xz  --zstd   compress the archive\n"
		"      --order=ORDER          read order: auto (default), physical, inode, name, none\n"
		"                             (none: the walk's, members as GNU tar writes them)\n"
		"      --memory-limit=SIZE    plan memory per batch (default 256M)\n"
		"      --progress[=SECONDS]   -c: show progress, a line every SECONDS in a log\n"
		"      --plan-trace=FILE      write each batch's read plan as a sweep-trace(5)\n"
		"  -H, --format=FORMAT        pax (default), posix, gnu, oldgnu, ustar, v7\n"
		"  -p, --same-permissions     -x: the whole mode (root's default); --no-same-permissions\n"
		"      --same-owner           -x: owners restored (root's default); --no-same-owner, -o\n"
		"      --numeric-owner        ids only: -c stores no names, -x ignores them\n"
		"      --xattrs, --acls       -x: restore them (root's default); --no-xattrs, --no-acls\n"
		"  -m, --touch                -x: do not restore modification times\n"
		"      --exclude-vcs          leave out version-control files (GNU tar's list)\n"
		"      --exclude-caches[-under|-all]  directories with a CACHEDIR.TAG\n"
		"      --exclude-tag[-under|-all]=FILE  directories holding FILE\n"
		"  -I, --use-compress-program=PROG  filter through PROG (PROG -d to read)\n"
		"  -h, --dereference          archive what symlinks point to\n"
		"      --hard-dereference     every name of a hard-linked file with its data\n"
		"      --sort=name|inode|none the member order: name as GNU tar's (depth first,\n"
		"                             directories before their entries), inode, none\n"
		"                             (--order=inode, --order=auto)\n"
		"      --mtime=DATE           every member's mtime (--clamp-mtime: only later ones)\n"
		"      --owner=NAME[:ID], --group=NAME[:ID]  every member's owner, group\n"
		"      --help                 show this help\n"
		"      --version              show the version\n"
		"\n"
		"Exit status: 0 success, 1 some files changed or vanished while read,\n"
		"2 some files could not be archived or the archive could not be written.\n",
		cli_prog(), cli_prog(), cli_prog());
}

/* --usage: the options in brief, as GNU tar's argp prints them. */
static void short_usage(FILE *out)
{
	char line[256];
	size_t len;
	int col;

	len = (size_t)snprintf(line, sizeof(line), "Usage: %s [-", cli_prog());
	for (const char *p = SHORT_OPTS; *p; p++)
		if (*p != ':' && p[1] != ':' && len + 2 < sizeof(line))
			line[len++] = *p;
	line[len++] = ']';
	line[len] = '\0';
	fputs(line, out);
	col = (int)len;
	for (int pass = 0; pass < 2; pass++) {
		const char *p = pass == 0 ? SHORT_OPTS : NULL;
		const struct option *lo = long_opts;

		for (;;) {
			char item[128];

			if (pass == 0) {
				if (!*p)
					break;
				if (*p == ':' || p[1] != ':') {
					p++;
					continue;
				}
				/* GNU tar's names for the arguments */
				static const char *const metas[] = { "fARCHIVE", "CDIR", "TFILE", "XFILE", "HFORMAT", "IPROG", "bBLOCKS" };
				const char *up = "ARG";
				for (size_t k = 0; k < sizeof(metas) / sizeof(metas[0]); k++)
					if (metas[k][0] == *p)
						up = metas[k] + 1;
				snprintf(item, sizeof(item), "[-%c %s]", *p, up);
				p++;
			} else {
				if (!lo->name)
					break;
				snprintf(item, sizeof(item), "[--%s%s]", lo->name,
					 lo->has_arg == required_argument ? "=ARG" : lo->has_arg == optional_argument ? "[=ARG]" : "");
				lo++;
			}
			if (col + 1 + (int)strlen(item) > 79) {
				fputs("\n           ", out);
				col = 11;
			}
			fprintf(out, " %s", item);
			col += 1 + (int)strlen(item);
		}
	}
	fputc('\n', out);
}


/*
 * GNU tar's traditional syntax: a first argument without '-' is a bundle
 * of option letters, and each letter that takes an argument takes the next
 * argument in turn: "cfv out.tar dir" is "-c -f out.tar -v dir", and
 * "cfT out.tar list" is "-c -f out.tar -T list". Rewritten here into
 * separate options for getopt. A letter left without its argument is GNU
 * tar's "option requires an argument", exit 2.
 */
static char **old_argv; /* the rewritten argv, and the "-X" strings it points into */
static char *old_opts;

static void old_style_free(void)
{
	free(old_argv);
	free(old_opts);
}

static char **old_style(int *argc, char **argv)
{
	const char *bundle = argv[1];
	size_t n = strlen(bundle ? bundle : ""), k = 1;
	int next = 2;

	if (*argc < 2 || bundle[0] == '-' || n == 0)
		return argv;
	old_argv = calloc((size_t)*argc + n + 1, sizeof(*old_argv));
	old_opts = malloc(3 * n);
	if (!old_argv || !old_opts)
		cli_die(TAR_FATAL, "out of memory");
	atexit(old_style_free);
	old_argv[0] = argv[0];
	for (size_t i = 0; i < n; i++) {
		const char *spec = strchr(SHORT_OPTS, bundle[i]);
		char *opt = old_opts + 3 * i;

		opt[0] = '-';
		opt[1] = bundle[i];
		opt[2] = '\0';
		old_argv[k++] = opt;
		if (bundle[i] != ':' && spec && spec[1] == ':') {
			if (next >= *argc) {
				cli_msg("option requires an argument -- '%c'", bundle[i]);
				tar_try_help();
				exit(TAR_FATAL);
			}
			old_argv[k++] = argv[next++];
		}
	}
	while (next < *argc)
		old_argv[k++] = argv[next++];
	old_argv[k] = NULL;
	*argc = (int)k;
	return old_argv;
}

/*
 * TAR_OPTIONS: options put before the command line's, as GNU tar does,
 * split into words as the shell would split them (blanks; '...', "..."
 * and backslash quote).
 */
/*
 * Words of s as the shell would split them (blanks; '...', "..." and
 * backslash quote), into buf (strlen(s) + 1 bytes) and words (room for
 * strlen(s) / 2 + 1). Their number, or -1 for an unmatched quote (*quote).
 */
static int split_words(const char *s, char *buf, char **words, char *quote_out)
{
	char *w = buf, quote = 0;
	bool in_word = false;
	int n = 0;

	for (const char *p = s;; p++) {
		char ch = *p;

		if (!ch || (!quote && (ch == ' ' || ch == '\t' || ch == '\n'))) {
			if (in_word) {
				*w++ = '\0';
				in_word = false;
			}
			if (!ch)
				break;
			continue;
		}
		if (!in_word) {
			words[n++] = w;
			in_word = true;
		}
		if (quote ? ch == quote : (ch == '\'' || ch == '"')) {
			quote = quote ? 0 : ch;
		} else if (ch == '\\' && quote != '\'' && p[1]) {
			*w++ = *++p;
		} else {
			*w++ = ch;
		}
	}
	*quote_out = quote;
	return quote ? -1 : n;
}

static char **env_argv;
static char *env_words;

static void env_options_free(void)
{
	free(env_argv);
	free(env_words);
}

static char **env_options(int *argc, char **argv)
{
	const char *env = getenv("TAR_OPTIONS");
	size_t len;
	char quote;
	int n;

	if (!env || !*env)
		return argv;
	len = strlen(env);
	env_words = malloc(len + 1);
	env_argv = calloc((size_t)*argc + len / 2 + 2, sizeof(*env_argv));
	if (!env_words || !env_argv)
		cli_die(TAR_FATAL, "out of memory");
	atexit(env_options_free);
	env_argv[0] = argv[0];
	n = split_words(env, env_words, env_argv + 1, &quote);
	if (n < 0)
		cli_die(TAR_FATAL, "TAR_OPTIONS: unmatched %c", quote);
	n++;
	for (int i = 1; i < *argc; i++)
		env_argv[n++] = argv[i];
	env_argv[n] = NULL;
	*argc = n;
	return env_argv;
}

/*
 * GNU tar's matching options where the parse stands: they apply to the
 * --exclude patterns and the member names after them (src/names.c,
 * EXCLUDE_OPTIONS and INCLUDE_OPTIONS).
 */
static struct {
	int wildcards;           /* 0: the default (on for --exclude, off for names), 1: --wildcards, -1: --no-wildcards */
	unsigned flags;          /* EXCLUDE_ANCHORED (--anchored), EXCLUDE_CASEFOLD, EXCLUDE_SLASH_SPECIAL */
	bool names_unanchored;   /* --no-anchored: member names too */
	bool no_recursion;
} match;

static unsigned exclude_flags(void)
{
	return (match.wildcards < 0 ? EXCLUDE_NO_WILDCARDS : 0) | match.flags |
	       (match.no_recursion ? 0 : EXCLUDE_LEADING_DIR);
}

static unsigned name_flags(void)
{
	return (match.wildcards > 0 ? 0 : EXCLUDE_NO_WILDCARDS) | (match.names_unanchored ? 0 : EXCLUDE_ANCHORED) |
	       match.flags | (match.no_recursion ? 0 : EXCLUDE_LEADING_DIR);
}

/* "a//b/" -> "a//b": the walk adds its own '/' between components. */
static char *trim_slashes(const char *s)
{
	size_t n = strlen(s);

	while (n > 1 && s[n - 1] == '/')
		n--;
	return strndup(s, n);
}

static int add_root(struct tar_opts *o, const char *dir, const char *operand)
{
	struct tar_root *nr = realloc(o->roots, (o->nroots + 1) * sizeof(*nr));
	struct tar_root *r;
	char *name = trim_slashes(operand);

	if (!nr || !name) {
		free(name);
		return -ENOMEM;
	}
	o->roots = nr;
	r = &o->roots[o->nroots];
	r->strip = 0;
	r->dir = NULL;
	r->nexclude = exclude_count(o->exclude);
	r->match = name_flags();
	r->no_recursion = match.no_recursion;
	if (dir && !(r->dir = strdup(dir))) {
		free(name);
		return -ENOMEM;
	}
	if (dir && name[0] != '/') {
		if (asprintf(&r->path, "%s/%s", dir, name) < 0) {
			free(name);
			return -ENOMEM;
		}
		r->strip = strlen(dir) + 1;
		free(name);
	} else {
		r->path = name;
	}
	o->nroots++;
	return 0;
}

/* -C DIR: relative to the previous -C, as GNU tar's successive chdirs are. */
static char *change_dir(char *cur, const char *dir)
{
	char *next;

	if (!cur || dir[0] == '/')
		next = trim_slashes(dir);
	else if (asprintf(&next, "%s/%s", cur, dir) < 0)
		next = NULL;
	if (!next)
		cli_die(TAR_FATAL, "out of memory");
	free(cur);
	return next;
}

/* -z, -j, -J, --zstd: one of them (again is fine), as GNU tar allows. */
static void set_filter(struct tar_opts *o, enum tar_filter f)
{
	if (o->filter != TAR_FILTER_NONE && o->filter != f) {
		cli_msg("Conflicting compression options");
		tar_try_help();
		exit(TAR_FATAL);
	}
	o->filter = f;
}

/* How GNU tar names a mode in its messages (subcommand_string). */
const char *tar_mode_option(enum tar_mode m)
{
	switch (m) {
	case TAR_CREATE: return "-c";
	case TAR_LIST: return "-t";
	case TAR_EXTRACT: return "-x";
	case TAR_APPEND: return "-r";
	case TAR_UPDATE: return "-u";
	case TAR_CONCAT: return "-A";
	case TAR_DELETE: return "--delete";
	case TAR_DIFF: return "-d";
	}
	return "?";
}

/* -c, -t, -x, -r, -u, -A, -d, --delete: one of them, as GNU tar says. */
static void set_mode(struct tar_opts *o, enum tar_mode m)
{
	if (o->mode && o->mode != m) {
		cli_msg("You may not specify more than one '-Acdtrux', '--delete' or  '--test-label' option");
		tar_try_help();
		exit(TAR_FATAL);
	}
	o->mode = m;
}

/* Where the parse stands in the names: the -C in force, and how -T lists are read. */
struct pstate {
	char *dir;
	bool null, verbatim;
	bool names_failed;
};

static void files_from(struct tar_opts *o, struct pstate *ps, const char *file, int depth);

static void add_exclude(struct tar_opts *o, const char *pattern, unsigned flags)
{
	if (!o->exclude && !(o->exclude = exclude_new(EXCLUDE_GNU | EXCLUDE_LEADING_DIR)))
		cli_die(TAR_FATAL, "out of memory");
	if (exclude_add_flags(o->exclude, pattern, flags) < 0)
		cli_die(TAR_FATAL, "%s: cannot use exclude pattern(s)", cli_quote(pattern));
}

/* --exclude-vcs: GNU tar's list (src/names.c, vcs_file_table), names as they are. */
static void exclude_vcs(struct tar_opts *o)
{
	static const char *const vcs[] = {
		"CVS", ".cvsignore", "RCS", "SCCS", ".svn", ".git", ".gitignore", ".gitattributes", ".gitmodules",
		".arch-ids", "{arch}", "=RELEASE-ID", "=meta-update", "=update", ".bzr", ".bzrignore", ".bzrtags",
		".hg", ".hgignore", ".hgtags", "_darcs",
	};

	for (size_t i = 0; i < sizeof(vcs) / sizeof(vcs[0]); i++)
		add_exclude(o, vcs[i], EXCLUDE_NO_WILDCARDS);
}

static void add_tag(struct tar_opts *o, const char *file, enum tar_tag_how how, bool cachedir)
{
	struct tar_tag *n = realloc(o->tags, (o->ntags + 1) * sizeof(*n));

	if (!n)
		cli_die(TAR_FATAL, "out of memory");
	o->tags = n;
	o->tags[o->ntags++] = (struct tar_tag){ .file = file, .how = how, .cachedir = cachedir };
}

/*
 * The options that choose names (GNU tar's names_argp group): they apply
 * to the names after them, on the command line and in -T lists. True when
 * c is one of them (done), false otherwise.
 */
static bool name_option(struct tar_opts *o, struct pstate *ps, int c, const char *arg, int depth)
{
	uint64_t err;

	switch (c) {
	case 'C':
		ps->dir = change_dir(ps->dir, arg);
		break;
	case 'T':
		files_from(o, ps, arg, depth + 1);
		o->files_from = true;
		break;
	case OPT_ADD_FILE:
		/* A name, even one starting with '-'. */
		if (add_root(o, ps->dir, arg) < 0)
			cli_die(TAR_FATAL, "out of memory");
		break;
	case OPT_NULL:
	case OPT_NO_NULL:
		ps->null = c == OPT_NULL;
		break;
	case OPT_VERBATIM:
	case OPT_NO_VERBATIM:
		ps->verbatim = c == OPT_VERBATIM;
		break;
	case OPT_NO_RECURSION:
	case OPT_RECURSION:
		match.no_recursion = c == OPT_NO_RECURSION;
		break;
	case OPT_ANCHORED:
		match.flags |= EXCLUDE_ANCHORED;
		break;
	case OPT_NO_ANCHORED:
		match.flags &= ~EXCLUDE_ANCHORED;
		match.names_unanchored = true;
		break;
	case OPT_IGNORE_CASE:
	case OPT_NO_IGNORE_CASE:
		match.flags = c == OPT_IGNORE_CASE ? match.flags | EXCLUDE_CASEFOLD : match.flags & ~EXCLUDE_CASEFOLD;
		break;
	case OPT_WILDCARDS:
	case OPT_NO_WILDCARDS:
		match.wildcards = c == OPT_WILDCARDS ? 1 : -1;
		o->wildcards_default = false;
		break;
	case OPT_WILDCARDS_MATCH_SLASH:
	case OPT_NO_WILDCARDS_MATCH_SLASH:
		match.flags = c == OPT_WILDCARDS_MATCH_SLASH ? match.flags & ~EXCLUDE_SLASH_SPECIAL
							      : match.flags | EXCLUDE_SLASH_SPECIAL;
		break;
	case OPT_EXCLUDE:
		add_exclude(o, arg, exclude_flags());
		break;
	case 'X':
		if (!o->exclude && !(o->exclude = exclude_new(EXCLUDE_GNU | EXCLUDE_LEADING_DIR)))
			cli_die(TAR_FATAL, "out of memory");
		if ((err = (uint64_t)-exclude_add_file_flags(o->exclude, arg, exclude_flags())) != 0)
			cli_die(TAR_FATAL, "%s: Cannot open: %s", cli_quote(arg), strerror((int)err));
		break;
	case OPT_EXCLUDE_VCS:
		exclude_vcs(o);
		break;
	case OPT_EXCLUDE_BACKUPS: {
		/* GNU tar's backup_file_table, as globs */
		static const char *const backups[] = { ".#*", "*~", "#*#" };
		for (size_t i = 0; i < sizeof(backups) / sizeof(backups[0]); i++)
			add_exclude(o, backups[i], 0);
		break;
	}
	case OPT_EXCLUDE_CACHES:
	case OPT_EXCLUDE_CACHES_UNDER:
	case OPT_EXCLUDE_CACHES_ALL:
		add_tag(o, "CACHEDIR.TAG",
			c == OPT_EXCLUDE_CACHES ? TAR_TAG_CONTENTS : c == OPT_EXCLUDE_CACHES_UNDER ? TAR_TAG_UNDER : TAR_TAG_ALL,
			true);
		break;
	case OPT_EXCLUDE_TAG:
	case OPT_EXCLUDE_TAG_UNDER:
	case OPT_EXCLUDE_TAG_ALL:
		add_tag(o, arg, c == OPT_EXCLUDE_TAG ? TAR_TAG_CONTENTS : c == OPT_EXCLUDE_TAG_UNDER ? TAR_TAG_UNDER : TAR_TAG_ALL,
			false);
		break;
	default:
		return false;
	}
	return true;
}

/*
 * A line of a -T file that starts with '-' (without --null or
 * --verbatim-files-from) holds options, as in GNU tar: split into words as
 * the shell would, each one of the options that choose names (-C, -T,
 * -X, --exclude, --recursion, --no-recursion, --anchored, --wildcards ...),
 * for the names after it in the file and after the file. Others: GNU
 * tar's "FILE:LINE: unrecognized option", exit 2 at the end, the rest goes
 * on.
 */
static void files_from_option(struct tar_opts *o, struct pstate *ps, const char *file, size_t lineno,
			      const char *line, int depth)
{
	size_t len = strlen(line);
	char *buf = malloc(len + 1), **words = calloc(len / 2 + 2, sizeof(*words)), quote;
	int n = buf && words ? split_words(line, buf, words, &quote) : -2;

	if (n == -2)
		cli_die(TAR_FATAL, "out of memory");
	for (int i = 0; i < n; i++) {
		const char *w = words[i], *arg = NULL;
		const struct option *lo = NULL;
		int c = 0;

		if (w[0] == '-' && w[1] == '-') {
			const char *eq = strchr(w + 2, '=');
			size_t nl = eq ? (size_t)(eq - w - 2) : strlen(w + 2);
			for (const struct option *p = long_opts; p->name; p++)
				if (strlen(p->name) == nl && strncmp(p->name, w + 2, nl) == 0)
					lo = p;
			if (lo) {
				c = lo->val;
				if (eq)
					arg = eq + 1;
				else if (lo->has_arg == required_argument && i + 1 < n)
					arg = words[++i];
				else if (lo->has_arg == required_argument)
					c = -c;
			}
		} else if (w[0] == '-' && w[1] && strchr("CTX", w[1])) {
			c = w[1];
			if (w[2])
				arg = w + 2;
			else if (i + 1 < n)
				arg = words[++i];
			else
				c = -c;
		}
		if (c < 0) {
			cli_msg("%s:%zu: option requires an argument -- '%c'", tar_printable(file), lineno, -c < 256 ? -c : '?');
			ps->names_failed = true;
			continue;
		}
		if (c && (arg || (lo && lo->has_arg == no_argument) || !lo) && name_option(o, ps, c, arg, depth))
			continue;
		cli_msg("%s:%zu: unrecognized option", tar_printable(file), lineno);
		ps->names_failed = true;
		break;
	}
	if (n == -1) {
		cli_msg("%s:%zu: unmatched %c", tar_printable(file), lineno, quote);
		ps->names_failed = true;
	}
	free(buf);
	free(words);
}

/*
 * -T FILE: its names are PATHs where -T stands, under the current -C; one
 * a line, or NUL-separated after --null (which, as in GNU tar, applies to
 * the -T options after it). Empty names are skipped.
 */
/* The -T lists read so far, and who asked for each: GNU tar reads a list once. */
static struct list_read {
	const char *file;
	const char *from; /* NULL: the command line */
} lists_read[64];
static size_t nlists_read;

/* One -T name: the names in it, and its option lines. */
static void files_from_lines(struct tar_opts *o, struct pstate *ps, const char *file, FILE *f, int depth)
{
	bool null = ps->null, verbatim = ps->verbatim;
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	bool said_nul = false;
	ssize_t n;

	while ((n = getdelim(&line, &cap, null ? '\0' : '\n', f)) > 0) {
		lineno++;
		if (line[n - 1] == (null ? '\0' : '\n'))
			line[--n] = '\0';
		/*
		 * NULs in a list read by lines: GNU tar says so (a warning)
		 * and takes them as separators, as --null would.
		 */
		if (!null && strlen(line) != (size_t)n) {
			if (!said_nul && tar_warning_shown("file name read contains nul character"))
				cli_msg("%s: file name read contains nul character", tar_printable(file));
			said_nul = true;
			for (char *p = line; p < line + n; p += strlen(p) + 1)
				if (*p && add_root(o, ps->dir, p) < 0)
					cli_die(TAR_FATAL, "out of memory");
			continue;
		}
		if (n > 0 && line[0] == '-' && !null && !verbatim) {
			files_from_option(o, ps, file, lineno, line, depth);
			continue;
		}
		if (n > 0 && add_root(o, ps->dir, line) < 0)
			cli_die(TAR_FATAL, "out of memory");
	}
	if (ferror(f))
		cli_die(TAR_FATAL, "%s: Read error: %s", cli_quote(file), strerror(errno));
	free(line);
}

static void files_from(struct tar_opts *o, struct pstate *ps, const char *file, int depth)
{
	static const char *reading; /* the list being read, for the one it names */
	const char *outer = reading;
	FILE *f;

	for (size_t i = 0; i < nlists_read; i++)
		if (strcmp(lists_read[i].file, file) == 0 && strcmp(file, "-") != 0) {
			/* GNU tar's words; the rest goes on, exit 2 at the end. */
			cli_msg("%s: file list requested from %s already read from %s", tar_printable(file),
				outer ? tar_printable(outer) : "command line",
				lists_read[i].from ? tar_printable(lists_read[i].from) : "command line");
			ps->names_failed = true;
			return;
		}
	if (nlists_read < sizeof(lists_read) / sizeof(lists_read[0]) && (file = strdup(file))) {
		lists_read[nlists_read++] = (struct list_read){ .file = file, .from = outer };
	}
	if (depth > 32)
		cli_die(TAR_FATAL, "%s: -T lists nested too deep", cli_quote(file));
	f = strcmp(file, "-") == 0 ? stdin : fopen(file, "re");
	if (!f)
		cli_die(TAR_FATAL, "%s: Cannot open: %s", cli_quote(file), strerror(errno));
	reading = file;
	files_from_lines(o, ps, file, f, depth);
	reading = outer;
	if (f != stdin)
		fclose(f);
}

/*
 * --mtime=DATE: "@SECONDS[.FRAC]", "YYYY-MM-DD[ HH:MM[:SS]]" (or with 'T'),
 * in local time, or UTC with a trailing "Z" or " UTC"; or the name of a
 * file (starting with '/' or '.'), whose mtime is taken, as in GNU tar.
 * GNU tar reads many more date forms: the others are refused.
 */
static bool parse_mtime(const char *arg, struct timespec *ts)
{
	static const char *const forms[] = { "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M",
					     "%Y-%m-%dT%H:%M", "%Y-%m-%d" };
	struct stat st;
	char *end;

	if ((arg[0] == '/' || arg[0] == '.') && stat(arg, &st) == 0) {
		*ts = st.st_mtim;
		return true;
	}
	if (arg[0] == '@') {
		double v = strtod(arg + 1, &end);
		if (end == arg + 1 || *end)
			return false;
		ts->tv_sec = (time_t)v;
		ts->tv_nsec = (long)((v - (double)ts->tv_sec) * 1e9);
		if (ts->tv_nsec < 0) {
			ts->tv_sec--;
			ts->tv_nsec += 1000000000;
		}
		return true;
	}
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		struct tm tm = { .tm_isdst = -1 };
		const char *rest = strptime(arg, forms[i], &tm);
		bool utc;

		if (!rest)
			continue;
		utc = strcmp(rest, "Z") == 0 || strcmp(rest, " UTC") == 0 || strcmp(rest, " UTC0") == 0;
		if (*rest && !utc)
			continue;
		ts->tv_sec = utc ? timegm(&tm) : mktime(&tm);
		ts->tv_nsec = 0;
		return true;
	}
	return false;
}

/* --owner=NAME[:UID], --group=NAME[:GID]: GNU tar's forms; a bare number is the id (and its name, if any). */
static void parse_owner(const char *arg, bool group, uint64_t *id, char **name)
{
	const char *colon = strchr(arg, ':');
	char *end;

	if (colon) {
		unsigned long long v = strtoull(colon + 1, &end, 10);
		if (colon[1] == '\0' || *end)
			cli_die(TAR_FATAL, "%s: Invalid %s", cli_quote(arg), group ? "group" : "owner");
		*id = v;
		*name = strndup(arg, (size_t)(colon - arg));
		return;
	}
	if (*arg && strspn(arg + (*arg == '+'), "0123456789") == strlen(arg + (*arg == '+'))) {
		*id = strtoull(arg + (*arg == '+'), NULL, 10);
		if (group) {
			struct group *g = *arg == '+' ? NULL : getgrgid((gid_t)*id);
			*name = g ? strdup(g->gr_name) : NULL;
		} else {
			struct passwd *pw = *arg == '+' ? NULL : getpwuid((uid_t)*id);
			*name = pw ? strdup(pw->pw_name) : NULL;
		}
		return;
	}
	if (group) {
		struct group *g = getgrnam(arg);
		if (!g)
			cli_die(TAR_FATAL, "%s: Invalid group", cli_quote(arg));
		*id = g->gr_gid;
	} else {
		struct passwd *pw = getpwnam(arg);
		if (!pw)
			cli_die(TAR_FATAL, "%s: Invalid owner", cli_quote(arg));
		*id = pw->pw_uid;
	}
	*name = strdup(arg);
}

/* The long name of an option that selects files and applies to the names after it (GNU tar), or NULL. */
static const char *positional(int c)
{
	switch (c) {
	case 'X':
		return "exclude-from";
	case 'C': case OPT_EXCLUDE: case OPT_NULL: case OPT_NO_NULL: case OPT_VERBATIM: case OPT_NO_VERBATIM:
	case OPT_RECURSION: case OPT_NO_RECURSION: case OPT_EXCLUDE_VCS: case OPT_EXCLUDE_CACHES:
	case OPT_EXCLUDE_CACHES_UNDER: case OPT_EXCLUDE_CACHES_ALL: case OPT_EXCLUDE_TAG:
	case OPT_EXCLUDE_TAG_UNDER: case OPT_EXCLUDE_TAG_ALL: case OPT_EXCLUDE_BACKUPS: case OPT_ANCHORED:
	case OPT_NO_ANCHORED: case OPT_IGNORE_CASE: case OPT_NO_IGNORE_CASE: case OPT_WILDCARDS: case OPT_NO_WILDCARDS:
	case OPT_WILDCARDS_MATCH_SLASH: case OPT_NO_WILDCARDS_MATCH_SLASH:
		for (const struct option *lo = long_opts; lo->name; lo++)
			if (lo->val == c)
				return lo->name;
	}
	return NULL;
}

/*
 * -a, --auto-compress: the compression GNU tar picks for the archive's
 * suffix (none for one it does not know, or one sweep-tar cannot write).
 */
static enum tar_filter filter_by_suffix(const char *name)
{
	static const struct {
		const char *suffix;
		enum tar_filter f;
	} map[] = {
		{ ".gz", TAR_FILTER_GZIP },   { ".tgz", TAR_FILTER_GZIP },   { ".taz", TAR_FILTER_GZIP },
		{ ".bz2", TAR_FILTER_BZIP2 }, { ".tbz", TAR_FILTER_BZIP2 },  { ".tbz2", TAR_FILTER_BZIP2 },
		{ ".tz2", TAR_FILTER_BZIP2 }, { ".xz", TAR_FILTER_XZ },      { ".txz", TAR_FILTER_XZ },
		{ ".zst", TAR_FILTER_ZSTD },  { ".tzst", TAR_FILTER_ZSTD },
	};
	size_t n = strlen(name);

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		size_t k = strlen(map[i].suffix);
		if (n > k && strcmp(name + n - k, map[i].suffix) == 0)
			return map[i].f;
	}
	return TAR_FILTER_NONE;
}

/*
 * --one-top-level without DIR: the archive's name without its suffix, as
 * GNU tar deduces it (strip_compression_suffix: "a.tar.gz" -> "a",
 * "a.tgz" -> "a"). DIR must name a directory below the extraction
 * directory: -x writes nothing elsewhere whatever the option says.
 */
static void set_one_top_level(struct tar_opts *o)
{
	static const char *const suffixes[] = { "tar", "gz", "tgz", "taz", "Z", "taZ", "bz2", "tbz", "tbz2", "tz2",
						"lz", "lzma", "tlz", "lzo", "xz", "txz", "zst", "tzst" };
	static char *deduced;
	const char *dir = o->one_top_level;

	if (!dir) {
		const char *base = o->archive ? strrchr(o->archive, '/') : NULL, *dot;
		base = base ? base + 1 : o->archive ? o->archive : "";
		dot = strrchr(base, '.');
		for (size_t i = 0; dot && i < sizeof(suffixes) / sizeof(suffixes[0]) && !deduced; i++) {
			size_t len = (size_t)(dot - base);
			if (strcmp(dot + 1, suffixes[i]) != 0)
				continue;
			/* An outer suffix not starting with 't' may have ".tar" before it. */
			if (len > 4 && strncmp(base + len - 4, ".tar", 4) == 0 && suffixes[i][0] != 't')
				len -= 4;
			if (len && !(deduced = strndup(base, len)))
				cli_die(TAR_FATAL, "out of memory");
			break;
		}
		if (!deduced)
			usage_error("Cannot deduce top-level directory name; please set it explicitly with --one-top-level=DIR");
		dir = deduced;
	}
	for (const char *p = dir; *p;) {
		const char *end = strchrnul(p, '/');
		if ((end - p == 2 && p[0] == '.' && p[1] == '.') || dir[0] == '/' || !*dir)
			usage_error("--one-top-level=%s: not a directory below the extraction directory", cli_quote(dir));
		p = *end ? end + 1 : end;
	}
	o->one_top_level = dir;
}

/* "a/./b//" and "a/b" as one path: whether one operand is another, or below it. */
static bool operands_overlap(const struct tar_opts *o)
{
	if (!TAR_WRITES_TREE(o->mode) || o->nroots < 2 || o->nroots > 4096)
		return false;
	char **norm = calloc(o->nroots, sizeof(*norm));
	bool overlap = false;

	if (!norm)
		return false;
	for (size_t i = 0; i < o->nroots; i++) {
		const char *p = o->roots[i].path;
		char *w = norm[i] = malloc(strlen(p) + 2);
		if (!w)
			break;
		if (*p == '/')
			*w++ = '/';
		for (const char *c = p; *c;) {
			const char *end = strchrnul(c, '/');
			if (end - c > 0 && !(end - c == 1 && c[0] == '.')) {
				if (w > norm[i] && w[-1] != '/')
					*w++ = '/';
				memcpy(w, c, (size_t)(end - c));
				w += end - c;
			}
			c = end;
			while (*c == '/')
				c++;
		}
		*w = '\0';
	}
	for (size_t i = 0; i < o->nroots && !overlap; i++)
		for (size_t j = 0; j < o->nroots && !overlap && norm[i]; j++) {
			size_t n = norm[j] ? strlen(norm[j]) : 0;
			overlap = i != j && norm[j] && strncmp(norm[i], norm[j], n) == 0 &&
				  (norm[i][n] == '\0' || norm[i][n] == '/' || n == 0);
		}
	for (size_t i = 0; i < o->nroots; i++)
		free(norm[i]);
	free(norm);
	return overlap;
}

void tar_unconsumed_report(struct tar_opts *o)
{
	const struct unconsumed *u = &o->unconsumed;

	if (u->n == 0 || o->mode != TAR_CREATE)
		return;
	cli_msg("The following options were used after any non-optional arguments in archive create or update mode.  "
		"These options are positional and affect only arguments that follow them.  Please, rearrange them properly.");
	for (size_t i = 0; i < u->n; i++) {
		if (u->v[i].c == 'C')
			cli_msg("-C %s has no effect", cli_quote(u->v[i].arg));
		else if (u->v[i].arg)
			cli_msg("--%s %s has no effect", positional(u->v[i].c), cli_quote(u->v[i].arg));
		else
			cli_msg("--%s has no effect", positional(u->v[i].c));
	}
	o->names_failed = true;
}

void tar_parse(int argc, char **argv, struct tar_opts *o)
{
	bool old_archive = false, auto_compress = false, one_top_level = false, backup = false;
	const char *backup_control = NULL, *backup_suffix = NULL;
	struct unconsumed unconsumed = { 0 };
	struct pstate ps = { 0 };
	uint64_t size;
	int c;

	o->memory_limit = DEFAULT_MEMORY_LIMIT;
	o->wildcards_default = true;
	o->same_owner = o->same_perms = o->xattrs = o->acls = -1;
	argv = old_style(&argc, argv);
	argv = env_options(&argc, argv);
	/* "-" first: operands come back in place, so -C applies to those after it. */
	while ((c = getopt_long(argc, argv, "-" SHORT_OPTS, long_opts, NULL)) != -1) {
		if (positional(c) && unconsumed.n < sizeof(unconsumed.v) / sizeof(unconsumed.v[0])) {
			unconsumed.v[unconsumed.n].c = c;
			unconsumed.v[unconsumed.n++].arg = optarg;
		}
		if (name_option(o, &ps, c, optarg, 0)) {
			if (c == 'T')
				unconsumed.n = 0;
			continue;
		}
		switch (c) {
		case 1:
			if (add_root(o, ps.dir, optarg) < 0)
				cli_die(TAR_FATAL, "out of memory");
			unconsumed.n = 0;
			break;
		case 'c':
			set_mode(o, TAR_CREATE);
			break;
		case 't':
			set_mode(o, TAR_LIST);
			break;
		case 'x':
			set_mode(o, TAR_EXTRACT);
			break;
		case 'r':
			set_mode(o, TAR_APPEND);
			break;
		case 'u':
			set_mode(o, TAR_UPDATE);
			break;
		case 'A':
			set_mode(o, TAR_CONCAT);
			break;
		case 'd':
			set_mode(o, TAR_DIFF);
			break;
		case OPT_DELETE:
			set_mode(o, TAR_DELETE);
			break;
		case OPT_OCCURRENCE:
			if (!optarg)
				o->occurrence = 1;
			else if (cli_parse_size(optarg, &size) < 0 || strspn(optarg, "0123456789") != strlen(optarg) ||
				 size == 0 || size > UINT_MAX)
				usage_error("%s: Invalid number", cli_quote(optarg));
			else
				o->occurrence = (unsigned)size;
			break;
		case OPT_POSIX:
			o->format = TAR_FMT_PAX;
			break;
		case 'W':
			o->verify = true;
			break;
		case OPT_CHECKPOINT:
			tar_checkpoint_option(optarg);
			break;
		case OPT_XATTRS_INCLUDE:
		case OPT_XATTRS_EXCLUDE: {
			/* GNU tar: they imply --xattrs. */
			const char ***v = c == OPT_XATTRS_INCLUDE ? &o->xattr_include : &o->xattr_exclude;
			size_t *n = c == OPT_XATTRS_INCLUDE ? &o->nxattr_include : &o->nxattr_exclude;
			const char **nv = realloc((void *)*v, (*n + 1) * sizeof(*nv));
			if (!nv)
				cli_die(TAR_FATAL, "out of memory");
			nv[(*n)++] = optarg;
			*v = nv;
			o->xattrs = 1;
			break;
		}
		case OPT_REMOVE_FILES:
			o->remove_files = true;
			break;
		case OPT_IGNORE_FAILED_READ:
			o->ignore_failed_read = true;
			break;
		case OPT_PAX_OPTION:
			tar_pax_option(optarg);
			o->pax_option = true;
			break;
		case OPT_MODE:
			if (tar_mode_parse(optarg) < 0)
				cli_die(TAR_FATAL, "Invalid mode given on option\n%s: Error is not recoverable: exiting now", cli_prog());
			break;
		case OPT_OWNER_MAP:
		case OPT_GROUP_MAP:
			tar_owner_map_read(optarg, c == OPT_GROUP_MAP);
			break;
		case OPT_INDEX_FILE:
			o->index_file = optarg;
			break;
		case OPT_NO_OVERWRITE_DIR:
		case OPT_OVERWRITE_DIR:
			o->no_overwrite_dir = c == OPT_NO_OVERWRITE_DIR;
			break;
		case OPT_HOLE_DETECTION:
			/* Holes are found with SEEK_DATA/SEEK_HOLE: "seek" is what is done; "raw" (zeros read) is not. */
			if (strcmp(optarg, "seek") != 0 && strcmp(optarg, "raw") != 0)
				usage_error("invalid argument %s for '--hole-detection'\nValid arguments are:\n  - 'raw'\n  - 'seek'",
					    cli_quote(optarg));
			if (strcmp(optarg, "raw") == 0)
				usage_error("--hole-detection=raw: sweep-tar finds holes with SEEK_DATA and SEEK_HOLE only (--hole-detection=seek)");
			break;
		case OPT_BACKUP:
			backup = true;
			backup_control = optarg;
			break;
		case OPT_SUFFIX:
			backup = true;
			backup_suffix = optarg;
			break;
		case 'P':
			o->absolute_names = true;
			break;
		case 'l':
			o->check_links = true;
			break;
		case OPT_TRANSFORM:
			tar_transform_add(optarg);
			break;
		case OPT_SHOW_TRANSFORMED:
		case OPT_SHOW_STORED:
			o->show_transformed = c == OPT_SHOW_TRANSFORMED;
			break;
		case OPT_ONE_TOP_LEVEL:
			one_top_level = true;
			o->one_top_level = optarg;
			break;
		case OPT_CHECKPOINT_ACTION:
			tar_checkpoint_action(optarg);
			break;
		case OPT_USAGE:
			short_usage(stdout);
			exit(0);
		case OPT_STRIP_COMPONENTS:
			if (cli_parse_size(optarg, &size) < 0 || strspn(optarg, "0123456789") != strlen(optarg) ||
			    size > UINT_MAX)
				cli_die(TAR_FATAL, "Invalid number of elements: %s", cli_quote(optarg));
			o->strip_components = (unsigned)size;
			break;
		case 'k':
			o->old_files = TAR_OLD_KEEP;
			break;
		case OPT_SKIP_OLD_FILES:
			o->old_files = TAR_OLD_SKIP;
			break;
		case OPT_OVERWRITE:
			o->old_files = TAR_OLD_REPLACE;
			break;
		case 'O':
			o->to_stdout = true;
			break;
		case 'p':
		case OPT_NO_SAME_PERMS:
			o->same_perms = c == 'p';
			break;
		case OPT_SAME_OWNER:
		case OPT_NO_SAME_OWNER:
			o->same_owner = c == OPT_SAME_OWNER;
			break;
		case 'o':
			/* -x: --no-same-owner; -c: --old-archive (V7), refused below. */
			o->same_owner = 0;
			old_archive = true;
			break;
		case OPT_NUMERIC_OWNER:
			o->numeric_owner = true;
			break;
		case OPT_XATTRS:
		case OPT_NO_XATTRS:
			o->xattrs = c == OPT_XATTRS;
			break;
		case OPT_ACLS:
		case OPT_NO_ACLS:
			o->acls = c == OPT_ACLS;
			break;
		case 'm':
			o->touch = true;
			break;
		case 'I':
			o->compress_program = optarg;
			set_filter(o, TAR_FILTER_PROGRAM);
			break;
		case 'h':
			o->dereference = true;
			break;
		case OPT_HARD_DEREF:
			o->hard_dereference = true;
			break;
		case OPT_SORT:
			/* GNU tar's member orders; each is one of sweep-tar's read orders. */
			if (strcmp(optarg, "name") == 0) {
				/* GNU tar's member order: the walk by name, members as it meets them (walk.c). */
				o->order = SWEEP_ORDER_NAME;
				o->walk_order_members = true;
			}
			else if (strcmp(optarg, "inode") == 0)
				o->order = SWEEP_ORDER_INODE, o->walk_order_members = false;
			else if (strcmp(optarg, "none") == 0)
				o->order = SWEEP_ORDER_AUTO, o->walk_order_members = false;
			else
				cli_die(TAR_FATAL, "invalid argument %s for '--sort'\nValid arguments are:\n  - 'none'\n  - 'name'\n  - 'inode'",
					cli_quote(optarg));
			break;
		case OPT_MTIME:
			if (!parse_mtime(optarg, &o->mtime))
				cli_die(TAR_FATAL, "Invalid date format %s", cli_quote(optarg));
			o->set_mtime = true;
			break;
		case OPT_CLAMP_MTIME:
			o->clamp_mtime = true;
			break;
		case OPT_WARNING:
			if (tar_warning_option(optarg) < 0) {
				cli_msg("invalid argument %s for '--warning'", cli_quote(optarg));
				tar_try_help();
				exit(TAR_FATAL);
			}
			break;
		case 'a':
			auto_compress = true;
			break;
		case 'S':
			/* Holes are always found and stored (pax sparse maps): -S asks for what is done anyway. */
			break;
		case 's':
			/* The members are handled in archive order whatever the order of the operands. */
			break;
		case 'b':
		case OPT_RECORD_SIZE:
			if (cli_parse_size(optarg, &size) < 0 || strspn(optarg, "0123456789") != strlen(optarg) || size == 0 ||
			    (c == OPT_RECORD_SIZE && size % 512) || (c == 'b' ? size : size / 512) > 20480)
				cli_die(TAR_FATAL, "%s: Invalid %s", cli_quote(optarg),
					c == 'b' ? "blocking factor" : "record size");
			o->blocking = (unsigned)(c == 'b' ? size : size / 512);
			break;
		case OPT_OWNER:
			free(o->owner_name);
			parse_owner(optarg, false, &o->owner_id, &o->owner_name);
			o->set_owner = true;
			break;
		case OPT_GROUP:
			free(o->group_name);
			parse_owner(optarg, true, &o->group_id, &o->group_name);
			o->set_group = true;
			break;
		case 'f':
			o->archive = optarg;
			break;
		case 'v':
			o->verbose++;
			break;
		case OPT_TOTALS:
			o->totals = true;
			break;
		case OPT_ONE_FS:
			o->xdev = true;
			break;
		case 'z':
			set_filter(o, TAR_FILTER_GZIP);
			break;
		case 'j':
			set_filter(o, TAR_FILTER_BZIP2);
			break;
		case 'J':
			set_filter(o, TAR_FILTER_XZ);
			break;
		case OPT_ZSTD:
			set_filter(o, TAR_FILTER_ZSTD);
			break;
		case OPT_ORDER:
			o->walk_order_members = false;
			if (sweep_order_parse(optarg, &o->order) < 0)
				cli_die(TAR_FATAL, "invalid --order %s (auto, physical, inode, name, none)",
					cli_quote(optarg));
			break;
		case OPT_DEVICE:
			if (cli_device_option(optarg) < 0) {
				tar_try_help();
				exit(TAR_FATAL);
			}
			break;
		case OPT_MEMORY_LIMIT:
			if (cli_parse_size(optarg, &size) < 0 || size == 0)
				cli_die(TAR_FATAL, "invalid --memory-limit %s", cli_quote(optarg));
			o->memory_limit = size;
			break;
		case OPT_PROGRESS:
			if (progress_parse(optarg, &o->progress) < 0) {
				tar_try_help();
				exit(TAR_FATAL);
			}
			break;
		case OPT_PLAN_TRACE:
			o->plan_trace = optarg;
			break;
		case 'H':
		case OPT_FORMAT:
			if (strcmp(optarg, "pax") == 0 || strcmp(optarg, "posix") == 0)
				o->format = TAR_FMT_PAX;
			else if (strcmp(optarg, "gnu") == 0 || strcmp(optarg, "oldgnu") == 0)
				o->format = TAR_FMT_GNU;
			else if (strcmp(optarg, "ustar") == 0)
				o->format = TAR_FMT_USTAR;
			else if (strcmp(optarg, "v7") == 0)
				o->format = TAR_FMT_V7;
			else
				cli_die(TAR_FATAL, "%s: Invalid archive format", cli_quote(optarg));
			break;
		case OPT_HELP:
			usage(stdout);
			exit(0);
		case OPT_VERSION:
			cli_version(cli_prog());
			exit(0);
		default:
			/* An unknown option or a missing argument: GNU tar's argp exits 64 (EX_USAGE) there, not 2. */
			tar_try_help();
			exit(TAR_USAGE);
		}
	}
	/* After "--" getopt stops: the rest are PATHs, under the last -C. */
	for (; optind < argc; optind++) {
		if (add_root(o, ps.dir, argv[optind]) < 0)
			cli_die(TAR_FATAL, "out of memory");
		unconsumed.n = 0;
	}
	if (!o->mode) {
		/* GNU tar's wording. */
		cli_msg("You must specify one of the '-Acdtrux', '--delete' or '--test-label' options");
		tar_try_help();
		exit(TAR_FATAL);
	}
	o->unconsumed = unconsumed;
	if (ps.names_failed)
		o->names_failed = true;
	/* GNU tar's checks, in its order (src/tar.c, decode_options). */
	if (o->occurrence) {
		if (o->nroots == 0 && !o->files_from)
			usage_error("--occurrence is meaningless without a file list");
		if (o->mode != TAR_LIST && o->mode != TAR_EXTRACT && o->mode != TAR_DIFF && o->mode != TAR_DELETE)
			usage_error("'--occurrence' cannot be used with '%s'", tar_mode_option(o->mode));
	}
	if (o->verify) {
		if (o->filter != TAR_FILTER_NONE)
			usage_error("Cannot verify compressed archives");
		if (!TAR_WRITES_TREE(o->mode))
			usage_error("'--verify' cannot be used with '%s'", tar_mode_option(o->mode));
	}
	if (o->filter != TAR_FILTER_NONE) {
		if (o->mode == TAR_APPEND || o->mode == TAR_UPDATE || o->mode == TAR_DELETE)
			usage_error("Cannot update compressed archives");
		if (o->mode == TAR_CONCAT)
			usage_error("Cannot concatenate compressed archives");
	}
	if (o->pax_option && o->mode != TAR_LIST && o->mode != TAR_EXTRACT && o->mode != TAR_DIFF && o->format != TAR_FMT_PAX)
		usage_error("--pax-option can be used only on POSIX archives");
	tar_pax_check();
	/* GNU tar lets it override what it reads: not done here, so refused, not ignored. */
	if (o->pax_option && !TAR_WRITES_TREE(o->mode))
		usage_error("--pax-option is honoured with -c, -r and -u only");
	if (tar_pax_renames() && o->filter != TAR_FILTER_NONE)
		usage_error("--pax-option exthdr.name with compression: sweep-tar's compressor is inside libarchive, the headers cannot be renamed; compress with a pipe");
	if (o->mode != TAR_LIST && o->mode != TAR_EXTRACT && o->mode != TAR_DIFF && o->format != TAR_FMT_PAX &&
	    (o->acls == 1 || o->xattrs == 1))
		/* GNU tar's words: only pax headers carry them. */
		usage_error("--%s can be used only on POSIX archives", o->acls == 1 ? "acls" : "xattrs");
	if ((o->mode == TAR_APPEND || o->mode == TAR_UPDATE || o->mode == TAR_CONCAT) &&
	    (!o->archive || strcmp(o->archive, "-") == 0))
		usage_error("Options '-Aru' are incompatible with '-f -'");
	if (o->mode == TAR_EXTRACT && o->dereference)
		cli_die(TAR_FATAL, "-h with -x would write through symlinks at the destination; sweep-tar never does");
	/* -o with -c is --old-archive: the V7 format, as GNU tar takes it. */
	if (old_archive && o->mode == TAR_CREATE)
		o->format = TAR_FMT_V7;
	if (auto_compress && o->mode == TAR_CREATE && o->filter == TAR_FILTER_NONE && o->archive)
		o->filter = filter_by_suffix(o->archive);
	if (o->progress.on && o->mode != TAR_CREATE) {
		/* Not accepted and ignored: -t and -x have no progress display (yet). */
		cli_msg("--progress works with -c only");
		tar_try_help();
		exit(TAR_FATAL);
	}
	if (o->mode == TAR_EXTRACT || o->mode == TAR_DIFF)
		o->extract_dir = ps.dir; /* freed at exit */
	else
		free(ps.dir);
	if (backup)
		tar_backup_option(backup_control, backup_suffix);
	/* -P with -x: GNU tar writes where the names say; sweep-tar writes below -C only. */
	if (o->absolute_names && o->mode == TAR_EXTRACT)
		cli_die(TAR_FATAL, "-P with -x would write outside the extraction directory; sweep-tar never does");
	/* GNU tar takes it and does nothing with it when reading: refused here, not ignored. */
	if (o->remove_files && !TAR_WRITES_TREE(o->mode))
		usage_error("'--remove-files' cannot be used with '%s'", tar_mode_option(o->mode));
	/* GNU tar takes it and does nothing with it when writing: refused here, not ignored. */
	if (one_top_level && (TAR_WRITES_TREE(o->mode) || o->mode == TAR_CONCAT || o->mode == TAR_DELETE))
		usage_error("'--one-top-level' cannot be used with '%s'", tar_mode_option(o->mode));
	if (one_top_level)
		set_one_top_level(o);
	/* -T with no names in it makes an empty archive, as in GNU tar. */
	if (o->nroots == 0 && !o->files_from && o->mode == TAR_CREATE)
		usage_error("Cowardly refusing to create an empty archive");
	tar_checkpoint_ready();
	o->track_single_links = o->dereference || operands_overlap(o);
}

