/* SPDX-License-Identifier: MIT */
/*
 * rsync's listing: `sweep-sync [OPTION]... SRC` (one operand) or
 * --list-only lists the source entries, in rsync's file-list order and
 * its list_file_entry() format, instead of copying them:
 *
 *   drwxr-xr-x          4,096 2026/11/27 00:50:25 a
 *   lrwxrwxrwx              5 2026/11/27 00:50:25 a/link -> plain
 *
 * the permissions, the size (grouped by commas, 14 wide; 11 wide and plain
 * with --no-h; in units with -hh), the local modification time and the
 * name, escaped as rsync prints names. Without -r a directory's contents
 * are listed one level (rsync turns on -d). With --list-only a DEST may be
 * given: rsync lists the SRCs then and writes nothing there; neither does
 * this. The filter rules and the type options apply as to a transfer.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "sync.h"

static void list_entry(struct sync_ctx *c, const struct sync_node *n)
{
	const struct fst *st = &n->s.st;
	char perms[11], when[32], size[64];
	struct tm tm;
	time_t t = st->st_mtim.tv_sec;
	uint64_t len = S_ISREG(st->st_mode) || S_ISDIR(st->st_mode) || S_ISLNK(st->st_mode) ? (uint64_t)st->st_size : 0;

	cli_mode_string(st->st_mode, perms); /* rsync's permstring() */
	localtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y/%m/%d %H:%M:%S", &tm);
	if (c->o.human)
		snprintf(size, sizeof(size), "%s", report_num(c, len));
	else
		snprintf(size, sizeof(size), "%" PRIu64, len);
	printf("%s %*s %s ", perms, c->o.human ? 14 : 11, size, when);
	sync_put_name(c, stdout, n->rel);
	if (S_ISLNK(st->st_mode) && n->s.link && c->o.links) {
		fputs(" -> ", stdout);
		sync_put_name(c, stdout, n->s.link);
	}
	putchar('\n');
}

int sync_list_only(struct sync_ctx *c, char **ops, int nsrc)
{
	/* nothing is received: the source alone is walked, as a remote transfer's sender walks it */
	struct sync_dest d = { .dst = strdup("."), .arg = "." };
	int code = 0, e;

	if (!d.dst) {
		cli_msg("out of memory");
		return EXIT_PARTIAL;
	}
	c->role = ROLE_SENDER;
	/* rsync's first line with -v: incremental with -r, else the whole list first */
	if (c->o.info_flist > 0 && c->o.recursive)
		sync_list_header(c, false);
	else if (c->o.info_flist > 0)
		puts("building file list ... done");
	code = sync_add_operands(c, &d, ops, nsrc);
	if (!code && c->nroots) {
		sync_modify_window = c->o.modify_window;
		e = flist_scan(c);
		if (c->filter_fatal) {
			code = c->filter_fatal;
		} else if (e < 0) {
			cli_error(e, "scanning the file list");
			c->errors++;
		}
	}
	for (size_t i = 0; !code && i < c->list.n; i++)
		if (c->list.v[i].flags & N_SRC)
			list_entry(c, &c->list.v[i]);
	/* the names the options leave out are not listed, nor said */
	for (size_t i = 0; i < c->nskips; i++)
		free(c->skips[i].rel);
	c->nskips = 0;
	if (!code && c->o.stats >= 1)
		report_summary(c, &c->start);
	free(d.dst);
	if (code)
		return code;
	c->errors += (unsigned long)d.missing;
	if (c->errors) {
		cli_msg("some files/attrs were not transferred (see previous errors) (code %d)", EXIT_PARTIAL);
		return EXIT_PARTIAL;
	}
	if (c->vanished) {
		cli_msg("some files vanished before they could be transferred (code %d)", EXIT_VANISHED);
		return EXIT_VANISHED;
	}
	return 0;
}
