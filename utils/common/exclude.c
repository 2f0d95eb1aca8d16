/* SPDX-License-Identifier: MIT */
/* --exclude matching: GNU du/tar globs and rsync filter rules (see exclude.h). */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exclude.h"

struct rule {
	char *pat;     /* GNU: as given; rsync: without leading '/', trailing '/' and "/\*\*\*" */
	unsigned flags; /* GNU: the set's flags, or the pattern's own (exclude_add_flags) */
	unsigned index; /* GNU: its place among all patterns added (exclude_match_first) */
	bool include;
	bool dir_only; /* rsync: trailing '/' */
	bool anchored; /* rsync: leading '/' */
	bool on_path;  /* rsync: has '/' or "**": match against the path, not the name */
	bool dir_tree; /* rsync: "dir/\*\*\*" also matches everything below dir */
};

/*
 * GNU patterns without wildcards, by their flags: a hash table of names
 * each (gnulib's exclude_hash segments).
 */
struct literal {
	struct literal *next;
	unsigned index;
	char name[];
};
struct literals {
	unsigned flags;
	struct literal **bucket;
	size_t nbuckets, count;
	size_t longest;
};

struct exclude {
	unsigned flags;
	struct rule *rules;
	unsigned n, cap;
	unsigned total;       /* patterns added: rules and literals */
	struct literals *lit; /* GNU: one table per set of flags */
	unsigned nlit;
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
	for (unsigned i = 0; i < ex->nlit; i++) {
		struct literals *l = &ex->lit[i];
		for (size_t b = 0; b < l->nbuckets; b++)
			while (l->bucket[b]) {
				struct literal *e = l->bucket[b];
				l->bucket[b] = e->next;
				free(e);
			}
		free(l->bucket);
	}
	free(ex->lit);
	free(ex);
	return NULL;
}

unsigned exclude_count(const struct exclude *ex)
{
	return ex ? ex->total : 0;
}

/* ---- GNU patterns without wildcards ---- */

/* gnulib fnmatch_pattern_has_wildcards, without extended globs: '\\' counts, it escapes. */
static bool has_wildcards(const char *p)
{
	return strpbrk(p, "*?[\\") != NULL;
}

static size_t name_hash(const char *s, size_t n, bool fold)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)(fold ? tolower((unsigned char)s[i]) : s[i])) * 1099511628211ull;
	return (size_t)(h ^ (h >> 29));
}

static bool name_eq(const char *a, const char *b, size_t n, bool fold)
{
	if (!fold)
		return memcmp(a, b, n) == 0;
	for (size_t i = 0; i < n; i++)
		if (tolower((unsigned char)a[i]) != tolower((unsigned char)b[i]))
			return false;
	return true;
}

static int literal_grow(struct literals *l)
{
	size_t n = l->nbuckets ? l->nbuckets * 2 : 64;
	struct literal **b = calloc(n, sizeof(*b));
	bool fold = l->flags & EXCLUDE_CASEFOLD;

	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < l->nbuckets; i++)
		while (l->bucket[i]) {
			struct literal *e = l->bucket[i];
			size_t h = name_hash(e->name, strlen(e->name), fold) & (n - 1);
			l->bucket[i] = e->next;
			e->next = b[h];
			b[h] = e;
		}
	free(l->bucket);
	l->bucket = b;
	l->nbuckets = n;
	return 0;
}

/* The smallest index of a literal equal to s[0..n), or UINT_MAX. */
static unsigned literal_find(const struct literals *l, const char *s, size_t n)
{
	bool fold = l->flags & EXCLUDE_CASEFOLD;
	unsigned best = UINT_MAX;

	if (n > l->longest || !l->nbuckets)
		return best;
	for (const struct literal *e = l->bucket[name_hash(s, n, fold) & (l->nbuckets - 1)]; e; e = e->next)
		if (e->index < best && strlen(e->name) == n && name_eq(e->name, s, n, fold))
			best = e->index;
	return best;
}

static int literal_add(struct exclude *ex, const char *pattern, unsigned flags)
{
	struct literals *l = NULL;
	struct literal *e;
	size_t len = strlen(pattern), h;

	flags &= EXCLUDE_ANCHORED | EXCLUDE_LEADING_DIR | EXCLUDE_CASEFOLD;
	for (unsigned i = 0; i < ex->nlit; i++)
		if (ex->lit[i].flags == flags)
			l = &ex->lit[i];
	if (!l) {
		struct literals *nl = realloc(ex->lit, (ex->nlit + 1) * sizeof(*nl));
		if (!nl)
			return -ENOMEM;
		ex->lit = nl;
		l = &ex->lit[ex->nlit++];
		*l = (struct literals){ .flags = flags };
	}
	if (l->count >= l->nbuckets && literal_grow(l) < 0)
		return -ENOMEM;
	if (!(e = malloc(sizeof(*e) + len + 1)))
		return -ENOMEM;
	memcpy(e->name, pattern, len + 1);
	e->index = ex->total++;
	h = name_hash(pattern, len, flags & EXCLUDE_CASEFOLD) & (l->nbuckets - 1);
	e->next = l->bucket[h];
	l->bucket[h] = e;
	l->count++;
	if (len > l->longest)
		l->longest = len;
	return 0;
}

/*
 * Does a literal of l with index < n match path? gnulib's file_name_matches:
 * the whole path, then (unanchored) each suffix after a '/'; of each, with
 * FNM_LEADING_DIR, every prefix ending before a '/' as well.
 */
static bool literal_match(const struct literals *l, unsigned n, const char *path)
{
	for (const char *f = path; f;) {
		size_t len = strlen(f);

		for (;;) {
			if (literal_find(l, f, len) < n)
				return true;
			if (!(l->flags & EXCLUDE_LEADING_DIR))
				break;
			while (len > 0 && f[len - 1] != '/')
				len--;
			if (len == 0)
				break;
			len--; /* before the '/' */
		}
		if (l->flags & EXCLUDE_ANCHORED)
			break;
		f = strchr(f, '/');
		if (f)
			f++;
	}
	return false;
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

static int add_rule(struct exclude *ex, const char *pattern, bool include, unsigned flags)
{
	struct rule r = { .include = include, .flags = flags };
	bool rsync = ex->flags & EXCLUDE_RSYNC;

	if (!pattern || !*pattern || (include && !rsync))
		return -EINVAL;
	/* A GNU pattern that is a name: into the hash table (gnulib does the same). */
	if (!rsync && ((flags & EXCLUDE_NO_WILDCARDS) || !has_wildcards(pattern)))
		return literal_add(ex, pattern, flags);
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
	r.index = ex->total++;
	ex->rules[ex->n++] = r;
	return 0;
}

int exclude_add_rule(struct exclude *ex, const char *pattern, bool include)
{
	return add_rule(ex, pattern, include, ex->flags);
}

int exclude_add_flags(struct exclude *ex, const char *pattern, unsigned flags)
{
	if (ex->flags & EXCLUDE_RSYNC)
		return -EINVAL;
	return add_rule(ex, pattern, false, flags);
}

int exclude_add(struct exclude *ex, const char *pattern)
{
	return exclude_add_rule(ex, pattern, false);
}

int exclude_add_file(struct exclude *ex, const char *file)
{
	return exclude_add_file_flags(ex, file, ex->flags);
}

int exclude_add_file_flags(struct exclude *ex, const char *file, unsigned flags)
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
		ret = add_rule(ex, line, false, flags);
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

/* gnulib fnmatch_no_wildcards: the name as it is, or (FNM_LEADING_DIR) followed by '/'. */
static bool name_match(const char *pat, const char *s, unsigned flags)
{
	size_t n = strlen(pat);

	if (!(flags & EXCLUDE_LEADING_DIR))
		return strlen(s) == n && name_eq(pat, s, n, flags & EXCLUDE_CASEFOLD);
	return strlen(s) >= n && name_eq(pat, s, n, flags & EXCLUDE_CASEFOLD) &&
	       (s[n] == '\0' || s[n] == '/');
}

static bool one_match(const char *pat, const char *s, unsigned flags)
{
	int fnm = (flags & EXCLUDE_LEADING_DIR ? FNM_LEADING_DIR : 0) |
		  (flags & EXCLUDE_SLASH_SPECIAL ? FNM_PATHNAME : 0) |
		  (flags & EXCLUDE_CASEFOLD ? FNM_CASEFOLD : 0);

	if (flags & EXCLUDE_NO_WILDCARDS)
		return name_match(pat, s, flags);
	return fnmatch(pat, s, fnm) == 0;
}

/* GNU: whole path, then each suffix after a '/' (gnulib exclude_fnmatch). */
bool exclude_fnmatch(const char *pat, const char *path, unsigned flags)
{
	if (one_match(pat, path, flags))
		return true;
	if (flags & EXCLUDE_ANCHORED)
		return false;
	for (const char *p = path; *p; p++)
		if (*p == '/' && p[1] != '/' && one_match(pat, p + 1, flags))
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
	if (!ex || ex->total == 0 || n == 0)
		return false;
	if (!(ex->flags & EXCLUDE_RSYNC)) {
		for (unsigned i = 0; i < ex->nlit; i++)
			if (literal_match(&ex->lit[i], n, path))
				return true;
		for (unsigned i = 0; i < ex->n && ex->rules[i].index < n; i++)
			if (exclude_fnmatch(ex->rules[i].pat, path, ex->rules[i].flags))
				return true;
		return false;
	}
	if (n > ex->n)
		n = ex->n;
	if (!name) {
		const char *slash = strrchr(path, '/');
		name = slash && slash[1] ? slash + 1 : path;
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
