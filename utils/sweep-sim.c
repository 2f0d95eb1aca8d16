/* SPDX-License-Identifier: MIT */
/*
 * sweep-sim: run the libsweep disk/SSD model.
 *
 *   sweep-sim synth   --device PRESET --sched NAME [--queue Q] [--requests N] [--pattern P] ...
 *   sweep-sim replay  --device PRESET --sched NAME [--format F] [--mode open|closed] TRACE
 *   sweep-sim compare --device A,B --sched X,Y [synth options | --trace FILE]
 *
 * The front end only parses and prints; the model is sweep_sim_*().
 */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sweep/sim.h>

#include "cli.h"
#include "progress.h"
#include "sweep-sim/report.h"

#define MAX_STREAMS 64
#define MAX_LIST 32
#define MAX_SETS 32

struct args {
	const char *cmd;
	char *devices, *scheds;
	const char *pattern, *trace, *format, *csv, *plot_head, *plot_cdf;
	int mode; /* -1: from the source */
	unsigned queue;
	uint64_t requests, size, seed;
	bool json, have_queue, no_wrap, wrap;
	struct sweep_sim_options o;
	struct sweep_sim_stream streams[MAX_STREAMS];
	const char *sets[MAX_SETS]; /* KEY=VALUE device parameter overrides */
	size_t nsets;
};

/* ---- --set KEY=VALUE: device parameters by name ---- */

enum ptype { T_U64, T_UNS, T_INT, T_DBL };
struct pfield {
	const char *name;
	enum ptype type;
	size_t off;
};
#define HF(n, t) { #n, t, offsetof(struct sweep_sim_hdd_params, n) }
static const struct pfield hdd_fields[] = {
	HF(cylinders, T_U64), HF(heads, T_U64), HF(spt_outer, T_U64), HF(spt_inner, T_U64), HF(zones, T_U64),
	HF(rpm, T_DBL), HF(seek_a_ms, T_DBL), HF(seek_b_ms, T_DBL), HF(seek_boundary, T_U64), HF(seek_c_ms, T_DBL),
	HF(seek_e_ms, T_DBL), HF(head_switch_ms, T_DBL), HF(overhead_ms, T_DBL), HF(bus_mb_s, T_DBL),
	HF(readahead_kib, T_U64), HF(cache_kib, T_U64), HF(write_back, T_INT), HF(depth, T_UNS),
	HF(cache_segments, T_UNS), { NULL, 0, 0 },
};
#define SF(n, t) { #n, t, offsetof(struct sweep_sim_ssd_params, n) }
static const struct pfield ssd_fields[] = {
	SF(capacity, T_U64), SF(channels, T_UNS), SF(dies, T_UNS), SF(planes, T_UNS), SF(page, T_U64),
	SF(pages_per_block, T_U64), SF(op, T_DBL), SF(read_us, T_DBL), SF(prog_us, T_DBL), SF(erase_us, T_DBL),
	SF(chan_mb_s, T_DBL), SF(link_mb_s, T_DBL), SF(blockmap, T_INT), SF(log_blocks, T_UNS), SF(depth, T_UNS),
	SF(buffer_kib, T_U64),
	{ NULL, 0, 0 },
};

/* Apply KEY=VALUE to a parameter struct; 0 or -EINVAL. */
static int apply_set(const struct pfield *fields, void *params, const char *kv)
{
	const char *eq = strchr(kv, '=');
	if (!eq)
		return -EINVAL;
	for (const struct pfield *f = fields; f->name; f++) {
		if (strlen(f->name) != (size_t)(eq - kv) || strncmp(f->name, kv, (size_t)(eq - kv)) != 0)
			continue;
		char *end;
		double v = strtod(eq + 1, &end);
		uint64_t u = 0;
		if (f->type != T_DBL && cli_parse_size(eq + 1, &u) < 0)
			return -EINVAL;
		if (f->type == T_DBL && (end == eq + 1 || *end))
			return -EINVAL;
		char *at = (char *)params + f->off;
		switch (f->type) {
		case T_U64: memcpy(at, &u, sizeof(u)); break;
		case T_UNS: { unsigned x = (unsigned)u; memcpy(at, &x, sizeof(x)); break; }
		case T_INT: { int x = (int)u; memcpy(at, &x, sizeof(x)); break; }
		case T_DBL: memcpy(at, &v, sizeof(v)); break;
		}
		return 0;
	}
	return -EINVAL;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %1$s synth --device PRESET --sched NAME [--queue Q] [--requests N]\n"
		"                 [--pattern P] [--size BYTES] [--seed S] [OPTION]...\n"
		"  or:  %1$s replay --device PRESET --sched NAME [--format F] [--mode M] TRACE\n"
		"  or:  %1$s compare --device LIST --sched LIST [synth options | --trace FILE]\n"
		"  or:  %1$s --list\n"
		"Model a disk or SSD under a host scheduler and report utilization, throughput,\n"
		"response times and seeks (and FTL merges, erases and write amplification).\n\n"
		"  --device PRESET      eagle, hdd7200 (2005), hdd7200-2018, cheetah15k,\n"
		"                       ssd-blockmap, ssd-pagemap\n"
		"  --sched NAME         fcfs noop ssf scan cscan stf sptf gstf wstf deadline\n"
		"                       irbw-fifo irbw-fifo-rp bw bw-ssf\n"
		"  --queue Q            closed queue: Q requests outstanding (synth default 1)\n"
		"  --requests N         requests to generate (default 100*Q, at least 1000)\n"
		"  --pattern P          random4k (default), seqread, seqwrite, randread,\n"
		"                       randwrite, postmark, postmark-fs\n"
		"  --size BYTES         request size for the seq/rand patterns (default 4K)\n"
		"  --seed S             random seed (default 1)\n"
		"  --format F           trace format: auto, tracefs, blkparse, disksim, spc, msr,\n"
		"                       plan; FORMAT@MAJ,MIN keeps one device\n"
		"  --mode depend|open|closed  replay each request when the one it waited for\n"
		"                       completes (default for tracefs/blkparse captures), at\n"
		"                       trace times, or keep the observed depth\n"
		"  --wrap               trace offsets past the end of the device wrap around\n"
		"                       (a trace of a bigger disk; default: an error)\n"
		"  --no-wrap            a request past the end is an error (the default)\n"
		"  --trace FILE         compare: replay FILE instead of a synthetic workload\n"
		"  --depth D            device queue depth (NCQ/TCQ tags; default: preset)\n"
		"  --write-cache back|through   HDD cache policy (default: preset)\n"
		"  --readahead on|off   HDD read-ahead (default: preset)\n"
		"  --group N            GSTF cylinder group size (default cylinders/4)\n"
		"  --max-response MS    WSTF maximum response time M (default 30000)\n"
		"  --bundle BYTES       IRBW bundle size (default: the SSD's logical block)\n"
		"  --logical-block BYTES  block-mapped SSD logical block size\n"
		"  --read-expire MS, --write-expire MS   deadline expiry (500, 5000)\n"
		"  --stream ID:RATE[:DEADLINE_MS[:BUCKET]]  bandwidth-class reservation\n"
		"  --elevator cscan|ssf bandwidth-class elevator (default cscan)\n"
		"  --set KEY=VALUE      change a parameter of the preset (see sweep_sim_new(3)),\n"
		"                       e.g. --set rpm=5400 --set cache_kib=0\n"
		"  --json               print one JSON object\n"
		"  --csv FILE           write every completion to FILE\n"
		"  --plot-head FILE     SVG of the head position over time\n"
		"  --plot-cdf FILE      SVG of the response-time CDF\n"
		"  --list               list presets and schedulers\n"
		"  --help, --version\n",
		cli_prog());
}

static void bad_usage(const char *fmt, const char *arg)
{
	cli_msg(fmt, arg);
	cli_try_help();
	exit(2);
}

static uint64_t size_arg(const char *opt, const char *s)
{
	uint64_t v;
	if (cli_parse_size(s, &v) < 0)
		bad_usage("invalid size for %s", opt);
	return v;
}

static uint64_t num_arg(const char *opt, const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-')
		bad_usage("invalid number for %s", opt);
	return v;
}

/* A number no larger than max (the model refuses more: memory). */
static uint64_t bounded_arg(const char *opt, const char *s, uint64_t max)
{
	uint64_t v = num_arg(opt, s);
	if (v > max) {
		cli_msg("%s must be at most %" PRIu64, opt, max);
		cli_try_help();
		exit(2);
	}
	return v;
}

/* Milliseconds: finite, not negative, at most 10^12 (30 years). */
static uint64_t ms_arg(const char *opt, const char *s)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || *end || !isfinite(v) || v < 0 || v > 1e12)
		bad_usage("invalid time for %s", opt);
	return (uint64_t)(v * 1e6);
}

/* One of two words: 1 for `yes`, 0 for `no`; anything else is a usage error. */
static int choice(const char *opt, const char *arg, const char *yes, const char *no)
{
	if (strcmp(arg, yes) != 0 && strcmp(arg, no) != 0) {
		cli_msg("invalid %s '%s' (%s or %s)", opt, arg, yes, no);
		cli_try_help();
		exit(2);
	}
	return strcmp(arg, yes) == 0;
}

static void parse_stream(struct args *a, const char *s)
{
	if (a->o.nstreams == MAX_STREAMS)
		bad_usage("too many --stream options (%s)", s);
	struct sweep_sim_stream *st = &a->streams[a->o.nstreams];
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", s);
	char *save = NULL, *id = strtok_r(buf, ":", &save), *rate = strtok_r(NULL, ":", &save);
	char *dl = strtok_r(NULL, ":", &save), *bucket = strtok_r(NULL, ":", &save);
	if (!id || !rate)
		bad_usage("invalid --stream '%s' (want ID:RATE[:DEADLINE_MS[:BUCKET]])", s);
	*st = (struct sweep_sim_stream){ .stream = (uint32_t)num_arg("--stream", id),
					 .rate_bps = size_arg("--stream", rate) };
	if (dl)
		st->deadline_ns = ms_arg("--stream", dl);
	if (bucket)
		st->bucket_bytes = size_arg("--stream", bucket);
	a->o.nstreams++;
}

static void list(void)
{
	printf("devices:");
	for (unsigned i = 0; sweep_sim_device_name(i); i++)
		printf(" %s", sweep_sim_device_name(i));
	printf("\nschedulers:");
	for (unsigned i = 0; sweep_sim_sched_name(i); i++)
		printf(" %s", sweep_sim_sched_name(i));
	printf("\npatterns: random4k seqread seqwrite randread randwrite postmark postmark-fs\n");
	printf("trace formats: tracefs blkparse disksim spc msr plan\n");
}

enum {
	O_DEVICE = 256, O_SCHED, O_QUEUE, O_REQUESTS, O_PATTERN, O_SIZE, O_SEED, O_FORMAT, O_MODE, O_TRACE,
	O_DEPTH, O_WCACHE, O_RA, O_GROUP, O_MAXRESP, O_BUNDLE, O_LBLOCK, O_REXP, O_WEXP, O_STREAM, O_ELEV,
	O_JSON, O_CSV, O_PHEAD, O_PCDF, O_LIST, O_HELP, O_VERSION, O_SET, O_NOWRAP, O_WRAP,
};

static const struct option longopts[] = {
	{ "device", required_argument, NULL, O_DEVICE },
	{ "sched", required_argument, NULL, O_SCHED },
	{ "queue", required_argument, NULL, O_QUEUE },
	{ "requests", required_argument, NULL, O_REQUESTS },
	{ "pattern", required_argument, NULL, O_PATTERN },
	{ "size", required_argument, NULL, O_SIZE },
	{ "seed", required_argument, NULL, O_SEED },
	{ "format", required_argument, NULL, O_FORMAT },
	{ "mode", required_argument, NULL, O_MODE },
	{ "trace", required_argument, NULL, O_TRACE },
	{ "no-wrap", no_argument, NULL, O_NOWRAP },
	{ "wrap", no_argument, NULL, O_WRAP },
	{ "depth", required_argument, NULL, O_DEPTH },
	{ "write-cache", required_argument, NULL, O_WCACHE },
	{ "readahead", required_argument, NULL, O_RA },
	{ "group", required_argument, NULL, O_GROUP },
	{ "max-response", required_argument, NULL, O_MAXRESP },
	{ "bundle", required_argument, NULL, O_BUNDLE },
	{ "logical-block", required_argument, NULL, O_LBLOCK },
	{ "read-expire", required_argument, NULL, O_REXP },
	{ "write-expire", required_argument, NULL, O_WEXP },
	{ "stream", required_argument, NULL, O_STREAM },
	{ "elevator", required_argument, NULL, O_ELEV },
	{ "set", required_argument, NULL, O_SET },
	{ "json", no_argument, NULL, O_JSON },
	{ "csv", required_argument, NULL, O_CSV },
	{ "plot-head", required_argument, NULL, O_PHEAD },
	{ "plot-cdf", required_argument, NULL, O_PCDF },
	{ "list", no_argument, NULL, O_LIST },
	{ "help", no_argument, NULL, O_HELP },
	{ "version", no_argument, NULL, O_VERSION },
	{ NULL, 0, NULL, 0 },
};

static void parse(struct args *a, int argc, char **argv)
{
	a->o = (struct sweep_sim_options){ .size = sizeof(a->o) };
	a->mode = -1;
	a->seed = 1;
	a->queue = 1;
	int c;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case O_DEVICE: a->devices = optarg; break;
		case O_SCHED: a->scheds = optarg; break;
		case O_QUEUE:
			a->queue = (unsigned)bounded_arg("--queue", optarg, SWEEP_SIM_MAX_DEPTH);
			a->have_queue = true;
			if (!a->queue)
				bad_usage("--queue must be at least 1%s", "");
			break;
		case O_REQUESTS:
			a->requests = num_arg("--requests", optarg);
			if (!a->requests)
				bad_usage("--requests must be at least 1%s", "");
			break;
		case O_PATTERN: a->pattern = optarg; break;
		case O_SIZE:
			a->size = size_arg("--size", optarg);
			if (!a->size || a->size % 512)
				bad_usage("invalid --size '%s' (a positive multiple of 512 bytes)", optarg);
			break;
		case O_SEED: a->seed = num_arg("--seed", optarg); break;
		case O_FORMAT: a->format = optarg; break;
		case O_MODE:
			if (strcmp(optarg, "depend") == 0)
				a->mode = SWEEP_SIM_DEPEND;
			else
				a->mode = choice("--mode", optarg, "closed", "open") ? SWEEP_SIM_CLOSED : SWEEP_SIM_OPEN;
			break;
		case O_NOWRAP: a->no_wrap = true; break;
		case O_WRAP: a->wrap = true; break;
		case O_TRACE: a->trace = optarg; break;
		case O_DEPTH: a->o.queue_depth = (unsigned)bounded_arg("--depth", optarg, SWEEP_SIM_MAX_QUEUE_DEPTH); break;
		case O_WCACHE:
			a->o.write_cache = choice("--write-cache", optarg, "back", "through") ? SWEEP_SIM_WRITE_BACK
											: SWEEP_SIM_WRITE_THROUGH;
			break;
		case O_RA: a->o.readahead = choice("--readahead", optarg, "on", "off") ? SWEEP_SIM_ON : SWEEP_SIM_OFF; break;
		case O_GROUP: a->o.group_cylinders = (unsigned)bounded_arg("--group", optarg, UINT32_MAX); break;
		case O_MAXRESP: a->o.max_response_ns = ms_arg("--max-response", optarg); break;
		case O_BUNDLE: a->o.bundle_bytes = size_arg("--bundle", optarg); break;
		case O_LBLOCK: a->o.logical_block_bytes = size_arg("--logical-block", optarg); break;
		case O_REXP: a->o.read_expire_ns = ms_arg("--read-expire", optarg); break;
		case O_WEXP: a->o.write_expire_ns = ms_arg("--write-expire", optarg); break;
		case O_STREAM: parse_stream(a, optarg); break;
		case O_ELEV: a->o.elevator_ssf = choice("--elevator", optarg, "ssf", "cscan"); break;
		case O_SET:
			if (a->nsets == MAX_SETS || !strchr(optarg, '='))
				bad_usage("invalid --set '%s' (KEY=VALUE)", optarg);
			a->sets[a->nsets++] = optarg;
			break;
		case O_JSON: a->json = true; break;
		case O_CSV: a->csv = optarg; break;
		case O_PHEAD: a->plot_head = optarg; break;
		case O_PCDF: a->plot_cdf = optarg; break;
		case O_LIST: list(); exit(0);
		case O_HELP: usage(stdout); exit(0);
		case O_VERSION: cli_version("sweep-sim"); exit(0);
		default:
			cli_try_help();
			exit(2);
		}
	}
	a->o.streams = a->streams;
	a->o.seed = a->seed;
}

/* ---- one run ---- */

struct run_ctx {
	struct result *res;
	FILE *csv;
	bool keep;
	bool oom;
	struct progress *prog;
};

static void on_complete(void *p, const struct sweep_sim_completion *c)
{
	struct run_ctx *rc = p;
	progress_add(rc->prog, 1, c->length);
	if (rc->csv)
		fprintf(rc->csv, "%" PRIu64 ",%c,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
				 ",%" PRIu64 ",%" PRIu64 ",%u,%u\n",
			c->id, "RWF"[c->op < 3 ? c->op : 2], c->offset, c->length, c->arrival_ns, c->dispatch_ns, c->start_ns,
			c->finish_ns, c->finish_ns - c->arrival_ns, c->position, c->cache_hit, c->stream);
	if (!rc->keep || rc->oom)
		return;
	struct result *r = rc->res;
	if (r->ns == r->cap) {
		size_t n = r->cap ? r->cap * 2 : 4096;
		struct sample *s = realloc(r->s, n * sizeof(*s));
		if (!s) {
			rc->oom = true;
			return;
		}
		r->s = s;
		r->cap = n;
	}
	r->s[r->ns++] = (struct sample){ c->start_ns, c->finish_ns, c->finish_ns - c->arrival_ns, c->position, c->op };
}

static int src_synth(void *ctx, struct sweep_sim_request *r)
{
	return sweep_sim_synth_next(ctx, r);
}

static int src_trace(void *ctx, struct sweep_sim_request *r)
{
	return sweep_sim_trace_next(ctx, r);
}

/* Run one device/scheduler pair; 0 or -errno (already reported). */
static int run_one(const struct args *a, const char *device, const char *sched, FILE *csv, struct result *res)
{
	struct sweep_sim_options o = a->o;
	o.device = device;
	o.sched = sched;
	struct sweep_sim *sim = NULL;
	struct sweep_sim_synth *gen = NULL;
	struct sweep_sim_trace *tr = NULL;
	struct sweep_sim_hdd_params hp = { .size = sizeof(hp) };
	struct sweep_sim_ssd_params sp = { .size = sizeof(sp) };
	if (a->nsets) {
		/* the preset's parameters, changed as asked */
		bool hdd = sweep_sim_preset_hdd(device, &hp) == 0;
		if (!hdd && sweep_sim_preset_ssd(device, &sp) < 0) {
			cli_error(-EINVAL, "cannot build device '%s' with scheduler '%s'", device, sched);
			return -EINVAL;
		}
		for (size_t i = 0; i < a->nsets; i++)
			if (apply_set(hdd ? hdd_fields : ssd_fields, hdd ? (void *)&hp : (void *)&sp, a->sets[i]) < 0) {
				cli_msg("%s: no parameter or bad value in '%s'", device, a->sets[i]);
				return -EINVAL;
			}
		if (hdd)
			o.hdd = &hp;
		else
			o.ssd = &sp;
	}
	int err = sweep_sim_new(&o, &sim);
	if (err < 0) {
		cli_error(err, "cannot build device '%s' with scheduler '%s'", device, sched);
		return err;
	}
	memset(res, 0, sizeof(*res));
	snprintf(res->label, sizeof(res->label), "%s/%s", device, sched);
	res->info.size = sizeof(res->info);
	sweep_sim_get_info(sim, &res->info);
	res->seed = a->seed;

	struct sweep_sim_run_options ro = { .size = sizeof(ro), .on_complete = on_complete };
	sweep_sim_source_fn src;
	void *sctx;
	uint64_t total;
	if (a->trace) {
		struct sweep_sim_trace_options to = { .size = sizeof(to), .format = a->format,
						      .capacity = res->info.capacity,
						      .flags = a->wrap ? SWEEP_SIM_TRACE_WRAP : SWEEP_SIM_TRACE_NO_WRAP };
		struct sweep_sim_trace_error te = { .size = sizeof(te) };
		err = sweep_sim_trace_open(a->trace, &to, &tr, &te);
		if (err < 0) {
			if (te.line)
				cli_msg("%s:%" PRIu64 ": %s", a->trace, te.line, te.message);
			else
				cli_path_error(a->trace, err);
			goto out;
		}
		struct sweep_sim_trace_info ti = { .size = sizeof(ti) };
		sweep_sim_trace_get_info(tr, &ti);
		ro.mode = a->mode >= 0 ? a->mode
			  : ti.dependent ? SWEEP_SIM_DEPEND
			  : ti.timed   ? SWEEP_SIM_OPEN
				       : SWEEP_SIM_CLOSED;
		if (ro.mode == SWEEP_SIM_DEPEND && !ti.dependent) {
			cli_msg("%s: no issue/complete pairs in this trace for --mode depend", a->trace);
			err = -EINVAL;
			goto out;
		}
		ro.depth = a->have_queue ? a->queue : ti.depth;
		src = src_trace;
		sctx = tr;
		res->workload = a->trace;
		total = ti.requests;
	} else {
		uint64_t n = a->requests ? a->requests : (uint64_t)a->queue * 100 < 1000 ? 1000 : (uint64_t)a->queue * 100;
		struct sweep_sim_synth_options so = { .size = sizeof(so), .pattern = a->pattern, .request_size = a->size,
						      .capacity = res->info.capacity, .requests = n, .seed = a->seed };
		err = sweep_sim_synth_new(&so, &gen);
		if (err < 0) {
			cli_error(err, "cannot generate pattern '%s'", a->pattern ? a->pattern : "random4k");
			goto out;
		}
		ro.mode = SWEEP_SIM_CLOSED;
		ro.depth = a->queue;
		src = src_synth;
		sctx = gen;
		res->workload = a->pattern ? a->pattern : "random4k";
		total = n;
	}
	res->mode = ro.mode == SWEEP_SIM_OPEN ? "open" : ro.mode == SWEEP_SIM_DEPEND ? "depend" : "closed";
	res->host_queue = ro.mode == SWEEP_SIM_CLOSED ? ro.depth : 0;
	struct run_ctx rc = { .res = res, .csv = csv, .keep = a->plot_head || a->plot_cdf,
			      .prog = progress_new(&(struct progress_opts){ .on = true, .tty_only = true }) };
	progress_plan(rc.prog, total, 0);
	progress_walk_done(rc.prog);
	ro.ctx = &rc;
	int64_t n = tr ? sweep_sim_trace_replay(sim, tr, &ro) : sweep_sim_run(sim, src, sctx, &ro);
	progress_free(rc.prog);
	if (n < 0) {
		err = (int)n;
		cli_error(err, "%s", res->label);
		goto out;
	}
	if (rc.oom)
		cli_msg("%s: out of memory for the plots; they show the first %zu requests", res->label, res->ns);
	res->st.size = sizeof(res->st);
	sweep_sim_get_stats(sim, &res->st);
out:
	sweep_sim_trace_free(tr);
	sweep_sim_synth_free(gen);
	sweep_sim_free(sim);
	return err < 0 ? err : 0;
}

static size_t split(char *s, const char **out, const char *what)
{
	size_t n = 0;
	char *save = NULL;
	for (char *t = strtok_r(s, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (n == MAX_LIST)
			bad_usage("too many %s", what);
		out[n++] = t;
	}
	return n;
}

int main(int argc, char **argv)
{
	cli_init(argv[0]);
	cli_close_stdout_atexit();
	struct args a = { 0 };
	if (argc > 1 && argv[1][0] != '-') {
		a.cmd = argv[1];
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	parse(&a, argc, argv);
	if (!a.cmd)
		bad_usage("missing command (synth, replay or compare)%s", "");
	bool synth = strcmp(a.cmd, "synth") == 0, replay = strcmp(a.cmd, "replay") == 0;
	bool compare = strcmp(a.cmd, "compare") == 0;
	if (!synth && !replay && !compare)
		bad_usage("unknown command '%s'", a.cmd);
	if (replay) {
		if (optind + 1 != argc)
			bad_usage("replay takes one trace file%s", "");
		a.trace = argv[optind];
		if (strcmp(a.trace, "-") == 0)
			a.trace = "/dev/stdin"; /* read once: compare would need to re-read it */
	} else if (optind != argc) {
		bad_usage("extra operand '%s'", argv[optind]);
	}
	if (synth && a.trace)
		bad_usage("--trace is for compare; use 'replay TRACE'%s", "");
	if (a.wrap && a.no_wrap)
		bad_usage("--wrap and --no-wrap contradict each other%s", "");
	if (a.wrap && !a.trace)
		bad_usage("--wrap is for traces (replay, compare --trace)%s", "");

	const char *devs[MAX_LIST], *scheds[MAX_LIST];
	char defdev[] = "hdd7200", defsched[] = "fcfs";
	size_t nd = split(a.devices ? a.devices : defdev, devs, "devices");
	size_t ns = split(a.scheds ? a.scheds : defsched, scheds, "schedulers");
	if (!compare && (nd > 1 || ns > 1))
		bad_usage("one device and one scheduler for %s; use compare", a.cmd);

	FILE *csv = NULL;
	if (a.csv) {
		csv = fopen(a.csv, "we");
		if (!csv) {
			cli_path_error(a.csv, -errno);
			return 1;
		}
		fprintf(csv, "id,op,offset,length,arrival_ns,dispatch_ns,start_ns,finish_ns,response_ns,position,cache_hit,stream\n");
	}
	struct result *res = calloc(nd * ns, sizeof(*res));
	const struct result **ok = calloc(nd * ns, sizeof(*ok));
	if (!res || !ok)
		cli_die(1, "out of memory");
	size_t nok = 0;
	int status = 0;
	for (size_t i = 0; i < nd; i++)
		for (size_t j = 0; j < ns; j++) {
			struct result *r = &res[i * ns + j];
			if (run_one(&a, devs[i], scheds[j], csv, r) < 0)
				status = 1; /* keep going with the other pairs */
			else
				ok[nok++] = r;
		}
	if (csv && fclose(csv) != 0) {
		cli_path_error(a.csv, -errno);
		status = 1;
	}
	if (a.json) {
		if (compare) {
			printf("{\n  \"runs\": [\n");
			for (size_t i = 0; i < nok; i++) {
				report_json(stdout, ok[i], "    ");
				printf("%s\n", i + 1 < nok ? "," : "");
			}
			printf("  ]\n}\n");
		} else if (nok) {
			report_json(stdout, ok[0], "");
			printf("\n");
		}
	} else if (nok) {
		report_table_header(stdout);
		for (size_t i = 0; i < nok; i++)
			report_table_row(stdout, ok[i]);
	}
	int err;
	if (a.plot_head && nok && (err = svg_head_position(a.plot_head, ok, nok)) < 0) {
		cli_path_error(a.plot_head, err);
		status = 1;
	}
	if (a.plot_cdf && nok && (err = svg_response_cdf(a.plot_cdf, ok, nok)) < 0) {
		cli_path_error(a.plot_cdf, err);
		status = 1;
	}
	for (size_t i = 0; i < nd * ns; i++)
		free(res[i].s);
	free(res);
	free(ok);
	return status;
}
