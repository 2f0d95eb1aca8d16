/* SPDX-License-Identifier: MIT */
/*
 * metascan for xfs: superblock, inodes (v1/v2 on v4 filesystems, v3 on v5),
 * and the first located block of a file from its data fork: the extent list
 * in the inode, or the leftmost leaf of its bmap btree, going right along
 * the leaves while they hold only unwritten extents.
 *
 * Every field read from the device is checked before it is used. The
 * layout is xfs's on-disk format (big-endian; xfs_format.h in xfsprogs and
 * the kernel); checksums are CRC32C, stored inverted and little-endian, over
 * the object with its checksum field read as zero (xfs_verify_cksum).
 *
 * An inode number encodes its place: AG number, block in the AG, index in
 * the block (sb_agblklog and sb_inopblog bits), so an ascending set of inode
 * numbers is an ascending sweep over the device.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "metascan.h"

#define XFS_SB_MAGIC 0x58465342u
#define XFS_SB_CRC_OFF 0xE0
#define XFS_SB_VERSION_NUMBITS 0xF
#define INCOMPAT_META_UUID (1u << 2)
#define INCOMPAT_NREXT64 (1u << 5)
/*
 * Incompatible features whose inodes and data forks we can read: ftype,
 * sparse inode chunks, meta_uuid, bigtime, needsrepair, nrext64,
 * exchange-range, parent pointers. Anything newer: -EOPNOTSUPP.
 */
#define INCOMPAT_KNOWN 0xFFu

#define DINODE_MAGIC 0x494E
#define DINODE_CRC_OFF 0x64
#define DINODE_V2_SIZE 100
#define DINODE_V3_SIZE 176
#define FMT_LOCAL 1
#define FMT_EXTENTS 2
#define FMT_BTREE 3
#define DIFLAG_REALTIME 0x1
#define DIFLAG2_NREXT64 (1ull << 4)

#define BMAP_MAGIC 0x424D4150u  /* "BMAP", v4 */
#define BMAP_CRC_MAGIC 0x424D4133u /* "BMA3", v5 */
#define LBLOCK_LEN 24
#define LBLOCK_CRC_LEN 72
#define LBLOCK_CRC_OFF 64
#define NULLFSBLOCK UINT64_MAX
#define MAX_BTREE_LEVEL 9

/* How many leaves of unwritten extents to follow to the right before giving up. */
#define MAX_STEPS (1u << 16)
#define MAX_ROUNDS (MAX_BTREE_LEVEL + MAX_STEPS)

struct xfs {
	uint32_t bsize;
	unsigned blocklog, agblklog, inopblog, inodelog;
	uint32_t agblocks, agcount, isize;
	uint64_t dblocks;
	bool v5, nrext64, check_csum;
	uint8_t meta_uuid[16];
};

static unsigned xfs_block_size(const void *fsdata)
{
	return ((const struct xfs *)fsdata)->bsize;
}

static void xfs_free(void *fsdata)
{
	free(fsdata);
}

static int log2_exact(uint64_t x)
{
	if (!x || (x & (x - 1)))
		return -1;
	return __builtin_ctzll(x);
}

/* ~crc32c(~0) of len bytes with the 4 at crc_off read as zero, as xfs stores it. */
static uint32_t xfs_cksum(const uint8_t *p, size_t len, size_t crc_off)
{
	static const uint8_t zero[4];
	uint32_t c = sweep__crc32c(~0u, p, crc_off);
	c = sweep__crc32c(c, zero, 4);
	c = sweep__crc32c(c, p + crc_off + 4, len - crc_off - 4);
	return ~c;
}

static int parse_super(struct xfs *x, const uint8_t *sb, size_t sectsize, uint64_t dev_size, unsigned flags)
{
	uint16_t version = sweep__be16(sb + 0x64) & XFS_SB_VERSION_NUMBITS;
	if (version != 4 && version != 5)
		return -EOPNOTSUPP;
	x->v5 = version == 5;
	x->bsize = sweep__be32(sb + 0x4);
	x->dblocks = sweep__be64(sb + 0x8);
	x->agblocks = sweep__be32(sb + 0x54);
	x->agcount = sweep__be32(sb + 0x58);
	x->isize = sweep__be16(sb + 0x68);
	uint32_t inopblock = sweep__be16(sb + 0x6A);
	x->blocklog = sb[0x78];
	x->inodelog = sb[0x7A];
	x->inopblog = sb[0x7B];
	x->agblklog = sb[0x7C];

	if (x->bsize < 512 || x->bsize > 65536 || log2_exact(x->bsize) != (int)x->blocklog)
		return -EUCLEAN;
	if (x->isize < 256 || x->isize > 2048 || log2_exact(x->isize) != (int)x->inodelog || x->isize > x->bsize)
		return -EUCLEAN;
	if (inopblock != x->bsize / x->isize || log2_exact(inopblock) != (int)x->inopblog)
		return -EUCLEAN;
	if (x->agblocks < 64 || x->agcount == 0 || x->agblklog > 31)
		return -EUCLEAN;
	/* agblklog is the bits an AG block number needs: xfs_highbit32(agblocks - 1) + 1 */
	if ((x->agblocks - 1) >> x->agblklog || (x->agblklog && !((x->agblocks - 1) >> (x->agblklog - 1))))
		return -EUCLEAN;
	if (x->agblklog + x->inopblog > 32)
		return -EUCLEAN;
	if (x->dblocks == 0 || x->dblocks > (uint64_t)x->agcount * x->agblocks ||
	    x->dblocks <= (uint64_t)(x->agcount - 1) * x->agblocks)
		return -EUCLEAN;
	if (dev_size && x->dblocks > dev_size >> x->blocklog)
		return -EUCLEAN;
	if (sb[0x7E]) /* sb_inprogress: mkfs did not finish */
		return -EUCLEAN;

	x->check_csum = !(flags & SWEEP__METASCAN_NOCSUM);
	memcpy(x->meta_uuid, sb + 0x20, 16);
	if (x->v5) {
		uint32_t incompat = sweep__be32(sb + 0xD8);
		if (incompat & ~INCOMPAT_KNOWN)
			return -EOPNOTSUPP;
		if (x->check_csum && xfs_cksum(sb, sectsize, XFS_SB_CRC_OFF) != sweep__le32(sb + XFS_SB_CRC_OFF))
			return -EBADMSG;
		if (incompat & INCOMPAT_META_UUID)
			memcpy(x->meta_uuid, sb + 0xF8, 16);
		x->nrext64 = incompat & INCOMPAT_NREXT64;
	}
	return 0;
}

static int xfs_open(struct sweep__metascan *m, void **ret)
{
	uint8_t head[512];
	int r = sweep__ms_pread(m, head, sizeof(head), 0);
	if (r < 0)
		return r == -EIO ? -ENOENT : r;
	if (sweep__be32(head) != XFS_SB_MAGIC)
		return -ENOENT;
	uint32_t sectsize = sweep__be16(head + 0x66);
	if (sectsize < 512 || sectsize > 32768 || log2_exact(sectsize) != head[0x79])
		return -EUCLEAN;
	uint8_t *sb = malloc(sectsize);
	struct xfs *x = calloc(1, sizeof(*x));
	if (!sb || !x) {
		r = -ENOMEM;
		goto fail;
	}
	if ((r = sweep__ms_pread(m, sb, sectsize, 0)) < 0)
		goto fail;
	if ((r = parse_super(x, sb, sectsize, m->dev_size, m->flags)) < 0)
		goto fail;
	free(sb);
	*ret = x;
	return 0;
fail:
	free(sb);
	free(x);
	return r;
}

/* A filesystem block number (AG number and AG block) as a device byte; false when out of range. */
static bool fsb_to_byte(const struct xfs *x, uint64_t fsb, uint64_t count, uint64_t *ret)
{
	uint64_t agno = fsb >> x->agblklog, agbno = fsb & ((1ull << x->agblklog) - 1);
	if (agno >= x->agcount || agbno >= x->agblocks || count > x->agblocks - agbno)
		return false;
	uint64_t b = agno * x->agblocks + agbno;
	if (b >= x->dblocks || count > x->dblocks - b)
		return false;
	*ret = b << x->blocklog;
	return true;
}

static int inode_loc(const void *fsdata, uint64_t ino, uint64_t *off)
{
	const struct xfs *x = fsdata;
	unsigned agino_bits = x->agblklog + x->inopblog;
	uint64_t agno = ino >> agino_bits;
	uint64_t agbno = (ino >> x->inopblog) & ((1ull << x->agblklog) - 1);
	uint64_t idx = ino & ((1ull << x->inopblog) - 1);
	if (ino == 0 || agno >= x->agcount || agbno >= x->agblocks)
		return SWEEP__HINT_NOINO;
	uint64_t b = agno * x->agblocks + agbno;
	if (b >= x->dblocks)
		return SWEEP__HINT_NOINO;
	*off = (b << x->blocklog) + (idx << x->inodelog);
	return SWEEP__HINT_OK;
}

/* A file whose first extent is in its bmap btree. */
struct pend {
	struct sweep__ms_pend h; /* h.byte: the block to read */
	uint16_t level;          /* its expected level */
	uint32_t steps;          /* leaves followed to the right */
};

enum rec_res { R_FOUND, R_NONE, R_BAD };

/* The first written extent among n packed bmbt records (whole: they are the file's entire map). */
static int first_written(const struct xfs *x, const uint8_t *r, uint64_t n, bool whole, struct sweep__inode_hint *h)
{
	uint64_t prev_end = 0;
	for (uint64_t i = 0; i < n; i++, r += 16) {
		uint64_t l0 = sweep__be64(r), l1 = sweep__be64(r + 8);
		bool unwritten = l0 >> 63;
		uint64_t startoff = (l0 & ((1ull << 63) - 1)) >> 9;
		uint64_t startblock = (l0 & 0x1FF) << 43 | l1 >> 21;
		uint64_t count = l1 & ((1ull << 21) - 1);
		if (startoff < prev_end)
			return R_BAD; /* out of order or overlapping */
		prev_end = startoff + count;
		if (unwritten || count == 0)
			continue;
		uint64_t byte;
		if (!fsb_to_byte(x, startblock, count, &byte))
			return R_BAD;
		h->flags |= SWEEP__HINT_PHYS;
		h->phys = byte;
		h->phys_len = count << x->blocklog;
		if (whole && n == 1 && startoff == 0)
			h->flags |= SWEEP__HINT_ONE_EXTENT;
		return R_FOUND;
	}
	return R_NONE;
}

/* ALL mode: every written extent among n packed bmbt records; false on a bad one. */
static bool all_written(struct sweep__ms_scan *s, const uint8_t *r, uint64_t n)
{
	const struct xfs *x = s->fsdata;
	for (uint64_t i = 0; i < n; i++, r += 16) {
		uint64_t l0 = sweep__be64(r), l1 = sweep__be64(r + 8);
		uint64_t startblock = (l0 & 0x1FF) << 43 | l1 >> 21, count = l1 & ((1ull << 21) - 1), byte;
		if (l0 >> 63 || count == 0)
			continue;
		if (!fsb_to_byte(x, startblock, count, &byte))
			return false;
		sweep__ms_range_add(s, byte, count << x->blocklog);
	}
	return true;
}

/* A pending read of the btree block at fsb, of the given level; false when fsb is out of range or no room. */
static bool pend_block(struct sweep__ms_scan *s, struct sweep__inode_hint *h, uint64_t fsb, unsigned level)
{
	struct pend *p;
	uint64_t byte;
	if (!fsb_to_byte(s->fsdata, fsb, 1, &byte) || !(p = sweep__ms_pend_add(s, h)))
		return false;
	p->h.byte = byte;
	p->level = (uint16_t)level;
	return true;
}

static void set_no_phys(struct sweep__inode_hint *h)
{
	h->flags |= SWEEP__HINT_PHYS;
	h->phys = SWEEP_NO_PHYS;
	h->phys_len = 0;
}

static void invalid(struct sweep__inode_hint *h, int why)
{
	h->flags &= (uint16_t)~(SWEEP__HINT_VALID | SWEEP__HINT_PHYS);
	h->why = (uint16_t)why;
}

static void parse_inode(struct sweep__ms_scan *s, struct sweep__inode_hint *h, const uint8_t *raw)
{
	const struct xfs *x = s->fsdata;
	unsigned version = raw[4];

	if (sweep__be16(raw) != DINODE_MAGIC || version < 1 || version > 3 || x->v5 != (version == 3)) {
		h->why = SWEEP__HINT_CORRUPT;
		return;
	}
	if (version == 3) {
		if (x->check_csum) {
			if (xfs_cksum(raw, x->isize, DINODE_CRC_OFF) != sweep__le32(raw + DINODE_CRC_OFF)) {
				h->why = SWEEP__HINT_BADCSUM;
				return;
			}
			h->flags |= SWEEP__HINT_CSUM;
		}
		if (sweep__be64(raw + 0x98) != h->ino || memcmp(raw + 0xA0, x->meta_uuid, 16) != 0) {
			invalid(h, SWEEP__HINT_CORRUPT);
			return;
		}
	}
	uint32_t mode = sweep__be16(raw + 0x2);
	uint32_t nlink = version == 1 ? sweep__be16(raw + 0x6) : sweep__be32(raw + 0x10);
	if (mode == 0 || nlink == 0) {
		invalid(h, SWEEP__HINT_FREE);
		return;
	}
	uint64_t size = sweep__be64(raw + 0x38);
	if (!sweep__ms_type_ok(mode) || size > (uint64_t)INT64_MAX) {
		invalid(h, SWEEP__HINT_CORRUPT);
		return;
	}
	unsigned core = version == 3 ? DINODE_V3_SIZE : DINODE_V2_SIZE;
	unsigned lit = x->isize - core, forkoff = raw[0x52];
	unsigned dsize = forkoff ? forkoff * 8u : lit;
	if (dsize > lit) {
		invalid(h, SWEEP__HINT_CORRUPT);
		return;
	}
	h->mode = mode;
	h->nlink = nlink;
	h->size = size;
	h->gen = sweep__be32(raw + 0x5C);
	h->flags |= SWEEP__HINT_VALID;
	h->why = SWEEP__HINT_OK;

	if (!S_ISREG(mode) && !S_ISDIR(mode) && !S_ISLNK(mode)) {
		set_no_phys(h);
		return;
	}
	if (S_ISREG(mode) && (sweep__be16(raw + 0x5A) & DIFLAG_REALTIME))
		return; /* its extents are on the realtime device: location unknown here */
	const uint8_t *fork = raw + core;
	switch (raw[5]) {
	case FMT_LOCAL:
		if (S_ISREG(mode)) {
			invalid(h, SWEEP__HINT_CORRUPT); /* xfs has no local regular files */
			return;
		}
		set_no_phys(h);
		h->flags |= SWEEP__HINT_INLINE;
		return;
	case FMT_EXTENTS: {
		uint64_t nextents = (version == 3 && x->nrext64 && (sweep__be64(raw + 0x78) & DIFLAG2_NREXT64))
					    ? sweep__be64(raw + 0x18)
					    : sweep__be32(raw + 0x4C);
		if (nextents > dsize / 16) {
			invalid(h, SWEEP__HINT_CORRUPT);
			return;
		}
		if (s->all) {
			all_written(s, fork, nextents);
			return;
		}
		int r = first_written(x, fork, nextents, true, h);
		if (r == R_NONE)
			set_no_phys(h);
		else if (r == R_BAD)
			invalid(h, SWEEP__HINT_CORRUPT);
		return;
	}
	case FMT_BTREE: {
		/* xfs_bmdr_block: level, numrecs, then maxrecs keys and maxrecs pointers */
		unsigned level = sweep__be16(fork), numrecs = sweep__be16(fork + 2);
		unsigned maxrecs = dsize >= 4 ? (dsize - 4) / 16 : 0;
		uint64_t byte;
		if (level == 0 || level > MAX_BTREE_LEVEL || numrecs == 0 || numrecs > maxrecs ||
		    !fsb_to_byte(x, sweep__be64(fork + 4 + 8 * (size_t)maxrecs), 1, &byte)) {
			invalid(h, SWEEP__HINT_CORRUPT);
			return;
		}
		if (s->all) {
			for (unsigned i = 0; i < numrecs; i++)
				if (!pend_block(s, h, sweep__be64(fork + 4 + 8 * ((size_t)maxrecs + i)), level - 1))
					break;
			return;
		}
		struct pend *p = sweep__ms_pend_add(s, h);
		if (p) {
			p->h.byte = byte;
			p->level = (uint16_t)(level - 1);
		}
		return;
	}
	default:
		invalid(h, SWEEP__HINT_CORRUPT);
		return;
	}
}

/* One bmap btree block of the file whose hint is h (NULL b: unreadable). */
static void parse_block(struct sweep__ms_scan *s, struct sweep__ms_pend *pp, struct sweep__inode_hint *h,
			const uint8_t *b)
{
	const struct xfs *x = s->fsdata;
	struct pend *p = (struct pend *)pp;
	unsigned hdr = x->v5 ? LBLOCK_CRC_LEN : LBLOCK_LEN;
	p->h.done = 1;
	if (!b || sweep__be32(b) != (x->v5 ? BMAP_CRC_MAGIC : BMAP_MAGIC) || sweep__be16(b + 4) != p->level)
		goto bad;
	if (x->v5) {
		if (x->check_csum && xfs_cksum(b, x->bsize, LBLOCK_CRC_OFF) != sweep__le32(b + LBLOCK_CRC_OFF))
			goto bad;
		if (sweep__be64(b + 24) != p->h.byte >> 9 || memcmp(b + 40, x->meta_uuid, 16) != 0 ||
		    sweep__be64(b + 56) != h->ino)
			goto bad;
	}
	unsigned numrecs = sweep__be16(b + 6), maxrecs = (x->bsize - hdr) / 16;
	if (numrecs > maxrecs)
		goto bad;
	if (s->all) {
		/*
		 * Every child of a node, every extent of a leaf; the leaves are all
		 * reached from above. Adding records may move the array: p is not
		 * used after the first.
		 */
		unsigned level = p->level;
		if (level == 0)
			all_written(s, b + hdr, numrecs);
		for (unsigned i = 0; level > 0 && i < numrecs; i++)
			if (!pend_block(s, h, sweep__be64(b + hdr + 8 * ((size_t)maxrecs + i)), level - 1))
				break;
		return;
	}
	if (p->level > 0) {
		if (numrecs == 0 || !fsb_to_byte(x, sweep__be64(b + hdr + 8 * (size_t)maxrecs), 1, &p->h.byte))
			goto bad;
		p->level--;
		p->h.done = 0;
		return;
	}
	int r = first_written(x, b + hdr, numrecs, false, h);
	if (r == R_FOUND)
		return;
	if (r == R_BAD)
		goto bad;
	uint64_t right = sweep__be64(b + 16);
	if (right == NULLFSBLOCK) {
		set_no_phys(h);
		return;
	}
	if (++p->steps >= MAX_STEPS || !fsb_to_byte(x, right, 1, &p->h.byte))
		goto bad;
	p->h.done = 0;
	return;
bad:
	/* the inode stays valid; only its location is unknown */
	h->flags &= (uint16_t)~(SWEEP__HINT_PHYS | SWEEP__HINT_CSUM);
}

static void xfs_scan_ops(const void *fsdata, struct sweep__ms_scan_ops *ops)
{
	const struct xfs *x = fsdata;
	*ops = (struct sweep__ms_scan_ops){
		.inode_len = x->isize,
		.block_len = x->bsize,
		.max_rounds = MAX_ROUNDS,
		.pend_size = sizeof(struct pend),
		.loc = inode_loc,
		.inode = parse_inode,
		.block = parse_block,
	};
}

const struct sweep__ms_fs sweep__ms_xfs = {
	.name = "xfs",
	.magic = 0x58465342,
	.own_cache = true,
	.cache_sweep = sweep__xfs_bulkstat_sweep,
	.dirs_read_ahead = sweep__xfs_dirs_read_ahead_start,
	.dirs_read_ahead_add = sweep__xfs_dirs_read_ahead_add,
	.dirs_read_ahead_end = sweep__xfs_dirs_read_ahead_end,
	.open = xfs_open,
	.free = xfs_free,
	.block_size = xfs_block_size,
	.scan_ops = xfs_scan_ops,
};
