/* SPDX-License-Identifier: MIT */
/*
 * sweep-plan: show the order libsweep would read a tree in, and optionally
 * read it. One line per regular file on stdout:
 *
 *   <first physical byte offset or -> <inode> <path>
 *
 * The path with GNU tar's escapes (cli_escape: backslash, control bytes),
 * so a name cannot break the line or reach the terminal raw, and
 * printf '%b' gives the bytes back.
 *
 * The summary (stderr) compares that order with the order a plain
 * depth-first walk in readdir order (what tar and cp do) would read the same
 * files in, counting the non-contiguous moves ("jumps") of the disk head
 * between one file's data and the next.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <locale.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sweep.h>

#include "cli.h"
#include "progress.h"

#define SEEK_MIN (1u << 20) /* a forward move shorter than this is not counted as a seek */

/* Head movement over a sequence of files, from each file's first byte and size. */
struct motion {
	uint64_t files;   /* located files seen */
	uint64_t jumps;   /* next file does not start where the previous one ended */
	uint64_t seeks;   /* jumps backwards or at least SEEK_MIN forwards */
	uint64_t back;    /* jumps backwards */
	uint64_t travel;  /* sum of |distance| of every jump, bytes */
	uint64_t end;     /* where the previous file's data ended */
};

struct ctx {
	struct sweep_batch *batch; /* the library's plan-and-read loop */
	enum sweep_order order;
	bool read;
	int trace_fd;
	bool trace_header;
	int dump_fd;
	int status;
	uint32_t block_size; /* rounds sizes to where the next file could start */
	struct motion plan_motion, dir_motion;
	uint64_t files, bytes;
	uint64_t mem_sum, mem_entries, mem_peak; /* plan memory at each flush */
	double read_seconds;
	double read_started;
	bool first_fs_seen;
	struct progress *progress;
	bool walk_stats_files;   /* the walk gives regular files' sizes (else each batch does) */
	bool cur_opened;         /* the file being read: its planned size was made its size at open */
	uint64_t cur_bytes;      /* and the bytes of it read so far */
};

static void motion_add(struct motion *m, uint64_t phys, uint64_t size, uint32_t bs)
{
	if (phys == SWEEP_NO_PHYS)
		return; /* no location: nothing to say about the head */
	if (m->files > 0 && phys != m->end) {
		m->jumps++;
		if (phys < m->end) {
			m->back++;
			m->seeks++;
			m->travel += m->end - phys;
		} else {
			if (phys - m->end >= SEEK_MIN)
				m->seeks++;
			m->travel += phys - m->end;
		}
	}
	m->files++;
	m->end = phys + (size + bs - 1) / bs * bs;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int on_data(const struct sweep_file *f, uint64_t offset, const void *buf, size_t len, void *vctx)
{
	struct ctx *c = vctx;
	int rc;

	(void)offset;
	c->cur_bytes += len;
	progress_add(c->progress, 0, len);
	if (c->dump_fd < 0)
		return 0;
	rc = cli_write_all(c->dump_fd, buf, len);
	if (rc < 0) {
		cli_error(rc, "--dump");
		return rc; /* stop: a dump with a hole in it is worthless */
	}
	(void)f;
	return 0;
}

/* Paths in the listing and in messages: GNU tar's escapes, printable characters of the locale as they are. */
static const char *esc(const char *path)
{
	return cli_escape(path, MB_CUR_MAX > 1);
}

/* --progress: the file is open, so its size is known; the total had the planned one (0 when unknown). */
static int on_begin(const struct sweep_file *f, void *vctx)
{
	struct ctx *c = vctx;

	c->cur_opened = true;
	c->cur_bytes = 0;
	if (f->entry->flags & SWEEP_PLAN_UNSIZED)
		progress_unsized(c->progress, -1);
	progress_replan(c->progress, 0, (int64_t)f->st.size - (int64_t)f->entry->size);
	return 0;
}

/* A file read counts with the bytes read of it; one that could not be opened leaves the totals. */
static void count_end(struct ctx *c, const struct sweep_file *f)
{
	if (c->cur_opened) {
		progress_replan(c->progress, 0, (int64_t)c->cur_bytes - (int64_t)f->st.size);
		progress_add(c->progress, 1, 0);
	} else {
		if (f->entry->flags & SWEEP_PLAN_UNSIZED)
			progress_unsized(c->progress, -1);
		progress_replan(c->progress, -1, -(int64_t)f->entry->size);
	}
	c->cur_opened = false;
}

static int on_end(const struct sweep_file *f, int status, void *vctx)
{
	struct ctx *c = vctx;
	const char *path = esc(f->entry->path);

	count_end(c, f);
	if (status != 0 && status != SWEEP_READ_SKIP)
		progress_clear(c->progress);

	if (status == -ESTALE) {
		cli_msg("%s: replaced since it was planned; not read", path);
		c->status = 1;
	} else if (status < 0) {
		cli_path_error(path, status);
		c->status = 1;
	} else if (status == SWEEP_READ_SHRANK) {
		cli_msg("%s: file shrank while it was read", path);
		c->status = 1;
	} else if (status == SWEEP_READ_GREW) {
		cli_msg("%s: file grew while it was read; only %jd bytes read", path, (intmax_t)f->st.size);
		c->status = 1;
	} else if (status == SWEEP_READ_CHANGED) {
		cli_msg("%s: file changed as we read it", path);
		c->status = 1;
	}
	return 0;
}

/* A batch about to be sorted (on a disk, each file located first): --progress says so. */
static int on_sort(const struct sweep_plan *p, void *vctx)
{
	progress_planning(((struct ctx *)vctx)->progress, sweep_plan_count(p));
	return 0;
}

/* A batch, sorted: print and trace it, then let the batch read it (or not, without --read). */
static int on_batch(const struct sweep_plan *p, void *vctx)
{
	struct ctx *c = vctx;
	size_t n = sweep_plan_count(p);
	size_t mem = sweep_plan_memory(p);
	uint64_t bytes = 0;
	int64_t unsized = 0;
	int rc;

	c->order = sweep_plan_order(p);
	progress_clear_for(c->progress, stdout); /* the listing starts a line of its own */
	c->mem_sum += mem;
	c->mem_entries += n;
	if (mem > c->mem_peak)
		c->mem_peak = mem;
	for (size_t i = 0; i < n; i++) {
		const struct sweep_plan_entry *e = sweep_plan_entry(p, i);
		if (e->phys == SWEEP_NO_PHYS)
			fputs("-", stdout);
		else
			printf("%" PRIu64, e->phys);
		printf(" %" PRIu64 " %s\n", e->ino, esc(e->path));
		motion_add(&c->plan_motion, e->phys, e->size, c->block_size);
		c->files++;
		c->bytes += e->size;
		bytes += e->size;
		unsized += (e->flags & SWEEP_PLAN_UNSIZED) != 0;
	}
	/* sizes the walk did not give: the plan's, or (SWEEP_PLAN_UNSIZED) known when the file is read */
	if (!c->walk_stats_files) {
		progress_plan(c->progress, 0, bytes);
		progress_unsized(c->progress, unsized);
	}
	if (c->trace_fd >= 0) {
		rc = sweep_trace_write(p, c->trace_fd, c->trace_header ? SWEEP_TRACE_HEADER : 0);
		c->trace_header = false;
		if (rc < 0)
			cli_die(1, "--trace: %s", strerror(-rc));
	}
	if (!c->read)
		return SWEEP_BATCH_NO_READ;
	fflush(stdout);
	c->read_started = now();
	return 0;
}

static int on_batch_end(const struct sweep_plan *p, int status, void *vctx)
{
	struct ctx *c = vctx;

	(void)p;
	if (c->read)
		c->read_seconds += now() - c->read_started;
	if (status < 0) {
		cli_error(status, "reading");
		exit(1);
	}
	return 0;
}

/* First physical byte of an entry's data (FIEMAP/FIBMAP), SWEEP_NO_PHYS when unknown. */
static uint64_t locate(const struct sweep_entry *e)
{
	uint64_t phys = SWEEP_NO_PHYS;
	int fd;

	fd = openat(e->dirfd, e->at_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOATIME);
	if (fd < 0 && errno == EPERM)
		fd = openat(e->dirfd, e->at_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0) {
		if (sweep_extent_first(fd, &phys) < 0)
			phys = SWEEP_NO_PHYS;
		close(fd);
	}
	return phys;
}

static int on_entry(const struct sweep_entry *e, void *vctx)
{
	struct ctx *c = vctx;
	int rc;

	if (!c->first_fs_seen && e->fs && e->fs->block_size) {
		c->block_size = e->fs->block_size;
		c->first_fs_seen = true;
	}
	if (e->stat_err)
		return 0;
	if (S_ISDIR(e->st.mode))
		progress_dirs(c->progress, 1);
	if (S_ISDIR(e->st.mode) || !S_ISREG(e->st.mode)) {
		if (!S_ISDIR(e->st.mode))
			progress_others(c->progress, 1);
		return 0;
	}
	/* A full batch is printed and read here (on_batch); an error reading it ends the run there. */
	uint64_t size = c->walk_stats_files ? (uint64_t)e->st.size : 0;
	progress_plan(c->progress, 1, size);
	rc = sweep_batch_add_entry(c->batch, e, 0);
	if (rc < 0) {
		progress_replan(c->progress, -1, -(int64_t)size);
		progress_clear(c->progress);
		cli_path_error(esc(e->path), rc);
		c->status = 1;
	}
	return 0;
}

static int on_error(const struct sweep_walk_error *err, void *vctx)
{
	struct ctx *c = vctx;

	progress_clear(c->progress);
	cli_path_error(esc(err->path), err->err);
	c->status = 1;
	return 0;
}

/* Second pass: where a plain depth-first walk in readdir order would move the head. */
static int on_dir_entry(const struct sweep_entry *e, void *vctx)
{
	struct ctx *c = vctx;

	if (e->stat_err || !S_ISREG(e->st.mode))
		return 0;
	motion_add(&c->dir_motion, locate(e), (uint64_t)e->st.size, c->block_size);
	return 0;
}

static int on_quiet_error(const struct sweep_walk_error *err, void *vctx)
{
	(void)err;
	(void)vctx;
	return 0; /* already reported by the first pass */
}

static enum sweep_order walk_order_for(enum sweep_order plan_order)
{
	switch (plan_order) {
	case SWEEP_ORDER_NONE:
	case SWEEP_ORDER_NAME:
		return plan_order; /* the plan keeps the walk's order, so the walk must produce it */
	case SWEEP_ORDER_PHYSICAL:
	case SWEEP_ORDER_INODE:
		return SWEEP_ORDER_INODE;
	case SWEEP_ORDER_AUTO:
		break;
	}
	return SWEEP_ORDER_AUTO;
}

/* Whether the plan will sort by physical location (what AUTO resolves to, from the first root). */
static void usage(FILE *out)
{
	fprintf(out,
		"Usage: %s [OPTION]... DIR...\n"
		"Print the regular files under each DIR in the order libsweep would read them:\n"
		"'<first physical byte offset or -> <inode> <path>' per line, the path with\n"
		"GNU tar's escapes (\\\\, \\n, \\ooo...; printf '%%b' decodes them).\n"
		"\n"
		"  -o, --order=ORDER        physical, inode, name, none or auto (default: auto,\n"
		"                           the filesystem's policy)\n"
		"  -r, --read               read every file through the reader, discard the data,\n"
		"                           print totals on stderr\n"
		"  -t, --trace=FILE         write the plan as a sweep-trace(5) request trace\n"
		"  -m, --memory-limit=SIZE  flush the plan in sorted batches of at most SIZE bytes\n"
		"      --max-files=N        flush the plan in batches of at most N files\n"
		"  -b, --backend=B          reader backend: auto, uring or syscall\n"
		"  -q, --queue-depth=N      reads in flight (default: from the device)\n"
		"      --buffer-size=SIZE   bytes per read request (default 1M)\n"
		"      --no-compare         skip the readdir-order pass of the summary\n"
		"      --device=CLASS       hdd, ssd or auto (default: probe the device)\n"
		"      --no-metascan        do not read directory blocks and inodes through the\n"
		"                           block device (prefetch and order hints; see sweep(7))\n"
		"  -v, --verbose            say on stderr which device class each filesystem\n"
		"                           got, and why\n"
		"      --progress[=SECONDS] show progress on stderr and a summary at the end: a\n"
		"                           line redrawn on a terminal, else (or with SECONDS)\n"
		"                           a line every SECONDS (default 10)\n"
		"      --help               display this help and exit\n"
		"      --version            output version information and exit\n",
		cli_prog());
}

static uint64_t parse_size_opt(const char *opt, const char *arg)
{
	uint64_t v;

	if (cli_parse_size(arg, &v) < 0)
		cli_die(2, "invalid %s argument: %s", opt, cli_quote(arg));
	return v;
}

static void summary(const struct ctx *c, bool compared)
{
	const struct motion *d = &c->dir_motion, *m = &c->plan_motion;

	fprintf(stderr, "%s: summary: files=%" PRIu64 " bytes=%" PRIu64 " located=%" PRIu64 " order=%s",
		cli_prog(), c->files, c->bytes, m->files, sweep_order_name(c->order));
	if (compared)
		fprintf(stderr, " readdir_jumps=%" PRIu64 " readdir_seeks=%" PRIu64 " readdir_back=%" PRIu64
			" readdir_travel=%" PRIu64,
			d->jumps, d->seeks, d->back, d->travel);
	fprintf(stderr, " plan_jumps=%" PRIu64 " plan_seeks=%" PRIu64 " plan_back=%" PRIu64 " plan_travel=%" PRIu64
		" plan_bytes_per_entry=%" PRIu64 " plan_peak_bytes=%" PRIu64 "\n",
		m->jumps, m->seeks, m->back, m->travel,
		c->mem_entries ? c->mem_sum / c->mem_entries : 0, c->mem_peak);
}

int main(int argc, char **argv)
{
	enum { OPT_HELP = 256, OPT_VERSION, OPT_DUMP, OPT_BUFSZ, OPT_MAXFILES, OPT_NOCOMPARE, OPT_DEVICE, OPT_NOMETASCAN,
	       OPT_PROGRESS };
	static const struct option longopts[] = {
		{ "order", required_argument, NULL, 'o' },
		{ "read", no_argument, NULL, 'r' },
		{ "trace", required_argument, NULL, 't' },
		{ "memory-limit", required_argument, NULL, 'm' },
		{ "max-files", required_argument, NULL, OPT_MAXFILES },
		{ "backend", required_argument, NULL, 'b' },
		{ "queue-depth", required_argument, NULL, 'q' },
		{ "buffer-size", required_argument, NULL, OPT_BUFSZ },
		{ "no-compare", no_argument, NULL, OPT_NOCOMPARE },
		{ "device", required_argument, NULL, OPT_DEVICE },
		{ "no-metascan", no_argument, NULL, OPT_NOMETASCAN },
		{ "verbose", no_argument, NULL, 'v' },
		{ "progress", optional_argument, NULL, OPT_PROGRESS },
		{ "dump", required_argument, NULL, OPT_DUMP }, /* hidden: file data in plan order, for tests */
		{ "help", no_argument, NULL, OPT_HELP },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	/* the whole tree in one sorted batch unless --max-files or --memory-limit say otherwise */
	struct sweep_batch_opts bopts = { .size = sizeof(bopts), .max_files = SIZE_MAX };
	static const struct sweep_read_ops ops = {
		.size = sizeof(ops),
		.begin = on_begin,
		.data = on_data,
		.end = on_end,
	};
	struct sweep_walk_opts wopts = { .size = sizeof(wopts) };
	struct ctx c = { .trace_fd = -1, .dump_fd = -1, .block_size = 4096, .trace_header = true };
	bool compare = true, verbose = false;
	struct progress_opts popts = { 0 };
	int opt, rc;

	cli_init(argv[0]);
	/* Only the character classes: numbers in the summary stay in the C form. */
	setlocale(LC_CTYPE, "");
	cli_close_stdout_atexit();
	while ((opt = getopt_long(argc, argv, "o:rt:m:b:q:v", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			if (sweep_order_parse(optarg, &bopts.order) < 0)
				cli_die(2, "invalid order %s (physical, inode, name, none or auto)", cli_quote(optarg));
			break;
		case 'r':
			c.read = true;
			break;
		case 't':
			c.trace_fd = open(optarg, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
			if (c.trace_fd < 0)
				cli_die(1, "%s: %s", optarg, strerror(errno));
			break;
		case 'm':
			bopts.max_bytes = (size_t)parse_size_opt("--memory-limit", optarg);
			break;
		case OPT_MAXFILES:
			bopts.max_files = (size_t)parse_size_opt("--max-files", optarg);
			break;
		case 'b':
			if (strcmp(optarg, "auto") == 0)
				bopts.backend = SWEEP_BACKEND_AUTO;
			else if (strcmp(optarg, "uring") == 0)
				bopts.backend = SWEEP_BACKEND_URING;
			else if (strcmp(optarg, "syscall") == 0)
				bopts.backend = SWEEP_BACKEND_SYSCALL;
			else
				cli_die(2, "invalid backend %s (auto, uring or syscall)", cli_quote(optarg));
			break;
		case 'q':
			bopts.queue_depth = (unsigned)parse_size_opt("--queue-depth", optarg);
			break;
		case OPT_BUFSZ:
			bopts.buffer_size = (size_t)parse_size_opt("--buffer-size", optarg);
			break;
		case OPT_NOCOMPARE:
			compare = false;
			break;
		case OPT_DEVICE:
			if (cli_device_option(optarg) < 0) {
				cli_try_help();
				return 2;
			}
			break;
		case OPT_NOMETASCAN:
			wopts.flags |= SWEEP_WALK_NO_METASCAN;
			setenv("SWEEP_METASCAN", "off", 1); /* the plan's own raw locating too */
			break;
		case 'v':
			verbose = true;
			break;
		case OPT_PROGRESS:
			if (progress_parse(optarg, &popts) < 0) {
				cli_try_help();
				return 2;
			}
			break;
		case OPT_DUMP:
			c.dump_fd = open(optarg, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
			if (c.dump_fd < 0)
				cli_die(1, "%s: %s", optarg, strerror(errno));
			break;
		case OPT_HELP:
			usage(stdout);
			return 0;
		case OPT_VERSION:
			cli_version("sweep-plan");
			return 0;
		default:
			cli_try_help();
			return 2;
		}
	}
	if (optind >= argc) {
		cli_msg("missing operand");
		cli_try_help();
		return 2;
	}
	if (verbose)
		cli_device_report((const char *const *)argv + optind, (size_t)(argc - optind));
	if (c.dump_fd >= 0)
		c.read = true;
	c.order = bopts.order;
	/*
	 * The plan looks locations up only where it sorts by them; this tool
	 * prints them (and counts jumps) in every order, so it asks for them.
	 * A trace is worth most with every extent.
	 */
	bool locate_anyway = bopts.order == SWEEP_ORDER_INODE || bopts.order == SWEEP_ORDER_NAME ||
			     bopts.order == SWEEP_ORDER_NONE;
	if (locate_anyway)
		bopts.plan_flags |= SWEEP_PLAN_LOCATE;
	if (c.trace_fd >= 0) {
		bopts.plan_flags |= SWEEP_PLAN_EXTENTS;
		locate_anyway = false;
	}
	bopts.ops = c.read ? &ops : NULL;
	bopts.read_flags |= SWEEP_READ_BY_DEVICE; /* every disk the tree is on at once */
	bopts.on_batch = on_batch;
	bopts.on_sort = on_sort;
	bopts.on_batch_end = on_batch_end;
	bopts.ctx = &c;
	rc = sweep_batch_new(&bopts, &c.batch);
	if (rc < 0)
		cli_die(1, "cannot set up the plan and the reader: %s", strerror(-rc));

	wopts.order = walk_order_for(bopts.order);
	if (!locate_anyway && optind < argc && cli_plan_order(bopts.order, argv[optind]) == SWEEP_ORDER_PHYSICAL)
		wopts.flags |= SWEEP_WALK_NO_STAT;
	/*
	 * Without --read nothing opens the files: raw hints cost no second read
	 * of their inodes, even on xfs, and where they give a file's size (all
	 * this tool prints of it besides its inode), no stat either. On the SSD
	 * class, where the plan does not locate, that is the walk's whole cost
	 * per file (fresh 1M-file ext4 tree, cold: 4.65 s with a stat per file on
	 * the walk's threads, bench/results/2026-11-26-1M-prefetch).
	 */
	if (!c.read)
		wopts.flags |= SWEEP_WALK_PLAN_ONLY | SWEEP_WALK_HINT_FILES;
	wopts.on_entry = on_entry;
	wopts.on_error = on_error;
	wopts.ctx = &c;
	/* Sizes from the walk, unless it leaves regular files unstated (then from each batch, on_batch). */
	c.walk_stats_files = !(wopts.flags & (SWEEP_WALK_NO_STAT | SWEEP_WALK_HINT_FILES));
	c.progress = progress_new(&popts);
	rc = sweep_walk((const char *const *)argv + optind, (size_t)(argc - optind), &wopts);
	if (rc < 0) {
		c.progress = progress_free(c.progress);
		cli_error(rc, "walk");
		return 1;
	}
	progress_walk_done(c.progress);
	if (sweep_batch_flush(c.batch) < 0)
		c.status = 1;
	fflush(stdout);
	/* Without --read the work was the walk and the plan: all done. */
	if (!c.read)
		progress_done_all(c.progress);
	c.progress = progress_finish(c.progress, true);

	if (c.read) {
		struct sweep_batch_stats bs = { .size = sizeof(bs) };
		sweep_batch_stats(c.batch, &bs);
		const struct sweep_read_stats st = bs.read;
		char disks[48] = "";
		if (st.devices > 1)
			snprintf(disks, sizeof(disks), ", %" PRIu64 " disks at once", st.devices);
		fprintf(stderr, "%s: read %" PRIu64 " files, %" PRIu64 " bytes in %.3f s (backend %s, %" PRIu64
			" requests, %" PRIu64 " failed, %" PRIu64 " changed%s)\n",
			cli_prog(), st.files, st.bytes, c.read_seconds,
			sweep_backend_name(sweep_batch_backend(c.batch)), st.requests, st.failed, st.changed, disks);
	}
	/* The plain walk a tar or cp would do: depth first, each directory in readdir order. */
	if (compare && bopts.order == SWEEP_ORDER_NONE) {
		c.dir_motion = c.plan_motion;
	} else if (compare) {
		struct sweep_walk_opts dopts = { .size = sizeof(dopts) };
		dopts.order = SWEEP_ORDER_NONE;
		dopts.on_entry = on_dir_entry;
		dopts.on_error = on_quiet_error;
		dopts.ctx = &c;
		rc = sweep_walk((const char *const *)argv + optind, (size_t)(argc - optind), &dopts);
		if (rc < 0)
			compare = false;
	}
	summary(&c, compare);

	if (c.dump_fd >= 0 && close(c.dump_fd) < 0) {
		cli_error(-errno, "--dump");
		c.status = 1;
	}
	if (c.trace_fd >= 0 && close(c.trace_fd) < 0) {
		cli_error(-errno, "--trace");
		c.status = 1;
	}
	sweep_batch_free(c.batch);
	return c.status;
}
