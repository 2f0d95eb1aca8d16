#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Read NUL-separated directory paths on stdin; print every located extent
of their data as FIEMAP says, as device byte ranges sorted by offset with
touching ones merged ("range OFFSET LENGTH" lines): what the metadata
engine's sweep__metascan_dir_blocks must find from the inode tables."""
import fcntl
import os
import struct
import sys

FS_IOC_FIEMAP = 0xC020660B
HDR = struct.Struct("=QQIIII")
EXT = struct.Struct("=QQQQQIIII")
LAST = 0x1
# unknown, delalloc, encoded, not aligned, data inline, unwritten: no usable location
NOLOC = 0x2 | 0x4 | 0x8 | 0x100 | 0x200 | 0x800


def extents(path):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        start = 0
        while True:
            buf = bytearray(HDR.size + EXT.size * 64)
            HDR.pack_into(buf, 0, start, 0xFFFFFFFFFFFFFFFF - start, 0, 0, 64, 0)
            fcntl.ioctl(fd, FS_IOC_FIEMAP, buf)
            n = HDR.unpack_from(buf, 0)[3]
            if n == 0:
                return
            for i in range(n):
                lo, ph, ln, _, _, fl, _, _, _ = EXT.unpack_from(buf, HDR.size + i * EXT.size)
                if not fl & NOLOC:
                    yield ph, ln
                start = lo + ln
                if fl & LAST:
                    return
    finally:
        os.close(fd)


def main():
    ranges = []
    for p in sys.stdin.buffer.read().split(b"\0"):
        if p:
            ranges.extend(extents(p))
    ranges.sort()
    merged = []
    for off, ln in ranges:
        if merged and off <= merged[-1][0] + merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], off + ln - merged[-1][0])
        else:
            merged.append([off, ln])
    for off, ln in merged:
        print(f"range {off} {ln}")


main()
