/* SPDX-License-Identifier: MIT */
/*
 * --mode=CHANGES: every member's mode changed as chmod(1) would change it
 * (gnulib modechange, as GNU tar applies it to the mode stored): octal
 * ("0644"), or symbolic clauses "[ugoa]*([-+=]([rwxXst]*|[ugo]))+" joined
 * by ','. A clause without [ugoa] leaves alone the bits the umask at the
 * start masks, as chmod does.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "tar.h"

enum { MODE_ORDINARY, MODE_X_IF_ANY_X, MODE_COPY_EXISTING };

struct mode_change {
	char op;          /* '+', '-', '=' */
	char flag;        /* MODE_* */
	mode_t affected;  /* the bits [ugoa] named (0: none named, the umask applies) */
	mode_t value;
	mode_t mentioned; /* the bits the clause names */
};

static struct mode_change *changes;
static size_t nchanges;
static mode_t start_umask;

#define ALL_BITS (S_ISUID | S_ISGID | S_ISVTX | S_IRWXU | S_IRWXG | S_IRWXO)

static void add(struct mode_change c)
{
	struct mode_change *n = realloc(changes, (nchanges + 1) * sizeof(*n));

	if (!n)
		cli_die(TAR_FATAL, "out of memory");
	changes = n;
	changes[nchanges++] = c;
}

int tar_mode_parse(const char *s)
{
	mode_t mask = umask(0);

	umask(mask);
	start_umask = mask;
	if (*s >= '0' && *s <= '7') {
		char *end;
		unsigned long v = strtoul(s, &end, 8);
		if (*end || v > 07777)
			return -1;
		add((struct mode_change){ .op = '=', .flag = MODE_ORDINARY, .affected = ALL_BITS, .value = (mode_t)v,
					  .mentioned = ALL_BITS });
		return 0;
	}
	for (const char *p = s;;) {
		mode_t affected = 0;

		for (;; p++) {
			if (*p == 'u')
				affected |= S_ISUID | S_IRWXU;
			else if (*p == 'g')
				affected |= S_ISGID | S_IRWXG;
			else if (*p == 'o')
				affected |= S_ISVTX | S_IRWXO;
			else if (*p == 'a')
				affected |= ALL_BITS;
			else
				break;
		}
		if (*p != '+' && *p != '-' && *p != '=')
			return -1;
		while (*p == '+' || *p == '-' || *p == '=') {
			struct mode_change c = { .op = *p++, .flag = MODE_COPY_EXISTING, .affected = affected };
			switch (*p) {
			case 'u':
				c.value = S_IRWXU;
				p++;
				break;
			case 'g':
				c.value = S_IRWXG;
				p++;
				break;
			case 'o':
				c.value = S_IRWXO;
				p++;
				break;
			default:
				c.flag = MODE_ORDINARY;
				for (;; p++) {
					if (*p == 'r')
						c.value |= S_IRUSR | S_IRGRP | S_IROTH;
					else if (*p == 'w')
						c.value |= S_IWUSR | S_IWGRP | S_IWOTH;
					else if (*p == 'x')
						c.value |= S_IXUSR | S_IXGRP | S_IXOTH;
					else if (*p == 'X')
						c.flag = MODE_X_IF_ANY_X;
					else if (*p == 's')
						c.value |= S_ISUID | S_ISGID;
					else if (*p == 't')
						c.value |= S_ISVTX;
					else
						break;
				}
			}
			c.mentioned = affected ? affected & c.value : c.value;
			add(c);
		}
		if (*p == '\0')
			return 0;
		if (*p++ != ',')
			return -1;
	}
}

bool tar_mode_changes(void)
{
	return nchanges > 0;
}

/* gnulib mode_adjust. */
mode_t tar_mode_adjust(mode_t old, bool dir)
{
	mode_t mode = old & ALL_BITS;

	for (size_t i = 0; i < nchanges; i++) {
		const struct mode_change *c = &changes[i];
		mode_t omit = (dir ? S_ISUID | S_ISGID : 0) & ~c->mentioned;
		mode_t value = c->value;

		if (c->flag == MODE_COPY_EXISTING) {
			value &= mode;
			value |= (value & (S_IRUSR | S_IRGRP | S_IROTH) ? S_IRUSR | S_IRGRP | S_IROTH : 0) |
				 (value & (S_IWUSR | S_IWGRP | S_IWOTH) ? S_IWUSR | S_IWGRP | S_IWOTH : 0) |
				 (value & (S_IXUSR | S_IXGRP | S_IXOTH) ? S_IXUSR | S_IXGRP | S_IXOTH : 0);
		} else if (c->flag == MODE_X_IF_ANY_X && ((mode & (S_IXUSR | S_IXGRP | S_IXOTH)) || dir)) {
			value |= S_IXUSR | S_IXGRP | S_IXOTH;
		}
		value &= (c->affected ? c->affected : ~start_umask) & ~omit;
		switch (c->op) {
		case '=': {
			mode_t preserved = (c->affected ? ~c->affected : 0) | omit;
			mode = (mode & preserved) | value;
			break;
		}
		case '+':
			mode |= value;
			break;
		case '-':
			mode &= ~value;
			break;
		}
	}
	return (old & ~ALL_BITS) | (mode & ALL_BITS);
}

void tar_mode_free(void)
{
	free(changes);
	changes = NULL;
	nchanges = 0;
}
