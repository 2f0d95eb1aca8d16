/* SPDX-License-Identifier: MIT */
/*
 * The one rule for size-versioned structs (see lib/common/internal.h). Its own
 * file so that libsweep and libsweep-sim link the same copy (a static
 * helper library, hidden in both).
 */
#include <string.h>

#include "internal.h"

int sweep__opts_copy(void *dst, size_t dst_size, const void *src, size_t min_size)
{
	size_t src_size;

	memset(dst, 0, dst_size);
	if (src) {
		memcpy(&src_size, src, sizeof(src_size));
		if (src_size < min_size || src_size < sizeof(size_t))
			return -EINVAL;
		for (size_t i = dst_size; i < src_size; i++)
			if (((const unsigned char *)src)[i])
				return -E2BIG;
		memcpy(dst, src, src_size < dst_size ? src_size : dst_size);
	}
	memcpy(dst, &dst_size, sizeof(dst_size));
	return 0;
}
