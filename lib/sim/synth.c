/* SPDX-License-Identifier: MIT */
/*
 * Synthetic workloads, all driven by an explicit splitmix64 state:
 *
 *  random4k   the seed's method: 4 KiB reads uniformly over the disk
 *  seqread/seqwrite    request_size requests one after another, wrapping
 *  randread/randwrite  request_size requests aligned to request_size
 *  postmark   a Postmark-like mix: 1000 files of 1-32 KiB in a 64 MiB file
 *             set; each transaction reads a whole file or writes one
 *             (half of the writes re-create the file somewhere else)
 *  postmark-fs  Postmark as the block layer sees it under a file system
 *             (block-level-optimization-io-path.txt, workload SS): 10,000
 *             files of 9-15 KB; reads of whole files, writes cut into 4 KiB
 *             requests as ext3 and ReiserFS send them; four streams take
 *             turns, so one file's pieces do not arrive one after the other
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

enum pat { P_RANDOM4K, P_SEQREAD, P_SEQWRITE, P_RANDREAD, P_RANDWRITE, P_POSTMARK, P_POSTMARK_FS };
static const char *const pat_names[] = { "random4k", "seqread", "seqwrite", "randread", "randwrite", "postmark",
					 "postmark-fs" };

#define PM_FILES 1000
#define PM_SET (64 * MIB)
/* postmark-fs: the SS workload's files, and the streams whose requests interleave */
#define PF_FILES 10000
#define PF_STREAMS 4

/* One stream of postmark-fs: the rest of its current transaction, as 4 KiB pieces or one read. */
struct pf_stream {
	uint64_t off, left; /* next byte and bytes left of the transaction */
	uint8_t op;
}; 

struct pm_file {
	uint64_t off, len;
};

struct sweep_sim_synth {
	enum pat pat;
	uint64_t size, cap, count, n, rng, pos;
	uint64_t set_base, set_len;
	struct pm_file *files;
	unsigned nfiles;
	struct pf_stream streams[PF_STREAMS];
	unsigned turn;
};

static void pm_place(struct sweep_sim_synth *g, struct pm_file *f)
{
	if (g->pat == P_POSTMARK_FS) /* 9-15 KB of data in 4 KiB blocks */
		f->len = (9000 + sim_rand_below(&g->rng, 6001) + 4095) / 4096 * 4096;
	else
		f->len = (1 + sim_rand_below(&g->rng, 8)) * 4096;
	f->off = g->set_base + sim_rand_below(&g->rng, (g->set_len - f->len) / 4096 + 1) * 4096;
}

/*
 * The next transaction of a postmark-fs stream: 30% read a whole file, 35%
 * create one (delete and create: a new place, all of it written), 35%
 * append (its last 4-8 KiB rewritten).
 */
static void pf_next(struct sweep_sim_synth *g, struct pf_stream *st)
{
	struct pm_file *f = &g->files[sim_rand_below(&g->rng, g->nfiles)];
	uint64_t roll = sim_rand_below(&g->rng, 20);
	if (roll < 6) {
		*st = (struct pf_stream){ f->off, f->len, SWEEP_SIM_READ };
		return;
	}
	if (roll < 13) {
		pm_place(g, f);
		*st = (struct pf_stream){ f->off, f->len, SWEEP_SIM_WRITE };
		return;
	}
	uint64_t tail = f->len > 4096 ? 4096 * (1 + sim_rand_below(&g->rng, 2)) : 4096;
	*st = (struct pf_stream){ f->off + f->len - tail, tail, SWEEP_SIM_WRITE };
}

SWEEP_EXPORT int sweep_sim_synth_new(const struct sweep_sim_synth_options *opts, struct sweep_sim_synth **ret)
{
	struct sweep_sim_synth_options so;
	const struct sweep_sim_synth_options *o = &so;
	if (!opts || !ret)
		return -EINVAL;
	int err = sweep__opts_copy(&so, sizeof(so), opts, SIM_MIN);
	if (err)
		return err;
	if (!o->capacity)
		return -EINVAL;
	int pat = -1;
	const char *name = o->pattern ? o->pattern : "random4k";
	for (unsigned i = 0; i < sizeof(pat_names) / sizeof(pat_names[0]); i++)
		if (strcmp(pat_names[i], name) == 0)
			pat = (int)i;
	if (pat < 0)
		return -EINVAL;
	uint64_t size = pat == P_RANDOM4K ? 4096 : o->request_size ? o->request_size : 4096;
	if (size % 512 || size > o->capacity)
		return -EINVAL;
	struct sweep_sim_synth *g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->pat = (enum pat)pat;
	g->size = size;
	g->cap = o->capacity;
	g->count = o->requests;
	g->rng = o->seed;
	if (g->pat == P_POSTMARK || g->pat == P_POSTMARK_FS) {
		g->nfiles = g->pat == P_POSTMARK ? PM_FILES : PF_FILES;
		/* postmark-fs: the files take about half of their set (allocation leaves gaps) */
		uint64_t want = g->pat == P_POSTMARK ? PM_SET : 2ull * PF_FILES * 16384;
		g->set_len = want < g->cap ? want : g->cap / 4096 * 4096;
		/* the file set starts on a 4 MiB boundary somewhere on the device */
		uint64_t slots = (g->cap - g->set_len) / (4 * MIB) + 1;
		g->set_base = sim_rand_below(&g->rng, slots) * 4 * MIB;
		g->files = calloc(g->nfiles, sizeof(*g->files));
		if (!g->files) {
			free(g);
			return -ENOMEM;
		}
		for (unsigned i = 0; i < g->nfiles; i++)
			pm_place(g, &g->files[i]);
	}
	*ret = g;
	return 0;
}

SWEEP_EXPORT struct sweep_sim_synth *sweep_sim_synth_free(struct sweep_sim_synth *g)
{
	if (g) {
		free(g->files);
		free(g);
	}
	return NULL;
}

SWEEP_EXPORT int sweep_sim_synth_next(struct sweep_sim_synth *g, struct sweep_sim_request *ret)
{
	if (!g || !ret)
		return -EINVAL;
	if (g->n >= g->count)
		return 0;
	struct sweep_sim_request r = { .id = g->n, .length = g->size };
	switch (g->pat) {
	case P_RANDOM4K:
	case P_RANDREAD:
	case P_RANDWRITE:
		r.offset = sim_rand_below(&g->rng, g->cap / g->size) * g->size;
		r.op = g->pat == P_RANDWRITE ? SWEEP_SIM_WRITE : SWEEP_SIM_READ;
		break;
	case P_SEQREAD:
	case P_SEQWRITE:
		if (g->pos + g->size > g->cap)
			g->pos = 0;
		r.offset = g->pos;
		g->pos += g->size;
		r.op = g->pat == P_SEQWRITE ? SWEEP_SIM_WRITE : SWEEP_SIM_READ;
		break;
	case P_POSTMARK: {
		struct pm_file *f = &g->files[sim_rand_below(&g->rng, PM_FILES)];
		uint64_t roll = sim_rand_below(&g->rng, 4);
		if (roll == 0)
			pm_place(g, f); /* delete + create: new place, new size */
		r.op = roll < 2 ? SWEEP_SIM_WRITE : SWEEP_SIM_READ;
		r.offset = f->off;
		r.length = f->len;
		break;
	}
	case P_POSTMARK_FS: {
		/* the streams take turns; a read is one request, a write one 4 KiB piece at a time */
		struct pf_stream *st = &g->streams[g->turn];
		r.stream = g->turn;
		g->turn = (g->turn + 1) % PF_STREAMS;
		if (!st->left)
			pf_next(g, st);
		r.op = st->op;
		r.offset = st->off;
		r.length = st->op == SWEEP_SIM_READ ? st->left : 4096;
		st->off += r.length;
		st->left -= r.length;
		break;
	}
	}
	g->n++;
	*ret = r;
	return 1;
}
