/* SPDX-License-Identifier: MIT */
/*
 * --transform (--xform) EXPRESSION: sed-like replacements on member
 * names, as GNU tar has them (src/transform.c). Each expression is
 * s/REGEX/REPLACEMENT/FLAGS (any delimiter), several separated by ';' or
 * given in several options, applied in order; or flags=FLAGS, the scope of
 * the expressions after it. FLAGS: g (every match), N (the Nth match), i
 * (ignore case), x (extended regular expressions), r/R, h/H, s/S (apply,
 * or not, to member names, hard link targets, symlink targets; all three
 * by default). REPLACEMENT: & and \1..\9, \L \U \l \u \E case changes,
 * C escapes.
 *
 * What a transformed name may not do is the same as for any name: -c
 * stores it below the extraction directory (a leading '/' and '..' parts
 * go, as GNU tar drops them), and -x writes nothing outside -C whatever
 * the name says (xdisk.c).
 */
#include <ctype.h>
#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tar.h"

enum segm_type { SEGM_LITERAL, SEGM_BACKREF, SEGM_CASE };
enum case_ctl { CASE_STOP, CASE_UP_NEXT, CASE_LOW_NEXT, CASE_UP, CASE_LOW };

struct segm {
	enum segm_type type;
	char *lit;       /* SEGM_LITERAL */
	size_t len;
	size_t ref;      /* SEGM_BACKREF */
	enum case_ctl ctl; /* SEGM_CASE */
};

struct xform {
	bool global;
	unsigned match_number;
	int flags;       /* TAR_XFORM_* it applies to */
	regex_t re;
	struct segm *segm;
	size_t nsegm;
};

static struct xform *xforms;
static size_t nxforms;
static int scope = TAR_XFORM_ALL; /* flags= */

/* GNU tar's usage error: the message, the hint, exit 2. */
static void __attribute__((noreturn)) bad(const char *msg, const char *arg)
{
	fflush(stdout);
	if (arg)
		fprintf(stderr, "%s: %s: %s\n", cli_prog(), msg, arg);
	else
		fprintf(stderr, "%s: %s\n", cli_prog(), msg);
	fprintf(stderr, "Try '%s --help' or '%s --usage' for more information.\n", cli_prog(), cli_prog());
	exit(TAR_FATAL);
}

static int scope_flag(int *flags, char c)
{
	switch (c) {
	case 'r': *flags |= TAR_XFORM_NAME; return 0;
	case 'R': *flags &= ~TAR_XFORM_NAME; return 0;
	case 'h': *flags |= TAR_XFORM_LINK; return 0;
	case 'H': *flags &= ~TAR_XFORM_LINK; return 0;
	case 's': *flags |= TAR_XFORM_SYMLINK; return 0;
	case 'S': *flags &= ~TAR_XFORM_SYMLINK; return 0;
	}
	return -1;
}

static struct segm *add_segm(struct xform *x, enum segm_type type)
{
	struct segm *n = realloc(x->segm, (x->nsegm + 1) * sizeof(*n));

	if (!n)
		cli_die(TAR_FATAL, "out of memory");
	x->segm = n;
	n = &x->segm[x->nsegm++];
	*n = (struct segm){ .type = type };
	return n;
}

static void add_literal(struct xform *x, const char *s, size_t len)
{
	struct segm *g;

	if (!len)
		return;
	g = add_segm(x, SEGM_LITERAL);
	if (!(g->lit = malloc(len + 1)))
		cli_die(TAR_FATAL, "out of memory");
	memcpy(g->lit, s, len);
	g->lit[len] = '\0';
	g->len = len;
}

/* One expression at expr; where the next one starts. */
static const char *parse_one(const char *expr)
{
	struct xform x = { .flags = scope };
	int cflags = 0, delim, i, j, rc;
	const char *p;
	char *re;

	if (expr[0] != 's') {
		if (strncmp(expr, "flags=", 6) == 0) {
			scope = 0;
			for (expr += 6; *expr; expr++) {
				if (*expr == ';')
					return expr + 1;
				if (scope_flag(&scope, *expr) < 0) {
					char c[2] = { *expr, 0 };
					bad("Unknown transform flag", c);
				}
			}
			return expr;
		}
		bad("Invalid transform expression", NULL);
	}
	delim = (unsigned char)expr[1];
	if (!delim)
		bad("Invalid transform expression", NULL);
	for (i = 2; expr[i] && expr[i] != delim; i++)
		if (expr[i] == '\\' && expr[i + 1])
			i++;
	if (expr[i] != delim)
		bad("Invalid transform expression", NULL);
	for (j = i + 1; expr[j] && expr[j] != delim; j++)
		if (expr[j] == '\\' && expr[j + 1])
			j++;
	if (expr[j] != delim)
		bad("Invalid transform expression", NULL);
	for (p = expr + j + 1; *p && *p != ';'; p++) {
		char *end;
		switch (*p) {
		case 'g':
			x.global = true;
			break;
		case 'i':
			cflags |= REG_ICASE;
			break;
		case 'x':
			cflags |= REG_EXTENDED;
			break;
		case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': case '8': case '9':
			x.match_number = (unsigned)strtoul(p, &end, 0);
			p = end - 1;
			break;
		default:
			if (scope_flag(&x.flags, *p) < 0) {
				fflush(stdout);
				fprintf(stderr, "%s: Unknown flag in transform expression: %c\n", cli_prog(), *p);
				fprintf(stderr, "Try '%s --help' or '%s --usage' for more information.\n", cli_prog(), cli_prog());
				exit(TAR_FATAL);
			}
		}
	}
	if (*p == ';')
		p++;
	if (!(re = strndup(expr + 2, (size_t)(i - 2))))
		cli_die(TAR_FATAL, "out of memory");
	rc = regcomp(&x.re, re, cflags);
	if (rc) {
		char err[512];
		regerror(rc, &x.re, err, sizeof(err));
		bad("Invalid transform expression", err);
	}
	/* Anchored: one replacement whatever the flags. */
	if (re[0] == '^' || (i > 2 && re[i - 3] == '$'))
		x.global = false;
	free(re);

	/* The replacement. */
	const char *s = expr + i + 1, *end = expr + j, *beg = s;
	while (s < end) {
		if (*s == '\\' && s + 1 < end) {
			add_literal(&x, beg, (size_t)(s - beg));
			s++;
			char c = *s;
			if (c >= '0' && c <= '9') {
				char *e;
				size_t n = strtoul(s, &e, 10);
				if (e > end)
					e = (char *)end;
				if (n > x.re.re_nsub)
					bad("Invalid transform replacement: back reference out of range", NULL);
				add_segm(&x, SEGM_BACKREF)->ref = n;
				s = e;
			} else {
				static const char esc[] = "\\\\a\ab\bf\fn\nr\rt\tv\v&&";
				const char *q = NULL;
				for (size_t k = 0; esc[k]; k += 2)
					if (esc[k] == c)
						q = &esc[k + 1];
				if (q) {
					add_literal(&x, q, 1);
				} else if (c == 'L' || c == 'l' || c == 'U' || c == 'u' || c == 'E') {
					add_segm(&x, SEGM_CASE)->ctl = c == 'L' ? CASE_LOW : c == 'l' ? CASE_LOW_NEXT : c == 'U' ? CASE_UP
								 : c == 'u' ? CASE_UP_NEXT : CASE_STOP;
				} else if (c == delim) {
					add_literal(&x, s, 1);
				} else {
					add_literal(&x, s - 1, 2);
				}
				s++;
			}
			beg = s;
		} else if (*s == '&') {
			add_literal(&x, beg, (size_t)(s - beg));
			add_segm(&x, SEGM_BACKREF)->ref = 0;
			beg = ++s;
		} else {
			s++;
		}
	}
	add_literal(&x, beg, (size_t)(end - beg));

	struct xform *n = realloc(xforms, (nxforms + 1) * sizeof(*n));
	if (!n)
		cli_die(TAR_FATAL, "out of memory");
	xforms = n;
	xforms[nxforms++] = x;
	return p;
}

void tar_transform_add(const char *expr)
{
	while (*expr)
		expr = parse_one(expr);
}

bool tar_transforms(void)
{
	return nxforms > 0;
}

/* A growing string. */
struct buf {
	char *p;
	size_t len, cap;
};

static void put(struct buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *np = realloc(b->p, cap);
		if (!np)
			cli_die(TAR_FATAL, "out of memory");
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

/* s (n bytes) into b, with the case change in force. */
static void put_case(struct buf *b, const char *s, size_t n, enum case_ctl *ctl, enum case_ctl *saved)
{
	size_t at = b->len;

	put(b, s, n);
	if (!n || *ctl == CASE_STOP)
		return;
	switch (*ctl) {
	case CASE_UP_NEXT:
		b->p[at] = (char)toupper((unsigned char)b->p[at]);
		break;
	case CASE_LOW_NEXT:
		b->p[at] = (char)tolower((unsigned char)b->p[at]);
		break;
	case CASE_UP:
	case CASE_LOW:
		for (size_t i = at; i < b->len; i++)
			b->p[i] = (char)(*ctl == CASE_UP ? toupper((unsigned char)b->p[i]) : tolower((unsigned char)b->p[i]));
		break;
	case CASE_STOP:
		break;
	}
	/* \u and \l change one character, then the case change before them is back. */
	if (*ctl == CASE_UP_NEXT || *ctl == CASE_LOW_NEXT) {
		*ctl = *saved;
		*saved = CASE_STOP;
	}
}

static char *apply(const struct xform *x, const char *input)
{
	regmatch_t *m = calloc(x->re.re_nsub + 1, sizeof(*m));
	struct buf b = { 0 };
	unsigned nmatches = 0;

	if (!m)
		cli_die(TAR_FATAL, "out of memory");
	put(&b, "", 0);
	while (*input) {
		size_t disp;

		if (regexec(&x->re, input, x->re.re_nsub + 1, m, 0) == 0) {
			enum case_ctl ctl = CASE_STOP, saved = CASE_STOP;

			disp = (size_t)m[0].rm_eo;
			put(&b, input, (size_t)m[0].rm_so);
			nmatches++;
			if (x->match_number && nmatches < x->match_number) {
				put(&b, input + m[0].rm_so, disp - (size_t)m[0].rm_so);
				if (disp == 0 && *input)
					put(&b, input, 1), disp = 1; /* an empty match: on by one character */
				input += disp;
				continue;
			}
			for (size_t k = 0; k < x->nsegm; k++) {
				const struct segm *g = &x->segm[k];
				switch (g->type) {
				case SEGM_LITERAL:
					put_case(&b, g->lit, g->len, &ctl, &saved);
					break;
				case SEGM_BACKREF:
					if (m[g->ref].rm_so != -1 && m[g->ref].rm_eo != -1)
						put_case(&b, input + m[g->ref].rm_so, (size_t)(m[g->ref].rm_eo - m[g->ref].rm_so),
							 &ctl, &saved);
					break;
				case SEGM_CASE:
					if ((g->ctl == CASE_UP_NEXT || g->ctl == CASE_LOW_NEXT) &&
					    (saved == CASE_STOP || saved == CASE_UP || saved == CASE_LOW))
						saved = ctl;
					ctl = g->ctl;
					break;
				}
			}
			if (disp == 0 && *input) {
				/* An empty match: the next character stays, and the search goes on after it. */
				put(&b, input, 1);
				disp = 1;
			}
		} else {
			disp = strlen(input);
			put(&b, input, disp);
		}
		input += disp;
		if (!x->global) {
			put(&b, input, strlen(input));
			break;
		}
	}
	free(m);
	return b.p;
}

char *tar_transform(const char *name, int kind)
{
	char *cur = NULL;

	for (size_t i = 0; i < nxforms; i++) {
		if (!(xforms[i].flags & kind))
			continue;
		char *next = apply(&xforms[i], cur ? cur : name);
		free(cur);
		cur = next;
	}
	return cur;
}

void tar_transform_free(void)
{
	for (size_t i = 0; i < nxforms; i++) {
		regfree(&xforms[i].re);
		for (size_t k = 0; k < xforms[i].nsegm; k++)
			free(xforms[i].segm[k].lit);
		free(xforms[i].segm);
	}
	free(xforms);
	xforms = NULL;
	nxforms = 0;
}
