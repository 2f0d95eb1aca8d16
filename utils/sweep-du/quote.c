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
#include <langinfo.h>
#include <stdlib.h>
#include <wchar.h>
#include <wctype.h>
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

/* Does printable ASCII byte c at position i of an n-byte name read the same in C and shell double quotes? */
static bool compat(unsigned char c, size_t i, size_t n)
{
	if (isalnum(c) || strchr("%+,-./:]_ @'", c))
		return true;
	if (c == '#' || c == '~')
		return i == 0;
	if (c == '{' || c == '}')
		return i == 0 && n == 1;
	return false;
}

static void escape_bytes(struct qbuf *b, const unsigned char *s, size_t len, struct qstate *st)
{
	for (size_t k = 0; k < len; k++) {
		const char *letter = letter_escape(s[k]);
		char oct[4] = { '\\', (char)('0' + (s[k] >> 6)), (char)('0' + ((s[k] >> 3) & 7)),
				(char)('0' + (s[k] & 7)) };
		/* start (or continue) a $'...' run */
		if (!st->pending) {
			put(b, "'$'", 3);
			st->pending = true;
		}
		if (letter) {
			put(b, "\\", 1);
			put(b, letter, 1);
		} else {
			put(b, oct, 4);
		}
	}
}

static void plain_bytes(struct qbuf *b, const unsigned char *s, size_t len, struct qstate *st)
{
	if (st->pending) { /* close the $'...' run */
		put(b, "''", 2);
		st->pending = false;
	}
	put(b, (const char *)s, len);
}

/*
 * Bytes outside printable ASCII: in a multibyte locale a printable
 * character is kept as it is; anything else (and every such byte in the C
 * locale) is escaped. Returns the bytes consumed.
 */
static size_t other_bytes(struct qbuf *b, const unsigned char *s, size_t left, struct qstate *st)
{
	mbstate_t mbs;
	wchar_t w;
	size_t len;

	if (MB_CUR_MAX == 1 || letter_escape(*s)) {
		st->all_compat = false;
		escape_bytes(b, s, 1, st);
		return 1;
	}
	memset(&mbs, 0, sizeof(mbs));
	len = mbrtowc(&w, (const char *)s, left, &mbs);
	if (len == (size_t)-1 || len == 0)
		len = 1; /* an invalid byte: escape it alone */
	else if (len == (size_t)-2)
		len = left; /* cut short: escape the rest */
	else if (iswprint((wint_t)w)) {
		plain_bytes(b, s, len, st);
		return len;
	}
	st->all_compat = false;
	escape_bytes(b, s, len, st);
	return len;
}

static void quote_pass(struct qbuf *b, const unsigned char *s, size_t n, struct qstate *st)
{
	put(b, "'", 1);
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];

		if (c < 0x20 || c >= 0x7f) {
			i += other_bytes(b, s + i, n - i, st);
			continue;
		}
		if (!compat(c, i, n))
			st->all_compat = false;
		if (c == '\'') {
			st->single = true;
			put(b, "'\\'", 3);
			st->pending = false;
		}
		plain_bytes(b, &c, 1, st);
		i++;
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

const char *du_quote_locale(const char *name)
{
	/* gnulib quote(): curved quotes in a UTF-8 locale, ASCII ones otherwise */
	static struct qbuf bufs[2];
	static unsigned turn;
	struct qbuf *bp = &bufs[turn++ % 2];
	bool utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");

	bp->len = 0;
	bp->fail = false;
	put(bp, utf8 ? "\xe2\x80\x98" : "'", utf8 ? 3 : 1);
	put(bp, name, strlen(name));
	put(bp, utf8 ? "\xe2\x80\x99" : "'", utf8 ? 3 : 1);
	return bp->fail ? name : bp->p;
}
