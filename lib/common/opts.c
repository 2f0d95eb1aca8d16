/* SPDX-License-Identifier: MIT */
/*
 * The one rule for size-versioned structs, those a caller passes in and
 * those the library fills (see lib/common/internal.h). Its own
 * file so that libsweep and libsweep-sim link the same copy (a static
 * helper library, hidden in both).
 */
#include <string.h>

#include "internal.h"

/* A size past this was never set (an uninitialised struct): -E2BIG, and no byte past the struct is read. */
#define SIZE_SANE 4096u

int sweep__opts_copy(void *dst, size_t dst_size, const void *src, size_t min_size)
{
	size_t src_size;

	memset(dst, 0, dst_size);
	if (src) {
		memcpy(&src_size, src, sizeof(src_size));
		if (src_size < min_size || src_size < sizeof(size_t))
			return -EINVAL;
		if (src_size > SIZE_SANE && src_size > dst_size)
			return -E2BIG;
		for (size_t i = dst_size; i < src_size; i++)
			if (((const unsigned char *)src)[i])
				return -E2BIG;
		memcpy(dst, src, src_size < dst_size ? src_size : dst_size);
	}
	memcpy(dst, &dst_size, sizeof(dst_size));
	return 0;
}

int sweep__out_begin(void *scratch, size_t full_size, const void *ret, size_t min_size)
{
	if (!ret)
		return -EINVAL;
	int r = sweep__opts_copy(scratch, full_size, ret, min_size);
	memset(scratch, 0, full_size);
	return r;
}

void sweep__out_put(void *ret, const void *full, size_t full_size)
{
	size_t n;

	memcpy(&n, ret, sizeof(n));
	if (n > full_size)
		n = full_size;
	memcpy((char *)ret + sizeof(size_t), (const char *)full + sizeof(size_t), n - sizeof(size_t));
}
