#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Read a NUL-separated list of paths on stdin; print, per path, the first
physical byte of its data as FIEMAP says (the lowest logical extent with a
location, as libsweep's sweep_extent_first does), or "-" when it has none,
then the device number. For checking sweep-order's output independently."""
import fcntl
import os
import struct
import sys

FS_IOC_FIEMAP = 0xC020660B
HDR = struct.Struct("=QQIIII")
EXT = struct.Struct("=QQQQQIIII")
NOLOC = 0x2 | 0x4 | 0x8 | 0x200 | 0x100 | 0x800


def first(path):
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        buf = bytearray(HDR.size + EXT.size * 32)
        HDR.pack_into(buf, 0, 0, 0xFFFFFFFFFFFFFFFF, 0, 0, 32, 0)
        fcntl.ioctl(fd, FS_IOC_FIEMAP, buf)
        n = HDR.unpack_from(buf, 0)[3]
        for i in range(n):
            lo, ph, ln, _, _, fl, _, _, _ = EXT.unpack_from(buf, HDR.size + i * EXT.size)
            if not fl & NOLOC:
                return ph
    except OSError:
        return None
    finally:
        os.close(fd)
    return None


def main():
    for p in sys.stdin.buffer.read().split(b"\0"):
        if not p:
            continue
        f = first(p)
        st = os.lstat(p)
        print("-" if f is None else f, st.st_dev, st.st_ino)


if __name__ == "__main__":  # tests/python imports first()
    main()
