/* SPDX-License-Identifier: MIT */
/*
 * The walk layer (lib/walk/), for the layers above it: what the walk read
 * of an entry raw, which the entry carries to the plan, and the walk's
 * counts for tests. The walk's own workings are in walk_impl.h. Internal
 * to libsweep.
 */
#ifndef SWEEP_WALK_LAYER_H
#define SWEEP_WALK_LAYER_H

#include "metascan.h"

/*
 * walk_meta.c, for plan.c: what the walk knows of an entry beyond struct
 * sweep_entry, which points at it (sweep_entry.hint) while it is handed out.
 */
struct walk;
struct frame;
struct sweep_entry_hint {
	bool stated;    /* the walk stat'ed it: entry->st is the filesystem's answer */
	bool have_hint; /* a raw inode hint agreed with the walk: phys and size are sort keys, never output */
	bool deep;      /* it agreed, but the first extent is in a tree block not read yet (SWEEP__HINT_DEEP) */
	/*
	 * Not read: the inode lies in tables the walk's engine (on device dev)
	 * has in the cache. A plan that locates it at sort time by its own
	 * raw sweep on that device leaves it so; any other use asks for it
	 * now (sweep__walk_entry_hint_now), through the walk's own state below.
	 */
	bool lazy;
	/* Not stat'ed, and its raw inode gives its size (in size): SWEEP_WALK_HINT_FILES's files, sized without a stat. */
	bool have_size;
	uint64_t dev;
	uint64_t phys, size;
	/* Where the walk holds the entry (listing entry i of frame f, stat'ed as st): for a lazy hint's read. */
	struct walk *w;
	struct frame *f;
	size_t i;
	const struct stat *st;
};
/* eh (an entry's hint), its inode read now if it was lazy: the same hint, no longer lazy. During the callback only. */
const struct sweep_entry_hint *sweep__walk_entry_hint_now(const struct sweep_entry_hint *eh);

/* Counts over every walk of the process, for tests and measurements (walk_meta.c). */
struct sweep__walk_meta_stats {
	uint64_t dirs_prefetched, prefetch_bytes, prefetch_requests;
	uint64_t hints_asked, hints_valid, hints_offered, dir_keys;
	uint64_t bulkstat_inodes; /* inodes an xfs bulkstat sweep read ahead of the walk */
	uint64_t table_bytes;     /* inode table bytes an ext4 sweep read ahead of the walk */
};
void sweep__walk_meta_totals(struct sweep__walk_meta_stats *ret);

/* walk_ahead.c: directories the walk's read-ahead threads loaded in this process (for tests). */
uint64_t sweep__walk_ahead_loaded(void);
/* walk_table.c: files whose stat came from an xfs bulkstat table in this process (for tests). */
uint64_t sweep__walk_table_stats(void);
/* walk.c: directories the walk opened for FIEMAP to key them in this process (for tests). */
uint64_t sweep__walk_dir_fiemaps(void);

#endif
