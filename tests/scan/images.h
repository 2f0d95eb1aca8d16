/* SPDX-License-Identifier: MIT */
/*
 * Crafted ext4 and xfs images for tests/scan (the unit test and the fuzzer):
 * byte by byte, one inode of every mapping class, checksums computed with
 * lib/metascan's CRC32C. See images.c for what each inode holds.
 */
#ifndef SWEEP_TESTS_SCAN_IMAGES_H
#define SWEEP_TESTS_SCAN_IMAGES_H
#include <stddef.h>
#include <stdint.h>

struct img {
	uint8_t *b;
	size_t size;
};

#define E_BS 4096u
#define E_BLOCKS 2048u
#define E_IPG 64u
#define E_ISIZE 256u
#define E_ITABLE 4u
#define E_USED 22u /* inodes the group descriptor calls initialised */
#define EXTENTS_FL 0x80000u
#define INLINE_FL 0x10000000u
#define X_BS 4096u
#define X_AGBLOCKS 1024u
#define X_ISIZE 512u
#define X_CHUNK 8u /* the AG block holding inodes 64..71 */

extern const uint8_t img_uuid[16];
void le16(uint8_t *p, uint32_t v);
void le32(uint8_t *p, uint32_t v);
void be16(uint8_t *p, uint32_t v);
void be32(uint8_t *p, uint32_t v);
void be64(uint8_t *p, uint64_t v);
struct img img_new(size_t size);
uint32_t e_seed(void);
uint8_t *e_inode(struct img *m, uint32_t ino);
uint32_t e_inode_seed(uint32_t ino, uint32_t gen);
void e_inode_csum(struct img *m, uint32_t ino);
void e_sb_csum(struct img *m);
void e_gd_csum(struct img *m);
void e_header(uint8_t *p, unsigned entries, unsigned max, unsigned depth);
void e_extent(uint8_t *p, unsigned i, uint32_t lblk, unsigned len, uint64_t pblk);
void e_index(uint8_t *p, unsigned i, uint32_t lblk, uint64_t leaf);
uint8_t *e_leaf(struct img *m, uint64_t block);
void e_leaf_csum(struct img *m, uint64_t block, uint32_t ino);
uint8_t *e_new_inode(struct img *m, uint32_t ino, uint32_t mode, uint64_t size, uint32_t flags);
struct img ext4_image(void);
uint32_t x_cksum(const uint8_t *p, size_t len, size_t off);
uint8_t *x_inode(struct img *m, uint32_t ino);
void x_sb_csum(struct img *m);
void x_inode_csum(struct img *m, uint32_t ino);
uint8_t *x_new_inode(struct img *m, uint32_t ino, uint32_t mode, uint64_t size, unsigned format,
			    uint32_t nextents);
void x_rec(uint8_t *p, uint64_t startoff, uint64_t startblock, uint64_t count, int unwritten);
uint8_t *x_leaf(struct img *m, uint64_t blk, uint32_t ino, unsigned n, uint64_t right);
void x_leaf_csum(struct img *m, uint64_t blk);
void x_root(uint8_t *fork, unsigned n, const uint64_t *keys, const uint64_t *blks);
struct img xfs_image(void);

#endif
