/* SPDX-License-Identifier: MIT */
/*
 * Trace readers. Each format is one line parser; the whole trace is read
 * into memory (40 bytes a request), sorted by arrival time and replayed
 * from there. A format name may carry a device filter, "tracefs@7,0".
 * The stream id of a request is the issuing PID (tracefs, blkparse), the
 * ASU (SPC), the disk number (MSR, DiskSim) or 0 (plan traces).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

struct sweep_sim_trace {
	struct sweep_sim_request *v;
	size_t n, cap, pos;
	const char *format;
	int timed;
	unsigned depth;
	uint64_t skipped;
};

enum fmt { F_AUTO, F_TRACEFS, F_BLKPARSE, F_DISKSIM, F_SPC, F_MSR, F_PLAN };
static const char *const fmt_names[] = { "auto", "tracefs", "blkparse", "disksim", "spc", "msr", "plan" };

struct loader {
	struct sweep_sim_trace *t;
	enum fmt f;
	bool filter;
	unsigned maj, min;
	/* outstanding depth from issue/complete pairs */
	uint64_t outstanding, depth_sum, depth_samples;
	/* blkparse: queue events kept apart, used when the trace has no dispatches */
	struct sweep_sim_request *q;
	size_t nq, capq;
	uint64_t ms_base;
	bool have_base;
};

static int push(struct sweep_sim_request **v, size_t *n, size_t *cap, const struct sweep_sim_request *r)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 1024;
		struct sweep_sim_request *nv = realloc(*v, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = nc;
	}
	(*v)[(*n)++] = *r;
	return 0;
}

static int add(struct loader *L, uint64_t time_ns, uint64_t off, uint64_t len, int op, uint32_t stream)
{
	if (!len) {
		L->t->skipped++;
		return 0;
	}
	struct sweep_sim_request r = {
		.time_ns = time_ns, .offset = off, .length = len, .id = L->t->n, .op = (uint8_t)op,
		.stream = stream,
	};
	return push(&L->t->v, &L->t->n, &L->t->cap, &r);
}

/* R, W, RA, WS, FWS... -> op, or -1 for what is not a data transfer (flush, discard). */
static int rwbs_op(const char *s)
{
	if (strchr(s, 'D') || strchr(s, 'E'))
		return -1;
	if (strchr(s, 'W'))
		return SWEEP_SIM_WRITE;
	if (strchr(s, 'R'))
		return SWEEP_SIM_READ;
	return -1;
}

static void issue(struct loader *L)
{
	L->depth_sum += L->outstanding + 1;
	L->depth_samples++;
	L->outstanding++;
}

static void complete(struct loader *L)
{
	if (L->outstanding)
		L->outstanding--;
}

static bool dev_ok(const struct loader *L, unsigned maj, unsigned min)
{
	return !L->filter || (maj == L->maj && min == L->min);
}

/* "  cat-123 [000] ..... 1234.567890: block_rq_issue: 7,0 R 4096 () 2048 + 8 [cat]" */
static int parse_tracefs(struct loader *L, const char *line)
{
	const char *ev = strstr(line, ": block_rq_");
	if (!ev)
		return 0;
	bool is_issue = strncmp(ev, ": block_rq_issue:", 17) == 0;
	bool is_complete = strncmp(ev, ": block_rq_complete:", 20) == 0;
	if (!is_issue && !is_complete)
		return 0;
	/* the timestamp ends where the event name begins */
	const char *p = ev;
	while (p > line && !isspace((unsigned char)p[-1]))
		p--;
	double ts = strtod(p, NULL);
	/* the task is "comm-PID" before the [CPU] field: the PID is the stream */
	uint32_t pid = 0;
	const char *cpu = strchr(line, '[');
	if (cpu && cpu < ev) {
		const char *q = cpu;
		while (q > line && isspace((unsigned char)q[-1]))
			q--;
		const char *d = q;
		while (d > line && isdigit((unsigned char)d[-1]))
			d--;
		if (d < q && d > line && d[-1] == '-')
			pid = (uint32_t)strtoul(d, NULL, 10);
	}
	const char *rest = strchr(ev + 2, ':') + 1;
	unsigned maj, min;
	char rwbs[16];
	if (sscanf(rest, " %u,%u %15s", &maj, &min, rwbs) != 3)
		return -EBADMSG;
	const char *paren = strchr(rest, ')');
	unsigned long long sector, nsect;
	if (!paren || sscanf(paren + 1, " %llu + %llu", &sector, &nsect) != 2) {
		L->t->skipped++; /* flushes print no sector */
		return 0;
	}
	if (!dev_ok(L, maj, min))
		return 0;
	if (is_complete) {
		complete(L);
		return 0;
	}
	int op = rwbs_op(rwbs);
	if (op < 0 || !nsect) {
		L->t->skipped++;
		return 0;
	}
	issue(L);
	return add(L, (uint64_t)(ts * 1e9 + 0.5), sector * 512, nsect * 512, op, pid);
}

/* "  8,0    3        1     0.000000000  4162  D  RS 1234 + 8 [cat]" */
static int parse_blkparse(struct loader *L, const char *line)
{
	unsigned maj, min, cpu;
	unsigned long long seq, pid, sector, nsect;
	double ts;
	char act[8], rwbs[16];
	int n = sscanf(line, " %u,%u %u %llu %lf %llu %7s %15s %llu + %llu", &maj, &min, &cpu, &seq, &ts, &pid,
		       act, rwbs, &sector, &nsect);
	if (n < 8)
		return 0; /* summaries and other text */
	if (!dev_ok(L, maj, min))
		return 0;
	if (strcmp(act, "C") == 0) {
		complete(L);
		return 0;
	}
	bool d = strcmp(act, "D") == 0, q = strcmp(act, "Q") == 0;
	if (!d && !q)
		return 0;
	int op = rwbs_op(rwbs);
	if (n < 10 || op < 0) {
		L->t->skipped++;
		return 0;
	}
	if (d) {
		issue(L);
		return add(L, (uint64_t)(ts * 1e9 + 0.5), sector * 512, nsect * 512, op, (uint32_t)pid);
	}
	struct sweep_sim_request r = { .time_ns = (uint64_t)(ts * 1e9 + 0.5), .offset = sector * 512,
				       .length = nsect * 512, .op = (uint8_t)op, .stream = (uint32_t)pid };
	return nsect ? push(&L->q, &L->nq, &L->capq, &r) : 0;
}

/* "arrival_ms devno blkno size_blocks flags" (flags bit 0: read) */
static int parse_disksim(struct loader *L, const char *line)
{
	double ms;
	unsigned dev;
	unsigned long long blk, size, flags;
	if (sscanf(line, "%lf %u %llu %llu %llx", &ms, &dev, &blk, &size, &flags) != 5)
		return -EBADMSG;
	return add(L, (uint64_t)(ms * 1e6 + 0.5), blk * 512, size * 512,
		   (flags & 1) ? SWEEP_SIM_READ : SWEEP_SIM_WRITE, dev);
}

/* "ASU,LBA,Size,Opcode,Timestamp" (SPC / UMass): LBA in sectors, size in bytes, seconds. */
static int parse_spc(struct loader *L, const char *line)
{
	unsigned asu;
	unsigned long long lba, size;
	char op;
	double ts;
	if (sscanf(line, "%u , %llu , %llu , %c , %lf", &asu, &lba, &size, &op, &ts) != 5)
		return -EBADMSG;
	int o = (op == 'r' || op == 'R') ? SWEEP_SIM_READ : (op == 'w' || op == 'W') ? SWEEP_SIM_WRITE : -1;
	if (o < 0)
		return -EBADMSG;
	return add(L, (uint64_t)(ts * 1e9 + 0.5), lba * 512, size, o, asu);
}

/* "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime" (MSR Cambridge; 100 ns ticks) */
static int parse_msr(struct loader *L, const char *line)
{
	unsigned long long ts, off, size;
	char host[64], type[16];
	unsigned disk;
	if (sscanf(line, "%llu,%63[^,],%u,%15[^,],%llu,%llu", &ts, host, &disk, type, &off, &size) != 6)
		return -EBADMSG;
	int o = strcasecmp(type, "Read") == 0 ? SWEEP_SIM_READ : strcasecmp(type, "Write") == 0 ? SWEEP_SIM_WRITE : -1;
	if (o < 0)
		return -EBADMSG;
	if (!L->have_base) {
		L->ms_base = ts;
		L->have_base = true;
	}
	return add(L, ts >= L->ms_base ? (ts - L->ms_base) * 100 : 0, off, size, o, disk);
}

/* "R <offset> <length> <ino>" (sweep-trace 1; extra fields ignored) */
static int parse_plan(struct loader *L, const char *line)
{
	char op;
	unsigned long long off, len;
	if (sscanf(line, " %c %llu %llu", &op, &off, &len) != 3 || (op != 'R' && op != 'W'))
		return -EBADMSG;
	return add(L, 0, off, len, op == 'W' ? SWEEP_SIM_WRITE : SWEEP_SIM_READ, 0);
}

static enum fmt guess(const char *line)
{
	if (strstr(line, "block_rq_"))
		return F_TRACEFS;
	char c;
	unsigned long long a, b;
	if (sscanf(line, " %c %llu %llu", &c, &a, &b) == 3 && (c == 'R' || c == 'W'))
		return F_PLAN;
	if (strchr(line, ',')) {
		char f4[16];
		unsigned long long x;
		if (sscanf(line, "%llu,%*[^,],%*u,%15[^,],", &x, f4) == 2 &&
		    (strcasecmp(f4, "Read") == 0 || strcasecmp(f4, "Write") == 0))
			return F_MSR;
		char op;
		if (sscanf(line, "%*u , %*u , %*u , %c", &op) == 1)
			return F_SPC;
		unsigned maj, min;
		char act[8];
		if (sscanf(line, " %u,%u %*u %*u %*f %*u %7s", &maj, &min, act) == 3)
			return F_BLKPARSE;
		return F_AUTO;
	}
	double t;
	unsigned d;
	unsigned long long x, y, z;
	if (sscanf(line, "%lf %u %llu %llu %llx", &t, &d, &x, &y, &z) == 5)
		return F_DISKSIM;
	return F_AUTO;
}

static int cmp_time(const void *a, const void *b)
{
	const struct sweep_sim_request *x = a, *y = b;
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int parse_format(const char *format, struct loader *L)
{
	if (!format)
		format = "auto";
	const char *at = strchr(format, '@');
	size_t n = at ? (size_t)(at - format) : strlen(format);
	L->f = (enum fmt)-1;
	for (unsigned i = 0; i < sizeof(fmt_names) / sizeof(fmt_names[0]); i++)
		if (strlen(fmt_names[i]) == n && strncmp(fmt_names[i], format, n) == 0)
			L->f = (enum fmt)i;
	if ((int)L->f < 0)
		return -EINVAL;
	if (at) {
		if (sscanf(at + 1, "%u,%u", &L->maj, &L->min) != 2)
			return -EINVAL;
		L->filter = true;
	}
	return 0;
}

static int load_lines(FILE *fp, struct loader *L)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int err = 0;
	while (!err && (len = getline(&line, &cap, fp)) >= 0) {
		const char *p = line;
		while (isspace((unsigned char)*p))
			p++;
		if (!*p || *p == '#')
			continue;
		if (L->f == F_AUTO) {
			L->f = guess(p);
			if (L->f == F_AUTO) {
				err = -EBADMSG;
				break;
			}
		}
		switch (L->f) {
		case F_TRACEFS: err = parse_tracefs(L, p); break;
		case F_BLKPARSE: err = parse_blkparse(L, p); break;
		case F_DISKSIM: err = parse_disksim(L, p); break;
		case F_SPC: err = parse_spc(L, p); break;
		case F_MSR: err = parse_msr(L, p); break;
		case F_PLAN: err = parse_plan(L, p); break;
		default: err = -EINVAL;
		}
	}
	if (!err && ferror(fp))
		err = -EIO;
	free(line);
	return err;
}

SWEEP_EXPORT int sweep_sim_trace_load(const char *path, const char *format, struct sweep_sim_trace **ret)
{
	if (!path || !ret)
		return -EINVAL;
	struct loader L = { 0 };
	int err = parse_format(format, &L);
	if (err)
		return err;
	struct sweep_sim_trace *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	L.t = t;
	FILE *fp = fopen(path, "re");
	if (!fp) {
		err = -errno;
		free(t);
		return err;
	}
	err = load_lines(fp, &L);
	fclose(fp);
	if (!err && L.f == F_BLKPARSE && !t->n && L.nq) {
		/* no dispatch events in this trace: replay the queue events */
		free(t->v);
		t->v = L.q;
		t->n = L.nq;
		t->cap = L.capq;
		L.q = NULL;
	}
	free(L.q);
	if (!err && !t->n)
		err = -ENODATA;
	if (err) {
		free(t->v);
		free(t);
		return err;
	}
	t->format = fmt_names[L.f];
	t->timed = L.f != F_PLAN;
	t->depth = L.depth_samples ? (unsigned)((L.depth_sum + L.depth_samples / 2) / L.depth_samples) : 1;
	if (!t->depth)
		t->depth = 1;
	if (t->timed) {
		for (size_t i = 0; i < t->n; i++)
			t->v[i].id = i;
		qsort(t->v, t->n, sizeof(*t->v), cmp_time);
		uint64_t t0 = t->v[0].time_ns;
		for (size_t i = 0; i < t->n; i++)
			t->v[i].time_ns -= t0;
	}
	for (size_t i = 0; i < t->n; i++)
		t->v[i].id = i;
	*ret = t;
	return 0;
}

SWEEP_EXPORT struct sweep_sim_trace *sweep_sim_trace_free(struct sweep_sim_trace *t)
{
	if (t) {
		free(t->v);
		free(t);
	}
	return NULL;
}

SWEEP_EXPORT int sweep_sim_trace_next(struct sweep_sim_trace *t, struct sweep_sim_request *ret)
{
	if (!t || !ret)
		return -EINVAL;
	if (t->pos >= t->n)
		return 0;
	*ret = t->v[t->pos++];
	return 1;
}

SWEEP_EXPORT int sweep_sim_trace_get_info(const struct sweep_sim_trace *t, struct sweep_sim_trace_info *ret)
{
	struct sweep_sim_trace_info i;
	int err = t ? sim_out_begin(&i, sizeof(i), ret) : -EINVAL;
	if (err)
		return err;
	i = (struct sweep_sim_trace_info){
		.format = t->format,
		.requests = t->n,
		.timed = t->timed,
		.depth = t->depth,
		.skipped = t->skipped,
	};
	sim_out_end(ret, &i, sizeof(i));
	return 0;
}
