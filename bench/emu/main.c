/* SPDX-License-Identifier: MIT */
/*
 * emudisk-fuse [--preset NAME] [--speed N] [--depth N] [--read-only]
 *              [--foreground] [--log FILE] [--pidfile FILE] IMAGE MOUNTPOINT
 *
 * Mounts MOUNTPOINT with one file, MOUNTPOINT/disk, whose reads and writes
 * go to IMAGE and are answered when the model of the drive (libsweep-sim)
 * completes them; returns once the mount is ready, the server in the
 * background, until MOUNTPOINT is unmounted. SIGUSR1 writes a summary line
 * to the log; the last one is written at the end. bench/emudisk is the
 * interface people use (bench/README.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emu.h"

#define PROG "emudisk-fuse"
#define SERVER_RT_PRIORITY 1 /* the lowest real-time priority: ahead of every ordinary thread */
#define SERVER_NICE -10
#define WORKERS 32 /* FUSE threads: each request is quick to take, but a backing read may block */

static void usage(FILE *f)
{
	fprintf(f, "usage: " PROG " [options] IMAGE MOUNTPOINT\n"
		   "  --preset NAME   the model's device, one of sweep-sim's presets (default hdd7200;\n"
		   "                  hdd7200-2018 is a drive of 2018, sweep-sim --list names them all)\n"
		   "  --speed N       model time per real time: 4 runs four times as fast as the drive (default 1)\n"
		   "  --depth N       the drive's queue depth (default: the preset's)\n"
		   "  --read-only     refuse writes\n"
		   "  --foreground    stay in the foreground\n"
		   "  --log FILE      messages and summaries once in the background\n"
		   "  --pidfile FILE  the server's process id, once it is ready\n");
}

static void summary(struct emu *e, const char *when)
{
	struct sweep_sim_stats ss = { .size = sizeof(ss) };
	pthread_mutex_lock(&e->lock);
	struct emu_stats st = e->st;
	sweep_sim_get_stats(e->sim, &ss);
	pthread_mutex_unlock(&e->lock);
	uint64_t answered = st.reads + st.writes - st.late_backing;
	fprintf(stderr,
		"emudisk: %s reads=%llu read_bytes=%llu writes=%llu write_bytes=%llu flushes=%llu errors=%llu"
		" model_s=%.3f busy_s=%.3f seeks=%llu cache_hits=%llu late_backing=%llu lagged=%llu"
		" lag_mean_ms=%.3f lag_max_ms=%.3f\n",
		when, (unsigned long long)st.reads, (unsigned long long)st.read_bytes, (unsigned long long)st.writes,
		(unsigned long long)st.write_bytes, (unsigned long long)st.flushes, (unsigned long long)st.errors,
		(double)(emu_now_ns() - e->t0) * e->speed / 1e9, (double)ss.busy_ns / 1e9, (unsigned long long)ss.seek_count,
		(unsigned long long)ss.cache_hits, (unsigned long long)st.late_backing, (unsigned long long)st.lagged,
		answered ? (double)st.lag_sum_ns / (double)answered / 1e6 : 0.0, (double)st.lag_max_ns / 1e6);
	fflush(stderr);
}

/* SIGUSR1, blocked everywhere else, is taken here: a summary on demand. */
static void *signal_main(void *arg)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	for (;;) {
		int sig;
		if (sigwait(&set, &sig) == 0)
			summary(arg, "now");
	}
	return NULL;
}

static int parse_double(const char *s, double *ret)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v <= 0)
		return -EINVAL;
	*ret = v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "preset", required_argument, NULL, 'p' }, { "speed", required_argument, NULL, 's' },
		{ "depth", required_argument, NULL, 'd' },  { "read-only", no_argument, NULL, 'r' },
		{ "foreground", no_argument, NULL, 'f' },   { "log", required_argument, NULL, 'l' },
		{ "pidfile", required_argument, NULL, 'P' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct emu e = { .fd = -1, .speed = 1.0 };
	const char *preset = "hdd7200", *logfile = NULL, *pidfile = NULL;
	unsigned depth = 0;
	bool foreground = false;
	int opt;
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			preset = optarg;
			break;
		case 's':
			if (parse_double(optarg, &e.speed) < 0 || e.speed > 1000) {
				fprintf(stderr, PROG ": --speed wants a number above 0 and at most 1000, not '%s'\n", optarg);
				return 2;
			}
			break;
		case 'd': {
			char *end;
			errno = 0;
			unsigned long v = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || v == 0 || v > SWEEP_SIM_MAX_QUEUE_DEPTH || optarg[0] == '-') {
				fprintf(stderr, PROG ": --depth wants a number from 1 to %u, not '%s'\n",
					SWEEP_SIM_MAX_QUEUE_DEPTH, optarg);
				return 2;
			}
			depth = (unsigned)v;
			break;
		}
		case 'r':
			e.read_only = true;
			break;
		case 'f':
			foreground = true;
			break;
		case 'l':
			logfile = optarg;
			break;
		case 'P':
			pidfile = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind != 2) {
		usage(stderr);
		return 2;
	}
	const char *image = argv[optind], *mnt = argv[optind + 1];

	e.fd = open(image, (e.read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	struct stat st;
	if (e.fd < 0 || fstat(e.fd, &st) < 0) {
		fprintf(stderr, PROG ": %s: %s\n", image, strerror(errno));
		return 1;
	}
	if (!S_ISREG(st.st_mode) || st.st_size <= 0 || st.st_size % 512) {
		fprintf(stderr, PROG ": %s: not a regular file of whole 512-byte sectors\n", image);
		return 1;
	}
	e.size = (uint64_t)st.st_size;

	struct sweep_sim_options so = { .size = sizeof(so), .device = preset, .sched = "fcfs", .queue_depth = depth };
	struct sweep_sim_info info = { .size = sizeof(info) };
	int err = sweep_sim_new(&so, &e.sim);
	if (err == 0)
		err = sweep_sim_get_info(e.sim, &info);
	if (err) {
		fprintf(stderr, PROG ": --preset %s: %s (sweep-sim --help lists the presets)\n", preset, strerror(-err));
		return 2;
	}
	if (e.size > info.capacity) {
		fprintf(stderr, PROG ": %s: %llu bytes, more than %s holds (%llu)\n", image,
			(unsigned long long)e.size, preset, (unsigned long long)info.capacity);
		return 1;
	}

	int logfd = -1;
	if (logfile && (logfd = open(logfile, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) < 0) {
		fprintf(stderr, PROG ": %s: %s\n", logfile, strerror(errno));
		return 1;
	}
	char *fargv[] = { argv[0], "-o", "fsname=sweep-emudisk,subtype=emudisk", NULL };
	struct fuse_args args = FUSE_ARGS_INIT(3, fargv);
	struct fuse_session *se = fuse_session_new(&args, &emu_fs_ops, sizeof(emu_fs_ops), &e);
	fuse_opt_free_args(&args);
	if (!se)
		return 1;
	if (fuse_set_signal_handlers(se) != 0 || fuse_session_mount(se, mnt) != 0) {
		fprintf(stderr, PROG ": cannot mount %s\n", mnt);
		fuse_session_destroy(se);
		return 1;
	}
	/* from here the caller's wait ends: ready, or a status */
	if (fuse_daemonize(foreground) != 0) {
		fuse_session_unmount(se);
		fuse_session_destroy(se);
		return 1;
	}
	if (logfd >= 0 && dup2(logfd, STDERR_FILENO) < 0)
		return 1;
	if (pidfile) {
		FILE *f = fopen(pidfile, "we");
		if (!f || fprintf(f, "%ld\n", (long)getpid()) < 0 || fclose(f) != 0) {
			fprintf(stderr, PROG ": %s: %s\n", pidfile, strerror(errno));
			fuse_session_unmount(se);
			return 1;
		}
	}

	/*
	 * A drive does not wait for a CPU: on a loaded machine, waking the
	 * server late is time the model did not ask for. Threads inherit it.
	 * Where it is not allowed, the summary's lag says so.
	 */
	struct sched_param sp = { .sched_priority = SERVER_RT_PRIORITY };
	if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0 && setpriority(PRIO_PROCESS, 0, SERVER_NICE) < 0)
		fprintf(stderr, "emudisk: cannot raise the priority (%s): answers may be late\n", strerror(errno));
	sigset_t usr1;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	pthread_t sig_thread;
	if ((err = emu_clock_start(&e)) < 0 || (err = -pthread_create(&sig_thread, NULL, signal_main, &e)) < 0) {
		fprintf(stderr, PROG ": %s\n", strerror(-err));
		fuse_session_unmount(se);
		return 1;
	}
	pthread_detach(sig_thread);
	fprintf(stderr, "emudisk: serving %s (%llu bytes) as %s, %s, at %gx on %s\n", image, (unsigned long long)e.size,
		info.device, info.kind == SWEEP_SIM_SSD ? "an SSD" : "a disk", e.speed, mnt);

	struct fuse_loop_config *cfg = fuse_loop_cfg_create();
	if (cfg)
		fuse_loop_cfg_set_max_threads(cfg, WORKERS);
	int ret = cfg ? fuse_session_loop_mt(se, cfg) : -ENOMEM;
	fuse_loop_cfg_destroy(cfg);
	emu_clock_stop(&e);
	if (!e.read_only && fsync(e.fd) < 0)
		fprintf(stderr, PROG ": %s: %s\n", image, strerror(errno));
	summary(&e, "end");
	fuse_remove_signal_handlers(se);
	fuse_session_unmount(se);
	fuse_session_destroy(se);
	close(e.fd);
	sweep_sim_free(e.sim);
	return ret < 0 ? 1 : 0;
}
