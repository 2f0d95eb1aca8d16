/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sweep.h>

#include "cli.h"

static const char *prog = "sweep";

void cli_init(const char *argv0)
{
	const char *slash;

	if (!argv0)
		return;
	slash = strrchr(argv0, '/');
	prog = slash ? slash + 1 : argv0;
}

const char *cli_prog(void)
{
	return prog;
}

void cli_msg(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cli_path_error(const char *path, int err)
{
	fflush(stdout);
	fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(err < 0 ? -err : err));
}

void cli_error(int err, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s\n", strerror(err < 0 ? -err : err));
}

void cli_die(int status, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(status);
}

/*
 * Quote like coreutils' shell-escape-always style for the common cases:
 * 'name', with embedded single quotes as '\''. Names with control bytes are
 * printed with $'\ooo' escapes like coreutils does.
 */
const char *cli_quote(const char *path)
{
	static char *buf;
	static size_t cap;
	size_t need = strlen(path) * 8 + 8, n = 0;
	bool ctrl = false;

	for (const unsigned char *p = (const unsigned char *)path; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			ctrl = true;
	if (need > cap) {
		char *nb = realloc(buf, need);
		if (!nb)
			return path;
		buf = nb;
		cap = need;
	}
	buf[n++] = '\'';
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if (*p == '\'') {
			memcpy(buf + n, "'\\''", 4);
			n += 4;
		} else if (ctrl && (*p < 0x20 || *p == 0x7f)) {
			n += (size_t)sprintf(buf + n, "'$'\\%03o''", *p);
		} else {
			buf[n++] = (char)*p;
		}
	}
	buf[n++] = '\'';
	buf[n] = 0;
	return buf;
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

static void close_stdout(void)
{
	if (fflush(stdout) != 0 || ferror(stdout) || (fclose(stdout) != 0 && errno != EBADF)) {
		int e = errno ? errno : EIO;
		fprintf(stderr, "%s: write error: %s\n", prog, strerror(e));
		_exit(1);
	}
}

void cli_close_stdout_atexit(void)
{
	atexit(close_stdout);
}

void cli_version(const char *name)
{
	printf("%s (sweep) %s\nlibsweep %s\n", name, SWEEP_VERSION, sweep_version());
}
