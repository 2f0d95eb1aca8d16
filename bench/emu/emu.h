/* SPDX-License-Identifier: MIT */
/*
 * emudisk-fuse: an emulated disk. One FUSE file, served from a backing
 * image, each request answered when libsweep-sim's model of the drive says
 * it completes, in real time scaled by a speed factor. bench/emudisk puts
 * a loop device with direct I/O on the file (bench/README.md).
 *
 *   main.c    the command line, the image, the FUSE session, the summary
 *   fs.c      the FUSE operations: one directory, one file
 *   clock.c   the model run against the real clock: submit, complete, answer
 */
#ifndef EMU_H
#define EMU_H

#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <sweep/sim.h>

enum emu_op {
	EMU_READ,
	EMU_WRITE,
	EMU_FLUSH,
};

/*
 * One FUSE request in flight. It is answered by whichever of its two parts
 * ends last: the model's completion, and the backing file's read or write
 * done by the thread that took the request (so the backing I/O overlaps the
 * modelled service time instead of adding to it).
 */
struct emu_req {
	fuse_req_t req;
	enum emu_op op;
	uint64_t offset;
	size_t len;
	char *buf;           /* read: the data to answer with */
	ssize_t done;        /* bytes read or written, or -errno */
	int parts;           /* parts still to end (atomic) */
	uint64_t due_ns;     /* real time the model completes it (monotonic) */
};

struct emu_stats {
	uint64_t reads, writes, flushes, read_bytes, write_bytes, errors;
	uint64_t late_backing;  /* answered after the model's time because the backing file was slower */
	uint64_t lag_sum_ns, lag_max_ns, lagged; /* answers later than due (CPU, scheduling), and by how much */
};

struct emu {
	/* set up by main.c, read-only after */
	int fd;              /* the backing image */
	uint64_t size;       /* bytes served */
	bool read_only;
	double speed;        /* model ns per real ns */
	uint64_t t0;         /* real time (CLOCK_MONOTONIC, ns) of model time 0 */
	struct sweep_sim *sim;
	/* clock.c's, under lock */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stopping;
	struct emu_stats st;
	pthread_t thread;
};

uint64_t emu_now_ns(void);

/* clock.c */
int emu_clock_start(struct emu *e);
void emu_clock_stop(struct emu *e);
/* Queue r in the model at its present (a flush as the drive's FLUSH CACHE). 0 or -errno. */
int emu_submit(struct emu *e, struct emu_req *r);
/* One of r's parts ended (model: the model's; else the backing file's); the last answers r and frees it. */
void emu_part_done(struct emu *e, struct emu_req *r, bool model);

/* fs.c */
extern const struct fuse_lowlevel_ops emu_fs_ops;
#define EMU_FILE_NAME "disk"

#endif
