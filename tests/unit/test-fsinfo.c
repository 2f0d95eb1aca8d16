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
#include <sys/sysmacros.h>
#include <unistd.h>
#include <cmocka.h>

#include "internal.h"
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

/* ---- following devices through a made-up sysfs ---- */

static char sysroot[64];

static void put(const char *rel, const char *content)
{
	char p[512], cmd[600];
	snprintf(p, sizeof(p), "%s/%s", sysroot, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", p);
	assert_int_equal(system(cmd), 0);
	FILE *f = fopen(p, "we");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

static void link_to(const char *rel, const char *target_rel)
{
	char p[512], t[512], cmd[600];
	snprintf(p, sizeof(p), "%s/%s", sysroot, rel);
	snprintf(t, sizeof(t), "%s/%s", sysroot, target_rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", p);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(symlink(t, p), 0);
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
	sweep__fsinfo_set_sysroot(NULL);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", sysroot);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	skip_unless_backend_usable();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy_table), cmocka_unit_test(test_real), cmocka_unit_test(test_errors),
		cmocka_unit_test(test_cache), cmocka_unit_test(test_names), cmocka_unit_test(test_device_chain),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
