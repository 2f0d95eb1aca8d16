/* SPDX-License-Identifier: MIT */
/* Crafted ext4 and xfs images for tests/scan: see images.h. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "metascan.h"
#include "images.h"

/* ---- byte helpers ---- */

void le16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
void le32(uint8_t *p, uint32_t v) { le16(p, v); le16(p + 2, v >> 16); }
void be16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
void be32(uint8_t *p, uint32_t v) { be16(p, v >> 16); be16(p + 2, v); }
void be64(uint8_t *p, uint64_t v) { be32(p, (uint32_t)(v >> 32)); be32(p + 4, (uint32_t)v); }

struct img img_new(size_t size)
{
	struct img m = { calloc(1, size), size };
	if (!m.b)
		abort();
	return m;
}

/* ---- a crafted ext4: 4 KiB blocks, one group, 64 inodes of 256 bytes, metadata_csum ---- */

const uint8_t img_uuid[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

uint32_t e_seed(void)
{
	return sweep__crc32c(~0u, img_uuid, 16);
}

uint8_t *e_inode(struct img *m, uint32_t ino)
{
	return m->b + E_ITABLE * E_BS + (size_t)(ino - 1) * E_ISIZE;
}

uint32_t e_inode_seed(uint32_t ino, uint32_t gen)
{
	uint8_t b[4];
	le32(b, ino);
	uint32_t c = sweep__crc32c(e_seed(), b, 4);
	le32(b, gen);
	return sweep__crc32c(c, b, 4);
}

void e_inode_csum(struct img *m, uint32_t ino)
{
	uint8_t *r = e_inode(m, ino);
	le16(r + 0x7C, 0);
	le16(r + 0x82, 0);
	uint32_t c = sweep__crc32c(e_inode_seed(ino, 0x1234), r, E_ISIZE);
	le16(r + 0x7C, c);
	le16(r + 0x82, c >> 16);
}

void e_sb_csum(struct img *m)
{
	uint8_t *sb = m->b + 1024;
	le32(sb + 0x3FC, sweep__crc32c(~0u, sb, 0x3FC));
}

void e_gd_csum(struct img *m)
{
	uint8_t *d = m->b + E_BS, g[4] = { 0 };
	le16(d + 0x1E, 0);
	uint32_t c = sweep__crc32c(e_seed(), g, 4);
	c = sweep__crc32c(c, d, 64);
	le16(d + 0x1E, c);
}

/* An extent header, then leaf extents (lblk, len with 0x8000 for unwritten, pblk) or index entries. */
void e_header(uint8_t *p, unsigned entries, unsigned max, unsigned depth)
{
	le16(p, 0xF30A);
	le16(p + 2, entries);
	le16(p + 4, max);
	le16(p + 6, depth);
}
void e_extent(uint8_t *p, unsigned i, uint32_t lblk, unsigned len, uint64_t pblk)
{
	uint8_t *x = p + 12 + 12 * i;
	le32(x, lblk);
	le16(x + 4, len);
	le16(x + 6, (uint32_t)(pblk >> 32));
	le32(x + 8, (uint32_t)pblk);
}
void e_index(uint8_t *p, unsigned i, uint32_t lblk, uint64_t leaf)
{
	uint8_t *x = p + 12 + 12 * i;
	le32(x, lblk);
	le32(x + 4, (uint32_t)leaf);
	le16(x + 8, (uint32_t)(leaf >> 32));
}
/* A tree block: header with eh_max for a 4 KiB block, and its checksum tail for inode ino. */
uint8_t *e_leaf(struct img *m, uint64_t block)
{
	return m->b + block * E_BS;
}
void e_leaf_csum(struct img *m, uint64_t block, uint32_t ino)
{
	uint8_t *b = e_leaf(m, block);
	size_t tail = 12 + (size_t)((E_BS - 12) / 12) * 12;
	le32(b + tail, sweep__crc32c(e_inode_seed(ino, 0x1234), b, tail));
}

uint8_t *e_new_inode(struct img *m, uint32_t ino, uint32_t mode, uint64_t size, uint32_t flags)
{
	uint8_t *r = e_inode(m, ino);
	memset(r, 0, E_ISIZE);
	le16(r, mode);
	le32(r + 0x4, (uint32_t)size);
	le32(r + 0x6C, (uint32_t)(size >> 32));
	le16(r + 0x1A, 1);
	le32(r + 0x20, flags);
	le32(r + 0x64, 0x1234);
	le16(r + 0x80, 32);
	return r + 0x28; /* i_block */
}


struct img ext4_image(void)
{
	struct img m = img_new((size_t)E_BLOCKS * E_BS);
	uint8_t *sb = m.b + 1024;
	le32(sb + 0x0, E_IPG);
	le32(sb + 0x4, E_BLOCKS);
	le32(sb + 0x14, 0);
	le32(sb + 0x18, 2);
	le32(sb + 0x1C, 2);
	le32(sb + 0x20, 32768);
	le32(sb + 0x24, 32768);
	le32(sb + 0x28, E_IPG);
	le16(sb + 0x38, 0xEF53);
	le32(sb + 0x4C, 1);
	le32(sb + 0x54, 11);
	le16(sb + 0x58, E_ISIZE);
	le32(sb + 0x60, 0x2 | 0x40 | 0x80 | 0x8000); /* filetype, extents, 64bit, inline_data */
	le32(sb + 0x64, 0x400 | 0x8);                /* metadata_csum, huge_file */
	memcpy(sb + 0x68, img_uuid, 16);
	le16(sb + 0xFE, 64);
	sb[0x175] = 1;
	e_sb_csum(&m);

	uint8_t *d = m.b + E_BS;
	le32(d + 0x8, E_ITABLE);
	le16(d + 0x1C, E_IPG - E_USED);
	e_gd_csum(&m);

	uint8_t *ib;
	/* 12: one extent from logical 0 */
	ib = e_new_inode(&m, 12, S_IFREG | 0644, 10000, EXTENTS_FL);
	e_header(ib, 1, 4, 0);
	e_extent(ib, 0, 0, 3, 100);
	/* 13: unwritten, then written */
	ib = e_new_inode(&m, 13, S_IFREG | 0600, 5 * E_BS, EXTENTS_FL);
	e_header(ib, 2, 4, 0);
	e_extent(ib, 0, 0, 0x8000 + 4, 200);
	e_extent(ib, 1, 4, 1, 300);
	/* 14: depth 1; the leaf starts unwritten */
	ib = e_new_inode(&m, 14, S_IFREG | 0644, 20 * E_BS, EXTENTS_FL);
	e_header(ib, 1, 4, 1);
	e_index(ib, 0, 0, 400);
	e_header(e_leaf(&m, 400), 2, (E_BS - 12) / 12, 0);
	e_extent(e_leaf(&m, 400), 0, 0, 0x8000 + 2, 500);
	e_extent(e_leaf(&m, 400), 1, 10, 2, 510);
	e_leaf_csum(&m, 400, 14);
	/* 15: depth 1, the first leaf only unwritten: the answer is in the second */
	ib = e_new_inode(&m, 15, S_IFREG | 0644, 200 * E_BS, EXTENTS_FL);
	e_header(ib, 2, 4, 1);
	e_index(ib, 0, 0, 401);
	e_index(ib, 1, 100, 402);
	e_header(e_leaf(&m, 401), 1, (E_BS - 12) / 12, 0);
	e_extent(e_leaf(&m, 401), 0, 0, 0x8000 + 50, 550);
	e_leaf_csum(&m, 401, 15);
	e_header(e_leaf(&m, 402), 1, (E_BS - 12) / 12, 0);
	e_extent(e_leaf(&m, 402), 0, 100, 7, 600);
	e_leaf_csum(&m, 402, 15);
	/* 16: an inline directory; 17: a fast symlink; 18: a character device */
	e_new_inode(&m, 16, S_IFDIR | 0755, 60, INLINE_FL);
	le16(e_inode(&m, 16) + 0x1A, 2);
	memcpy(e_new_inode(&m, 17, S_IFLNK | 0777, 3, 0), "abc", 3);
	le32(e_new_inode(&m, 18, S_IFCHR | 0600, 0, 0), 0x0103);
	/* 19: a block map: a hole, then an indirect block whose 4th pointer is the first data */
	ib = e_new_inode(&m, 19, S_IFREG | 0644, 16 * E_BS, 0);
	le32(ib + 4 * 12, 700);
	le32(e_leaf(&m, 700) + 4 * 3, 701);
	le32(e_leaf(&m, 700) + 4 * 4, 702);
	/* 20: free (mode 0, as a deleted inode leaves it) */
	for (uint32_t ino = 12; ino <= 20; ino++)
		e_inode_csum(&m, ino);
	return m;
}

/* Open an image that must open, as fstype. */
/* ---- a crafted xfs v5: 4 KiB blocks, one AG of 1024 blocks, 512-byte inodes ---- */


uint32_t x_cksum(const uint8_t *p, size_t len, size_t off)
{
	static const uint8_t zero[4];
	uint32_t c = sweep__crc32c(~0u, p, off);
	c = sweep__crc32c(c, zero, 4);
	return ~sweep__crc32c(c, p + off + 4, len - off - 4);
}

uint8_t *x_inode(struct img *m, uint32_t ino)
{
	return m->b + (size_t)X_CHUNK * X_BS + (size_t)(ino & 7) * X_ISIZE;
}

void x_sb_csum(struct img *m)
{
	le32(m->b + 0xE0, x_cksum(m->b, 512, 0xE0));
}

void x_inode_csum(struct img *m, uint32_t ino)
{
	uint8_t *r = x_inode(m, ino);
	le32(r + 0x64, x_cksum(r, X_ISIZE, 0x64));
}

uint8_t *x_new_inode(struct img *m, uint32_t ino, uint32_t mode, uint64_t size, unsigned format,
			    uint32_t nextents)
{
	uint8_t *r = x_inode(m, ino);
	memset(r, 0, X_ISIZE);
	be16(r, 0x494E);
	be16(r + 2, mode);
	r[4] = 3;
	r[5] = (uint8_t)format;
	be32(r + 0x10, 1);
	be64(r + 0x38, size);
	be32(r + 0x4C, nextents);
	be32(r + 0x5C, 77);
	be64(r + 0x98, ino);
	memcpy(r + 0xA0, img_uuid, 16);
	return r + 176;
}

void x_rec(uint8_t *p, uint64_t startoff, uint64_t startblock, uint64_t count, int unwritten)
{
	be64(p, (uint64_t)unwritten << 63 | startoff << 9 | startblock >> 43);
	be64(p + 8, startblock << 21 | count);
}

/* A bmbt leaf block at AG block `blk` for inode ino, with n records from recs and a right sibling. */
uint8_t *x_leaf(struct img *m, uint64_t blk, uint32_t ino, unsigned n, uint64_t right)
{
	uint8_t *b = m->b + blk * X_BS;
	memset(b, 0, X_BS);
	be32(b, 0x424D4133);
	be16(b + 4, 0);
	be16(b + 6, n);
	be64(b + 8, UINT64_MAX);
	be64(b + 16, right);
	be64(b + 24, blk * X_BS / 512);
	memcpy(b + 40, img_uuid, 16);
	be64(b + 56, ino);
	return b + 72;
}

void x_leaf_csum(struct img *m, uint64_t blk)
{
	uint8_t *b = m->b + blk * X_BS;
	le32(b + 64, x_cksum(b, X_BS, 64));
}

/* A data fork in btree format: level 1, n leaves (dsize 336: maxrecs 20), keys then pointers. */
void x_root(uint8_t *fork, unsigned n, const uint64_t *keys, const uint64_t *blks)
{
	be16(fork, 1);
	be16(fork + 2, n);
	for (unsigned i = 0; i < n; i++) {
		be64(fork + 4 + 8 * i, keys[i]);
		be64(fork + 4 + 8 * (20 + i), blks[i]);
	}
}

struct img xfs_image(void)
{
	struct img m = img_new((size_t)X_AGBLOCKS * X_BS);
	uint8_t *sb = m.b;
	be32(sb, 0x58465342);
	be32(sb + 0x4, X_BS);
	be64(sb + 0x8, X_AGBLOCKS);
	memcpy(sb + 0x20, img_uuid, 16);
	be32(sb + 0x54, X_AGBLOCKS);
	be32(sb + 0x58, 1);
	be16(sb + 0x64, 5);
	be16(sb + 0x66, 512);
	be16(sb + 0x68, X_ISIZE);
	be16(sb + 0x6A, X_BS / X_ISIZE);
	sb[0x78] = 12;
	sb[0x79] = 9;
	sb[0x7A] = 9;
	sb[0x7B] = 3;
	sb[0x7C] = 10;
	be32(sb + 0xD8, 1); /* ftype */
	x_sb_csum(&m);

	uint8_t *f;
	f = x_new_inode(&m, 64, S_IFREG | 0644, 3 * X_BS, 2, 1); /* one extent */
	x_rec(f, 0, 100, 3, 0);
	f = x_new_inode(&m, 65, S_IFREG | 0644, 8 * X_BS, 2, 2); /* unwritten, then written */
	x_rec(f, 0, 150, 4, 1);
	x_rec(f + 16, 4, 200, 1, 0);
	f = x_new_inode(&m, 66, S_IFREG | 0644, 40 * X_BS, 3, 2); /* btree: one leaf */
	x_root(f, 1, (const uint64_t[]){ 0 }, (const uint64_t[]){ 300 });
	f = x_leaf(&m, 300, 66, 2, UINT64_MAX);
	x_rec(f, 0, 400, 2, 1);
	x_rec(f + 16, 10, 310, 2, 0);
	x_leaf_csum(&m, 300);
	f = x_new_inode(&m, 67, S_IFREG | 0644, 40 * X_BS, 3, 2); /* btree: the first leaf only unwritten */
	x_root(f, 2, (const uint64_t[]){ 0, 20 }, (const uint64_t[]){ 301, 302 });
	f = x_leaf(&m, 301, 67, 1, 302);
	x_rec(f, 0, 410, 5, 1);
	x_leaf_csum(&m, 301);
	f = x_leaf(&m, 302, 67, 1, UINT64_MAX);
	x_rec(f, 20, 320, 4, 0);
	x_leaf_csum(&m, 302);
	x_new_inode(&m, 68, S_IFDIR | 0755, 6, 1, 0);
	be32(x_inode(&m, 68) + 0x10, 2);
	x_new_inode(&m, 69, S_IFLNK | 0777, 3, 1, 0);
	x_new_inode(&m, 70, 0, 0, 2, 0); /* free */
	/* 71: a btree of level 2: the root, one node (303), two leaves (304, 305) */
	f = x_new_inode(&m, 71, S_IFREG | 0644, 100 * X_BS, 3, 3);
	be16(f, 2);
	be16(f + 2, 1);
	be64(f + 4 + 8 * 20, 303);
	/*
	 * Level 1: keys then pointers, 251 of each in a 4 KiB block. 40 of them,
	 * alternating between the two leaves (no real tree does that, but it
	 * makes the scan add more records than its array holds while it is
	 * still parsing this node).
	 */
	uint8_t *node = x_leaf(&m, 303, 71, 40, UINT64_MAX) - 72;
	be16(node + 4, 1);
	for (unsigned i = 0; i < 40; i++) {
		be64(node + 72 + 8 * i, 50 * i);
		be64(node + 72 + 8 * (251 + i), i % 2 ? 305 : 304);
	}
	x_leaf_csum(&m, 303);
	f = x_leaf(&m, 304, 71, 2, 305);
	x_rec(f, 0, 420, 3, 1);
	x_rec(f + 16, 10, 330, 3, 0);
	x_leaf_csum(&m, 304);
	f = x_leaf(&m, 305, 71, 1, UINT64_MAX);
	x_rec(f, 50, 340, 6, 0);
	x_leaf_csum(&m, 305);
	for (uint32_t ino = 64; ino <= 71; ino++)
		x_inode_csum(&m, ino);
	return m;
}
