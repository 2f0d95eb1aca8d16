/* SPDX-License-Identifier: MIT */
/*
 * The device map (lib/device/devmap*.c) through a made-up sysfs tree: this
 * machine has no md and no device-mapper, so md arrays and dm tables are
 * only ever checked here, against what the kernel's sysfs and `dmsetup
 * table` show (Documentation/admin-guide/md.rst; dm tables as the kernel
 * prints them, MAJ:MIN devices, 512-byte sectors). Real btrfs and loop
 * devices are tests/multidisk/btrfs-map.sh's.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "../common/fakesys.h"

#include "device.h"

#define GiB (1ull << 30)
#define MiB (1ull << 20)

static char sysroot[64];

static void put(const char *rel, const char *content)
{
	fakesys_put(sysroot, rel, content);
}

static void link_to(const char *rel, const char *target_rel)
{
	fakesys_link(sysroot, rel, target_rel);
}

/* A whole disk: devices/pci/block/NAME, MAJ:MIN, size in sectors. */
static void disk(const char *name, unsigned maj, unsigned min, unsigned long long sectors)
{
	char rel[256], num[64], dev[64];
	snprintf(rel, sizeof(rel), "devices/pci/block/%s/size", name);
	snprintf(num, sizeof(num), "%llu\n", sectors);
	put(rel, num);
	snprintf(rel, sizeof(rel), "devices/pci/block/%s/queue/rotational", name);
	put(rel, "1\n");
	snprintf(rel, sizeof(rel), "devices/pci/block/%s/dev", name);
	snprintf(dev, sizeof(dev), "%u:%u\n", maj, min);
	put(rel, dev);
	snprintf(rel, sizeof(rel), "dev/block/%u:%u", maj, min);
	char target[256];
	snprintf(target, sizeof(target), "devices/pci/block/%s", name);
	link_to(rel, target);
}

static void partition(const char *disk_name, const char *name, unsigned maj, unsigned min, unsigned long long start,
		      unsigned long long sectors)
{
	char rel[256], num[64], target[256];
	snprintf(rel, sizeof(rel), "devices/pci/block/%s/%s/partition", disk_name, name);
	put(rel, "1\n");
	snprintf(rel, sizeof(rel), "devices/pci/block/%s/%s/start", disk_name, name);
	snprintf(num, sizeof(num), "%llu\n", start);
	put(rel, num);
	snprintf(rel, sizeof(rel), "devices/pci/block/%s/%s/size", disk_name, name);
	snprintf(num, sizeof(num), "%llu\n", sectors);
	put(rel, num);
	snprintf(rel, sizeof(rel), "dev/block/%u:%u", maj, min);
	snprintf(target, sizeof(target), "devices/pci/block/%s/%s", disk_name, name);
	link_to(rel, target);
}

/* The sysfs directory (relative) of a disk or partition by name. */
static const char *where(const char *name)
{
	static char buf[4][128];
	static int k;
	char *b = buf[k++ % 4];
	if (strlen(name) == 4 && name[0] == 's') /* sdb1 */
		snprintf(b, 128, "devices/pci/block/%.3s/%s", name, name);
	else
		snprintf(b, 128, "devices/pci/block/%s", name);
	return b;
}

/* A virtual block device (md, dm, loop) with its slaves. */
static void virt(const char *name, unsigned maj, unsigned min, unsigned long long sectors, const char *const *slaves)
{
	char rel[256], num[64], target[256];
	snprintf(rel, sizeof(rel), "devices/virtual/block/%s/size", name);
	snprintf(num, sizeof(num), "%llu\n", sectors);
	put(rel, num);
	snprintf(rel, sizeof(rel), "devices/virtual/block/%s/dev", name);
	snprintf(num, sizeof(num), "%u:%u\n", maj, min);
	put(rel, num);
	snprintf(rel, sizeof(rel), "dev/block/%u:%u", maj, min);
	snprintf(target, sizeof(target), "devices/virtual/block/%s", name);
	link_to(rel, target);
	for (size_t i = 0; slaves && slaves[i]; i++) {
		snprintf(rel, sizeof(rel), "devices/virtual/block/%s/slaves/%s", name, slaves[i]);
		link_to(rel, where(slaves[i]));
	}
}

/* md member NAME of array MD: slot (-1: a spare), data offset (sectors), size (KiB). */
static void md_member(const char *md, const char *name, int slot, unsigned long long offset, unsigned long long kib)
{
	char rel[256], num[64];
	snprintf(rel, sizeof(rel), "devices/virtual/block/%s/md/dev-%s/slot", md, name);
	if (slot < 0)
		put(rel, "none\n");
	else {
		snprintf(num, sizeof(num), "%d\n", slot);
		put(rel, num);
	}
	snprintf(rel, sizeof(rel), "devices/virtual/block/%s/md/dev-%s/offset", md, name);
	snprintf(num, sizeof(num), "%llu\n", offset);
	put(rel, num);
	snprintf(rel, sizeof(rel), "devices/virtual/block/%s/md/dev-%s/size", md, name);
	snprintf(num, sizeof(num), "%llu\n", kib);
	put(rel, num);
	snprintf(rel, sizeof(rel), "devices/virtual/block/%s/md/dev-%s/block", md, name);
	link_to(rel, where(name));
}

static void md_level(const char *md, const char *level)
{
	char rel[256], text[64];
	snprintf(rel, sizeof(rel), "devices/virtual/block/%s/md/level", md);
	snprintf(text, sizeof(text), "%s\n", level);
	put(rel, text);
}

static void dm_table(const char *dm, const char *table)
{
	char rel[256];
	snprintf(rel, sizeof(rel), "devices/virtual/block/%s/dm/name", dm);
	put(rel, "vg-lv\n");
	if (table) {
		snprintf(rel, sizeof(rel), "devices/virtual/block/%s/dm/table", dm);
		put(rel, table);
	}
}

static int setup(void **state)
{
	(void)state;
	strcpy(sysroot, "/tmp/sweep-test-devmap.XXXXXX");
	if (!mkdtemp(sysroot))
		return -1;
	disk("sda", 8, 0, 4194304);
	partition("sda", "sda1", 8, 1, 2048, 1048576);
	partition("sda", "sda2", 8, 2, 1050624, 1048576);
	disk("sdb", 8, 16, 8388608);
	partition("sdb", "sdb1", 8, 17, 2048, 4194304);
	partition("sdb", "sdb2", 8, 18, 4196352, 4192256);
	disk("sdc", 8, 32, 8388608);
	partition("sdc", "sdc1", 8, 33, 2048, 4194304);
	disk("sdd", 8, 48, 2097152);
	disk("sde", 8, 64, 4194304);
	disk("sdf", 8, 80, 4194304);
	disk("sdg", 8, 96, 4194304);
	disk("sdh", 8, 112, 4194304);
	partition("sdh", "sdh1", 8, 113, 4096, 4190208);
	disk("sdi", 8, 128, 8388608);

	/* md0: raid0 over sdb1 and sdc1; md3: raid5 over sdb2 and sdi, sharing sdb with md0. */
	static const char *const md0s[] = { "sdb1", "sdc1", NULL }, *const md3s[] = { "sdb2", "sdi", NULL };
	virt("md0", 9, 0, 8384512, md0s);
	md_level("md0", "raid0");
	md_member("md0", "sdb1", 0, 2048, 2096128);
	md_member("md0", "sdc1", 1, 2048, 2096128);
	virt("md3", 9, 3, 8380416, md3s);
	md_level("md3", "raid5");
	md_member("md3", "sdb2", 0, 2048, 2094080);
	md_member("md3", "sdi", 1, 2048, 4192256);
	/* md1: linear, sdd (1 GiB from its start) then sde (1 GiB from 1 MiB in); slots given in reverse dir order. */
	static const char *const md1s[] = { "sdd", "sde", NULL };
	virt("md1", 9, 1, 4194304, md1s);
	md_level("md1", "linear");
	md_member("md1", "sde", 1, 2048, 1048576);
	md_member("md1", "sdd", 0, 0, 1048576);
	/* md2: raid1 over sdf and sdg, sdh a spare. */
	static const char *const md2s[] = { "sdf", "sdg", "sdh", NULL };
	virt("md2", 9, 2, 4194304, md2s);
	md_level("md2", "raid1");
	md_member("md2", "sdf", 0, 2048, 2096128);
	md_member("md2", "sdg", 1, 2048, 2096128);
	md_member("md2", "sdh", -1, 2048, 2096128);
	/* md4: a level not followed. */
	static const char *const md4s[] = { "sda2", NULL };
	virt("md4", 9, 4, 1000, md4s);
	md_level("md4", "multipath");
	md_member("md4", "sda2", 0, 0, 500);

	/* dm-0: LVM, two linear segments: the first GiB on sdd, the second on sde from 1 MiB in. */
	static const char *const dm0s[] = { "sdd", "sde", NULL };
	virt("dm-0", 253, 0, 4194304, dm0s);
	dm_table("dm-0", "0 2097152 linear 8:48 0\n2097152 2097152 linear 8:64 2048\n");
	/* dm-1: LUKS over sdh1, payload 16 MiB in. */
	static const char *const dm1s[] = { "sdh1", NULL };
	virt("dm-1", 253, 1, 4157440, dm1s);
	dm_table("dm-1", "0 4157440 crypt aes-xts-plain64 :64:logon:cryptsetup:0123 0 8:113 32768\n");
	/* dm-2: striped over sdf and sdg. */
	static const char *const dm2s[] = { "sdf", "sdg", NULL };
	virt("dm-2", 253, 2, 8388608, dm2s);
	dm_table("dm-2", "0 8388608 striped 2 128 8:80 0 8:96 0\n");
	/* dm-3: a thin volume: not followed. */
	static const char *const dm3s[] = { "sdi", NULL };
	virt("dm-3", 253, 3, 1000, dm3s);
	dm_table("dm-3", "0 1000 thin 253:9 1\n");
	/* dm-4: its table cannot be read (as without CAP_SYS_ADMIN). */
	static const char *const dm4s[] = { "sda1", NULL };
	virt("dm-4", 253, 4, 1000, dm4s);
	dm_table("dm-4", NULL);
	/* dm-5: LVM on the linear md1, from 2 MiB in; dm-6: a garbled table. */
	static const char *const dm5s[] = { "md1", NULL };
	virt("dm-5", 253, 5, 4190208, NULL);
	link_to("devices/virtual/block/dm-5/slaves/md1", "devices/virtual/block/md1");
	dm_table("dm-5", "0 4190208 linear 9:1 4096\n");
	(void)dm5s;
	static const char *const dm6s[] = { "sdd", NULL };
	virt("dm-6", 253, 6, 2000, dm6s);
	dm_table("dm-6", "0 1000 linear 8:48 0\nnonsense\n");

	/* loop1: its file is gone: the loop device is its own disk. */
	virt("loop1", 7, 1, 2048, NULL);
	char text[256];
	snprintf(text, sizeof(text), "%s/gone.img (deleted)\n", sysroot);
	put("devices/virtual/block/loop1/loop/backing_file", text);
	sweep__fsinfo_set_sysroot(sysroot);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];
	(void)state;
	sweep__fsinfo_set_sysroot(NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", sysroot);
	return system(cmd) == 0 ? 0 : -1;
}

struct ctx {
	struct sweep__spindles *s;
};

static struct sweep__devmap *map_of(struct sweep__spindles *s, unsigned maj, unsigned min)
{
	struct sweep__devmap *m = NULL;
	assert_int_equal(sweep__devmap_new_bdev(s, makedev(maj, min), &m), 0);
	assert_non_null(m);
	return m;
}

/* addr of the filesystem on map m lies on spindle name at offset off. */
static void at(struct sweep__spindles *s, const struct sweep__devmap *m, uint64_t addr, const char *name, uint64_t off)
{
	uint32_t sp;
	uint64_t o;
	sweep__devmap_locate(m, addr, &sp, &o);
	if (strcmp(sweep__spindle_name(s, sp), name) != 0 || o != off)
		fail_msg("address %llu: %s at %llu, want %s at %llu", (unsigned long long)addr, sweep__spindle_name(s, sp),
			 (unsigned long long)o, name, (unsigned long long)off);
}

static uint32_t id_of(struct sweep__spindles *s, const char *name)
{
	for (uint32_t i = 0; i < sweep__spindles_count(s); i++)
		if (!strcmp(sweep__spindle_name(s, i), name))
			return i;
	fail_msg("no spindle %s", name);
	return 0;
}

static void test_partitions(void **state)
{
	(void)state;
	struct sweep__spindles *s = sweep__spindles_new();
	struct sweep__devmap *a1 = map_of(s, 8, 1), *a2 = map_of(s, 8, 2), *d = map_of(s, 8, 48);
	/* A partition's addresses are its disk's, from where it starts: two partitions, one disk, one sweep. */
	at(s, a1, 0, "sda", 2048 * 512);
	at(s, a1, 4096, "sda", 2048 * 512 + 4096);
	at(s, a2, 0, "sda", 1050624ull * 512);
	assert_int_equal(sweep__devmap_home(a1), sweep__devmap_home(a2));
	assert_int_equal(sweep__devmap_spindles(a1), 1);
	assert_string_equal(sweep__devmap_note(a1), "");
	assert_int_equal(sweep__spindle_kind(s, id_of(s, "sda")), SWEEP__SPINDLE_DISK);
	at(s, d, 12345, "sdd", 12345);
	/* sda and sdd share nothing: two groups. */
	uint32_t g[8];
	assert_int_equal(sweep__spindles_groups(s, NULL, g), 0);
	assert_int_not_equal(g[id_of(s, "sda")], g[id_of(s, "sdd")]);
	sweep__devmap_free(a1);
	sweep__devmap_free(a2);
	sweep__devmap_free(d);
	sweep__spindles_free(s);
}

static void test_md(void **state)
{
	(void)state;
	struct sweep__spindles *s = sweep__spindles_new();
	struct sweep__devmap *m0 = map_of(s, 9, 0), *m1 = map_of(s, 9, 1), *m2 = map_of(s, 9, 2), *m3 = map_of(s, 9, 3),
			     *m4 = map_of(s, 9, 4);
	/* raid0: one sweep in the array's order, as deep as its two members. */
	at(s, m0, 5 * MiB, "md0", 5 * MiB);
	uint32_t md0 = id_of(s, "md0");
	assert_int_equal(sweep__spindle_kind(s, md0), SWEEP__SPINDLE_STRIPED);
	assert_int_equal(sweep__spindle_members(s, md0), 2);
	/* linear: the members one after another, by slot, each from its data offset. */
	at(s, m1, 0, "sdd", 0);
	at(s, m1, GiB - 1, "sdd", GiB - 1);
	at(s, m1, GiB, "sde", 2048 * 512);
	at(s, m1, GiB + 7, "sde", 2048 * 512 + 7);
	assert_int_equal(sweep__devmap_spindles(m1), 2);
	/* raid1: its active members together, the spare not among them. */
	uint32_t md2 = id_of(s, "md2");
	at(s, m2, 100, "md2", 100);
	assert_int_equal(sweep__spindle_kind(s, md2), SWEEP__SPINDLE_MIRRORED);
	assert_int_equal(sweep__spindle_members(s, md2), 2);
	/* raid5 sharing sdb with md0; multipath not followed. */
	at(s, m3, 0, "md3", 0);
	at(s, m4, 10, "md4", 10);
	assert_int_equal(sweep__spindle_kind(s, id_of(s, "md4")), SWEEP__SPINDLE_OPAQUE);
	assert_non_null(strstr(sweep__devmap_note(m4), "multipath"));

	/* Groups: md0 and md3 share sdb; md2 stands alone; sdd and sde (md1) each alone. */
	size_t n = sweep__spindles_count(s);
	uint32_t *g = calloc(n, sizeof(*g));
	unsigned char *used = calloc(n, 1);
	assert_int_equal(sweep__spindles_groups(s, NULL, g), 0);
	assert_int_equal(g[id_of(s, "md3")], g[md0]);
	assert_int_not_equal(g[md2], g[md0]);
	assert_int_not_equal(g[id_of(s, "sdd")], g[id_of(s, "sde")]);
	/* Only the spindles a batch reads count: md2 shares no disk, md0 alone is its own group. */
	used[md0] = used[md2] = 1;
	assert_int_equal(sweep__spindles_groups(s, used, g), 0);
	assert_int_equal(g[md0], md0);
	assert_int_equal(g[md2], md2);
	free(g);
	free(used);
	sweep__devmap_free(m0);
	sweep__devmap_free(m1);
	sweep__devmap_free(m2);
	sweep__devmap_free(m3);
	sweep__devmap_free(m4);
	sweep__spindles_free(s);
}

static void test_dm(void **state)
{
	(void)state;
	struct sweep__spindles *s = sweep__spindles_new();
	struct sweep__devmap *d0 = map_of(s, 253, 0), *d1 = map_of(s, 253, 1), *d2 = map_of(s, 253, 2),
			     *d3 = map_of(s, 253, 3), *d4 = map_of(s, 253, 4), *d5 = map_of(s, 253, 5),
			     *d6 = map_of(s, 253, 6);
	/* linear segments: each on its own disk, from its offset. */
	at(s, d0, 0, "sdd", 0);
	at(s, d0, GiB - 512, "sdd", GiB - 512);
	at(s, d0, GiB, "sde", MiB);
	at(s, d0, GiB + 4096, "sde", MiB + 4096);
	assert_int_equal(sweep__devmap_spindles(d0), 2);
	assert_string_equal(sweep__devmap_note(d0), "");
	/* crypt: one to one onto the partition below, and through it the disk. */
	at(s, d1, 0, "sdh", (4096 + 32768) * 512ull);
	/* striped: one sweep over both, as deep as two. */
	at(s, d2, 77, "dm-2", 77);
	assert_int_equal(sweep__spindle_kind(s, id_of(s, "dm-2")), SWEEP__SPINDLE_STRIPED);
	assert_int_equal(sweep__spindle_members(s, id_of(s, "dm-2")), 2);
	/* thin, an unreadable table, a garbled one: opaque, and said why. */
	at(s, d3, 5, "dm-3", 5);
	assert_non_null(strstr(sweep__devmap_note(d3), "thin"));
	at(s, d4, 5, "dm-4", 5);
	assert_non_null(strstr(sweep__devmap_note(d4), "not readable"));
	at(s, d6, 5, "dm-6", 5);
	assert_int_equal(sweep__devmap_spindles(d6), 1); /* the line understood before the garbled one is undone */
	assert_non_null(strstr(sweep__devmap_note(d6), "not understood"));
	/* LVM on a linear md: through both, to the disks. */
	at(s, d5, 0, "sdd", 4096 * 512ull);
	at(s, d5, GiB - 4096 * 512ull, "sde", 2048 * 512ull);
	/* Groups: dm-2 (sdf, sdg) and md... none here; dm-4 opaque over sda1 shares sda with nothing used. */
	size_t n = sweep__spindles_count(s);
	uint32_t *g = calloc(n, sizeof(*g));
	assert_int_equal(sweep__spindles_groups(s, NULL, g), 0);
	assert_int_not_equal(g[id_of(s, "sdd")], g[id_of(s, "sde")]);
	assert_int_equal(g[id_of(s, "dm-6")], g[id_of(s, "sdd")]); /* the opaque dm-6 is over sdd */
	assert_int_equal(g[id_of(s, "dm-3")], g[id_of(s, "dm-3")]);
	free(g);
	sweep__devmap_free(d0);
	sweep__devmap_free(d1);
	sweep__devmap_free(d2);
	sweep__devmap_free(d3);
	sweep__devmap_free(d4);
	sweep__devmap_free(d5);
	sweep__devmap_free(d6);
	sweep__spindles_free(s);
}

static void test_loop_and_unknown(void **state)
{
	(void)state;
	struct sweep__spindles *s = sweep__spindles_new();
	/* A loop device whose file is gone: itself. */
	struct sweep__devmap *l = map_of(s, 7, 1);
	at(s, l, 4096, "loop1", 4096);
	assert_int_equal(sweep__spindle_kind(s, id_of(s, "loop1")), SWEEP__SPINDLE_DISK);
	/* A device sysfs does not know: opaque, said why. */
	struct sweep__devmap *u = map_of(s, 99, 99);
	at(s, u, 10, "dev-99-99", 10);
	assert_non_null(strstr(sweep__devmap_note(u), "not in sysfs"));

	/* A loop device over a file of a disk (by this sysfs): that disk, from where the file starts. */
	char backing[128];
	struct stat st;
	snprintf(backing, sizeof(backing), "%s/backing.img", sysroot);
	int fd = open(backing, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	char block[8192];
	memset(block, 'x', sizeof(block));
	assert_int_equal(write(fd, block, sizeof(block)), (ssize_t)sizeof(block));
	assert_int_equal(fsync(fd), 0);
	close(fd);
	assert_int_equal(stat(backing, &st), 0);
	char taken[256];
	snprintf(taken, sizeof(taken), "%s/dev/block/%u:%u", sysroot, major(st.st_dev), minor(st.st_dev));
	/* Where this filesystem's own device number is one the made-up tree uses already, that part cannot be. */
	if (major(st.st_dev) != 0 && access(taken, F_OK) != 0) {
		char rel[64], text[200];
		uint64_t first = 0;
		fd = open(backing, O_RDONLY | O_CLOEXEC);
		if (sweep_extent_first(fd, &first) < 0)
			first = 0;
		close(fd);
		snprintf(rel, sizeof(rel), "dev/block/%u:%u", major(st.st_dev), minor(st.st_dev));
		link_to(rel, "devices/pci/block/sdg");
		virt("loop0", 7, 0, 16, NULL);
		snprintf(text, sizeof(text), "%s\n", backing);
		put("devices/virtual/block/loop0/loop/backing_file", text);
		put("devices/virtual/block/loop0/loop/offset", "512\n");
		struct sweep__devmap *b = map_of(s, 7, 0);
		at(s, b, 100, "sdg", first + 512 + 100);
		sweep__devmap_free(b);
	}
	sweep__devmap_free(l);
	sweep__devmap_free(u);
	sweep__spindles_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_partitions),
		cmocka_unit_test(test_md),
		cmocka_unit_test(test_dm),
		cmocka_unit_test(test_loop_and_unknown),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
