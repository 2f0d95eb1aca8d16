#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""populate.py ROOT BLOCKSIZE: a tree with one file of every size and mapping class
that lib/metascan must map like FIEMAP does: empty, tiny (inline on ext4
inline_data), small, large, sparse with a hole at the start, fallocated
(unwritten) with and without written parts, heavily fragmented files (extent
tree depth > 0, xfs btree format), a fragmented file whose first leaves hold
only unwritten extents, block-mapped files with data only past the direct and
single-indirect blocks, small and large (htree) directories, fast and slow
symlinks (one with an xattr block), hard links, a FIFO, a device, a socket.
Prints nothing; fails loudly."""
import ctypes
import os
import socket
import sys

root, bs = sys.argv[1], int(sys.argv[2])
libc = ctypes.CDLL(None, use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_longlong, ctypes.c_longlong]
KEEP_SIZE, PUNCH_HOLE = 0x01, 0x02


class NoFallocate(Exception):
    """fallocate is refused here (block-mapped ext2/ext3 files take only PUNCH_HOLE)."""


def fallocate(fd, mode, off, length):
    if libc.fallocate(fd, mode, off, length) != 0:
        e = ctypes.get_errno()
        if e == 95:  # EOPNOTSUPP
            raise NoFallocate()
        raise OSError(e, os.strerror(e))


def optional(fn, *args, **kw):
    """Make a file that needs fallocate; where it is refused, leave it out."""
    try:
        fn(*args, **kw)
    except NoFallocate:
        name = args[0]
        if os.path.exists(f"{root}/{name}"):
            os.unlink(f"{root}/{name}")


def data(n, seed):
    # incompressible enough, and different per file
    block = bytes((seed * 131 + i * 7) & 0xFF for i in range(4096))
    return (block * (n // 4096 + 1))[:n]


def write(name, n, seed=1):
    with open(f"{root}/{name}", "wb") as f:
        f.write(data(n, seed))


def pwrite_at(name, offsets, size=None):
    fd = os.open(f"{root}/{name}", os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        if size is not None:
            os.ftruncate(fd, size)
        for off in offsets:
            os.pwrite(fd, data(bs, off // bs), off)
        os.fsync(fd)
    finally:
        os.close(fd)


def fragmented(name, blocks, unwritten=False, write_last=False):
    """blocks extents: every other block of 2*blocks, punched out after allocation."""
    fd = os.open(f"{root}/{name}", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if unwritten:
            fallocate(fd, 0, 0, 2 * blocks * bs)
        else:
            chunk = data(1 << 20, 3)
            left, off = 2 * blocks * bs, 0
            while left:
                n = min(left, len(chunk))
                os.pwrite(fd, chunk[:n], off)
                off += n
                left -= n
        os.fsync(fd)
        for i in range(1, 2 * blocks, 2):
            fallocate(fd, PUNCH_HOLE | KEEP_SIZE, i * bs, bs)
        if write_last:
            # the last kept block becomes written: the first located extent is in the last leaf
            os.pwrite(fd, data(bs, 9), (2 * blocks - 2) * bs)
        os.fsync(fd)
    finally:
        os.close(fd)


os.makedirs(root, exist_ok=True)
apb = bs // 4  # block pointers per indirect block (ext2/3 block maps)

write("empty", 0)
write("tiny1", 1)
write("tiny50", 50)
write("small", 3000)
write("one-block", bs)
write("medium", 300000)
write("large", 20 << 20)
pwrite_at("sparse-start", [8 << 20], size=10 << 20)
pwrite_at("sparse-end", [0], size=10 << 20)
pwrite_at("all-hole", [], size=10 << 20)
def falloc(name, mode, size, written=None):
    fd = os.open(f"{root}/{name}", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fallocate(fd, mode, 0, size)
        if written is not None:
            os.pwrite(fd, data(bs, 5), written)
        os.fsync(fd)
    finally:
        os.close(fd)


optional(falloc, "falloc-only", 0, 4 << 20)
optional(falloc, "falloc-keep-size", KEEP_SIZE, 1 << 20)
optional(falloc, "falloc-written", 0, 4 << 20, written=1 << 20)
# past the direct blocks: data only in the double-indirect range of a block map
pwrite_at("dind-only", [(12 + apb + 5) * bs])
# an indirect block that is allocated but left empty, then data further on
pwrite_at("ind-punched", [13 * bs, (12 + apb + 20) * bs])
fd = os.open(f"{root}/ind-punched", os.O_RDWR)
fallocate(fd, PUNCH_HOLE | KEEP_SIZE, 13 * bs, bs)
os.fsync(fd)
os.close(fd)
fragmented("frag", 6000)
optional(fragmented, "frag-unwritten-lead", 1500, unwritten=True, write_last=True)
optional(fragmented, "frag-all-unwritten", 300, unwritten=True)

os.mkdir(f"{root}/dempty")
os.mkdir(f"{root}/dsmall")
write("dsmall/a", 10)
write("dsmall/b", 5000)
os.mkdir(f"{root}/dlarge")
for i in range(3000):
    open(f"{root}/dlarge/entry-with-a-rather-long-name-{i:05d}", "wb").close()

os.symlink("small", f"{root}/sym-fast")
os.symlink("x" * 200, f"{root}/sym-slow")
try:
    os.symlink("y" * 3000, f"{root}/sym-long")
except OSError:
    pass  # longer than a block on 1 KiB-block ext4
os.symlink("small", f"{root}/sym-fast-xattr")
try:
    os.setxattr(f"{root}/sym-fast-xattr", "trusted.big", b"v" * min(3000, bs - 200), follow_symlinks=False)
    os.setxattr(f"{root}/small", "trusted.big", b"w" * min(3000, bs - 200))
except OSError:
    pass
os.link(f"{root}/small", f"{root}/hardlink1")
os.link(f"{root}/small", f"{root}/dsmall/hardlink2")
os.mkfifo(f"{root}/fifo")
os.mknod(f"{root}/chardev", 0o600 | 0o020000, os.makedev(1, 3))
s = socket.socket(socket.AF_UNIX)
s.bind(f"{root}/socket")
s.close()
