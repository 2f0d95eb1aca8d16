/* SPDX-License-Identifier: MIT */
/*
 * fsinfo: the policy table, real filesystems under /, /proc and /tmp, the
 * per-device cache, the size rule, and how the device class is decided.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <cmocka.h>

#include "../common/fakesys.h"

#include "device.h"
#include "../common/backend.h"

static void test_policy_table(void **state)
{
	(void)state;
	/* physical: ext2/3/4, xfs, btrfs */
	assert_int_equal(sweep_fsinfo_policy(0xEF53), SWEEP_ORDER_PHYSICAL);
	assert_int_equal(sweep_fsinfo_policy(0x58465342), SWEEP_ORDER_PHYSICAL);
	assert_int_equal(sweep_fsinfo_policy(0x9123683E), SWEEP_ORDER_PHYSICAL);
	/* no sorting: tmpfs, NFS, CIFS/SMB, FUSE, overlay, Lustre, ceph */
	static const uint64_t none[] = { 0x01021994, 0x6969, 0xFF534D42, 0xFE534D42, 0x517B,
					 0x65735546, 0x794C7630, 0x0BD00BD0, 0x00C36400 };
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++)
		assert_int_equal(sweep_fsinfo_policy(none[i]), SWEEP_ORDER_NONE);
	/* inode: squashfs; and unknown filesystems */
	assert_int_equal(sweep_fsinfo_policy(0x73717368), SWEEP_ORDER_INODE);
	assert_int_equal(sweep_fsinfo_policy(0x12345678), SWEEP_ORDER_INODE);
}

static void check_against_statfs(const char *path)
{
	struct sweep_fsinfo fi = { .size = sizeof(fi) };
	struct statfs sfs;
	struct stat st;
	assert_int_equal(sweep_fsinfo_path(path, &fi), 0);
	assert_int_equal(statfs(path, &sfs), 0);
	assert_int_equal(lstat(path, &st), 0);
	assert_int_equal(fi.dev, st.st_dev);
	assert_int_equal(fi.fs_magic, (uint64_t)(unsigned long)sfs.f_type);
	assert_int_equal(fi.block_size, sfs.f_bsize);
	assert_int_equal(fi.policy, sweep_fsinfo_policy(fi.fs_magic));
	assert_true(fi.rotational >= -1 && fi.rotational <= 1);
	assert_true(strlen(fi.fs_name) < sizeof(fi.fs_name));
	/* When a disk was found, rotational must be what that disk says. */
	if (fi.disk[0]) {
		char p[128], buf[8] = "";
		snprintf(p, sizeof(p), "/sys/block/%s/queue/rotational", fi.disk);
		FILE *f = fopen(p, "re");
		assert_non_null(f);
		assert_non_null(fgets(buf, sizeof(buf), f));
		fclose(f);
		assert_int_equal(fi.rotational, atoi(buf));
	} else {
		assert_int_equal(fi.rotational, -1);
	}
	/* The fd and path forms agree. */
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	struct sweep_fsinfo fi2 = { .size = sizeof(fi2) };
	assert_int_equal(sweep_fsinfo_fd(fd, &fi2), 0);
	close(fd);
	assert_memory_equal(&fi, &fi2, sizeof(fi));
}

static void test_real(void **state)
{
	(void)state;
	check_against_statfs("/");
	check_against_statfs("/tmp");
	check_against_statfs("/proc");
	struct sweep_fsinfo fi = { .size = sizeof(fi) };
	assert_int_equal(sweep_fsinfo_path("/proc", &fi), 0);
	assert_string_equal(fi.fs_name, "proc");
	assert_int_equal(fi.policy, SWEEP_ORDER_NONE);
	assert_int_equal(fi.rotational, -1);
	assert_string_equal(fi.disk, "");
}

/* The mount table as sweep__mountinfo_each parses it: every line, and /proc's own mount where statx says it is. */
struct table_count {
	size_t lines;
	uint64_t proc_id;
	int proc_seen;
};

static int count_mount(const struct sweep__mount *m, void *ctx)
{
	struct table_count *t = ctx;
	t->lines++;
	assert_non_null(m->opts);
	assert_non_null(m->source);
	assert_true(sweep__opt_has(m->opts, "rw") || sweep__opt_has(m->opts, "ro"));
	assert_true(m->root[0] == '/');
	if (m->id == t->proc_id) {
		assert_string_equal(m->fstype, "proc");
		assert_string_equal(m->root, "/");
		t->proc_seen = 1;
	}
	return 0;
}

static int stop_at_second(const struct sweep__mount *m, void *ctx)
{
	(void)m;
	return ++*(int *)ctx == 2 ? 7 : 0;
}

static void test_mountinfo(void **state)
{
	(void)state;
	struct table_count t = { 0 };
#ifdef STATX_MNT_ID
	struct statx stx;
	assert_int_equal(statx(AT_FDCWD, "/proc", 0, STATX_MNT_ID, &stx), 0);
	t.proc_id = stx.stx_mnt_id;
#endif
	assert_int_equal(sweep__mountinfo_each(count_mount, &t), 0);
	FILE *f = fopen("/proc/self/mountinfo", "re");
	assert_non_null(f);
	size_t lines = 0;
	for (int c; (c = fgetc(f)) != EOF;)
		lines += c == '\n';
	fclose(f);
	assert_int_equal(t.lines, lines);
	if (t.proc_id) {
		assert_true(t.proc_seen);
		assert_int_equal(sweep__mount_whole(t.proc_id), 1);
	}
	assert_int_equal(sweep__mount_whole(UINT64_MAX), -ENOENT);
	int calls = 0;
	assert_int_equal(sweep__mountinfo_each(stop_at_second, &calls), 7);
	assert_int_equal(calls, 2);

	assert_true(sweep__opt_has("rw,noatime,idmapped", "idmapped"));
	assert_true(sweep__opt_has("largeio", "largeio"));
	assert_false(sweep__opt_has("rw,nolargeio", "largeio"));
	assert_false(sweep__opt_has("rw,largeio2", "largeio"));
	assert_false(sweep__opt_has("", "rw"));
}

static void test_errors(void **state)
{
	(void)state;
	struct sweep_fsinfo fi;
	memset(&fi, 0x5a, sizeof(fi));
	fi.size = sizeof(fi);
	struct sweep_fsinfo copy = fi;
	assert_int_equal(sweep_fsinfo_path("/nonexistent/sweep/path", &fi), -ENOENT);
	assert_int_equal(sweep_fsinfo_fd(-1, &fi), -EBADF);
	assert_memory_equal(&fi, &copy, sizeof(fi)); /* untouched on failure */
	assert_int_equal(sweep_fsinfo_path(NULL, &fi), -EINVAL);
}

static void test_cache(void **state)
{
	(void)state;
	assert_null(sweep_fscache_free(NULL));
	struct sweep_fscache *c = sweep_fscache_new();
	assert_non_null(c);
	int root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat rst, pst;
	assert_int_equal(fstat(root, &rst), 0);
	assert_int_equal(fstat(proc, &pst), 0);
	const struct sweep_fsinfo *a, *b, *p;
	assert_int_equal(sweep_fscache_get(c, rst.st_dev, root, &a), 0);
	assert_int_equal(sweep_fscache_get(c, pst.st_dev, proc, &p), 0);
	/* A hit does not look at the fd at all: the same entry comes back. */
	assert_int_equal(sweep_fscache_get(c, rst.st_dev, -1, &b), 0);
	assert_ptr_equal(a, b);
	assert_ptr_not_equal(a, p);
	assert_int_equal(a->dev, rst.st_dev);
	assert_string_equal(p->fs_name, "proc");
	/* Entries stay put while the cache grows. */
	const struct sweep_fsinfo *keep = a;
	for (int i = 0; i < 10; i++) {
		int fd = open(i % 2 ? "/dev" : "/sys", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		struct stat st;
		assert_int_equal(fstat(fd, &st), 0);
		assert_int_equal(sweep_fscache_get(c, st.st_dev, fd, &b), 0);
		close(fd);
	}
	assert_int_equal(sweep_fscache_get(c, rst.st_dev, -1, &b), 0);
	assert_ptr_equal(keep, b);
	/* A miss whose fd is on another device is refused. */
	assert_int_equal(sweep_fscache_get(c, 0xdeadbeef, root, &b), -EXDEV);
	close(root);
	close(proc);
	assert_null(sweep_fscache_free(c));
}

static void test_names(void **state)
{
	(void)state;
	enum sweep_order o;
	static const char *names[] = { "auto", "physical", "inode", "name", "none" };
	for (size_t i = 0; i < 5; i++) {
		assert_int_equal(sweep_order_parse(names[i], &o), 0);
		assert_string_equal(sweep_order_name(o), names[i]);
	}
	o = SWEEP_ORDER_NAME;
	assert_int_equal(sweep_order_parse("Physical", &o), -EINVAL);
	assert_int_equal(o, SWEEP_ORDER_NAME);
	assert_string_equal(sweep_order_name((enum sweep_order)99), "unknown");
	assert_string_equal(sweep_backend_name(SWEEP_BACKEND_URING), "uring");
	assert_string_equal(sweep_backend_name(SWEEP_BACKEND_SYSCALL), "syscall");
	assert_int_equal(sweep_backend_resolve(SWEEP_BACKEND_SYSCALL), SWEEP_BACKEND_SYSCALL);
	enum sweep_backend b = sweep_backend_resolve(SWEEP_BACKEND_AUTO);
	const char *env = getenv("SWEEP_BACKEND");
	if (env && strcmp(env, "syscall") == 0)
		assert_int_equal(b, SWEEP_BACKEND_SYSCALL);
	else
		assert_int_equal(b, sweep__uring_usable() ? SWEEP_BACKEND_URING : SWEEP_BACKEND_SYSCALL);
	assert_string_equal(sweep_version(), SWEEP_VERSION);
}


/* ---- the one rule for sized structs, applied to what the library fills ---- */

static void test_size_rule(void **state)
{
	(void)state;
	struct sweep_fsinfo fi, copy;
	memset(&fi, 0x5a, sizeof(fi));
	fi.size = 0;
	copy = fi;
	assert_int_equal(sweep_fsinfo_path("/proc", &fi), -EINVAL); /* .size not set */
	fi.size = offsetof(struct sweep_fsinfo, probe_seq_ns);    /* shorter than the first sized layout */
	copy.size = fi.size;
	assert_int_equal(sweep_fsinfo_path("/proc", &fi), -EINVAL);
	fi.size = (size_t)1 << 20; /* garbage, most likely */
	copy.size = fi.size;
	assert_int_equal(sweep_fsinfo_path("/proc", &fi), -E2BIG);
	assert_memory_equal(&fi, &copy, sizeof(fi));
	assert_int_equal(sweep_fsinfo_path("/proc", NULL), -EINVAL);
	assert_int_equal(sweep_fsinfo_fd(0, NULL), -EINVAL);

	/* A newer caller: a longer struct is fine while its tail is zero, which stays as it was. */
	struct {
		struct sweep_fsinfo fi;
		unsigned char tail[24];
	} big;
	memset(&big, 0, sizeof(big));
	big.fi.size = sizeof(big);
	assert_int_equal(sweep_fsinfo_path("/proc", &big.fi), 0);
	assert_string_equal(big.fi.fs_name, "proc");
	assert_int_equal(big.fi.size, sizeof(big));
	for (size_t i = 0; i < sizeof(big.tail); i++)
		assert_int_equal(big.tail[i], 0);
	big.tail[5] = 1;
	memset(&big.fi.fs_name, 'x', sizeof(big.fi.fs_name));
	int fd = open("/proc", O_RDONLY | O_CLOEXEC);
	assert_int_equal(sweep_fsinfo_fd(fd, &big.fi), -E2BIG);
	close(fd);
	assert_int_equal(big.fi.fs_name[0], 'x'); /* untouched */

	/* An older caller, from before the profile: the fields it knows, nothing past its size. */
	struct {
		struct sweep_fsinfo fi;
	} old;
	memset(&old, 0x5a, sizeof(old));
	old.fi.size = offsetof(struct sweep_fsinfo, profile);
	assert_int_equal(sweep_fsinfo_path("/proc", &old.fi), 0);
	assert_string_equal(old.fi.fs_name, "proc");
	assert_int_equal(old.fi.profile.queue_depth, 0x5a5a5a5au); /* left as it was */
}

/* ---- device class ---- */

static void test_device_names(void **state)
{
	(void)state;
	enum sweep_device_class c;
	static const char *names[] = { "auto", "hdd", "ssd" };
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(sweep_device_class_parse(names[i], &c), 0);
		assert_int_equal(c, (enum sweep_device_class)i);
		assert_string_equal(sweep_device_class_name(c), names[i]);
	}
	c = SWEEP_DEVICE_HDD;
	assert_int_equal(sweep_device_class_parse("SSD", &c), -EINVAL);
	assert_int_equal(sweep_device_class_parse(NULL, &c), -EINVAL);
	assert_int_equal(c, SWEEP_DEVICE_HDD);
	assert_string_equal(sweep_device_class_name((enum sweep_device_class)7), "unknown");
	assert_string_equal(sweep_device_reason_name(SWEEP_DEVICE_BY_PROBE), "probe");
	assert_string_equal(sweep_device_reason_name(SWEEP_DEVICE_BY_SYSFS), "sysfs");
	assert_string_equal(sweep_device_reason_name(SWEEP_DEVICE_BY_ENV), "environment");
	assert_string_equal(sweep_device_reason_name(SWEEP_DEVICE_BY_CALLER), "caller");
	assert_string_equal(sweep_device_reason_name(SWEEP_DEVICE_BY_NODEV), "no-device");
	assert_string_equal(sweep_device_reason_name(SWEEP_DEVICE_BY_DEFAULT), "default");
	assert_int_equal(sweep_device_force((enum sweep_device_class)3), -EINVAL);
}

static void class_of(const char *path, enum sweep_device_class want, enum sweep_device_reason why)
{
	struct sweep_fsinfo fi = { .size = sizeof(fi) };
	assert_int_equal(sweep_fsinfo_path(path, &fi), 0);
	assert_string_equal(sweep_device_reason_name(fi.device_reason), sweep_device_reason_name(why));
	assert_string_equal(sweep_device_class_name(fi.device_class), sweep_device_class_name(want));
}

static void test_device_override(void **state)
{
	(void)state;
	unsetenv("SWEEP_DEVICE");
	assert_int_equal(sweep_device_force(SWEEP_DEVICE_AUTO), 0);
	class_of("/proc", SWEEP_DEVICE_SSD, SWEEP_DEVICE_BY_NODEV);
	struct sweep_fsinfo root = { .size = sizeof(root) };
	assert_int_equal(sweep_fsinfo_path("/", &root), 0);
	assert_true(root.device_class == SWEEP_DEVICE_HDD || root.device_class == SWEEP_DEVICE_SSD);
	assert_true(root.device_reason == SWEEP_DEVICE_BY_PROBE || root.device_reason == SWEEP_DEVICE_BY_SYSFS ||
		    root.device_reason == SWEEP_DEVICE_BY_DEFAULT || root.device_reason == SWEEP_DEVICE_BY_NODEV);
	/* Without a probe the numbers are zero and the error says why; with one they are not. */
	if (root.device_reason == SWEEP_DEVICE_BY_PROBE)
		assert_true(root.probe_reads >= 8 && root.probe_random_ns > 0 && root.probe_seq_ns > 0 &&
			    root.probe_error == 0);
	else
		assert_true(root.probe_reads == 0 && root.probe_random_ns == 0);
	if (root.device_reason == SWEEP_DEVICE_BY_SYSFS || root.device_reason == SWEEP_DEVICE_BY_DEFAULT)
		assert_true(root.probe_error < 0);

	/* The environment beats the device, the caller beats the environment. */
	setenv("SWEEP_DEVICE", "hdd", 1);
	class_of("/proc", SWEEP_DEVICE_HDD, SWEEP_DEVICE_BY_ENV);
	class_of("/", SWEEP_DEVICE_HDD, SWEEP_DEVICE_BY_ENV);
	assert_int_equal(sweep_device_force(SWEEP_DEVICE_SSD), 0);
	class_of("/", SWEEP_DEVICE_SSD, SWEEP_DEVICE_BY_CALLER);
	assert_int_equal(sweep_device_force(SWEEP_DEVICE_AUTO), 0);
	setenv("SWEEP_DEVICE", "ssd", 1);
	class_of("/", SWEEP_DEVICE_SSD, SWEEP_DEVICE_BY_ENV);
	/* auto and words the library does not know leave the decision to the device */
	setenv("SWEEP_DEVICE", "auto", 1);
	class_of("/", root.device_class, root.device_reason);
	setenv("SWEEP_DEVICE", "fast", 1);
	class_of("/", root.device_class, root.device_reason);
	class_of("/proc", SWEEP_DEVICE_SSD, SWEEP_DEVICE_BY_NODEV);
	unsetenv("SWEEP_DEVICE");

	/* A cache entry follows a class forced or released after it was filled. */
	struct sweep_fscache *c = sweep_fscache_new();
	int fd = open("/", O_PATH | O_CLOEXEC);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	const struct sweep_fsinfo *a, *b;
	assert_int_equal(sweep_fscache_get(c, st.st_dev, fd, &a), 0);
	assert_int_equal(a->device_reason, root.device_reason);
	assert_int_equal(sweep_device_force(SWEEP_DEVICE_HDD), 0);
	assert_int_equal(sweep_fscache_get(c, st.st_dev, -1, &b), 0);
	assert_ptr_equal(a, b);
	assert_int_equal(b->device_class, SWEEP_DEVICE_HDD);
	assert_int_equal(b->device_reason, SWEEP_DEVICE_BY_CALLER);
	assert_int_equal(sweep_device_force(SWEEP_DEVICE_AUTO), 0);
	assert_int_equal(sweep_fscache_get(c, st.st_dev, -1, &b), 0);
	assert_int_equal(b->device_class, root.device_class);
	assert_int_equal(b->device_reason, root.device_reason);
	close(fd);
	sweep_fscache_free(c);
}

static void test_device_explain(void **state)
{
	(void)state;
	struct sweep_fsinfo fi = { .size = sizeof(fi) };
	char buf[256];
	strcpy(fi.fs_name, "xfs");
	strcpy(fi.device_name, "dm-3");
	strcpy(fi.disk, "sdb");
	fi.rotational = 0;
	fi.device_class = SWEEP_DEVICE_HDD;
	fi.device_reason = SWEEP_DEVICE_BY_PROBE;
	fi.probe_reads = 32;
	fi.probe_random_ns = 8200000;
	fi.probe_seq_ns = 30000;
	int n = sweep_device_explain(&fi, buf, sizeof(buf));
	assert_string_equal(buf, "hdd (probe of dm-3: 3 in 4 random 4 KiB reads took 8.200 ms or more, sequential 0.030 ms "
				 "per 4 KiB, 32 reads)");
	assert_int_equal(n, (int)strlen(buf));
	assert_int_equal(sweep_device_explain(&fi, NULL, 0), n); /* the length it needs */
	fi.probe_flags = SWEEP_PROBE_CACHED;
	sweep_device_explain(&fi, buf, sizeof(buf));
	assert_non_null(strstr(buf, "32 reads, cached)"));
	fi.probe_flags = SWEEP_PROBE_BUSY;
	sweep_device_explain(&fi, buf, sizeof(buf));
	assert_non_null(strstr(buf, "32 reads, device busy)"));
	memset(&fi.probe_flags, 0, sizeof(fi) - offsetof(struct sweep_fsinfo, probe_flags));
	fi.device_class = SWEEP_DEVICE_SSD;
	fi.device_reason = SWEEP_DEVICE_BY_SYSFS;
	fi.probe_error = -EACCES;
	sweep_device_explain(&fi, buf, sizeof(buf));
	assert_string_equal(buf, "ssd (sysfs: sdb rotational=0; not probed: Permission denied)");
	fi.device_reason = SWEEP_DEVICE_BY_ENV;
	sweep_device_explain(&fi, buf, sizeof(buf));
	assert_string_equal(buf, "ssd (forced by SWEEP_DEVICE)");
	fi.device_reason = SWEEP_DEVICE_BY_CALLER;
	sweep_device_explain(&fi, buf, sizeof(buf));
	assert_string_equal(buf, "ssd (forced by the caller)");
	fi.device_reason = SWEEP_DEVICE_BY_NODEV;
	sweep_device_explain(&fi, buf, sizeof(buf));
	assert_string_equal(buf, "ssd (no block device under xfs)");
	assert_int_equal(sweep_device_explain(NULL, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(sweep_device_explain(&fi, NULL, 5), -EINVAL);
}

/* ---- the device profile: what each class does, decided in one place ---- */

static void clear_profile_env(void)
{
	unsetenv("SWEEP_WALK_THREADS");
	unsetenv("SWEEP_METASCAN");
	unsetenv("SWEEP_PREFETCH");
}

static void test_profile_classes(void **state)
{
	(void)state;
	struct sweep_profile p;
	clear_profile_env();

	/* A disk: physical order as far as the filesystem allows, metadata swept, a deep queue, data prefetched. */
	sweep__profile_decide(SWEEP_DEVICE_HDD, SWEEP_ORDER_PHYSICAL, &p);
	assert_int_equal(p.plan_order, SWEEP_ORDER_PHYSICAL);
	assert_int_equal(p.walk_order, SWEEP_ORDER_PHYSICAL);
	assert_int_equal(p.walk_threads, 0);
	assert_int_equal(p.metascan, SWEEP_PROFILE_META_HINTS | SWEEP_PROFILE_META_SWEEP);
	assert_int_equal(p.queue_depth, 128);
	assert_int_equal(p.ring_bytes, 16u << 20);
	assert_int_equal(p.prefetch, 1);
	assert_int_equal(p.env, 0);
	assert_true(p.stat_batch > 0);
	assert_int_equal(p.stat_uring, 1);
	sweep__profile_decide(SWEEP_DEVICE_HDD, SWEEP_ORDER_INODE, &p); /* squashfs: no locations */
	assert_int_equal(p.plan_order, SWEEP_ORDER_INODE);
	assert_int_equal(p.walk_order, SWEEP_ORDER_INODE);
	sweep__profile_decide(SWEEP_DEVICE_HDD, SWEEP_ORDER_NONE, &p); /* where sorting does not pay */
	assert_int_equal(p.plan_order, SWEEP_ORDER_NONE);
	assert_int_equal(p.walk_order, SWEEP_ORDER_NONE);

	/* Fast storage: no sort in the plan, the walk by inode on threads, a full queue, no prefetch. */
	sweep__profile_decide(SWEEP_DEVICE_SSD, SWEEP_ORDER_PHYSICAL, &p);
	assert_int_equal(p.plan_order, SWEEP_ORDER_NONE);
	assert_int_equal(p.walk_order, SWEEP_ORDER_INODE);
	assert_true(p.walk_threads >= 8 && p.walk_threads <= 16);
	assert_int_equal(p.metascan, SWEEP_PROFILE_META_HINTS);
	assert_int_equal(p.queue_depth, 64);
	assert_int_equal(p.ring_bytes, 64u << 20);
	assert_int_equal(p.prefetch, 0);
	sweep__profile_decide(SWEEP_DEVICE_SSD, SWEEP_ORDER_NONE, &p); /* tmpfs, NFS, FUSE: plain readdir order */
	assert_int_equal(p.walk_order, SWEEP_ORDER_NONE);

	/* Nothing known: inode order, a middle queue. */
	sweep__profile_unknown(&p);
	assert_int_equal(p.plan_order, SWEEP_ORDER_INODE);
	assert_int_equal(p.queue_depth, 32);
	assert_int_equal(p.prefetch, 0);
}

static void test_profile_env(void **state)
{
	(void)state;
	struct sweep_profile p;
	clear_profile_env();

	setenv("SWEEP_WALK_THREADS", "3", 1);
	sweep__profile_decide(SWEEP_DEVICE_HDD, SWEEP_ORDER_PHYSICAL, &p);
	assert_int_equal(p.walk_threads, 3);
	assert_int_equal(p.env, SWEEP_PROFILE_ENV_WALK_THREADS);
	setenv("SWEEP_WALK_THREADS", "1000", 1);
	sweep__profile_decide(SWEEP_DEVICE_SSD, SWEEP_ORDER_PHYSICAL, &p);
	assert_int_equal(p.walk_threads, 32);
	setenv("SWEEP_WALK_THREADS", "lots", 1); /* not a number: the class decides */
	sweep__profile_decide(SWEEP_DEVICE_HDD, SWEEP_ORDER_PHYSICAL, &p);
	assert_int_equal(p.walk_threads, 0);
	assert_int_equal(p.env, 0);
	unsetenv("SWEEP_WALK_THREADS");

	setenv("SWEEP_METASCAN", "off", 1);
	sweep__profile_decide(SWEEP_DEVICE_HDD, SWEEP_ORDER_PHYSICAL, &p);
	assert_int_equal(p.metascan, 0);
	assert_int_equal(p.env, SWEEP_PROFILE_ENV_METASCAN);
	setenv("SWEEP_METASCAN", "hdd", 1);
	sweep__profile_decide(SWEEP_DEVICE_SSD, SWEEP_ORDER_PHYSICAL, &p);
	assert_int_equal(p.metascan, 0);
	sweep__profile_decide(SWEEP_DEVICE_HDD, SWEEP_ORDER_PHYSICAL, &p);
	assert_int_equal(p.metascan, SWEEP_PROFILE_META_HINTS | SWEEP_PROFILE_META_SWEEP);
	setenv("SWEEP_METASCAN", "on", 1);
	sweep__profile_decide(SWEEP_DEVICE_SSD, SWEEP_ORDER_PHYSICAL, &p);
	assert_int_equal(p.metascan, SWEEP_PROFILE_META_HINTS | SWEEP_PROFILE_META_ALL);
	unsetenv("SWEEP_METASCAN");

	setenv("SWEEP_PREFETCH", "off", 1);
	sweep__profile_decide(SWEEP_DEVICE_HDD, SWEEP_ORDER_PHYSICAL, &p);
	assert_int_equal(p.prefetch, 0);
	assert_int_equal(p.env, SWEEP_PROFILE_ENV_PREFETCH);
	sweep__profile_decide(SWEEP_DEVICE_SSD, SWEEP_ORDER_PHYSICAL, &p); /* had none to turn off */
	assert_int_equal(p.env, 0);
	clear_profile_env();
}

/* fsinfo carries the profile of the class it got, and follows a class forced later (the cache). */
static void test_profile_fsinfo(void **state)
{
	(void)state;
	struct sweep_fsinfo fi = { .size = sizeof(fi) };
	struct sweep_profile want;
	clear_profile_env();
	unsetenv("SWEEP_DEVICE");

	assert_int_equal(sweep_device_force(SWEEP_DEVICE_HDD), 0);
	assert_int_equal(sweep_fsinfo_path("/", &fi), 0);
	sweep__profile_decide(SWEEP_DEVICE_HDD, fi.policy, &want);
	assert_memory_equal(&fi.profile, &want, sizeof(want));
	assert_int_equal(sweep_fsinfo_path("/proc", &fi), 0); /* a disk's class, but nothing there to sort */
	assert_int_equal(fi.profile.plan_order, SWEEP_ORDER_NONE);
	assert_int_equal(fi.profile.queue_depth, 128);

	struct sweep_fscache *c = sweep_fscache_new();
	int fd = open("/", O_PATH | O_CLOEXEC);
	struct stat st;
	const struct sweep_fsinfo *e;
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(sweep_fscache_get(c, st.st_dev, fd, &e), 0);
	assert_int_equal(e->profile.prefetch, 1);
	assert_int_equal(sweep_device_force(SWEEP_DEVICE_SSD), 0);
	assert_int_equal(sweep_fscache_get(c, st.st_dev, -1, &e), 0);
	assert_int_equal(e->profile.prefetch, 0);
	assert_int_equal(e->profile.plan_order, SWEEP_ORDER_NONE);
	assert_int_equal(sweep_device_force(SWEEP_DEVICE_AUTO), 0);
	close(fd);
	sweep_fscache_free(c);
}

static void test_profile_explain(void **state)
{
	(void)state;
	struct sweep_fsinfo fi = { .size = sizeof(fi) };
	char buf[256];
	clear_profile_env();

	sweep__profile_decide(SWEEP_DEVICE_HDD, SWEEP_ORDER_PHYSICAL, &fi.profile);
	int n = sweep_profile_explain(&fi, buf, sizeof(buf));
	assert_string_equal(buf, "plan physical, walk physical, no walk threads, stat 64 at once (io_uring when cold), "
				 "metascan hints+sweep, reader depth 128, ring 16 MiB, prefetch");
	assert_int_equal(n, (int)strlen(buf));
	assert_int_equal(sweep_profile_explain(&fi, NULL, 0), n);
	setenv("SWEEP_WALK_THREADS", "8", 1);
	setenv("SWEEP_METASCAN", "off", 1);
	sweep__profile_decide(SWEEP_DEVICE_SSD, SWEEP_ORDER_PHYSICAL, &fi.profile);
	sweep_profile_explain(&fi, buf, sizeof(buf));
	assert_string_equal(buf, "plan none, walk inode, 8 walk threads (environment), stat 64 at once (io_uring when cold), "
				 "metascan off (environment), reader depth 64, ring 64 MiB, no prefetch");
	clear_profile_env();
	assert_int_equal(sweep_profile_explain(NULL, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(sweep_profile_explain(&fi, NULL, 5), -EINVAL);
}

/* ---- following devices through a made-up sysfs ---- */

static char sysroot[64];

static void put(const char *rel, const char *content)
{
	fakesys_put(sysroot, rel, content);
}

static void link_to(const char *rel, const char *target_rel)
{
	fakesys_link(sysroot, rel, target_rel);
}

static void expect(unsigned maj, unsigned min, int rot, const char *disk1, const char *disk2)
{
	char disk[32] = "x";
	assert_int_equal(sweep__fsinfo_disk(makedev(maj, min), disk, sizeof(disk)), rot);
	if (!disk1)
		assert_string_equal(disk, "");
	else if (strcmp(disk, disk1) != 0)
		assert_string_equal(disk, disk2 ? disk2 : disk1);
}

/* The probe's early stop: only twelve uncontended reads whose lower quartile is clearly a disk's. */
static void test_probe_settled(void **state)
{
	(void)state;
	const uint64_t ms = 1000000;
	/* a 7200 rpm disk: seek plus part of a turn, 3-14 ms */
	uint64_t disk[12] = { 9 * ms, 4 * ms, 12 * ms, 3 * ms, 7 * ms, 14 * ms, 5 * ms, 8 * ms, 6 * ms, 11 * ms, 4 * ms, 10 * ms };
	assert_true(sweep__probe_settled(disk, 12, 20000, 0));
	/* not before twelve, nor after (the full count decides then) */
	assert_false(sweep__probe_settled(disk, 11, 20000, 0));
	/* reads queued behind others': the full count */
	assert_false(sweep__probe_settled(disk, 12, 20000, 1));
	/* three fast reads put the quartile under 2 ms */
	uint64_t mixed[12];
	memcpy(mixed, disk, sizeof(mixed));
	mixed[0] = mixed[5] = mixed[9] = ms / 2;
	assert_false(sweep__probe_settled(mixed, 12, 20000, 0));
	/* two do not */
	mixed[9] = 10 * ms;
	assert_true(sweep__probe_settled(mixed, 12, 20000, 0));
	/* a slow stream too (random reads under 8 times its 4 KiB): not settled */
	assert_false(sweep__probe_settled(disk, 12, 600000, 0));
	/* a fast device under load: 0.1-1.7 ms, never settles early */
	uint64_t busy[12] = { 100000, 1700000, 400000, 900000, 150000, 1200000, 300000, 500000, 1600000, 200000, 800000, 1100000 };
	assert_false(sweep__probe_settled(busy, 12, 2000, 0));
}

static void test_device_chain(void **state)
{
	(void)state;
	strcpy(sysroot, "/tmp/sweep-test-sysfs.XXXXXX");
	assert_non_null(mkdtemp(sysroot));
	/* sda rotational with partition sda1; sdb and nvme0n1 not */
	put("devices/pci/block/sda/queue/rotational", "1\n");
	put("devices/pci/block/sda/sda1/partition", "1\n");
	put("devices/pci/block/sdb/queue/rotational", "0\n");
	put("devices/pci/block/nvme0n1/queue/rotational", "0\n");
	link_to("dev/block/8:0", "devices/pci/block/sda");
	link_to("dev/block/8:1", "devices/pci/block/sda/sda1");
	link_to("dev/block/8:16", "devices/pci/block/sdb");
	/* dm-0 over two SSDs; dm-1 over an SSD and a partition of the HDD. dm queues say 0 themselves. */
	put("devices/virtual/block/dm-0/queue/rotational", "0\n");
	link_to("devices/virtual/block/dm-0/slaves/sdb", "devices/pci/block/sdb");
	link_to("devices/virtual/block/dm-0/slaves/nvme0n1", "devices/pci/block/nvme0n1");
	link_to("dev/block/253:0", "devices/virtual/block/dm-0");
	put("devices/virtual/block/dm-1/queue/rotational", "0\n");
	link_to("devices/virtual/block/dm-1/slaves/nvme0n1", "devices/pci/block/nvme0n1");
	link_to("devices/virtual/block/dm-1/slaves/sda1", "devices/pci/block/sda/sda1");
	link_to("dev/block/253:1", "devices/virtual/block/dm-1");
	/* a disk whose queue says nothing */
	put("devices/virtual/block/odd/size", "0\n");
	link_to("dev/block/7:99", "devices/virtual/block/odd");

	sweep__fsinfo_set_sysroot(sysroot);
	expect(8, 0, 1, "sda", NULL);
	expect(8, 1, 1, "sda", NULL);    /* partition -> its disk */
	expect(8, 16, 0, "sdb", NULL);
	expect(253, 0, 0, "sdb", "nvme0n1"); /* dm: the slaves, not dm's own queue */
	expect(253, 1, 1, "nvme0n1", "sda"); /* rotational when any slave is */
	expect(9, 9, -1, NULL, NULL);    /* no such device */
	expect(7, 99, -1, NULL, NULL);   /* no queue/rotational */

	/* loop0 backed by a file whose device is sdb (per this sysfs): rotational as sdb */
	char backing[128];
	snprintf(backing, sizeof(backing), "%s/backing.img", sysroot);
	put("backing.img", "");
	struct stat st;
	assert_int_equal(stat(backing, &st), 0);
	if (major(st.st_dev) != 0) {
		char rel[64], content[200];
		snprintf(rel, sizeof(rel), "dev/block/%u:%u", major(st.st_dev), minor(st.st_dev));
		link_to(rel, "devices/pci/block/sdb");
		snprintf(content, sizeof(content), "%s\n", backing);
		put("devices/virtual/block/loop0/loop/backing_file", content);
		put("devices/virtual/block/loop0/queue/rotational", "1\n");
		link_to("dev/block/7:0", "devices/virtual/block/loop0");
		expect(7, 0, 0, "sdb", NULL);
		/* and backed by a file that is gone: unknown */
		snprintf(content, sizeof(content), "%s/gone.img (deleted)\n", sysroot);
		put("devices/virtual/block/loop1/loop/backing_file", content);
		put("devices/virtual/block/loop1/queue/rotational", "1\n");
		link_to("dev/block/7:1", "devices/virtual/block/loop1");
		expect(7, 1, -1, NULL, NULL);
	}
	/*
	 * No device node to time (no uevent here): the flag decides, or with no
	 * flag the safe guess, and the reason says so.
	 */
	struct sweep_fsinfo fi = { .size = sizeof(fi) };
	unsetenv("SWEEP_DEVICE");
	unsigned probes = sweep__device_probes();
	sweep__device_decide(makedev(8, 1), 1, &fi);
	assert_int_equal(fi.device_class, SWEEP_DEVICE_HDD);
	assert_int_equal(fi.device_reason, SWEEP_DEVICE_BY_SYSFS);
	assert_int_equal(fi.probe_error, -ENODEV);
	assert_string_equal(fi.device_name, "sda1");
	sweep__device_decide(makedev(8, 16), 0, &fi);
	assert_int_equal(fi.device_class, SWEEP_DEVICE_SSD);
	assert_int_equal(fi.device_reason, SWEEP_DEVICE_BY_SYSFS);
	sweep__device_decide(makedev(7, 99), -1, &fi);
	assert_int_equal(fi.device_class, SWEEP_DEVICE_HDD);
	assert_int_equal(fi.device_reason, SWEEP_DEVICE_BY_DEFAULT);
	assert_string_equal(fi.device_name, "odd");
	sweep__device_decide(0, -1, &fi);
	assert_int_equal(fi.device_class, SWEEP_DEVICE_SSD);
	assert_int_equal(fi.device_reason, SWEEP_DEVICE_BY_NODEV);
	assert_string_equal(fi.device_name, "");
	assert_int_equal(sweep__device_probes(), probes);

	/*
	 * The one block-device opener takes the node's name from this sysfs
	 * too, and opens only that very block device: a name that is no
	 * block device, one outside /dev, or none at all, is -ENODEV.
	 */
	put("devices/virtual/block/odd/uevent", "MAJOR=7\nMINOR=99\nDEVNAME=null\n");
	assert_int_equal(sweep__bdev_open(makedev(7, 99), O_RDONLY), -ENODEV);
	put("devices/virtual/block/odd/uevent", "MAJOR=7\nMINOR=99\nDEVNAME=../etc/passwd\n");
	assert_int_equal(sweep__bdev_open(makedev(7, 99), O_RDONLY), -ENODEV);
	assert_int_equal(sweep__bdev_open(makedev(8, 1), O_RDONLY), -ENODEV); /* no uevent: not named */
	assert_int_equal(sweep__bdev_open(makedev(0, 40), O_RDONLY), -ENODEV); /* anonymous */

	sweep__fsinfo_set_sysroot(NULL);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", sysroot);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	skip_unless_backend_usable();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy_table), cmocka_unit_test(test_real), cmocka_unit_test(test_mountinfo), cmocka_unit_test(test_errors),
		cmocka_unit_test(test_cache), cmocka_unit_test(test_names), cmocka_unit_test(test_device_chain),
		cmocka_unit_test(test_probe_settled),
		cmocka_unit_test(test_size_rule), cmocka_unit_test(test_device_names),
		cmocka_unit_test(test_device_override), cmocka_unit_test(test_device_explain),
		cmocka_unit_test(test_profile_classes), cmocka_unit_test(test_profile_env),
		cmocka_unit_test(test_profile_fsinfo), cmocka_unit_test(test_profile_explain),
	};
	/* Probes of this machine's disks stay in this process, not in /run. */
	sweep__device_set_cache_dir("");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
