/* SPDX-License-Identifier: MIT */
/*
 * sim: a trace-driven HDD/SSD model (sweep-sim(1), sweep_sim_new(3)).
 *
 * Deterministic, reentrant and clocked by the caller: a struct sweep_sim
 * holds one device (HDD or SSD, from a preset), one host scheduler in front
 * of it and the device's own queue below it. Nothing is global; all
 * randomness comes from the seed in the options, so the same seed and the
 * same input give the same output on every run.
 *
 * Time is in nanoseconds of model time. The caller feeds requests with
 * sweep_sim_submit() (arrival time >= sweep_sim_now()), moves the clock with
 * sweep_sim_advance() (usually to the time sweep_sim_next_event() reports)
 * and collects completions with sweep_sim_poll(). Dispatch decisions at an
 * instant are taken only when the clock moves past it, so requests the
 * caller submits at the time of a completion are seen by the scheduler
 * together with the ones already queued (the closed-queue method of the
 * long-queue scheduling studies). sweep_sim_run() drives the whole loop
 * (open or closed replay) for a request source.
 */
#ifndef SWEEP_SIM_H
#define SWEEP_SIM_H

#include <sweep/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sweep_sim;
struct sweep_sim_trace;
struct sweep_sim_synth;

enum sweep_sim_op {
	SWEEP_SIM_READ = 0,
	SWEEP_SIM_WRITE = 1,
	/* length 0: done when every write acknowledged before it is on the media (a drive's FLUSH CACHE) */
	SWEEP_SIM_FLUSH = 2,
};

/* One request as the host issues it. Offsets and lengths are in bytes; a flush has neither. */
struct sweep_sim_request {
	uint64_t time_ns; /* arrival at the host queue */
	uint64_t offset;
	uint64_t length;
	uint64_t id;      /* the caller's tag, handed back in the completion */
	uint32_t stream;  /* stream (process) id; the bandwidth class keys on it */
	uint8_t op;       /* enum sweep_sim_op */
};

/* One finished request. */
struct sweep_sim_completion {
	uint64_t id;
	uint64_t offset;
	uint64_t length;
	uint64_t arrival_ns;  /* entered the host queue */
	uint64_t dispatch_ns; /* left the host queue for the device queue */
	uint64_t start_ns;    /* the device began to work on it */
	uint64_t finish_ns;   /* completion seen by the host */
	uint64_t position;    /* HDD: cylinder of the first sector; SSD: offset / 1 MiB */
	uint32_t stream;
	uint8_t op;
	uint8_t cache_hit;    /* served from the drive's cache (HDD) */
};

/* A reserved-bandwidth stream for the bandwidth class ("bw" scheduler). */
struct sweep_sim_stream {
	uint32_t stream;
	uint64_t rate_bps;     /* reserved bytes per second */
	uint64_t deadline_ns;  /* soft deadline per request; 0 = none */
	uint64_t bucket_bytes; /* token bucket size; 0 = one second of rate */
};

/*
 * Device parameters, for a device that is not one of the presets: start
 * from sweep_sim_preset_hdd()/sweep_sim_preset_ssd(), change what differs,
 * and pass it in sweep_sim_options.hdd or .ssd.
 */
struct sweep_sim_hdd_params {
	size_t size;          /* sizeof(struct sweep_sim_hdd_params) */
	uint64_t cylinders, heads;
	uint64_t spt_outer, spt_inner; /* sectors per track, outer and inner zone */
	uint64_t zones;       /* zones of equal cylinder count, tracks shrinking linearly */
	double rpm;
	double seek_a_ms, seek_b_ms; /* seek(d) = a + b * sqrt(d) for 1 <= d <= boundary */
	uint64_t seek_boundary;
	double seek_c_ms, seek_e_ms; /* seek(d) = c + e * d beyond */
	double head_switch_ms, overhead_ms; /* head switch; per-command controller time */
	double bus_mb_s;      /* interface rate, for cache hits (10^6 bytes/s) */
	uint64_t readahead_kib, cache_kib;
	int write_back;
	unsigned depth;       /* default device queue depth */
	unsigned cache_segments; /* write-back: dirty extents the cache holds; 0 = 64 */
};

struct sweep_sim_ssd_params {
	size_t size;          /* sizeof(struct sweep_sim_ssd_params) */
	uint64_t capacity;    /* bytes the host sees */
	unsigned channels, dies, planes; /* dies per channel, planes per die */
	uint64_t page, pages_per_block;  /* bytes; a logical block is one block on every plane */
	double op;            /* page map: spare fraction (0.07 = 7%) */
	double read_us, prog_us, erase_us;
	double chan_mb_s, link_mb_s; /* channel and host link rates (10^6 bytes/s) */
	int blockmap;         /* 1: block-mapped log-block FTL; 0: page-mapped with greedy GC */
	unsigned log_blocks;  /* block map: log blocks */
	unsigned depth;       /* default device queue depth */
	uint64_t buffer_kib;  /* block map: DRAM write buffer (BPLRU); 0 = none */
};

/* Switches of struct sweep_sim_options: 0 (a zeroed struct) always means the preset's choice. */
enum {
	SWEEP_SIM_WRITE_BACK = 1,
	SWEEP_SIM_WRITE_THROUGH = 2,
	SWEEP_SIM_ON = 1,
	SWEEP_SIM_OFF = 2,
};

#define SWEEP_SIM_MAX_QUEUE_DEPTH 65536u
struct sweep_sim_options {
	size_t size;          /* sizeof(struct sweep_sim_options) */
	const char *device;   /* preset, see sweep_sim_device_name(); NULL = "hdd7200" */
	const char *sched;    /* host scheduler, see sweep_sim_sched_name(); NULL = "fcfs" */
	unsigned queue_depth; /* device queue depth (NCQ/TCQ tags); 0 = preset default; at most SWEEP_SIM_MAX_QUEUE_DEPTH */
	uint64_t seed;        /* reserved for randomised devices; recorded in the output */
	int write_cache;      /* HDD: 0 preset default, SWEEP_SIM_WRITE_BACK or SWEEP_SIM_WRITE_THROUGH */
	int readahead;        /* HDD: 0 preset default, SWEEP_SIM_ON or SWEEP_SIM_OFF */
	unsigned group_cylinders;  /* GSTF cylinder-group size; 0 = cylinders / 4 */
	uint64_t max_response_ns;  /* WSTF: M; 0 = 30 s (the seed's choice) */
	uint64_t bundle_bytes;     /* IRBW bundle; 0 = the SSD's logical block, else 4 MiB */
	uint64_t read_expire_ns;   /* deadline: 0 = 500 ms */
	uint64_t write_expire_ns;  /* deadline: 0 = 5 s */
	uint64_t max_merge_bytes;  /* largest merged request; 0 = 512 KiB */
	int elevator_ssf;          /* bandwidth class elevator: 0 C-SCAN, 1 SSF */
	const struct sweep_sim_stream *streams; /* bandwidth class reservations */
	size_t nstreams;
	uint64_t logical_block_bytes; /* SSD block-mapped FTL logical block; 0 = preset */
	/* a device from parameters instead of a preset (then `device` only names it) */
	const struct sweep_sim_hdd_params *hdd;
	const struct sweep_sim_ssd_params *ssd;
};

/* Aggregate statistics (sweep_sim_get_stats). */
#define SWEEP_SIM_SEEK_BUCKETS 24 /* bucket 0: distance 0; bucket i: [2^(i-1), 2^i) */
struct sweep_sim_stats {
	size_t size; /* set by the caller to sizeof(struct sweep_sim_stats) */
	uint64_t requests, reads, writes;
	uint64_t bytes_read, bytes_written;
	uint64_t first_arrival_ns, last_finish_ns;
	uint64_t busy_ns;     /* time with at least one request in the device */
	uint64_t transfer_ns; /* time spent moving data (media for HDDs, host link for SSDs) */
	double utilization;   /* transfer_ns / (last_finish - first_arrival) */
	double throughput_mib_s;
	double resp_mean_ms, resp_p50_ms, resp_p90_ms, resp_p99_ms, resp_max_ms;
	uint64_t seek_count;  /* services that moved the arm */
	uint64_t seek_hist[SWEEP_SIM_SEEK_BUCKETS]; /* by distance in cylinders */
	uint64_t cache_hits;
	uint64_t host_merges; /* requests merged into another in the host queue */
	/* SSD */
	uint64_t host_pages_written, flash_pages_written, flash_pages_read;
	uint64_t erases; /* physical block erases */
	uint64_t merges_switch, merges_partial, merges_full;
	uint64_t gc_runs, gc_pages_copied;
	double write_amplification;
	uint64_t flushes;     /* SWEEP_SIM_FLUSH requests (counted in requests too) */
	/* when the device finished its last work, destages after the last completion included;
	 * utilization and throughput are over [first_arrival_ns, max(last_finish_ns, end_ns)] */
	uint64_t end_ns;
};

enum sweep_sim_kind {
	SWEEP_SIM_HDD = 0,
	SWEEP_SIM_SSD = 1,
};

/* What a model was built with (sweep_sim_get_info). */
struct sweep_sim_info {
	size_t size; /* set by the caller */
	const char *device; /* preset name */
	const char *sched;  /* scheduler name */
	int kind;           /* enum sweep_sim_kind */
	uint64_t capacity;  /* bytes */
	uint64_t positions; /* HDD: cylinders; SSD: capacity in MiB (the 'position' range) */
	unsigned queue_depth;
	int write_back;
	uint64_t logical_block_bytes; /* SSD block-mapped: bundle size that gives switch merges */
};

/* Preset and scheduler names, by index; NULL past the end. */
SWEEP_EXPORT const char *sweep_sim_device_name(unsigned index);
SWEEP_EXPORT const char *sweep_sim_sched_name(unsigned index);

/* A preset's parameters (ret->size set by the caller). 0, or -EINVAL for another kind or an unknown name. */
SWEEP_EXPORT int sweep_sim_preset_hdd(const char *name, struct sweep_sim_hdd_params *ret_params);
SWEEP_EXPORT int sweep_sim_preset_ssd(const char *name, struct sweep_sim_ssd_params *ret_params);

/* Build a model. 0 or -EINVAL (unknown name, bad option), -ENOMEM. */
SWEEP_EXPORT int sweep_sim_new(const struct sweep_sim_options *opts, struct sweep_sim **ret_sim);
/* Free a model; accepts NULL; returns NULL. */
SWEEP_EXPORT struct sweep_sim *sweep_sim_free(struct sweep_sim *sim);

/*
 * Queue a request arriving at req->time_ns (>= sweep_sim_now(), < 2^63 ns).
 * 0; -EINVAL (no length, a flush with one, an unknown op, a time out of
 * range); -ERANGE (the request does not fit on the device); -ENOMEM.
 */
SWEEP_EXPORT int sweep_sim_submit(struct sweep_sim *sim, const struct sweep_sim_request *req);
/* Time of the next thing that will happen. 1 and *ret_ns, or 0 when nothing is pending. */
SWEEP_EXPORT int sweep_sim_next_event(struct sweep_sim *sim, uint64_t *ret_ns);
/*
 * Move the clock to until_ns (>= now). Returns the number of completions
 * waiting, or -EOVERFLOW where a request would finish past the clock's end
 * (2^63 - 1 ns).
 */
SWEEP_EXPORT int sweep_sim_advance(struct sweep_sim *sim, uint64_t until_ns);
/* Take up to max completions, oldest first. Returns how many were copied. */
SWEEP_EXPORT int sweep_sim_poll(struct sweep_sim *sim, struct sweep_sim_completion *out, unsigned max);
/* The model's clock. */
SWEEP_EXPORT uint64_t sweep_sim_now(const struct sweep_sim *sim);

SWEEP_EXPORT int sweep_sim_get_stats(const struct sweep_sim *sim, struct sweep_sim_stats *ret_stats);
SWEEP_EXPORT int sweep_sim_get_info(const struct sweep_sim *sim, struct sweep_sim_info *ret_info);

/*
 * Traces. Formats: "tracefs" (block_rq_issue/block_rq_complete lines of
 * /sys/kernel/tracing/trace), "blkparse" (its default text output),
 * "disksim" (DiskSim ascii), "spc" (SPC/UMass CSV), "msr" (MSR Cambridge
 * CSV), "plan" (libsweep's sweep-trace, see sweep/trace.h), or "auto"/NULL to
 * guess from the content; "FORMAT@MAJ,MIN" keeps one device's requests.
 *
 * Readers are bounded: lines of at most SWEEP_SIM_TRACE_MAX_LINE bytes, at
 * most max_requests requests (64 bytes each in memory). Every field is
 * checked: a sign, a value past 2^64, nan or inf, a time past 2^63 ns or an
 * extent past 2^64 bytes is -EBADMSG with the line and what is wrong.
 */
#define SWEEP_SIM_TRACE_MAX_LINE 4096
#define SWEEP_SIM_TRACE_MAX_REQUESTS (1ull << 24)
enum {
	/* with capacity: a request past the end of the device is an error (the default) */
	SWEEP_SIM_TRACE_NO_WRAP = 1u << 0,
	/* with capacity: offsets past the end wrap around (a trace of a bigger disk); a request
	 * that would then cross the end is moved back to end at it */
	SWEEP_SIM_TRACE_WRAP = 1u << 1,
};
struct sweep_sim_trace_options {
	size_t size;           /* sizeof(struct sweep_sim_trace_options) */
	const char *format;    /* see above; NULL = "auto" */
	uint64_t capacity;     /* the device's bytes: a longer request is an error; 0 = no check */
	uint64_t max_requests; /* more is -EFBIG; 0 = SWEEP_SIM_TRACE_MAX_REQUESTS */
	unsigned flags;        /* SWEEP_SIM_TRACE_* */
};
/* Where and why a trace was refused (filled on failure only). */
struct sweep_sim_trace_error {
	size_t size;        /* set by the caller */
	uint64_t line;      /* 1-based line of the problem; 0 when it is not one line's */
	char message[128];  /* what is wrong, e.g. "sector: negative value '-8'" */
};
struct sweep_sim_trace_info {
	size_t size;          /* set by the caller */
	const char *format;   /* the format read */
	uint64_t requests;
	int timed;            /* 1 when the format carries arrival times */
	unsigned depth;       /* observed mean outstanding depth (1 when unknown) */
	uint64_t skipped;     /* lines ignored (other events) */
	int dependent;        /* 1 when issue/complete pairs give each request's dependency (SWEEP_SIM_DEPEND) */
};
SWEEP_EXPORT int sweep_sim_trace_open(const char *path, const struct sweep_sim_trace_options *opts,
				      struct sweep_sim_trace **ret_trace, struct sweep_sim_trace_error *ret_error);
/* sweep_sim_trace_open with only a format. */
SWEEP_EXPORT int sweep_sim_trace_load(const char *path, const char *format,
				      struct sweep_sim_trace **ret_trace);
SWEEP_EXPORT struct sweep_sim_trace *sweep_sim_trace_free(struct sweep_sim_trace *t);
/* Next request in trace order (times relative to the first). 1, or 0 at the end. */
SWEEP_EXPORT int sweep_sim_trace_next(struct sweep_sim_trace *t, struct sweep_sim_request *ret_req);
SWEEP_EXPORT int sweep_sim_trace_get_info(const struct sweep_sim_trace *t,
					  struct sweep_sim_trace_info *ret_info);

/*
 * Synthetic workloads. pattern: NULL or "random4k" (the seed's random 4 KiB
 * reads), "seqread", "seqwrite", "randread", "randwrite" (request_size,
 * aligned to it), "postmark" (a Postmark-like mix of whole-file reads and
 * writes of 1-32 KiB files inside a 64 MiB file set), "postmark-fs"
 * (Postmark's small-file workload as a file system sends it: whole-file
 * reads, writes in 4 KiB requests, four interleaved streams).
 */
struct sweep_sim_synth_options {
	size_t size;           /* sizeof(struct sweep_sim_synth_options) */
	const char *pattern;
	uint64_t request_size; /* 0 = 4 KiB */
	uint64_t capacity;     /* device size in bytes (sweep_sim_info.capacity) */
	uint64_t requests;     /* how many to generate */
	uint64_t seed;
};
SWEEP_EXPORT int sweep_sim_synth_new(const struct sweep_sim_synth_options *opts,
				     struct sweep_sim_synth **ret_gen);
SWEEP_EXPORT struct sweep_sim_synth *sweep_sim_synth_free(struct sweep_sim_synth *g);
/* 1 and the next request (time_ns = 0), or 0 when all were generated. */
SWEEP_EXPORT int sweep_sim_synth_next(struct sweep_sim_synth *g, struct sweep_sim_request *ret_req);

/*
 * Replay. A source returns 1 and a request, 0 at the end, or -errno.
 * OPEN: each request arrives at its time_ns. CLOSED: depth requests are
 * outstanding at all times; each completion is replaced by the source's
 * next request, arriving at the completion time (time_ns is ignored), at
 * most SWEEP_SIM_MAX_DEPTH of them. DEPEND (sweep_sim_trace_replay only):
 * each request of a capture arrives when the request it waited for
 * completes in the model, plus the time the capture shows between the two;
 * requests that waited for none arrive at their time_ns.
 */
#define SWEEP_SIM_MAX_DEPTH (1u << 20)
typedef int (*sweep_sim_source_fn)(void *ctx, struct sweep_sim_request *ret_req);
typedef void (*sweep_sim_completion_fn)(void *ctx, const struct sweep_sim_completion *c);
enum sweep_sim_mode {
	SWEEP_SIM_OPEN = 0,
	SWEEP_SIM_CLOSED = 1,
	SWEEP_SIM_DEPEND = 2,
};
struct sweep_sim_run_options {
	size_t size;      /* sizeof(struct sweep_sim_run_options) */
	int mode;         /* enum sweep_sim_mode */
	unsigned depth;   /* CLOSED: outstanding requests; 0 = 1; at most SWEEP_SIM_MAX_DEPTH */
	sweep_sim_completion_fn on_complete; /* optional, called per completion in order */
	void *ctx;
};
/* Returns the number of requests completed, or -errno from the source or the model. */
SWEEP_EXPORT int64_t sweep_sim_run(struct sweep_sim *sim, sweep_sim_source_fn source, void *source_ctx,
				   const struct sweep_sim_run_options *opts);
/* Replay a whole trace (from its first request) in any mode; as sweep_sim_run. */
SWEEP_EXPORT int64_t sweep_sim_trace_replay(struct sweep_sim *sim, struct sweep_sim_trace *t,
					    const struct sweep_sim_run_options *opts);

#ifdef __cplusplus
}
#endif
#endif
