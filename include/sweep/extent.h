/* SPDX-License-Identifier: MIT */
/*
 * extent: where a file's data lives, as a sort key only. File contents and
 * holes always come from read() and SEEK_DATA/SEEK_HOLE, never from here.
 */
#ifndef SWEEP_EXTENT_H
#define SWEEP_EXTENT_H

#include <sweep/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Value of a physical offset that is not known. */
#define SWEEP_NO_PHYS UINT64_MAX

/* sweep_extent.flags */
#define SWEEP_EXTENT_NOLOC  0x1u /* UNKNOWN/DELALLOC/ENCODED/DATA_INLINE/NOT_ALIGNED/UNWRITTEN: no usable location */
#define SWEEP_EXTENT_LAST   0x2u /* last extent of the file */
#define SWEEP_EXTENT_SHARED 0x4u /* shared with another file (reflink) */

struct sweep_extent {
	uint64_t logical;  /* byte offset in the file */
	uint64_t physical; /* byte offset on the device, SWEEP_NO_PHYS if unknown */
	uint64_t length;   /* bytes */
	uint32_t flags;
};

/* Where the location came from. */
enum sweep_extent_source {
	SWEEP_EXTENT_FIEMAP = 1,
	SWEEP_EXTENT_FIBMAP = 2,
	SWEEP_EXTENT_NONE = 3, /* neither works: caller falls back to inode order */
};

/*
 * All extents of the open regular file fd, FIEMAP paged with fm_start and
 * without FIEMAP_FLAG_SYNC, FIBMAP as fallback. On success *ret_ext is a
 * malloc'ed array the caller frees, *ret_n its length (0 for a file with no
 * allocated data), *ret_source how it was learned. -EOPNOTSUPP when neither
 * method works on this file.
 */
SWEEP_EXPORT int sweep_extents_get(int fd, struct sweep_extent **ret_ext, size_t *ret_n,
				   enum sweep_extent_source *ret_source);

/*
 * The first usable physical byte offset of the file's data: the lowest
 * logical extent that has a location. 0 on success, -ENODATA when the file
 * has no located data (empty, inline, delalloc), -EOPNOTSUPP when neither
 * FIEMAP nor FIBMAP works. Asks only for the first few extents.
 */
SWEEP_EXPORT int sweep_extent_first(int fd, uint64_t *ret_phys);

/*
 * The data regions of an open file from SEEK_DATA/SEEK_HOLE, up to size
 * bytes: an array of (logical, length) extents with physical =
 * SWEEP_NO_PHYS, which the caller frees. A file with no holes gives one
 * region; where SEEK_DATA is not supported, the whole file is one region.
 */
SWEEP_EXPORT int sweep_data_map(int fd, uint64_t size, struct sweep_extent **ret_map, size_t *ret_n);

#ifdef __cplusplus
}
#endif
#endif
