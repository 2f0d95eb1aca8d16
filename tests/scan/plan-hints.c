/* SPDX-License-Identifier: MIT */
/*
 * plan-hints: walk DIR..., plan every regular file through
 * sweep_plan_add_entry (order PHYSICAL) and print the plan in its sorted
 * order, one "<first byte or -> <inode> <path>" line per file; on stderr,
 * the process's metascan counts (walk_meta.c), so a test can tell which way
 * the plan went (raw hints or open + FIEMAP):
 *
 *   meta: plan_hinted=N plan_located=N plan_deep=N plan_sized=N hints_valid=N dirs_prefetched=N
 *         dir_keys=N table_bytes=N bulkstat_inodes=N
 *   plan: files=N bytes=N        (the plan's entries and the sum of their sizes)
 *
 *   plan-hints [--no-stat] [--plan-only] [--hint-files] [--auto] [--read] [--defer] [--copy] DIR...
 *
 * --no-stat walks with SWEEP_WALK_NO_STAT (as sweep-plan does on the HDD
 * class), --plan-only with SWEEP_WALK_PLAN_ONLY, --hint-files with
 * SWEEP_WALK_HINT_FILES. --auto plans and walks in order AUTO (on the SSD
 * class: the plan neither sorts nor locates) instead of PHYSICAL. --defer locates the files
 * the hints do not place when the plan is sorted, as sweep_batch does (files
 * whose first extent is in an extent-tree block by a raw sweep: plan_deep),
 * not as they are added. --read also reads every planned file and prints
 * "<status> <bytes> <path>" lines after the plan (status 0 or a
 * SWEEP_READ_* value or -errno; bytes as read, from the reader's fstat).
 * --copy plans a copy of each entry, made in the callback (the hints go with it).
 * Set SWEEP_METASCAN (off, on; unset: the library's default) and SWEEP_DEVICE as the test needs.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read.h"

struct ctx {
	struct sweep_plan *plan;
	int errors;
	int copy;
};

static int on_entry(const struct sweep_entry *e, void *vctx)
{
	struct ctx *c = vctx;

	if (e->stat_err || !S_ISREG(e->st.mode))
		return 0;
	struct sweep_entry copy = *e;
	int r = sweep_plan_add_entry(c->plan, c->copy ? &copy : e, 0);
	if (r < 0) {
		fprintf(stderr, "plan-hints: %s: %s\n", e->path, strerror(-r));
		c->errors++;
	}
	return 0;
}

static int on_error(const struct sweep_walk_error *err, void *vctx)
{
	struct ctx *c = vctx;

	fprintf(stderr, "plan-hints: %s: %s\n", err->path, strerror(-err->err));
	c->errors++;
	return 0;
}

static int on_data(const struct sweep_file *f, uint64_t offset, const void *buf, size_t len, void *vctx)
{
	(void)f, (void)offset, (void)buf, (void)len, (void)vctx;
	return 0;
}

static int on_end(const struct sweep_file *f, int status, void *vctx)
{
	(void)vctx;
	printf("read %d %" PRIu64 " %s\n", status, f->st.size, f->entry->path);
	return 0;
}

int main(int argc, char **argv)
{
	struct ctx c = { 0 };
	struct sweep_plan_opts po = { .size = sizeof(po), .order = SWEEP_ORDER_PHYSICAL };
	struct sweep_walk_opts wo = { .size = sizeof(wo), .order = SWEEP_ORDER_PHYSICAL };
	int i = 1, do_read = 0, defer = 0;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--no-stat"))
			wo.flags |= SWEEP_WALK_NO_STAT;
		else if (!strcmp(argv[i], "--plan-only"))
			wo.flags |= SWEEP_WALK_PLAN_ONLY;
		else if (!strcmp(argv[i], "--hint-files"))
			wo.flags |= SWEEP_WALK_HINT_FILES;
		else if (!strcmp(argv[i], "--auto"))
			po.order = wo.order = SWEEP_ORDER_AUTO;
		else if (!strcmp(argv[i], "--read"))
			do_read = 1;
		else if (!strcmp(argv[i], "--defer"))
			defer = 1;
		else if (!strcmp(argv[i], "--copy"))
			c.copy = 1;
		else {
			fprintf(stderr,
				"usage: plan-hints [--no-stat] [--plan-only] [--hint-files] [--auto] [--read] [--defer] "
				"[--copy] DIR...\n");
			return 2;
		}
	}
	if (i >= argc || sweep_plan_new(&po, &c.plan) < 0)
		return 2;
	/* as sweep_batch does: files without a usable hint are located when the plan is sorted */
	sweep__plan_defer_locate(c.plan, defer);
	wo.on_entry = on_entry;
	wo.on_error = on_error;
	wo.ctx = &c;
	int r = sweep_walk((const char *const *)argv + i, (size_t)(argc - i), &wo);
	if (r < 0) {
		fprintf(stderr, "plan-hints: walk: %s\n", strerror(-r));
		return 1;
	}
	sweep_plan_sort(c.plan);
	uint64_t bytes = 0;
	for (size_t k = 0; k < sweep_plan_count(c.plan); k++) {
		const struct sweep_plan_entry *e = sweep_plan_entry(c.plan, k);
		bytes += e->size;
		if (e->phys == SWEEP_NO_PHYS)
			printf("- %" PRIu64 " %s\n", e->ino, e->path);
		else
			printf("%" PRIu64 " %" PRIu64 " %s\n", e->phys, e->ino, e->path);
	}
	if (do_read) {
		struct sweep_reader *rd;
		struct sweep_reader_opts ro = { .size = sizeof(ro) };
		struct sweep_read_ops ops = { .size = sizeof(ops), .data = on_data, .end = on_end };
		if (sweep_reader_new(&ro, &rd) < 0 || sweep_reader_run(rd, c.plan, &ops, &c) < 0)
			return 1;
		sweep_reader_free(rd);
	}
	struct sweep__walk_meta_stats s;
	struct sweep__plan_stats ps;
	sweep__walk_meta_totals(&s);
	sweep__plan_totals(&ps);
	fprintf(stderr,
		"plan: files=%zu bytes=%" PRIu64 "\n"
		"meta: plan_hinted=%" PRIu64 " plan_located=%" PRIu64 " plan_deep=%" PRIu64 " plan_sized=%" PRIu64
		" hints_valid=%" PRIu64 " dirs_prefetched=%" PRIu64 " prefetch_bytes=%" PRIu64 " dir_keys=%" PRIu64
		" table_bytes=%" PRIu64 " bulkstat_inodes=%" PRIu64 "\n",
		sweep_plan_count(c.plan), bytes, ps.hinted, ps.located, ps.deep, ps.sized, s.hints_valid,
		s.dirs_prefetched, s.prefetch_bytes, s.dir_keys, s.table_bytes, s.bulkstat_inodes);
	sweep_plan_free(c.plan);
	return c.errors ? 1 : 0;
}
