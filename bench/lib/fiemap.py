# SPDX-License-Identifier: MIT
"""FIEMAP from Python, for the fragmentation summary (no filefrag process per file)."""
import fcntl
import os
import struct

FS_IOC_FIEMAP = 0xC020660B
_HDR = struct.Struct("=QQIIII")            # struct fiemap
_EXT = struct.Struct("=QQQQQIIII")         # struct fiemap_extent (56 bytes)
# Extents with these flags carry no usable location (UNKNOWN, DELALLOC, ENCODED,
# DATA_INLINE, NOT_ALIGNED, UNWRITTEN), as in doc/design.md's extent module.
_NOLOC = 0x2 | 0x4 | 0x8 | 0x200 | 0x100 | 0x800
_LAST = 0x1
_BATCH = 64


def extents(fd):
    """[(logical, physical, length)] of located extents, physically-contiguous
    neighbours merged (ext4 splits long runs at 128 MiB; that is not fragmentation)."""
    out = []
    start = 0
    while True:
        buf = bytearray(_HDR.size + _EXT.size * _BATCH)
        _HDR.pack_into(buf, 0, start, 0xFFFFFFFFFFFFFFFF - start, 0, 0, _BATCH, 0)
        fcntl.ioctl(fd, FS_IOC_FIEMAP, buf)
        n = _HDR.unpack_from(buf, 0)[3]
        if n == 0:
            break
        last = False
        for i in range(n):
            lo, ph, ln, _, _, fl, _, _, _ = _EXT.unpack_from(buf, _HDR.size + i * _EXT.size)
            start = lo + ln
            if fl & _LAST:
                last = True
            if fl & _NOLOC:
                continue
            if out and out[-1][1] + out[-1][2] == ph and out[-1][0] + out[-1][2] == lo:
                p = out[-1]
                out[-1] = (p[0], p[1], p[2] + ln)
            else:
                out.append((lo, ph, ln))
        if last:
            break
    return out


def file_extents(path):
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NOATIME)
    try:
        return extents(fd)
    finally:
        os.close(fd)
