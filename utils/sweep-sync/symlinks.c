/* SPDX-License-Identifier: MIT */
/*
 * rsync's "unsafe" symlink (--safe-links, --copy-unsafe-links): decided by
 * the link's text alone, never by resolving it. Absolute and empty targets
 * are unsafe; a relative one is unsafe when its ".." components climb
 * above the top of the transfer, counting from the link's place in the file
 * list (rel); a ".." anywhere but at the start, or at the end, is unsafe
 * too (as rsync 3.4's unsafe_symlink()).
 */
#include <string.h>

#include "sync.h"

static bool is_dotdot(const char *c, size_t len)
{
	return len == 2 && c[0] == '.' && c[1] == '.';
}

bool sync_unsafe_symlink(const char *target, const char *rel)
{
	const char *p = target;
	size_t tl;
	long depth = 0;

	if (!target || !*target || *target == '/')
		return true;
	while (!strncmp(p, "../", 3))
		for (p += 3; *p == '/'; p++)
			;
	if (strstr(p, "/../"))
		return true;
	tl = strlen(target);
	if (tl > 3 && !strcmp(target + tl - 3, "/.."))
		return true;
	/* how deep the link lies: its directories in rel ("." ignored, ".." starts over) */
	for (const char *c = rel, *slash; (slash = strchr(c, '/')); c = slash + 1) {
		size_t len = (size_t)(slash - c);

		if (is_dotdot(c, len))
			depth = 0;
		else if (!(len == 1 && *c == '.') && len)
			depth++;
	}
	/* then the target's climb, component by component */
	for (const char *c = target;;) {
		const char *slash = strchr(c, '/');
		size_t len = slash ? (size_t)(slash - c) : strlen(c);

		if (is_dotdot(c, len)) {
			if (--depth < 0)
				return true;
		} else if (slash && len && !(len == 1 && *c == '.')) {
			depth++;
		}
		if (!slash)
			break;
		c = slash + 1;
	}
	return depth < 0;
}
