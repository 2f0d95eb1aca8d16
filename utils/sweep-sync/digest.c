/* SPDX-License-Identifier: MIT */
/*
 * A 128-bit streaming digest for -c, in the style of MurmurHash3 x64/128
 * (two 64-bit lanes, multiply-rotate mixing, final avalanche). It only has
 * to tell apart files that differ by accident, as rsync's xxh128 does, and
 * it is fast enough not to slow a sweep down. The length is folded in at
 * the end, so files that differ only in trailing zeros still differ.
 */
#include <endian.h>
#include <string.h>

#include "sync.h"

#define C1 0x87c37b91114253d5ULL
#define C2 0x4cf5ad432745937fULL

static inline uint64_t rotl(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

static inline uint64_t fmix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return k;
}

static inline uint64_t load64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	/* little-endian on every host: the two ends of a remote transfer compare their digests */
	return le64toh(v);
}

static void block(struct digest *d, const unsigned char *p)
{
	uint64_t k1 = load64(p), k2 = load64(p + 8);

	k1 *= C1;
	k1 = rotl(k1, 31);
	k1 *= C2;
	d->h1 ^= k1;
	d->h1 = rotl(d->h1, 27);
	d->h1 += d->h2;
	d->h1 = d->h1 * 5 + 0x52dce729;
	k2 *= C2;
	k2 = rotl(k2, 33);
	k2 *= C1;
	d->h2 ^= k2;
	d->h2 = rotl(d->h2, 31);
	d->h2 += d->h1;
	d->h2 = d->h2 * 5 + 0x38495ab5;
}

void digest_init(struct digest *d)
{
	memset(d, 0, sizeof(*d));
	d->h1 = 0x9e3779b97f4a7c15ULL;
	d->h2 = 0x6a09e667f3bcc909ULL;
}

void digest_update(struct digest *d, const void *data, size_t len)
{
	const unsigned char *p = data;

	d->len += len;
	if (d->ntail) {
		size_t take = 16 - d->ntail < len ? 16 - d->ntail : len;

		memcpy(d->tail + d->ntail, p, take);
		d->ntail += take;
		p += take;
		len -= take;
		if (d->ntail < 16)
			return;
		block(d, d->tail);
		d->ntail = 0;
	}
	for (; len >= 16; p += 16, len -= 16)
		block(d, p);
	memcpy(d->tail, p, len);
	d->ntail = len;
}

void digest_final(struct digest *d, unsigned char out[16])
{
	if (d->ntail) {
		memset(d->tail + d->ntail, 0, 16 - d->ntail);
		block(d, d->tail);
	}
	d->h1 ^= d->len;
	d->h2 ^= d->len;
	d->h1 += d->h2;
	d->h2 += d->h1;
	d->h1 = fmix(d->h1);
	d->h2 = fmix(d->h2);
	d->h1 += d->h2;
	d->h2 += d->h1;
	uint64_t h1 = htole64(d->h1), h2 = htole64(d->h2);

	memcpy(out, &h1, 8);
	memcpy(out + 8, &h2, 8);
}
