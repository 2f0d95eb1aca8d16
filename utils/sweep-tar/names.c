/* SPDX-License-Identifier: MIT */
/* Member names, and messages about them in GNU tar's words. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <archive_entry.h>

#include "cli.h"
#include "tar.h"

/*
 * What GNU tar drops from the front of a name (paxutils' safer_name_suffix):
 * everything up to and including the last ".." component and the slashes
 * after it, else the leading slashes. "../x" -> "x", "./../x" -> "x",
 * "a/../b" -> "b", "/abs" -> "abs", ".." -> ".". Its length.
 */
static size_t unsafe_prefix(const char *name)
{
	const char *p = name, *keep;

	while (*p == '/')
		p++;
	keep = p;
	while (*p) {
		const char *end = strchrnul(p, '/');

		if (end - p == 2 && p[0] == '.' && p[1] == '.') {
			while (*end == '/')
				end++;
			keep = end;
		}
		p = end;
		while (*p == '/')
			p++;
	}
	return (size_t)(keep - name);
}

/* Each prefix dropped, said once for member names and once for hard link targets, as GNU tar does. */
struct name_prefix {
	struct name_prefix *next;
	bool said_names, said_links;
	char text[];
};

const struct name_prefix *tar_name_prefix(struct tar *t, const char *path, size_t strip)
{
	const char *name = path + strip;
	size_t len = t->o->absolute_names ? 0 : unsafe_prefix(name);
	struct name_prefix *p;

	if (len == 0)
		return NULL;
	for (p = t->prefixes; p; p = p->next)
		if (strlen(p->text) == len && memcmp(p->text, name, len) == 0)
			return p;
	p = calloc(1, sizeof(*p) + len + 1);
	if (!p)
		return NULL; /* the note is lost, the name is still made safe */
	memcpy(p->text, name, len);
	p->next = t->prefixes;
	t->prefixes = p;
	return p;
}

static void say_prefix(struct tar *t, const struct name_prefix *cp, bool links)
{
	/* The list is ours (t->prefixes): the const only keeps callers from changing it. */
	struct name_prefix *p = (struct name_prefix *)cp;
	bool *said;

	if (!p)
		return;
	said = links ? &p->said_links : &p->said_names;
	if (*said)
		return;
	*said = true;
	progress_clear(t->progress);
	cli_msg("Removing leading `%s' from %s", tar_printable(p->text), links ? "hard link targets" : "member names");
}

void tar_note_link_target(struct tar *t, const struct name_prefix *p)
{
	say_prefix(t, p, true);
}

void tar_names_free(struct tar *t)
{
	free(t->xname[0]);
	free(t->xname[1]);
	t->xname[0] = t->xname[1] = NULL;
	while (t->prefixes) {
		struct name_prefix *p = t->prefixes;
		t->prefixes = p->next;
		free(p);
	}
}

const char *tar_member_name(struct tar *t, const char *path, size_t strip)
{
	const char *name = path + strip;
	/* -P: the name as given, leading '/' and '..' parts kept. */
	size_t len = t->o->absolute_names ? 0 : unsafe_prefix(name);

	if (len == 0)
		return name;
	/* Stored relative and below the extraction directory, as GNU tar does, and said once. */
	say_prefix(t, tar_name_prefix(t, path, strip), false);
	name += len;
	return *name ? name : ".";
}

/*
 * A member read from an archive (-t, -x, -d): what GNU tar says about the
 * prefixes it would drop ("Removing leading `/' from member names", once
 * each), and the leading '/' dropped from the name and the hard link
 * target, as GNU tar and bsdtar do: "/etc/x" is extracted as "etc/x" below
 * -C. A ".." component stays, for extraction to refuse. With -P nothing is
 * dropped (-x refuses -P). false: out of memory.
 */
bool tar_read_names(struct tar *t, struct archive_entry *e)
{
	const char *name = archive_entry_pathname(e), *link = archive_entry_hardlink(e);

	if (t->o->absolute_names)
		return true;
	if (name) {
		say_prefix(t, tar_name_prefix(t, name, 0), false);
		if (name[0] == '/') {
			name += strspn(name, "/");
			if (!*name)
				name = ".";
			char *copy = strdup(name);
			if (!copy)
				return false;
			archive_entry_copy_pathname(e, copy);
			free(copy);
		}
	}
	if (link) {
		say_prefix(t, tar_name_prefix(t, link, 0), true);
		if (link[0] == '/') {
			char *copy = strdup(link + strspn(link, "/"));
			if (!copy)
				return false;
			archive_entry_copy_hardlink(e, copy);
			free(copy);
		}
	}
	return true;
}

const char *tar_stored_name(struct tar *t, const char *path, size_t strip, int kind)
{
	const char *name = tar_member_name(t, path, strip);
	char *x;

	if (!tar_transforms() || !(x = tar_transform(name, kind)))
		return name;
	free(t->xname[kind == TAR_XFORM_LINK]);
	t->xname[kind == TAR_XFORM_LINK] = x;
	return x;
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

/* Whether the user's locale (before set_locale() forced UTF-8 for libarchive) is multibyte. */
static bool listing_multibyte;

void tar_names_locale(bool multibyte)
{
	listing_multibyte = multibyte;
}

const char *tar_printable(const char *name)
{
	return cli_escape(name, listing_multibyte);
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

/*
 * --warning=KEYWORD: GNU tar's keywords, each the warnings of one kind
 * (src/warning.c). The ones sweep-tar can print are matched by their text;
 * the others name warnings sweep-tar never gives, so turning them on or off
 * changes nothing, truly.
 */
static const struct {
	const char *kw;
	const char *text; /* NULL: sweep-tar never says it */
} warning_kinds[] = {
	{ "cachedir", "contains a cache directory tag" },
	{ "file-changed", "file changed as we read it" },
	{ "file-removed", "File removed before we read it" },
	{ "file-shrank", "File shrank by" },
	{ "file-ignored", "socket ignored" },
	{ "ignore-archive", "file is the archive; not dumped" },
	{ "xattr-write", "Cannot set extended attribute" },
	{ "alone-zero-block", NULL }, { "bad-dumpdir", NULL }, { "contiguous-cast", NULL },
	{ "file-unchanged", NULL }, { "filename-with-nuls", NULL }, { "ignore-newer", NULL },
	{ "new-directory", NULL }, { "rename-directory", NULL }, { "symlink-cast", NULL },
	{ "timestamp", NULL }, { "unknown-cast", NULL }, { "unknown-keyword", NULL }, { "xdev", NULL },
	{ "decompress-program", NULL }, { "existing-file", NULL }, { "record-size", NULL },
	{ "failed-read", NULL }, /* by keyword: tar_read_failed() */
};
#define NKINDS (sizeof(warning_kinds) / sizeof(warning_kinds[0]))
static bool warning_off[NKINDS];

int tar_warning_option(const char *arg)
{
	bool off = strncmp(arg, "no-", 3) == 0;
	const char *kw = off ? arg + 3 : arg;

	if (strcmp(arg, "all") == 0 || strcmp(arg, "none") == 0) {
		for (size_t i = 0; i < NKINDS; i++)
			warning_off[i] = arg[0] == 'n';
		return 0;
	}
	for (size_t i = 0; i < NKINDS; i++)
		if (strcmp(kw, warning_kinds[i].kw) == 0) {
			warning_off[i] = off;
			return 0;
		}
	return -EINVAL;
}

bool tar_warning_shown(const char *text)
{
	for (size_t i = 0; i < NKINDS; i++)
		if (warning_off[i] && warning_kinds[i].text && strstr(text, warning_kinds[i].text))
			return false;
	return true;
}

static void vreport(struct tar *t, int status, const char *path, const char *fmt, va_list ap)
{
	char msg[4096];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (t->status < status)
		t->status = status;
	if (status == TAR_DIFFERS && !tar_warning_shown(msg))
		return;
	progress_clear(t->progress);
	fflush(stdout);
	fprintf(stderr, "%s: %s: %s\n", cli_prog(), tar_display(t, path), msg);
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

void tar_read_failed(struct tar *t, const char *path, const char *fmt, ...)
{
	char msg[4096];
	va_list ap;

	va_start(ap, fmt);
	if (!t->o->ignore_failed_read) {
		vreport(t, TAR_FATAL, path, fmt, ap);
		va_end(ap);
		return;
	}
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < NKINDS; i++)
		if (strcmp(warning_kinds[i].kw, "failed-read") == 0 && warning_off[i])
			return;
	progress_clear(t->progress);
	fflush(stdout);
	fprintf(stderr, "%s: %s: Warning: %s\n", cli_prog(), tar_display(t, path), msg);
}
