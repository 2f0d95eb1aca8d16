/* SPDX-License-Identifier: MIT */
/* The model's internals, shared by lib/sim/ sources and the unit tests. Not installed. */
#ifndef SWEEP_SIM_INTERNAL_H
#define SWEEP_SIM_INTERNAL_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <sweep/sim.h>

#include "internal.h"

/*
 * Size-versioned structs follow libsweep's one rule (sweep__opts_copy in
 * lib/common/internal.h): any prefix holding the size is accepted (the fields it
 * lacks read as zero), a longer struct only when its extra bytes are zero.
 * Inputs are copied with sweep__opts_copy(dst, sizeof(dst), src, SIM_MIN).
 * Outputs are checked the same way, then filled with what the caller's
 * struct holds: sweep__out_begin() and sweep__out_put().
 */
#define SIM_MIN sizeof(size_t)

#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull
#define MIB (1024ull * 1024ull)
#define NONE64 UINT64_MAX

/*
 * The model's clock runs from 0 to SIM_TIME_MAX ns (2^63 - 1: 292 years).
 * sweep_sim_submit refuses later arrivals and sweep_sim_advance refuses
 * (-EOVERFLOW) to move the clock to an event past it, so no time wraps
 * around 2^64 or saturates in a conversion from double.
 */
#define SIM_TIME_MAX ((uint64_t)INT64_MAX)
#define SIM_TIME_OVER (SIM_TIME_MAX + 1) /* a finish past the clock's end */
/*
 * t + d: a finish time from a start t and a duration d worked out in double
 * ns, rounded once. The start stays an exact integer (a double holds whole
 * ns only below 2^53), so the finish is never before it; a duration that
 * is not finite or ends past SIM_TIME_MAX gives SIM_TIME_OVER.
 */
static inline uint64_t sim_time_after(uint64_t t, double d)
{
	if (t > SIM_TIME_MAX || !(d < 0x1p63))
		return SIM_TIME_OVER;
	uint64_t n = d > 0 ? (uint64_t)llround(d) : 0;
	return n <= SIM_TIME_MAX - t ? t + n : SIM_TIME_OVER;
}

/* ---- requests ---------------------------------------------------------- */

struct sim_req {
	struct sweep_sim_request r; /* as submitted */
	uint64_t off, len;          /* extent served (grows when others merge in) */
	uint64_t seq;               /* submission order: the tie-break everywhere */
	uint64_t dispatch, start, finish;
	uint64_t key;               /* position bucket (cylinder, or MiB on an SSD) */
	struct sim_req *fprev, *fnext; /* host FIFO (per op) */
	struct sim_req *pprev, *pnext; /* position bucket */
	struct sim_req *merged;     /* requests merged into this one, completed with it */
	struct sim_req *link;       /* device queues, completion lists, free list */
	bool internal;              /* a drive-internal destage, not host visible */
	bool hit;
	uint32_t hidx;              /* STF index: place in its heap (flat devices) */
	uint64_t hkey;              /* STF index: its estimate there */
};

/*
 * One STF decision in progress: the best request so far and its (weighted)
 * time. Devices that can search a bucket faster than one estimate per
 * request (the disk: by rotational position) do so through bucket_search.
 */
struct stf_ctx {
	uint64_t now;
	struct sim_req *best;
	double bt;
	bool weighted;
	double M, wmin;  /* WSTF: max response, smallest weight in the queue */
	uint64_t evals;  /* estimates made (the cost of the decision) */
	uint64_t max_seq; /* only requests submitted up to here (GSTF freeze); NONE64 = all */
};
struct sim_dev;
struct sbucket;
void sweep__stf_consider(struct sim_dev *d, struct stf_ctx *c, struct sim_req *r);

/* Append r to the list [*head, *tail] linked through ->link (device queues, completions, flushes). */
static inline void sim_list_append(struct sim_req **head, struct sim_req **tail, struct sim_req *r)
{
	r->link = NULL;
	if (*tail)
		(*tail)->link = r;
	else
		*head = r;
	*tail = r;
}

/* ---- position-bucketed queue (cylinder-indexed lists + 2-level bitmap) ---- */

struct posq {
	uint64_t nkeys;
	struct sim_req **head, **tail;
	uint64_t *bits0, *bits1; /* bit k of bits0: bucket k non-empty; bits1 summarises bits0 words */
	uint64_t nwords0, nwords1;
	uint64_t count;
};
int sweep__posq_init(struct posq *q, uint64_t nkeys);
void sweep__posq_fini(struct posq *q);
void sweep__posq_insert(struct posq *q, struct sim_req *r);
void sweep__posq_remove(struct posq *q, struct sim_req *r);
/* First non-empty bucket >= key (NONE64 if none) / last non-empty bucket <= key. */
uint64_t sweep__posq_next(const struct posq *q, uint64_t key);
uint64_t sweep__posq_prev(const struct posq *q, uint64_t key);

/* ---- RNG: splitmix64, explicit state ---------------------------------- */

static inline uint64_t sim_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}
/* Uniform in [0, n) without modulo bias worth caring about at 64 bits. */
static inline uint64_t sim_rand_below(uint64_t *state, uint64_t n)
{
	return n ? (uint64_t)(((unsigned __int128)sim_rand(state) * n) >> 64) : 0;
}

/* ---- devices ----------------------------------------------------------- */

struct sim_dev;
struct sim_dev_ops {
	uint64_t (*key)(const struct sim_dev *d, uint64_t offset); /* position bucket of an offset */
	uint64_t (*head_key)(const struct sim_dev *d);             /* where the head will be */
	/* Lower bound of the positioning time to a bucket `dist` away (pruning for STF). */
	uint64_t (*min_time)(const struct sim_dev *d, uint64_t dist);
	/* Estimated time from `now` until r would finish if it were served next; *xfer: its transfer part. */
	uint64_t (*estimate)(struct sim_dev *d, uint64_t now, const struct sim_req *r, uint64_t *xfer);
	bool (*can_accept)(const struct sim_dev *d);
	void (*accept)(struct sim_dev *d, uint64_t now, struct sim_req *r);
	void (*kick)(struct sim_dev *d, uint64_t now); /* start work after the accepts of an instant */
	uint64_t (*next_event)(const struct sim_dev *d);
	/* Handle events at `now`; completed host requests are appended via d->done. */
	void (*process)(struct sim_dev *d, uint64_t now);
	bool (*busy)(const struct sim_dev *d);
	void (*destroy)(struct sim_dev *d);
	/* Optional: STF over the requests v[0..n) of bucket key, sorted by offset (sweep__stf_consider each candidate). */
	void (*bucket_search)(struct sim_dev *d, uint64_t key, const struct sbucket *b, struct stf_ctx *c);
	/* Service time does not depend on position (SSD): STF ranks by estimate alone. */
	bool flat;
};

struct sim_counters {
	uint64_t transfer_ns, seek_count, seek_hist[SWEEP_SIM_SEEK_BUCKETS], cache_hits;
	uint64_t host_pages_written, flash_pages_written, flash_pages_read, erases;
	uint64_t merges_switch, merges_partial, merges_full, gc_runs, gc_pages_copied;
};

struct sim_dev {
	const struct sim_dev_ops *ops;
	const char *name;
	int kind;
	uint64_t capacity;
	uint64_t nkeys;
	unsigned depth;
	int write_back;
	uint64_t logical_block; /* SSD block map */
	struct sim_counters *cnt;
	/* completions produced by process(), appended in order */
	struct sim_req *done_head, *done_tail;
};
void sweep__dev_done(struct sim_dev *d, struct sim_req *r);
void sweep__sim_count_seek(struct sim_counters *c, uint64_t dist);

/*
 * Index of the preset called `name` in a table of structs whose first member
 * is the name, or -1. The HDD and SSD tables share it.
 */
static inline int preset_find(const void *table, size_t n, size_t stride, const char *name)
{
	for (size_t i = 0; name && i < n; i++)
		if (strcmp(*(const char *const *)((const char *)table + i * stride), name) == 0)
			return (int)i;
	return -1;
}

int sweep__hdd_new(const char *preset, const struct sweep_sim_options *o, struct sim_dev **ret);
int sweep__ssd_new(const char *preset, const struct sweep_sim_options *o, struct sim_dev **ret);
extern const char *const sweep__hdd_preset_names[];
extern const char *const sweep__ssd_preset_names[];

/* HDD pieces the tests look at. */
struct hdd_seek {
	double a, b;      /* a + b*sqrt(d) for 1 <= d <= boundary */
	uint64_t boundary;
	double c, e;      /* c + e*d beyond */
};
double sweep__hdd_seek_ms(const struct hdd_seek *s, uint64_t dist);
struct hdd_chs {
	uint64_t cyl, head, sector, spt;
};
/* Map a 512-byte sector number through the zone table of a HDD device. */
int sweep__hdd_map(const struct sim_dev *d, uint64_t lba, struct hdd_chs *ret);
const struct hdd_seek *sweep__hdd_seek_of(const struct sim_dev *d);
uint64_t sweep__hdd_cylinders(const struct sim_dev *d);
void sweep__hdd_set_head(struct sim_dev *d, uint64_t cyl, uint64_t head); /* tests: place the arm */

/* ---- bookings of a shared resource (timeline.c) ---- */

struct interval {
	double s, e;
};
struct timeline {
	struct interval *iv; /* [head, n) in use */
	size_t head, n, cap;
};
/* Book d ns at the earliest gap at or after t; returns the start. */
double sweep__tl_book(struct timeline *tl, double t, double d);
/* Forget the bookings that end by t (nothing can be booked before now). */
void sweep__tl_trim(struct timeline *tl, double t);
void sweep__tl_fini(struct timeline *tl);

/* ---- host queue and schedulers ---------------------------------------- */

struct hq {
	struct sim_req *fhead[2], *ftail[2]; /* arrival order per op */
	struct posq pos;
	uint64_t count, count_op[2];
};

/* A bandwidth-class stream: token bucket state. */
struct bw_stream {
	uint32_t id;
	double rate;   /* bytes per ns */
	double bucket; /* bytes */
	double tokens;
	uint64_t deadline, last;
};

struct sched;
struct sched_ops {
	const char *name;
	bool merges; /* back/front merge adjacent requests on insert */
	struct sim_req *(*pick)(struct sched *s, uint64_t now);
	bool pick_one_merge; /* merge only into what the previous submission went into (noop) */
};

struct sched {
	const struct sched_ops *ops;
	struct hq q;
	struct sim_dev *dev;
	uint64_t max_merge;
	uint64_t merges;
	/* policy state */
	int dir;                 /* SCAN direction: +1 / -1 */
	uint64_t last_key;       /* last dispatched position */
	uint64_t group;          /* GSTF cylinder-group size (buckets) */
	uint64_t max_resp;       /* WSTF M */
	uint64_t read_expire, write_expire;
	unsigned batch_left;     /* deadline batching */
	int batch_op;
	unsigned writes_starved;
	uint64_t bundle;         /* IRBW */
	struct sim_req *drain;   /* IRBW: the bundle being dispatched, sorted */
	struct sim_req *flush_head, *flush_tail; /* flushes, passed through in arrival order */
	struct sim_req *last_in;  /* noop: the queued request the last submission became or merged into */
	uint64_t last_in_seq;    /* and that submission */
	uint64_t yielded_bundle; /* IRBW-RP: the head bundle already yielded (id + 1) */
	uint64_t yield_seq;      /* IRBW-RP: reads up to this submission serve first */
	bool rp;
	int elevator_ssf;        /* bandwidth class */
	struct bw_stream *streams;
	size_t nstreams;
	/* STF index (stf, sptf, gstf, wstf): per bucket the requests sorted by offset; on a flat
	 * device a heap per direction by (length, submission) */
	struct sbucket *sorted;
	struct sim_req **heap[2];
	size_t nheap[2], capheap[2];
	uint64_t decisions, evals; /* what the STF decisions cost, in estimates */
	bool flat_index;
	uint64_t max_seq;        /* latest submission queued (NONE64 before the first) */
	uint64_t frozen_seq;     /* GSTF freeze: requests up to this submission belong to the frozen group */
	uint64_t frozen_group, frozen_left;
	bool frozen;
};
struct sbucket {
	struct sim_req **v;
	size_t n, cap;
};
/* First index in b with an offset >= off. */
uint32_t sweep__sbucket_first(const struct sbucket *b, uint64_t off);
/* STF decisions taken and the estimates they made (the index's cost; tests). */
void sweep__sim_stf_cost(const struct sweep_sim *s, uint64_t *decisions, uint64_t *evals);
int sweep__sched_new(const char *name, const struct sweep_sim_options *o, struct sim_dev *dev,
	      struct sched **ret);
void sweep__sched_free(struct sched *s);
void sweep__sched_add(struct sched *s, struct sim_req *r);
struct sim_req *sweep__sched_pick(struct sched *s, uint64_t now);
extern const char *const sweep__sched_names[];

/* ---- traces ---------------------------------------------------------- */

struct sim_trace_rec {
	struct sweep_sim_request r;
	uint64_t after; /* index of the request whose completion released this one, or NONE64 */
	uint64_t think; /* ns from that completion to this issue */
};

struct sweep_sim_trace {
	struct sim_trace_rec *v;
	size_t n, cap, pos;
	const char *format;
	int timed, dependent;
	unsigned depth;
	uint64_t skipped;
	/* the requests each one releases (built at the first dependent replay) */
	uint64_t *kids, *kid_at;
};
/* sweep_sim_trace_open on an open stream (the fuzz targets read from memory). */
int sweep__sim_trace_read(FILE *fp, const struct sweep_sim_trace_options *opts, struct sweep_sim_trace **ret,
		   struct sweep_sim_trace_error *ret_error);

/* ---- statistics -------------------------------------------------------- */

struct sim_stats {
	uint64_t requests, reads, writes, flushes, bytes_read, bytes_written;
	uint64_t first_arrival, last_finish;
	uint64_t *resp; /* response times of all completions, for percentiles */
	uint64_t nresp, cap;
	uint64_t resp_max;
	long double resp_sum;
};
int sweep__stats_record(struct sim_stats *st, const struct sim_req *r);
void sweep__stats_fill(const struct sim_stats *st, const struct sim_counters *c, uint64_t busy_ns, uint64_t end_ns,
		       struct sweep_sim_stats *out);
void sweep__stats_fini(struct sim_stats *st);

#endif
