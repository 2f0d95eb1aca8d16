/* SPDX-License-Identifier: MIT */
/*
 * sweep-du: the report. The collected tree is walked depth first in the
 * order GNU du's fts would have met it; sizes add up into each directory's
 * line, hard links and directories met twice count once (the first time du
 * would meet them), and the walk's failures are printed where du prints them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "exclude.h"
#include "du.h"

static int err_cmp(const void *a, const void *b)
{
	return strcmp(((const struct err *)a)->path, ((const struct err *)b)->path);
}

static struct err *find_err(struct du *du, const char *path, bool dir_errors)
{
	struct err key = { .path = (char *)path }, *e;

	if (!du->nerrs)
		return NULL;
	e = bsearch(&key, du->errs, du->nerrs, sizeof(key), err_cmp);
	if (!e)
		return NULL;
	/* several failures may share a path: find one of the wanted kind */
	while (e > du->errs && strcmp(e[-1].path, path) == 0)
		e--;
	for (; e < du->errs + du->nerrs && strcmp(e->path, path) == 0; e++) {
		bool is_dir_err = e->op == SWEEP_WALK_OP_OPENDIR || e->op == SWEEP_WALK_OP_READDIR;
		if (is_dir_err == dir_errors)
			return e;
	}
	return NULL;
}

/*
 * A directory du does not enter (met before, or a -L cycle): failures the
 * walk met at or below it are not du's to report.
 */
static void drop_errs_below(struct du *du, const char *path)
{
	size_t lo = 0, hi = du->nerrs, pl = strlen(path);

	while (lo < hi) { /* first error not sorting before path */
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(du->errs[mid].path, path) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < du->nerrs && strncmp(du->errs[lo].path, path, pl) == 0; lo++) {
		char next = du->errs[lo].path[pl];
		if (next == 0 || next == '/' || (pl && path[pl - 1] == '/'))
			du->errs[lo].used = true;
	}
}

static void print_err(const struct err *e, const char *path, bool partial)
{
	switch (e->op) {
	case SWEEP_WALK_OP_OPENDIR:
	case SWEEP_WALK_OP_READDIR:
		if (partial) /* fts FTS_ERR: some entries were read */
			cli_msg("%s: %s", cli_quotef(path), strerror(e->err));
		else
			cli_msg("cannot read directory %s: %s", cli_quote(path), strerror(e->err));
		break;
	default:
		if (e->err)
			cli_msg("cannot access %s: %s", cli_quote(path), strerror(e->err));
		else
			cli_msg("cannot access %s", cli_quote(path));
	}
}

/* What a line reports: a size (or inode count) and, for --time, the newest time. */
struct val {
	uint64_t v;
	struct timespec t;
};

#define VAL_ZERO ((struct val){ 0, { INT64_MIN, -1 } })

static void val_add(struct val *a, const struct val *b)
{
	a->v += b->v;
	if (b->t.tv_sec > a->t.tv_sec || (b->t.tv_sec == a->t.tv_sec && b->t.tv_nsec > a->t.tv_nsec))
		a->t = b->t;
}

static struct val own_val(const struct du *du, uint32_t i)
{
	struct val v = VAL_ZERO;

	v.v = du->o.inodes ? 1 : du->tree.nodes[i].size;
	if (du->times)
		v.t = du->times[i];
	return v;
}

static void print_line(struct du *du, const struct val *val, const char *path)
{
	char buf[256];
	uint64_t v = val->v;

	if (du->o.export_file && !strcmp(du->o.export_file, "-"))
		return; /* the export takes standard output */
	if (du->o.threshold < 0 ? v > (uint64_t)-du->o.threshold : v < (uint64_t)du->o.threshold)
		return;
	fputs(du_units_format(v, &du->o.units, buf), stdout);
	if (du->o.time) {
		putchar('\t');
		if (du_time_format(buf, sizeof(buf), du->o.time_format, val->t) < 0)
			cli_msg("time %s is out of range", cli_quote_locale(buf));
		fputs(buf, stdout);
	}
	putchar('\t');
	fputs(path, stdout);
	putchar(du->o.nul ? '\0' : '\n');
	fflush(stdout); /* as du: each line as it is done, and write errors as du sees them */
}

struct frame {
	uint32_t node, kid, end;
	size_t pathlen;
	struct val sum; /* what the directory's line adds up from its entries */
};

struct replay {
	struct du *du;
	struct du_map seen;   /* dev/ino already counted */
	struct du_map canon;  /* -L: dev/ino -> the node whose children the walk recorded */
	struct frame *stack;
	size_t depth, stack_cap;
	char *path;
	size_t path_cap;
	struct val total;
	bool hash_all;
};

static int path_push(struct replay *r, size_t base, const char *name)
{
	size_t nl = strlen(name), need = base + nl + 2;
	bool slash = base > 0 && r->path[base - 1] != '/';

	if (du_grow(&r->path, &r->path_cap, need, 1) < 0)
		return -ENOMEM;
	if (slash)
		r->path[base++] = '/';
	memcpy(r->path + base, name, nl + 1);
	return 0;
}

static void kids_of(struct replay *r, uint32_t i, uint32_t *begin, uint32_t *end)
{
	const struct du_tree *t = &r->du->tree;

	if (t->first[i] == t->first[i + 1] && r->canon.n) {
		uint32_t c = du_map_get(&r->canon, t->nodes[i].dev, t->nodes[i].ino);
		if (c != DU_NONE)
			i = c;
	}
	*begin = t->first[i];
	*end = t->first[i + 1];
}

static bool on_stack(const struct replay *r, const struct du_node *n)
{
	for (size_t d = 0; d < r->depth; d++) {
		const struct du_node *a = &r->du->tree.nodes[r->stack[d].node];
		if (a->dev == n->dev && a->ino == n->ino)
			return true;
	}
	return false;
}

/* Count a finished entry into its parent's line and print it when du would. */
static void finish(struct replay *r, uint32_t i, const struct val *value, size_t level)
{
	struct du *du = r->du;
	bool dir = du->tree.nodes[i].flags & DU_DIR;
	struct val own = own_val(du, i);

	/* -S: a subdirectory's line does not add into its parent's */
	if (r->depth > 0 && !(du->o.separate && dir))
		val_add(&r->stack[r->depth - 1].sum, value);
	val_add(&r->total, &own);
	if ((dir && level <= du->o.max_depth) || (du->o.all && level <= du->o.max_depth) || level == 0)
		print_line(du, value, r->path);
}

/* Enter node i at the current depth; 1 if it is a directory now on the stack. */
static int enter(struct replay *r, uint32_t i)
{
	struct du *du = r->du;
	const struct du_node *n = &du->tree.nodes[i];
	size_t base = r->depth ? r->stack[r->depth - 1].pathlen : 0;
	bool dir = n->flags & DU_DIR;
	int ret;

	ret = path_push(r, base, du_name(&du->tree, i));
	if (ret < 0)
		return ret;
	if (n->flags & DU_NOSTAT) {
		struct err *e = find_err(du, r->path, false);
		struct err fake = { .op = SWEEP_WALK_OP_STAT, .err = (int)n->size };
		if (e)
			e->used = true;
		print_err(&fake, r->path, false);
		du->ok = false;
		return 0;
	}
	if (dir && du->o.follow == FOLLOW_ALL && du->o.count_links && on_stack(r, n)) {
		drop_errs_below(du, r->path);
		return 0; /* fts FTS_DC under -L: skipped without a word */
	}
	if (!du->o.count_links && (r->hash_all || (!dir && (n->flags & DU_MULTI)))) {
		ret = du_map_put(&r->seen, n->dev, n->ino, i, NULL);
		if (ret < 0)
			return ret;
		if (ret == 0) {
			/* already counted: a hard link, or a directory seen before */
			if (dir && du->nerrs)
				drop_errs_below(du, r->path);
			return 0;
		}
	}
	if (!dir) {
		struct val own = own_val(du, i);
		finish(r, i, &own, r->depth);
		return 0;
	}
	if (du_grow(&r->stack, &r->stack_cap, r->depth + 1, sizeof(*r->stack)) < 0)
		return -ENOMEM;
	struct frame *f = &r->stack[r->depth++];
	*f = (struct frame){ .node = i, .pathlen = strlen(r->path), .sum = VAL_ZERO };
	kids_of(r, i, &f->kid, &f->end);
	return 1;
}

/* Leave the directory on top of the stack: its error, then its line. */
static void leave(struct replay *r)
{
	struct du *du = r->du;
	struct frame f = r->stack[--r->depth];
	struct val v = own_val(du, f.node);
	struct err *e;

	r->path[f.pathlen] = 0;
	e = find_err(du, r->path, true);
	if (e) {
		e->used = true;
		print_err(e, r->path, f.end > du->tree.first[f.node]);
		du->ok = false;
	}
	val_add(&v, &f.sum);
	finish(r, f.node, &v, r->depth);
}

static int replay_root(struct replay *r, uint32_t root_node)
{
	int ret = enter(r, root_node);

	if (ret <= 0)
		return ret;
	while (r->depth > 0) {
		struct frame *f = &r->stack[r->depth - 1];
		if (f->kid == f->end) {
			leave(r);
			continue;
		}
		ret = enter(r, r->du->tree.kids[f->kid++]);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int build_canon(struct replay *r)
{
	const struct du_tree *t = &r->du->tree;

	for (uint32_t i = 0; i < t->n; i++) {
		if (!(t->nodes[i].flags & DU_DIR) || t->first[i] == t->first[i + 1])
			continue;
		if (du_map_put(&r->canon, t->nodes[i].dev, t->nodes[i].ino, i, NULL) < 0)
			return -ENOMEM;
	}
	return 0;
}

int du_replay(struct du *du)
{
	struct replay r = { .du = du, .total = VAL_ZERO };
	int ret = 0;

	/* du hashes every dev/ino when one file may be met twice */
	r.hash_all = du->nops > 1 || du->o.files0 || du->o.follow == FOLLOW_ALL;
	if (du->nerrs)
		qsort(du->errs, du->nerrs, sizeof(*du->errs), err_cmp);
	if (du->o.follow == FOLLOW_ALL)
		ret = build_canon(&r);
	for (size_t k = 0; k < du->nops && ret == 0; k++) {
		size_t i = du->ops[k].root;
		if (i == DU_NONE) {
			if (du->ops[k].dash)
				cli_msg("when reading file names from stdin, no file name of %s allowed",
					cli_quote("-"));
			else if (du->ops[k].number)
				cli_msg("%s:%lu: invalid zero-length file name", cli_quotef(du->o.files0),
					du->ops[k].number);
			else
				cli_msg("invalid zero-length file name");
			du->ok = false;
			continue;
		}
		if (du->root_node[i] != DU_NONE) {
			ret = replay_root(&r, du->root_node[i]);
			continue;
		}
		if (exclude_count(du->o.exclude) && exclude_match(du->o.exclude, du->roots[i], NULL, false))
			continue;
		struct err *e = find_err(du, du->roots[i], false);
		if (!e)
			e = find_err(du, du->roots[i], true);
		if (e) {
			e->used = true;
			print_err(e, du->roots[i], false);
			du->ok = false;
		}
	}
	/* failures the replay had no place for still count */
	for (size_t i = 0; i < du->nerrs && ret == 0; i++) {
		if (!du->errs[i].used) {
			print_err(&du->errs[i], du->errs[i].path, false);
			du->ok = false;
		}
	}
	if (ret == 0 && du->o.total)
		print_line(du, &r.total, "total");
	du_map_clear(&r.seen);
	du_map_clear(&r.canon);
	free(r.stack);
	free(r.path);
	return ret;
}

