/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for lib/metascan's parsers (built only with clang, see
 * meson.build). The input is not an image: a random image never gets past a
 * magic number. It is a list of edits to one of the crafted images of
 * images.c, which hold every mapping class: byte 0 picks the image (bit 0)
 * and whether checksums are checked (bit 1; mostly off, so edits reach the
 * parsers); then 4 bytes per edit: which metadata block, the offset in it
 * (2 bytes), and a value to XOR there. Every hint and range must stay
 * within what a valid inode could hold; ASan and UBSan watch the rest.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "metascan.h"
#include "images.h"

#define MAX_EDITS 64

struct base {
	struct img img;
	int fd; /* a memfd holding the image, edited in place and restored */
	const uint64_t *blocks; /* the blocks holding metadata: where edits go */
	size_t nblocks;
	uint64_t ino0, ino1; /* the inodes to ask for */
};

static const uint64_t ext4_blocks[] = { 0, 1, 4, 5, 400, 401, 402, 700 };
static const uint64_t xfs_blocks[] = { 0, X_CHUNK, 300, 301, 302, 303, 304, 305 };
static struct base bases[2];

static void setup(void)
{
	bases[0] = (struct base){ ext4_image(), -1, ext4_blocks, sizeof(ext4_blocks) / sizeof(ext4_blocks[0]), 0, 70 };
	bases[1] = (struct base){ xfs_image(), -1, xfs_blocks, sizeof(xfs_blocks) / sizeof(xfs_blocks[0]), 60, 80 };
	for (int i = 0; i < 2; i++) {
		bases[i].fd = memfd_create("fuzz-metascan", MFD_CLOEXEC);
		if (bases[i].fd < 0 || write(bases[i].fd, bases[i].img.b, bases[i].img.size) != (ssize_t)bases[i].img.size)
			abort();
	}
}

static void check(bool ok)
{
	if (!ok)
		abort(); /* a finding: libFuzzer keeps the input */
}

static void sane(const struct sweep__inode_hint *h, uint64_t dev_size, unsigned bs)
{
	bool valid = h->flags & SWEEP__HINT_VALID, phys = h->flags & SWEEP__HINT_PHYS;
	check(valid == (h->why == SWEEP__HINT_OK) && h->why <= SWEEP__HINT_EIO);
	check(valid || !(h->flags & (SWEEP__HINT_PHYS | SWEEP__HINT_ONE_EXTENT)));
	check(!valid || h->size <= (uint64_t)INT64_MAX);
	if (phys && h->phys != SWEEP_NO_PHYS)
		check(h->phys % bs == 0 && h->phys_len > 0 && h->phys_len % bs == 0 && h->phys_len <= dev_size &&
		      h->phys <= dev_size - h->phys_len);
	else
		check(h->phys == SWEEP_NO_PHYS && h->phys_len == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	if (!ready) {
		setup();
		ready = true;
	}
	if (size < 1)
		return 0;
	struct base *b = &bases[data[0] & 1];
	unsigned flags = (data[0] & 2) ? 0 : SWEEP__METASCAN_NOCSUM;
	off_t where[MAX_EDITS];
	size_t nedit = 0;
	for (size_t i = 1; i + 4 <= size && nedit < MAX_EDITS; i += 4) {
		uint64_t blk = b->blocks[data[i] % b->nblocks];
		off_t off = (off_t)(blk * 4096 + ((size_t)data[i + 1] << 8 | data[i + 2]) % 4096);
		uint8_t v = b->img.b[off] ^ data[i + 3];
		if (pwrite(b->fd, &v, 1, off) != 1)
			abort();
		where[nedit++] = off;
	}
	struct sweep__metascan *m = NULL;
	if (sweep__metascan_open_dev(b->fd, flags, &m) == 0) {
		uint64_t inos[32];
		struct sweep__inode_hint h[32];
		size_t n = 0;
		for (uint64_t ino = b->ino0; ino <= b->ino1 && n < 32; ino++)
			inos[n++] = ino;
		int v = sweep__metascan_inodes(m, inos, n, h);
		check(v >= 0 && (size_t)v <= n);
		for (size_t i = 0; i < n; i++)
			sane(&h[i], b->img.size, sweep__metascan_block_size(m));
		struct sweep__dev_range *r = NULL;
		size_t nr = 0;
		check(sweep__metascan_ranges(m, inos, n, &r, &nr) == 0);
		for (size_t i = 0; i < nr; i++)
			check(r[i].len > 0 && r[i].off + r[i].len <= b->img.size && (i == 0 || r[i].off > r[i - 1].off));
		free(r);
		sweep__metascan_free(m);
	}
	for (size_t i = nedit; i-- > 0;)
		if (pwrite(b->fd, b->img.b + where[i], 1, where[i]) != 1)
			abort();
	return 0;
}
