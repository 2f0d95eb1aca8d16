/* SPDX-License-Identifier: MIT */
/*
 * trace: a plan as the request stream it would put on the device, in the
 * "sweep-trace 1" text format of sweep-trace(5), for the model to replay.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plan.h"

struct out {
	int fd;
	size_t len;
	char buf[65536];
};

static int out_flush(struct out *o)
{
	size_t done = 0;

	while (done < o->len) {
		ssize_t n = write(o->fd, o->buf + done, o->len - done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		done += (size_t)n;
	}
	o->len = 0;
	return 0;
}

/* One line: "R offset length ino", or "# nophys length ino" when offset is SWEEP_NO_PHYS. */
static int out_line(struct out *o, uint64_t offset, uint64_t length, uint64_t ino)
{
	int n;

	if (sizeof(o->buf) - o->len < 128) {
		int rc = out_flush(o);
		if (rc < 0)
			return rc;
	}
	if (offset == SWEEP_NO_PHYS)
		n = snprintf(o->buf + o->len, sizeof(o->buf) - o->len, "# nophys %" PRIu64 " %" PRIu64 "\n",
			     length, ino);
	else
		n = snprintf(o->buf + o->len, sizeof(o->buf) - o->len, "R %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
			     offset, length, ino);
	if (n < 0)
		return -EIO;
	o->len += (size_t)n;
	return 0;
}

/* The data lines of one file; returns how many, or -errno. */
static int trace_entry(struct out *o, const struct sweep_plan_entry *e)
{
	int lines = 0, rc;

	for (uint32_t i = 0; i < e->nextents; i++) {
		const struct sweep_extent *x = &e->extents[i];
		if ((x->flags & SWEEP_EXTENT_NOLOC) || x->physical == SWEEP_NO_PHYS || x->length == 0)
			continue;
		rc = out_line(o, x->physical, x->length, e->ino);
		if (rc < 0)
			return rc;
		lines++;
	}
	if (lines > 0)
		return lines;
	if (e->phys != SWEEP_NO_PHYS && e->size > 0) {
		/* Only the first block is known: the file as one request starting there. */
		rc = out_line(o, e->phys, e->size, e->ino);
		return rc < 0 ? rc : 1;
	}
	rc = out_line(o, SWEEP_NO_PHYS, e->size, e->ino);
	return rc < 0 ? rc : 0;
}

SWEEP_EXPORT int sweep_trace_write(const struct sweep_plan *p, int fd, unsigned flags)
{
	struct out *o;
	size_t n;
	long total = 0;
	int rc = 0;

	if (!p || fd < 0)
		return -EINVAL;
	o = malloc(sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->fd = fd;
	o->len = 0;
	if (flags & SWEEP_TRACE_HEADER) {
		static const char hdr[] = "# sweep-trace 1\n# op offset_bytes length_bytes ino\n";
		memcpy(o->buf, hdr, sizeof(hdr) - 1);
		o->len = sizeof(hdr) - 1;
	}
	n = sweep_plan_count(p);
	for (size_t i = 0; i < n; i++) {
		rc = trace_entry(o, sweep_plan_entry(p, i));
		if (rc < 0)
			break;
		total += rc;
		rc = 0;
	}
	if (rc == 0)
		rc = out_flush(o);
	free(o);
	if (rc < 0)
		return rc;
	return total > INT_MAX ? INT_MAX : (int)total;
}
