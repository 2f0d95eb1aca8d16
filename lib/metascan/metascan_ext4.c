/* SPDX-License-Identifier: MIT */
/*
 * metascan for ext2/ext3/ext4: superblock, group descriptors, inodes, and the
 * first located block of a file from its extent tree or its block map.
 *
 * Every field read from the device is checked before it is used, since the
 * image may be corrupt, hostile, or torn by a concurrent writer. Offsets are
 * those of the on-disk format (Documentation/filesystems/ext4/ in the kernel
 * sources); checksums follow the kernel's ext4_inode_csum,
 * ext4_group_desc_csum, ext4_extent_block_csum and ext4_superblock_csum.
 *
 * The first located block follows sweep_extent_first(): the lowest logical
 * extent that is written (not unwritten), in the order a FIEMAP of the file
 * lists them. Inline data, fast symlinks and device inodes have none.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "metascan.h"

/* Superblock (1024 bytes at byte 1024 of the device). */
#define SB_OFF 1024
#define SB_SIZE 1024
#define SB_MAGIC 0xEF53
#define COMPAT_SPARSE_SUPER2 0x200
#define INCOMPAT_JOURNAL_DEV 0x8
#define INCOMPAT_META_BG 0x10
#define INCOMPAT_64BIT 0x80
#define INCOMPAT_CSUM_SEED 0x2000
#define INCOMPAT_LARGEDIR 0x4000
#define RO_COMPAT_SPARSE_SUPER 0x1
#define RO_COMPAT_HUGE_FILE 0x8
#define RO_COMPAT_GDT_CSUM 0x10
#define RO_COMPAT_BIGALLOC 0x200
#define RO_COMPAT_METADATA_CSUM 0x400

/* Group descriptor. */
#define BG_INODE_UNINIT 0x1
#define BG_CSUM_OFF 0x1E

/* Inode. */
#define GOOD_OLD_INODE_SIZE 128
#define I_CSUM_LO 0x7C
#define I_CSUM_HI 0x82
#define EXT4_HUGE_FILE_FL 0x40000
#define EXT4_EXTENTS_FL 0x80000
#define EXT4_INLINE_DATA_FL 0x10000000
#define N_BLOCKS 15
#define IND_BLOCK 12

/* Extent tree. */
#define EXT_MAGIC 0xF30A
#define EXT_MAX_DEPTH 5
#define EXT_INIT_MAX_LEN 32768u

/* A tree walk gives up after this many descents from the root. */
#define MAX_RESTARTS 64
/* ... and a scan after this many sweeps (a tree is at most 5 levels; restarts add some). */
#define MAX_ROUNDS 256

#define NO_NEXT UINT64_MAX

struct group {
	uint64_t itable; /* first block of the inode table */
	uint32_t used;   /* inodes [0, used) of the table have been initialised */
	uint16_t why;    /* SWEEP__HINT_OK, or why no inode of the group can be trusted */
};

struct ext4 {
	uint32_t bsize;
	unsigned log_bsize;
	uint64_t blocks; /* s_blocks_count */
	uint32_t first_data_block;
	uint32_t bpg, ipg, isize, inodes;
	uint32_t ngroups, desc_size, desc_per_block, gdt_blocks;
	uint32_t itable_blocks;
	uint32_t first_meta_bg;
	uint32_t backup_bgs[2];
	uint32_t cluster_sectors; /* 512-byte units of one allocation cluster (an xattr block) */
	uint32_t csum_seed;
	uint8_t uuid[16];
	bool metadata_csum, gdt_csum, is64, meta_bg, sparse_super, sparse_super2;
	bool huge_file, largedir, check_csum;
	struct group *groups;
	uint8_t *gdt; /* descriptor blocks, re-read at every scan */
};

static unsigned ext4_block_size(const void *fsdata)
{
	return ((const struct ext4 *)fsdata)->bsize;
}

static void ext4_free(void *fsdata)
{
	struct ext4 *e = fsdata;
	if (!e)
		return;
	free(e->groups);
	free(e->gdt);
	free(e);
}

static bool is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

static bool power_of(uint64_t g, unsigned base)
{
	while (g > 1 && g % base == 0)
		g /= base;
	return g == 1;
}

/* Does group g hold a superblock backup (and so, without meta_bg, a copy of the descriptors)? */
static bool group_has_super(const struct ext4 *e, uint64_t g)
{
	if (g == 0)
		return true;
	if (e->sparse_super2)
		return g == e->backup_bgs[0] || g == e->backup_bgs[1];
	if (!e->sparse_super)
		return true;
	return power_of(g, 3) || power_of(g, 5) || power_of(g, 7); /* 1 is 3^0 */
}

/* Block holding descriptor block nr (the kernel's descriptor_loc). */
static uint64_t desc_block(const struct ext4 *e, uint32_t nr)
{
	uint64_t sb_block = e->bsize == 1024 ? 1 : 0; /* the block holding byte 1024 */
	if (!e->meta_bg || nr < e->first_meta_bg)
		return sb_block + nr + 1;
	uint64_t bg = (uint64_t)e->desc_per_block * nr;
	uint64_t has_super = group_has_super(e, bg) ? 1 : 0;
	if (e->bsize == 1024 && nr == 0 && e->first_data_block == 0)
		has_super++;
	return has_super + bg * e->bpg + e->first_data_block;
}

static int parse_super(struct ext4 *e, const uint8_t *sb, uint64_t dev_size, unsigned flags)
{
	if (sweep__le16(sb + 0x38) != SB_MAGIC)
		return -ENOENT;
	uint32_t compat = sweep__le32(sb + 0x5C), incompat = sweep__le32(sb + 0x60), ro = sweep__le32(sb + 0x64);
	if (incompat & INCOMPAT_JOURNAL_DEV)
		return -EOPNOTSUPP; /* an external journal, not a filesystem */
	uint32_t log = sweep__le32(sb + 0x18);
	if (log > 6)
		return -EUCLEAN;
	e->log_bsize = 10 + log;
	e->bsize = 1024u << log;
	e->is64 = incompat & INCOMPAT_64BIT;
	e->meta_bg = incompat & INCOMPAT_META_BG;
	e->largedir = incompat & INCOMPAT_LARGEDIR;
	e->sparse_super = ro & RO_COMPAT_SPARSE_SUPER;
	e->sparse_super2 = compat & COMPAT_SPARSE_SUPER2;
	e->huge_file = ro & RO_COMPAT_HUGE_FILE;
	e->metadata_csum = ro & RO_COMPAT_METADATA_CSUM;
	e->gdt_csum = !e->metadata_csum && (ro & RO_COMPAT_GDT_CSUM);
	e->blocks = sweep__le32(sb + 0x4) | (e->is64 ? (uint64_t)sweep__le32(sb + 0x150) << 32 : 0);
	e->first_data_block = sweep__le32(sb + 0x14);
	e->bpg = sweep__le32(sb + 0x20);
	e->ipg = sweep__le32(sb + 0x28);
	e->inodes = sweep__le32(sb + 0x0);
	uint32_t rev = sweep__le32(sb + 0x4C);
	e->isize = rev == 0 ? GOOD_OLD_INODE_SIZE : sweep__le16(sb + 0x58);
	e->desc_size = e->is64 ? sweep__le16(sb + 0xFE) : 32;
	e->first_meta_bg = sweep__le32(sb + 0x104);
	e->backup_bgs[0] = sweep__le32(sb + 0x24C);
	e->backup_bgs[1] = sweep__le32(sb + 0x250);
	memcpy(e->uuid, sb + 0x68, 16);
	uint32_t log_cluster = (ro & RO_COMPAT_BIGALLOC) ? sweep__le32(sb + 0x1C) : log;
	if (log_cluster < log || log_cluster > log + 16)
		return -EUCLEAN;
	e->cluster_sectors = (e->bsize >> 9) << (log_cluster - log);

	/* Geometry: every later offset is computed from these, so they must be sane together. */
	if (e->blocks == 0 || e->blocks > UINT64_MAX >> 16 || e->first_data_block > 1 || e->first_data_block >= e->blocks)
		return -EUCLEAN;
	if (dev_size && e->blocks > dev_size >> e->log_bsize)
		return -EUCLEAN; /* the filesystem claims more than the device holds */
	if (e->bpg < 256 || e->bpg % 8 || e->bpg > ((uint64_t)8 * e->bsize) << (log_cluster - log))
		return -EUCLEAN;
	if (e->ipg == 0 || e->ipg > 8u * e->bsize)
		return -EUCLEAN;
	if (!is_pow2(e->isize) || e->isize < GOOD_OLD_INODE_SIZE || e->isize > e->bsize)
		return -EUCLEAN;
	if (!is_pow2(e->desc_size) || e->desc_size < 32 || e->desc_size > 1024 || (e->is64 && e->desc_size < 64))
		return -EUCLEAN;
	uint64_t ngroups = (e->blocks - e->first_data_block + e->bpg - 1) / e->bpg;
	if (ngroups == 0 || ngroups > UINT32_MAX / 2)
		return -EUCLEAN;
	e->ngroups = (uint32_t)ngroups;
	if (e->inodes == 0 || e->inodes > (uint64_t)e->ngroups * e->ipg)
		return -EUCLEAN;
	e->desc_per_block = e->bsize / e->desc_size;
	e->gdt_blocks = (uint32_t)((ngroups + e->desc_per_block - 1) / e->desc_per_block);
	e->itable_blocks = (uint32_t)(((uint64_t)e->ipg * e->isize + e->bsize - 1) / e->bsize);
	if (e->meta_bg && e->first_meta_bg > e->gdt_blocks)
		return -EUCLEAN;
	for (uint32_t nr = 0; nr < e->gdt_blocks; nr++) {
		uint64_t b = desc_block(e, nr);
		if (b >= e->blocks)
			return -EUCLEAN;
		if (!e->meta_bg)
			break; /* contiguous: checking the last one below is enough */
	}
	if (!e->meta_bg && desc_block(e, e->gdt_blocks - 1) >= e->blocks)
		return -EUCLEAN;

	e->check_csum = !(flags & SWEEP__METASCAN_NOCSUM);
	if (e->metadata_csum) {
		if (sb[0x175] != 1) /* s_checksum_type: only crc32c exists */
			return -EUCLEAN;
		if (e->check_csum && sweep__crc32c(~0u, sb, 0x3FC) != sweep__le32(sb + 0x3FC))
			return -EBADMSG;
		e->csum_seed = (incompat & INCOMPAT_CSUM_SEED) ? sweep__le32(sb + 0x270) : sweep__crc32c(~0u, e->uuid, 16);
	}
	/* The kernel checks inode checksums only on filesystems made by Linux. */
	if (sweep__le32(sb + 0x48) != 0)
		e->check_csum = false;
	return 0;
}

static uint16_t desc_csum(const struct ext4 *e, uint32_t g, const uint8_t *d)
{
	uint8_t le_group[4] = { (uint8_t)g, (uint8_t)(g >> 8), (uint8_t)(g >> 16), (uint8_t)(g >> 24) };
	static const uint8_t zero[2];
	if (e->metadata_csum) {
		uint32_t c = sweep__crc32c(e->csum_seed, le_group, 4);
		c = sweep__crc32c(c, d, BG_CSUM_OFF);
		c = sweep__crc32c(c, zero, 2);
		c = sweep__crc32c(c, d + BG_CSUM_OFF + 2, e->desc_size - BG_CSUM_OFF - 2);
		return (uint16_t)c;
	}
	uint16_t c = sweep__crc16(0xFFFF, e->uuid, 16);
	c = sweep__crc16(c, le_group, 4);
	c = sweep__crc16(c, d, BG_CSUM_OFF);
	if (e->is64)
		c = sweep__crc16(c, d + BG_CSUM_OFF + 2, e->desc_size - BG_CSUM_OFF - 2);
	return c;
}

static void parse_group(const struct ext4 *e, uint32_t g, const uint8_t *d, struct group *out)
{
	bool wide = e->is64 && e->desc_size >= 64;
	uint64_t itable = sweep__le32(d + 0x8) | (wide ? (uint64_t)sweep__le32(d + 0x28) << 32 : 0);
	uint32_t unused = sweep__le16(d + 0x1C) | (wide ? (uint32_t)sweep__le16(d + 0x32) << 16 : 0);
	bool has_csum = e->metadata_csum || e->gdt_csum;

	out->itable = itable;
	out->used = e->ipg;
	out->why = SWEEP__HINT_OK;
	if (itable <= e->first_data_block || itable >= e->blocks || e->itable_blocks > e->blocks - itable) {
		out->why = SWEEP__HINT_CORRUPT;
		return;
	}
	if (has_csum && e->check_csum && desc_csum(e, g, d) != sweep__le16(d + BG_CSUM_OFF)) {
		out->why = SWEEP__HINT_BADCSUM;
		return;
	}
	if (!has_csum)
		return; /* without checksums the kernel ignores the uninit fields too */
	if (sweep__le16(d + 0x12) & BG_INODE_UNINIT) {
		out->used = 0;
		return;
	}
	if (unused > e->ipg) {
		out->why = SWEEP__HINT_CORRUPT;
		return;
	}
	out->used = e->ipg - unused;
}

/*
 * Re-read the descriptor blocks covering groups [g0, g1]: they change as
 * inodes are allocated, and ext4 keeps its live copy in the device's page
 * cache, which is what we read.
 */
static void refresh_groups(struct sweep__metascan *m, struct ext4 *e, uint32_t g0, uint32_t g1)
{
	uint32_t nr0 = g0 / e->desc_per_block, nr1 = g1 / e->desc_per_block;
	for (uint32_t nr = nr0; nr <= nr1;) {
		/* one read for a run of descriptor blocks that lie next to each other */
		uint32_t k = 1;
		while (nr + k <= nr1 && desc_block(e, nr + k) == desc_block(e, nr) + k && k < 256)
			k++;
		uint8_t *dst = e->gdt + (size_t)nr * e->bsize;
		int r = sweep__ms_pread(m, dst, (size_t)k * e->bsize, desc_block(e, nr) << e->log_bsize);
		for (uint32_t i = 0; i < k; i++) {
			for (uint32_t j = 0; j < e->desc_per_block; j++) {
				uint64_t g = (uint64_t)(nr + i) * e->desc_per_block + j;
				if (g >= e->ngroups)
					break;
				if (r < 0) {
					e->groups[g] = (struct group){ .why = SWEEP__HINT_EIO };
					continue;
				}
				parse_group(e, (uint32_t)g, dst + (size_t)i * e->bsize + (size_t)j * e->desc_size, &e->groups[g]);
			}
		}
		nr += k;
	}
}

static int ext4_open(struct sweep__metascan *m, void **ret)
{
	uint8_t sb[SB_SIZE];
	int r = sweep__ms_pread(m, sb, SB_SIZE, SB_OFF);
	if (r < 0)
		return r == -EIO ? -ENOENT : r; /* too small to be ext4 */
	struct ext4 *e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	if ((r = parse_super(e, sb, m->dev_size, m->flags)) < 0)
		goto fail;
	e->groups = calloc(e->ngroups, sizeof(*e->groups));
	e->gdt = malloc((size_t)e->gdt_blocks * e->bsize);
	if (!e->groups || !e->gdt) {
		r = -ENOMEM;
		goto fail;
	}
	/* Read them all once: a device whose descriptors cannot be read is not worth opening. */
	refresh_groups(m, e, 0, e->ngroups - 1);
	if (e->groups[0].why == SWEEP__HINT_EIO) {
		r = -EIO;
		goto fail;
	}
	*ret = e;
	return 0;
fail:
	ext4_free(e);
	return r;
}

/* ---- the first located block ---- */

enum node_res { N_FOUND, N_CHILD, N_NONE, N_BAD };

struct node_out {
	uint64_t phys, plen;
	bool one;          /* the only extent, from logical 0 (root leaf only) */
	uint64_t child;    /* block to read next */
	unsigned level;    /* its expected extent depth, or indirect level */
	uint64_t base;     /* indirect: the logical block the child starts at */
};

/* An extent tree node's header: false when it cannot be one (want_depth -1: any depth). */
static bool ext_header(const uint8_t *n, size_t len, int want_depth, unsigned *entries, unsigned *depth)
{
	if (len < 12 || sweep__le16(n) != EXT_MAGIC)
		return false;
	unsigned max = sweep__le16(n + 4);
	*entries = sweep__le16(n + 2);
	*depth = sweep__le16(n + 6);
	if (max == 0 || 12 + (size_t)max * 12 > len || *entries > max || *depth > EXT_MAX_DEPTH)
		return false;
	return want_depth < 0 || *depth == (unsigned)want_depth;
}

/* A block number a tree may point at: after the superblock's block, inside the filesystem. */
static bool block_ok(const struct ext4 *e, uint64_t b, uint64_t count)
{
	return b > e->first_data_block && b < e->blocks && count <= e->blocks - b;
}

/* One extent tree node (the root in i_block, or a tree block): at or after logical block L. */
static int ext_node(const struct ext4 *e, const uint8_t *n, size_t len, int want_depth, bool root, uint64_t L,
		    uint64_t *next_L, struct node_out *o)
{
	unsigned entries, depth;
	if (!ext_header(n, len, want_depth, &entries, &depth))
		return N_BAD;
	const uint8_t *x = n + 12;
	if (depth == 0) {
		uint64_t prev_end = 0;
		for (unsigned i = 0; i < entries; i++, x += 12) {
			uint64_t lblk = sweep__le32(x);
			unsigned raw = sweep__le16(x + 4);
			uint64_t pblk = (uint64_t)sweep__le16(x + 6) << 32 | sweep__le32(x + 8);
			bool unwritten = raw > EXT_INIT_MAX_LEN;
			uint64_t cnt = unwritten ? raw - EXT_INIT_MAX_LEN : raw;
			if (lblk < prev_end)
				return N_BAD; /* out of order or overlapping */
			prev_end = lblk + cnt;
			if (lblk < L || cnt == 0 || unwritten)
				continue;
			if (!block_ok(e, pblk, cnt))
				return N_BAD;
			o->phys = pblk << e->log_bsize;
			o->plen = cnt << e->log_bsize;
			o->one = root && entries == 1 && lblk == 0;
			return N_FOUND;
		}
		return N_NONE;
	}
	if (entries == 0)
		return N_NONE;
	unsigned j = 0;
	uint64_t prev = 0;
	for (unsigned i = 0; i < entries; i++) {
		uint64_t lblk = sweep__le32(x + 12 * i);
		if (i && lblk <= prev)
			return N_BAD;
		prev = lblk;
		if (lblk <= L)
			j = i;
	}
	if (j + 1 < entries)
		*next_L = sweep__le32(x + 12 * (j + 1));
	const uint8_t *ix = x + 12 * j;
	uint64_t child = sweep__le32(ix + 4) | (uint64_t)sweep__le16(ix + 8) << 32;
	if (!block_ok(e, child, 1))
		return N_BAD;
	o->child = child;
	o->level = depth - 1;
	return N_CHILD;
}

/* Logical blocks one pointer at indirect level `level` covers: apb^(level-1). */
static uint64_t ind_span(const struct ext4 *e, unsigned level)
{
	uint64_t span = 1, apb = e->bsize / 4;
	for (unsigned i = 1; i < level; i++)
		span *= apb;
	return span;
}

/* A run of block pointers, the first at logical block base, each covering span: at or after L. */
static int ind_ptrs(const struct ext4 *e, const uint8_t *p, unsigned count, unsigned level, uint64_t base,
		    uint64_t L, uint64_t *next_L, struct node_out *o)
{
	uint64_t span = ind_span(e, level);
	uint64_t first = L > base ? (L - base) / span : 0;
	for (uint64_t i = first; i < count; i++) {
		uint64_t b = sweep__le32(p + 4 * i);
		if (b == 0)
			continue;
		if (!block_ok(e, b, 1))
			return N_BAD;
		if (level == 1) {
			/* the run of physically consecutive blocks that follows */
			uint64_t n = 1;
			while (i + n < count && sweep__le32(p + 4 * (i + n)) == b + n && b + n < e->blocks)
				n++;
			o->phys = b << e->log_bsize;
			o->plen = n << e->log_bsize;
			o->one = false;
			return N_FOUND;
		}
		*next_L = base + (i + 1) * span;
		o->child = b;
		o->level = level - 1;
		o->base = base + i * span;
		return N_CHILD;
	}
	return N_NONE;
}

/* i_block of a block-mapped inode: 12 direct pointers, then one each for levels 1, 2 and 3. */
static int ind_root(const struct ext4 *e, const uint8_t *ib, uint64_t L, uint64_t *next_L, struct node_out *o)
{
	int r = ind_ptrs(e, ib, IND_BLOCK, 1, 0, L, next_L, o);
	if (r != N_NONE)
		return r;
	uint64_t base = IND_BLOCK;
	for (unsigned level = 1; level <= 3; level++) {
		uint64_t end = base + ind_span(e, level + 1);
		if (L < end) {
			*next_L = end;
			r = ind_ptrs(e, ib + 4 * (IND_BLOCK + level - 1), 1, level + 1, base, L, next_L, o);
			if (r != N_NONE)
				return r;
		}
		base = end;
	}
	return N_NONE;
}

/* A file whose first located block needs tree blocks read. */
struct pend {
	struct sweep__ms_pend h; /* h.byte: the block to read */
	bool extents;     /* extent tree, else block map */
	uint8_t level;    /* of the block to read: extent depth, or indirect level */
	uint16_t restarts;
	uint32_t csum_seed;
	uint64_t base;    /* indirect: the logical block it starts at */
	uint64_t L;       /* looking for the first located block at or after L */
	uint64_t next_L;  /* where to look next if nothing is found below this block */
	uint8_t root[4 * N_BLOCKS];
};

static void set_phys(struct sweep__inode_hint *h, const struct node_out *o)
{
	h->flags |= SWEEP__HINT_PHYS;
	h->phys = o->phys;
	h->phys_len = o->plen;
	if (o->one)
		h->flags |= SWEEP__HINT_ONE_EXTENT;
}

static void set_no_phys(struct sweep__inode_hint *h)
{
	h->flags |= SWEEP__HINT_PHYS;
	h->phys = SWEEP_NO_PHYS;
	h->phys_len = 0;
}

/* Point p at the child block o names. */
static void go_child(const struct ext4 *e, struct pend *p, const struct node_out *o, uint64_t next_L)
{
	p->h.byte = o->child << e->log_bsize;
	p->level = (uint8_t)o->level;
	p->base = o->base;
	p->next_L = next_L;
}

/*
 * Look from the root for the first located block at or after p->L. Resolves
 * the hint (p->h.done), or points p at the block to read in the next sweep.
 */
static void descend_root(const struct ext4 *e, struct pend *p, struct sweep__inode_hint *h)
{
	struct node_out o;
	uint64_t next_L = NO_NEXT;
	int r = p->extents ? ext_node(e, p->root, sizeof(p->root), -1, true, p->L, &next_L, &o)
			   : ind_root(e, p->root, p->L, &next_L, &o);
	if (r == N_CHILD) {
		go_child(e, p, &o, next_L);
		return;
	}
	p->h.done = 1;
	if (r == N_FOUND)
		set_phys(h, &o);
	else if (r == N_NONE)
		set_no_phys(h);
	/* N_BAD: the location stays unknown */
}

/* ---- ALL mode: every located extent, for the walk's prefetch of directory blocks ---- */

static struct pend *pend_child(struct sweep__ms_scan *s, struct sweep__inode_hint *h, bool extents, unsigned level,
			       uint64_t block, uint32_t csum_seed)
{
	const struct ext4 *e = s->fsdata;
	struct pend *p = sweep__ms_pend_add(s, h);
	if (p) {
		p->extents = extents;
		p->level = (uint8_t)level;
		p->h.byte = block << e->log_bsize;
		p->csum_seed = csum_seed;
	}
	return p;
}

/* Every written extent below one extent node: leaves give ranges, index entries pending blocks. */
static void ext_all(struct sweep__ms_scan *s, struct sweep__inode_hint *h, const uint8_t *n, size_t len, int want_depth,
		    uint32_t csum_seed)
{
	const struct ext4 *e = s->fsdata;
	unsigned entries, depth;
	if (!ext_header(n, len, want_depth, &entries, &depth))
		return;
	for (unsigned i = 0; i < entries; i++) {
		const uint8_t *x = n + 12 + 12 * i;
		if (depth == 0) {
			unsigned raw = sweep__le16(x + 4);
			uint64_t pblk = (uint64_t)sweep__le16(x + 6) << 32 | sweep__le32(x + 8);
			if (raw == 0 || raw > EXT_INIT_MAX_LEN)
				continue; /* empty or unwritten */
			if (!block_ok(e, pblk, raw))
				return;
			sweep__ms_range_add(s, pblk << e->log_bsize, (uint64_t)raw << e->log_bsize);
		} else {
			uint64_t child = sweep__le32(x + 4) | (uint64_t)sweep__le16(x + 8) << 32;
			if (!block_ok(e, child, 1) || !pend_child(s, h, true, depth - 1, child, csum_seed))
				return;
		}
	}
}

/* Every block of a block map below count pointers of the given level (1: data blocks). */
static void ind_all(struct sweep__ms_scan *s, struct sweep__inode_hint *h, const uint8_t *ptrs, unsigned count,
		    unsigned level)
{
	const struct ext4 *e = s->fsdata;
	for (unsigned i = 0; i < count; i++) {
		uint64_t b = sweep__le32(ptrs + 4 * i);
		if (b == 0)
			continue;
		if (!block_ok(e, b, 1))
			return;
		if (level == 1)
			sweep__ms_range_add(s, b << e->log_bsize, e->bsize);
		else if (!pend_child(s, h, false, level - 1, b, 0))
			return;
	}
}

static void all_root(struct sweep__ms_scan *s, struct sweep__inode_hint *h, const uint8_t *ib, bool extents,
		     uint32_t csum_seed)
{
	if (extents) {
		ext_all(s, h, ib, 4 * N_BLOCKS, -1, csum_seed);
		return;
	}
	ind_all(s, h, ib, IND_BLOCK, 1);
	for (unsigned level = 1; level <= 3; level++)
		ind_all(s, h, ib + 4 * (IND_BLOCK + level - 1), 1, level + 1);
}

/* ext4_extent_block_csum: the tail after eh_max entries, seeded with the inode's number and generation. */
static bool extent_block_csum_ok(const struct ext4 *e, const struct pend *p, const uint8_t *blk)
{
	if (!e->metadata_csum || !e->check_csum)
		return true;
	size_t tail = 12 + (size_t)sweep__le16(blk + 4) * 12;
	return tail + 4 <= e->bsize && sweep__crc32c(p->csum_seed, blk, tail) == sweep__le32(blk + tail);
}

/* The block p points at has been read (or not: blk NULL). */
static void descend_block(struct sweep__ms_scan *s, struct sweep__ms_pend *pp, struct sweep__inode_hint *h,
			  const uint8_t *blk)
{
	const struct ext4 *e = s->fsdata;
	struct pend *p = (struct pend *)pp;
	struct node_out o;
	uint64_t next_L = p->next_L;
	int r = N_BAD;

	p->h.done = 1;
	if (!blk)
		return;
	if (s->all) {
		/* these add pending records, which may move p: they get copies of its fields */
		if (!p->extents)
			ind_all(s, h, blk, e->bsize / 4, p->level);
		else if (extent_block_csum_ok(e, p, blk))
			ext_all(s, h, blk, e->bsize, p->level, p->csum_seed);
		return;
	}
	if (p->extents) {
		bool csum_ok = extent_block_csum_ok(e, p, blk);
		if (csum_ok)
			r = ext_node(e, blk, e->bsize, p->level, false, p->L, &next_L, &o);
		else
			h->flags &= (uint16_t)~SWEEP__HINT_CSUM;
	} else {
		r = ind_ptrs(e, blk, e->bsize / 4, p->level, p->base, p->L, &next_L, &o);
	}
	switch (r) {
	case N_CHILD:
		go_child(e, p, &o, next_L);
		p->h.done = 0;
		return;
	case N_FOUND:
		set_phys(h, &o);
		return;
	case N_NONE:
		/* nothing located below this block: go on with the next subtree, from the root */
		if (p->next_L == NO_NEXT) {
			set_no_phys(h);
		} else if (p->next_L > p->L && ++p->restarts < MAX_RESTARTS) {
			p->L = p->next_L;
			p->h.done = 0;
			descend_root(e, p, h);
		}
		return;
	}
	/* N_BAD: the location stays unknown */
}

static uint32_t inode_seed(const struct ext4 *e, uint64_t ino, uint32_t gen)
{
	uint8_t b[4] = { (uint8_t)ino, (uint8_t)(ino >> 8), (uint8_t)(ino >> 16), (uint8_t)(ino >> 24) };
	uint32_t c = sweep__crc32c(e->csum_seed, b, 4);
	uint8_t g[4] = { (uint8_t)gen, (uint8_t)(gen >> 8), (uint8_t)(gen >> 16), (uint8_t)(gen >> 24) };
	return sweep__crc32c(c, g, 4);
}

/* ext4_inode_csum: the inode with both checksum halves read as zero. */
static bool inode_csum_ok(const struct ext4 *e, const uint8_t *raw, uint32_t seed, unsigned extra)
{
	static const uint8_t zero[2];
	bool has_hi = e->isize > GOOD_OLD_INODE_SIZE && GOOD_OLD_INODE_SIZE + extra >= I_CSUM_HI + 2;
	uint32_t c = sweep__crc32c(seed, raw, I_CSUM_LO);
	c = sweep__crc32c(c, zero, 2);
	c = sweep__crc32c(c, raw + I_CSUM_LO + 2, GOOD_OLD_INODE_SIZE - I_CSUM_LO - 2);
	if (e->isize > GOOD_OLD_INODE_SIZE) {
		size_t off = I_CSUM_HI;
		c = sweep__crc32c(c, raw + GOOD_OLD_INODE_SIZE, I_CSUM_HI - GOOD_OLD_INODE_SIZE);
		if (has_hi) {
			c = sweep__crc32c(c, zero, 2);
			off += 2;
		}
		c = sweep__crc32c(c, raw + off, e->isize - off);
	}
	uint32_t stored = sweep__le16(raw + I_CSUM_LO);
	if (has_hi)
		stored |= (uint32_t)sweep__le16(raw + I_CSUM_HI) << 16;
	else
		c &= 0xFFFF;
	return c == stored;
}

/* Parse one raw inode into h; queue a tree walk when its first block is not in the inode. */
static void parse_inode(struct sweep__ms_scan *s, struct sweep__inode_hint *h, const uint8_t *raw)
{
	const struct ext4 *e = s->fsdata;
	uint32_t mode = sweep__le16(raw + 0x0);
	uint32_t links = sweep__le16(raw + 0x1A);
	uint32_t iflags = sweep__le32(raw + 0x20);
	uint32_t gen = sweep__le32(raw + 0x64);
	unsigned extra = 0;

	if (mode == 0 || links == 0) {
		h->why = SWEEP__HINT_FREE;
		return;
	}
	if (e->isize > GOOD_OLD_INODE_SIZE) {
		extra = sweep__le16(raw + 0x80);
		if (extra > e->isize - GOOD_OLD_INODE_SIZE || (extra & 3)) {
			h->why = SWEEP__HINT_CORRUPT;
			return;
		}
	}
	uint32_t seed = 0;
	if (e->metadata_csum && e->check_csum) {
		seed = inode_seed(e, h->ino, gen);
		if (!inode_csum_ok(e, raw, seed, extra)) {
			h->why = SWEEP__HINT_BADCSUM;
			return;
		}
		h->flags |= SWEEP__HINT_CSUM;
	}
	if (!sweep__ms_type_ok(mode)) {
		h->why = SWEEP__HINT_CORRUPT;
		return;
	}
	uint64_t size = sweep__le32(raw + 0x4);
	if (S_ISREG(mode) || e->largedir)
		size |= (uint64_t)sweep__le32(raw + 0x6C) << 32;
	if (size > (uint64_t)INT64_MAX) {
		h->why = SWEEP__HINT_CORRUPT;
		return;
	}
	h->mode = mode;
	h->nlink = links;
	h->gen = gen;
	h->size = size;
	h->flags |= SWEEP__HINT_VALID;
	h->why = SWEEP__HINT_OK;

	const uint8_t *ib = raw + 0x28;
	if (!S_ISREG(mode) && !S_ISDIR(mode) && !S_ISLNK(mode)) {
		set_no_phys(h); /* i_block holds a device number, or nothing */
		return;
	}
	if (iflags & EXT4_INLINE_DATA_FL) {
		set_no_phys(h);
		h->flags |= SWEEP__HINT_INLINE;
		return;
	}
	if (S_ISLNK(mode)) {
		/* ext4_inode_is_fast_symlink: no blocks but an xattr block's */
		uint64_t blocks = sweep__le32(raw + 0x1C);
		uint64_t acl = sweep__le32(raw + 0x68) | (uint64_t)sweep__le16(raw + 0x76) << 32;
		if (e->huge_file)
			blocks |= (uint64_t)sweep__le16(raw + 0x74) << 32;
		if (blocks == (acl ? e->cluster_sectors : 0)) {
			set_no_phys(h);
			h->flags |= SWEEP__HINT_INLINE;
			return;
		}
	}
	struct pend p = { .extents = (iflags & EXT4_EXTENTS_FL) != 0, .csum_seed = seed };
	memcpy(p.root, ib, sizeof(p.root));
	if (p.extents && sweep__le16(ib) != EXT_MAGIC) {
		/* the kernel refuses such an inode (ext4_ext_check_inode) */
		h->flags &= (uint16_t)~SWEEP__HINT_VALID;
		h->why = SWEEP__HINT_CORRUPT;
		return;
	}
	if (s->all) {
		all_root(s, h, ib, p.extents, seed);
		return;
	}
	descend_root(e, &p, h);
	if (!p.h.done) {
		struct pend *q = sweep__ms_pend_add(s, h);
		if (q) {
			p.h.hint = q->h.hint;
			*q = p;
		}
	}
}

/* Inode number -> device byte, or why it has none. */
static int inode_loc(const void *fsdata, uint64_t ino, uint64_t *off)
{
	const struct ext4 *e = fsdata;
	if (ino == 0 || ino > e->inodes)
		return SWEEP__HINT_NOINO;
	uint64_t g = (ino - 1) / e->ipg, i = (ino - 1) % e->ipg;
	const struct group *gr = &e->groups[g];
	if (gr->why != SWEEP__HINT_OK)
		return gr->why;
	if (i >= gr->used)
		return SWEEP__HINT_UNINIT;
	*off = (gr->itable << e->log_bsize) + i * e->isize;
	return SWEEP__HINT_OK;
}

static void ext4_prepare(struct sweep__metascan *m, const uint64_t *inos, size_t n)
{
	struct ext4 *e = m->fsdata;
	/* the descriptors of the groups this scan touches, as ext4 has them now */
	uint64_t lo = inos[0] ? inos[0] : 1, hi = inos[n - 1] < e->inodes ? inos[n - 1] : e->inodes;
	if (lo <= hi)
		refresh_groups(m, e, (uint32_t)((lo - 1) / e->ipg), (uint32_t)((hi - 1) / e->ipg));
}

static void ext4_scan_ops(const void *fsdata, struct sweep__ms_scan_ops *ops)
{
	const struct ext4 *e = fsdata;
	*ops = (struct sweep__ms_scan_ops){
		.inode_len = e->isize,
		.block_len = e->bsize,
		.max_rounds = MAX_ROUNDS,
		.pend_size = sizeof(struct pend),
		.loc = inode_loc,
		.inode = parse_inode,
		.block = descend_block,
	};
}

static int ext4_tables(struct sweep__metascan *m, struct sweep__ms_table **ret, size_t *ret_n)
{
	struct ext4 *e = m->fsdata;
	/* The descriptors as ext4 has them now: inodes allocated since open count too. */
	refresh_groups(m, e, 0, e->ngroups - 1);
	struct sweep__ms_table *r = malloc((e->ngroups ? e->ngroups : 1) * sizeof(*r));
	if (!r)
		return -ENOMEM;
	size_t n = 0;
	for (uint32_t g = 0; g < e->ngroups; g++) {
		const struct group *gr = &e->groups[g];
		if (gr->why != SWEEP__HINT_OK || gr->used == 0)
			continue;
		uint64_t len = (uint64_t)gr->used * e->isize;
		r[n++] = (struct sweep__ms_table){
			.dev = { gr->itable << e->log_bsize, (len + e->bsize - 1) & ~(uint64_t)(e->bsize - 1) },
			.ino = (uint64_t)g * e->ipg + 1, /* inode numbers start at 1 */
			.count = gr->used,
		};
	}
	*ret = r;
	*ret_n = n;
	return 0;
}

const struct sweep__ms_fs sweep__ms_ext4 = {
	.name = "ext4",
	.magic = 0xEF53, /* ext2 and ext3 too */
	.own_cache = false, /* its metadata cache is the block device's page cache */
	.open = ext4_open,
	.free = ext4_free,
	.block_size = ext4_block_size,
	.prepare = ext4_prepare,
	.scan_ops = ext4_scan_ops,
	.tables = ext4_tables,
};
