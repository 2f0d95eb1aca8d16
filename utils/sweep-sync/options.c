/* SPDX-License-Identifier: MIT */
/*
 * sweep-sync's command line: rsync's options, spellings and messages, for
 * the local transfer sweep-sync does. An option rsync has that sweep-sync
 * cannot honour is refused by name ("This sweep-sync does not support
 * --X"), never accepted and ignored.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <strings.h>
#include <unistd.h>

#include "cli.h"
#include "filter.h"
#include "progress.h"
#include "sync.h"

enum {
	OPT_DELETE = 256,
	OPT_DELETE_AFTER,
	OPT_DELETE_DURING,
	OPT_DELETE_DELAY,
	OPT_DELETE_BEFORE,
	OPT_DELETE_EXCLUDED,
	OPT_MAX_DELETE,
	OPT_PROGRESS,
	OPT_PARTIAL,
	OPT_INFO,
	OPT_DEBUG,
	OPT_EXCLUDE,
	OPT_INCLUDE,
	OPT_EXCLUDE_FROM,
	OPT_INCLUDE_FROM,
	OPT_FILTER,
	OPT_FILES_FROM,
	OPT_FROM0,
	OPT_STATS,
	OPT_NUMERIC_IDS,
	OPT_SIZE_ONLY,
	OPT_MODIFY_WINDOW,
	OPT_MAX_SIZE,
	OPT_MIN_SIZE,
	OPT_BACKUP_DIR,
	OPT_SUFFIX,
	OPT_LINK_DEST,
	OPT_COMPARE_DEST,
	OPT_COPY_DEST,
	OPT_REMOVE_SOURCE,
	OPT_COMPRESS_LEVEL,
	OPT_COMPRESS_CHOICE,
	OPT_RSYNC_PATH,
	OPT_OLD_ARGS,
	OPT_WHOLE_FILE,
	OPT_EXISTING,
	OPT_IGNORE_EXISTING,
	OPT_INSECURE_LINKS,
	OPT_COPY_UNSAFE_LINKS,
	OPT_SAFE_LINKS,
	OPT_FORCE,
	OPT_SPARSE,
	OPT_NO,         /* --no-X: the negations rsync has for the options below */
	OPT_DEVICE,
	OPT_MKPATH,
	OPT_CHMOD,
	OPT_SUPER,
	OPT_FAKE_SUPER,
	OPT_NO_SUPER,
	OPT_DELAY_UPDATES,
	OPT_LOG_FILE,
	OPT_LIST_ONLY,
	OPT_OPEN_NOATIME,
	OPT_MAX_ALLOC,
	OPT_CHOWN,
	OPT_USERMAP,
	OPT_GROUPMAP,
	OPT_STOP_AT,
	OPT_STOP_AFTER,
	OPT_LOG_FILE_FORMAT,
	OPT_HELP,
	OPT_VERSION,
	OPT_REFUSED,    /* an rsync option sweep-sync does not have */
};

static const struct option long_opts[] = {
	{ "archive", no_argument, NULL, 'a' },
	{ "recursive", no_argument, NULL, 'r' },
	{ "links", no_argument, NULL, 'l' },
	{ "perms", no_argument, NULL, 'p' },
	{ "times", no_argument, NULL, 't' },
	{ "owner", no_argument, NULL, 'o' },
	{ "group", no_argument, NULL, 'g' },
	{ "devices", no_argument, NULL, 'D' },
	{ "specials", no_argument, NULL, 'D' },
	{ "hard-links", no_argument, NULL, 'H' },
	{ "acls", no_argument, NULL, 'A' },
	{ "xattrs", no_argument, NULL, 'X' },
	{ "dry-run", no_argument, NULL, 'n' },
	{ "delete", no_argument, NULL, OPT_DELETE },
	{ "del", no_argument, NULL, OPT_DELETE_DURING },
	{ "delete-during", no_argument, NULL, OPT_DELETE_DURING },
	{ "delete-after", no_argument, NULL, OPT_DELETE_AFTER },
	{ "delete-delay", no_argument, NULL, OPT_DELETE_DELAY },
	{ "delay-updates", no_argument, NULL, OPT_DELAY_UPDATES },
	{ "delete-before", no_argument, NULL, OPT_DELETE_BEFORE },
	{ "delete-excluded", no_argument, NULL, OPT_DELETE_EXCLUDED },
	{ "max-delete", required_argument, NULL, OPT_MAX_DELETE },
	{ "checksum", no_argument, NULL, 'c' },
	{ "itemize-changes", no_argument, NULL, 'i' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "progress", optional_argument, NULL, OPT_PROGRESS },
	{ "partial", no_argument, NULL, OPT_PARTIAL },
	{ "info", required_argument, NULL, OPT_INFO },
	{ "human-readable", no_argument, NULL, 'h' },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "exclude", required_argument, NULL, OPT_EXCLUDE },
	{ "include", required_argument, NULL, OPT_INCLUDE },
	{ "exclude-from", required_argument, NULL, OPT_EXCLUDE_FROM },
	{ "include-from", required_argument, NULL, OPT_INCLUDE_FROM },
	{ "filter", required_argument, NULL, 'f' },
	{ "files-from", required_argument, NULL, OPT_FILES_FROM },
	{ "from0", no_argument, NULL, '0' },
	{ "relative", no_argument, NULL, 'R' },
	{ "dirs", no_argument, NULL, 'd' },
	{ "update", no_argument, NULL, 'u' },
	{ "numeric-ids", no_argument, NULL, OPT_NUMERIC_IDS },
	{ "size-only", no_argument, NULL, OPT_SIZE_ONLY },
	{ "modify-window", required_argument, NULL, '@' },
	{ "max-size", required_argument, NULL, OPT_MAX_SIZE },
	{ "max-alloc", required_argument, NULL, OPT_MAX_ALLOC },
	{ "stop-at", required_argument, NULL, OPT_STOP_AT },
	{ "stop-after", required_argument, NULL, OPT_STOP_AFTER },
	{ "min-size", required_argument, NULL, OPT_MIN_SIZE },
	{ "backup", no_argument, NULL, 'b' },
	{ "backup-dir", required_argument, NULL, OPT_BACKUP_DIR },
	{ "suffix", required_argument, NULL, OPT_SUFFIX },
	{ "link-dest", required_argument, NULL, OPT_LINK_DEST },
	{ "compare-dest", required_argument, NULL, OPT_COMPARE_DEST },
	{ "copy-dest", required_argument, NULL, OPT_COPY_DEST },
	{ "remove-source-files", no_argument, NULL, OPT_REMOVE_SOURCE },
	{ "compress", no_argument, NULL, 'z' },
	{ "compress-level", required_argument, NULL, OPT_COMPRESS_LEVEL },
	{ "compress-choice", required_argument, NULL, OPT_COMPRESS_CHOICE },
	{ "zc", required_argument, NULL, OPT_COMPRESS_CHOICE },
	{ "zl", required_argument, NULL, OPT_COMPRESS_LEVEL },
	{ "whole-file", no_argument, NULL, 'W' },
	{ "one-file-system", no_argument, NULL, 'x' },
	{ "cvs-exclude", no_argument, NULL, 'C' },
	{ "no-perms", no_argument, NULL, OPT_NO },
	{ "no-times", no_argument, NULL, OPT_NO },
	{ "no-owner", no_argument, NULL, OPT_NO },
	{ "no-group", no_argument, NULL, OPT_NO },
	{ "no-links", no_argument, NULL, OPT_NO },
	{ "no-devices", no_argument, NULL, OPT_NO },
	{ "no-specials", no_argument, NULL, OPT_NO },
	{ "no-D", no_argument, NULL, OPT_NO },
	{ "no-recursive", no_argument, NULL, OPT_NO },
	{ "no-r", no_argument, NULL, OPT_NO },
	{ "no-hard-links", no_argument, NULL, OPT_NO },
	{ "no-relative", no_argument, NULL, OPT_NO },
	{ "no-R", no_argument, NULL, OPT_NO },
	{ "no-dirs", no_argument, NULL, OPT_NO },
	{ "no-d", no_argument, NULL, OPT_NO },
	{ "no-verbose", no_argument, NULL, OPT_NO },
	{ "no-v", no_argument, NULL, OPT_NO },
	{ "no-whole-file", no_argument, NULL, OPT_NO },
	{ "no-W", no_argument, NULL, OPT_NO },
	{ "no-inc-recursive", no_argument, NULL, OPT_NO },
	{ "no-i-r", no_argument, NULL, OPT_NO },
	{ "no-compress", no_argument, NULL, OPT_NO },
	{ "no-z", no_argument, NULL, OPT_NO },
	{ "no-human-readable", no_argument, NULL, OPT_NO },
	{ "no-h", no_argument, NULL, OPT_NO },
	{ "no-partial", no_argument, NULL, OPT_NO },
	{ "no-progress", no_argument, NULL, OPT_NO },
	{ "insecure-links", no_argument, NULL, OPT_INSECURE_LINKS },
	{ "copy-links", no_argument, NULL, 'L' },
	{ "copy-dirlinks", no_argument, NULL, 'k' },
	{ "copy-unsafe-links", no_argument, NULL, OPT_COPY_UNSAFE_LINKS },
	{ "safe-links", no_argument, NULL, OPT_SAFE_LINKS },
	{ "device", required_argument, NULL, OPT_DEVICE },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "version", no_argument, NULL, OPT_VERSION },
	/* rsync's, refused by name: accepting them would mean ignoring them */
	{ "inplace", no_argument, NULL, OPT_REFUSED },
	{ "append", no_argument, NULL, OPT_REFUSED },
	{ "append-verify", no_argument, NULL, OPT_REFUSED },
	{ "fuzzy", no_argument, NULL, OPT_REFUSED },
	{ "block-size", required_argument, NULL, OPT_REFUSED },
	{ "partial-dir", required_argument, NULL, OPT_REFUSED },
	{ "temp-dir", required_argument, NULL, OPT_REFUSED },
	{ "write-batch", required_argument, NULL, OPT_REFUSED },
	{ "only-write-batch", required_argument, NULL, OPT_REFUSED },
	{ "read-batch", required_argument, NULL, OPT_REFUSED },
	{ "bwlimit", required_argument, NULL, OPT_REFUSED },
	{ "chmod", required_argument, NULL, OPT_CHMOD },
	{ "chown", required_argument, NULL, OPT_CHOWN },
	{ "usermap", required_argument, NULL, OPT_USERMAP },
	{ "groupmap", required_argument, NULL, OPT_GROUPMAP },
	{ "keep-dirlinks", no_argument, NULL, OPT_REFUSED },
	{ "munge-links", no_argument, NULL, OPT_REFUSED },
	{ "existing", no_argument, NULL, OPT_EXISTING },
	{ "ignore-non-existing", no_argument, NULL, OPT_EXISTING },
	{ "ignore-existing", no_argument, NULL, OPT_IGNORE_EXISTING },
	{ "ignore-times", no_argument, NULL, 'I' },
	{ "no-ignore-times", no_argument, NULL, OPT_NO },
	{ "no-I", no_argument, NULL, OPT_NO },
	{ "sparse", no_argument, NULL, 'S' },
	{ "no-sparse", no_argument, NULL, OPT_NO },
	{ "no-S", no_argument, NULL, OPT_NO },
	{ "preallocate", no_argument, NULL, OPT_REFUSED },
	{ "fake-super", no_argument, NULL, OPT_FAKE_SUPER },
	{ "super", no_argument, NULL, OPT_SUPER },
	{ "no-super", no_argument, NULL, OPT_NO_SUPER },
	{ "executability", no_argument, NULL, 'E' },
	{ "atimes", no_argument, NULL, 'U' },
	{ "open-noatime", no_argument, NULL, OPT_OPEN_NOATIME },
	{ "crtimes", no_argument, NULL, OPT_REFUSED },
	{ "omit-dir-times", no_argument, NULL, 'O' },
	{ "omit-link-times", no_argument, NULL, 'J' },
	{ "no-omit-dir-times", no_argument, NULL, OPT_NO },
	{ "no-O", no_argument, NULL, OPT_NO },
	{ "no-omit-link-times", no_argument, NULL, OPT_NO },
	{ "no-J", no_argument, NULL, OPT_NO },
	{ "prune-empty-dirs", no_argument, NULL, 'm' },
	{ "no-prune-empty-dirs", no_argument, NULL, OPT_NO },
	{ "no-m", no_argument, NULL, OPT_NO },
	{ "ignore-errors", no_argument, NULL, OPT_REFUSED },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "no-force", no_argument, NULL, OPT_NO },
	{ "mkpath", no_argument, NULL, OPT_MKPATH },
	{ "no-mkpath", no_argument, NULL, OPT_NO },
	{ "log-file", required_argument, NULL, OPT_LOG_FILE },
	{ "log-file-format", required_argument, NULL, OPT_LOG_FILE_FORMAT },
	{ "out-format", required_argument, NULL, OPT_REFUSED },
	{ "log-format", required_argument, NULL, OPT_REFUSED },
	{ "timeout", required_argument, NULL, OPT_REFUSED },
	{ "contimeout", required_argument, NULL, OPT_REFUSED },
	{ "checksum-choice", required_argument, NULL, OPT_REFUSED },
	{ "debug", required_argument, NULL, OPT_DEBUG },
	{ "iconv", required_argument, NULL, OPT_REFUSED },
	{ "rsh", required_argument, NULL, 'e' },
	{ "rsync-path", required_argument, NULL, OPT_RSYNC_PATH },
	{ "protect-args", no_argument, NULL, 's' },
	{ "secluded-args", no_argument, NULL, 's' },
	{ "no-protect-args", no_argument, NULL, OPT_NO },
	{ "no-secluded-args", no_argument, NULL, OPT_NO },
	{ "no-s", no_argument, NULL, OPT_NO },
	{ "old-args", no_argument, NULL, OPT_OLD_ARGS },
	{ "password-file", required_argument, NULL, OPT_REFUSED },
	{ "port", required_argument, NULL, OPT_REFUSED },
	{ "daemon", no_argument, NULL, OPT_REFUSED },
	{ "server", no_argument, NULL, OPT_REFUSED },
	{ "list-only", no_argument, NULL, OPT_LIST_ONLY },
	{ "stop-after", required_argument, NULL, OPT_REFUSED },
	{ "stop-at", required_argument, NULL, OPT_REFUSED },
	{ 0 },
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [OPTION]... SRC[/]... DEST[/]\n"
		"  or:  %s [OPTION]... SRC[/]... [USER@]HOST:DEST[/]\n"
		"  or:  %s [OPTION]... [USER@]HOST:SRC[/]... DEST[/]\n"
		"Synchronize DEST with SRC, as rsync does, reading the changed files in one\n"
		"physical sweep; HOST: runs sweep-sync --server there over ssh.\n"
		"\n"
		"  -a, --archive          same as -rlptgoD\n"
		"  -r, --recursive        recurse into directories\n"
		"  -d, --dirs             transfer directories without recursing\n"
		"  -R, --relative         use relative path names\n"
		"  -l, --links            copy symlinks as symlinks\n"
		"  -L, --copy-links       transform symlink into referent file/dir\n"
		"      --copy-unsafe-links  only \"unsafe\" symlinks are transformed\n"
		"      --safe-links       ignore symlinks that point outside the tree\n"
		"  -k, --copy-dirlinks    transform symlink to dir into referent dir\n"
		"      --chmod=CHMOD      affect file and/or directory permissions\n"
		"      --usermap=STRING   custom username mapping\n"
		"      --groupmap=STRING  custom groupname mapping\n"
		"      --chown=USER:GROUP simple username/groupname mapping\n"
		"  -m, --prune-empty-dirs prune empty directory chains from file-list\n"
		"      --mkpath           create destination's missing path components\n"
		"      --force            force deletion of directories even if not empty\n"
		"  -S, --sparse           turn sequences of nulls into sparse blocks\n"
		"  -I, --ignore-times     don't skip files that match size and time\n"
		"  -p, --perms            preserve permissions\n"
		"  -t, --times            preserve modification times\n"
		"  -U, --atimes           preserve access (use) times\n"
		"      --open-noatime     avoid changing the atime on opened files (always so)\n"
		"  -O, --omit-dir-times   omit directories from --times\n"
		"  -J, --omit-link-times  omit symlinks from --times\n"
		"  -E, --executability    preserve executability\n"
		"      --super            receiver attempts super-user activities (as root: always)\n"
		"      --fake-super       store/recover privileged attrs using xattrs\n"
		"      --no-super         receiver acts as a user, not root: no owner given away\n"
		"  -o, --owner            preserve owner (super-user only)\n"
		"  -g, --group            preserve group\n"
		"  -D                     preserve device files and special files\n"
		"  -H, --hard-links       preserve hard links\n"
		"  -A, --acls             preserve ACLs (implies -p)\n"
		"  -X, --xattrs           preserve extended attributes\n"
		"      --numeric-ids      keep uid/gid numbers (a local transfer always does)\n"
		"  -n, --dry-run          show what would be done, change nothing\n"
		"  -u, --update           skip files that are newer on the receiver\n"
		"  -c, --checksum         compare contents, not size and mtime\n"
		"      --size-only        compare sizes only\n"
		"  -@, --modify-window=NUM  times within NUM seconds are equal (-1: to the ns)\n"
		"      --max-size=SIZE    don't transfer any file larger than SIZE\n"
		"      --min-size=SIZE    don't transfer any file smaller than SIZE\n"
		"      --max-alloc=SIZE   stop when a file list would need more than SIZE at once\n"
		"      --stop-after=MINS  stop rsyncing after MINS minutes have elapsed\n"
		"      --stop-at=y-m-dTh:m  stop rsyncing at the specified point in time\n"
		"      --delete           delete files in DEST that SRC does not have\n"
		"      --delete-after, --delete-during, --del, --delete-delay\n"
		"                         the same: deletions always come after the transfer\n"
		"      --delete-before    delete before the transfer\n"
		"      --delete-excluded  also delete excluded files from DEST\n"
		"      --max-delete=NUM   don't delete more than NUM files\n"
		"  -b, --backup           keep replaced and deleted files (suffix ~)\n"
		"      --backup-dir=DIR   ... in DIR, as they lay in DEST\n"
		"      --suffix=SUFFIX    backup suffix (default ~ without --backup-dir)\n"
		"      --link-dest=DIR    hard-link unchanged files from DIR (up to 20)\n"
		"      --compare-dest=DIR skip files that are unchanged in DIR\n"
		"      --copy-dest=DIR    ... and copy them locally from DIR\n"
		"      --remove-source-files  remove the source files that were synced\n"
		"      --delay-updates    put all updated files into place at transfer's end\n"
		"      --log-file=FILE    log what we do to the specified FILE\n"
		"      --list-only        list the files instead of copying them (so does a SRC alone)\n"
		"      --log-file-format=FMT  log updates using the specified FMT\n"
		"                         (escapes: %%i %%n %%f %%L %%l %%o %%t %%p %%b %%M %%U %%G %%B)\n"
		"      --existing         skip creating new files on the receiver\n"
		"      --ignore-existing  skip updating files that exist on the receiver\n"
		"  -i, --itemize-changes  print a change summary for each update\n"
		"  -v, --verbose          name the files transferred\n"
		"  -q, --quiet            suppress non-error messages\n"
		"  -h, --human-readable   numbers in units (-hh: powers of 1024)\n"
		"      --progress         show progress during the transfer (rsync's lines)\n"
		"      --progress=SECONDS the sweep tools' progress on stderr, a line every SECONDS\n"
		"  -P                     same as --partial --progress\n"
		"      --partial          accepted: a file is never left partial (see sweep-sync(1))\n"
		"      --info=FLAGS       progress0-2, name0-2, stats0-3, del, nonreg, skip, remove, backup, flist\n"
		"      --debug=FLAGS      backup (rsync's make_backup lines), none\n"
		"      --stats            give some file-transfer stats\n"
		"  -f, --filter=RULE      add a file-filtering RULE\n"
		"  -F                     same as --filter='dir-merge /.rsync-filter';\n"
		"                         twice: also --filter='- .rsync-filter'\n"
		"  -C, --cvs-exclude      auto-ignore files as CVS does\n"
		"      --exclude=PATTERN  exclude files matching PATTERN (rsync rules)\n"
		"      --include=PATTERN  don't exclude files matching PATTERN\n"
		"      --exclude-from=FILE  read exclude patterns from FILE\n"
		"      --include-from=FILE  read include patterns from FILE\n"
		"      --files-from=FILE  read the list of source file names from FILE\n"
		"  -0, --from0            all *-from/filter files are delimited by 0s\n"
		"  -x, --one-file-system  do not cross filesystem boundaries\n"
		"  -W, --whole-file       accepted: files are always copied whole\n"
		"      --insecure-links   follow symlinks of other users in DEST and the paths of\n"
		"                         --backup-dir, --*-dest, --files-from, --exclude-from\n"
		"  -z, --compress         compress file data on the wire (zstd; nothing to compress locally)\n"
		"      --compress-level=NUM  zstd's level on the wire\n"
		"  -e, --rsh=COMMAND      the remote shell for HOST:PATH (default: $RSYNC_RSH, else ssh)\n"
		"      --rsync-path=PROGRAM  the sweep-sync to run on the remote machine\n"
		"  -s, --protect-args     send the remote paths on the wire, not through the remote shell\n"
		"      --old-args         let the remote shell split and expand the remote paths\n"
		"      --device=CLASS     hdd, ssd or auto (default): the device class of every filesystem\n"
		"      --help             display this help and exit\n"
		"      --version          output version information and exit\n"
		"\n"
		"A trailing slash on SRC copies its contents; without it SRC itself is\n"
		"copied into DEST (a directory when there are several SRCs). The first\n"
		"matching filter rule decides. Exit status: 0 success, 1 usage, 3 errors\n"
		"selecting input/output files, 4 action not supported (a daemon operand),\n"
		"11 file I/O error (e.g. destination full), 12 protocol error, 20\n"
		"interrupted, 23 partial transfer due to error, 24 some source files\n"
		"vanished, 25 --max-delete stopped deletions, 255 the remote shell failed.\n",
		cli_prog(), cli_prog(), cli_prog());
}

/*
 * rsync's SIZE arguments: a number (a decimal point allowed) with an
 * optional suffix b, k, m, g, t or p (powers of 1024; "kb" and the like
 * powers of 1000, "kib" 1024), then "+1" or "-1". -1 after the message.
 */
static int64_t parse_size(const char *arg, const char *opt)
{
	const char *p = arg;
	int reps;
	int64_t mult, size = 1;
	double d;

	while (*p >= '0' && *p <= '9')
		p++;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			;
	switch (*p && *p != '+' && *p != '-' ? *p++ : 'b') {
	case 'b': case 'B': reps = 0; break;
	case 'k': case 'K': reps = 1; break;
	case 'm': case 'M': reps = 2; break;
	case 'g': case 'G': reps = 3; break;
	case 't': case 'T': reps = 4; break;
	case 'p': case 'P': reps = 5; break;
	default: goto bad;
	}
	if (*p == 'b' || *p == 'B') {
		mult = 1000;
		p++;
	} else if (!*p || *p == '+' || *p == '-') {
		mult = 1024;
	} else if (!strncasecmp(p, "ib", 2)) {
		mult = 1024;
		p += 2;
	} else {
		goto bad;
	}
	while (reps--)
		size *= mult;
	errno = 0;
	d = strtod(arg, NULL);
	if (errno == ERANGE || d < 0 || d * (double)size >= 9.2e18)
		goto bad;
	size = (int64_t)(d * (double)size);
	if ((*p == '+' || *p == '-') && p[1] == '1' && p != arg) {
		size += *p == '+' ? 1 : -1;
		p += 2;
	}
	if (*p || size < 0)
		goto bad;
	return size;
bad:
	cli_msg("--%s=%s is invalid", opt, arg);
	return -1;
}

/* --usermap, --groupmap (kind 'u', 'g') and --chown ('c'): rsync's rules for mixing them, the maps parsed (idmap.c) */
static int parse_map(struct sync_opts *o, int kind, const char *arg)
{
	static bool user_via_chown, group_via_chown;
	const char *colon = strchr(arg, ':');
	char *user = NULL, *group = NULL;
	int r = 0;

	if (kind == 'c') {
		size_t ulen = colon ? (size_t)(colon - arg) : strlen(arg);

		if (ulen && asprintf(&user, "*:%.*s", (int)ulen, arg) < 0)
			return -ENOMEM;
		if (colon && colon[1] && asprintf(&group, "*:%s", colon + 1) < 0) {
			free(user);
			return -ENOMEM;
		}
	}
	if ((kind == 'u' || user) && o->usermap) {
		cli_msg(kind == 'c' ? (user_via_chown ? "You can only specify a user-affecting --chown once."
						      : "--chown conflicts with prior --usermap.")
				    : user_via_chown ? "--usermap conflicts with prior --chown." : "You can only specify --usermap once.");
		r = -EINVAL;
	} else if ((kind == 'g' || group) && o->groupmap) {
		cli_msg(kind == 'c' ? (group_via_chown ? "You can only specify a group-affecting --chown once."
						       : "--chown conflicts with prior --groupmap.")
				    : group_via_chown ? "--groupmap conflicts with prior --chown." : "You can only specify --groupmap once.");
		r = -EINVAL;
	}
	if (r == 0 && (kind == 'u' || user))
		r = idmap_parse(kind == 'u' ? arg : user, true, &o->usermap);
	if (r == 0 && (kind == 'g' || group))
		r = idmap_parse(kind == 'g' ? arg : group, false, &o->groupmap);
	if (r == 0 && kind == 'c') {
		user_via_chown = user != NULL || user_via_chown;
		group_via_chown = group != NULL || group_via_chown;
	}
	free(user);
	free(group);
	return r;
}

/*
 * --max-alloc=SIZE (or $RSYNC_MAX_ALLOC): rsync's bound on one allocation,
 * at least 1 MiB; sweep-sync's big ones are its file lists (flist.c), which
 * stop the run with rsync's message and exit 22 beyond it.
 */
static int parse_max_alloc(struct sync_opts *o, const char *arg)
{
	int64_t size = parse_size(arg, "max-alloc");

	if (size < 0)
		return -EINVAL;
	if (size == 0) {
		cli_msg("max-alloc must be greater than zero");
		return -EINVAL;
	}
	if (size < 1024 * 1024) {
		cli_msg("--max-alloc=%s is too small (min: 1.00M or 0 for unlimited)", arg);
		return -EINVAL;
	}
	o->max_alloc = (uint64_t)size;
	return 0;
}

/*
 * --stop-after=MINS, --stop-at=WHEN: the time the transfer stops (rsync's
 * "stopping at requested limit", exit 30). WHEN as rsync's parse_time():
 * [[YYYY-]MM-DD][T]HH:MM (a date alone: its midnight; '/' for '-' too),
 * local time, and in the future: a time of day alone that has passed is
 * tomorrow's, as in rsync.
 */
static int parse_stop(struct sync_opts *o, const char *arg, bool after)
{
	time_t now = time(NULL);

	if (after) {
		char *end;
		long v;

		errno = 0;
		v = strtol(arg, &end, 10);
		if (errno || end == arg || *end || v <= 0 || v > (long)(INT32_MAX / 60)) {
			cli_msg("invalid --stop-after value: %s", arg);
			return -EINVAL;
		}
		o->stop_at = now + (time_t)v * 60;
		return 0;
	}
	struct tm today, t;
	int y = -1, mo = -1, d = -1, h = -1, mi = -1, n = 0;
	const char *p = arg;

	localtime_r(&now, &today);
	if (sscanf(p, "%d%*[-/]%d%*[-/]%d%n", &y, &mo, &d, &n) == 3 && n > 0) {
		p += n;
	} else if (y = -1, n = 0, sscanf(p, "%d%*[-/]%d%n", &mo, &d, &n) == 2 && n > 0 && p[n] != ':') {
		p += n;
	} else {
		mo = d = -1;
	}
	if (*p == 'T' || *p == 't')
		p++;
	n = 0;
	if (*p && !(sscanf(p, "%d:%d%n", &h, &mi, &n) == 2 && n > 0 && !p[n])) {
		cli_msg("invalid --stop-at format: %s", arg);
		return -EINVAL;
	}
	if ((mo < 0 && h < 0) || (y >= 0 && y < 1900) || (mo >= 0 && (mo < 1 || mo > 12 || d < 1 || d > 31)) ||
	    (h >= 0 && (h > 23 || mi < 0 || mi > 59))) {
		cli_msg("invalid --stop-at format: %s", arg);
		return -EINVAL;
	}
	t = (struct tm){ .tm_year = y >= 0 ? y - 1900 : today.tm_year, .tm_mon = mo >= 0 ? mo - 1 : today.tm_mon,
			 .tm_mday = d >= 0 ? d : today.tm_mday, .tm_hour = h >= 0 ? h : 0, .tm_min = mi >= 0 ? mi : 0,
			 .tm_isdst = -1 };
	o->stop_at = mktime(&t);
	if (mo < 0 && o->stop_at != (time_t)-1 && o->stop_at <= now) {
		t.tm_mday++; /* a time of day gone by: tomorrow's */
		t.tm_isdst = -1;
		o->stop_at = mktime(&t);
	}
	if (o->stop_at == (time_t)-1) {
		cli_msg("invalid --stop-at format: %s", arg);
		return -EINVAL;
	}
	if (o->stop_at <= now) {
		cli_msg("--stop-at time is not in the future: %s", arg);
		return -EINVAL;
	}
	return 0;
}

/* rsync's messages name the rules; a failed parse is a usage error (1), or (-EIO) a merge file that could not be read (11). */
static int filter_status(int r)
{
	return r == -EIO ? -EIO : -EINVAL;
}

/*
 * rsync's --info and --debug argument: comma-separated items, each with an
 * optional trailing digit, its level (1 without one). Each item goes to
 * one(o, name, level), which sets it or says why not (-EINVAL).
 */
static int parse_leveled(struct sync_opts *o, const char *arg, int (*one)(struct sync_opts *, const char *, int))
{
	char *copy = strdup(arg), *save = NULL;
	int r = 0;

	if (!copy)
		return -ENOMEM;
	for (char *w = strtok_r(copy, ",", &save); w && !r; w = strtok_r(NULL, ",", &save)) {
		size_t l = strlen(w);
		int level = 1;

		if (l && w[l - 1] >= '0' && w[l - 1] <= '9') {
			level = w[l - 1] - '0';
			w[--l] = 0;
		}
		r = one(o, w, level);
	}
	free(copy);
	return r;
}

/* --info=FLAGS: the items rsync has that mean something for a local sweep-sync. */
static int info_item(struct sync_opts *o, const char *w, int level)
{
	if (!strcasecmp(w, "progress") && level <= 2)
		o->progress = level;
	else if (!strcasecmp(w, "name"))
		o->name_level = level;
	else if (!strcasecmp(w, "stats"))
		o->stats = level;
	else if (!strcasecmp(w, "del"))
		o->info_del = level;
	else if (!strcasecmp(w, "nonreg"))
		o->info_nonreg = level;
	else if (!strcasecmp(w, "skip"))
		o->info_skip = level;
	else if (!strcasecmp(w, "remove"))
		o->info_remove = level;
	else if (!strcasecmp(w, "backup"))
		o->info_backup = level;
	else if (!strcasecmp(w, "flist"))
		o->info_flist = level;
	else if (!strcasecmp(w, "none") || !strcasecmp(w, "all")) {
		int v = !strcasecmp(w, "none") ? 0 : level;

		o->progress = v > 2 ? 2 : v;
		o->name_level = o->stats = o->info_del = o->info_nonreg = o->info_skip = o->info_remove = v;
		o->info_backup = o->info_flist = v;
	} else {
		cli_msg("Unknown --info item: \"%s\"", w);
		return -EINVAL;
	}
	return 0;
}

/*
 * --debug=FLAGS: the one rsync debug item sweep-sync has lines for,
 * backup (rsync's make_backup: HLINK/RENAME/COPY/SYMLINK/DEVICE lines,
 * backup.c), and none; any other item is refused rather than accepted
 * silent ("This sweep-sync does not support --debug=ITEM", exit 1).
 */
static int debug_item(struct sync_opts *o, const char *w, int level)
{
	if (!strcasecmp(w, "backup"))
		o->debug_backup = level;
	else if (!strcasecmp(w, "none"))
		o->debug_backup = 0;
	else {
		cli_msg("This sweep-sync does not support --debug=%s", w);
		return -EINVAL;
	}
	return 0;
}

/* --no-X */
static void negate(struct sync_opts *o, const char *name)
{
	const char *n = name + 3;

	if (!strcmp(n, "perms")) o->perms = false;
	else if (!strcmp(n, "times")) o->times = false;
	else if (!strcmp(n, "owner")) o->owner = false;
	else if (!strcmp(n, "group")) o->group = false;
	else if (!strcmp(n, "links")) o->links = false;
	else if (!strcmp(n, "devices")) o->devices = false;
	else if (!strcmp(n, "specials")) o->specials = false;
	else if (!strcmp(n, "D")) o->devices = o->specials = false;
	else if (!strcmp(n, "recursive") || !strcmp(n, "r")) o->recursive = false, o->no_recursive = true;
	else if (!strcmp(n, "hard-links")) o->hard_links = false;
	else if (!strcmp(n, "relative") || !strcmp(n, "R")) o->relative = false, o->no_relative = true;
	else if (!strcmp(n, "dirs") || !strcmp(n, "d")) o->dirs = false;
	else if (!strcmp(n, "verbose") || !strcmp(n, "v")) o->verbose = 0;
	else if (!strcmp(n, "human-readable") || !strcmp(n, "h")) o->human = 0;
	else if (!strcmp(n, "partial")) o->partial = false;
	else if (!strcmp(n, "force")) o->force = false;
	else if (!strcmp(n, "mkpath")) o->mkpath = false;
	else if (!strcmp(n, "prune-empty-dirs") || !strcmp(n, "m")) o->prune_empty_dirs = false;
	else if (!strcmp(n, "omit-dir-times") || !strcmp(n, "O")) o->omit_dir_times = false;
	else if (!strcmp(n, "omit-link-times") || !strcmp(n, "J")) o->omit_link_times = false;
	else if (!strcmp(n, "ignore-times") || !strcmp(n, "I")) o->ignore_times = false;
	else if (!strcmp(n, "sparse") || !strcmp(n, "S")) o->sparse = false;
	else if (!strcmp(n, "progress")) o->progress = 0, o->do_progress = false;
	else if (!strcmp(n, "protect-args") || !strcmp(n, "secluded-args") || !strcmp(n, "s")) o->protect_args = false;
	/* --no-whole-file would ask for the delta algorithm: refused */
	else if (!strcmp(n, "whole-file") || !strcmp(n, "W")) o->refused = "no-whole-file";
	/* --no-inc-recursive, --no-compress: what sweep-sync does anyway */
}

static int add_basis(struct sync_opts *o, const char *dir, enum basis_kind kind, const char *opt)
{
	if (o->nbasis && o->basis_kind != kind) {
		cli_msg("You may not mix --compare-dest, --copy-dest, and --link-dest.");
		return -EINVAL;
	}
	if (o->nbasis == MAX_BASIS_DIRS) {
		cli_msg("ERROR: at most %d %s args may be specified", MAX_BASIS_DIRS, opt);
		return -EINVAL;
	}
	o->basis_kind = kind;
	o->basis[o->nbasis++] = dir;
	return 0;
}

int sync_parse_options(int argc, char **argv, struct sync_opts *o)
{
	int ch, r, idx, nF = 0;
	bool cvs = false, any_r = false;

	o->filters = filter_set_new();
	if (!o->filters)
		return -ENOMEM;
	o->max_delete = -1;
	o->max_size = o->min_size = -1;
	o->name_level = o->stats = o->info_del = o->info_nonreg = o->info_skip = o->info_remove = o->info_backup = -1;
	o->info_flist = -1;
	o->human = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":arlLkptogDHAXncivxPhzuqdRWbCFf:0@:e:sSIOJmEU", long_opts, &idx)) != -1) {
		switch (ch) {
		case 'a':
			o->recursive = o->links = o->perms = o->times = true;
			o->owner = o->group = o->devices = o->specials = true;
			break;
		case 'r': o->recursive = any_r = true; break;
		case 'l': o->links = true; break;
		case 'L': o->copy_links = true; break;
		case 'k': o->copy_dirlinks = true; break;
		case OPT_COPY_UNSAFE_LINKS: o->copy_unsafe_links = true; break;
		case OPT_SAFE_LINKS: o->safe_links = true; break;
		case OPT_FORCE: o->force = true; break;
		case OPT_MKPATH: o->mkpath = true; break;
		case OPT_CHMOD:
			r = sync_chmod_add(&o->chmod, optarg);
			if (r == -EINVAL)
				cli_msg("Invalid argument passed to --chmod (%s)", optarg);
			if (r < 0)
				return r == -ENOMEM ? r : -EINVAL;
			break;
		case 'm': o->prune_empty_dirs = true; break;
		case 'E': o->executability = true; break;
		case OPT_SUPER: o->super = true; o->fake_super = o->no_super = false; break;
		case OPT_FAKE_SUPER: o->fake_super = true; o->super = o->no_super = false; break;
		case OPT_NO_SUPER: o->no_super = true; o->super = o->fake_super = false; break;
		case OPT_DELAY_UPDATES: o->delay_updates = true; break;
		case OPT_LOG_FILE: o->log_file = optarg; break;
		case OPT_LIST_ONLY: o->list_only = true; break;
		case 'U': o->atimes = true; break;
		/* the copy engine and -c read every source with O_NOATIME where the kernel lets them, always */
		case OPT_OPEN_NOATIME: break;
		case OPT_LOG_FILE_FORMAT:
			if (synclog_format_check(optarg) < 0) {
				cli_try_help();
				return -EINVAL;
			}
			o->log_file_format = optarg;
			break;
		case 'S': o->sparse = true; break;
		case 'O': o->omit_dir_times = true; break;
		case 'J': o->omit_link_times = true; break;
		case 'I': o->ignore_times = true; break;
		case 'p': o->perms = true; break;
		case 't': o->times = true; break;
		case 'o': o->owner = true; break;
		case 'g': o->group = true; break;
		case 'D': o->devices = o->specials = true; break;
		case 'H': o->hard_links = true; break;
		case 'A': o->acls = o->perms = true; break;
		case 'X': o->xattrs = true; break;
		case 'n': o->dry_run = true; break;
		case 'c': o->checksum = true; break;
		case 'i': o->itemize++; break;
		case 'v': o->verbose++; break;
		case 'q': o->quiet = true; break;
		case 'x': o->one_fs = true; break;
		case 'h': o->human++; break;
		case 'z': o->compress = true; break; /* a local transfer has no wire: as rsync, nothing to compress */
		case 'e': o->rsh = optarg; break;
		case 's': o->protect_args = true; break;
		case 'u': o->update = true; break;
		case 'd': o->dirs = true; break;
		case 'R': o->relative = true; break;
		case 'W': break; /* always: no delta algorithm */
		case 'b': o->backup = true; break;
		case 'P': o->partial = true; o->progress = 1; o->do_progress = true; break;
		case '0': o->from0 = true; filter_set_from0(o->filters, true); break;
		case 'F':
			/* rsync: -F is ": /.rsync-filter", a second -F adds "- .rsync-filter" */
			if (++nF <= 2 && (r = filter_add(o->filters, nF == 1 ? ": /.rsync-filter" : "- .rsync-filter",
						       FILTER_RULE)) < 0)
				return filter_status(r);
			break;
		case 'C': cvs = true; break;
		case 'f':
			if ((r = filter_add(o->filters, optarg, FILTER_RULE)) < 0)
				return filter_status(r);
			break;
		case '@': {
			char *end;

			errno = 0;
			o->modify_window = strtoll(optarg, &end, 10);
			if (errno || *end || end == optarg || o->modify_window < -1) {
				cli_msg("--modify-window=%s is invalid", optarg);
				return -EINVAL;
			}
			break;
		}
		case OPT_DELETE: o->delete = true; break;
		case OPT_DELETE_DURING:
		case OPT_DELETE_AFTER:
		case OPT_DELETE_DELAY:
			o->delete = true;
			break;
		case OPT_DELETE_BEFORE: o->delete = o->delete_before = true; break;
		case OPT_DELETE_EXCLUDED: o->delete = o->delete_excluded = true; break;
		case OPT_MAX_DELETE: {
			char *end;

			errno = 0;
			o->max_delete = strtoll(optarg, &end, 10);
			if (errno || *end || end == optarg) {
				cli_msg("--max-delete=%s is invalid", optarg);
				return -EINVAL;
			}
			if (o->max_delete < 0)
				o->max_delete = -1;
			break;
		}
		case OPT_PROGRESS:
			/* with a number, the display of every sweep tool; plain, rsync's per-file lines */
			if (optarg) {
				if (progress_parse(optarg, &o->sweep_progress) < 0)
					return -EINVAL;
			} else {
				o->progress = 1;
				o->do_progress = true;
			}
			break;
		case OPT_PARTIAL: o->partial = true; break;
		case OPT_DEBUG:
			if (parse_leveled(o, optarg, debug_item) < 0) {
				cli_try_help();
				return -EINVAL;
			}
			break;
		case OPT_INFO:
			if (parse_leveled(o, optarg, info_item) < 0)
				return -EINVAL;
			break;
		case OPT_STATS: o->stats_opt = true; break;
		case OPT_NUMERIC_IDS: o->numeric_ids = true; break;
		case OPT_SIZE_ONLY: o->size_only = true; break;
		case OPT_CHOWN:
		case OPT_USERMAP:
		case OPT_GROUPMAP:
			if (parse_map(o, ch == OPT_CHOWN ? 'c' : ch == OPT_USERMAP ? 'u' : 'g', optarg) < 0) {
				cli_try_help();
				return -EINVAL;
			}
			break;
		case OPT_MAX_ALLOC:
			if (parse_max_alloc(o, optarg) < 0) {
				cli_try_help();
				return -EINVAL;
			}
			break;
		case OPT_STOP_AT:
		case OPT_STOP_AFTER:
			if (parse_stop(o, optarg, ch == OPT_STOP_AFTER) < 0) {
				cli_try_help();
				return -EINVAL;
			}
			break;
		case OPT_MAX_SIZE:
			if ((o->max_size = parse_size(optarg, "max-size")) < 0)
				return -EINVAL;
			break;
		case OPT_MIN_SIZE:
			if ((o->min_size = parse_size(optarg, "min-size")) < 0)
				return -EINVAL;
			break;
		case OPT_BACKUP_DIR: o->backup_dir = optarg; o->backup = true; break;
		case OPT_SUFFIX: o->suffix = optarg; break;
		case OPT_LINK_DEST:
		case OPT_COMPARE_DEST:
		case OPT_COPY_DEST:
			if (add_basis(o, optarg, ch == OPT_LINK_DEST ? BASIS_LINK : ch == OPT_COPY_DEST ? BASIS_COPY : BASIS_COMPARE,
				      long_opts[idx].name) < 0)
				return -EINVAL;
			break;
		case OPT_REMOVE_SOURCE: o->remove_source = true; break;
		case OPT_EXISTING: o->existing = true; break;
		case OPT_IGNORE_EXISTING: o->ignore_existing = true; break;
		case OPT_COMPRESS_LEVEL: {
			char *end;

			errno = 0;
			long v = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || v < -131072 || v > 22) {
				cli_msg("--compress-level=%s is invalid", optarg);
				return -EINVAL;
			}
			o->compress_level = (int)v;
			o->compress_level_set = true;
			break;
		}
		case OPT_COMPRESS_CHOICE:
			/* the wire's compressor: zstd (or none); checked when there is a wire (remote.c) */
			o->compress_choice = optarg;
			break;
		case OPT_RSYNC_PATH: o->rsync_path = optarg; break;
		case OPT_OLD_ARGS: o->old_args = true; break;
		case OPT_NO: negate(o, long_opts[idx].name); break;
		case OPT_INSECURE_LINKS: opath_insecure = true; break;
		case OPT_EXCLUDE:
		case OPT_INCLUDE:
			/* as in rsync, "+ " or "- " in front makes it an include or an exclude whichever option gave it */
			if ((r = filter_add(o->filters, optarg, ch == OPT_INCLUDE ? FILTER_INCLUDE : FILTER_EXCLUDE)) < 0)
				return filter_status(r);
			break;
		case OPT_EXCLUDE_FROM:
		case OPT_INCLUDE_FROM:
			if ((r = filter_add_file(o->filters, optarg, ch == OPT_INCLUDE_FROM)) < 0)
				return filter_status(r);
			break;
		case OPT_FILES_FROM: o->files_from = optarg; break;
		case OPT_DEVICE:
			if (cli_device_option(optarg) < 0)
				return -EINVAL;
			break;
		case OPT_HELP:
			usage(stdout);
			exit(0);
		case OPT_VERSION:
			cli_version(cli_prog());
			exit(0);
		case OPT_REFUSED:
			o->refused = long_opts[idx].name;
			break;
		case ':':
			cli_msg("option requires an argument -- '%c'", optopt ? optopt : '?');
			cli_try_help();
			return -EINVAL;
		default:
			if (optopt)
				cli_msg("invalid option -- '%c'", optopt);
			else
				cli_msg("unrecognized option '%s'", argv[optind - 1]);
			cli_try_help();
			return -EINVAL;
		}
	}
	if (!o->max_alloc && getenv("RSYNC_MAX_ALLOC") && *getenv("RSYNC_MAX_ALLOC") &&
	    parse_max_alloc(o, getenv("RSYNC_MAX_ALLOC")) < 0) {
		cli_try_help();
		return -EINVAL;
	}
	/* not done yet: refused rather than ignored */
	if (o->refused) {
		/* rsync's wording for an option it was built without */
		cli_msg("This sweep-sync does not support --%s", o->refused);
		cli_try_help();
		return -EINVAL;
	}
	if (o->super && geteuid() != 0) {
		/*
		 * --super: the receiver attempts what root does. Run as root, that is
		 * what sweep-sync does anyway; as another user the copy engine skips
		 * owners it cannot give silently, as cp does, where rsync would try
		 * and report each: refused rather than half done.
		 */
		cli_msg("This sweep-sync does not support --super unless run as root");
		cli_try_help();
		return -EINVAL;
	}
	if (o->fake_super && o->acls) {
		/* rsync keeps them in user.rsync.%aacl / %dacl, in its own binary form: not written here */
		cli_msg("This sweep-sync does not support --fake-super with -A (ACLs kept in xattrs)");
		cli_try_help();
		return -EINVAL;
	}
	/*
	 * --delay-updates: the files are written into .~tmp~ in their directory
	 * (rsync's partial dir), which is neither sent nor deleted unless its
	 * directory goes (rsync's perishable rule for a relative partial dir).
	 */
	if (o->delay_updates && (r = filter_add(o->filters, "-p .~tmp~/", FILTER_RULE)) < 0)
		return filter_status(r);
	/* rsync puts -C's rules after all the others */
	if (cvs && (r = filter_add_cvs(o->filters)) < 0)
		return filter_status(r);
	if (o->files_from) {
		/* rsync: --files-from implies -R and -d, and -a no longer implies -r */
		if (!o->no_relative)
			o->relative = true;
		o->dirs = true;
		if (!any_r)
			o->recursive = false;
	}
	if (o->delete && !o->recursive && !o->dirs) {
		cli_msg("--delete does not work without --recursive (-r) or --dirs (-d).");
		return -EINVAL;
	}
	if (o->quiet)
		o->verbose = 0;
	if (o->suffix && !*o->suffix && !o->backup_dir) {
		cli_msg("--suffix cannot be empty without --backup-dir");
		return -EINVAL;
	}
	if (o->suffix && strchr(o->suffix, '/')) {
		cli_msg("--suffix cannot contain slashes: %s", o->suffix);
		return -EINVAL;
	}
	if (!o->suffix)
		o->suffix = o->backup_dir ? "" : "~";
	/* rsync: -b without --backup-dir implies -O (directory times left as the backups leave them) */
	if (o->backup && !o->backup_dir)
		o->omit_dir_times = true;
	if (o->backup && !o->backup_dir && o->delete && !o->delete_excluded) {
		/* rsync: --delete must not delete the backups it makes beside the files */
		char rule[300];

		snprintf(rule, sizeof(rule), "P *%s", o->suffix);
		if ((r = filter_add(o->filters, rule, FILTER_RULE)) < 0)
			return filter_status(r);
	}
	if (o->info_flist < 0)
		o->info_flist = !o->quiet && (o->verbose || o->do_progress);
	if (o->info_backup < 0)
		o->info_backup = o->quiet ? 0 : o->verbose > 1;
	/* rsync: --progress names the files too (unless -i does, or --info=name0 was given) */
	if (o->do_progress && o->name_level < 0 && !o->itemize)
		o->name_level = 1;
	/* the --info levels -v gives, where --info did not set them */
	if (o->name_level < 0)
		o->name_level = o->quiet ? 0 : o->verbose > 1 ? 2 : o->verbose;
	if (o->stats < 0)
		o->stats = o->quiet ? 0 : o->stats_opt ? (o->verbose > 1 ? 3 : 2) : o->verbose ? 1 : 0;
	if (o->info_del < 0)
		o->info_del = o->quiet ? 0 : o->verbose ? 1 : 0;
	if (o->info_nonreg < 0)
		o->info_nonreg = o->quiet ? 0 : 1;
	if (o->info_skip < 0)
		o->info_skip = o->quiet ? 0 : o->verbose > 1;
	if (o->info_remove < 0)
		o->info_remove = o->quiet ? 0 : o->verbose > 1;
	if (o->quiet) {
		o->progress = 0;
		o->itemize = 0;
	}
	/* rsync: one operand lists it (--list-only), a DEST given to --list-only gets nothing */
	if (argc - optind == 1 && !o->files_from)
		o->list_only = true;
	if (o->list_only && !o->recursive)
		o->dirs = true; /* rsync's xfer_dirs for a listing */
	if (argc - optind < (o->list_only ? 1 : 2) && !(o->files_from && argc - optind == 2)) {
		cli_msg("missing SRC or DEST operand");
		cli_try_help();
		return -EINVAL;
	}
	if (o->files_from && argc - optind != 2) {
		cli_msg("--files-from takes one SRC directory and one DEST");
		cli_try_help();
		return -EINVAL;
	}
	return 0;
}

int sync_refuse_remote(const struct sync_opts *o)
{
	const char *name = o->copy_links ? "--copy-links" : o->copy_dirlinks ? "--copy-dirlinks"
			   : o->copy_unsafe_links ? "--copy-unsafe-links" : o->safe_links ? "--safe-links"
			   : o->fake_super ? "--fake-super" : o->delay_updates ? "--delay-updates"
			   : o->log_file ? "--log-file" : o->list_only ? "--list-only (or a remote SRC alone)"
			   : filter_set_has_xattr(o->filters) ? "xattr filter rules (the 'x' modifier)"
			   : o->usermap || o->groupmap ? "--usermap, --groupmap and --chown"
			   : o->no_super ? "--no-super" : NULL;

	if (!name)
		return 0;
	/* a followed symlink is read by its path, which the remote sender does not do yet: refused, not ignored */
	cli_msg("This sweep-sync does not support %s over a remote shell", name);
	return EXIT_SYNTAX;
}
