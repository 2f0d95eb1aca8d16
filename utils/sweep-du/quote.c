/* SPDX-License-Identifier: MIT */
/*
 * File names in messages, quoted exactly as coreutils quotes them (gnulib
 * quotearg's shell-escape-always style in the C locale, which du uses for
 * its diagnostics): 'name'; control and non-ASCII bytes as $'\n' or
 * $'\377' escapes spliced between quoted runs; a name holding a single quote
 * and nothing else shell-special goes in double quotes ("it's"); otherwise
 * the quote is written as '\''. gnulib writes such a name in a second pass
 * that starts with the escape state the first pass ended in; that quirk is
 * kept so messages match byte for byte.
 */
#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#include "du.h"

struct qbuf {
	char *p;
	size_t len, cap;
	bool fail;
};

static void put(struct qbuf *b, const char *s, size_t n)
{
	if (b->fail || du_grow(&b->p, &b->cap, b->len + n + 1, 1) < 0) {
		b->fail = true;
		return;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

struct qstate {
	bool pending;    /* inside a $'...' run that a plain byte must close */
	bool single;     /* met a single quote */
	bool all_compat; /* every byte means the same inside C and shell double quotes */
};

static const char *letter_escape(unsigned char c)
{
	switch (c) {
	case '\a': return "a";
	case '\b': return "b";
	case '\f': return "f";
	case '\n': return "n";
	case '\r': return "r";
	case '\t': return "t";
	case '\v': return "v";
	default: return NULL;
	}
}

/* Does byte c at position i of an n-byte name read the same in C and shell double quotes? */
static bool compat(unsigned char c, size_t i, size_t n)
{
	if (isalnum(c) || strchr("%+,-./:]_ @'", c))
		return c != 0;
	if (c == '#' || c == '~')
		return i == 0;
	if (c == '{' || c == '}')
		return i == 0 && n == 1;
	return false;
}

static void quote_pass(struct qbuf *b, const unsigned char *s, size_t n, struct qstate *st)
{
	put(b, "'", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];
		const char *letter = letter_escape(c);
		char oct[4];

		if (!compat(c, i, n))
			st->all_compat = false;
		if (letter || !isprint(c)) {
			/* start (or continue) a $'...' run */
			if (!st->pending) {
				put(b, "'$'", 3);
				st->pending = true;
			}
			if (letter) {
				put(b, "\\", 1);
				put(b, letter, 1);
			} else {
				oct[0] = '\\';
				oct[1] = (char)('0' + (c >> 6));
				oct[2] = (char)('0' + ((c >> 3) & 7));
				oct[3] = (char)('0' + (c & 7));
				put(b, oct, 4);
			}
			continue;
		}
		if (c == '\'') {
			st->single = true;
			put(b, "'\\'", 3);
			st->pending = false;
		}
		if (st->pending) {
			put(b, "''", 2);
			st->pending = false;
		}
		put(b, (const char *)&c, 1);
	}
}

const char *du_quote(const char *name)
{
	/* a few buffers in turn, so one message can quote two names */
	static struct qbuf bufs[4];
	static unsigned turn;
	struct qbuf *bp = &bufs[turn++ % 4];
	struct qstate st = { .all_compat = true };
	size_t n = strlen(name);

	bp->len = 0;
	bp->fail = false;
	quote_pass(bp, (const unsigned char *)name, n, &st);
	if (st.single && st.all_compat) {
		bp->len = 0;
		put(bp, "\"", 1);
		put(bp, name, n);
		put(bp, "\"", 1);
		return bp->fail ? name : bp->p;
	}
	if (st.single) {
		/* gnulib's rewrite pass, escape state carried over */
		struct qstate again = { .pending = st.pending, .all_compat = true };
		bp->len = 0;
		quote_pass(bp, (const unsigned char *)name, n, &again);
	}
	put(bp, "'", 1);
	return bp->fail ? name : bp->p;
}

const char *du_quotef(const char *name)
{
	/* quotef: shell-escape style, quoting only when needed, ':' included */
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		if (!isalnum(*p) && !strchr("%+,-./_@]", *p))
			return du_quote(name);
	return *name ? name : du_quote(name);
}
