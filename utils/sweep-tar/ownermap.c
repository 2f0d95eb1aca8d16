/* SPDX-License-Identifier: MIT */
/*
 * --owner-map=FILE, --group-map=FILE: each member's owner (group) looked
 * up by its id, as GNU tar reads the maps (src/map.c): a line holds an old
 * owner ("+ID" or a name) and a new one ("NAME:ID", "+ID" or a name),
 * words split as the shell splits them, '#' starting a comment. An owner
 * not in the map gets --owner (--group) when given, else keeps its own.
 */
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tar.h"

struct map_ent {
	uint64_t from, to;
	char *name; /* NULL: none stored */
};

struct owner_map {
	struct map_ent *v;
	size_t n;
};

static struct owner_map maps[2]; /* owners, groups */

static int64_t name_to_id(const char *name, bool group)
{
	if (group) {
		struct group *g = getgrnam(name);
		return g ? (int64_t)g->gr_gid : -1;
	}
	struct passwd *p = getpwnam(name);
	return p ? (int64_t)p->pw_uid : -1;
}

static bool parse_id(const char *s, uint64_t *v, const char *file, unsigned line, const char *what)
{
	char *end;

	errno = 0;
	*v = strtoumax(s, &end, 10);
	if (!*s || *end || errno || *v > UINT32_MAX) {
		cli_msg("%s:%u: invalid %s: %s", tar_printable(file), line, what, s);
		return false;
	}
	return true;
}

/* The words of a line: blanks separate, quotes and backslashes quote, '#' starts a comment. Their number. */
static int words(char *line, char **w, int max)
{
	char *out = line, quote = 0;
	int n = 0;
	bool in = false;

	for (char *p = line;; p++) {
		char c = *p;
		if (!c || (!quote && (c == ' ' || c == '\t' || c == '\n' || c == '#'))) {
			if (in) {
				*out++ = '\0';
				in = false;
			}
			if (!c || c == '#')
				break;
			continue;
		}
		if (!in) {
			if (n == max)
				return max + 1;
			w[n++] = out;
			in = true;
		}
		if (quote ? c == quote : (c == '"' || c == '\''))
			quote = quote ? 0 : c;
		else if (c == '\\' && quote != '\'' && p[1])
			*out++ = *++p;
		else
			*out++ = c;
	}
	return n;
}

void tar_owner_map_read(const char *file, bool group)
{
	const char *what = group ? "GID" : "UID";
	struct owner_map *m = &maps[group];
	FILE *f = fopen(file, "re");
	char *buf = NULL;
	size_t cap = 0;
	unsigned line = 0;
	bool err = false;

	if (!f)
		cli_die(TAR_FATAL, "%s: Cannot open: %s\n%s: Error is not recoverable: exiting now", tar_printable(file),
			strerror(errno), cli_prog());
	while (getline(&buf, &cap, f) > 0) {
		struct map_ent e = { 0 };
		char *w[3], *colon;
		int n = words(buf, w, 2);
		int64_t id;

		line++;
		if (n == 0)
			continue;
		if (n != 2) {
			cli_msg("%s:%u: malformed line", tar_printable(file), line);
			err = true;
			continue;
		}
		if (w[0][0] == '+') {
			if (!parse_id(w[0] + 1, &e.from, file, line, what)) {
				err = true;
				continue;
			}
		} else if ((id = name_to_id(w[0], group)) < 0) {
			cli_msg("%s:%u: can't obtain %s of %s", tar_printable(file), line, what, w[0]);
			err = true;
			continue;
		} else {
			e.from = (uint64_t)id;
		}
		if ((colon = strchr(w[1], ':'))) {
			*colon = '\0';
			if (!parse_id(colon + 1, &e.to, file, line, what)) {
				err = true;
				continue;
			}
			if (colon > w[1] && !(e.name = strdup(w[1])))
				cli_die(TAR_FATAL, "out of memory");
		} else if (w[1][0] == '+') {
			if (!parse_id(w[1] + 1, &e.to, file, line, what)) {
				err = true;
				continue;
			}
		} else if ((id = name_to_id(w[1], group)) < 0) {
			cli_msg("%s:%u: can't obtain %s of %s", tar_printable(file), line, what, w[1]);
			err = true;
			continue;
		} else {
			e.to = (uint64_t)id;
			if (!(e.name = strdup(w[1])))
				cli_die(TAR_FATAL, "out of memory");
		}
		struct map_ent *nv = realloc(m->v, (m->n + 1) * sizeof(*nv));
		if (!nv)
			cli_die(TAR_FATAL, "out of memory");
		m->v = nv;
		m->v[m->n++] = e;
	}
	free(buf);
	fclose(f);
	if (err)
		cli_die(TAR_FATAL, "errors reading map file\n%s: Error is not recoverable: exiting now", cli_prog());
}

bool tar_owner_map(bool group, uint64_t id, uint64_t *to, const char **name)
{
	const struct owner_map *m = &maps[group];

	/* The first line for an id wins, as GNU tar's hash_insert keeps the first. */
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].from == id) {
			*to = m->v[i].to;
			*name = m->v[i].name;
			return true;
		}
	return false;
}

void tar_owner_maps_free(void)
{
	for (int g = 0; g < 2; g++) {
		for (size_t i = 0; i < maps[g].n; i++)
			free(maps[g].v[i].name);
		free(maps[g].v);
		maps[g].v = NULL;
		maps[g].n = 0;
	}
}
