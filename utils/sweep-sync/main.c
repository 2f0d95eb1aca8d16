/* SPDX-License-Identifier: MIT */
/*
 * sweep-sync: a local `rsync -a` that reads only what changed, in one
 * physical sweep. This file parses the command line, works out rsync's
 * meaning of SRC and DEST, runs the phases (sync.h) and turns the outcome
 * into rsync's exit codes.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sweep.h>

#include "cli.h"
#include "exclude.h"
#include "progress.h"
#include "sync.h"
#include "testhook.h"

enum {
	OPT_DELETE = 256,
	OPT_PROGRESS,
	OPT_EXCLUDE,
	OPT_INCLUDE,
	OPT_EXCLUDE_FROM,
	OPT_INCLUDE_FROM,
	OPT_DEVICE,
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
	{ "progress", optional_argument, NULL, OPT_PROGRESS },
	{ "exclude", required_argument, NULL, OPT_EXCLUDE },
	{ "include", required_argument, NULL, OPT_INCLUDE },
	{ "exclude-from", required_argument, NULL, OPT_EXCLUDE_FROM },
	{ "include-from", required_argument, NULL, OPT_INCLUDE_FROM },
	{ "one-file-system", no_argument, NULL, 'x' },
	{ "device", required_argument, NULL, OPT_DEVICE },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ 0 },
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [OPTION]... SRC[/]... DEST[/]\n"
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
		"      --progress[=SECONDS]  show progress on stderr: a line redrawn on a terminal,\n"
		"                         else (or with SECONDS) a line every SECONDS (default 10)\n"
		"      --exclude=PATTERN  exclude files matching PATTERN (rsync rules)\n"
		"      --include=PATTERN  don't exclude files matching PATTERN\n"
		"      --exclude-from=FILE  read exclude patterns from FILE\n"
		"      --include-from=FILE  read include patterns from FILE\n"
		"  -x, --one-file-system  do not cross filesystem boundaries\n"
		"      --device=CLASS     hdd, ssd or auto (default): the device class of every filesystem\n"
		"      --help             display this help and exit\n"
		"      --version          output version information and exit\n"
		"\n"
		"A trailing slash on SRC copies its contents; without it SRC itself is\n"
		"copied into DEST (a directory when there are several SRCs). The first\n"
		"matching --include/--exclude rule decides. Exit status: 0 success, 1 usage, 11 file I/O error\n"
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

volatile sig_atomic_t sync_stop_signal;
/* While files are being transferred the copy engine stops at the next file and removes what it made. */
static volatile sig_atomic_t transferring;

static void on_signal(int sig)
{
	static const char msg[] = ": received signal, exiting\n";
	const char *p = cli_prog();

	sync_stop_signal = sig;
	if (transferring)
		return;
	/* Before or after the transfer nothing half-made exists: leave at once. */
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

/*
 * Add an --include/--exclude rule. As in rsync, "+ " or "- " in front of
 * a pattern makes it an include or an exclude whichever option gave it.
 */
static int add_rule(struct sync_opts *o, const char *pat, bool include)
{
	if ((pat[0] == '+' || pat[0] == '-') && pat[1] == ' ') {
		include = pat[0] == '+';
		pat += 2;
	}
	if (!o->exclude)
		o->exclude = exclude_new(EXCLUDE_RSYNC);
	if (!o->exclude || exclude_add_rule(o->exclude, pat, include) < 0) {
		cli_msg("invalid %s pattern: %s", include ? "include" : "exclude", cli_quote(pat));
		return -EINVAL;
	}
	return 0;
}

/* --exclude-from/--include-from: a rule a line; blank lines and ';' or '#' comments skipped, as rsync does. */
static int add_rules_from(struct sync_opts *o, const char *file, bool include)
{
	FILE *f = stdin;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int r = 0;

	if (strcmp(file, "-")) {
		/* root reading a rules file must not be led to another by a symlink another user planted */
		bool untrusted;
		int fd = opath_open(file, O_RDONLY | O_CLOEXEC, 0, &untrusted);

		f = fd >= 0 ? fdopen(fd, "r") : NULL;
		if (!f) {
			r = fd >= 0 ? -errno : fd;
			if (fd >= 0)
				close(fd);
			if (untrusted)
				opath_refusal_msg();
			cli_error(r, "failed to open %s file %s", include ? "include" : "exclude", file);
			return -EIO;
		}
	}
	while (r == 0 && (len = getline(&line, &cap, f)) >= 0) {
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = 0;
		if (len && line[0] != ';' && line[0] != '#')
			r = add_rule(o, line, include);
	}
	free(line);
	if (f != stdin)
		fclose(f);
	return r;
}

/* Parse the options: 0, -EINVAL (usage error) or -EIO (a rules file cannot be read). */
static int parse(int argc, char **argv, struct sync_opts *o)
{
	int ch, r;

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
		case OPT_PROGRESS:
			if (progress_parse(optarg, &o->progress) < 0)
				return -EINVAL;
			break;
		case OPT_EXCLUDE:
		case OPT_INCLUDE:
			if (add_rule(o, optarg, ch == OPT_INCLUDE) < 0)
				return -EINVAL;
			break;
		case OPT_EXCLUDE_FROM:
		case OPT_INCLUDE_FROM:
			r = add_rules_from(o, optarg, ch == OPT_INCLUDE_FROM);
			if (r < 0)
				return r;
			break;
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
		default:
			cli_try_help();
			return -EINVAL;
		}
	}
	if (argc - optind < 2) {
		cli_msg("missing SRC or DEST operand");
		cli_try_help();
		return -EINVAL;
	}
	return 0;
}

/*
 * Work out one SRC operand's place in the transfer (rsync's rules): SRC/
 * gives its contents to DEST, SRC gives itself to DEST/SRC's last name, and
 * a lone file goes to DEST itself unless DEST is (or is meant as) a
 * directory. 1 added, 0 when SRC cannot be read (reported: the run goes
 * on, --delete too, as rsync's does, and ends with exit 23), -ENOMEM.
 */
/* n with a ',' every three digits, as rsync prints its statistics. */
static const char *grouped(uint64_t n, char buf[32])
{
	char digits[24];
	int len = snprintf(digits, sizeof(digits), "%" PRIu64, n), k = 0;

	for (int i = 0; i < len; i++) {
		if (i && (len - i) % 3 == 0)
			buf[k++] = ',';
		buf[k++] = digits[i];
	}
	buf[k] = 0;
	return buf;
}

/*
 * -v's closing lines, in rsync's form. "total size" is rsync's (the listed
 * files' and symlinks' sizes); "sent" is the file data written, which is
 * what a local rsync's sender mostly sends, without its protocol overhead;
 * nothing travels back, so "received" is 0. The rate is over this run's
 * wall time, and the speedup is total size / sent ("inf" when nothing was).
 */
static void print_totals(const struct sync_ctx *c, const struct timespec *start)
{
	struct timespec now;
	char a[32], b[32];
	double secs, rate;

	clock_gettime(CLOCK_MONOTONIC, &now);
	secs = (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
	rate = secs > 0 ? (double)c->sent / secs : 0;
	printf("\nsent %s bytes  received 0 bytes  %s.%02u bytes/sec\n", grouped(c->sent, a),
	       grouped((uint64_t)rate, b), (unsigned)((rate - (double)(uint64_t)rate) * 100) % 100);
	printf("total size is %s  speedup is ", grouped(c->total_size, a));
	if (c->sent)
		printf("%.2f", (double)c->total_size / (double)c->sent);
	else
		fputs("inf", stdout);
	puts(c->o.dry_run ? " (DRY RUN)" : "");
}

static int add_root(struct sync_ctx *c, const char *arg, const char *dst, bool dst_dir)
{
	struct sync_root *rt = &c->roots[c->nroots];
	bool contents = means_contents(arg);
	struct stat st;

	*rt = (struct sync_root){ .src = strip(arg) };
	if (!rt->src)
		return -ENOMEM;
	if ((contents ? stat(rt->src, &st) : lstat(rt->src, &st)) < 0) {
		/* rsync: link_stat "x" failed: No such file or directory */
		cli_error(-errno, "link_stat %s failed", cli_quote(rt->src));
		free(rt->src);
		return 0;
	}
	if (S_ISDIR(st.st_mode) && contents) {
		rt->rel0 = strdup(".");
		rt->dst = strdup(dst);
		rt->follow = true;
	} else {
		const char *base = strrchr(rt->src, '/');

		base = base && base[1] ? base + 1 : rt->src;
		rt->rel0 = strdup(base);
		/* one file to a new name, or into the directory */
		rt->dst = S_ISDIR(st.st_mode) || dst_dir ? join(dst, base) : strdup(dst);
	}
	c->nroots++;
	return rt->rel0 && rt->dst ? 1 : -ENOMEM;
}

static void free_roots(struct sync_ctx *c)
{
	for (size_t i = 0; i < c->nroots; i++) {
		free(c->roots[i].src);
		free(c->roots[i].dst);
		free(c->roots[i].rel0);
	}
	free(c->roots);
}

/* DEST could not be opened: rsync's words for a symlink of another user in the way, or the error. */
static void dest_refused(const char *dst, const char *what, int err, bool untrusted)
{
	if (untrusted)
		opath_refusal_msg();
	cli_error(err, "%s %s failed", what, cli_quote(dst));
}

/* Open DEST, a directory, through trusted symlinks only: fd, or -errno after a message. */
static int open_dest_dir(const char *dst, const char *what)
{
	bool untrusted;
	int fd = opath_open(dst, O_PATH | O_DIRECTORY | O_CLOEXEC, 0, &untrusted);

	if (fd < 0)
		dest_refused(dst, what, fd, untrusted);
	return fd;
}

/*
 * rsync's remote operands: [USER@]HOST:PATH over a remote shell, and the
 * daemon's HOST::MODULE and rsync://. Not a local name with a colon in it
 * ("./a:b"). 0 when every operand is local, else the exit status after
 * the message.
 */
static int check_remote(char **ops, int nsrc)
{
	struct hostspec h, d;
	bool src_remote = hostspec_parse(ops[0], &h), dst_remote = hostspec_parse(ops[nsrc], &d);

	if (src_remote && dst_remote) {
		cli_msg("The source and destination cannot both be remote.");
		return EXIT_SYNTAX;
	}
	for (int i = 1; i < nsrc && !src_remote; i++)
		if (hostspec_parse(ops[i], &h)) {
			cli_msg("Unexpected remote arg: %s", ops[i]);
			return EXIT_SYNTAX;
		}
	if (!src_remote && !dst_remote)
		return 0;
	if (src_remote ? h.daemon : d.daemon)
		cli_msg("%s: the rsync daemon protocol is not supported (rsync://HOST/MODULE, HOST::MODULE)",
			src_remote ? ops[0] : ops[nsrc]);
	else
		cli_msg("%s: remote transfers are not supported by this sweep-sync", src_remote ? ops[0] : ops[nsrc]);
	cli_msg("requested action not supported (code %d)", EXIT_UNSUPPORTED);
	return EXIT_UNSUPPORTED;
}

int main(int argc, char **argv)
{
	struct sync_ctx c = { 0 };
	char *dst = NULL;
	const char *dest_arg;
	bool container = false; /* DEST is a directory the transfer goes into, created if missing */
	bool dst_is_dir;
	struct stat dstst;
	int dst_stat;
	struct timespec start;
	int nsrc, r, code = 0, missing = 0;

	cli_init(argv[0]);
	cli_close_stdout_atexit();
	clock_gettime(CLOCK_MONOTONIC, &start);
	r = parse(argc, argv, &c.o);
	if (r < 0) {
		code = r == -EIO ? EXIT_FILEIO : EXIT_SYNTAX;
		goto out;
	}
	c.am_root = geteuid() == 0;
	setlocale(LC_CTYPE, "");
	c.utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");
	struct sigaction sa = { .sa_handler = on_signal }; /* no SA_RESTART: a blocked wait returns */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	c.dest_fd = -1;

	nsrc = argc - optind - 1;
	dest_arg = argv[argc - 1];
	code = check_remote(argv + optind, nsrc);
	if (code)
		goto out;
	dst = strip(dest_arg);
	c.roots = calloc((size_t)nsrc, sizeof(*c.roots));
	if (!dst || !c.roots)
		goto nomem;
	/*
	 * What DEST is, as rsync's get_local_name() sees it: stat'ed as named
	 * (a trailing slash included). A directory is then opened through
	 * symlinks only of root or of the user running, and held.
	 */
	dst_stat = stat(dest_arg, &dstst) == 0 ? 0 : -errno;
	dst_is_dir = dst_stat == 0 && S_ISDIR(dstst.st_mode);
	if (dst_stat < 0 && dst_stat != -ENOENT) {
		cli_error(dst_stat, "ERROR: cannot stat destination %s", cli_quote(dest_arg));
		code = EXIT_FILESELECT;
		goto out;
	}
	if (dst_is_dir) {
		c.dest_fd = open_dest_dir(dst, "change_dir#1");
		if (c.dest_fd < 0) {
			code = c.dest_fd == -ENOMEM ? EXIT_PARTIAL : EXIT_FILESELECT;
			c.dest_fd = -1;
			goto out;
		}
	}
	if (c.o.verbose && c.o.recursive)
		puts("sending incremental file list");
	for (int i = 0; i < nsrc; i++) {
		r = add_root(&c, argv[optind + i], dst, dst_is_dir || nsrc > 1 || ends_with_slash(dest_arg));
		if (r < 0)
			goto nomem;
		if (r > 0 && (strcmp(c.roots[c.nroots - 1].dst, dst) || !strcmp(c.roots[c.nroots - 1].rel0, ".")))
			container = true;
	}
	missing = nsrc - (int)c.nroots;
	/* rsync: a missing or unreadable SRC is an I/O error, and after one nothing is deleted */
	if (missing)
		c.io_error = true;
	if (!c.nroots)
		goto report;
	c.prog = progress_new(&c.o.progress);
	r = flist_scan(&c);
	if (r < 0) {
		cli_error(r, "scanning the file lists");
		c.errors++;
		goto report;
	}
	test_pause("walk", 0);
	if (dst_stat == 0 && !dst_is_dir) {
		/* DEST is a file: rsync takes it only as the new name of one non-directory */
		size_t total = 0;
		bool top_dir = false;

		for (size_t i = 0; i < c.list.n; i++)
			if (c.list.v[i].flags & N_SRC) {
				total++;
				top_dir = top_dir || S_ISDIR(c.list.v[i].s.st.st_mode);
			}
		if (total == 1 && top_dir) {
			progress_clear(c.prog);
			cli_msg("ERROR: cannot overwrite non-directory with a directory");
			code = EXIT_FILESELECT;
			goto out;
		}
		if (total > 1 || (container && total)) {
			progress_clear(c.prog);
			cli_msg("ERROR: destination must be a directory when copying more than 1 file");
			code = EXIT_FILESELECT;
			goto out;
		}
	}
	/* rsync makes DEST only when there is something to put in it, or DEST/ says it is a directory */
	if (container && !dst_is_dir && (c.list.n || ends_with_slash(dest_arg))) {
		/* rsync makes the last component of DEST, not its parents */
		const char *base;
		bool untrusted;
		int pfd = opath_open_parent(dst, &base, &untrusted);

		if (pfd < 0) {
			dest_refused(dst, "change_dir#2", pfd, untrusted);
			code = pfd == -ENOENT ? EXIT_FILEIO : EXIT_FILESELECT;
			goto out;
		}
		bool made = !c.o.dry_run && mkdirat(pfd, base, 0777) == 0;
		if (!c.o.dry_run && !made && errno != EEXIST) {
			cli_error(-errno, "mkdir %s failed", cli_quote(dst));
			close(pfd);
			code = EXIT_FILEIO;
			goto out;
		}
		/* Ours a moment ago (or there already, then not followed): a symlink there now was swapped in. */
		if (!c.o.dry_run)
			c.dest_fd = openat(pfd, base, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(pfd);
		if (!c.o.dry_run && c.dest_fd < 0) {
			cli_error(-errno, "change_dir#2 %s failed", cli_quote(dst));
			code = EXIT_FILESELECT;
			goto out;
		}
		if (c.o.itemize || c.o.verbose)
			printf("created directory %s\n", dst);
	}
	r = flist_open_roots(&c);
	if (r < 0)
		goto nomem;
	/*
	 * The destination: DEST (a symlink to a directory is used as the
	 * directory where rsync does so), or the directory of the new name
	 * when one file is copied to a name of its own. Held from here on.
	 */
	c.dest_show = strdup(dst);
	if (!c.dest_show)
		goto nomem;
	if (c.nroots == 1 && !container) {
		bool untrusted;

		if (c.dest_fd >= 0)
			close(c.dest_fd);
		c.dest_fd = opath_open_parent(dst, &c.dest_name, &untrusted);
		if (c.dest_fd < 0) {
			dest_refused(dst, "change_dir#3", c.dest_fd, untrusted);
			c.dest_fd = -1;
			code = EXIT_FILESELECT;
			goto out;
		}
		char *slash = strrchr(c.dest_show, '/');
		if (slash)
			*(slash == c.dest_show ? slash + 1 : slash) = 0;
		else
			c.dest_show[0] = 0;
	}
	if (c.dest_fd < 0 && !c.list.n)
		goto report; /* nothing to transfer, so DEST was not made */
	if (c.dest_fd >= 0 && !flist_dest_is_scanned(&c)) {
		/* DEST, or an operand's top below it, is no longer what the scan listed: touch nothing. */
		cli_msg("the destination %s changed during the scan; nothing done", cli_quote(dst));
		code = EXIT_FILEIO;
		goto out;
	}
	if (c.dest_fd < 0 && !c.o.dry_run) {
		cli_msg("cannot open the destination %s", cli_quote(c.dest_show[0] ? c.dest_show : "."));
		code = EXIT_FILEIO;
		goto out;
	}
	if (c.o.checksum) {
		r = checksum_run(&c);
		if (r < 0) {
			cli_error(r, "comparing checksums");
			c.errors++;
			goto report;
		}
	}
	transferring = 1;
	r = apply_run(&c);
	transferring = 0;
	if (sync_stop_signal) {
		cli_msg("received signal, exiting");
		code = EXIT_SIGNAL;
		goto out;
	}
	if (r < 0 && !c.fatal) {
		cli_error(r, "sync failed");
		c.errors++;
	}
report:
	c.errors += (unsigned long)missing;
	c.prog = progress_finish(c.prog, !c.fatal);
	if (c.o.verbose && !c.fatal)
		print_totals(&c, &start);
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
	flist_close_roots(&c);
	free(c.dest_show);
	free_roots(&c);
	free(dst);
	return code;
}
