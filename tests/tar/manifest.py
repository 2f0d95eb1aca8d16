#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Print what must survive an archive round trip, one line per entry.

    manifest.py DIR

Walks through directory fds, so paths longer than PATH_MAX work. Per entry:
name (escaped), type, mode, uid, gid, mtime in ns, size, content digest,
data map (SEEK_DATA/SEEK_HOLE) and whether it is sparse, symlink target,
device numbers, link count and hard-link group, and every xattr (POSIX
ACLs included, as system.posix_acl_*). Sockets are left out: tar skips them. MANIFEST_NO_MAP=1 leaves out the
data map (for comparing across filesystems whose allocators differ, such as
xfs's speculative preallocation).
"""
import hashlib
import os
import stat
import sys


TYPES = {stat.S_IFREG: "file", stat.S_IFDIR: "dir", stat.S_IFLNK: "symlink", stat.S_IFCHR: "chr",
         stat.S_IFBLK: "blk", stat.S_IFIFO: "fifo"}


def esc(b):
    return repr(b)[2:-1]


def data_map(fd, size):
    regions, off = [], 0
    while off < size:
        try:
            start = os.lseek(fd, off, os.SEEK_DATA)
        except OSError:
            break
        end = os.lseek(fd, start, os.SEEK_HOLE)
        regions.append("%d+%d" % (start, end - start))
        off = end
    return ",".join(regions) or "none"


def xattrs(dirfd, name):
    p = "/proc/self/fd/%d/%s" % (dirfd, os.fsdecode(name))
    out = []
    for a in sorted(os.listxattr(p, follow_symlinks=False)):
        if a in ("trusted.SGI_ACL_FILE", "trusted.SGI_ACL_DEFAULT"):
            continue  # xfs's own form of the ACLs, listed as system.posix_acl_* too
        v = os.getxattr(p, a, follow_symlinks=False)
        out.append("%s=%s" % (a, v.hex() if len(v) <= 64 else "sha:" + hashlib.sha256(v).hexdigest()[:16]))
    return " ".join(out)


def walk(dirfd, rel, lines, inodes):
    for name in sorted(os.listdir(dirfd)):
        name = os.fsencode(name)
        path = rel + b"/" + name if rel else name
        st = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
        if stat.S_ISSOCK(st.st_mode):
            continue
        f = ["mode=%o" % stat.S_IMODE(st.st_mode), "uid=%d" % st.st_uid, "gid=%d" % st.st_gid,
             "mtime=%d" % st.st_mtime_ns]
        kind = stat.S_IFMT(st.st_mode)
        if stat.S_ISREG(kind):
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=dirfd)
            h = hashlib.sha256()
            while True:
                b = os.read(fd, 1 << 20)
                if not b:
                    break
                h.update(b)
            f += ["size=%d" % st.st_size, "sha=%s" % h.hexdigest()[:16]]
            if not os.environ.get("MANIFEST_NO_MAP"):
                f.append("map=%s" % data_map(fd, st.st_size))
            f.append("sparse=%d" % (st.st_blocks * 512 < st.st_size))
            os.close(fd)
        elif stat.S_ISLNK(kind):
            f.append("target=%s" % esc(os.readlink(name, dir_fd=dirfd)))
        elif stat.S_ISCHR(kind) or stat.S_ISBLK(kind):
            f.append("rdev=%d,%d" % (os.major(st.st_rdev), os.minor(st.st_rdev)))
        if not stat.S_ISDIR(kind):
            f.append("nlink=%d" % st.st_nlink)
            if st.st_nlink > 1:
                # Hard-link groups, numbered by the first name met.
                g = inodes.setdefault(st.st_ino, len(inodes))
                f.append("group=%d" % g)
        f.append("xattrs=[%s]" % xattrs(dirfd, name))
        lines.append("%s %s %s" % (esc(path), TYPES.get(kind, "?"), " ".join(f)))
        if stat.S_ISDIR(kind):
            sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dirfd)
            walk(sub, path, lines, inodes)
            os.close(sub)


def manifest(path):
    """The manifest of the tree at path, as one string."""
    top = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    st = os.fstat(top)
    lines = [". dir mode=%o uid=%d gid=%d mtime=%d xattrs=[%s]" % (
        stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, st.st_mtime_ns, xattrs(top, b"."))]
    walk(top, b"", lines, {})
    os.close(top)
    return "\n".join(lines) + "\n"


def main():
    sys.stdout.write(manifest(sys.argv[1]))


if __name__ == "__main__":
    main()
