/* SPDX-License-Identifier: MIT */
/*
 * Run-time io_uring probe. liburing being linked says nothing about the
 * running kernel: io_uring may be disabled (kernel.io_uring_disabled),
 * filtered by seccomp (containers), or too old. Ask once and remember.
 */
#include <pthread.h>

#include "internal.h"

#if HAVE_LIBURING
#include <liburing.h>

static int uring_usable = -1;
static int uring_openat2;
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;

static void probe(void)
{
	struct io_uring ring;
	struct io_uring_probe *p;

	if (io_uring_queue_init(2, &ring, 0) < 0) {
		uring_usable = 0;
		return;
	}
	p = io_uring_get_probe_ring(&ring);
	/* We need at least open, read and statx. */
	uring_usable = p && io_uring_opcode_supported(p, IORING_OP_OPENAT) &&
		       io_uring_opcode_supported(p, IORING_OP_READ) &&
		       io_uring_opcode_supported(p, IORING_OP_STATX);
	uring_openat2 = p && io_uring_opcode_supported(p, IORING_OP_OPENAT2);
	io_uring_free_probe(p);
	io_uring_queue_exit(&ring);
}

int sweep__uring_usable(void)
{
	pthread_once(&probe_once, probe);
	return uring_usable;
}

int sweep__uring_has_openat2(void)
{
	pthread_once(&probe_once, probe);
	return uring_usable && uring_openat2;
}
#else
int sweep__uring_usable(void)
{
	return 0;
}

int sweep__uring_has_openat2(void)
{
	return 0;
}
#endif
