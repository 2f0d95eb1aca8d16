/* SPDX-License-Identifier: MIT */
/*
 * lib/metascan on crafted images (in a memfd, opened with
 * sweep__metascan_open_dev): a small ext4 and a small xfs built byte by byte
 * here, with one inode of every mapping class, then every kind of damage a
 * corrupt or hostile image may carry. Each must give -EUCLEAN/-EBADMSG/
 * -EOPNOTSUPP at open, or an invalid hint saying why, or a valid hint
 * without a location: never a crash, an out-of-bounds read (the ASan build
 * runs this too) or a hint beyond what a valid inode could hold. Then a few
 * thousand seeded random byte flips over the metadata of both images.
 * Also: CRC32C and CRC16 against their published check values.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "metascan.h"
#include "images.h"

/* Open a copy of the image (of `len` bytes, which may be shorter) through a memfd. */
static int img_open(const struct img *m, size_t len, unsigned flags, struct sweep__metascan **ret)
{
	int fd = memfd_create("metascan-test", MFD_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, m->b, len), (ssize_t)len);
	int r = sweep__metascan_open_dev(fd, flags, ret);
	close(fd);
	return r;
}

/* What every hint must satisfy, whatever the image (the scan-tree check, in short). */
static void assert_sane(const struct sweep__inode_hint *h, uint64_t dev_size, unsigned bs)
{
	bool valid = h->flags & SWEEP__HINT_VALID, phys = h->flags & SWEEP__HINT_PHYS;
	assert_true(valid == (h->why == SWEEP__HINT_OK));
	assert_true(h->why <= SWEEP__HINT_EIO);
	if (!valid)
		assert_false(h->flags & (SWEEP__HINT_PHYS | SWEEP__HINT_ONE_EXTENT));
	if (valid) {
		assert_true(h->size <= (uint64_t)INT64_MAX);
		assert_true(S_ISREG(h->mode) || S_ISDIR(h->mode) || S_ISLNK(h->mode) || S_ISCHR(h->mode) ||
			    S_ISBLK(h->mode) || S_ISFIFO(h->mode) || S_ISSOCK(h->mode));
	}
	if (phys && h->phys != SWEEP_NO_PHYS) {
		assert_true(h->phys % bs == 0 && h->phys_len > 0 && h->phys_len % bs == 0);
		assert_true(h->phys_len <= dev_size && h->phys <= dev_size - h->phys_len);
	} else {
		assert_int_equal(h->phys, SWEEP_NO_PHYS);
		assert_int_equal(h->phys_len, 0);
	}
}

static struct sweep__metascan *open_as(const struct img *m, const char *fstype)
{
	struct sweep__metascan *s = NULL;
	assert_int_equal(img_open(m, m->size, 0, &s), 0);
	assert_string_equal(sweep__metascan_fstype(s), fstype);
	assert_int_equal(sweep__metascan_block_size(s), 4096);
	return s;
}
#define e_open(m) open_as(m, "ext4")
#define x_open(m) open_as(m, "xfs")

/* Hints for one inode. */
static struct sweep__inode_hint hint1(struct sweep__metascan *s, uint64_t ino)
{
	struct sweep__inode_hint h;
	assert_true(sweep__metascan_inodes(s, &ino, 1, &h) >= 0);
	assert_int_equal(h.ino, ino);
	assert_sane(&h, s->dev_size, sweep__metascan_block_size(s));
	return h;
}

static void assert_located(const struct sweep__inode_hint *h, uint64_t block, uint64_t blocks, unsigned bs)
{
	assert_true(h->flags & SWEEP__HINT_VALID);
	assert_true(h->flags & SWEEP__HINT_PHYS);
	assert_int_equal(h->phys, block * bs);
	assert_int_equal(h->phys_len, blocks * bs);
}

static void assert_no_location(const struct sweep__inode_hint *h)
{
	assert_true(h->flags & SWEEP__HINT_VALID);
	assert_true(h->flags & SWEEP__HINT_PHYS);
	assert_int_equal(h->phys, SWEEP_NO_PHYS);
}

static void assert_unknown_location(const struct sweep__inode_hint *h)
{
	assert_true(h->flags & SWEEP__HINT_VALID);
	assert_false(h->flags & SWEEP__HINT_PHYS);
}

static void assert_invalid(const struct sweep__inode_hint *h, int why)
{
	assert_false(h->flags & SWEEP__HINT_VALID);
	assert_int_equal(h->why, why);
}

static void expect_invalid(struct sweep__metascan *s, uint64_t ino, int why)
{
	struct sweep__inode_hint h = hint1(s, ino);
	assert_invalid(&h, why);
}

static void expect_unknown(struct sweep__metascan *s, uint64_t ino)
{
	struct sweep__inode_hint h = hint1(s, ino);
	assert_unknown_location(&h);
}

static void test_crc(void **state)
{
	(void)state;
	const char *check = "123456789";
	assert_int_equal(~sweep__crc32c(~0u, check, 9), 0xE3069283u);   /* CRC-32C check value */
	assert_int_equal(sweep__crc16(0, check, 9), 0xBB3D);              /* CRC-16/ARC check value */
	uint8_t buf[300];
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 37 + 11);
	for (size_t off = 0; off < 9; off++)
		for (size_t len = 0; len + off <= sizeof(buf); len += 7)
			assert_int_equal(sweep__crc32c(0x1234567u, buf + off, len), sweep__crc32c_sw(0x1234567u, buf + off, len));
}

static void test_ext4_classes(void **state)
{
	(void)state;
	struct img m = ext4_image();
	struct sweep__metascan *s = e_open(&m);
	const uint64_t inos[] = { 0, 12, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 64, 65, 1000 };
	size_t n = sizeof(inos) / sizeof(inos[0]);
	struct sweep__inode_hint h[sizeof(inos) / sizeof(inos[0])];
	assert_int_equal(sweep__metascan_inodes(s, inos, n, h), 9);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(h[i].ino, inos[i]);
		assert_sane(&h[i], m.size, E_BS);
	}
	assert_invalid(&h[0], SWEEP__HINT_NOINO);
	assert_located(&h[1], 100, 3, E_BS);
	assert_true(h[1].flags & SWEEP__HINT_ONE_EXTENT);
	assert_true(h[1].flags & SWEEP__HINT_CSUM);
	assert_int_equal(h[1].mode, S_IFREG | 0644);
	assert_int_equal(h[1].size, 10000);
	assert_int_equal(h[1].nlink, 1);
	assert_int_equal(h[1].gen, 0x1234);
	assert_memory_equal(&h[1], &h[2], sizeof(h[1])); /* a repeat gets the same hint */
	assert_located(&h[3], 300, 1, E_BS);
	assert_false(h[3].flags & SWEEP__HINT_ONE_EXTENT);
	assert_located(&h[4], 510, 2, E_BS);
	assert_located(&h[5], 600, 7, E_BS);
	assert_no_location(&h[6]);
	assert_true(h[6].flags & SWEEP__HINT_INLINE);
	assert_int_equal(h[6].nlink, 2);
	assert_no_location(&h[7]);
	assert_true(h[7].flags & SWEEP__HINT_INLINE);
	assert_no_location(&h[8]);
	assert_located(&h[9], 701, 2, E_BS);
	assert_invalid(&h[10], SWEEP__HINT_FREE);
	assert_invalid(&h[11], SWEEP__HINT_FREE);  /* initialised but never used: all zero */
	assert_invalid(&h[12], SWEEP__HINT_UNINIT); /* past the group's initialised inodes */
	assert_invalid(&h[13], SWEEP__HINT_NOINO);
	assert_invalid(&h[14], SWEEP__HINT_NOINO);

	/* every located extent, sorted and merged */
	const uint64_t two[] = { 14, 15 };
	struct sweep__dev_range *r = NULL;
	size_t nr = 0;
	assert_int_equal(sweep__metascan_ranges(s, two, 2, &r, &nr), 0);
	assert_int_equal(nr, 2);
	assert_int_equal(r[0].off, 510 * E_BS);
	assert_int_equal(r[0].len, 2 * E_BS);
	assert_int_equal(r[1].off, 600 * E_BS);
	assert_int_equal(r[1].len, 7 * E_BS);
	free(r);

	/* input that is not ascending */
	const uint64_t down[] = { 13, 12 };
	assert_int_equal(sweep__metascan_inodes(s, down, 2, h), -EINVAL);
	assert_int_equal(sweep__metascan_inodes(s, NULL, 0, NULL), 0);
	assert_int_equal(sweep__metascan_prefetch(s, (struct sweep__dev_range[]){ { 0, 8192 }, { 1u << 30, 4096 } }, 2), 1);
	assert_null(sweep__metascan_free(s));
	assert_null(sweep__metascan_free(NULL));
	free(m.b);
}

/* The superblock: every way it can be out of range fails the open, nothing else. */
static void test_ext4_super(void **state)
{
	(void)state;
	struct img m = ext4_image();
	uint8_t *sb = m.b + 1024;
	struct sweep__metascan *s = NULL;
	struct {
		size_t off, width;
		uint32_t value;
		int want;
	} cases[] = {
		{ 0x38, 2, 0x1234, -EOPNOTSUPP },    /* not ext4, and not xfs */
		{ 0x18, 4, 7, -EUCLEAN },            /* 128 KiB blocks */
		{ 0x4, 4, E_BLOCKS * 2, -EUCLEAN },  /* more blocks than the device */
		{ 0x4, 4, 0, -EUCLEAN },
		{ 0x28, 4, 0, -EUCLEAN },            /* no inodes per group */
		{ 0x28, 4, 8 * E_BS + 1, -EUCLEAN }, /* more than a bitmap block can hold */
		{ 0x0, 4, E_IPG + 1, -EUCLEAN },     /* more inodes than the groups hold */
		{ 0x58, 2, 100, -EUCLEAN },          /* inode size */
		{ 0x58, 2, 8192, -EUCLEAN },
		{ 0xFE, 2, 48, -EUCLEAN },           /* descriptor size */
		{ 0x20, 4, 100, -EUCLEAN },          /* blocks per group */
		{ 0x14, 4, 5, -EUCLEAN },            /* first data block */
		{ 0x60, 4, 0x8, -EOPNOTSUPP },       /* a journal device */
		{ 0x175, 1, 2, -EUCLEAN },           /* an unknown checksum type */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t save[4];
		memcpy(save, sb + cases[i].off, 4);
		if (cases[i].width == 1)
			sb[cases[i].off] = (uint8_t)cases[i].value;
		else if (cases[i].width == 2)
			le16(sb + cases[i].off, cases[i].value);
		else
			le32(sb + cases[i].off, cases[i].value);
		e_sb_csum(&m);
		s = NULL;
		int r = img_open(&m, m.size, 0, &s);
		if (r != cases[i].want)
			fail_msg("case %zu (offset 0x%zx = %u): %d, want %d", i, cases[i].off, cases[i].value, r,
				 cases[i].want);
		assert_null(s); /* untouched on failure */
		memcpy(sb + cases[i].off, save, 4);
	}
	/* a bad checksum; accepted only when checksums are not checked */
	e_sb_csum(&m);
	sb[0x70] ^= 1; /* in the UUID: also changes every checksum seed */
	assert_int_equal(img_open(&m, m.size, 0, &s), -EBADMSG);
	assert_int_equal(img_open(&m, m.size, SWEEP__METASCAN_NOCSUM, &s), 0);
	sweep__metascan_free(s);
	sb[0x70] ^= 1;
	/* a device cut short; and one too small for a superblock */
	assert_int_equal(img_open(&m, m.size / 2, 0, &s), -EUCLEAN);
	assert_int_equal(img_open(&m, 1500, 0, &s), -EOPNOTSUPP);
	assert_int_equal(img_open(&m, 0, 0, &s), -EOPNOTSUPP);
	assert_int_equal(img_open(&m, m.size, 0x80, &s), -EINVAL); /* unknown flag */
	free(m.b);
}

/* Group descriptors: damage makes the group's hints invalid, with the reason. */
static void test_ext4_groups(void **state)
{
	(void)state;
	struct img m = ext4_image();
	uint8_t *d = m.b + E_BS;
	struct sweep__metascan *s;

	le32(d + 0x8, E_BLOCKS - 1); /* the inode table runs past the end */
	e_gd_csum(&m);
	s = e_open(&m);
	expect_invalid(s, 12, SWEEP__HINT_CORRUPT);
	sweep__metascan_free(s);
	le32(d + 0x8, E_ITABLE);

	e_gd_csum(&m);
	d[0x10] ^= 1; /* a flipped bit under the checksum */
	s = e_open(&m);
	expect_invalid(s, 12, SWEEP__HINT_BADCSUM);
	sweep__metascan_free(s);
	d[0x10] ^= 1;

	le16(d + 0x12, 1); /* INODE_UNINIT */
	e_gd_csum(&m);
	s = e_open(&m);
	expect_invalid(s, 12, SWEEP__HINT_UNINIT);
	sweep__metascan_free(s);
	le16(d + 0x12, 0);

	le16(d + 0x1C, E_IPG + 5); /* more unused than the group has */
	e_gd_csum(&m);
	s = e_open(&m);
	expect_invalid(s, 12, SWEEP__HINT_CORRUPT);
	sweep__metascan_free(s);
	free(m.b);
}

/* Inodes and tree blocks: an invalid hint, or a valid one whose location is unknown. */
static void test_ext4_inodes(void **state)
{
	(void)state;
	struct img m = ext4_image();
	struct sweep__metascan *s;
	struct sweep__inode_hint h;

	e_inode(&m, 12)[0x10] ^= 1; /* mtime changes, the checksum does not */
	s = e_open(&m);
	h = hint1(s, 12);
	assert_invalid(&h, SWEEP__HINT_BADCSUM);
	sweep__metascan_free(s);
	assert_int_equal(img_open(&m, m.size, SWEEP__METASCAN_NOCSUM, &s), 0);
	h = hint1(s, 12);
	assert_located(&h, 100, 3, E_BS);
	assert_false(h.flags & SWEEP__HINT_CSUM);
	sweep__metascan_free(s);
	e_inode(&m, 12)[0x10] ^= 1;

	struct {
		uint32_t ino;
		size_t off;
		uint32_t value; /* written as 16 bits */
		int expect;     /* 0: valid without a location; else the reason */
	} cases[] = {
		{ 12, 0x80, 3, SWEEP__HINT_CORRUPT },          /* extra_isize not a multiple of 4 */
		{ 12, 0x80, 200, SWEEP__HINT_CORRUPT },        /* extra_isize past the inode */
		{ 12, 0x0, 0xE000 | 0644, SWEEP__HINT_CORRUPT }, /* no such file type */
		{ 12, 0x28, 0x1234, SWEEP__HINT_CORRUPT },     /* extent magic */
		{ 12, 0x28 + 4, 9, 0 },                        /* eh_max beyond the inode's room */
		{ 12, 0x28 + 2, 5, 0 },                        /* more entries than eh_max */
		{ 12, 0x28 + 6, 6, 0 },                        /* deeper than ext4 allows */
		{ 12, 0x28 + 12 + 8, 0xFFFF, 0 },              /* extent past the end */
		{ 12, 0x28 + 12 + 4, 0x7FFF, 0 },              /* extent length past the end */
		{ 13, 0x28 + 24 + 0, 1, 0 },                   /* extents out of order */
		{ 14, 0x28 + 12 + 4, 0xFFFF, 0 },              /* index past the end */
		{ 19, 0x28 + 48, 0xFFFF, 0 },                  /* indirect block past the end */
		{ 12, 0x6C, 0x80000000, SWEEP__HINT_CORRUPT }, /* size above 2^63 */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct img c = img_new(m.size);
		memcpy(c.b, m.b, m.size);
		uint8_t *r = e_inode(&c, cases[i].ino);
		if (cases[i].off == 0x6C)
			le32(r + 0x6C, cases[i].value);
		else
			le16(r + cases[i].off, cases[i].value);
		e_inode_csum(&c, cases[i].ino);
		s = e_open(&c);
		h = hint1(s, cases[i].ino);
		if (cases[i].expect)
			assert_invalid(&h, cases[i].expect);
		else
			assert_unknown_location(&h);
		sweep__metascan_free(s);
		free(c.b);
	}

	/* tree blocks: a bad checksum, the wrong depth, a block pointing at itself, unreadable */
	struct img c = img_new(m.size);
	memcpy(c.b, m.b, m.size);
	e_leaf(&c, 400)[12 + 12] ^= 1;
	s = e_open(&c);
	expect_unknown(s, 14);
	sweep__metascan_free(s);
	memcpy(c.b, m.b, m.size);
	e_header(e_leaf(&c, 400), 1, (E_BS - 12) / 12, 1); /* an index where a leaf belongs, pointing at itself */
	e_index(e_leaf(&c, 400), 0, 0, 400);
	e_leaf_csum(&c, 400, 14);
	s = e_open(&c);
	expect_unknown(s, 14);
	sweep__metascan_free(s);
	/* a device that ends before the tree block: the inode is readable, the leaf is not */
	memcpy(c.b, m.b, m.size);
	s = NULL;
	assert_int_equal(img_open(&c, m.size, 0, &s), 0);
	assert_int_equal(ftruncate(s->fd, 400 * E_BS), 0);
	expect_unknown(s, 14);
	sweep__metascan_free(s);
	free(c.b);
	free(m.b);
}

/*
 * After read_tables, a sweep over those tables does not ask the device for
 * them again (they were read whole and waited for), and finds the same hints.
 */
static void test_ext4_resident(void **state)
{
	(void)state;
	struct img m = ext4_image();
	struct sweep__metascan *s = e_open(&m), *fresh = e_open(&m);
	const uint64_t inos[] = { 12, 13, 14, 15, 16, 17, 18, 19, 20, 21 };
	size_t n = sizeof(inos) / sizeof(inos[0]);
	struct sweep__inode_hint a[sizeof(inos) / sizeof(inos[0])], b[sizeof(inos) / sizeof(inos[0])];

	assert_int_equal(sweep__metascan_read_tables(s, 100, 200), 0); /* no table starts there: nothing read */
	assert_int_equal(s->nresident, 0);
	assert_int_equal(sweep__metascan_inodes(s, inos, n, a), 8);
	assert_int_equal(s->advice_skipped, 0);
	assert_true(sweep__metascan_read_tables(s, 0, UINT64_MAX) >= (long)(E_USED * E_ISIZE));
	assert_int_equal(s->nresident, 1);
	assert_true(s->resident[0].off == E_ITABLE * E_BS);
	assert_true(sweep__metascan_read_tables(s, 0, UINT64_MAX) > 0); /* again: merged, not added */
	assert_int_equal(s->nresident, 1);
	uint64_t skipped = s->advice_skipped;
	assert_int_equal(sweep__metascan_inodes(s, inos, n, a), 8);
	assert_true(s->advice_skipped > skipped);
	assert_int_equal(sweep__metascan_inodes(fresh, inos, n, b), 8);
	assert_int_equal(fresh->advice_skipped, 0);
	assert_memory_equal(a, b, sizeof(a));
	sweep__metascan_free(s);
	sweep__metascan_free(fresh);
	free(m.b);
}

static void test_xfs_classes(void **state)
{
	(void)state;
	struct img m = xfs_image();
	struct sweep__metascan *s = x_open(&m);
	const uint64_t inos[] = { 0, 64, 65, 66, 67, 68, 69, 70, 72, (uint64_t)X_AGBLOCKS << 3, 1ull << 40, 71 };
	struct sweep__inode_hint h[sizeof(inos) / sizeof(inos[0])];
	assert_int_equal(sweep__metascan_inodes(s, inos, sizeof(inos) / sizeof(inos[0]), h), -EINVAL); /* 71 last */
	assert_int_equal(sweep__metascan_inodes(s, inos, sizeof(inos) / sizeof(inos[0]) - 1, h), 6);
	for (size_t i = 0; i + 1 < sizeof(inos) / sizeof(inos[0]); i++)
		assert_sane(&h[i], m.size, X_BS);
	assert_invalid(&h[0], SWEEP__HINT_NOINO);
	assert_located(&h[1], 100, 3, X_BS);
	assert_true(h[1].flags & SWEEP__HINT_ONE_EXTENT);
	assert_true(h[1].flags & SWEEP__HINT_CSUM);
	assert_int_equal(h[1].gen, 77);
	assert_located(&h[2], 200, 1, X_BS);
	assert_located(&h[3], 310, 2, X_BS);
	assert_false(h[3].flags & SWEEP__HINT_ONE_EXTENT);
	assert_located(&h[4], 320, 4, X_BS);
	assert_no_location(&h[5]);
	assert_true(h[5].flags & SWEEP__HINT_INLINE);
	assert_int_equal(h[5].nlink, 2);
	assert_no_location(&h[6]);
	assert_invalid(&h[7], SWEEP__HINT_FREE);
	assert_invalid(&h[8], SWEEP__HINT_CORRUPT); /* zeros: no inode magic */
	assert_invalid(&h[9], SWEEP__HINT_NOINO);
	assert_invalid(&h[10], SWEEP__HINT_NOINO);

	struct sweep__inode_hint deep = hint1(s, 71);
	assert_located(&deep, 330, 3, X_BS);

	const uint64_t three[] = { 66, 67, 71 };
	struct sweep__dev_range *r = NULL;
	size_t nr = 0;
	assert_int_equal(sweep__metascan_ranges(s, three, 3, &r, &nr), 0);
	assert_int_equal(nr, 4);
	assert_int_equal(r[0].off, 310 * X_BS);
	assert_int_equal(r[1].off, 320 * X_BS);
	assert_int_equal(r[1].len, 4 * X_BS);
	assert_int_equal(r[2].off, 330 * X_BS);
	assert_int_equal(r[3].off, 340 * X_BS);
	assert_int_equal(r[3].len, 6 * X_BS);
	free(r);
	/* xfs does not read its metadata through the device's cache: no prefetch */
	assert_int_equal(sweep__metascan_prefetch(s, r, 0), -EOPNOTSUPP);
	sweep__metascan_free(s);
	free(m.b);
}

static void test_xfs_damage(void **state)
{
	(void)state;
	struct img m = xfs_image();
	struct sweep__metascan *s = NULL;
	struct {
		size_t off, width;
		uint64_t value;
		int want;
	} sbcases[] = {
		{ 0x4, 4, 3000, -EUCLEAN },         /* block size not a power of 2 */
		{ 0x7C, 1, 9, -EUCLEAN },           /* agblklog does not fit agblocks */
		{ 0x7B, 1, 4, -EUCLEAN },           /* inopblog does not fit */
		{ 0x68, 2, 4096, -EUCLEAN },        /* inode size */
		{ 0x8, 8, 4 * X_AGBLOCKS, -EUCLEAN }, /* more blocks than the device / the AGs */
		{ 0x58, 4, 0, -EUCLEAN },           /* no AG */
		{ 0xD8, 4, 1u << 20, -EOPNOTSUPP }, /* an unknown incompatible feature */
		{ 0x64, 2, 6, -EOPNOTSUPP },        /* a future version */
		{ 0x66, 2, 300, -EUCLEAN },         /* sector size */
	};
	for (size_t i = 0; i < sizeof(sbcases) / sizeof(sbcases[0]); i++) {
		struct img c = img_new(m.size);
		memcpy(c.b, m.b, m.size);
		uint8_t *p = c.b + sbcases[i].off;
		if (sbcases[i].width == 1)
			*p = (uint8_t)sbcases[i].value;
		else if (sbcases[i].width == 2)
			be16(p, (uint32_t)sbcases[i].value);
		else if (sbcases[i].width == 4)
			be32(p, (uint32_t)sbcases[i].value);
		else
			be64(p, sbcases[i].value);
		x_sb_csum(&c);
		s = NULL;
		int r = img_open(&c, c.size, 0, &s);
		if (r != sbcases[i].want)
			fail_msg("sb case %zu: %d, want %d", i, r, sbcases[i].want);
		assert_null(s);
		free(c.b);
	}
	m.b[0x30] ^= 1;
	assert_int_equal(img_open(&m, m.size, 0, &s), -EBADMSG);
	m.b[0x30] ^= 1;

	struct {
		uint32_t ino;
		size_t off;
		uint64_t value;
		unsigned width;
		int expect; /* 0: valid without a location */
	} cases[] = {
		{ 64, 0x98, 65, 8, SWEEP__HINT_CORRUPT },        /* di_ino of another inode */
		{ 64, 0xA0, 0, 1, SWEEP__HINT_CORRUPT },         /* another filesystem's img_uuid */
		{ 64, 0x4, 2, 1, SWEEP__HINT_CORRUPT },          /* a v2 inode on v5 */
		{ 64, 0x52, 60, 1, SWEEP__HINT_CORRUPT },        /* attribute fork offset past the inode */
		{ 64, 0x4C, 100, 4, SWEEP__HINT_CORRUPT },       /* more extents than the fork holds */
		{ 64, 0x5, 9, 1, SWEEP__HINT_CORRUPT },          /* an unknown fork format */
		{ 64, 0x5, 1, 1, SWEEP__HINT_CORRUPT },          /* a local regular file */
		{ 64, 176 + 8, 0xFFFFFF0000000003ull, 8, SWEEP__HINT_CORRUPT }, /* extent past the end */
		{ 66, 176 + 4 + 160, 5000, 8, SWEEP__HINT_CORRUPT },           /* btree pointer past the end */
		{ 66, 176, 0, 2, SWEEP__HINT_CORRUPT },          /* btree root of level 0 */
		{ 64, 0x38, 1ull << 63, 8, SWEEP__HINT_CORRUPT }, /* size above 2^63 */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct img c = img_new(m.size);
		memcpy(c.b, m.b, m.size);
		uint8_t *p = x_inode(&c, cases[i].ino) + cases[i].off;
		if (cases[i].width == 1)
			*p = (uint8_t)cases[i].value;
		else if (cases[i].width == 2)
			be16(p, (uint32_t)cases[i].value);
		else if (cases[i].width == 4)
			be32(p, (uint32_t)cases[i].value);
		else
			be64(p, cases[i].value);
		x_inode_csum(&c, cases[i].ino);
		s = x_open(&c);
		struct sweep__inode_hint h = hint1(s, cases[i].ino);
		if (cases[i].expect && (h.flags & SWEEP__HINT_VALID || h.why != cases[i].expect))
			fail_msg("inode case %zu: flags %x why %u, want why %d", i, h.flags, h.why, cases[i].expect);
		if (cases[i].expect)
			assert_invalid(&h, cases[i].expect);
		else
			assert_unknown_location(&h);
		sweep__metascan_free(s);
		free(c.b);
	}
	/* a bad inode checksum; a bad leaf checksum; leaves that point right at each other forever */
	x_inode(&m, 64)[0x30] ^= 1;
	s = x_open(&m);
	expect_invalid(s, 64, SWEEP__HINT_BADCSUM);
	sweep__metascan_free(s);
	x_inode(&m, 64)[0x30] ^= 1;
	m.b[300 * X_BS + 100] ^= 1;
	s = x_open(&m);
	expect_unknown(s, 66);
	sweep__metascan_free(s);
	m.b[300 * X_BS + 100] ^= 1;
	uint8_t *f = x_leaf(&m, 302, 67, 1, 301);
	x_rec(f, 20, 320, 4, 1);
	x_leaf_csum(&m, 302);
	s = x_open(&m);
	expect_unknown(s, 67);
	sweep__metascan_free(s);
	free(m.b);
}

/*
 * Seeded random damage over the metadata of both images: the open fails
 * cleanly, or every hint is sane. One memfd holds the image; each round
 * flips a few bytes in it, scans, and puts them back.
 */
static void flip_and_scan(const struct img *base, const uint64_t *blocks, size_t nblocks, unsigned bs, uint64_t first_ino,
			  uint64_t last_ino, unsigned rounds, unsigned seed)
{
	uint64_t inos[128];
	size_t n = 0;
	for (uint64_t i = first_ino; i <= last_ino && n < 128; i++)
		inos[n++] = i;
	struct sweep__inode_hint h[128];
	int fd = memfd_create("metascan-flip", MFD_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, base->b, base->size), (ssize_t)base->size);
	unsigned opened = 0;
	srand(seed);
	for (unsigned k = 0; k < rounds; k++) {
		off_t where[8];
		unsigned flips = 1 + (unsigned)rand() % 8;
		for (unsigned f = 0; f < flips; f++) {
			uint64_t blk = blocks[(size_t)rand() % nblocks];
			where[f] = (off_t)(blk * bs + (size_t)rand() % bs);
			uint8_t v = base->b[where[f]] ^ (uint8_t)(1u << (rand() % 8));
			assert_int_equal(pwrite(fd, &v, 1, where[f]), 1);
		}
		struct sweep__metascan *s = NULL;
		/* NOCSUM half of the time, so damage gets past the checksums into the parsers */
		int r = sweep__metascan_open_dev(fd, (k & 1) ? SWEEP__METASCAN_NOCSUM : 0, &s);
		if (r < 0) {
			assert_true(r == -EUCLEAN || r == -EBADMSG || r == -EOPNOTSUPP || r == -EIO);
		} else {
			opened++;
			int v = sweep__metascan_inodes(s, inos, n, h);
			assert_true(v >= 0 && (size_t)v <= n);
			for (size_t i = 0; i < n; i++)
				assert_sane(&h[i], base->size, sweep__metascan_block_size(s));
			struct sweep__dev_range *rg = NULL;
			size_t nr = 0;
			assert_int_equal(sweep__metascan_ranges(s, inos, n, &rg, &nr), 0);
			for (size_t i = 0; i < nr; i++)
				assert_true(rg[i].len > 0 && rg[i].off + rg[i].len <= base->size);
			free(rg);
			sweep__metascan_free(s);
		}
		for (unsigned f = 0; f < flips; f++)
			assert_int_equal(pwrite(fd, base->b + where[f], 1, where[f]), 1);
	}
	assert_true(opened > rounds / 4); /* most damage is past the superblock */
	close(fd);
}

static void test_random_damage(void **state)
{
	(void)state;
	struct img e = ext4_image();
	const uint64_t eblocks[] = { 0, 1, 4, 4, 4, 400, 401, 402, 700 };
	flip_and_scan(&e, eblocks, sizeof(eblocks) / sizeof(eblocks[0]), E_BS, 0, 70, 3000, 1);
	free(e.b);
	struct img x = xfs_image();
	const uint64_t xblocks[] = { 0, X_CHUNK, X_CHUNK, X_CHUNK, 300, 301, 302, 303, 304, 305 };
	flip_and_scan(&x, xblocks, sizeof(xblocks) / sizeof(xblocks[0]), X_BS, 60, 75, 3000, 2);
	free(x.b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc),
		cmocka_unit_test(test_ext4_classes),
		cmocka_unit_test(test_ext4_super),
		cmocka_unit_test(test_ext4_groups),
		cmocka_unit_test(test_ext4_inodes),
		cmocka_unit_test(test_ext4_resident),
		cmocka_unit_test(test_xfs_classes),
		cmocka_unit_test(test_xfs_damage),
		cmocka_unit_test(test_random_damage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
