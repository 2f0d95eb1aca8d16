/* SPDX-License-Identifier: MIT */
/*
 * Ordered output. sweep-sync decides entries in rsync's file-list order,
 * but a regular file's line is only due when the copy engine has written
 * it, and the engine writes in physical order. Lines are therefore kept
 * per entry and printed in list order, as soon as every entry before them
 * is settled: two runs over the same trees print the same lines in the
 * same order (rsync's name order), whatever the disk layout, and scripts
 * can diff them. What waits is at most the lines of one batch of the
 * engine (or, with -H, of the entries after a hard link that waits for
 * its group's first copy).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "progress.h"
#include "sync.h"

int out_init(struct sync_ctx *c)
{
	size_t n = c->list.n ? c->list.n : 1;

	c->out.text = calloc(n, sizeof(*c->out.text));
	c->out.len = calloc(n, sizeof(*c->out.len));
	c->out.log = calloc(n, sizeof(*c->out.log));
	c->out.loglen = calloc(n, sizeof(*c->out.loglen));
	c->out.next = c->out.decided = 0;
	return c->out.text && c->out.len && c->out.log && c->out.loglen ? 0 : -ENOMEM;
}

static bool settled(const struct sync_node *n)
{
	return !(n->flags & (N_QUEUED | N_HL_WAIT));
}

static void print_up_to(struct sync_ctx *c, size_t end, bool force)
{
	struct sync_out *o = &c->out;

	while (o->next < end && (force || settled(&c->list.v[o->next]))) {
		if (o->text[o->next]) {
			progress_clear(c->prog);
			fwrite(o->text[o->next], 1, o->len[o->next], stdout);
			free(o->text[o->next]);
			o->text[o->next] = NULL;
		}
		if (o->log[o->next]) {
			synclog_write(o->log[o->next], o->loglen[o->next]);
			free(o->log[o->next]);
			o->log[o->next] = NULL;
		}
		o->next++;
	}
}

/* Keep text for slot idx of v (sizes in lens): false when it cannot wait (no order to keep, or no memory). */
static bool keep(struct sync_ctx *c, char **v, size_t *lens, size_t idx, const char *text, size_t len)
{
	struct sync_out *o = &c->out;

	/*
	 * No order to keep (before the apply phase, or already past it), or
	 * --progress, whose lines follow each file as it is written: its name
	 * is printed right above them.
	 */
	if (!v || idx >= c->list.n || idx < o->next || c->o.progress == 1)
		return false;
	char *t = realloc(v[idx], lens[idx] + len);
	if (!t)
		return false; /* out of memory: out of order rather than lost */
	memcpy(t + lens[idx], text, len);
	v[idx] = t;
	lens[idx] += len;
	print_up_to(c, o->decided, false);
	return true;
}

void out_add(struct sync_ctx *c, size_t idx, const char *text, size_t len)
{
	if (!keep(c, c->out.text, c->out.len, idx, text, len)) {
		progress_clear(c->prog);
		fwrite(text, 1, len, stdout);
	}
}

void out_add_log(struct sync_ctx *c, size_t idx, const char *text, size_t len)
{
	/* kept with its NUL: a slot's records stay apart (synclog_write), whatever newlines the names hold */
	if (!keep(c, c->out.log, c->out.loglen, idx, text, len + 1))
		synclog_record(text, len);
}

void out_decided(struct sync_ctx *c, size_t n)
{
	if (n > c->out.decided)
		c->out.decided = n;
	if (c->out.text)
		print_up_to(c, c->out.decided, false);
}

void out_settled(struct sync_ctx *c)
{
	if (c->out.text)
		print_up_to(c, c->out.decided, false);
}

void out_drain(struct sync_ctx *c)
{
	struct sync_out *o = &c->out;

	if (!o->text)
		return;
	print_up_to(c, c->list.n, true);
	free(o->text);
	free(o->len);
	free(o->log);
	free(o->loglen);
	o->text = o->log = NULL;
	o->len = o->loglen = NULL;
}
