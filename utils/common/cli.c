/* SPDX-License-Identifier: MIT */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <langinfo.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <wchar.h>
#include <wctype.h>

#include <sweep.h>

#include "cli.h"

static const char *prog = "sweep";

void cli_init(const char *argv0)
{
	const char *slash;

	struct rlimit nofile;

	/*
	 * The soft limit on open files up to the hard one (at most 65536): the
	 * reader keeps a window of files open (up to 1024 on a disk, a quarter
	 * of this limit), the walk some directories. No tool uses select(),
	 * which is what the low default soft limit protects.
	 */
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0) {
		rlim_t want = nofile.rlim_max == RLIM_INFINITY || nofile.rlim_max > 65536 ? 65536 : nofile.rlim_max;
		if (nofile.rlim_cur != RLIM_INFINITY && nofile.rlim_cur < want) {
			nofile.rlim_cur = want;
			(void)setrlimit(RLIMIT_NOFILE, &nofile);
		}
	}
	if (!argv0)
		return;
	slash = strrchr(argv0, '/');
	prog = slash ? slash + 1 : argv0;
}

void cli_need_fds(unsigned need, int status)
{
	struct rlimit nofile;
	long open = 0;
	DIR *d;

	if (getrlimit(RLIMIT_NOFILE, &nofile) < 0 || nofile.rlim_cur == RLIM_INFINITY || nofile.rlim_cur >= 1024)
		return;
	if (!(d = opendir("/proc/self/fd")))
		return; /* (no /proc: the tool finds out as it goes) */
	/* Only those below the limit take a number a new one could have (an inherited fd 255 does not). */
	for (struct dirent *de; (de = readdir(d));)
		if (de->d_name[0] != '.' && strtoul(de->d_name, NULL, 10) < nofile.rlim_cur)
			open++;
	closedir(d);
	open--; /* the directory's own */
	if ((long)nofile.rlim_cur - open < (long)need)
		cli_die(status, "too few file descriptors: the open-file limit (ulimit -n) is %llu with %ld open; at least %ld needed",
			(unsigned long long)nofile.rlim_cur, open, open + (long)need);
}

const char *cli_prog(void)
{
	return prog;
}

static void (*message_hook)(const char *msg, size_t len);

void cli_set_message_hook(void (*fn)(const char *msg, size_t len))
{
	message_hook = fn;
}

/*
 * "prog: " + the message + tail, after what stdout holds so far, so the two
 * streams interleave as written; also to the message hook (a log file).
 */
static void vmsg(const char *tail, const char *fmt, va_list ap)
{
	va_list aq;

	va_copy(aq, ap);
	fflush(stdout);
	fprintf(stderr, "%s: ", prog);
	vfprintf(stderr, fmt, ap);
	fputs(tail, stderr);
	if (message_hook) {
		char *body = NULL, *line = NULL;
		int n = vasprintf(&body, fmt, aq);

		if (n >= 0 && (n = asprintf(&line, "%s: %s%s", prog, body, tail)) >= 0)
			message_hook(line, (size_t)n);
		if (n < 0)
			line = NULL;
		free(body);
		free(line);
	}
	va_end(aq);
}

void cli_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("\n", fmt, ap);
	va_end(ap);
}

void cli_path_error(const char *path, int err)
{
	cli_msg("%s: %s", path, strerror(err < 0 ? -err : err));
}

void cli_error(int err, const char *fmt, ...)
{
	char tail[128];
	va_list ap;

	snprintf(tail, sizeof(tail), ": %s\n", strerror(err < 0 ? -err : err));
	va_start(ap, fmt);
	vmsg(tail, fmt, ap);
	va_end(ap);
}

void cli_die(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("\n", fmt, ap);
	va_end(ap);
	exit(status);
}

void cli_try_help(void)
{
	fprintf(stderr, "Try '%s --help' for more information.\n", prog);
}

static bool is_own(const char *name, const char *const *own)
{
	for (size_t i = 0; own && own[i]; i++)
		if (!strcmp(name, own[i]))
			return true;
	return false;
}

int cli_long_abbrev(int argc, char **argv, const struct option *opts, const char *const *own)
{
	for (int i = 1; i < argc; i++) {
		char *a = argv[i];
		if (!strcmp(a, "--"))
			break;
		if (strncmp(a, "--", 2) || !a[2])
			continue;
		const char *eq = strchr(a + 2, '=');
		size_t n = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
		const struct option *hit = NULL;
		bool exact = false, ambiguous = false, own_only = false;
		for (const struct option *o = opts; o->name; o++) {
			if (strncmp(o->name, a + 2, n))
				continue;
			if (strlen(o->name) == n) {
				exact = true;
				break;
			}
			if (is_own(o->name, own)) { /* written out in full, or not at all */
				own_only = true;
				continue;
			}
			if (hit && (hit->has_arg != o->has_arg || hit->flag != o->flag || hit->val != o->val))
				ambiguous = true;
			else if (!hit)
				hit = o;
		}
		if (exact)
			continue;
		if (ambiguous) {
			fprintf(stderr, "%s: option '%.*s' is ambiguous; possibilities:", prog, (int)(n + 2), a);
			for (const struct option *o = opts; o->name; o++)
				if (!strncmp(o->name, a + 2, n) && !is_own(o->name, own))
					fprintf(stderr, " '--%s'", o->name);
			fputc('\n', stderr);
			return -1;
		}
		if (!hit) {
			if (own_only) {
				fprintf(stderr, "%s: unrecognized option '%s'\n", prog, a);
				return -1;
			}
			continue; /* getopt says what is wrong with it */
		}
		char *full;
		if (asprintf(&full, "--%s%s", hit->name, eq ? eq : "") < 0)
			return -1;
		argv[i] = full; /* lives as long as argv (the process) */
	}
	return 0;
}

/*
 * File names in messages, quoted exactly as coreutils quotes them (gnulib
 * quotearg's shell-escape-always style, which coreutils uses for its
 * diagnostics): 'name'; control and non-ASCII bytes as $'\n' or
 * $'\377' escapes spliced between quoted runs (in a multibyte locale a
 * printable character stays as it is); a name holding a single quote
 * and nothing else shell-special goes in double quotes ("it's"); otherwise
 * the quote is written as '\''. gnulib writes such a name in a second pass
 * that starts with the escape state the first pass ended in; that quirk is
 * kept so messages match byte for byte.
 */
struct qbuf {
	char *p;
	size_t len, cap;
	bool fail;
};

static int grow(struct qbuf *b, size_t need)
{
	size_t cap = b->cap ? b->cap : 64;
	char *p;

	if (need <= b->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p)
		return -1;
	b->p = p;
	b->cap = cap;
	return 0;
}

static void put(struct qbuf *b, const char *s, size_t n)
{
	if (b->fail || grow(b, b->len + n + 1) < 0) {
		b->fail = true;
		return;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

struct qstate {
	bool pending;    /* inside a $'...' run that a plain byte must close */
	bool single;     /* met a single quote */
	bool all_compat; /* every byte means the same inside C and shell double quotes */
};

static const char *letter_escape(unsigned char c)
{
	switch (c) {
	case '\a': return "a";
	case '\b': return "b";
	case '\f': return "f";
	case '\n': return "n";
	case '\r': return "r";
	case '\t': return "t";
	case '\v': return "v";
	default: return NULL;
	}
}

/* Does printable ASCII byte c at position i of an n-byte name read the same in C and shell double quotes? */
static bool compat(unsigned char c, size_t i, size_t n)
{
	if (isalnum(c) || strchr("%+,-./:]_ @'", c))
		return true;
	if (c == '#' || c == '~')
		return i == 0;
	if (c == '{' || c == '}')
		return i == 0 && n == 1;
	return false;
}

static void escape_bytes(struct qbuf *b, const unsigned char *s, size_t len, struct qstate *st)
{
	for (size_t k = 0; k < len; k++) {
		const char *letter = letter_escape(s[k]);
		char oct[4] = { '\\', (char)('0' + (s[k] >> 6)), (char)('0' + ((s[k] >> 3) & 7)),
				(char)('0' + (s[k] & 7)) };
		/* start (or continue) a $'...' run */
		if (!st->pending) {
			put(b, "'$'", 3);
			st->pending = true;
		}
		if (letter) {
			put(b, "\\", 1);
			put(b, letter, 1);
		} else {
			put(b, oct, 4);
		}
	}
}

static void plain_bytes(struct qbuf *b, const unsigned char *s, size_t len, struct qstate *st)
{
	if (st->pending) { /* close the $'...' run */
		put(b, "''", 2);
		st->pending = false;
	}
	put(b, (const char *)s, len);
}

/*
 * Bytes outside printable ASCII: in a multibyte locale a printable
 * character is kept as it is; anything else (and every such byte in the C
 * locale) is escaped. Returns the bytes consumed.
 */
static size_t other_bytes(struct qbuf *b, const unsigned char *s, size_t left, struct qstate *st)
{
	mbstate_t mbs;
	wchar_t w;
	size_t len;

	if (MB_CUR_MAX == 1 || letter_escape(*s)) {
		st->all_compat = false;
		escape_bytes(b, s, 1, st);
		return 1;
	}
	memset(&mbs, 0, sizeof(mbs));
	len = mbrtowc(&w, (const char *)s, left, &mbs);
	if (len == (size_t)-1 || len == 0)
		len = 1; /* an invalid byte: escape it alone */
	else if (len == (size_t)-2)
		len = left; /* cut short: escape the rest */
	else if (iswprint((wint_t)w)) {
		plain_bytes(b, s, len, st);
		return len;
	}
	st->all_compat = false;
	escape_bytes(b, s, len, st);
	return len;
}

static void quote_pass(struct qbuf *b, const unsigned char *s, size_t n, struct qstate *st)
{
	put(b, "'", 1);
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];

		if (c < 0x20 || c >= 0x7f) {
			i += other_bytes(b, s + i, n - i, st);
			continue;
		}
		if (!compat(c, i, n))
			st->all_compat = false;
		if (c == '\'') {
			st->single = true;
			put(b, "'\\'", 3);
			st->pending = false;
		}
		plain_bytes(b, &c, 1, st);
		i++;
	}
}

const char *cli_quote(const char *name)
{
	/* a few buffers in turn, so one message can quote two names */
	static struct qbuf bufs[4];
	static unsigned turn;
	struct qbuf *bp = &bufs[turn++ % 4];
	struct qstate st = { .all_compat = true };
	size_t n = strlen(name);

	bp->len = 0;
	bp->fail = false;
	quote_pass(bp, (const unsigned char *)name, n, &st);
	if (st.single && st.all_compat) {
		bp->len = 0;
		put(bp, "\"", 1);
		put(bp, name, n);
		put(bp, "\"", 1);
		return bp->fail ? name : bp->p;
	}
	if (st.single) {
		/* gnulib's rewrite pass, escape state carried over */
		struct qstate again = { .pending = st.pending, .all_compat = true };
		bp->len = 0;
		quote_pass(bp, (const unsigned char *)name, n, &again);
	}
	put(bp, "'", 1);
	return bp->fail ? name : bp->p;
}

const char *cli_quotef(const char *name)
{
	/* quotef: shell-escape style, quoting only when needed, ':' included */
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		if (!isalnum(*p) && !strchr("%+,-./_@]", *p))
			return cli_quote(name);
	return *name ? name : cli_quote(name);
}

const char *cli_quote_locale(const char *name)
{
	/* gnulib quote(): curved quotes in a UTF-8 locale, ASCII ones otherwise */
	static struct qbuf bufs[2];
	static unsigned turn;
	struct qbuf *bp = &bufs[turn++ % 2];
	bool utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");

	bp->len = 0;
	bp->fail = false;
	put(bp, utf8 ? "\xe2\x80\x98" : "'", utf8 ? 3 : 1);
	put(bp, name, strlen(name));
	put(bp, utf8 ? "\xe2\x80\x99" : "'", utf8 ? 3 : 1);
	return bp->fail ? name : bp->p;
}

const char *cli_escape(const char *name, bool multibyte)
{
	static struct qbuf bufs[4];
	static unsigned turn;
	struct qbuf *bp = &bufs[turn++ % 4];
	const unsigned char *s = (const unsigned char *)name;
	size_t n = strlen(name);

	bp->len = 0;
	bp->fail = false;
	put(bp, "", 0);
	for (size_t i = 0; i < n;) {
		const char *letter = letter_escape(s[i]);
		size_t len = 1;

		if (s[i] == '\\') {
			put(bp, "\\\\", 2);
		} else if (letter) {
			put(bp, "\\", 1);
			put(bp, letter, 1);
		} else if (s[i] >= 0x20 && s[i] < 0x7f) {
			put(bp, (const char *)s + i, 1);
		} else {
			mbstate_t mbs;
			wchar_t w;
			size_t k = (size_t)-1;

			memset(&mbs, 0, sizeof(mbs));
			if (multibyte && s[i] >= 0x80)
				k = mbrtowc(&w, (const char *)s + i, n - i, &mbs);
			if (k != (size_t)-1 && k != (size_t)-2 && k != 0 && iswprint((wint_t)w)) {
				put(bp, (const char *)s + i, k);
				len = k;
			} else {
				char oct[4] = { '\\', (char)('0' + (s[i] >> 6)), (char)('0' + ((s[i] >> 3) & 7)),
						(char)('0' + (s[i] & 7)) };
				put(bp, oct, 4);
			}
		}
		i += len;
	}
	return bp->fail ? name : bp->p;
}

int cli_parse_size(const char *s, uint64_t *ret)
{
	char *end;
	double v;
	uint64_t mult = 1;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return -EINVAL;
	if (*end) {
		const char *units = "KMGTPE";
		const char *u = strchr(units, (*end >= 'a' && *end <= 'z') ? *end - 32 : *end);
		if (!u || !*end)
			return -EINVAL;
		bool decimal = end[1] == 'B' && end[2] == 0;
		if (!decimal && end[1] && !(end[1] == 'i' && end[2] == 'B' && end[3] == 0))
			return -EINVAL;
		for (const char *k = units; k <= u; k++)
			mult *= decimal ? 1000 : 1024;
	}
	if (v * (double)mult >= 18446744073709551615.0)
		return -ERANGE;
	*ret = (uint64_t)(v * (double)mult);
	return 0;
}

/*
 * coreutils close_stdout: a write that failed earlier (a tool that flushes
 * each line sees it there) is reported as "write error" alone, one that
 * fails at close with its reason.
 */
static void close_stdout(void)
{
	bool pending = __fpending(stdout) != 0, prev_fail = ferror(stdout) != 0;
	bool close_fail = fclose(stdout) != 0;
	int e = errno;

	if (prev_fail || (close_fail && (pending || e != EBADF))) {
		/* not cli_msg: it would flush the stdout just closed */
		if (close_fail && e)
			fprintf(stderr, "%s: write error: %s\n", prog, strerror(e));
		else
			fprintf(stderr, "%s: write error\n", prog);
		_exit(1);
	}
}

void cli_close_stdout_atexit(void)
{
	atexit(close_stdout);
}

int cli_device_option(const char *arg)
{
	enum sweep_device_class c;

	if (sweep_device_class_parse(arg, &c) < 0) {
		cli_msg("invalid --device argument %s (hdd, ssd or auto)", cli_quote(arg));
		return -EINVAL;
	}
	return sweep_device_force(c);
}

void cli_device_report(const char *const *paths, size_t n)
{
	uint64_t seen[16];
	size_t nseen = 0;
	const char *env = getenv("SWEEP_DEVICE");
	enum sweep_device_class c;

	if (env && sweep_device_class_parse(env, &c) < 0)
		cli_msg("ignoring SWEEP_DEVICE=%s (hdd, ssd or auto)", cli_quote(env));
	for (size_t i = 0; i < n; i++) {
		struct sweep_fsinfo fi = { .size = sizeof(fi) };
		char why[256], prof[256];
		bool dup = false;

		if (sweep_fsinfo_path(paths[i], &fi) < 0)
			continue; /* the walk reports it */
		for (size_t k = 0; k < nseen && !dup; k++)
			dup = seen[k] == fi.dev;
		if (dup)
			continue;
		if (nseen < sizeof(seen) / sizeof(seen[0]))
			seen[nseen++] = fi.dev;
		sweep_device_explain(&fi, why, sizeof(why));
		sweep_profile_explain(&fi, prof, sizeof(prof));
		cli_msg("%s: %s%s%s: device class %s", cli_quotef(paths[i]), fi.fs_name,
			fi.device_name[0] ? " on " : "", fi.device_name, why);
		cli_msg("%s: profile: %s", cli_quotef(paths[i]), prof);
	}
}

enum sweep_order cli_plan_order(enum sweep_order order, const char *path)
{
	struct sweep_fsinfo fi = { .size = sizeof(fi) };

	if (order != SWEEP_ORDER_AUTO)
		return order;
	return path && sweep_fsinfo_path(path, &fi) == 0 ? fi.profile.plan_order : SWEEP_ORDER_AUTO;
}

void cli_version(const char *name)
{
	printf("%s (sweep) %s\nlibsweep %s\n", name, SWEEP_VERSION, sweep_version());
}

void cli_mode_string(unsigned mode, char out[11])
{
	static const char rwx[] = "rwxrwxrwx";

	out[0] = S_ISDIR(mode) ? 'd' : S_ISLNK(mode) ? 'l' : S_ISCHR(mode) ? 'c' : S_ISBLK(mode) ? 'b'
		 : S_ISFIFO(mode) ? 'p' : S_ISSOCK(mode) ? 's' : '-';
	for (int i = 0; i < 9; i++)
		out[1 + i] = mode & (0400u >> i) ? rwx[i] : '-';
	if (mode & S_ISUID)
		out[3] = mode & S_IXUSR ? 's' : 'S';
	if (mode & S_ISGID)
		out[6] = mode & S_IXGRP ? 's' : 'S';
	if (mode & S_ISVTX)
		out[9] = mode & S_IXOTH ? 't' : 'T';
	out[10] = '\0';
}

int cli_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int cli_thread_start(pthread_t *tid, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(tid, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -rc;
}
