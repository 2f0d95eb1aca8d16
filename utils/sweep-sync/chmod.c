/* SPDX-License-Identifier: MIT */
/*
 * --chmod=CHMOD: rsync's mode changes, applied to each source entry's mode
 * as it is listed (as rsync's sender does), so everything after (new modes,
 * -p, itemize) sees the changed mode. The grammar is rsync's: clauses
 * separated by commas, each an octal number or [DF][ugoa...][+-=][rwxXst
 * | u | g | o]; D/F limit a clause to directories or to the rest. Without
 * ugoa, the bits are those the umask lets through.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sync.h"

#define MODE_BITS 07777u

enum chmod_op { OP_NONE, OP_ADD, OP_SUB, OP_EQ, OP_SET };

struct chmod_clause {
	bool dirs_only, files_only, keep_x; /* D, F, X */
	enum chmod_op op;
	unsigned who;     /* 0100 u, 0010 g, 0001 o (0: not given) */
	unsigned setids;  /* the set-id bits the named classes own (u 04000, g 02000) */
	unsigned perms;   /* rwx as 4/2/1; OP_SET: the whole octal mode */
	unsigned special; /* s and t asked for */
	unsigned copy;    /* u, g or o after the operator: copy that class's bits */
};

struct sync_chmod {
	struct chmod_clause *v;
	size_t n;
};

/* One clause of spec (up to a comma or the end): 0, or -EINVAL. */
static int parse_clause(const char *p, const char *end, struct chmod_clause *cl)
{
	memset(cl, 0, sizeof(*cl));
	for (; p < end && (*p == 'D' || *p == 'F'); p++)
		*(*p == 'D' ? &cl->dirs_only : &cl->files_only) = true;
	if (cl->dirs_only && cl->files_only)
		return -EINVAL;
	if (p < end && *p >= '0' && *p <= '7') {
		cl->op = OP_SET;
		for (; p < end; p++) {
			if (*p < '0' || *p > '7' || (cl->perms = cl->perms * 8 + (unsigned)(*p - '0')) > MODE_BITS)
				return -EINVAL;
		}
		return 0;
	}
	for (; p < end && !cl->op; p++) {
		switch (*p) {
		case 'D': cl->dirs_only = true; break;
		case 'F': cl->files_only = true; break;
		case 'u': cl->who |= 0100; cl->setids |= 04000; break;
		case 'g': cl->who |= 0010; cl->setids |= 02000; break;
		case 'o': cl->who |= 0001; break;
		case 'a': cl->who |= 0111; cl->setids |= 06000; break;
		case '+': cl->op = OP_ADD; break;
		case '-': cl->op = OP_SUB; break;
		case '=': cl->op = OP_EQ; break;
		default: return -EINVAL;
		}
	}
	if (!cl->op || (cl->dirs_only && cl->files_only))
		return -EINVAL;
	for (; p < end; p++) {
		if (cl->copy)
			return -EINVAL; /* a class to copy from stands alone */
		switch (*p) {
		case 'r': cl->perms |= 4; break;
		case 'w': cl->perms |= 2; break;
		case 'X': cl->keep_x = true; cl->perms |= 1; break;
		case 'x': cl->perms |= 1; break;
		case 's': cl->special |= cl->setids ? cl->setids : 04000; break;
		case 't': cl->special |= 01000; break;
		case 'u': case 'g': case 'o':
			if (cl->perms || cl->special)
				return -EINVAL;
			cl->copy = *p == 'u' ? 0100 : *p == 'g' ? 0010 : 0001;
			break;
		default: return -EINVAL;
		}
	}
	return 0;
}

int sync_chmod_add(struct sync_chmod **chp, const char *spec)
{
	struct sync_chmod *ch = *chp;

	if (!ch && !(ch = *chp = calloc(1, sizeof(*ch))))
		return -ENOMEM;
	for (const char *p = spec;;) {
		const char *end = strchr(p, ',');
		struct chmod_clause *v;

		if (!end)
			end = p + strlen(p);
		v = realloc(ch->v, (ch->n + 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		ch->v = v;
		if (parse_clause(p, end, &ch->v[ch->n]) < 0)
			return -EINVAL;
		ch->n++;
		if (!*end)
			return 0;
		p = end + 1;
	}
}

/* The bits class `from` (0100, 0010, 0001) has in mode, as rwx 4/2/1. */
static unsigned class_bits(unsigned mode, unsigned from)
{
	return from == 0100 ? (mode >> 6) & 7 : from == 0010 ? (mode >> 3) & 7 : mode & 7;
}

unsigned sync_chmod_apply(const struct sync_chmod *ch, unsigned mode, unsigned umask_bits)
{
	bool dir = S_ISDIR(mode), was_x = mode & 0111;
	unsigned type = mode & ~MODE_BITS;

	for (size_t i = 0; ch && i < ch->n; i++) {
		const struct chmod_clause *cl = &ch->v[i];
		unsigned who = cl->who ? cl->who : 0111, mask = cl->who ? MODE_BITS : ~umask_bits & MODE_BITS;
		unsigned perms = cl->perms, add, copy;

		if ((cl->dirs_only && !dir) || (cl->files_only && dir))
			continue;
		if (cl->op == OP_SET) {
			mode = cl->perms;
			continue;
		}
		/* X: execute only for a directory or what some class could already execute */
		if (cl->keep_x && !was_x && !dir)
			perms &= ~1u;
		add = ((who * perms) & mask) | cl->special;
		copy = cl->copy ? (who * class_bits(mode, cl->copy)) & mask : 0;
		switch (cl->op) {
		case OP_ADD:
			mode |= add | copy;
			break;
		case OP_SUB:
			mode &= ~(((who * cl->perms) & mask) | cl->special | copy);
			break;
		case OP_EQ: {
			unsigned clear = who * 7;

			if (cl->special)
				clear |= cl->setids;
			if (cl->copy)
				clear |= (who & 0100 ? 04000 : 0) | (who & 0010 ? 02000 : 0) | (who & 0001 ? 01000 : 0);
			mode = (mode & ~clear) | add | copy;
			break;
		}
		default:
			break;
		}
	}
	return (mode & MODE_BITS) | type;
}

struct sync_chmod *sync_chmod_free(struct sync_chmod *ch)
{
	if (ch)
		free(ch->v);
	free(ch);
	return NULL;
}
