/* SPDX-License-Identifier: MIT */
/*
 * The checksums ext4 and xfs put on their metadata: CRC32C, chained without
 * pre- or post-inversion (the callers do that as each format wants), and the
 * CRC16 of ext4's older gdt_csum. A million inodes of 256 bytes are 256 MB
 * of CRC32C per scan, so the SSE4.2 instruction is used where the CPU has
 * it (about 10x the table's speed); the table (slicing by 8) elsewhere.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "metascan.h"

#define CRC32C_POLY 0x82F63B78u /* reflected Castagnoli */

static uint32_t crc32c_table[8][256];
static uint16_t crc16_table[256];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;
static int have_hw;

static void tables_init(void)
{
	for (unsigned i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (CRC32C_POLY & (0u - (c & 1)));
		crc32c_table[0][i] = c;
		uint16_t d = (uint16_t)i;
		for (int k = 0; k < 8; k++)
			d = (uint16_t)((d >> 1) ^ (0xA001 & (0u - (d & 1))));
		crc16_table[i] = d;
	}
	for (unsigned i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc32c_table[t][i] = (crc32c_table[t - 1][i] >> 8) ^ crc32c_table[0][crc32c_table[t - 1][i] & 0xFF];
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	__builtin_cpu_init();
	have_hw = __builtin_cpu_supports("sse4.2");
#endif
}

static uint32_t crc32c_sw(uint32_t crc, const uint8_t *p, size_t len)
{
	while (len && ((uintptr_t)p & 7)) {
		crc = crc32c_table[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
		len--;
	}
	while (len >= 8) {
		uint32_t lo = crc ^ sweep__le32(p), hi = sweep__le32(p + 4);
		crc = crc32c_table[7][lo & 0xFF] ^ crc32c_table[6][(lo >> 8) & 0xFF] ^
		      crc32c_table[5][(lo >> 16) & 0xFF] ^ crc32c_table[4][lo >> 24] ^
		      crc32c_table[3][hi & 0xFF] ^ crc32c_table[2][(hi >> 8) & 0xFF] ^
		      crc32c_table[1][(hi >> 16) & 0xFF] ^ crc32c_table[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = crc32c_table[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
	return crc;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("sse4.2"))) static uint32_t crc32c_hw(uint32_t crc, const uint8_t *p, size_t len)
{
	uint64_t c = crc;
	while (len >= 8) {
		uint64_t v;
		memcpy(&v, p, 8); /* x86 is little-endian, as the CRC wants */
		c = __builtin_ia32_crc32di(c, v);
		p += 8;
		len -= 8;
	}
	uint32_t c32 = (uint32_t)c;
	while (len--)
		c32 = __builtin_ia32_crc32qi(c32, *p++);
	return c32;
}
#endif

uint32_t sweep__crc32c(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&tables_once, tables_init);
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	if (have_hw)
		return crc32c_hw(crc, buf, len);
#endif
	return crc32c_sw(crc, buf, len);
}

uint16_t sweep__crc16(uint16_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	pthread_once(&tables_once, tables_init);
	while (len--)
		crc = (uint16_t)((crc >> 8) ^ crc16_table[(crc ^ *p++) & 0xFF]);
	return crc;
}

uint32_t sweep__crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&tables_once, tables_init);
	return crc32c_sw(crc, buf, len);
}
