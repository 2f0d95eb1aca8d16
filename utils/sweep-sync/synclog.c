/* SPDX-License-Identifier: MIT */
/*
 * --log-file=FILE and --log-file-format=FMT: rsync's log file, for a local
 * transfer. What goes in, as rsync writes it:
 *   "building file list" first;
 *   each entry made, changed or deleted, in --log-file-format (default
 *   "%i %n%L"), in list order (out.c), whatever -i and -v print;
 *   "created directory DEST", the errors and warnings (with the program's
 *   name, as on stderr);
 *   "sent N bytes  received N bytes  total size N" last.
 * Every line is prefixed "YYYY/MM/DD HH:MM:SS [PID] " and its control
 * bytes (C0 but tab, and C1), as well as a backslash that starts "\#ddd",
 * are written as \#ooo (rsync's logit() and filtered_fwrite()): a name
 * cannot forge lines or send escapes to the terminal that shows the log.
 *
 * The format's escapes (rsync's log_formatted()): %i %n %f %L %l %o %t %p
 * %b %M %U %G %B and %%, each with an optional '-' (left-justify), "'"
 * (digits grouped by commas) and width. Any other is refused when the
 * options are read: rsync prints such an escape as it stands, and a
 * silently half-made log would be worse than a clear no.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "sync.h"

static FILE *logf;

bool synclog_on(void)
{
	return logf != NULL;
}

static const char *stamp(time_t t, char buf[32])
{
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(buf, 32, "%Y/%m/%d %H:%M:%S", &tm);
	return buf;
}

/* One line (without its newline) with the prefix, escaped. */
static void put_line(const unsigned char *p, size_t len)
{
	char ts[32];

	fprintf(logf, "%s [%d] ", stamp(time(NULL), ts), (int)getpid());
	for (size_t i = 0; i < len; i++) {
		unsigned char b = p[i];
		bool esc = (b < ' ' && b != '\t') || (b >= 0x80 && b <= 0x9f) ||
			   (b == '\\' && i + 4 < len && p[i + 1] == '#' && p[i + 2] >= '0' && p[i + 2] <= '9' &&
			    p[i + 3] >= '0' && p[i + 3] <= '9' && p[i + 4] >= '0' && p[i + 4] <= '9');

		if (esc)
			fprintf(logf, "\\#%03o", b);
		else
			putc(b, logf);
	}
	putc('\n', logf);
}

void synclog_record(const char *text, size_t len)
{
	if (!logf)
		return;
	/* one line however many newlines the text holds (a name's are escaped): only a final one ends it */
	if (len && text[len - 1] == '\n')
		len--;
	put_line((const unsigned char *)text, len);
	fflush(logf);
}

void synclog_write(const char *text, size_t len)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *z = memchr(p, 0, (size_t)(end - p));
		size_t l = z ? (size_t)(z - p) : (size_t)(end - p);

		synclog_record(p, l);
		p += l + 1;
	}
}

void synclog_text(const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	int n;

	if (!logf)
		return;
	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n >= 0)
		synclog_record(s, (size_t)n);
	free(s);
}

/* stderr's messages, as rsync logs its errors and warnings */
static void log_message(const char *msg, size_t len)
{
	synclog_record(msg, len);
}

int synclog_open(struct sync_ctx *c)
{
	bool untrusted = false;
	mode_t old = umask(022 | c->orig_umask);
	int fd = opath_open(c->o.log_file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0644, &untrusted);

	umask(old);
	if (fd >= 0 && !(logf = fdopen(fd, "a"))) {
		int err = -errno;

		close(fd);
		fd = err;
	}
	if (fd < 0) {
		/* rsync says so and goes on without a log (its exit status unchanged) */
		if (untrusted)
			opath_refusal_msg();
		cli_error(fd, "failed to open log-file %s", cli_quote(c->o.log_file));
		fflush(stdout);
		fputs("Ignoring \"log file\" setting.\n", stderr);
		return 0;
	}
	cli_set_message_hook(log_message);
	synclog_text("building file list");
	return 0;
}

void synclog_close(void)
{
	if (!logf)
		return;
	cli_set_message_hook(NULL);
	fclose(logf);
	logf = NULL;
}

/* ---- --log-file-format ---- */

static bool known_escape(char ch)
{
	return ch && strchr("inLflotpbMUGB%", ch);
}

int synclog_format_check(const char *fmt)
{
	for (const char *p = strchr(fmt, '%'); p; p = strchr(p, '%')) {
		p++;
		while (*p == '-' || *p == '\'')
			p++;
		while (*p >= '0' && *p <= '9')
			p++;
		if (!known_escape(*p)) {
			cli_msg("--log-file-format: the escape %%%c is not supported by this sweep-sync", *p ? *p : ' ');
			return -EINVAL;
		}
		p++;
	}
	return 0;
}

static void grouped(char *buf, size_t len, uint64_t v, bool commas)
{
	char digits[32];
	int n = snprintf(digits, sizeof(digits), "%" PRIu64, v), k = 0;

	if (!commas) {
		snprintf(buf, len, "%s", digits);
		return;
	}
	for (int i = 0; i < n && (size_t)k + 2 < len; i++) {
		if (i && (n - i) % 3 == 0)
			buf[k++] = ',';
		buf[k++] = digits[i];
	}
	buf[k] = 0;
}

/* One entry's line: rel, its stat, a symlink's target; idx its turn (SIZE_MAX: now). */
static void item(struct sync_ctx *c, size_t idx, const char *rel, const struct fst *st, const char *link, unsigned f,
		 const char *xname, bool deleting)
{
	const char *fmt = c->o.log_file_format ? c->o.log_file_format : "%i %n%L";
	bool dir = S_ISDIR(st->st_mode);
	char *buf = NULL;
	size_t blen = 0;
	FILE *out;

	if (!logf || !*fmt || !(out = open_memstream(&buf, &blen)))
		return;
	for (const char *p = fmt; *p; p++) {
		char val[PATH_MAX + 64], *vp = val;
		bool left = false, commas = false;
		int width = 0;

		if (*p != '%') {
			putc(*p, out);
			continue;
		}
		for (p++; *p == '-' || *p == '\''; p++)
			*(*p == '-' ? &left : &commas) = true;
		for (; *p >= '0' && *p <= '9'; p++)
			width = width * 10 + (*p - '0');
		val[0] = 0;
		switch (*p) {
		case 'i':
			if (deleting) {
				snprintf(val, sizeof(val), "*deleting  ");
			} else {
				itemize_code(&c->o, st->st_mode, f, val);
			}
			break;
		case 'n':
		case 'f':
			vp = NULL; /* the name can be longer than val: written below */
			break;
		case 'L':
			if (xname && *xname)
				vp = NULL;
			else if (!deleting && S_ISLNK(st->st_mode) && link)
				vp = NULL;
			break;
		case 'l':
			grouped(val, sizeof(val),
				S_ISREG(st->st_mode) || S_ISLNK(st->st_mode) || S_ISDIR(st->st_mode) ? (uint64_t)st->st_size : 0,
				commas);
			break;
		case 'b':
			grouped(val, sizeof(val), (f & IT_TRANSFER) ? (uint64_t)st->st_size : 0, commas);
			break;
		case 'o':
			/* a local rsync logs from its sender */
			snprintf(val, sizeof(val), "%s", deleting ? "del." : "send");
			break;
		case 't':
			stamp(time(NULL), val);
			break;
		case 'p':
			snprintf(val, sizeof(val), "%d", (int)getpid());
			break;
		case 'M': {
			struct tm tm;
			time_t t = st->st_mtim.tv_sec;

			localtime_r(&t, &tm);
			strftime(val, sizeof(val), "%Y/%m/%d-%H:%M:%S", &tm);
			break;
		}
		case 'U':
			snprintf(val, sizeof(val), "%u", (unsigned)st->st_uid);
			break;
		case 'G':
			snprintf(val, sizeof(val), "%u", (unsigned)st->st_gid);
			break;
		case 'B': {
			char mode[11];
			cli_mode_string(st->st_mode, mode);
			snprintf(val, sizeof(val), "%s", mode + 1); /* without the type letter */
			break;
		}
		case '%':
			snprintf(val, sizeof(val), "%%");
			break;
		default: /* refused when the options were read */
			p--;
			continue;
		}
		char *long_val = NULL;
		if (!vp && *p == 'L' && asprintf(&long_val, "%s%s", xname && *xname ? " => " : " -> ",
						 xname && *xname ? xname : link) < 0)
			long_val = NULL;
		else if (!vp && *p != 'L' && asprintf(&long_val, "%s%s", rel, dir && *p == 'n' ? "/" : "") < 0)
			long_val = NULL;
		fprintf(out, left ? "%-*s" : "%*s", width, long_val ? long_val : val);
		free(long_val);
	}
	putc('\n', out);
	if (fclose(out) == 0)
		out_add_log(c, idx, buf, blen);
	free(buf);
}

void synclog_item(struct sync_ctx *c, const struct sync_node *n, unsigned f, const char *xname)
{
	if (logf)
		item(c, (size_t)(n - c->list.v), n->rel, n->flags & N_SRC ? &n->s.st : &n->d.st, n->s.link, f, xname,
		     false);
}

void synclog_deleting(struct sync_ctx *c, size_t at, const char *rel, bool is_dir)
{
	struct fst st = { .st_mode = is_dir ? S_IFDIR : S_IFREG };

	if (logf)
		item(c, at, rel, &st, NULL, 0, NULL, true);
}
