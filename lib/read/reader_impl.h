/* SPDX-License-Identifier: MIT */
/*
 * Reader internals shared by the delivery core (reader.c) and its two
 * backends (reader_uring.c, reader_sync.c).
 *
 * The core decides what to submit and in which order (plan order, bounded
 * by queue depth, open files and buffered bytes); a backend only carries
 * requests out and hands back completions, in whatever order they finish.
 * The synchronous backend completes each request as it is submitted.
 */
#ifndef SWEEP_READER_IMPL_H
#define SWEEP_READER_IMPL_H

#include <linux/openat2.h>
#include <stdbool.h>

#include "read.h"

enum rd_kind {
	RD_OPEN = 1,
	RD_READ = 2,
};

struct rd_slot;

/* One request: an open of a slot's file, or a read into the buffer ring. */
struct rd_req {
	struct rd_req *next; /* global submission-order FIFO (reads), or free list */
	struct rd_req *done_next; /* sync backend: completion list */
	struct rd_slot *slot;
	enum rd_kind kind;
	int res;            /* the completion's result */
	bool complete;      /* all bytes read, EOF hit, or failed */
	bool probe;         /* SWEEP_READ_TO_EOF: a file's last planned read, one byte longer (short there: its end) */
	char *buf;          /* reads: start of this request's buffer */
	uint64_t off;       /* reads: file offset of buf[0] */
	uint32_t len;       /* reads: bytes wanted */
	uint32_t got;       /* reads: bytes read so far (short reads are resubmitted) */
	size_t ring_end;    /* reads: buffer ring position just after this buffer */
	int err;            /* reads: -errno, or 0 */
};

enum rd_slot_state {
	SLOT_EMPTY = 0,
	SLOT_OPENING,
	SLOT_OPEN,
	SLOT_FAILED,
	SLOT_DEFERRED, /* its open ran out of descriptors: opened again once files before it are done */
};

/* A file in the window between open and end(). */
struct rd_slot {
	size_t index;                      /* position in the plan */
	enum rd_slot_state state;
	struct sweep_file f;
	int err;                           /* open failure, read failure (-errno) */
	bool noatime;                      /* open with O_NOATIME (retried without on EPERM) */
	bool nonblock;                     /* open, O_NONBLOCK still on (cleared at a read's first EAGAIN) */
	struct sweep_extent *map;          /* regions to read (malloc'ed) */
	size_t nmap;
	struct sweep_extent whole;         /* the single region when not sparse */
	/* submission cursor */
	size_t map_i;
	uint64_t sub_off;
	bool sub_done;
	unsigned reads_queued;             /* reads in the FIFO (in flight or awaiting delivery) */
	/* delivery */
	bool begun, skip, eof;
	bool after_begin;                  /* ops->read_after_begin said so: no read before begin */
	uint64_t delivered;
	uint64_t data_end;                 /* the end of the last piece delivered */
	uint64_t eof_at;                   /* eof: where a read found the file's end */
	struct timespec open_at;           /* when the open was asked for (CLOCK_REALTIME) */
	bool moved_open;                   /* its change time moved after open_at, before the fstat (opened) */
	uint64_t deferred_at;              /* SLOT_DEFERRED: files ended when its open was refused */
	struct rd_req open_req;
	struct open_how how;               /* io_uring OPENAT2: must live until the request is submitted */
};

struct sweep_reader;

/* Tests only: called as a file's open is taken, before its fstat (NULL in every real run). */
extern void (*sweep__reader_test_opened)(const struct sweep_plan_entry *e);
/* Tests only: the result of the open of plan index i as the reader takes it (NULL in every real run). */
extern int (*sweep__reader_test_open_res)(size_t index, int res);
/* Tests only: the result of a read of the file open as fd as the reader takes it (NULL in every real run). */
extern int (*sweep__reader_test_read_res)(int fd, int res);

struct rd_backend {
	const char *name;
	/* Set up for a run with the given buffer ring; may register it. */
	int (*start)(struct sweep_reader *r);
	void (*stop)(struct sweep_reader *r);
	/* Queue a request; the completion comes back through reap. <0: could not queue (retry later). */
	int (*submit_open)(struct sweep_reader *r, struct rd_req *q, int flags);
	int (*submit_read)(struct sweep_reader *r, struct rd_req *q);
	/* Optional: a file was opened and is about to be read (the sync backend starts read-ahead). */
	void (*opened)(struct sweep_reader *r, struct rd_slot *s);
	/* Push queued requests to the kernel. */
	int (*flush)(struct sweep_reader *r);
	/* Collect up to max completions (each sets q->res); wait for one if wait. Returns the count or -errno. */
	int (*reap)(struct sweep_reader *r, struct rd_req **out, unsigned max, bool wait);
};

struct sweep_reader {
	struct sweep_reader_opts opts;
	enum sweep_backend backend;
	const struct rd_backend *be;
	void *be_state;
	struct sweep_read_stats stats;
	/* per run */
	const struct sweep_plan *plan; /* the plan being read (backends reach its roots) */
	unsigned depth;        /* reads in flight */
	unsigned window;       /* files open or opening */
	size_t buffer_size;
	size_t ring_size;
	char *ring;            /* buffered bytes for in-order delivery */
	size_t ring_head, ring_tail; /* allocation FIFO in bytes */
	size_t held, peak_held; /* bytes of buffers handed out (read or being read, not yet delivered) */
	unsigned shuffle_seed; /* test hook: handle each batch of completions in a random order */
	/* test hook: told of every WILLNEED the physical-order prefetch issues, in issue order */
	void (*pf_log)(void *ctx, const struct sweep_file *f, uint64_t phys, uint64_t off, uint64_t len);
	void *pf_log_ctx;
	uint64_t pf_group; /* test hook: bytes per prefetch group at most (0: from the memory available) */
};

/*
 * One run of a reader over a part of a plan: positions [first, end) in its
 * read order, on a set of members disks answering together, as one of
 * share readers running at once (each takes that share of the descriptors
 * and of the prefetch's memory). idle, when set, is called on the run's
 * thread between two files when the run is about to wait for the device.
 */
struct sweep__read_part {
	size_t first, end;
	unsigned members, share;
	void (*idle)(void *arg);
	void *idle_arg;
};
/* Read the part; the same returns as sweep_reader_run(). ops is already size-checked. */
int sweep__reader_run_part(struct sweep_reader *r, const struct sweep_plan *p, const struct sweep__read_part *part,
			   const struct sweep_read_ops *ops, void *ctx);
/* reader_multi.c: every group of p at once, one reader each (SWEEP_READ_BY_DEVICE). */
int sweep__reader_run_groups(struct sweep_reader *r, const struct sweep_plan *p, const struct sweep__plan_group *g,
			     size_t ng, const struct sweep_read_ops *ops, void *ctx);
/* Whether SWEEP_BY_DEVICE (off, 0, no) turns SWEEP_READ_BY_DEVICE off: disks one after another. */
bool sweep__by_device_env_off(void);
/* The reader's test hooks, copied to another reader (the multi-disk run's own readers). */
void sweep__reader_copy_hooks(struct sweep_reader *to, const struct sweep_reader *from);
/* Add from's totals to to's. */
void sweep__reader_add_stats(struct sweep_reader *to, const struct sweep_reader *from);

/* Backends (NULL when not built in). */
extern const struct rd_backend sweep__rd_uring;
extern const struct rd_backend sweep__rd_sync;

/* Test hook: handle each batch of completions in a pseudo-random order (0 = off). */
void sweep__reader_set_shuffle(struct sweep_reader *r, unsigned seed);

/* Test hook: see sweep_reader.pf_log (NULL: off) and pf_group (0: the default). */
void sweep__reader_set_prefetch_log(struct sweep_reader *r,
				    void (*fn)(void *ctx, const struct sweep_file *f, uint64_t phys, uint64_t off,
					       uint64_t len),
				    void *ctx, uint64_t group_bytes);

/* Test hook: the most buffer bytes held at once since the reader was created. */
size_t sweep__reader_peak_buffered(const struct sweep_reader *r);


#endif
