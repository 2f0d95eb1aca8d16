/* SPDX-License-Identifier: MIT */
/*
 * Trace readers. Each format is one line parser over fields split by the
 * reader; the whole trace is read into memory (64 bytes a request), sorted
 * by arrival time and replayed from there. A format name may carry a
 * device filter, "tracefs@7,0". The stream id of a request is the issuing
 * PID (tracefs, blkparse), the ASU (SPC), the disk number (MSR, DiskSim)
 * or 0 (plan traces).
 *
 * Traces are input from anywhere, so every reader is strict and bounded:
 * lines of at most SWEEP_SIM_TRACE_MAX_LINE bytes, at most max_requests
 * requests, and every field checked (no sign, no overflow past 2^64, no
 * nan or inf, times and extents that fit in 64 bits, lengths that fit the
 * device). A bad field is -EBADMSG with its line and what is wrong.
 *
 * tracefs and blkparse captures also give each request's dependency: the
 * request whose completion came last before it was issued, and the time
 * between the two (trace_replay.c replays that structure). A completion
 * timed before the issue it completes is -EBADMSG too.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

enum fmt { F_AUTO, F_TRACEFS, F_BLKPARSE, F_DISKSIM, F_SPC, F_MSR, F_PLAN };
static const char *const fmt_names[] = { "auto", "tracefs", "blkparse", "disksim", "spc", "msr", "plan" };

#define MAX_FIELDS 24

/* An in-flight request of a capture, by first sector (open addressing, backward-shift deletion). */
struct inflight {
	uint64_t sector, idx;
	bool used;
};

struct loader {
	struct sweep_sim_trace *t;
	enum fmt f;
	bool filter;
	unsigned maj, min;
	uint64_t capacity, max_requests;
	unsigned flags;
	/* the line being parsed, for messages */
	uint64_t lineno;
	char msg[sizeof(((struct sweep_sim_trace_error *)0)->message)];
	/* outstanding depth from issue/complete pairs */
	uint64_t outstanding, depth_sum, depth_samples;
	/* dependencies: in-flight issues by sector, the last completion seen */
	struct inflight *fl;
	size_t flcap, fln;
	uint64_t last_done, last_done_ns;
	bool have_done;
	/* blkparse: queue events kept apart, used when the trace has no dispatches */
	struct sim_trace_rec *q;
	size_t nq, capq;
	uint64_t ms_base;
	bool have_base;
};

/* -EBADMSG with a message about the current line. */
__attribute__((format(printf, 2, 3))) static int bad(struct loader *L, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(L->msg, sizeof(L->msg), fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

/* ---- fields ---- */

struct fields {
	const char *s[MAX_FIELDS];
	size_t len[MAX_FIELDS];
	unsigned n;
};

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Split at runs of blanks, or at `sep` (blanks around a field trimmed); at most max fields. */
static void split_n(const char *line, char sep, struct fields *f, unsigned max)
{
	f->n = 0;
	const char *p = line;
	while (*p && f->n < max) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '\n' || *p == '\r')
			break;
		const char *a = p;
		if (sep)
			while (*p && *p != sep && *p != '\n' && *p != '\r')
				p++;
		else
			while (*p && !blank(*p))
				p++;
		const char *b = p;
		while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
			b--;
		f->s[f->n] = a;
		f->len[f->n++] = (size_t)(b - a);
		if (sep && *p == sep)
			p++;
	}
}

static void split(const char *line, char sep, struct fields *f)
{
	split_n(line, sep, f, MAX_FIELDS);
}

/* An unsigned decimal (or hex, base 16) field of exactly [s, s+len): 0 or -EBADMSG. */
static int parse_u64(struct loader *L, const char *what, const char *s, size_t len, int base, uint64_t *ret)
{
	if (!len)
		return bad(L, "%s: empty field", what);
	if (*s == '-')
		return bad(L, "%s: negative value '%.*s'", what, (int)(len < 40 ? len : 40), s);
	if (*s == '+' && len > 1) {
		s++;
		len--;
	}
	if (base == 16 && len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		len -= 2;
	}
	uint64_t v = 0;
	for (size_t i = 0; i < len; i++) {
		int c = (unsigned char)s[i], d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (base == 16 && c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return bad(L, "%s: not a number '%.*s'", what, (int)(len < 40 ? len : 40), s);
		if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			return bad(L, "%s: value over 2^64-1", what);
		v = v * (uint64_t)base + (uint64_t)d;
	}
	*ret = v;
	return 0;
}

static int parse_u32(struct loader *L, const char *what, const char *s, size_t len, uint32_t *ret)
{
	uint64_t v;
	int err = parse_u64(L, what, s, len, 10, &v);
	if (err)
		return err;
	if (v > UINT32_MAX)
		return bad(L, "%s: value over 2^32-1", what);
	*ret = (uint32_t)v;
	return 0;
}

/* A time in units of `unit_ns` nanoseconds (1e9: seconds, 1e6: ms): finite, not negative, < 2^63 ns. */
static int parse_time(struct loader *L, const char *what, const char *s, size_t len, double unit_ns, uint64_t *ret)
{
	char buf[64];
	if (!len)
		return bad(L, "%s: empty field", what);
	if (len >= sizeof(buf))
		return bad(L, "%s: not a time '%.40s'", what, s);
	memcpy(buf, s, len);
	buf[len] = 0;
	/* digits, one point and an exponent only: no "nan", "inf", hex floats or signs */
	for (size_t i = 0; i < len; i++)
		if (!isdigit((unsigned char)buf[i]) && buf[i] != '.' && buf[i] != 'e' && buf[i] != 'E' &&
		    !((buf[i] == '-' || buf[i] == '+') && i > 0 && (buf[i - 1] == 'e' || buf[i - 1] == 'E')))
			return bad(L, "%s: %s '%s'", what, buf[i] == '-' && i == 0 ? "negative time" : "not a time", buf);
	if (!strpbrk(buf, "0123456789")) /* "." is no time (the plain path below read it as 0) */
		return bad(L, "%s: not a time '%s'", what, buf);
	/* plain decimals (what every capture prints): exact, in integers */
	size_t dot = strcspn(buf, ".eE");
	if (dot <= 10 && !strpbrk(buf, "eE") && (unit_ns == 1e9 || unit_ns == 1e6)) {
		unsigned digits = unit_ns == 1e9 ? 9 : 6;
		uint64_t whole = 0, frac = 0;
		for (size_t i = 0; i < dot; i++)
			whole = whole * 10 + (uint64_t)(buf[i] - '0');
		const char *f = buf[dot] == '.' ? buf + dot + 1 : buf + dot;
		if (!strchr(f, '.')) {
			size_t nf = strlen(f);
			for (unsigned i = 0; i < digits; i++)
				frac = frac * 10 + (i < nf ? (uint64_t)(f[i] - '0') : 0);
			if (nf > digits && f[digits] >= '5')
				frac++; /* round half up, as the floating path does */
			uint64_t scale = unit_ns == 1e9 ? 1000000000ull : 1000000ull;
			if (whole < (1ull << 63) / scale) {
				*ret = whole * scale + frac;
				return 0;
			}
		}
	}
	char *end;
	errno = 0;
	double v = strtod(buf, &end);
	if (end != buf + len || !isfinite(v) || v < 0)
		return bad(L, "%s: not a time '%s'", what, buf);
	double ns = v * unit_ns + 0.5;
	if (ns >= 9.2e18)
		return bad(L, "%s: time beyond 2^63 ns '%s'", what, buf);
	*ret = (uint64_t)ns;
	return 0;
}

static bool field_is(const struct fields *f, unsigned i, const char *word)
{
	return i < f->n && f->len[i] == strlen(word) && strncmp(f->s[i], word, f->len[i]) == 0;
}

/* "MAJ,MIN" */
static bool parse_dev(const char *s, size_t len, unsigned *maj, unsigned *min)
{
	unsigned long a = 0, b = 0;
	size_t i = 0;
	for (; i < len && isdigit((unsigned char)s[i]) && a < 100000000; i++)
		a = a * 10 + (unsigned long)(s[i] - '0');
	if (!i || i >= len || s[i] != ',')
		return false;
	size_t j = ++i;
	for (; i < len && isdigit((unsigned char)s[i]) && b < 100000000; i++)
		b = b * 10 + (unsigned long)(s[i] - '0');
	if (i == j || i != len)
		return false;
	*maj = (unsigned)a;
	*min = (unsigned)b;
	return true;
}

/* ---- requests ---- */

static int add(struct loader *L, uint64_t time_ns, uint64_t off, uint64_t len, int op, uint32_t stream,
	       bool queue_event)
{
	if (op == SWEEP_SIM_FLUSH) {
		off = len = 0; /* a flush moves no data */
	} else if (!len) {
		return bad(L, "length 0 at offset %llu: a read or write moves at least one byte", (unsigned long long)off);
	} else if (off > UINT64_MAX - len) {
		return bad(L, "extent %llu + %llu beyond 2^64 bytes", (unsigned long long)off, (unsigned long long)len);
	} else if (L->capacity && len > L->capacity) {
		return bad(L, "length %llu longer than the device (%llu bytes)", (unsigned long long)len,
			   (unsigned long long)L->capacity);
	} else if (L->capacity && (L->flags & SWEEP_SIM_TRACE_WRAP)) {
		/* a trace of a bigger disk: fold the offset, keep the length, end at the end at most */
		off = off % L->capacity / 512 * 512;
		if (off + len > L->capacity)
			off = (L->capacity - len) / 512 * 512;
	} else if (L->capacity && off + len > L->capacity) {
		return bad(L, "extent %llu + %llu past the end of the device (%llu bytes)", (unsigned long long)off,
			   (unsigned long long)len, (unsigned long long)L->capacity);
	}
	struct sim_trace_rec **v = queue_event ? &L->q : &L->t->v;
	size_t *n = queue_event ? &L->nq : &L->t->n, *cap = queue_event ? &L->capq : &L->t->cap;
	if ((uint64_t)(L->t->n + L->nq) >= L->max_requests)
		return -EFBIG;
	if (sweep__grow(v, cap, *n + 1, sizeof(**v), 1024))
		return -ENOMEM;
	(*v)[(*n)++] = (struct sim_trace_rec){
		.r = { .time_ns = time_ns, .offset = off, .length = len, .id = *n, .op = (uint8_t)op, .stream = stream },
		.after = NONE64,
	};
	return 0;
}

/* sectors -> bytes, checked */
static int sectors(struct loader *L, uint64_t sector, uint64_t n, uint64_t *off, uint64_t *len)
{
	if (sector > UINT64_MAX / 512 || n > UINT64_MAX / 512)
		return bad(L, "sector %llu + %llu beyond 2^64 bytes", (unsigned long long)sector, (unsigned long long)n);
	*off = sector * 512;
	*len = n * 512;
	return 0;
}

/*
 * R, W, RA, WS, FWS... -> op, or -1 for what is neither a data transfer nor
 * a flush (discard, secure erase, driver-private). With no sectors, an F is
 * the flush the block layer sends ahead of a PREFLUSH write, or alone.
 */
static int rwbs_op(const char *s, size_t len, uint64_t nsect)
{
	if (memchr(s, 'D', len) || memchr(s, 'E', len))
		return -1;
	if (!nsect)
		return memchr(s, 'F', len) ? SWEEP_SIM_FLUSH : -1;
	if (memchr(s, 'W', len))
		return SWEEP_SIM_WRITE;
	if (memchr(s, 'R', len))
		return SWEEP_SIM_READ;
	return -1;
}

static bool dev_ok(const struct loader *L, unsigned maj, unsigned min)
{
	return !L->filter || (maj == L->maj && min == L->min);
}

/* ---- issue/complete pairs: depth and dependencies ---- */

static size_t fl_slot(const struct loader *L, uint64_t sector)
{
	return (size_t)((sector * 0x9e3779b97f4a7c15ull) >> 20) & (L->flcap - 1);
}

static int fl_put(struct loader *L, uint64_t sector, uint64_t idx)
{
	if (2 * (L->fln + 1) > L->flcap) {
		size_t ncap = L->flcap ? 2 * L->flcap : 64;
		struct inflight *old = L->fl, *nf = calloc(ncap, sizeof(*nf));
		if (!nf)
			return -ENOMEM;
		size_t ocap = L->flcap;
		L->fl = nf;
		L->flcap = ncap;
		for (size_t i = 0; i < ocap; i++)
			if (old[i].used) {
				size_t k = fl_slot(L, old[i].sector);
				while (L->fl[k].used)
					k = (k + 1) & (L->flcap - 1);
				L->fl[k] = old[i];
			}
		free(old);
	}
	size_t k = fl_slot(L, sector);
	while (L->fl[k].used)
		k = (k + 1) & (L->flcap - 1);
	L->fl[k] = (struct inflight){ sector, idx, true };
	L->fln++;
	return 0;
}

/* Take the in-flight request starting at sector: 1 and *idx, or 0. */
static int fl_take(struct loader *L, uint64_t sector, uint64_t *idx)
{
	if (!L->flcap)
		return 0;
	size_t mask = L->flcap - 1, k = fl_slot(L, sector);
	while (L->fl[k].used && L->fl[k].sector != sector)
		k = (k + 1) & mask;
	if (!L->fl[k].used)
		return 0;
	*idx = L->fl[k].idx;
	L->fl[k].used = false;
	L->fln--;
	/* shift back the entries of the run that follows */
	for (size_t j = (k + 1) & mask; L->fl[j].used; j = (j + 1) & mask) {
		size_t home = fl_slot(L, L->fl[j].sector);
		if ((j > k && (home <= k || home > j)) || (j < k && home <= k && home > j)) {
			L->fl[k] = L->fl[j];
			L->fl[j].used = false;
			k = j;
		}
	}
	return 1;
}

/* A request was issued (it is the last one added): depth sample and its dependency. */
static int issued(struct loader *L, uint64_t sector, uint64_t ts)
{
	L->depth_sum += L->outstanding + 1;
	L->depth_samples++;
	L->outstanding++;
	struct sim_trace_rec *r = &L->t->v[L->t->n - 1];
	if (L->have_done && ts >= L->last_done_ns) {
		r->after = L->last_done;
		r->think = ts - L->last_done_ns;
	}
	return fl_put(L, sector, L->t->n - 1);
}

/*
 * A request completed: the last completion seen, for the dependencies of the
 * issues after it. A completion timed before the issue it completes is an
 * error: the gap to the next issue would then be longer than the capture
 * (a request issued at 5e9 s, completed at 0 s, lets the next one wait 5e9 s
 * after it in the model, and a chain of such gaps ran the model's clock past
 * 2^63 ns: completions before their arrival).
 */
static int completed(struct loader *L, uint64_t sector, uint64_t ts)
{
	uint64_t idx;
	if (L->outstanding)
		L->outstanding--;
	if (!fl_take(L, sector, &idx))
		return 0;
	uint64_t at = L->t->v[idx].r.time_ns;
	if (ts < at)
		return bad(L, "completion of sector %llu at %llu.%09llu s, before its issue at %llu.%09llu s",
			   (unsigned long long)sector, (unsigned long long)(ts / NS_PER_S),
			   (unsigned long long)(ts % NS_PER_S), (unsigned long long)(at / NS_PER_S),
			   (unsigned long long)(at % NS_PER_S));
	L->last_done = idx;
	L->last_done_ns = ts;
	L->have_done = true;
	return 0;
}

/* ---- formats ---- */

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
	uint64_t ts = 0; /* set by parse_time on success (-O3 cannot tell) */
	int err = parse_time(L, "timestamp", p, (size_t)(ev - p), 1e9, &ts);
	if (err)
		return err;
	/* the task is "comm-PID" before the [CPU] field: the PID is the stream */
	uint32_t pid = 0;
	const char *cpu = strchr(line, '[');
	if (cpu && cpu < ev) {
		const char *q = cpu;
		while (q > line && isspace((unsigned char)q[-1]))
			q--;
		const char *d = q;
		while (d > line && isdigit((unsigned char)d[-1]) && q - d < 10)
			d--;
		if (d < q && d > line && d[-1] == '-')
			pid = (uint32_t)strtoul(d, NULL, 10);
	}
	const char *rest = strchr(ev + 2, ':') + 1;
	struct fields h, f;
	split_n(rest, 0, &h, 2);
	unsigned maj, min;
	if (h.n < 2 || !parse_dev(h.s[0], h.len[0], &maj, &min))
		return bad(L, "no MAJ,MIN device after the event name");
	if (!dev_ok(L, maj, min))
		return 0;
	const char *paren = strchr(rest, ')');
	if (!paren) {
		L->t->skipped++; /* some kernels print flushes without sectors */
		return 0;
	}
	split_n(paren + 1, 0, &f, 3);
	uint64_t sector = 0, nsect = 0;
	if (f.n < 3 || !field_is(&f, 1, "+"))
		return bad(L, "no 'SECTOR + COUNT' after the command");
	if ((err = parse_u64(L, "sector count", f.s[2], f.len[2], 10, &nsect)))
		return err;
	int op = rwbs_op(h.s[1], h.len[1], nsect);
	if (!nsect) {
		/* flushes carry sector 2^64-1 (or 0) and no data: modelled, not paired with their completion */
		if (is_issue && op == SWEEP_SIM_FLUSH)
			return add(L, ts, 0, 0, op, pid, false);
		if (is_issue)
			L->t->skipped++;
		return 0;
	}
	if ((err = parse_u64(L, "sector", f.s[0], f.len[0], 10, &sector)))
		return err;
	if (is_complete)
		return completed(L, sector, ts);
	if (op < 0) {
		L->t->skipped++;
		return 0;
	}
	uint64_t off = 0, len = 0;
	if ((err = sectors(L, sector, nsect, &off, &len)) || (err = add(L, ts, off, len, op, pid, false)))
		return err;
	return issued(L, sector, ts);
}

/* "  8,0    3        1     0.000000000  4162  D  RS 1234 + 8 [cat]" */
static int parse_blkparse(struct loader *L, const char *line)
{
	struct fields f;
	unsigned maj, min;
	split(line, 0, &f);
	if (f.n < 8 || !parse_dev(f.s[0], f.len[0], &maj, &min))
		return 0; /* summaries and other text */
	if (!dev_ok(L, maj, min))
		return 0;
	bool c = field_is(&f, 5, "C"), d = field_is(&f, 5, "D"), q = field_is(&f, 5, "Q");
	if (!c && !d && !q)
		return 0;
	uint64_t ts = 0, pid = 0, sector = 0, nsect = 0, off = 0, len = 0;
	int err;
	bool extent = f.n >= 10 && field_is(&f, 8, "+");
	if (extent && (err = parse_u64(L, "sector count", f.s[9], f.len[9], 10, &nsect)))
		return err;
	int op = rwbs_op(f.s[6], f.len[6], nsect);
	if (op == SWEEP_SIM_FLUSH && d) {
		/* "D FWS [jbd2]" or "D FN 0 + 0": a flush; modelled, not paired with its completion */
		if ((err = parse_time(L, "time", f.s[3], f.len[3], 1e9, &ts)) ||
		    (err = parse_u64(L, "pid", f.s[4], f.len[4], 10, &pid)))
			return err;
		return add(L, ts, 0, 0, op, (uint32_t)pid, false);
	}
	if (!extent || op < 0 || !nsect) {
		if (!c)
			L->t->skipped++;
		return 0;
	}
	if ((err = parse_time(L, "time", f.s[3], f.len[3], 1e9, &ts)) ||
	    (err = parse_u64(L, "sector", f.s[7], f.len[7], 10, &sector)))
		return err;
	if (c)
		return completed(L, sector, ts);
	if ((err = parse_u64(L, "pid", f.s[4], f.len[4], 10, &pid)) || (err = sectors(L, sector, nsect, &off, &len)))
		return err;
	if ((err = add(L, ts, off, len, op, (uint32_t)pid, q)))
		return err;
	return d ? issued(L, sector, ts) : 0;
}

/* "arrival_ms devno blkno size_blocks flags" (flags bit 0: read) */
static int parse_disksim(struct loader *L, const char *line)
{
	struct fields f;
	split(line, 0, &f);
	if (f.n < 5)
		return bad(L, "want 5 fields (time devno blkno size flags), got %u", f.n);
	uint64_t ts = 0, blk = 0, size = 0, flags = 0, off = 0, len = 0;
	uint32_t dev = 0;
	int err;
	if ((err = parse_time(L, "time", f.s[0], f.len[0], 1e6, &ts)) ||
	    (err = parse_u32(L, "devno", f.s[1], f.len[1], &dev)) ||
	    (err = parse_u64(L, "blkno", f.s[2], f.len[2], 10, &blk)) ||
	    (err = parse_u64(L, "size", f.s[3], f.len[3], 10, &size)) ||
	    (err = parse_u64(L, "flags", f.s[4], f.len[4], 16, &flags)) || (err = sectors(L, blk, size, &off, &len)))
		return err;
	return add(L, ts, off, len, (flags & 1) ? SWEEP_SIM_READ : SWEEP_SIM_WRITE, dev, false);
}

static int op_word(const char *s, size_t len)
{
	if (len == 1 && (*s == 'r' || *s == 'R'))
		return SWEEP_SIM_READ;
	if (len == 1 && (*s == 'w' || *s == 'W'))
		return SWEEP_SIM_WRITE;
	if (len == 4 && strncasecmp(s, "Read", 4) == 0)
		return SWEEP_SIM_READ;
	if (len == 5 && strncasecmp(s, "Write", 5) == 0)
		return SWEEP_SIM_WRITE;
	return -1;
}

/* "ASU,LBA,Size,Opcode,Timestamp" (SPC / UMass): LBA in sectors, size in bytes, seconds. */
static int parse_spc(struct loader *L, const char *line)
{
	struct fields f;
	split(line, ',', &f);
	if (f.n < 5)
		return bad(L, "want 5 fields (ASU,LBA,size,opcode,timestamp), got %u", f.n);
	uint32_t asu = 0;
	uint64_t lba = 0, size = 0, ts = 0, off = 0, len = 0;
	int err;
	if ((err = parse_u32(L, "ASU", f.s[0], f.len[0], &asu)) ||
	    (err = parse_u64(L, "LBA", f.s[1], f.len[1], 10, &lba)) ||
	    (err = parse_u64(L, "size", f.s[2], f.len[2], 10, &size)) ||
	    (err = parse_time(L, "timestamp", f.s[4], f.len[4], 1e9, &ts)) || (err = sectors(L, lba, 0, &off, &len)))
		return err;
	int o = op_word(f.s[3], f.len[3]);
	if (o < 0)
		return bad(L, "opcode: want r or w, got '%.*s'", (int)(f.len[3] < 20 ? f.len[3] : 20), f.s[3]);
	return add(L, ts, off, size, o, asu, false);
}

/* "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime" (MSR Cambridge; 100 ns ticks) */
static int parse_msr(struct loader *L, const char *line)
{
	struct fields f;
	split(line, ',', &f);
	if (f.n < 6)
		return bad(L, "want 7 fields (Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime), got %u", f.n);
	uint64_t ts = 0, off = 0, size = 0;
	uint32_t disk = 0;
	int err;
	if ((err = parse_u64(L, "timestamp", f.s[0], f.len[0], 10, &ts)) ||
	    (err = parse_u32(L, "disk number", f.s[2], f.len[2], &disk)) ||
	    (err = parse_u64(L, "offset", f.s[4], f.len[4], 10, &off)) ||
	    (err = parse_u64(L, "size", f.s[5], f.len[5], 10, &size)))
		return err;
	int o = op_word(f.s[3], f.len[3]);
	if (o < 0 || f.len[3] < 4)
		return bad(L, "type: want Read or Write, got '%.*s'", (int)(f.len[3] < 20 ? f.len[3] : 20), f.s[3]);
	if (!L->have_base) {
		L->ms_base = ts;
		L->have_base = true;
	}
	uint64_t rel = ts >= L->ms_base ? ts - L->ms_base : 0; /* traces are not always sorted */
	if (rel > INT64_MAX / 100)
		return bad(L, "timestamp: %llu ticks after the first is beyond 2^63 ns", (unsigned long long)rel);
	return add(L, rel * 100, off, size, o, disk, false);
}

/* "R <offset> <length> <ino>" (sweep-trace 1; extra fields ignored) */
static int parse_plan(struct loader *L, const char *line)
{
	struct fields f;
	split(line, 0, &f);
	if (f.n < 3)
		return bad(L, "want 'R|W OFFSET LENGTH', got %u fields", f.n);
	int op = field_is(&f, 0, "R") ? SWEEP_SIM_READ : field_is(&f, 0, "W") ? SWEEP_SIM_WRITE : -1;
	if (op < 0)
		return bad(L, "operation: want R or W, got '%.*s'", (int)(f.len[0] < 20 ? f.len[0] : 20), f.s[0]);
	uint64_t off = 0, len = 0;
	int err;
	if ((err = parse_u64(L, "offset", f.s[1], f.len[1], 10, &off)) ||
	    (err = parse_u64(L, "length", f.s[2], f.len[2], 10, &len)))
		return err;
	return add(L, 0, off, len, op, 0, false);
}

/* The format of a first data line, or F_AUTO. Only a guess: the parser then checks every field. */
static enum fmt guess(const char *line)
{
	if (strstr(line, "block_rq_"))
		return F_TRACEFS;
	struct fields f;
	split(line, 0, &f);
	unsigned maj, min;
	if (f.n >= 3 && (field_is(&f, 0, "R") || field_is(&f, 0, "W")) && isdigit((unsigned char)*f.s[1]))
		return F_PLAN;
	if (f.n >= 7 && parse_dev(f.s[0], f.len[0], &maj, &min))
		return F_BLKPARSE;
	if (f.n >= 5 && isdigit((unsigned char)*f.s[0]) && !strchr(line, ','))
		return F_DISKSIM;
	split(line, ',', &f);
	if (f.n >= 6 && f.len[3] >= 4 && op_word(f.s[3], f.len[3]) >= 0)
		return F_MSR;
	if (f.n >= 5 && op_word(f.s[3], f.len[3]) >= 0)
		return F_SPC;
	return F_AUTO;
}

static int cmp_time(const void *a, const void *b)
{
	const struct sim_trace_rec *x = a, *y = b;
	if (x->r.time_ns != y->r.time_ns)
		return x->r.time_ns < y->r.time_ns ? -1 : 1;
	return x->r.id < y->r.id ? -1 : x->r.id > y->r.id;
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
		if (!parse_dev(at + 1, strlen(at + 1), &L->maj, &L->min))
			return -EINVAL;
		L->filter = true;
	}
	return 0;
}

static int parse_line(struct loader *L, const char *p)
{
	while (isspace((unsigned char)*p))
		p++;
	if (!*p || *p == '#')
		return 0;
	if (L->f == F_AUTO) {
		L->f = guess(p);
		if (L->f == F_AUTO)
			return bad(L, "not a line of any trace format sweep-sim reads");
	}
	switch (L->f) {
	case F_TRACEFS: return parse_tracefs(L, p);
	case F_BLKPARSE: return parse_blkparse(L, p);
	case F_DISKSIM: return parse_disksim(L, p);
	case F_SPC: return parse_spc(L, p);
	case F_MSR: return parse_msr(L, p);
	case F_PLAN: return parse_plan(L, p);
	default: return -EINVAL;
	}
}

/* Lines of at most SWEEP_SIM_TRACE_MAX_LINE bytes, no NUL bytes; each handed to the format's parser. */
static int load_lines(FILE *fp, struct loader *L)
{
	enum { CHUNK = 1 << 16 };
	char *buf = malloc(CHUNK + SWEEP_SIM_TRACE_MAX_LINE + 2);
	if (!buf)
		return -ENOMEM;
	size_t have = 0; /* bytes of an unfinished line at the start of buf */
	int err = 0;
	bool eof = false;
	while (!err && !eof) {
		size_t n = fread(buf + have, 1, CHUNK, fp);
		eof = n < CHUNK;
		size_t end = have + n, at = 0;
		while (!err) {
			char *nl = memchr(buf + at, '\n', end - at);
			if (!nl && !(eof && at < end)) {
				if (end - at > SWEEP_SIM_TRACE_MAX_LINE) {
					L->lineno++;
					err = bad(L, "line longer than %d bytes", SWEEP_SIM_TRACE_MAX_LINE);
				}
				break;
			}
			size_t len = nl ? (size_t)(nl - (buf + at)) : end - at;
			L->lineno++;
			if (len > SWEEP_SIM_TRACE_MAX_LINE) {
				err = bad(L, "line longer than %d bytes", SWEEP_SIM_TRACE_MAX_LINE);
				break;
			}
			if (memchr(buf + at, 0, len)) {
				err = bad(L, "NUL byte in the line");
				break;
			}
			char keep = buf[at + len];
			buf[at + len] = 0;
			err = parse_line(L, buf + at);
			buf[at + len] = keep;
			at += len + (nl != NULL);
			if (at >= end)
				break;
		}
		have = end - at;
		memmove(buf, buf + at, have);
	}
	free(buf);
	if (!err && ferror(fp))
		err = -EIO;
	return err;
}

static void fill_error(const struct loader *L, int err, struct sweep_sim_trace_error *ret)
{
	struct sweep_sim_trace_error e;
	if (!ret || sweep__out_begin(&e, sizeof(e), ret, SIM_MIN))
		return;
	e.line = err == -EBADMSG || err == -EFBIG ? L->lineno : 0;
	if (err == -EBADMSG)
		snprintf(e.message, sizeof(e.message), "%s", L->msg);
	else if (err == -EFBIG)
		snprintf(e.message, sizeof(e.message), "more than %llu requests", (unsigned long long)L->max_requests);
	else if (err == -ENODATA)
		snprintf(e.message, sizeof(e.message), "no requests in the trace");
	else
		snprintf(e.message, sizeof(e.message), "%s", strerror(-err));
	sweep__out_put(ret, &e, sizeof(e));
}

/* Requests in arrival order, ids = their index, dependencies renumbered with them. */
static int finish(struct loader *L)
{
	struct sweep_sim_trace *t = L->t;
	if (L->f == F_BLKPARSE && !t->n && L->nq) {
		/* no dispatch events in this trace: replay the queue events (no dependencies) */
		free(t->v);
		t->v = L->q;
		t->n = L->nq;
		t->cap = L->capq;
		L->q = NULL;
		for (size_t i = 0; i < t->n; i++)
			t->v[i].after = NONE64;
	}
	if (!t->n)
		return -ENODATA;
	t->format = fmt_names[L->f];
	t->timed = L->f != F_PLAN;
	t->depth = L->depth_samples ? (unsigned)((L->depth_sum + L->depth_samples / 2) / L->depth_samples) : 1;
	if (!t->depth)
		t->depth = 1;
	for (size_t i = 0; i < t->n; i++) {
		t->v[i].r.id = i;
		if (t->v[i].after != NONE64)
			t->dependent = 1;
	}
	if (t->timed) {
		bool sorted = true;
		for (size_t i = 1; i < t->n && sorted; i++)
			sorted = t->v[i - 1].r.time_ns <= t->v[i].r.time_ns;
		if (!sorted) /* ids are the input order, so ties keep it */
			qsort(t->v, t->n, sizeof(*t->v), cmp_time);
		uint64_t *where = NULL;
		if (t->dependent) {
			where = malloc(t->n * sizeof(*where));
			if (!where)
				return -ENOMEM;
			for (size_t i = 0; i < t->n; i++)
				where[t->v[i].r.id] = i;
		}
		uint64_t t0 = t->v[0].r.time_ns;
		for (size_t i = 0; i < t->n; i++) {
			t->v[i].r.time_ns -= t0;
			if (where && t->v[i].after != NONE64)
				t->v[i].after = where[t->v[i].after];
		}
		free(where);
	}
	for (size_t i = 0; i < t->n; i++)
		t->v[i].r.id = i;
	return 0;
}

int sweep__sim_trace_read(FILE *fp, const struct sweep_sim_trace_options *opts, struct sweep_sim_trace **ret,
		   struct sweep_sim_trace_error *ret_error)
{
	struct sweep_sim_trace_options o;
	struct loader L = { 0 };
	int err = sweep__opts_copy(&o, sizeof(o), opts, SIM_MIN);
	if (!err)
		err = sweep__flags_check(o.flags, SWEEP_SIM_TRACE_NO_WRAP | SWEEP_SIM_TRACE_WRAP);
	if (!err && (o.flags & SWEEP_SIM_TRACE_NO_WRAP) && (o.flags & SWEEP_SIM_TRACE_WRAP))
		err = -EINVAL;
	if (!err)
		err = parse_format(o.format, &L);
	if (err)
		return err;
	L.capacity = o.capacity;
	L.flags = o.flags;
	L.max_requests = o.max_requests ? o.max_requests : SWEEP_SIM_TRACE_MAX_REQUESTS;
	struct sweep_sim_trace *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	L.t = t;
	err = load_lines(fp, &L);
	if (!err)
		err = finish(&L);
	free(L.q);
	free(L.fl);
	if (err) {
		fill_error(&L, err, ret_error);
		sweep_sim_trace_free(t);
		return err;
	}
	*ret = t;
	return 0;
}

SWEEP_EXPORT int sweep_sim_trace_open(const char *path, const struct sweep_sim_trace_options *opts,
				      struct sweep_sim_trace **ret, struct sweep_sim_trace_error *ret_error)
{
	if (!path || !ret)
		return -EINVAL;
	FILE *fp = fopen(path, "re");
	if (!fp)
		return -errno;
	int err = sweep__sim_trace_read(fp, opts, ret, ret_error);
	fclose(fp);
	return err;
}

SWEEP_EXPORT int sweep_sim_trace_load(const char *path, const char *format, struct sweep_sim_trace **ret)
{
	struct sweep_sim_trace_options o = { .size = sizeof(o), .format = format };
	return sweep_sim_trace_open(path, &o, ret, NULL);
}

SWEEP_EXPORT struct sweep_sim_trace *sweep_sim_trace_free(struct sweep_sim_trace *t)
{
	if (t) {
		free(t->v);
		free(t->kids);
		free(t->kid_at);
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
	*ret = t->v[t->pos++].r;
	return 1;
}

SWEEP_EXPORT int sweep_sim_trace_get_info(const struct sweep_sim_trace *t, struct sweep_sim_trace_info *ret)
{
	struct sweep_sim_trace_info i;
	int err = t ? sweep__out_begin(&i, sizeof(i), ret, SIM_MIN) : -EINVAL;
	if (err)
		return err;
	i = (struct sweep_sim_trace_info){
		.format = t->format,
		.requests = t->n,
		.timed = t->timed,
		.depth = t->depth,
		.skipped = t->skipped,
		.dependent = t->dependent,
	};
	sweep__out_put(ret, &i, sizeof(i));
	return 0;
}
