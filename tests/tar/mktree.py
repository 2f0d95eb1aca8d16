#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Build a tree with every kind of entry sweep-tar must carry.

    mktree.py DIR [--deep]

DIR/tree gets names of any bytes and length, modes, owners, nanosecond
times, empty directories, symlinks, hard links, FIFOs, devices (root),
sparse files, xattrs (user.*; trusted.* and security.* as root) and POSIX
ACLs, access and default. With --deep, DIR/deep holds a path longer than
PATH_MAX. A unix socket DIR/tree/sock is made too: tar skips sockets.
"""
import os
import random
import socket
import stat
import subprocess
import sys

ROOT = os.geteuid() == 0
rnd = random.Random(6)


def data(n):
    return bytes(rnd.getrandbits(8) for _ in range(n)) if n < 4096 else os.urandom(n)


def write(path, content, mode=0o644):
    with open(path, "wb") as f:
        f.write(content)
    os.chmod(path, mode)


def xattr(path, name, value, follow=True):
    os.setxattr(path, name, value, follow_symlinks=follow)


def main():
    top = os.fsencode(sys.argv[1])
    t = os.path.join(top, b"tree")
    os.makedirs(t)
    os.chdir(t)

    # Names: every byte but '/' and NUL, newlines, long ones.
    os.mkdir(b"names")
    for n in [b"plain", b"with space", b"nl\nname", b"tab\tname", b"back\\slash", b"quote'\"",
              b"lat1-\xe9t\xe9", "utf8-na\u00efve-\u6f22\u5b57".encode(), b"-dash", b"*glob?[x]",
              b"trailing.", b"x" * 100, b"y" * 101, b"z" * 155, b"w" * 255, b"\x7f\x1b[31m",
              bytes(range(1, 47)) + bytes(range(48, 128)), bytes(range(128, 256))]:
        write(os.path.join(b"names", n), n)
    # A path of over 255 bytes in components of 100 (ustar's prefix/name split cannot hold it).
    long_dir = os.path.join(b"names", b"d" * 100, b"e" * 100, b"f" * 100)
    os.makedirs(long_dir)
    write(os.path.join(long_dir, b"g" * 120), b"long path\n")

    # Contents and sizes around block boundaries.
    os.mkdir(b"sizes")
    for n in [0, 1, 511, 512, 513, 10240, 65537, (1 << 20) + 7]:
        write(b"sizes/f%d" % n, data(n))

    # Modes.
    os.mkdir(b"modes")
    for m in [0o600, 0o755, 0o444, 0o4755, 0o2755, 0o000, 0o1644]:
        write(b"modes/m%o" % m, b"mode\n", m)
    os.mkdir(b"modes/sticky")
    os.chmod(b"modes/sticky", 0o1777)
    os.mkdir(b"modes/ro")
    write(b"modes/ro/inside", b"in a read-only dir\n")
    os.mkdir(b"modes/ro/sub")
    os.chmod(b"modes/ro", 0o555)
    os.mkdir(b"modes/private")
    os.chmod(b"modes/private", 0o700)

    # Owners (numbers with and without names).
    os.mkdir(b"owners")
    write(b"owners/numeric", b"1234:5678\n")
    write(b"owners/nobody", b"nobody\n")
    os.mkdir(b"owners/dir")
    if ROOT:
        os.chown(b"owners/numeric", 1234, 5678)
        os.chown(b"owners/nobody", 65534, 65534)
        os.chown(b"owners/dir", 4321, 8765)

    # Empty directories.
    os.makedirs(b"empty/nested/deeper")
    os.mkdir(b"empty2")

    # Symlinks.
    os.mkdir(b"links")
    write(b"links/target", b"target\n")
    os.symlink(b"target", b"links/rel")
    os.symlink(b"/etc/passwd", b"links/abs")
    os.symlink(b"does/not/exist", b"links/dangling")
    os.symlink(b"t" * 1000, b"links/longtarget")
    os.symlink(b"nl\ntarget", b"links/nltarget")
    os.symlink(b"../names", b"links/dirlink")

    # Hard links, across directories, one with a long name.
    os.mkdir(b"hard")
    os.mkdir(b"hard/a")
    os.mkdir(b"hard/b")
    write(b"hard/a/one", data(70000))
    os.link(b"hard/a/one", b"hard/b/two")
    os.link(b"hard/a/one", b"hard/three")
    write(b"hard/" + b"L" * 200, b"long\n")
    os.link(b"hard/" + b"L" * 200, b"hard/b/short")
    os.mkfifo(b"hard/fifo")
    os.link(b"hard/fifo", b"hard/fifo2")
    os.symlink(b"a/one", b"hard/sym")
    os.link(b"hard/sym", b"hard/sym2", follow_symlinks=False)
    # GNU tar makes a hard link to an absolute symlink through a placeholder too.
    os.link(b"links/abs", b"hard/abs2", follow_symlinks=False)

    # Specials.
    os.mkdir(b"special")
    os.mkfifo(b"special/fifo")
    if ROOT:
        os.mknod(b"special/chr", 0o644 | stat.S_IFCHR, os.makedev(1, 3))
        os.mknod(b"special/blk", 0o600 | stat.S_IFBLK, os.makedev(7, 200))
    s = socket.socket(socket.AF_UNIX)
    s.bind(b"sock")
    s.close()

    # Sparse files: holes inside, a trailing hole, nothing but a hole.
    os.mkdir(b"sparse")
    with open(b"sparse/holes", "wb") as f:
        f.write(data(4096))
        f.seek(1 << 20)
        f.write(data(8192))
        f.seek(3 << 20)
        f.write(data(4096))
        f.truncate(5 << 20)
    with open(b"sparse/allhole", "wb") as f:
        f.truncate(2 << 20)
    with open(b"sparse/lead", "wb") as f:
        f.seek(1 << 20)
        f.write(data(4096))

    # xattrs (binary and large values), and ACLs.
    os.mkdir(b"attrs")
    write(b"attrs/file", b"xattrs\n")
    xattr(b"attrs/file", "user.plain", b"value")
    xattr(b"attrs/file", "user.binary", bytes(range(256)))
    xattr(b"attrs/file", "user.big", data(3000))
    xattr(b"attrs", "user.ondir", b"dir value")
    os.symlink(b"file", b"attrs/sym")
    if ROOT:
        xattr(b"attrs/file", "trusted.t", b"trusted value")
        xattr(b"attrs/file", "security.sweep", b"security value")
        xattr(b"attrs/sym", "trusted.onlink", b"link value", follow=False)
    write(b"attrs/acl", b"acl\n", 0o640)
    subprocess.run(["setfacl", "-m", "u:1234:rw-,g:5678:r--,u:65534:r--", "attrs/acl"], check=True)
    os.mkdir(b"attrs/defacl")
    subprocess.run(["setfacl", "-m", "u:1234:rwx", "-d", "-m", "u:1234:r-x,g:5678:r-x",
                    "attrs/defacl"], check=True)
    write(b"attrs/defacl/inherits", b"inherits\n")

    if "--deep" in sys.argv:
        # Deeper than PATH_MAX: made with relative steps.
        os.makedirs(os.path.join(top, b"deep"))
        fd = os.open(os.path.join(top, b"deep"), os.O_RDONLY | os.O_DIRECTORY)
        for i in range(22):
            name = (b"%02d" % i) + b"p" * 198
            os.mkdir(name, dir_fd=fd)
            nfd = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = nfd
        f = os.open(b"bottom", os.O_WRONLY | os.O_CREAT, 0o640, dir_fd=fd)
        os.write(f, data(100000))
        os.close(f)
        os.symlink(b"bottom", b"link", dir_fd=fd)
        os.mkfifo(b"fifo", dir_fd=fd)
        os.link(b"bottom", b"bottom2", src_dir_fd=fd, dst_dir_fd=fd)
        os.setxattr("/proc/self/fd/%d/bottom" % fd, "user.deep", b"yes")
        os.close(fd)

    # A time before 1970 with a fraction: GNU tar reads it right, bsdtar 3.6 does
    # not (libarchive's pax reader bug), so the tests compare it with GNU tar only.
    os.mkdir(b"times")
    write(b"times/pre1970ns", b"1938\n")

    # Times last, with nanoseconds (after 2038 too; before 1970 in whole
    # seconds), directories bottom-up.
    times = [1234567890123456789, 1500000000000000001, -1000000000000000000, 4102444800999999999]
    entries = []
    for dirpath, dirs, files in os.walk(b".", topdown=False):
        for n in sorted(files) + sorted(dirs):
            entries.append(os.path.join(dirpath, n))
        entries.append(dirpath)
    for i, p in enumerate(entries):
        if p.endswith(b"/sock"):
            continue
        ns = times[i % len(times)] + (i if times[i % len(times)] > 0 else 0)
        if p.endswith(b"/pre1970ns"):
            ns = -1000000000123456789
        os.utime(p, ns=(ns, ns), follow_symlinks=False)


if __name__ == "__main__":
    main()
