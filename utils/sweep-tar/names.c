/* SPDX-License-Identifier: MIT */
/* Member names, and messages about them in GNU tar's words. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tar.h"

const char *tar_member_name(struct tar *t, const char *path, size_t strip)
{
	const char *name = path + strip;

	if (*name == '/') {
		/* GNU tar stores absolute names relative, and says so once. */
		while (*name == '/')
			name++;
		if (!t->warned_slash) {
			progress_clear(t->progress);
			cli_msg("Removing leading `/' from member names");
			t->warned_slash = true;
		}
		if (!*name)
			name = ".";
	}
	return name;
}

/* A ".." component anywhere in name (GNU tar's contains_dot_dot). */
static bool has_dotdot(const char *name)
{
	for (const char *p = name; *p;) {
		if (p[0] == '.' && p[1] == '.' && (p[2] == '/' || !p[2]))
			return true;
		p = strchr(p, '/');
		if (!p)
			break;
		p++;
	}
	return false;
}

bool tar_placeholder_target(const char *target)
{
	return target[0] == '/' || has_dotdot(target);
}

const char *tar_printable(const char *name)
{
	/* Two buffers: a message may name a link and its target. */
	static char *buf[2];
	static size_t cap[2];
	static unsigned turn;
	size_t need = strlen(name) * 4 + 1, n = 0;
	unsigned k = turn++ & 1;

	if (need > cap[k]) {
		char *nb = realloc(buf[k], need);
		if (!nb)
			return name;
		buf[k] = nb;
		cap[k] = need;
	}
	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		if (*p == '\\') {
			buf[k][n++] = '\\';
			buf[k][n++] = '\\';
		} else if (*p == '\n') {
			buf[k][n++] = '\\';
			buf[k][n++] = 'n';
		} else if (*p == '\t') {
			buf[k][n++] = '\\';
			buf[k][n++] = 't';
		} else if (*p < 0x20 || *p == 0x7f) {
			buf[k][n++] = '\\';
			buf[k][n++] = (char)('0' + (*p >> 6));
			buf[k][n++] = (char)('0' + ((*p >> 3) & 7));
			buf[k][n++] = (char)('0' + (*p & 7));
		} else {
			buf[k][n++] = (char)*p;
		}
	}
	buf[k][n] = 0;
	return buf[k];
}

const char *tar_display(struct tar *t, const char *path)
{
	/* The -C prefix of the root it came from, as GNU tar names files relative to -C. */
	for (size_t i = 0; i < t->o->nroots; i++) {
		const struct tar_root *r = &t->o->roots[i];
		size_t len = strlen(r->path);

		if (r->strip && strncmp(path, r->path, len) == 0 && (path[len] == '/' || path[len] == 0))
			return tar_printable(path + r->strip);
	}
	return tar_printable(path);
}

static void vreport(struct tar *t, int status, const char *path, const char *fmt, va_list ap)
{
	progress_clear(t->progress);
	fflush(stdout);
	fprintf(stderr, "%s: %s: ", cli_prog(), tar_display(t, path));
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	if (t->status < status)
		t->status = status;
}

void tar_warn(struct tar *t, const char *path, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(t, TAR_DIFFERS, path, fmt, ap);
	va_end(ap);
}

void tar_error(struct tar *t, const char *path, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(t, TAR_FATAL, path, fmt, ap);
	va_end(ap);
}

void tar_list(struct tar *t, const char *name, bool is_dir)
{
	if (!t->o->verbose)
		return;
	if (t->listing == stderr)
		progress_clear(t->progress);
	/* GNU tar -v shows directories with their trailing '/'. */
	size_t len = strlen(name);
	fprintf(t->listing, "%s%s\n", tar_printable(name), is_dir && len && name[len - 1] != '/' ? "/" : "");
}
