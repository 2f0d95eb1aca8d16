#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Print one line per entry of a tree, for comparing two synced trees.

Each line: path, type, permission bits, uid, gid, size, mtime (in ns for
regular files; in seconds for the rest, because rsync compares times in
whole seconds by default (--modify-window=0) and so leaves the creation time
on a new directory, symlink or FIFO made in the same second as its source's
mtime), symlink target,
device number, a content digest, the hard-link group (the first path, in
sorted order, that shares the inode) and every xattr (which includes the
POSIX ACLs, stored as system.posix_acl_*). The root itself is listed as ".".

  manifest.py DIR [--no-root-time] [--no-dir-times] [--no-times] [--no-links]

--no-links leaves out the hard-link groups (for copies made without -H).
"""
import hashlib
import os
import stat
import sys


def digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            b = f.read(1 << 20)
            if not b:
                break
            h.update(b)
    return h.hexdigest()[:16]


def xattrs(path):
    try:
        names = sorted(os.listxattr(path, follow_symlinks=False))
    except OSError:
        return ""
    out = []
    for n in names:
        try:
            v = os.getxattr(path, n, follow_symlinks=False)
        except OSError as e:
            v = ("<%s>" % e.strerror).encode()
        out.append("%s=%s" % (n, v.hex()))
    return ",".join(out)


def main():
    root = sys.argv[1]
    no_root_time = "--no-root-time" in sys.argv
    no_dir_times = "--no-dir-times" in sys.argv
    no_links = "--no-links" in sys.argv
    no_times = "--no-times" in sys.argv
    entries = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            entries.append(os.path.join(dirpath, name))
    entries.sort()
    paths = [root] + entries
    groups = {}
    lines = []
    for p in paths:
        st = os.lstat(p)
        rel = "." if p == root else os.path.relpath(p, root)
        key = (st.st_dev, st.st_ino)
        if not stat.S_ISDIR(st.st_mode):
            groups.setdefault(key, rel)
        kind = stat.S_IFMT(st.st_mode)
        mtime = st.st_mtime_ns if stat.S_ISREG(st.st_mode) else st.st_mtime_ns // 10**9
        if no_times or (stat.S_ISDIR(st.st_mode) and (no_dir_times or (rel == "." and no_root_time))):
            mtime = "-"
        link = os.readlink(p) if stat.S_ISLNK(st.st_mode) else ""
        data = digest(p) if stat.S_ISREG(st.st_mode) else ""
        rdev = st.st_rdev if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else 0
        size = st.st_size if stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode) else 0
        group = "" if stat.S_ISDIR(st.st_mode) or no_links else groups[key]
        lines.append("%s %o %o %d %d %d %s %s %d %s %s %s" % (
            rel, kind, stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, size, mtime,
            link, rdev, data, group, xattrs(p)))
    # names are bytes: write them back as bytes, whatever the locale
    sys.stdout.buffer.write(("\n".join(lines) + "\n").encode("utf-8", "surrogateescape"))


if __name__ == "__main__":
    main()
