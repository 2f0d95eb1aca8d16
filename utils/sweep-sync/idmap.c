/* SPDX-License-Identifier: MIT */
/*
 * --usermap, --groupmap and --chown: the owner and group the copies get,
 * mapped from the source's as rsync's uidlist.c maps them. A map is
 * FROM:TO[,FROM:TO]...; FROM is a number, a range LO-HI, a name, or a
 * wildcard pattern of names ('*' also matches an id that has no name, as
 * does an empty FROM, and with --numeric-ids every id is nameless);
 * TO a name or a number on this machine. The first FROM that matches
 * decides; an id none matches keeps its value. --chown=USER:GROUP is
 * "*:USER" and "*:GROUP" (an empty side maps nothing). The uid map needs
 * -o (and root), the gid map -g, as in rsync.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "filter.h"
#include "sync.h"

struct idrule {
	char *name;      /* a name or pattern, NULL for numbers */
	bool wild;
	uint32_t lo, hi; /* numbers: lo..hi */
	uint32_t to;
};

struct idmap {
	struct idrule *v;
	size_t n;
	bool users;
};

static bool to_id(const char *s, bool users, uint32_t *id)
{
	char *end;

	if (*s >= '0' && *s <= '9') {
		unsigned long v;

		errno = 0;
		v = strtoul(s, &end, 10);
		if (errno || *end || v > UINT32_MAX - 1)
			return false;
		*id = (uint32_t)v;
		return true;
	}
	if (users) {
		struct passwd *pw = getpwnam(s);

		if (pw)
			*id = pw->pw_uid;
		return pw != NULL;
	}
	struct group *gr = getgrnam(s);

	if (gr)
		*id = gr->gr_gid;
	return gr != NULL;
}

struct idmap *idmap_free(struct idmap *m)
{
	for (size_t i = 0; m && i < m->n; i++)
		free(m->v[i].name);
	if (m)
		free(m->v);
	free(m);
	return NULL;
}

int idmap_parse(const char *arg, bool users, struct idmap **ret)
{
	const char *what = users ? "user" : "group";
	struct idmap *m = calloc(1, sizeof(*m));
	char *copy = strdup(arg), *save = NULL;
	int r = 0;

	*ret = NULL;
	if (!m || !copy) {
		free(copy);
		free(m);
		return -ENOMEM;
	}
	m->users = users;
	/* an empty list item is rsync's "No colon found" */
	for (char *it = strtok_r(copy, ",", &save); r == 0; it = strtok_r(NULL, ",", &save)) {
		if (!it)
			break;
		char *colon = strchr(it, ':');
		struct idrule ru = { 0 };

		if (!colon) {
			cli_msg("No colon found in --%smap: %s", what, it);
			r = -EINVAL;
			break;
		}
		if (!colon[1]) {
			cli_msg("No name found after colon --%smap: %s", what, it);
			r = -EINVAL;
			break;
		}
		*colon = 0;
		if (*it >= '0' && *it <= '9') {
			char *dash = strchr(it, '-'), *end;
			unsigned long lo, hi;

			errno = 0;
			lo = strtoul(it, &end, 10);
			hi = dash ? strtoul(dash + 1, &end, 10) : lo;
			if (strspn(it, "0123456789-") != strlen(it) || (dash && (!dash[1] || strchr(dash + 1, '-'))) ||
			    errno || lo > UINT32_MAX || hi > UINT32_MAX || hi < lo) {
				cli_msg("Invalid number in --%smap: %s", what, it);
				r = -EINVAL;
				break;
			}
			ru.lo = (uint32_t)lo;
			ru.hi = (uint32_t)hi;
		} else {
			ru.wild = strpbrk(it, "*[?") != NULL;
			if (!(ru.name = strdup(it))) {
				r = -ENOMEM;
				break;
			}
		}
		if (!to_id(colon + 1, users, &ru.to)) {
			/* rsync says it and goes on without the item */
			cli_msg("Unknown --%smap name on receiver: %s", what, colon + 1);
			free(ru.name);
			continue;
		}
		struct idrule *v = realloc(m->v, (m->n + 1) * sizeof(*v));
		if (!v) {
			free(ru.name);
			r = -ENOMEM;
			break;
		}
		m->v = v;
		m->v[m->n++] = ru;
	}
	free(copy);
	if (r < 0) {
		idmap_free(m);
		return r;
	}
	*ret = m;
	return 0;
}

uint32_t idmap_map(const struct idmap *m, uint32_t id, bool numeric)
{
	const char *name = NULL;
	bool looked = false;

	for (size_t i = 0; m && i < m->n; i++) {
		const struct idrule *ru = &m->v[i];

		if (!ru->name) {
			if (id >= ru->lo && id <= ru->hi)
				return ru->to;
			continue;
		}
		if (!looked) {
			/* the source's name for the id (rsync's sender sends it, but not with --numeric-ids); none: "" */
			if (numeric) {
				name = NULL;
			} else if (m->users) {
				struct passwd *pw = getpwuid(id);
				name = pw ? pw->pw_name : NULL;
			} else {
				struct group *gr = getgrgid(id);
				name = gr ? gr->gr_name : NULL;
			}
			name = name ? strdup(name) : strdup("");
			looked = true;
		}
		if (name && (ru->wild ? filter_wildmatch(ru->name, name) : !strcmp(ru->name, name))) {
			free((char *)name);
			return ru->to;
		}
	}
	free((char *)name);
	return id;
}
