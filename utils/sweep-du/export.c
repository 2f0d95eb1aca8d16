/* SPDX-License-Identifier: MIT */
/*
 * sweep-du --export=FILE: the tree in ncdu's JSON export format, version
 * 1.2 (https://dev.yorhel.nl/ncdu/jsonfmt), which `ncdu -f FILE` browses:
 *
 *   [1,2,{metadata},[{root's info},{a file's info},[{a directory's info},...],...]]
 *
 * An info object holds the entry's own sizes (apparent: asize, on disk:
 * dsize), not its subtree's: ncdu adds them up, and counts each hard-linked
 * inode (ino, hlnkc, nlink) once per directory it totals. dev is written
 * for the root and where an entry's device differs from its parent's.
 * Entries du leaves out are there as ncdu writes them: "excluded":"pattern"
 * (--exclude, -X) and "otherfs" (-x); a directory the walk could not open
 * or read completely, and an entry that could not be stat'ed, carry
 * "read_error":true. Names are written as ncdu writes them: their bytes as
 * they are (a name need not be UTF-8), with '"', '\' and control
 * characters escaped.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "du.h"

int du_export_info(struct du *du, uint32_t idx, const struct sweep_stat *st)
{
	if (du_grow(&du->xinfo, &du->xinfo_cap, (size_t)idx + 1, sizeof(*du->xinfo)) < 0)
		return -ENOMEM;
	du->xinfo[idx] = (struct du_xinfo){ .asize = st->size, .dsize = st->blocks * 512,
					    .nlink = st->nlink > UINT32_MAX ? UINT32_MAX : (uint32_t)st->nlink,
					    .mode = st->mode };
	return 0;
}

int du_export_left_out(struct du *du, uint32_t parent, const char *name, enum du_left_out why, bool dir,
		       uint64_t dev)
{
	size_t len = strlen(name) + 1;

	if (parent == DU_NONE)
		return 0; /* an operand: du says nothing of it either, and ncdu has no entry above it */
	if (du_grow(&du->xout, &du->xout_cap, du->nxout + 1, sizeof(*du->xout)) < 0 ||
	    du_grow(&du->xnames, &du->xnames_cap, du->xnames_len + len, 1) < 0)
		return -ENOMEM;
	du->xout[du->nxout++] = (struct du_xout){ .parent = parent, .name = du->xnames_len, .why = why, .dir = dir,
						  .dev = dev };
	memcpy(du->xnames + du->xnames_len, name, len);
	du->xnames_len += len;
	return 0;
}

/* A JSON string of a name's bytes, escaped as ncdu escapes them. */
static void put_name(FILE *f, const char *s)
{
	putc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		case '\b': fputs("\\b", f); break;
		case '\f': fputs("\\f", f); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				putc(*p, f);
		}
	}
	putc('"', f);
}

static int cmp_out(const void *a, const void *b)
{
	const struct du_xout *x = a, *y = b;
	return x->parent < y->parent ? -1 : x->parent > y->parent;
}

/* Whether the walk failed to open or read directory path (du->errs sorted by path: du_replay). */
static bool dir_failed(const struct du *du, const char *path)
{
	size_t lo = 0, hi = du->nerrs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(du->errs[mid].path, path) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < du->nerrs && !strcmp(du->errs[lo].path, path); lo++)
		if (du->errs[lo].op == SWEEP_WALK_OP_OPENDIR || du->errs[lo].op == SWEEP_WALK_OP_READDIR)
			return true;
	return false;
}

/* One entry's info object (without the closing brace: a directory's array follows it). */
static int put_info(struct du *du, FILE *f, uint32_t i, const char *name, bool top)
{
	const struct du_tree *t = &du->tree;
	const struct du_node *n = &t->nodes[i];

	fputs("{\"name\":", f);
	put_name(f, name);
	if (n->flags & DU_NOSTAT) {
		fputs(",\"read_error\":true}", f);
		return 0;
	}
	const struct du_xinfo *x = &du->xinfo[i];
	if (x->asize)
		fprintf(f, ",\"asize\":%llu", (unsigned long long)x->asize);
	if (x->dsize)
		fprintf(f, ",\"dsize\":%llu", (unsigned long long)x->dsize);
	if (top || (n->parent != DU_NONE && t->nodes[n->parent].dev != n->dev))
		fprintf(f, ",\"dev\":%llu", (unsigned long long)t->devs[n->dev]);
	if (!(n->flags & DU_DIR) && x->nlink > 1)
		fprintf(f, ",\"ino\":%llu,\"hlnkc\":true,\"nlink\":%u", (unsigned long long)n->ino, x->nlink);
	if (!(n->flags & DU_DIR) && !S_ISREG(x->mode))
		fputs(",\"notreg\":true", f);
	if ((n->flags & DU_DIR) && du->nerrs) {
		if (du_tree_path(t, i, &du->scratch, &du->scratch_cap) < 0)
			return -ENOMEM;
		if (dir_failed(du, du->scratch))
			fputs(",\"read_error\":true", f);
	}
	putc('}', f);
	return 0;
}

/* The entries du left out of directory i. */
static void put_left_out(const struct du *du, FILE *f, uint32_t i)
{
	static const char *const why[] = { [DU_OUT_PATTERN] = "pattern", [DU_OUT_OTHERFS] = "otherfs" };
	size_t lo = 0, hi = du->nxout;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (du->xout[mid].parent < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < du->nxout && du->xout[lo].parent == i; lo++) {
		const struct du_xout *x = &du->xout[lo];
		/* Another filesystem's directory as ncdu writes it: a directory, its device, nothing in it. */
		bool mount = x->why == DU_OUT_OTHERFS && x->dir;
		fputs(mount ? ",\n[{\"name\":" : ",\n{\"name\":", f);
		put_name(f, du->xnames + x->name);
		if (mount)
			fprintf(f, ",\"dev\":%llu", (unsigned long long)x->dev);
		fprintf(f, ",\"excluded\":\"%s\"}%s", why[x->why], mount ? "]" : "");
	}
}

/* The name ncdu shows for the top: the operand's absolute path where it can be had (as ncdu writes it). */
static char *top_name(const char *operand)
{
	char *abs = realpath(operand, NULL);
	return abs ? abs : strdup(operand);
}

static int write_tree(struct du *du, FILE *f, uint32_t root)
{
	const struct du_tree *t = &du->tree;
	struct frame {
		uint32_t dir, next; /* next: the position in t->kids of the child to write next */
	} *stack = NULL;
	size_t depth = 0, cap = 0;
	char *top = top_name(du_name(t, root));
	int rc = top ? 0 : -ENOMEM;

	fprintf(f, "[1,2,{\"progname\":\"sweep-du\",\"progver\":\"%s\",\"timestamp\":%lld},\n[",
		SWEEP_VERSION, (long long)time(NULL));
	if (rc == 0)
		rc = put_info(du, f, root, top, true);
	free(top);
	if (rc == 0)
		put_left_out(du, f, root);
	if (rc == 0 && du_grow(&stack, &cap, 1, sizeof(*stack)) < 0)
		rc = -ENOMEM;
	if (rc == 0)
		stack[depth++] = (struct frame){ root, t->first[root] };
	/* Iterative: a tree may be deeper than the stack would allow recursion. */
	while (rc == 0 && depth > 0) {
		struct frame *fr = &stack[depth - 1];
		if (fr->next == t->first[fr->dir + 1]) {
			putc(']', f);
			depth--;
			continue;
		}
		uint32_t c = t->kids[fr->next++];
		bool dir = (t->nodes[c].flags & (DU_DIR | DU_NOSTAT)) == DU_DIR;
		fputs(",\n", f);
		if (dir)
			putc('[', f);
		rc = put_info(du, f, c, du_name(t, c), false);
		if (rc < 0 || !dir)
			continue;
		put_left_out(du, f, c);
		if (du_grow(&stack, &cap, depth + 1, sizeof(*stack)) < 0) {
			rc = -ENOMEM;
			break;
		}
		stack[depth++] = (struct frame){ c, t->first[c] };
	}
	free(stack);
	if (rc == 0)
		fputs("]\n", f);
	return rc;
}

FILE *du_export_open(const char *file)
{
	FILE *f = strcmp(file, "-") ? fopen(file, "we") : stdout;

	if (!f)
		cli_die(1, "cannot open %s for writing: %s", cli_quote(file), strerror(errno));
	return f;
}

int du_export(struct du *du, FILE *f)
{
	const char *file = du->o.export_file;
	bool out = f == stdout;
	uint32_t root = du->nroots == 1 ? du->root_node[0] : DU_NONE;
	int rc;

	if (root == DU_NONE || !(du->tree.nodes[root].flags & DU_DIR) || (du->tree.nodes[root].flags & DU_NOSTAT)) {
		/* Not reached (du said why), or not a directory: nothing written, the file left as it was made. */
		if (root != DU_NONE)
			cli_msg("cannot export %s: not a directory (ncdu's format starts with one)",
				cli_quote(du->roots[0]));
		if (!out)
			fclose(f);
		return -ENOTDIR;
	}
	if (du->nxout)
		qsort(du->xout, du->nxout, sizeof(*du->xout), cmp_out);
	rc = write_tree(du, f, root);
	if (rc == 0 && fflush(f) != 0)
		rc = -errno;
	if (!out && fclose(f) != 0 && rc == 0)
		rc = -errno;
	if (rc < 0 && rc != -ENOMEM)
		cli_msg("%s: write error: %s", cli_quotef(file), strerror(-rc));
	return rc;
}
