/* SPDX-License-Identifier: MIT */
/* sweep-du: the entry store and its replay order (see du.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "du.h"

/* gnulib fts: _FTS_INODE_SORT_DIR_ENTRIES_THRESHOLD and FTS_MAX_READDIR_ENTRIES */
#define FTS_SORT_THRESHOLD 10000u
#define FTS_BATCH 100000u

static size_t map_slot(uint64_t a, uint64_t b, size_t cap)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull) * 0xc2b2ae3d27d4eb4full;
	h ^= h >> 29;
	return (size_t)h & (cap - 1);
}

uint32_t du_map_get(const struct du_map *m, uint64_t a, uint64_t b)
{
	if (!m->cap)
		return DU_NONE;
	for (size_t i = map_slot(a, b, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (m->vals[i] == DU_NONE)
			return DU_NONE;
		if (m->keys[2 * i] == a && m->keys[2 * i + 1] == b)
			return m->vals[i];
	}
}

static int map_grow(struct du_map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 1024;
	uint64_t *keys = malloc(cap * 2 * sizeof(*keys));
	uint32_t *vals = malloc(cap * sizeof(*vals));

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	memset(vals, 0xff, cap * sizeof(*vals));
	for (size_t i = 0; i < m->cap; i++) {
		if (m->vals[i] == DU_NONE)
			continue;
		size_t j = map_slot(m->keys[2 * i], m->keys[2 * i + 1], cap);
		while (vals[j] != DU_NONE)
			j = (j + 1) & (cap - 1);
		keys[2 * j] = m->keys[2 * i];
		keys[2 * j + 1] = m->keys[2 * i + 1];
		vals[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = cap;
	return 0;
}

int du_map_put(struct du_map *m, uint64_t a, uint64_t b, uint32_t val, uint32_t *old)
{
	size_t i;

	if ((m->n + 1) * 4 > m->cap * 3 && map_grow(m) < 0)
		return -ENOMEM;
	for (i = map_slot(a, b, m->cap); m->vals[i] != DU_NONE; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[2 * i] == a && m->keys[2 * i + 1] == b) {
			if (old)
				*old = m->vals[i];
			return 0;
		}
	}
	m->keys[2 * i] = a;
	m->keys[2 * i + 1] = b;
	m->vals[i] = val;
	m->n++;
	return 1;
}

void du_map_clear(struct du_map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

int du_grow(void *pp, size_t *cap, size_t need, size_t elem)
{
	void **p = pp;
	size_t c = *cap ? *cap : 16;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	void *np = realloc(*p, c * elem);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = c;
	return 0;
}

uint32_t du_tree_add(struct du_tree *t, const struct du_node *tmpl, const char *name)
{
	size_t len = strlen(name) + 1;

	if (t->n == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 4096;
		struct du_node *nn = cap > t->cap ? realloc(t->nodes, (size_t)cap * sizeof(*nn)) : NULL;
		if (!nn)
			return DU_NONE;
		t->nodes = nn;
		t->cap = cap;
	}
	if (t->names_len + len > t->names_cap) {
		uint64_t cap = t->names_cap ? t->names_cap * 2 : 65536;
		while (cap < t->names_len + len)
			cap *= 2;
		char *nb = realloc(t->names, cap);
		if (!nb)
			return DU_NONE;
		t->names = nb;
		t->names_cap = cap;
	}
	memcpy(t->names + t->names_len, name, len);
	t->nodes[t->n] = *tmpl;
	t->nodes[t->n].name = t->names_len;
	t->names_len += len;
	return t->n++;
}

uint32_t du_tree_dev(struct du_tree *t, uint64_t dev)
{
	/* few filesystems per run: a short list beats a hash */
	for (uint32_t i = t->ndevs; i-- > 0;)
		if (t->devs[i] == dev)
			return i;
	uint64_t *nd = realloc(t->devs, (t->ndevs + 1) * sizeof(*nd));
	if (!nd)
		return DU_NONE;
	t->devs = nd;
	t->devs[t->ndevs] = dev;
	return t->ndevs++;
}

static int by_index(const void *a, const void *b, void *arg)
{
	const struct du_node *n = arg;
	uint32_t x = n[*(const uint32_t *)a].index, y = n[*(const uint32_t *)b].index;
	return (x > y) - (x < y);
}

struct ino_key {
	uint64_t ino;
	uint32_t index, node;
};

/* Inode order; readdir order breaks ties, as glibc's (merge sort) qsort keeps them. */
static int by_ino(const void *a, const void *b)
{
	const struct ino_key *x = a, *y = b;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
}

static int sort_by_ino(struct du_tree *t, uint32_t dir, uint32_t *k, uint32_t cnt, du_dino_fn *dino,
		       void *ctx)
{
	uint64_t *keys = malloc((size_t)cnt * sizeof(*keys));
	struct ino_key *v = malloc((size_t)cnt * sizeof(*v));

	if (!keys || !v) {
		free(keys);
		free(v);
		return -ENOMEM;
	}
	for (uint32_t j = 0; j < cnt; j++)
		keys[j] = t->nodes[k[j]].ino;
	if (dino)
		dino(t, dir, k, cnt, keys, ctx);
	for (uint32_t off = 0; off < cnt; off += FTS_BATCH) {
		uint32_t len = cnt - off < FTS_BATCH ? cnt - off : FTS_BATCH;
		if (len <= FTS_SORT_THRESHOLD)
			continue;
		for (uint32_t j = 0; j < len; j++)
			v[j] = (struct ino_key){ keys[off + j], t->nodes[k[off + j]].index, k[off + j] };
		qsort(v, len, sizeof(*v), by_ino);
		for (uint32_t j = 0; j < len; j++)
			k[off + j] = v[j].node;
	}
	free(keys);
	free(v);
	return 0;
}

/*
 * Node ids ordered by their position in their parent's getdents64 stream
 * (a counting sort; equal positions keep node order), or NULL when the
 * positions are too sparse for it (more than a few times the nodes) or
 * memory is short.
 */
static uint32_t *by_position(const struct du_tree *t)
{
	uint32_t max = 0, *count, *out;

	for (uint32_t i = 0; i < t->n; i++) /* roots too: their index is their operand's */
		if (t->nodes[i].index > max)
			max = t->nodes[i].index;
	if (max > 4 * (uint64_t)t->n + 1024)
		return NULL;
	count = calloc((size_t)max + 2, sizeof(*count));
	out = malloc(((size_t)t->n + 1) * sizeof(*out));
	if (!count || !out) {
		free(count);
		free(out);
		return NULL;
	}
	for (uint32_t i = 0; i < t->n; i++)
		count[t->nodes[i].index + 1]++;
	for (uint32_t p = 0; p <= max; p++)
		count[p + 1] += count[p];
	for (uint32_t i = 0; i < t->n; i++)
		out[count[t->nodes[i].index]++] = i;
	free(count);
	return out;
}

int du_tree_order(struct du_tree *t, bool sort_any, du_dino_fn *dino, void *ctx)
{
	uint32_t *fill, *order;

	t->first = calloc((size_t)t->n + 2, sizeof(*t->first));
	t->kids = malloc(((size_t)t->n + 1) * sizeof(*t->kids));
	fill = malloc(((size_t)t->n + 1) * sizeof(*fill));
	if (!t->first || !t->kids || !fill) {
		free(fill);
		return -ENOMEM;
	}
	/*
	 * A counting sort by parent of the nodes taken in position order: each
	 * directory's children come out in readdir order at once. (Sorting each
	 * directory's children with qsort_r was a quarter of sweep-du's user
	 * instructions on /usr/share: the walk hands them out by inode.)
	 */
	order = by_position(t);
	for (uint32_t i = 0; i < t->n; i++)
		if (t->nodes[i].parent != DU_NONE)
			t->first[t->nodes[i].parent + 1]++;
	for (uint32_t i = 0; i < t->n; i++)
		t->first[i + 1] += t->first[i];
	memcpy(fill, t->first, (size_t)t->n * sizeof(*fill));
	for (uint32_t j = 0; j < t->n; j++) {
		uint32_t i = order ? order[j] : j;
		if (t->nodes[i].parent != DU_NONE)
			t->kids[fill[t->nodes[i].parent]++] = i;
	}
	free(fill);
	for (uint32_t p = 0; p < t->n; p++) {
		uint32_t *k = t->kids + t->first[p];
		uint32_t cnt = t->first[p + 1] - t->first[p];
		if (cnt < 2)
			continue;
		if (!order)
			qsort_r(k, cnt, sizeof(*k), by_index, t->nodes);
		if (cnt > FTS_SORT_THRESHOLD && (sort_any || (t->nodes[p].flags & DU_SORTFS)) &&
		    sort_by_ino(t, p, k, cnt, dino, ctx) < 0) {
			free(order);
			return -ENOMEM;
		}
	}
	free(order);
	return 0;
}

int du_tree_path(const struct du_tree *t, uint32_t i, char **buf, size_t *cap)
{
	size_t len = 0, pos;

	for (uint32_t j = i; j != DU_NONE; j = t->nodes[j].parent)
		len += strlen(du_name(t, j)) + 1;
	if (du_grow(buf, cap, len + 1, 1) < 0)
		return -ENOMEM;
	pos = len;
	(*buf)[--pos] = 0;
	for (uint32_t j = i; j != DU_NONE; j = t->nodes[j].parent) {
		size_t nl = strlen(du_name(t, j));
		pos -= nl;
		memcpy(*buf + pos, du_name(t, j), nl);
		if (pos > 0)
			(*buf)[--pos] = '/';
	}
	return 0;
}

void du_tree_free(struct du_tree *t)
{
	free(t->nodes);
	free(t->names);
	free(t->devs);
	free(t->first);
	free(t->kids);
	memset(t, 0, sizeof(*t));
}
