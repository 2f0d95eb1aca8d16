/* SPDX-License-Identifier: MIT */
/*
 * copy: the directories one sweep_copy_tree() made (fresh), so that the
 * files planned into them are not looked for at their destination names.
 *
 * Why: a directory this walk made holds nothing but what this walk put in
 * it, and the walk names each destination once; the look (an fstatat that
 * finds nothing) was one call a file on the caller's thread, 46,815 on the
 * aged linux-lite tree. Only this walk's: another operand's walk may merge
 * into a directory an earlier one made (cp -R a/d b/d dst), and finds what
 * that one put there.
 *
 * Not a promise of what stands there: a name that appears meanwhile (or a
 * directory swapped in at that path) is met when the copy is named, as one
 * that appears after a look would be: link refuses it, and it is replaced
 * (backed up, or refused with no-clobber) by the rename path
 * (copy_write.c). The directory must also still look made by this run:
 * owner-only and ours (its mode is set at the end, copy_dirs.c).
 *
 * An open-addressing set of indexes into c->dirs, keyed by their names.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "copy_internal.h"

/* A name without trailing slashes: its length. */
static size_t trimmed(const char *s, size_t n)
{
	while (n > 1 && s[n - 1] == '/')
		n--;
	return n;
}

void sweep__fresh_begin(struct sweep_copy *c)
{
	c->fresh_from = c->ndirs;
	c->fresh_on = true;
	c->fresh_count = 0;
	if (c->fresh)
		memset(c->fresh, 0xff, c->fresh_cap * sizeof(*c->fresh));
	c->fresh_gen = 0; /* no answer kept from another walk */
}

void sweep__fresh_end(struct sweep_copy *c)
{
	c->fresh_on = false;
	free(c->fresh);
	c->fresh = NULL;
	c->fresh_cap = c->fresh_count = 0;
	c->fresh_gen = 0;
}

static void put(size_t *set, size_t cap, const struct dirmeta *dirs, size_t idx)
{
	const char *d = dirs[idx].dst;
	size_t i = sweep__name_hash(d, trimmed(d, strlen(d))) & (cap - 1);

	while (set[i] != SIZE_MAX)
		i = (i + 1) & (cap - 1);
	set[i] = idx;
}

void sweep__fresh_add(struct sweep_copy *c, size_t idx)
{
	if (!c->fresh_on)
		return;
	if ((c->fresh_count + 1) * 2 > c->fresh_cap) {
		size_t cap = c->fresh_cap ? c->fresh_cap * 2 : 256;
		size_t *set = malloc(cap * sizeof(*set));
		if (!set)
			return; /* not remembered: its files are looked for, as before */
		memset(set, 0xff, cap * sizeof(*set));
		for (size_t i = 0; i < c->fresh_cap; i++)
			if (c->fresh[i] != SIZE_MAX)
				put(set, cap, c->dirs, c->fresh[i]);
		free(c->fresh);
		c->fresh = set;
		c->fresh_cap = cap;
	}
	put(c->fresh, c->fresh_cap, c->dirs, idx);
	c->fresh_count++;
}

bool sweep__fresh_dir(struct sweep_copy *c, const struct dest_cache *dc)
{
	if (!c->fresh_on || !c->fresh_count || dc->fd < 0)
		return false;
	if (c->fresh_gen == dc->gen)
		return c->fresh_is;
	bool found = false;
	size_t n = trimmed(dc->dir, dc->len);
	for (size_t i = sweep__name_hash(dc->dir, n) & (c->fresh_cap - 1); !found && c->fresh[i] != SIZE_MAX;
	     i = (i + 1) & (c->fresh_cap - 1)) {
		const struct dirmeta *d = &c->dirs[c->fresh[i]];
		found = c->fresh[i] >= c->fresh_from && d->created && trimmed(d->dst, strlen(d->dst)) == n &&
			!memcmp(d->dst, dc->dir, n);
	}
	c->fresh_is = found && S_ISDIR(dc->st.st_mode) && (dc->st.st_mode & 07777) == 0700 && dc->st.st_uid == c->euid;
	c->fresh_gen = dc->gen;
	return c->fresh_is;
}
