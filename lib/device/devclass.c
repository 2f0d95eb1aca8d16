/* SPDX-License-Identifier: MIT */
/*
 * Device class: is positioning expensive on the device under a filesystem
 * (HDD class: read in physical order) or not (SSD class: keep the queue
 * full, no sorting)? The rotational flag in sysfs is only a hint: virtio
 * disks report 1 for fast host storage, some RAID controllers report 0 for
 * arrays of disks, network block devices report whatever. So where we may
 * read the block device we time it: a 1 MiB sequential read, then up to 32
 * random 4 KiB reads, O_DIRECT, one at a time, bounded to about 0.4 s (12
 * where they show a disk beyond doubt).
 * When three random reads in four cost a disk's positioning time (1 ms or
 * more), and 4 times what the same bytes cost in a stream, it is an HDD.
 *
 * A probe is done once per device: results are kept for the process, and,
 * when we run as root and nobody else used the device meanwhile, across
 * runs in /run/sweep (root-owned; trusted only when root-owned and
 * writable by nobody else), keyed by MAJ:MIN and by what identifies the
 * medium (boot, diskseq, size, serial, loop backing file, dm uuid), so a
 * new device under an old number is probed anew.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "device.h"

#define PROBE_BLOCK 4096u
#define PROBE_SEQ_CHUNK (256u << 10)
#define PROBE_SEQ_BYTES (1u << 20)
#define PROBE_MAX_READS 32u
#define PROBE_MIN_READS 8u
#define PROBE_BUDGET_NS 400000000ull       /* random phase: stop after this much, once MIN_READS are in */
#define PROBE_MIN_DEVICE (64ull << 20)     /* smaller: a drive's cache would hold it all */
#define HDD_RANDOM_NS 1000000ull           /* 1 ms: 3 in 4 of a disk's random reads take longer */
#define HDD_RATIO 4                        /* random 4 KiB vs 4 KiB of a stream */
#define PROBE_EARLY_READS 12u              /* a disk beyond doubt after this many: stop (sweep__probe_settled) */

#define DEFAULT_CACHE_DIR "/run/sweep"
#define PROFILE_MAX_WALK_THREADS 32u

/* ---- what the caller and the environment ask for ---- */

static int forced; /* enum sweep_device_class, read and written atomically */

SWEEP_EXPORT int sweep_device_force(enum sweep_device_class c)
{
	if (c != SWEEP_DEVICE_AUTO && c != SWEEP_DEVICE_HDD && c != SWEEP_DEVICE_SSD)
		return -EINVAL;
	__atomic_store_n(&forced, (int)c, __ATOMIC_RELAXED);
	return 0;
}

static const char *const class_names[] = {
	[SWEEP_DEVICE_AUTO] = "auto",
	[SWEEP_DEVICE_HDD] = "hdd",
	[SWEEP_DEVICE_SSD] = "ssd",
};

SWEEP_EXPORT const char *sweep_device_class_name(enum sweep_device_class c)
{
	if ((unsigned)c >= sizeof(class_names) / sizeof(class_names[0]))
		return "unknown";
	return class_names[c];
}

SWEEP_EXPORT int sweep_device_class_parse(const char *name, enum sweep_device_class *ret)
{
	if (!name || !ret)
		return -EINVAL;
	for (unsigned i = 0; i < sizeof(class_names) / sizeof(class_names[0]); i++) {
		if (strcmp(name, class_names[i]) == 0) {
			*ret = (enum sweep_device_class)i;
			return 0;
		}
	}
	return -EINVAL;
}

SWEEP_EXPORT const char *sweep_device_reason_name(enum sweep_device_reason r)
{
	switch (r) {
	case SWEEP_DEVICE_BY_DEFAULT:
		return "default";
	case SWEEP_DEVICE_BY_CALLER:
		return "caller";
	case SWEEP_DEVICE_BY_ENV:
		return "environment";
	case SWEEP_DEVICE_BY_PROBE:
		return "probe";
	case SWEEP_DEVICE_BY_SYSFS:
		return "sysfs";
	case SWEEP_DEVICE_BY_NODEV:
		return "no-device";
	}
	return "unknown";
}

int sweep__device_requested(enum sweep_device_class *ret_class, enum sweep_device_reason *ret_reason)
{
	enum sweep_device_class c = (enum sweep_device_class)__atomic_load_n(&forced, __ATOMIC_RELAXED);
	if (c != SWEEP_DEVICE_AUTO) {
		*ret_class = c;
		*ret_reason = SWEEP_DEVICE_BY_CALLER;
		return 1;
	}
	/* An unknown value counts as auto: the library cannot complain, tools may (cli_device_env_check). */
	const char *env = getenv("SWEEP_DEVICE");
	if (env && sweep_device_class_parse(env, &c) == 0 && c != SWEEP_DEVICE_AUTO) {
		*ret_class = c;
		*ret_reason = SWEEP_DEVICE_BY_ENV;
		return 1;
	}
	return 0;
}

/* ---- test hooks ---- */

static const char *cache_dir = DEFAULT_CACHE_DIR;
static unsigned probes_done;

void sweep__device_set_cache_dir(const char *dir)
{
	cache_dir = dir ? dir : DEFAULT_CACHE_DIR;
}

unsigned sweep__device_probes(void)
{
	return __atomic_load_n(&probes_done, __ATOMIC_RELAXED);
}

/* ---- the medium's identity ---- */

struct measured {
	enum sweep_device_class cls;
	enum sweep_device_reason reason; /* PROBE, SYSFS or DEFAULT */
	int error;                       /* why no probe */
	uint32_t flags, reads;
	uint64_t random_ns, seq_ns;
};

/* Append " tag=value" with whatever is in sysfs file dir/rel, blanks made '_'; nothing when absent. */
static void key_add(char *key, size_t size, const char *tag, const char *dir, const char *rel)
{
	char path[PATH_MAX], buf[256];
	if (snprintf(path, sizeof(path), "%s/%s", dir, rel) >= (int)sizeof(path) ||
	    sweep__read_small(path, buf, sizeof(buf)) < 0)
		return;
	for (char *p = buf; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			*p = '_';
	size_t n = strlen(key);
	if (n < size)
		snprintf(key + n, size - n, "%s%s=%s", n ? " " : "", tag, buf);
}

/*
 * What makes this MAJ:MIN this medium: the boot (numbers are reused after
 * one), diskseq (new for every disk the kernel attaches, loop and dm
 * included; kernels since 5.15), and for older kernels what sysfs says
 * about the medium itself.
 */
static void identity(const char *sysdir, char *key, size_t size)
{
	char parent[PATH_MAX];
	key[0] = '\0';
	key_add(key, size, "boot", "/proc/sys/kernel/random", "boot_id");
	sweep__copy_name(parent, sizeof(parent), sysdir);
	bool part = false;
	{
		char p[PATH_MAX];
		struct stat st;
		if (snprintf(p, sizeof(p), "%s/partition", sysdir) < (int)sizeof(p) && stat(p, &st) == 0) {
			char *slash = strrchr(parent, '/');
			if (slash) {
				*slash = '\0';
				part = true;
			}
		}
	}
	key_add(key, size, "diskseq", parent, "diskseq");
	key_add(key, size, "size", sysdir, "size");
	if (part)
		key_add(key, size, "start", sysdir, "start");
	key_add(key, size, "serial", parent, "serial");
	key_add(key, size, "serial", parent, "device/serial");
	key_add(key, size, "wwid", parent, "wwid");
	key_add(key, size, "wwid", parent, "device/wwid");
	key_add(key, size, "model", parent, "device/model");
	key_add(key, size, "back", parent, "loop/backing_file");
	key_add(key, size, "offset", parent, "loop/offset");
	key_add(key, size, "dm", parent, "dm/uuid");
	key_add(key, size, "dmname", parent, "dm/name");
}

/* ---- the probe ---- */

/*
 * How long this thread has waited for a CPU while runnable, ns (schedstat:
 * 0 when the kernel does not say). On a loaded machine a read that
 * completed may wait milliseconds before its thread runs again: that is
 * the CPU's time, not the device's, and is taken out of every timing.
 */
static uint64_t run_delay(void)
{
	char buf[128];
	unsigned long long on_cpu, waited;
	if (sweep__read_small("/proc/thread-self/schedstat", buf, sizeof(buf)) == 0 &&
	    sscanf(buf, "%llu %llu", &on_cpu, &waited) == 2)
		return waited;
	return 0;
}

/* ns since start, less the time this thread waited for a CPU since waited0 */
static uint64_t device_time(uint64_t start, uint64_t waited0)
{
	uint64_t all = sweep__now_ns() - start, cpu = run_delay() - waited0;
	return all > cpu ? all - cpu : 0;
}

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Read exactly len bytes at off; -errno or -EIO on a short read. */
static int read_at(int fd, void *buf, size_t len, uint64_t off)
{
	ssize_t n = pread(fd, buf, len, (off_t)off);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

/* Requests in flight on a block device now (its sysfs inflight file), 0 when unknown. */
static unsigned inflight(const char *path)
{
	char buf[64];
	unsigned rd = 0, wr = 0;
	if (path[0] && sweep__read_small(path, buf, sizeof(buf)) == 0 && sscanf(buf, "%u %u", &rd, &wr) == 2)
		return rd + wr;
	return 0;
}

struct random_run {
	unsigned n, contended; /* reads timed; of them, started while others' requests were in flight */
	uint64_t q25;          /* the time three reads in four took or more */
};

/*
 * Random reads, far apart, one at a time, until enough are in or the
 * budget is spent. Their cost is the lower quartile: on a disk every
 * random read pays a seek and part of a turn (a 7200 rpm disk: 3 in 4 take
 * 4 ms or more, a short-stroked one 2 ms), while a fast device that others
 * are using makes some reads wait behind their requests, and a loaded CPU
 * delays the completions. This VM's disk with the load average at 14 on 2
 * cores, 64 reads: lower quartile 0.1-0.5 ms, median 0.1-1.7 ms, mean
 * 1-2.5 ms, slowest 8-15 ms; the time the thread waited for a CPU taken
 * out, median 0.1-0.4 ms. Only the quartile of that still tells.
 */
/*
 * Whether the first n random reads (times[], in order of reading) already
 * settle it: a disk beyond doubt. That is their lower quartile at twice a
 * disk's threshold (2 ms, and 8 times a stream's 4 KiB), none of them
 * queued behind others' requests, after PROBE_EARLY_READS of them: a fast
 * device under a heavy load has a quartile of 0.1-0.5 ms (above), while on
 * a disk the quartile of a turn alone is a quarter of one (2.1 ms at 7200
 * rpm) and every read adds a seek. A first run on a disk then reads 12
 * blocks instead of 32 (about 0.25 s at 7200 rpm, more than a small walk
 * costs). Anything less clear reads on to the full count.
 */
bool sweep__probe_settled(const uint64_t *times, unsigned n, uint64_t seq_ns, unsigned contended)
{
	uint64_t v[PROBE_EARLY_READS];

	if (n != PROBE_EARLY_READS || contended)
		return false;
	memcpy(v, times, sizeof(v));
	qsort(v, n, sizeof(v[0]), cmp_u64);
	uint64_t q25 = v[(n - 1) / 4];
	return q25 >= 2 * HDD_RANDOM_NS && q25 >= 2 * HDD_RATIO * seq_ns;
}

static int random_reads(int fd, void *buf, size_t blk, uint64_t nblocks, uint64_t *seed, const char *const busy[2],
			uint64_t seq_ns, struct random_run *rr)
{
	uint64_t times[PROBE_MAX_READS], spent = 0;
	unsigned n = 0;
	rr->contended = 0;
	while (n < PROBE_MAX_READS && (n < PROBE_MIN_READS || spent < PROBE_BUDGET_NS)) {
		uint64_t at = splitmix(seed) % nblocks * blk;
		/* Our reads go one at a time: anything in flight now is someone else's. */
		if (inflight(busy[0]) + inflight(busy[1]) > 0)
			rr->contended++;
		uint64_t w = run_delay(), t = sweep__now_ns();
		int r = read_at(fd, buf, blk, at);
		if (r < 0)
			return r;
		times[n] = device_time(t, w);
		spent += times[n++];
		if (sweep__probe_settled(times, n, seq_ns, rr->contended))
			break;
	}
	qsort(times, n, sizeof(times[0]), cmp_u64);
	rr->n = n;
	rr->q25 = times[(n - 1) / 4];
	return 0;
}

static enum sweep_device_class classify(uint64_t random_ns, uint64_t seq_ns)
{
	return random_ns >= HDD_RANDOM_NS && random_ns >= HDD_RATIO * seq_ns ? SWEEP_DEVICE_HDD : SWEEP_DEVICE_SSD;
}

static int probe(int fd, uint64_t bdev, const char *const busy[2], struct measured *m)
{
	uint64_t size = 0;
	int lbs = 512;
	if (ioctl(fd, BLKGETSIZE64, &size) < 0)
		return -errno;
	if (ioctl(fd, BLKSSZGET, &lbs) < 0 || lbs <= 0)
		lbs = 512;
	size_t blk = (size_t)lbs > PROBE_BLOCK ? (size_t)lbs : PROBE_BLOCK;
	if (size < PROBE_MIN_DEVICE || blk > PROBE_SEQ_CHUNK)
		return -ERANGE;
	void *buf = NULL;
	if (posix_memalign(&buf, blk, PROBE_SEQ_CHUNK) != 0)
		return -ENOMEM;
	uint64_t seed = sweep__now_ns() ^ (bdev * 0x9E3779B97F4A7C15ull);

	/* Sequential: a first read to get there (not timed), then 1 MiB in 256 KiB reads. */
	uint64_t span = PROBE_SEQ_CHUNK + PROBE_SEQ_BYTES;
	uint64_t off = splitmix(&seed) % ((size - span) / blk) * blk;
	int r = read_at(fd, buf, PROBE_SEQ_CHUNK, off);
	uint64_t w0 = run_delay(), t0 = sweep__now_ns();
	for (uint64_t done = 0; r == 0 && done < PROBE_SEQ_BYTES; done += PROBE_SEQ_CHUNK)
		r = read_at(fd, buf, PROBE_SEQ_CHUNK, off + PROBE_SEQ_CHUNK + done);
	uint64_t seq_ns = device_time(t0, w0) / (PROBE_SEQ_BYTES / PROBE_BLOCK);
	if (seq_ns == 0)
		seq_ns = 1;

	struct random_run rr = { 0 };
	if (r == 0)
		r = random_reads(fd, buf, blk, size / blk, &seed, busy, seq_ns, &rr);
	free(buf);
	if (r < 0)
		return r;
	m->reads = rr.n;
	m->random_ns = rr.q25;
	m->seq_ns = seq_ns;
	m->cls = classify(rr.q25, seq_ns);
	m->reason = SWEEP_DEVICE_BY_PROBE;
	/* Others' requests queued ahead of a quarter of ours: their numbers as much as the device's. */
	m->flags = rr.contended * 4 > rr.n ? SWEEP_PROBE_BUSY : 0;
	m->error = 0;
	return 0;
}

/* ---- the cache across runs ---- */

/* A directory or file we may believe: root's, and nobody else may write it. */
static bool trusted(int fd, mode_t type)
{
	struct stat st;
	return fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == type && st.st_uid == 0 && !(st.st_mode & 022);
}

static int cache_dir_open(bool create)
{
	if (!cache_dir[0])
		return -ENOENT;
	/* EEXIST is the usual case, and the checks below decide; a new one is made readable whatever the umask */
	if (create && mkdir(cache_dir, 0755) == 0)
		chmod(cache_dir, 0755);
	int dfd = open(cache_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	if (!trusted(dfd, S_IFDIR)) {
		close(dfd);
		return -EPERM;
	}
	return dfd;
}

static void cache_name(char *name, size_t size, uint64_t bdev)
{
	snprintf(name, size, "device-%u:%u", major(bdev), minor(bdev));
}

static int cache_load(uint64_t bdev, const char *key, struct measured *m)
{
	int dfd = cache_dir_open(false);
	if (dfd < 0)
		return dfd;
	char name[64], buf[2048];
	cache_name(name, sizeof(name), bdev);
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	close(dfd);
	if (fd < 0)
		return -errno;
	ssize_t n = trusted(fd, S_IFREG) ? read(fd, buf, sizeof(buf) - 1) : -1;
	close(fd);
	if (n <= 0)
		return -EPERM;
	buf[n] = '\0';

	/* "sweep-device 1\nkey KEY\nclass C\nreads N\nrandom_ns N\nseq_ns N\n" */
	char *save = NULL, *line = strtok_r(buf, "\n", &save);
	if (!line || strcmp(line, "sweep-device 1") != 0)
		return -EINVAL;
	struct measured got = { .reason = SWEEP_DEVICE_BY_PROBE, .flags = SWEEP_PROBE_CACHED };
	bool have_key = false, have_class = false;
	while ((line = strtok_r(NULL, "\n", &save))) {
		unsigned long long v;
		char word[8];
		if (strncmp(line, "key ", 4) == 0)
			have_key = strcmp(line + 4, key) == 0;
		else if (sscanf(line, "class %7s", word) == 1)
			have_class = sweep_device_class_parse(word, &got.cls) == 0 && got.cls != SWEEP_DEVICE_AUTO;
		else if (sscanf(line, "reads %llu", &v) == 1)
			got.reads = (uint32_t)v;
		else if (sscanf(line, "random_ns %llu", &v) == 1)
			got.random_ns = v;
		else if (sscanf(line, "seq_ns %llu", &v) == 1)
			got.seq_ns = v;
	}
	if (!have_key)
		return -ESTALE; /* another medium under this number */
	if (!have_class || !got.reads)
		return -EINVAL;
	*m = got;
	return 0;
}

/* Only root writes (readers trust nothing else); a temporary file renamed into place. */
static void cache_store(uint64_t bdev, const char *key, const struct measured *m)
{
	if (geteuid() != 0)
		return;
	int dfd = cache_dir_open(true);
	if (dfd < 0)
		return;
	char name[64], tmp[96], text[2048];
	cache_name(name, sizeof(name), bdev);
	snprintf(tmp, sizeof(tmp), ".%s.%ld", name, (long)getpid());
	int len = snprintf(text, sizeof(text), "sweep-device 1\nkey %s\nclass %s\nreads %" PRIu32
			   "\nrandom_ns %" PRIu64 "\nseq_ns %" PRIu64 "\n",
			   key, sweep_device_class_name(m->cls), m->reads, m->random_ns, m->seq_ns);
	int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd >= 0) {
		bool ok = len > 0 && len < (int)sizeof(text) && fchmod(fd, 0644) == 0 &&
			  write(fd, text, (size_t)len) == len;
		ok = close(fd) == 0 && ok;
		if (!ok || renameat(dfd, tmp, dfd, name) < 0)
			unlinkat(dfd, tmp, 0);
	}
	close(dfd);
}

/* ---- the cache in this process ---- */

struct known {
	uint64_t bdev;
	char key[512];
	struct measured m;
};

static pthread_mutex_t known_lock = PTHREAD_MUTEX_INITIALIZER;
static struct known *known;
static size_t nknown, known_cap;

void sweep__device_forget(void)
{
	pthread_mutex_lock(&known_lock);
	free(known);
	known = NULL;
	nknown = known_cap = 0;
	pthread_mutex_unlock(&known_lock);
}

/* No probe: the flag where sysfs has one, else the safe guess (sorting costs little on an SSD). */
static void unprobed(struct measured *m, int rotational, int err)
{
	memset(m, 0, sizeof(*m));
	m->error = err;
	m->reason = rotational < 0 ? SWEEP_DEVICE_BY_DEFAULT : SWEEP_DEVICE_BY_SYSFS;
	m->cls = rotational == 0 ? SWEEP_DEVICE_SSD : SWEEP_DEVICE_HDD;
}

/*
 * Time the device, watching whether others' requests are in flight on it,
 * or on the disk under it, as each random read starts: if so for many of
 * them, the numbers may be theirs as much as the device's, and are not
 * kept across runs. -errno when it could not be probed.
 */
static int probe_node(uint64_t bdev, const char *sysdir, const char *disk, struct measured *m)
{
	char top[PATH_MAX], below[PATH_MAX] = "";
	if (snprintf(top, sizeof(top), "%s/inflight", sysdir) >= (int)sizeof(top))
		top[0] = '\0';
	const char *base = strrchr(sysdir, '/');
	if (disk[0] && strcmp(disk, base ? base + 1 : sysdir) != 0 &&
	    snprintf(below, sizeof(below), "%s/block/%s/inflight", sweep__sysroot(), disk) >= (int)sizeof(below))
		below[0] = '\0';
	const char *const busy[2] = { top, below };
	int fd = sweep__bdev_open(bdev, O_RDONLY | O_DIRECT);
	if (fd < 0)
		return fd;
	int r = probe(fd, bdev, busy, m);
	close(fd);
	__atomic_add_fetch(&probes_done, 1, __ATOMIC_RELAXED);
	return r;
}

/* What the device itself says, probing it at most once per medium. Called with known_lock held. */
static void measure(uint64_t bdev, const char *sysdir, const char *disk, int rotational, struct measured *m)
{
	char key[512];
	identity(sysdir, key, sizeof(key));
	for (size_t i = 0; i < nknown; i++) {
		if (known[i].bdev == bdev && strcmp(known[i].key, key) == 0) {
			*m = known[i].m;
			return;
		}
	}
	int err = cache_load(bdev, key, m);
	if (err < 0) {
		err = probe_node(bdev, sysdir, disk, m);
		if (err == 0 && !(m->flags & SWEEP_PROBE_BUSY))
			cache_store(bdev, key, m);
	}
	if (err < 0)
		unprobed(m, rotational, err);
	if (sweep__grow(&known, &known_cap, nknown + 1, sizeof(*known), 4) == 0) {
		known[nknown].bdev = bdev;
		sweep__copy_name(known[nknown].key, sizeof(known[nknown].key), key);
		known[nknown].m = *m;
		nknown++;
	}
}

/* The class of the device under fi: requested, no device, or measured. */
static void class_decide(uint64_t bdev, int rotational, const char *sysdir, bool have_dir, struct sweep_fsinfo *fi)
{
	if (sweep__device_requested(&fi->device_class, &fi->device_reason))
		return;
	if (!bdev) {
		/* Memory, network, FUSE: nothing positions, and waiting is what parallelism hides. */
		fi->device_class = SWEEP_DEVICE_SSD;
		fi->device_reason = SWEEP_DEVICE_BY_NODEV;
		return;
	}
	struct measured m = { .cls = SWEEP_DEVICE_HDD };
	if (have_dir) {
		pthread_mutex_lock(&known_lock);
		measure(bdev, sysdir, fi->disk, rotational, &m);
		pthread_mutex_unlock(&known_lock);
	} else {
		unprobed(&m, rotational, -ENODEV);
	}
	fi->device_class = m.cls;
	fi->device_reason = m.reason;
	fi->probe_error = m.error;
	fi->probe_flags = m.flags;
	fi->probe_reads = m.reads;
	fi->probe_random_ns = m.random_ns;
	fi->probe_seq_ns = m.seq_ns;
}

void sweep__device_decide(uint64_t bdev, int rotational, struct sweep_fsinfo *fi)
{
	char link[PATH_MAX], sysdir[PATH_MAX];
	bool have_dir = bdev && major(bdev) != 0 &&
			snprintf(link, sizeof(link), "%s/dev/block/%u:%u", sweep__sysroot(), major(bdev), minor(bdev)) <
				(int)sizeof(link) &&
			realpath(link, sysdir);

	fi->device_name[0] = '\0';
	fi->probe_error = 0;
	fi->probe_flags = 0;
	fi->probe_reads = 0;
	fi->probe_random_ns = fi->probe_seq_ns = 0;
	if (have_dir) {
		const char *base = strrchr(sysdir, '/');
		sweep__copy_name(fi->device_name, sizeof(fi->device_name), base ? base + 1 : sysdir);
	}
	class_decide(bdev, rotational, sysdir, have_dir, fi);
	sweep__profile_decide(fi->device_class, fi->policy, &fi->profile);
}

bool sweep__device_stale(const struct sweep_fsinfo *fi)
{
	enum sweep_device_class c;
	enum sweep_device_reason why;
	bool asked = sweep__device_requested(&c, &why);
	bool had = fi->device_reason == SWEEP_DEVICE_BY_CALLER || fi->device_reason == SWEEP_DEVICE_BY_ENV;
	return asked != had || (asked && (c != fi->device_class || why != fi->device_reason));
}

/* ---- the profile: what each class does (DESIGN §3b) ---- */

/* The SSD class's walk threads: 4 per CPU (cold, they mostly wait for the device), 8..16. */
static uint32_t ssd_walk_threads(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned n = cpus > 0 ? 4u * (unsigned)cpus : 4u;
	return n < 8 ? 8 : n > 16 ? 16 : n;
}

/* The weaker of two orders: PHYSICAL > INODE > NONE; AUTO (no policy known) counts as INODE. */
static enum sweep_order order_min(enum sweep_order a, enum sweep_order b)
{
	static const int rank[] = {
		[SWEEP_ORDER_AUTO] = 1, [SWEEP_ORDER_PHYSICAL] = 2, [SWEEP_ORDER_INODE] = 1,
		[SWEEP_ORDER_NAME] = 1, [SWEEP_ORDER_NONE] = 0,
	};
	enum sweep_order x = a == SWEEP_ORDER_AUTO ? SWEEP_ORDER_INODE : a;
	enum sweep_order y = b == SWEEP_ORDER_AUTO ? SWEEP_ORDER_INODE : b;
	return rank[x] <= rank[y] ? x : y;
}

/* Whether the environment variable name says off (off, 0, no). */
static bool env_off(const char *v)
{
	return v && (!strcasecmp(v, "off") || !strcmp(v, "0") || !strcasecmp(v, "no"));
}

void sweep__profile_decide(enum sweep_device_class cls, enum sweep_order policy, struct sweep_profile *p)
{
	switch (cls) {
	case SWEEP_DEVICE_HDD:
		/*
		 * Positioning costs: everything in physical order, as far as
		 * the filesystem says where things are; metadata swept; a deep
		 * queue with a small ring, the block layer merging neighbours
		 * (aged step-5 images, sweep-plan --read on the hdd7200 model:
		 * xfs 24.2 s at depth 8, 18.8-18.9 s at 128 with a 64 or a
		 * 16 MiB ring alike); data asked for ahead extent by extent.
		 * No walk threads: their reads would pull the head between
		 * directories (1M-file xfs tree: 4.5x the seeks, 7% more
		 * modeled time). Stats in batches of 64 in inode order; a batch
		 * whose first stats read the disk goes to io_uring whole, so
		 * the inode-table reads reach the device together and merge;
		 * while the inodes are cached, plain calls (an io_uring statx
		 * runs on a kernel worker: warm /usr/share, sweep-du 1.6x GNU
		 * du's CPU with every statx handed over). Whether a batch read
		 * the disk is the thread's block input count
		 * (lib/common/disk_reads.c), not a clock.
		 */
		*p = (struct sweep_profile){
			.plan_order = order_min(SWEEP_ORDER_PHYSICAL, policy),
			.walk_order = order_min(SWEEP_ORDER_PHYSICAL, policy),
			.walk_threads = 0,
			.stat_batch = 64,
			.stat_uring = 1,
			.metascan = SWEEP_PROFILE_META_HINTS | SWEEP_PROFILE_META_SWEEP,
			.queue_depth = 128,
			.ring_bytes = 16u << 20,
			.prefetch = 1,
		};
		break;
	case SWEEP_DEVICE_SSD:
		/*
		 * Positioning is free: no FIEMAP and no sort in the plan (read
		 * as added), the walk by inode (it costs nothing and batches the
		 * stats), several directories in flight (each thread stats its
		 * directory's first entries plainly: the threads are the
		 * concurrency), a full queue with a big ring. Raw inode hints
		 * still pay (1M-file ext4 tree: the walk 0.79x the time), the
		 * whole-table sweep does not.
		 */
		*p = (struct sweep_profile){
			.plan_order = SWEEP_ORDER_NONE,
			.walk_order = order_min(SWEEP_ORDER_INODE, policy),
			.walk_threads = ssd_walk_threads(),
			.stat_batch = 64,
			.stat_uring = 1,
			.metascan = SWEEP_PROFILE_META_HINTS,
			.queue_depth = 64,
			.ring_bytes = 64u << 20,
			.prefetch = 0,
		};
		break;
	default:
		/* Nothing known of the device (its filesystem could not be described): a middle way. */
		*p = (struct sweep_profile){
			.plan_order = order_min(SWEEP_ORDER_INODE, policy),
			.walk_order = order_min(SWEEP_ORDER_INODE, policy),
			.walk_threads = 0,
			.stat_batch = 64,
			.stat_uring = 1,
			.metascan = SWEEP_PROFILE_META_HINTS,
			.queue_depth = 32,
			.ring_bytes = 64u << 20,
			.prefetch = 0,
		};
		break;
	}

	/* The environment beats the class, field by field (sweep(7), ENVIRONMENT). */
	const char *env = getenv("SWEEP_WALK_THREADS");
	if (env && *env) {
		char *end;
		unsigned long n = strtoul(env, &end, 10);
		if (*end == '\0') {
			p->walk_threads = n > PROFILE_MAX_WALK_THREADS ? PROFILE_MAX_WALK_THREADS : (uint32_t)n;
			p->env |= SWEEP_PROFILE_ENV_WALK_THREADS;
		}
	}
	env = getenv("SWEEP_METASCAN");
	if (env_off(env)) {
		p->metascan = 0;
		p->env |= SWEEP_PROFILE_ENV_METASCAN;
	} else if (env && !strcasecmp(env, "hdd")) {
		if (cls != SWEEP_DEVICE_HDD)
			p->metascan = 0;
		p->env |= SWEEP_PROFILE_ENV_METASCAN;
	} else if (env && (!strcasecmp(env, "on") || !strcmp(env, "1") || !strcasecmp(env, "yes"))) {
		p->metascan |= SWEEP_PROFILE_META_ALL;
		p->env |= SWEEP_PROFILE_ENV_METASCAN;
	}
	if (env_off(getenv("SWEEP_PREFETCH")) && p->prefetch) {
		p->prefetch = 0;
		p->env |= SWEEP_PROFILE_ENV_PREFETCH;
	}
}

void sweep__profile_unknown(struct sweep_profile *p)
{
	sweep__profile_decide(SWEEP_DEVICE_AUTO, SWEEP_ORDER_AUTO, p);
}

/* ---- for people ---- */

SWEEP_EXPORT int sweep_device_explain(const struct sweep_fsinfo *fi, char *buf, size_t size)
{
	if (!fi || (!buf && size))
		return -EINVAL;
	const char *cls = sweep_device_class_name(fi->device_class);
	const char *dev = fi->device_name[0] ? fi->device_name : "?";
	char err[64] = "";
	if (fi->probe_error)
		snprintf(err, sizeof(err), "; not probed: %s", strerror(-fi->probe_error));
	switch (fi->device_reason) {
	case SWEEP_DEVICE_BY_CALLER:
		return snprintf(buf, size, "%s (forced by the caller)", cls);
	case SWEEP_DEVICE_BY_ENV:
		return snprintf(buf, size, "%s (forced by SWEEP_DEVICE)", cls);
	case SWEEP_DEVICE_BY_NODEV:
		return snprintf(buf, size, "%s (no block device under %s)", cls, fi->fs_name);
	case SWEEP_DEVICE_BY_PROBE:
		return snprintf(buf, size, "%s (probe of %s: 3 in 4 random 4 KiB reads took %.3f ms or more, sequential %.3f ms"
				" per 4 KiB, %" PRIu32 " reads%s)",
				cls, dev, (double)fi->probe_random_ns / 1e6, (double)fi->probe_seq_ns / 1e6,
				fi->probe_reads, (fi->probe_flags & SWEEP_PROBE_CACHED) ? ", cached"
						 : (fi->probe_flags & SWEEP_PROBE_BUSY) ? ", device busy" : "");
	case SWEEP_DEVICE_BY_SYSFS:
		return snprintf(buf, size, "%s (sysfs: %s rotational=%d%s)", cls, fi->disk[0] ? fi->disk : dev,
				fi->rotational, err);
	case SWEEP_DEVICE_BY_DEFAULT:
		return snprintf(buf, size, "%s (nothing known about %s%s)", cls, dev, err);
	}
	return snprintf(buf, size, "%s", cls);
}

/* "1 MiB", "16 MiB", "512 KiB" */
static void size_words(char *buf, size_t size, uint64_t v)
{
	if (v >= (1u << 20) && v % (1u << 20) == 0)
		snprintf(buf, size, "%" PRIu64 " MiB", v >> 20);
	else if (v >= 1024 && v % 1024 == 0)
		snprintf(buf, size, "%" PRIu64 " KiB", v >> 10);
	else
		snprintf(buf, size, "%" PRIu64 " B", v);
}

SWEEP_EXPORT int sweep_profile_explain(const struct sweep_fsinfo *fi, char *buf, size_t size)
{
	if (!fi || (!buf && size))
		return -EINVAL;
	const struct sweep_profile *p = &fi->profile;
	char threads[48], ring[32], meta[48];
	const char *by_env = " (environment)";

	if (p->walk_threads)
		snprintf(threads, sizeof(threads), "%" PRIu32 " walk threads%s", p->walk_threads,
			 (p->env & SWEEP_PROFILE_ENV_WALK_THREADS) ? by_env : "");
	else
		snprintf(threads, sizeof(threads), "no walk threads%s",
			 (p->env & SWEEP_PROFILE_ENV_WALK_THREADS) ? by_env : "");
	size_words(ring, sizeof(ring), p->ring_bytes);
	snprintf(meta, sizeof(meta), "metascan %s%s%s%s",
		 !p->metascan ? "off" : (p->metascan & SWEEP_PROFILE_META_HINTS) ? "hints" : "",
		 (p->metascan & SWEEP_PROFILE_META_SWEEP) ? "+sweep" : "",
		 (p->metascan & SWEEP_PROFILE_META_ALL) ? "+xfs" : "",
		 (p->env & SWEEP_PROFILE_ENV_METASCAN) ? by_env : "");
	return snprintf(buf, size, "plan %s, walk %s, %s, stat %" PRIu32 " at once%s, %s, reader depth %" PRIu32
			", ring %s, %s%s",
			sweep_order_name(p->plan_order), sweep_order_name(p->walk_order), threads, p->stat_batch,
			p->stat_uring ? " (io_uring when cold)" : "", meta,
			p->queue_depth, ring, p->prefetch ? "prefetch" : "no prefetch",
			(p->env & SWEEP_PROFILE_ENV_PREFETCH) ? by_env : "");
}
