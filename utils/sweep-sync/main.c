/* SPDX-License-Identifier: MIT */
/*
 * sweep-sync: a local `rsync -a` that reads only what changed, in one
 * physical sweep. This file parses the command line, works out rsync's
 * meaning of SRC and DEST, runs the phases (sync.h) and turns the outcome
 * into rsync's exit codes.
 */
#include <errno.h>
#include <getopt.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sweep.h>

#include "cli.h"
#include "exclude.h"
#include "progress.h"
#include "sync.h"

enum {
	OPT_DELETE = 256,
	OPT_PROGRESS,
	OPT_EXCLUDE,
	OPT_HELP,
	OPT_VERSION,
};

static const struct option long_opts[] = {
	{ "archive", no_argument, NULL, 'a' },
	{ "recursive", no_argument, NULL, 'r' },
	{ "links", no_argument, NULL, 'l' },
	{ "perms", no_argument, NULL, 'p' },
	{ "times", no_argument, NULL, 't' },
	{ "owner", no_argument, NULL, 'o' },
	{ "group", no_argument, NULL, 'g' },
	{ "hard-links", no_argument, NULL, 'H' },
	{ "acls", no_argument, NULL, 'A' },
	{ "xattrs", no_argument, NULL, 'X' },
	{ "dry-run", no_argument, NULL, 'n' },
	{ "delete", no_argument, NULL, OPT_DELETE },
	{ "checksum", no_argument, NULL, 'c' },
	{ "itemize-changes", no_argument, NULL, 'i' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "exclude", required_argument, NULL, OPT_EXCLUDE },
	{ "one-file-system", no_argument, NULL, 'x' },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ 0 },
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [OPTION]... SRC[/] DEST[/]\n"
		"Synchronize DEST with SRC on this machine, as rsync does, reading the\n"
		"changed files in one physical sweep.\n"
		"\n"
		"  -a, --archive          same as -rlptgoD\n"
		"  -r, --recursive        recurse into directories\n"
		"  -l, --links            copy symlinks as symlinks\n"
		"  -p, --perms            preserve permissions\n"
		"  -t, --times            preserve modification times\n"
		"  -o, --owner            preserve owner (super-user only)\n"
		"  -g, --group            preserve group\n"
		"  -D                     preserve device files and special files\n"
		"  -H, --hard-links       preserve hard links\n"
		"  -A, --acls             preserve ACLs (implies -p)\n"
		"  -X, --xattrs           preserve extended attributes\n"
		"  -n, --dry-run          show what would be done, change nothing\n"
		"      --delete           delete files in DEST that SRC does not have\n"
		"  -c, --checksum         compare contents, not size and mtime\n"
		"  -i, --itemize-changes  print a change summary for each update\n"
		"  -v, --verbose          name the files transferred\n"
		"      --progress         show progress on a terminal\n"
		"      --exclude=PATTERN  exclude files matching PATTERN (rsync rules)\n"
		"  -x, --one-file-system  do not cross filesystem boundaries\n"
		"      --help             display this help and exit\n"
		"      --version          output version information and exit\n"
		"\n"
		"A trailing slash on SRC copies its contents; without it SRC itself is\n"
		"copied into DEST. Exit status: 0 success, 1 usage, 11 file I/O error\n"
		"(e.g. destination full), 20 interrupted, 23 partial transfer due to\n"
		"error, 24 some source files vanished.\n",
		cli_prog());
}

void sync_error(struct sync_ctx *c, const char *path, int err)
{
	progress_clear(c->prog);
	cli_path_error(path, err);
	c->errors++;
}

void sync_vanished(struct sync_ctx *c, const char *path)
{
	progress_clear(c->prog);
	cli_msg("file has vanished: %s", cli_quote(path));
	c->vanished++;
}

/*
 * Test hook: SWEEP_SYNC_TEST_STOP=scan stops the process (SIGSTOP) once
 * both trees are scanned, =bytes:N once N bytes of file data have been
 * written, so that tests can change the source or kill the run at a known
 * point without timing guesses. Each point fires once.
 */
void sync_test_stop(const char *point, uint64_t bytes)
{
	static bool fired;
	const char *v = getenv("SWEEP_SYNC_TEST_STOP");
	size_t l = strlen(point);

	if (fired || !v || strncmp(v, point, l) || (v[l] && v[l] != ':'))
		return;
	if (v[l] == ':' && bytes < strtoull(v + l + 1, NULL, 10))
		return;
	fired = true;
	fflush(stdout);
	raise(SIGSTOP);
}

static void on_signal(int sig)
{
	static const char msg[] = ": received signal, exiting\n";
	const char *p = cli_prog();

	(void)sig;
	/* temporaries left behind carry the engine's prefix; the next run removes them */
	if (write(2, p, strlen(p)) < 0 || write(2, msg, sizeof(msg) - 1) < 0)
		_exit(EXIT_SIGNAL);
	_exit(EXIT_SIGNAL);
}

static bool ends_with_slash(const char *s)
{
	size_t l = strlen(s);

	return l && s[l - 1] == '/';
}

/* rsync treats "dir/." like "dir/": copy the contents. */
static bool means_contents(const char *s)
{
	size_t l = strlen(s);

	if (!strcmp(s, ".") || ends_with_slash(s))
		return true;
	return l >= 2 && !strcmp(s + l - 2, "/.");
}

/* Copy of s without trailing slashes (and without a trailing "/."), "/" kept. */
static char *strip(const char *s)
{
	char *r = strdup(s);
	size_t l;

	if (!r)
		return NULL;
	l = strlen(r);
	for (;;) {
		while (l > 1 && r[l - 1] == '/')
			r[--l] = 0;
		if (l > 2 && !strcmp(r + l - 2, "/.")) {
			l -= 2;
			r[l] = 0;
			continue;
		}
		break;
	}
	return r;
}

static char *join(const char *a, const char *b)
{
	size_t la = strlen(a);
	char *r = malloc(la + strlen(b) + 2);

	if (!r)
		return NULL;
	sprintf(r, "%s%s%s", a, la && a[la - 1] == '/' ? "" : "/", b);
	return r;
}

static int parse(int argc, char **argv, struct sync_opts *o)
{
	int ch;

	while ((ch = getopt_long(argc, argv, "arlptogDHAXncivx", long_opts, NULL)) != -1) {
		switch (ch) {
		case 'a':
			o->recursive = o->links = o->perms = o->times = true;
			o->owner = o->group = o->devices = o->specials = true;
			break;
		case 'r': o->recursive = true; break;
		case 'l': o->links = true; break;
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
		case 'x': o->one_fs = true; break;
		case OPT_DELETE: o->delete = true; break;
		case OPT_PROGRESS: o->progress = true; break;
		case OPT_EXCLUDE:
			if (!o->exclude)
				o->exclude = exclude_new(EXCLUDE_RSYNC);
			if (!o->exclude || exclude_add(o->exclude, optarg) < 0) {
				cli_msg("invalid exclude pattern: %s", cli_quote(optarg));
				return -EINVAL;
			}
			break;
		case OPT_HELP:
			usage(stdout);
			exit(0);
		case OPT_VERSION:
			cli_version(cli_prog());
			exit(0);
		default:
			cli_try_help();
			return -EINVAL;
		}
	}
	if (argc - optind != 2) {
		cli_msg(argc - optind < 2 ? "missing SRC or DEST operand" : "exactly one SRC and one DEST are supported");
		cli_try_help();
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sync_ctx c = { 0 };
	char *src = NULL, *dst = NULL, *dst_root = NULL, *rel0 = NULL;
	const char *container = NULL; /* the directory the transfer goes into, created if missing */
	bool contents, dst_is_dir;
	struct stat sst, dstst;
	int r, code = 0;

	cli_init(argv[0]);
	cli_close_stdout_atexit();
	if (parse(argc, argv, &c.o) < 0) {
		code = EXIT_SYNTAX;
		goto out;
	}
	c.am_root = geteuid() == 0;
	setlocale(LC_CTYPE, "");
	c.utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGPIPE, SIG_IGN);

	contents = means_contents(argv[optind]);
	src = strip(argv[optind]);
	dst = strip(argv[optind + 1]);
	if (!src || !dst)
		goto nomem;
	if ((contents ? stat(src, &sst) : lstat(src, &sst)) < 0) {
		/* rsync: link_stat "x" failed: No such file or directory */
		cli_error(-errno, "link_stat %s failed", cli_quote(src));
		c.errors++;
		goto report;
	}
	dst_is_dir = stat(dst, &dstst) == 0 && S_ISDIR(dstst.st_mode);
	if (S_ISDIR(sst.st_mode) && contents) {
		rel0 = strdup(".");
		dst_root = strdup(dst);
		container = dst;
	} else {
		const char *base = strrchr(src, '/');

		base = base && base[1] ? base + 1 : src;
		rel0 = strdup(base);
		if (S_ISDIR(sst.st_mode) || dst_is_dir || ends_with_slash(argv[optind + 1])) {
			dst_root = join(dst, base);
			container = dst;
		} else {
			dst_root = strdup(dst); /* one file to a new name */
		}
	}
	if (!rel0 || !dst_root)
		goto nomem;
	c.src_root = src;
	c.dst_root = dst_root;
	c.rel0 = rel0;
	c.prog = progress_new(c.o.progress);

	r = flist_scan(&c);
	if (r < 0) {
		cli_error(r, "scanning the file lists");
		c.errors++;
		goto report;
	}
	sync_test_stop("scan", 0);
	/* rsync makes DEST only when there is something to put in it, or DEST/ says it is a directory */
	if (container && !dst_is_dir && (c.list.n || ends_with_slash(argv[optind + 1]))) {
		/* rsync makes the last component of DEST, not its parents */
		if (!c.o.dry_run && mkdir(container, 0777) < 0 && errno != EEXIST) {
			cli_error(-errno, "mkdir %s failed", cli_quote(container));
			code = EXIT_FILEIO;
			goto out;
		}
		if (c.o.itemize || c.o.verbose)
			printf("created directory %s\n", container);
	}
	if (c.o.checksum) {
		r = checksum_run(&c);
		if (r < 0) {
			cli_error(r, "comparing checksums");
			c.errors++;
			goto report;
		}
	}
	r = apply_run(&c);
	if (r < 0 && !c.fatal) {
		cli_error(r, "sync failed");
		c.errors++;
	}
report:
	progress_clear(c.prog);
	if (c.fatal) {
		code = c.fatal_code;
		cli_msg("error in file IO (code %d)", code);
	} else if (c.errors) {
		code = EXIT_PARTIAL;
		cli_msg("some files/attrs were not transferred (see previous errors) (code %d)", code);
	} else if (c.vanished) {
		code = EXIT_VANISHED;
		cli_msg("some files vanished before they could be transferred (code %d)", code);
	}
	goto out;
nomem:
	cli_msg("out of memory");
	code = EXIT_PARTIAL;
out:
	flist_free(&c.list);
	free(c.digests);
	progress_free(c.prog);
	exclude_free(c.o.exclude);
	free(rel0);
	free(dst_root);
	free(src);
	free(dst);
	return code;
}
