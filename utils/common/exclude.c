/* SPDX-License-Identifier: MIT */
/* --exclude matching: GNU du/tar globs and rsync filter rules (see exclude.h). */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exclude.h"

struct rule {
	char *pat;     /* GNU: as given; rsync: without leading '/', trailing '/' and "/\*\*\*" */
	bool include;
	bool dir_only; /* rsync: trailing '/' */
	bool anchored; /* rsync: leading '/' */
	bool on_path;  /* rsync: has '/' or "**": match against the path, not the name */
	bool dir_tree; /* rsync: "dir/\*\*\*" also matches everything below dir */
};

struct exclude {
	unsigned flags;
	struct rule *rules;
	unsigned n, cap;
};

struct exclude *exclude_new(unsigned flags)
{
	struct exclude *ex = calloc(1, sizeof(*ex));

	if (ex)
		ex->flags = flags;
	return ex;
}

struct exclude *exclude_free(struct exclude *ex)
{
	if (!ex)
		return NULL;
	for (unsigned i = 0; i < ex->n; i++)
		free(ex->rules[i].pat);
	free(ex->rules);
	free(ex);
	return NULL;
}

unsigned exclude_count(const struct exclude *ex)
{
	return ex ? ex->n : 0;
}

static bool ends_with(const char *s, size_t len, const char *suffix)
{
	size_t sl = strlen(suffix);
	return len >= sl && memcmp(s + len - sl, suffix, sl) == 0;
}

/* Split an rsync pattern into its modifiers; r->pat gets the bare glob. */
static int rsync_parse(struct rule *r, const char *pattern)
{
	size_t len = strlen(pattern);

	if (*pattern == '/') {
		r->anchored = true;
		pattern++;
		len--;
	}
	if (len > 1 && pattern[len - 1] == '/') {
		r->dir_only = true;
		len--;
	}
	if (ends_with(pattern, len, "/***")) {
		r->dir_tree = true;
		len -= 4;
	}
	r->pat = strndup(pattern, len);
	if (!r->pat)
		return -ENOMEM;
	r->on_path = r->anchored || strchr(r->pat, '/') || strstr(r->pat, "**");
	return 0;
}

int exclude_add_rule(struct exclude *ex, const char *pattern, bool include)
{
	struct rule r = { .include = include };
	bool rsync = ex->flags & EXCLUDE_RSYNC;

	if (!pattern || !*pattern || (include && !rsync))
		return -EINVAL;
	if (ex->n == ex->cap) {
		unsigned cap = ex->cap ? ex->cap * 2 : 8;
		struct rule *nr = realloc(ex->rules, cap * sizeof(*nr));
		if (!nr)
			return -ENOMEM;
		ex->rules = nr;
		ex->cap = cap;
	}
	if (rsync) {
		int ret = rsync_parse(&r, pattern);
		if (ret < 0)
			return ret;
	} else if (!(r.pat = strdup(pattern))) {
		return -ENOMEM;
	}
	ex->rules[ex->n++] = r;
	return 0;
}

int exclude_add(struct exclude *ex, const char *pattern)
{
	return exclude_add_rule(ex, pattern, false);
}

int exclude_add_file(struct exclude *ex, const char *file)
{
	FILE *f = strcmp(file, "-") ? fopen(file, "re") : stdin;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int ret = 0;

	if (!f)
		return -errno;
	while ((len = getline(&line, &cap, f)) >= 0) {
		/* gnulib add_exclude_fp with '\n': trailing blanks dropped, blank lines skipped */
		while (len > 0 && isspace((unsigned char)line[len - 1]))
			line[--len] = 0;
		if (len == 0)
			continue;
		ret = exclude_add(ex, line);
		if (ret < 0)
			break;
	}
	if (ret == 0 && ferror(f))
		ret = -EIO;
	free(line);
	if (f != stdin)
		fclose(f);
	return ret;
}

/* GNU: whole path, then each suffix after a '/' (gnulib exclude_fnmatch). */
static bool gnu_match(const char *pat, const char *path, unsigned flags)
{
	int fnm = (flags & EXCLUDE_LEADING_DIR ? FNM_LEADING_DIR : 0) |
		  (flags & EXCLUDE_SLASH_SPECIAL ? FNM_PATHNAME : 0) |
		  (flags & EXCLUDE_CASEFOLD ? FNM_CASEFOLD : 0);

	if (fnmatch(pat, path, fnm) == 0)
		return true;
	if (flags & EXCLUDE_ANCHORED)
		return false;
	for (const char *p = path; *p; p++)
		if (*p == '/' && p[1] != '/' && fnmatch(pat, p + 1, fnm) == 0)
			return true;
	return false;
}

/* End of a bracket expression starting at p ('['), or NULL when unterminated. */
static const char *bracket_end(const char *p)
{
	p++;
	if (*p == '!' || *p == '^')
		p++;
	if (*p == ']')
		p++;
	for (; *p; p++) {
		if (*p == '[' && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
			const char *close = strstr(p + 2, (char[]){ p[1], ']', 0 });
			if (!close)
				return NULL;
			p = close + 1;
		} else if (*p == ']') {
			return p;
		}
	}
	return NULL;
}

/*
 * rsync's wildcard match: '*' and '?' never match '/', '**' matches
 * anything. Bracket expressions are handed to fnmatch one character at a time.
 */
static bool wild_match(const char *p, const char *s, int fnm)
{
	for (; *p; p++, s++) {
		switch (*p) {
		case '?':
			if (!*s || *s == '/')
				return false;
			break;
		case '*': {
			bool cross = p[1] == '*';
			while (*p == '*')
				p++;
			if (!*p)
				return cross || !strchr(s, '/');
			for (;; s++) {
				if (wild_match(p, s, fnm))
					return true;
				if (!*s || (!cross && *s == '/'))
					return false;
			}
		}
		case '[': {
			const char *end = bracket_end(p);
			if (end) {
				char cls[256], ch[2] = { *s, 0 };
				size_t n = (size_t)(end - p) + 1;
				if (!*s || *s == '/' || n >= sizeof(cls))
					return false;
				memcpy(cls, p, n);
				cls[n] = 0;
				if (fnmatch(cls, ch, fnm) != 0)
					return false;
				p = end;
				break;
			}
			/* an unterminated '[' is literal */
			__attribute__((fallthrough));
		}
		default:
			if (*p == '\\' && p[1])
				p++;
			if ((fnm & FNM_CASEFOLD) ? tolower((unsigned char)*p) != tolower((unsigned char)*s)
						 : *p != *s)
				return false;
		}
	}
	return !*s;
}

static bool rsync_glob(const struct rule *r, const char *s, int fnm)
{
	size_t len;

	if (wild_match(r->pat, s, fnm))
		return true;
	if (!r->dir_tree)
		return false;
	/* "dir/\*\*\*": anything below dir */
	len = strlen(s);
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '/') {
			char *head = strndup(s, i);
			bool m = head && wild_match(r->pat, head, fnm);
			free(head);
			if (m)
				return true;
		}
	}
	return false;
}

static bool rsync_rule_match(const struct rule *r, const char *path, const char *name, bool is_dir,
			     int fnm)
{
	/* "dir/\*\*\*" reaches files below dir, so its trailing-slash test is on dir itself */
	if (r->dir_only && !is_dir && !r->dir_tree)
		return false;
	if (!r->on_path)
		return rsync_glob(r, name, fnm);
	if (rsync_glob(r, path, fnm))
		return true;
	if (r->anchored)
		return false;
	for (const char *p = path; *p; p++)
		if (*p == '/' && rsync_glob(r, p + 1, fnm))
			return true;
	return false;
}

bool exclude_match(const struct exclude *ex, const char *path, const char *name, bool is_dir)
{
	return exclude_match_first(ex, exclude_count(ex), path, name, is_dir);
}

bool exclude_match_first(const struct exclude *ex, unsigned n, const char *path, const char *name, bool is_dir)
{
	if (!ex || ex->n == 0 || n == 0)
		return false;
	if (n > ex->n)
		n = ex->n;
	if (!name) {
		const char *slash = strrchr(path, '/');
		name = slash && slash[1] ? slash + 1 : path;
	}
	if (!(ex->flags & EXCLUDE_RSYNC)) {
		for (unsigned i = 0; i < n; i++)
			if (gnu_match(ex->rules[i].pat, path, ex->flags))
				return true;
		return false;
	}
	while (*path == '/')
		path++;
	for (unsigned i = 0; i < n; i++) {
		const struct rule *r = &ex->rules[i];
		if (rsync_rule_match(r, path, name, is_dir, ex->flags & EXCLUDE_CASEFOLD ? FNM_CASEFOLD : 0))
			return !r->include;
	}
	return false;
}
