#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Print one line per entry of a tree, for comparing two copies with diff.

usage: manifest.py [--fields=LIST] DIR

Fields (default: all): type mode owner size mtime atime data link rdev xattr
hl holes blocks. Paths are relative to DIR and sorted bytewise; 'hl' names the
first path (in that order) of each hard-linked inode, so two trees with the
same link structure print the same; 'holes' is the SEEK_DATA/SEEK_HOLE map of
a regular file and 'blocks' its allocated 512-byte blocks; 'xattr' lists every
extended attribute including the ACL ones, values in hex.
"""
import hashlib
import os
import stat
import sys

ALL = "type mode owner size mtime atime data link rdev xattr hl holes blocks".split()


def kind(m):
    for test, name in ((stat.S_ISREG, "f"), (stat.S_ISDIR, "d"), (stat.S_ISLNK, "l"),
                       (stat.S_ISFIFO, "p"), (stat.S_ISCHR, "c"), (stat.S_ISBLK, "b"),
                       (stat.S_ISSOCK, "s")):
        if test(m):
            return name
    return "?"


def holes(path, size):
    regions = []
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as e:
        return "err:%d" % e.errno
    try:
        off = 0
        while off < size:
            try:
                data = os.lseek(fd, off, os.SEEK_DATA)
            except OSError:
                break
            end = os.lseek(fd, data, os.SEEK_HOLE)
            regions.append("%d+%d" % (data, end - data))
            off = end
    finally:
        os.close(fd)
    return ",".join(regions) or "-"


def digest(path):
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    except OSError as e:
        return "err:%d" % e.errno
    return h.hexdigest()[:16]


def xattrs(path):
    try:
        names = sorted(os.listxattr(path, follow_symlinks=False))
    except OSError:
        return "-"
    out = []
    for n in names:
        try:
            v = os.getxattr(path, n, follow_symlinks=False).hex()
        except OSError as e:
            v = "err:%d" % e.errno
        out.append("%s=%s" % (n, v))
    return ";".join(out) or "-"


def main():
    fields = ALL
    args = sys.argv[1:]
    if args and args[0].startswith("--fields="):
        fields = args.pop(0)[len("--fields="):].split(",")
    root = os.fsencode(args[0])
    # Walk with directory descriptors and name each entry through
    # /proc/self/fd/N/NAME: trees deeper than PATH_MAX are read too.
    rows = [(b"", b".", entry(root, fields))]  # (sort key, shown name, columns)
    for d, dirs, files, dfd in os.fwalk(root):
        rel_dir = os.path.relpath(d, root)
        for n in dirs + files:
            rel = n if rel_dir == b"." else os.path.join(rel_dir, n)
            rows.append((rel, rel, entry(b"/proc/self/fd/%d/%s" % (dfd, n), fields)))
    rows.sort()
    first = {}
    out = sys.stdout.buffer
    for _, rel, (key, col) in rows:
        if key:
            col["hl"] = "hl=" + os.fsdecode(first.setdefault(key, rel))
        line = repr(os.fsdecode(rel)) + " " + " ".join(col[f] for f in fields)
        out.write(line.encode("utf-8", "surrogateescape") + b"\n")


def entry(p, fields):
    """The columns of one entry (hl filled in later) and its hard-link key."""
    st = os.lstat(p)
    m = st.st_mode
    k = kind(m)
    col = {}
    col["type"] = k
    col["mode"] = "%04o" % stat.S_IMODE(m)
    col["owner"] = "%d:%d" % (st.st_uid, st.st_gid)
    col["size"] = str(st.st_size) if k in "fl" else "-"
    col["mtime"] = str(st.st_mtime_ns)
    col["atime"] = str(st.st_atime_ns) if k == "f" else "-"
    # Only what was asked for: reading the data would move the atime.
    col["data"] = digest(p) if k == "f" and "data" in fields else "-"
    col["link"] = os.fsdecode(os.readlink(p)) if k == "l" else "-"
    col["rdev"] = "%d,%d" % (os.major(st.st_rdev), os.minor(st.st_rdev)) if k in "cb" else "-"
    col["xattr"] = xattrs(p)
    col["hl"] = "-"
    col["holes"] = holes(p, st.st_size) if k == "f" and "holes" in fields else "-"
    col["blocks"] = str(st.st_blocks) if k == "f" else "-"
    key = (st.st_dev, st.st_ino) if k != "d" and st.st_nlink > 1 else None
    return key, col


main()
