#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""One line per entry of a tree, for comparing two trees with diff.

    manifest.py [--fields=LIST] [--mtime=ns|file-ns] [--no-root-time]
                [--no-dir-times] [--no-times] [--no-links] [--no-sockets] DIR

Used by the cp, sync and tar tests (tests/tar/manifest.py is a thin wrapper
with the archive round trip's choices). Two trees compare equal when their
manifests, made with the same options, are the same bytes.

The walk goes through directory descriptors (openat, fstatat, readlinkat),
so trees deeper than PATH_MAX are read whole; names are bytes and come out
escaped as in a Python bytes literal, so any name prints on one line. The
root is listed as "." (a root that is not a directory is the only line),
then every entry depth first, names sorted bytewise in each directory. A line is the escaped path, the type (file dir symlink
fifo chr blk sock) and the fields asked for that apply to the type:

  mode    permission bits (octal)
  owner   uid:gid
  size    bytes (regular files and symlinks)
  mtime   in ns; with --mtime=file-ns, in ns for regular files and whole
          seconds for the rest (rsync compares times in whole seconds, so a
          directory, symlink or FIFO it makes in the source's second keeps
          its creation time)
  atime   in ns (regular files)
  data    sha256 of the contents, 16 hex digits (regular files); read with
          O_NOATIME where allowed, and only when asked for
  link    symlink target
  rdev    major,minor (devices)
  xattr   every extended attribute, sorted, values in hex (longer than 64
          bytes: a digest). POSIX ACLs are included, as their
          system.posix_acl_access/_default attributes. Filtered out:
          trusted.SGI_ACL_FILE and trusted.SGI_ACL_DEFAULT, xfs's private
          copies of those same ACLs, which only root sees and only on xfs.
  nlink   link count (everything but directories)
  hl      hard-link group, for entries with more than one link: the first
          path (in manifest order) of the entries that share the (st_dev,
          st_ino) pair. Two trees with the same link structure print the
          same, whatever their inode numbers.
  holes   the data map, SEEK_DATA/SEEK_HOLE regions offset+length (regular
          files); MANIFEST_NO_MAP=1 in the environment leaves it out (for
          filesystems whose allocators differ, such as xfs's speculative
          preallocation)
  sparse  1 when fewer bytes are allocated than the size (regular files)
  blocks  allocated 512-byte blocks (regular files)

Default fields: all but nlink and sparse. --no-root-time, --no-dir-times and
--no-times print mtime as "-" for the root, for directories, for every entry;
--no-links leaves out hl; --no-sockets leaves sockets out (tar skips them).
"""
import hashlib
import os
import stat
import sys

FIELDS = "mode owner size mtime atime data link rdev xattr nlink hl holes sparse blocks".split()
DEFAULT_FIELDS = [f for f in FIELDS if f not in ("nlink", "sparse")]
XATTR_FILTER = ("trusted.SGI_ACL_FILE", "trusted.SGI_ACL_DEFAULT")
TYPES = {stat.S_IFREG: "file", stat.S_IFDIR: "dir", stat.S_IFLNK: "symlink", stat.S_IFIFO: "fifo",
         stat.S_IFCHR: "chr", stat.S_IFBLK: "blk", stat.S_IFSOCK: "sock"}


def esc(name):
    """A bytes name as one printable line (a Python bytes literal without b'')."""
    return repr(name)[2:-1]


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


def open_file(dirfd, name):
    """Open for reading without moving the atime where the kernel lets us."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        return os.open(name, flags | os.O_NOATIME, dir_fd=dirfd)
    except PermissionError:
        return os.open(name, flags, dir_fd=dirfd)


def digest(fd):
    h, off = hashlib.sha256(), 0
    while True:
        b = os.pread(fd, 1 << 20, off)  # from 0, wherever data_map left the offset
        if not b:
            return h.hexdigest()[:16]
        h.update(b)
        off += len(b)


def xattrs(dirfd, name):
    p = "/proc/self/fd/%d/%s" % (dirfd, os.fsdecode(name))
    try:
        names = sorted(os.listxattr(p, follow_symlinks=False))
    except OSError as e:
        return "err:%d" % e.errno
    out = []
    for a in names:
        if a in XATTR_FILTER:
            continue
        try:
            v = os.getxattr(p, a, follow_symlinks=False)
            v = v.hex() if len(v) <= 64 else "sha:" + hashlib.sha256(v).hexdigest()[:16]
        except OSError as e:
            v = "err:%d" % e.errno
        out.append("%s=%s" % (a, v))
    return "[%s]" % " ".join(out)


class Manifest:
    def __init__(self, fields=None, mtime="ns", no_root_time=False, no_dir_times=False,
                 no_times=False, no_links=False, no_sockets=False):
        fields = list(DEFAULT_FIELDS if fields is None else fields)
        unknown = [f for f in fields if f not in FIELDS and f != "type"]
        if unknown:
            raise ValueError("unknown fields: %s" % ",".join(unknown))
        if no_links:
            fields = [f for f in fields if f != "hl"]
        if os.environ.get("MANIFEST_NO_MAP"):
            fields = [f for f in fields if f != "holes"]
        if mtime not in ("ns", "file-ns"):
            raise ValueError("--mtime is ns or file-ns")
        self.fields = [f for f in FIELDS if f in fields]  # one order, whatever the caller's
        self.mtime = mtime
        self.no_root_time, self.no_dir_times, self.no_times = no_root_time, no_dir_times, no_times
        self.no_sockets = no_sockets

    def entry(self, dirfd, name, path, st, groups):
        """The line of one entry; name is relative to dirfd."""
        kind = stat.S_IFMT(st.st_mode)
        reg, lnk = kind == stat.S_IFREG, kind == stat.S_IFLNK
        col = {"mode": "%o" % stat.S_IMODE(st.st_mode), "owner": "%d:%d" % (st.st_uid, st.st_gid)}
        if reg or lnk:
            col["size"] = str(st.st_size)
        if self.no_times or (kind == stat.S_IFDIR and (self.no_dir_times or (path == b"." and self.no_root_time))):
            col["mtime"] = "-"
        elif self.mtime == "file-ns" and not reg:
            col["mtime"] = str(st.st_mtime_ns // 10**9)
        else:
            col["mtime"] = str(st.st_mtime_ns)
        if reg:
            col["atime"] = str(st.st_atime_ns)
            col["blocks"] = str(st.st_blocks)
            col["sparse"] = str(int(st.st_blocks * 512 < st.st_size))
            if "data" in self.fields or "holes" in self.fields:
                try:
                    fd = open_file(dirfd, name)
                except OSError as e:
                    col["data"] = col["holes"] = "err:%d" % e.errno
                else:
                    try:
                        if "holes" in self.fields:
                            col["holes"] = data_map(fd, st.st_size)
                        if "data" in self.fields:
                            col["data"] = digest(fd)
                    finally:
                        os.close(fd)
        if lnk:
            col["link"] = esc(os.readlink(name, dir_fd=dirfd))
        if kind in (stat.S_IFCHR, stat.S_IFBLK):
            col["rdev"] = "%d,%d" % (os.major(st.st_rdev), os.minor(st.st_rdev))
        if kind != stat.S_IFDIR:
            col["nlink"] = str(st.st_nlink)
            if st.st_nlink > 1:
                col["hl"] = esc(groups.setdefault((st.st_dev, st.st_ino), path))
        if "xattr" in self.fields:
            col["xattr"] = xattrs(dirfd, name)
        parts = [esc(path), TYPES.get(kind, "?")]
        parts += ["%s=%s" % (f, col[f]) for f in self.fields if f in col]
        return " ".join(parts)

    def walk(self, dirfd, rel, lines, groups):
        for name in sorted(os.listdir(dirfd)):
            name = os.fsencode(name)
            path = rel + b"/" + name if rel else name
            st = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
            if self.no_sockets and stat.S_ISSOCK(st.st_mode):
                continue
            lines.append(self.entry(dirfd, name, path, st, groups))
            if stat.S_ISDIR(st.st_mode):
                sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dirfd)
                try:
                    self.walk(sub, path, lines, groups)
                finally:
                    os.close(sub)

    def __call__(self, root):
        """The manifest of the tree at root, as one string."""
        st = os.lstat(root)
        if not stat.S_ISDIR(st.st_mode):  # a file (or symlink...) as the root: its one line
            parent = os.open(os.path.dirname(root) or b".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            try:
                return self.entry(parent, os.path.basename(root), b".", st, {}) + "\n"
            finally:
                os.close(parent)
        top = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            lines, groups = [], {}
            lines.append(self.entry(top, b".", b".", os.fstat(top), groups))
            self.walk(top, b"", lines, groups)
        finally:
            os.close(top)
        return "\n".join(lines) + "\n"


def manifest(root, **options):
    """The manifest of the tree at root; options as Manifest's."""
    return Manifest(**options)(root)


def main(argv=None, **defaults):
    args = list(sys.argv[1:] if argv is None else argv)
    options = dict(defaults)
    flags = {"--no-root-time": "no_root_time", "--no-dir-times": "no_dir_times", "--no-times": "no_times",
             "--no-links": "no_links", "--no-sockets": "no_sockets"}
    roots = []
    for a in args:
        if a.startswith("--fields="):
            options["fields"] = [f for f in a[len("--fields="):].split(",") if f]
        elif a.startswith("--mtime="):
            options["mtime"] = a[len("--mtime="):]
        elif a in flags:
            options[flags[a]] = True
        elif a.startswith("--"):
            sys.exit("manifest.py: unknown option %s\n%s" % (a, __doc__))
        else:
            roots.append(a)
    if len(roots) != 1:
        sys.exit("manifest.py: one DIR\n" + __doc__)
    text = manifest(os.fsencode(roots[0]), **options)
    # escaped names are ASCII; a stray surrogate must not stop the run
    sys.stdout.buffer.write(text.encode("utf-8", "surrogateescape"))


if __name__ == "__main__":
    main()
