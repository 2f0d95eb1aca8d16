/* SPDX-License-Identifier: MIT */
/*
 * Which members the MEMBER operands of -t, -x, -d and --delete select,
 * as GNU tar matches them (src/names.c, name_match): each operand with the
 * matching options in force where it stands (--wildcards, --anchored,
 * --ignore-case, --wildcards-match-slash, --recursion and their --no-
 * forms); by default a name, anchored, that also selects what is below
 * it. --occurrence=N: only the Nth member an operand names.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "tar.h"

/* name without its trailing slashes, into buf (or name itself when it has none). */
static const char *trim(const char *name, char *buf, size_t len)
{
	size_t n = strlen(name);

	if (n < 2 || name[n - 1] != '/')
		return name;
	while (n > 1 && name[n - 1] == '/')
		n--;
	if (n >= len)
		return name;
	memcpy(buf, name, n);
	buf[n] = '\0';
	return buf;
}

long tar_select(const struct tar_opts *o, const char *name, unsigned *found)
{
	char buf[4096];

	if (o->nroots == 0)
		return 0;
	name = trim(name, buf, sizeof(buf));
	for (size_t i = 0; i < o->nroots; i++) {
		const struct tar_root *r = &o->roots[i];
		const char *want = r->path + r->strip;
		unsigned flags = r->match;

		if (!*want || !exclude_fnmatch(want, name, flags))
			continue;
		/*
		 * GNU tar counts the operand's own member, and of what is
		 * below it only the first when nothing came before.
		 */
		size_t wlen = strlen(want);
		bool below = strlen(name) > wlen && name[wlen] == '/';
		if (!(below && (flags & EXCLUDE_LEADING_DIR)) || found[i] == 0)
			found[i]++;
		if (o->occurrence && found[i] != o->occurrence)
			return -1;
		return (long)i;
	}
	return -1;
}

void tar_report_unmatched(struct tar *t, const unsigned *found)
{
	const struct tar_opts *o = t->o;
	bool warned = false;

	for (size_t i = 0; i < o->nroots; i++) {
		const char *want = o->roots[i].path + o->roots[i].strip;

		if (found[i] && (!o->occurrence || found[i] >= o->occurrence))
			continue;
		/* GNU tar's hint, once, for a name that would have matched as a pattern. */
		if (!warned && o->wildcards_default && strpbrk(want, "*?[\\")) {
			warned = true;
			cli_msg("Pattern matching characters used in file names");
			cli_msg("Use --wildcards to enable pattern matching, or --no-wildcards to suppress this warning");
		}
		tar_error(t, want, "%s", found[i] ? "Required occurrence not found in archive" : "Not found in archive");
	}
}

bool tar_xattr_selected(const struct tar_opts *o, const char *name, bool archiving)
{
	bool in = o->nxattr_include == 0;

	/* --pax-option=delete=SCHILY.xattr.NAME leaves it out of the archive. */
	if (archiving && o->pax_option) {
		char kw[512];
		snprintf(kw, sizeof(kw), "SCHILY.xattr.%s", name);
		if (tar_pax_deleted(kw))
			return false;
	}
	for (size_t i = 0; !in && i < o->nxattr_include; i++)
		in = fnmatch(o->xattr_include[i], name, 0) == 0;
	for (size_t i = 0; in && i < o->nxattr_exclude; i++)
		in = fnmatch(o->xattr_exclude[i], name, 0) != 0;
	return in;
}

void tar_drain_stdin(const struct tar_opts *o)
{
	struct stat st;
	char buf[65536];

	if ((o->archive && strcmp(o->archive, "-") != 0) || fstat(STDIN_FILENO, &st) != 0 || !S_ISFIFO(st.st_mode))
		return;
	for (;;) {
		ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
		if (n == 0 || (n < 0 && errno != EINTR))
			break;
	}
}
