/* SPDX-License-Identifier: MIT */
/*
 * writer: destination writes for the copy engine, through io_uring
 * (IORING_OP_WRITE) or plain pwrite. The reader's buffer is only valid
 * during its data() callback, so the io_uring path copies each piece into
 * one of a fixed number of slots (bounded memory: depth x the largest
 * piece) and submits it; when every slot is busy it waits for the oldest
 * completions. Writes of one file are submitted in ascending offsets, and
 * the kernel serialises buffered writes to one inode that it has to punt
 * to a worker (io-wq hashes them by inode), so each file is still written
 * in order. A write that fails completes through on_fail with its tag.
 */
#ifndef SWEEP_COPY_WRITER_H
#define SWEEP_COPY_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <sweep/common.h>

struct writer_opts {
	size_t size;                /* sizeof(struct writer_opts) */
	enum sweep_backend backend; /* AUTO: SWEEP_BACKEND, then an io_uring probe; URING falls back to SYSCALL */
	unsigned depth;             /* writes in flight, 0 = default (8) */
	/* A write tagged tag failed with err (-errno); called from sweep__writer_write/sweep__writer_drain. */
	void (*on_fail)(uint64_t tag, int err, void *ctx);
	void *ctx;
};

struct writer_stats {
	uint64_t requests; /* write requests submitted (io_uring SQEs or pwrite calls) */
	uint64_t bytes;
};

struct writer;

int sweep__writer_new(const struct writer_opts *opts, struct writer **ret);
/* Waits for writes still in flight. Accepts NULL, returns NULL. */
struct writer *sweep__writer_free(struct writer *w);
/* URING or SYSCALL: what the writes really go through. */
enum sweep_backend sweep__writer_backend(const struct writer *w);
/*
 * Write len bytes of buf at off to fd (buf may be reused when this
 * returns). Returns 0 when written or queued, -errno when it failed at
 * once; later failures go to on_fail. fd must stay open until
 * sweep__writer_drain() returned.
 */
int sweep__writer_write(struct writer *w, int fd, const void *buf, size_t len, uint64_t off, uint64_t tag);
/* Wait until every queued write completed (NULL: nothing to wait for). Returns 0 or -errno when the ring failed. */
int sweep__writer_drain(struct writer *w);
void sweep__writer_stats(const struct writer *w, struct writer_stats *ret);

/* write() until done: 0, or -errno (-ENOSPC for a write that made no progress). */
int sweep__writer_pwrite_full(int fd, const char *buf, size_t len, uint64_t off);

#endif
