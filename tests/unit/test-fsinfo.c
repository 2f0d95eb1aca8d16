/* SPDX-License-Identifier: MIT */
/* fsinfo: the policy table, real filesystems under /, /proc and /tmp, the per-device cache. */
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
#include <unistd.h>
#include <cmocka.h>

#include "internal.h"

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
	struct sweep_fsinfo fi;
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
	struct sweep_fsinfo fi2;
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
	struct sweep_fsinfo fi;
	assert_int_equal(sweep_fsinfo_path("/proc", &fi), 0);
	assert_string_equal(fi.fs_name, "proc");
	assert_int_equal(fi.policy, SWEEP_ORDER_NONE);
	assert_int_equal(fi.rotational, -1);
	assert_string_equal(fi.disk, "");
}

static void test_errors(void **state)
{
	(void)state;
	struct sweep_fsinfo fi;
	memset(&fi, 0x5a, sizeof(fi));
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy_table), cmocka_unit_test(test_real), cmocka_unit_test(test_errors),
		cmocka_unit_test(test_cache), cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
