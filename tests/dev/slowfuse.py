#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A slow device for the probe tests, with nothing but /dev/fuse: a FUSE
filesystem, spoken to in the kernel's own protocol (no libfuse), holding one
file `img` of SIZE bytes of zeros, whose server answers one read request at
a time and sleeps DELAY_MS before each answer.

    slowfuse.py MOUNTPOINT SIZE_BYTES DELAY_MS

A loop device over MOUNTPOINT/img (buffered, as losetup makes it) behaves as
a disk does: a random 4 KiB read costs a whole wait, while a sequential
stream is read ahead in 128 KiB requests and pays the wait once per request.
Runs in the foreground until MOUNTPOINT is unmounted. Root only."""
import ctypes
import errno
import os
import struct
import sys
import time

LOOKUP, FORGET, GETATTR, OPEN, READ, STATFS, RELEASE, FLUSH, INIT = 1, 2, 3, 14, 15, 17, 18, 25, 26
OPENDIR, RELEASEDIR, INTERRUPT, DESTROY, BATCH_FORGET = 27, 29, 36, 38, 42
NO_REPLY = (FORGET, BATCH_FORGET, INTERRUPT)
IN_HEADER = struct.Struct("<IIQQIIIHH")  # len opcode unique nodeid uid gid pid total_extlen padding
OUT_HEADER = struct.Struct("<IiQ")       # len error unique
ROOT, IMG = 1, 2


def attr(node, size):
    # ino size blocks atime mtime ctime atimensec mtimensec ctimensec mode nlink uid gid rdev blksize flags
    mode = 0o040755 if node == ROOT else 0o100444
    return struct.pack("<QQQQQQIIIIIIIIII", node, size if node == IMG else 0, (size + 511) // 512 if node == IMG else 0,
                       0, 0, 0, 0, 0, 0, mode, 2 if node == ROOT else 1, 0, 0, 0, 4096, 0)


def main():
    mnt, size, delay = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]) / 1000
    fd = os.open("/dev/fuse", os.O_RDWR | os.O_CLOEXEC)
    os.set_inheritable(fd, False)
    libc = ctypes.CDLL(None, use_errno=True)
    opts = f"fd={fd},rootmode=40000,user_id=0,group_id=0,allow_other".encode()
    if libc.mount(b"sweep-slowfuse", mnt.encode(), b"fuse", 6, opts) != 0:  # MS_NOSUID | MS_NODEV
        sys.exit(f"slowfuse: mount {mnt}: {os.strerror(ctypes.get_errno())}")
    zeros = bytes(1 << 20)
    while True:
        try:
            req = os.read(fd, (1 << 20) + 8192)
        except OSError as e:
            if e.errno in (errno.ENODEV, errno.EBADF):  # unmounted
                return
            if e.errno in (errno.EINTR, errno.ENOENT, errno.EAGAIN):  # an interrupted request
                continue
            raise
        ln, op, unique, node, _, _, _, _, _ = IN_HEADER.unpack_from(req)
        body = req[IN_HEADER.size:ln]
        err, out = 0, b""
        if op == INIT:
            major, minor, max_ra = struct.unpack_from("<III", body)
            # major minor max_readahead flags max_background congestion max_write time_gran
            # max_pages map_alignment flags2 max_stack_depth unused[6]
            out = struct.pack("<IIIIHHIIHHII24x", 7, 31, max_ra, 0, 1, 1, 4096, 1, 32, 0, 0, 0)
        elif op == LOOKUP:
            if node == ROOT and body.rstrip(b"\0") == b"img":
                out = struct.pack("<QQQQII", IMG, 0, 3600, 3600, 0, 0) + attr(IMG, size)
            else:
                err = -errno.ENOENT
        elif op == GETATTR:
            out = struct.pack("<QII", 3600, 0, 0) + attr(node, size)
        elif op in (OPEN, OPENDIR):
            out = struct.pack("<QII", 0, 0, 0)
        elif op == READ:
            _, off, n = struct.unpack_from("<QQI", body)
            n = max(0, min(n, size - off, len(zeros)))
            time.sleep(delay)  # one request at a time, each as slow as a seek
            out = zeros[:n]
        elif op == STATFS:
            out = struct.pack("<QQQQQIIII24x", size // 4096, 0, 0, 2, 0, 4096, 255, 4096, 0)
        elif op in (RELEASE, RELEASEDIR, FLUSH):
            pass
        elif op == DESTROY:
            os.write(fd, OUT_HEADER.pack(OUT_HEADER.size, 0, unique))
            return
        elif op in NO_REPLY:
            continue
        else:
            err = -errno.ENOSYS
        try:
            os.write(fd, OUT_HEADER.pack(OUT_HEADER.size + len(out), err, unique) + out)
        except OSError as e:
            if e.errno != errno.ENOENT:  # the request was interrupted meanwhile
                raise


if __name__ == "__main__":
    main()
