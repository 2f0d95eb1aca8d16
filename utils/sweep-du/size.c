/* SPDX-License-Identifier: MIT */
/*
 * sweep-du: sizes printed exactly as GNU du prints them (gnulib human.c
 * semantics: integer arithmetic, results rounded up, one decimal below 10
 * when autoscaling, 'k' for kilo in SI and 'K' for kibi).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "du.h"

static const char power_letters[] = "KMGTPEZY";

/* xstrtoumax-style suffix scaling: base^power with overflow check. */
static int scale(uint64_t *v, unsigned base, int power)
{
	while (power-- > 0) {
		if (*v > UINT64_MAX / base)
			return -ERANGE;
		*v *= base;
	}
	return 0;
}

static int suffix_power(char c)
{
	switch (c) {
	case 'k': case 'K': return 1;
	case 'M': case 'm': return 2;
	case 'G': case 'g': return 3;
	case 'T': case 't': return 4;
	case 'P': return 5;
	case 'E': return 6;
	case 'Z': return 7;
	case 'Y': return 8;
	default: return -1;
	}
}

/* The number part of a block-size spec: "[N][K|M|...][iB|B|D]". */
static int parse_block(const char *spec, uint64_t *ret, const char **end)
{
	const char *p = spec;
	uint64_t v = 1;
	unsigned base = 1024;
	int power, r;

	if (isdigit((unsigned char)*p)) {
		char *e;
		errno = 0;
		v = strtoumax(p, &e, 0);
		if (errno == ERANGE)
			return -ERANGE;
		p = e;
	} else if (!*p || !strchr("eEgGkKmMpPtTyYzZ", *p)) {
		return -EINVAL;
	}
	if (*p) {
		power = suffix_power(*p);
		if (power < 0)
			return -EILSEQ;
		if (p[1] == 'i' && p[2] == 'B')
			p += 3;
		else if (p[1] == 'B' || p[1] == 'D')
			base = 1000, p += 2;
		else
			p += 1;
		if (*p)
			return -EILSEQ;
		r = scale(&v, base, power);
		if (r < 0)
			return r;
	}
	*ret = v;
	*end = p;
	return 0;
}

int du_units_parse(const char *spec, struct du_units *u)
{
	static const char *const names[] = { "human-readable", "si" };
	static const int name_opts[] = { DU_AUTOSCALE | DU_SI | DU_BASE1024, DU_AUTOSCALE | DU_SI };
	const char *end;
	uint64_t block;
	int opts = 0, r, match = -1;

	if (!spec && !(spec = getenv("BLOCK_SIZE")) && !(spec = getenv("BLOCKSIZE"))) {
		u->block = getenv("POSIXLY_CORRECT") ? 512 : 1024;
		u->opts = 0;
		return 0;
	}
	if (*spec == '\'') {
		opts |= DU_GROUP; /* group digits as the locale does */
		spec++;
	}
	/* an unambiguous prefix names a style, as argmatch allows */
	for (int i = 0; i < 2; i++)
		if (*spec && strncmp(names[i], spec, strlen(spec)) == 0)
			match = match < 0 ? i : -2;
	if (match >= 0) {
		u->block = 1;
		u->opts = opts | name_opts[match];
		return 0;
	}
	r = parse_block(spec, &block, &end);
	if (r < 0)
		return r;
	if (block == 0)
		return -EINVAL;
	/* a suffix without a number ("K", "MB", "KiB") also prints the unit */
	if (!isdigit((unsigned char)*spec)) {
		opts |= DU_SI;
		if (end[-1] == 'B')
			opts |= DU_SUFFIX_B;
		if (end[-1] != 'B' || end[-2] == 'i')
			opts |= DU_BASE1024;
	}
	u->block = block;
	u->opts = opts;
	return 0;
}

/* The len digits of d with the locale's thousands separators (gnulib group_number), into out. */
static size_t group_digits(const char *d, size_t len, const struct lconv *lc, char *out)
{
	const char *grouping = lc->grouping, *sep = lc->thousands_sep;
	size_t seplen = strlen(sep), group = SIZE_MAX, i = len, o = 0;
	char rev[96]; /* built right to left */

	if (!*sep || seplen > 4) {
		memcpy(out, d, len);
		return len;
	}
	for (;;) {
		unsigned char g = (unsigned char)*grouping;
		if (g) {
			group = g < CHAR_MAX ? g : i;
			grouping++;
		}
		if (i < group)
			group = i;
		for (size_t k = 0; k < group; k++)
			rev[o++] = d[--i];
		if (i == 0)
			break;
		for (size_t k = seplen; k-- > 0;)
			rev[o++] = sep[k];
	}
	for (size_t k = 0; k < o; k++)
		out[k] = rev[o - 1 - k];
	return o;
}

char *du_units_format(uint64_t n, const struct du_units *u, char *buf)
{
	const struct lconv *lc = localeconv();
	const char *point = lc->decimal_point;
	unsigned base = u->opts & DU_BASE1024 ? 1024 : 1000;
	uint64_t amt, div = u->block;
	/* rounding: 0 exact, 1 below half a tenth, 2 exactly half, 3 above half */
	unsigned tenths, rounding;
	int exponent = -1, shown_tenth = -1;
	char digits[24];
	size_t nd = 0, o = 0;

	if (!*point || strlen(point) > 4)
		point = ".";
	if (div <= 1) {
		amt = n;
		tenths = rounding = 0;
	} else {
		uint64_t r10 = (n % div) * 10, r2 = (r10 % div) * 2;
		amt = n / div;
		tenths = (unsigned)(r10 / div);
		rounding = r2 < div ? (r2 > 0) : 2 + (div < r2);
	}
	if (u->opts & DU_AUTOSCALE) {
		exponent = 0;
		if (amt >= base) {
			do {
				unsigned r10 = (unsigned)(amt % base) * 10 + tenths;
				unsigned r2 = (r10 % base) * 2 + (rounding >> 1);
				amt /= base;
				tenths = r10 / base;
				rounding = r2 < base ? (r2 + rounding) != 0 : 2 + (base < r2 + rounding);
				exponent++;
			} while (amt >= base && exponent < 8);
			if (amt < 10) {
				/* round the tenth up, and show it */
				if (rounding > 0) {
					tenths++;
					rounding = 0;
					if (tenths == 10) {
						amt++;
						tenths = 0;
					}
				}
				if (amt < 10) {
					shown_tenth = (int)tenths;
					tenths = rounding = 0;
				}
			}
		}
	}
	if (tenths + rounding > 0) {
		amt++;
		if ((u->opts & DU_AUTOSCALE) && amt == base && exponent < 8) {
			exponent++;
			shown_tenth = 0;
			amt = 1;
		}
	}
	do {
		digits[sizeof(digits) - ++nd] = (char)('0' + amt % 10);
	} while ((amt /= 10) != 0);
	if (u->opts & DU_GROUP)
		o = group_digits(digits + sizeof(digits) - nd, nd, lc, buf);
	else
		memcpy(buf, digits + sizeof(digits) - nd, o = nd);
	if (shown_tenth >= 0) {
		o += (size_t)sprintf(buf + o, "%s", point);
		buf[o++] = (char)('0' + shown_tenth);
	}
	if (u->opts & DU_SI) {
		if (exponent < 0) {
			exponent = 0;
			for (uint64_t power = 1; power < u->block; power *= base)
				if (++exponent == 8)
					break;
		}
		if (exponent)
			buf[o++] = (!(u->opts & DU_BASE1024) && exponent == 1) ? 'k' : power_letters[exponent - 1];
		if (u->opts & DU_SUFFIX_B) {
			if ((u->opts & DU_BASE1024) && exponent)
				buf[o++] = 'i';
			buf[o++] = 'B';
		}
	}
	buf[o] = 0;
	return buf;
}
