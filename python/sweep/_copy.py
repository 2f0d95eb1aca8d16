# SPDX-License-Identifier: MIT
"""sweep.copy(): the library's copy engine (sweep_copy_new(3)) with cp's decisions and cp's words.

The engine never prints; every error and warning it reports through on_error
is collected here as a CopyProblem worded as cp words it, and raised at the
end as one CopyError. Nothing is printed either.
"""

import ctypes
import errno
import os
from typing import NamedTuple

from . import _lib, _options, _paths

# enum sweep_copy_op, in order from 1
_OPS = ["stat", "open_src", "read", "opendir", "readlink", "create", "write", "clone", "mkdir", "symlink",
        "special", "link", "rename", "meta", "overwrite_dir", "overwrite_nondir", "into_self", "same_file",
        "omit_dir", "changed", "dangling", "new_overwrite", "new_symlink", "stat_dest", "backup",
        "backup_source", "link_symbolic", "link_relative"]
# enum sweep_copy_meta, from 1
_METAS = ["owner", "xattr", "acl", "mode", "times"]

# cp's wording for each op: {s} the source, {d} the destination, quoted
_WORDS = {
    "stat": "cannot stat {s}",
    "open_src": "cannot open {s} for reading",
    "read": "error reading {s}",
    "opendir": "cannot access {s}",
    "readlink": "cannot read symbolic link {s}",
    "create": "cannot create regular file {d}",
    "write": "error writing {d}",
    "clone": "failed to clone {d} from {s}",
    "mkdir": "cannot create directory {d}",
    "symlink": "cannot create symbolic link {d}",
    "special": "cannot create special file {d}",
    "link": "cannot create hard link {d} to {s}",
    "rename": "cannot move the copy of {s} onto {d}",
    "overwrite_dir": "cannot overwrite directory {d} with non-directory",
    "overwrite_nondir": "cannot overwrite non-directory {d} with directory {s}",
    "into_self": "cannot copy a directory, {s}, into itself, {d}",
    "same_file": "{s} and {d} are the same file",
    "omit_dir": "-r not specified; omitting directory {s}",
    "changed": "{s}: file changed as we read it",
    "dangling": "not writing through dangling symlink {d}",
    "new_overwrite": "will not overwrite just-created {d} with {s}",
    "new_symlink": "will not copy {s} through just-created symlink {d}",
    "stat_dest": "cannot stat {d}",
    "backup": "cannot backup {d}",
    "backup_source": "backing up {d} might destroy source;  {s} not copied",
    "link_symbolic": "cannot create symbolic link {d} to {s}",
    "link_relative": "{d}: can make relative symbolic links only in current directory",
    "target": "target directory {d}",
}
_META_WORDS = {"owner": "failed to preserve ownership for {d}", "xattr": "setting attributes for {d}",
               "times": "preserving times for {d}"}
_STALE_WORDS = {"open_src": "{s} was replaced during the copy; not copied",
                "rename": "the directory of {d} was replaced during the copy; not copied"}


class CopyProblem:
    """One error or warning of copy(). op: what failed ("create", "mkdir", "read", ... as enum sweep_copy_op,
    lower case without the prefix; "target" for a destination directory copy() could not use); meta: which
    metadata for op "meta"; errno: the error number or None; src, dst: as shown (the caller's str or bytes,
    or None); message: cp's words for it, e.g. "cannot create regular file 'b/x': Permission denied"."""

    __slots__ = ("op", "meta", "errno", "src", "dst", "message")

    def __init__(self, op, err, src, dst, meta=None):
        self.op, self.meta, self.errno, self.src, self.dst = op, meta, err or None, src, dst
        words = _WORDS.get(op, "metadata of {d}")
        if op == "meta":
            words = _META_WORDS.get(meta, "preserving permissions for {d}")
        if err == errno.ESTALE and op in _STALE_WORDS:
            words, err = _STALE_WORDS[op], None
        msg = words.format(s=_paths.quote(src or ""), d=_paths.quote(dst or ""))
        self.message = f"{msg}: {os.strerror(err)}" if err else msg

    @property
    def warning(self):
        """True for what the engine reports without counting it an error (a source that changed while read)."""
        return self.op == "changed"

    def __str__(self):
        return self.message

    def __repr__(self):
        return f"CopyProblem({self.op!r}, errno={self.errno}, src={self.src!r}, dst={self.dst!r})"


class CopyStats(NamedTuple):
    """What copy() did (struct sweep_copy_stats), and its warnings (CopyProblem, e.g. files changed while
    read: copied as read)."""
    files: int
    dirs: int
    others: int
    skipped: int
    bytes: int
    cloned: int
    ranged: int
    batches: int
    errors: int
    write_requests: int
    writes_uring: bool
    tmpfile: bool
    warnings: tuple


class CopyError(OSError):
    """copy() met errors. errors: every CopyProblem, in the order met (the copy went on past each, as cp
    does); stats: the CopyStats of the run. errno, strerror, filename and filename2 are the first one's."""

    def __init__(self, errors, stats=None):
        first = errors[0]
        super().__init__(first.errno, first.message, first.src, None, first.dst)
        self.errors = list(errors)
        self.stats = stats

    def __str__(self):
        more = len(self.errors) - 1
        return self.errors[0].message + (f" (and {more} more error{'s' if more > 1 else ''})" if more else "")

    def __reduce__(self):
        return (type(self), (self.errors, self.stats))


def copy(src, dst, *, into=False, recursive=True, preserve=("mode", "times"), dereference="never",
         hard_links=False, overwrite="always", reflink="auto", sparse="auto", one_file_system=False, fsync=False,
         order="auto", batch=None, backend="auto"):
    """Copy src to dst, reading the sources in physical order and writing the copies in that order.

    src: a path (str, bytes or os.PathLike), or a list of them. One path: dst is the name of the copy (as
    `cp -rT`: an existing directory there is merged into), or with into=True the directory the copy goes
    in, under src's last component (as `cp -r src dir/`). A list: dst is the directory they all go into.
    dst's own directory must exist; nothing outside dst is written, no symlink below it is followed.

    recursive: copy directories' contents (else a directory is an error). preserve: names among "mode",
    "owner", "times", "xattr", "acl" (and "strict": a destination without xattr/ACL support is an error),
    or "all", or () for none. dereference: "never" (symlinks copied as symlinks), "always" (cp -L),
    "roots" (only a symlink named as src, cp -H). hard_links: keep hard links. overwrite: "always"
    (replace atomically), "never", "update" (only with an older one). reflink, sparse: "auto", "always",
    "never". one_file_system: stay on src's filesystem. fsync: each file before it is put in place. batch:
    files per sweep of the source (None: as many as 32 MiB of plan holds).

    Returns CopyStats. Errors do not stop the copy (as with cp); at the end they are raised together as
    CopyError (an OSError) holding every CopyProblem. Nothing is printed.
    """
    many = isinstance(src, (list, tuple))
    if many:
        if not src:
            raise ValueError("src is an empty list")
        sources, srcb = _paths.path_list(src, "src")
    else:
        sources, srcb = [src], [_paths.to_bytes(src, "src")]
    dstb = _paths.to_bytes(dst, "dst")
    _paths.check_same_kind(sources + [dst])
    as_type = _paths.kind(dst)
    opts = _copy_opts(into=_options.need_bool(into, "into"), recursive=recursive, preserve=preserve,
                      dereference=dereference, hard_links=hard_links, overwrite=overwrite, reflink=reflink,
                      sparse=sparse, one_file_system=one_file_system, fsync=fsync, order=order, batch=batch,
                      backend=backend)
    lib = _lib.lib()
    problems, warnings = [], []
    state = {"exc": None}
    cancel = ctypes.c_int(0)

    def guarded(fn):
        def call(*args):
            try:
                return fn(*args)
            except BaseException as e:  # noqa: B036 - Ctrl-C in a callback: stop cleanly, raise after
                if state["exc"] is None:
                    state["exc"] = e
                cancel.value = 1
                return -errno.ECANCELED
        return call

    def on_error(ce, ctx):
        c = ce.contents
        op = _OPS[c.op - 1] if 1 <= c.op <= len(_OPS) else f"op{c.op}"
        meta = _METAS[c.meta - 1] if op == "meta" and 1 <= c.meta <= len(_METAS) else None
        p = CopyProblem(op, -c.err, _paths.from_bytes(c.src, as_type), _paths.from_bytes(c.dst, as_type), meta)
        (warnings if p.warning else problems).append(p)
        return 0

    def on_step(step, s, d, cookie, ctx):
        return 0  # only so that a pending signal (Ctrl-C) is seen while the engine runs

    on_error_cb = _lib.COPY_ON_ERROR(guarded(on_error))
    on_step_cb = _lib.COPY_ON_STEP(guarded(on_step))
    opts.on_error = on_error_cb
    opts.on_step = on_step_cb
    opts.cancel = ctypes.pointer(cancel)

    e = ctypes.c_void_p()
    _lib.check(lib.sweep_copy_new(ctypes.byref(opts), ctypes.byref(e)))
    try:
        if many or into:
            rc = lib.sweep_copy_set_dest(e, _lib.AT_FDCWD, dstb, dstb)
            if rc < 0:
                problems.append(CopyProblem("target", -rc, None, _shown(dstb, as_type)))
            else:
                for s in srcb:
                    rc = lib.sweep_copy_tree(e, s, _base_name(s))
                    if _stopping(rc):
                        break
        else:
            ddir, name = _split_dest(dstb)
            rc = lib.sweep_copy_set_dest(e, _lib.AT_FDCWD, ddir or b".", b"" if ddir is None else ddir)
            if rc < 0:  # cp's words for a destination whose directory is not there
                problems.append(CopyProblem("create", -rc, _shown(srcb[0], as_type), _shown(dstb, as_type)))
            else:
                lib.sweep_copy_tree(e, srcb[0], name)
        rc = lib.sweep_copy_finish(e)
        st = _lib.sweep_copy_stats(size=ctypes.sizeof(_lib.sweep_copy_stats))
        _lib.check(lib.sweep_copy_stats(e, ctypes.byref(st)))
    finally:
        lib.sweep_copy_free(e)
    if state["exc"] is not None:
        raise state["exc"]
    if rc < 0 and not problems:
        _lib.check(rc)
    stats = CopyStats(st.files, st.dirs, st.others, st.skipped, st.bytes, st.cloned, st.ranged, st.batches,
                      st.errors, st.write_requests, bool(st.writes_uring), bool(st.tmpfile), tuple(warnings))
    if problems:
        raise CopyError(problems, stats)
    return stats


def _shown(b, as_type):
    return _paths.from_bytes(b, as_type)


def _stopping(rc):
    """After sweep_copy_tree(): go on with the next source unless the run cannot go on."""
    return rc in (-errno.ENOMEM, -errno.ECANCELED)


def _preserve_bits(preserve):
    if preserve is None:
        return 0
    if isinstance(preserve, str):
        preserve = (preserve,)
    try:
        names = list(preserve)
    except TypeError:
        raise TypeError(f"preserve must be names or 'all', not {type(preserve).__name__}") from None
    bits = 0
    for n in names:
        if n == "all":
            bits |= _lib.PRESERVE_ALL
        else:
            bits |= _options.choice(n, "each preserve name", _lib.PRESERVE)
    return bits


def _copy_opts(*, into, recursive, preserve, dereference, hard_links, overwrite, reflink, sparse,
               one_file_system, fsync, order, batch, backend):
    flags = 0
    if _options.need_bool(recursive, "recursive"):
        flags |= _lib.COPY_RECURSIVE
    flags |= _options.choice(dereference, "dereference",
                             {"never": 0, "always": _lib.COPY_DEREF_ALL, "roots": _lib.COPY_DEREF_ROOTS})
    if _options.need_bool(hard_links, "hard_links"):
        flags |= _lib.COPY_LINKS
    flags |= _options.choice(overwrite, "overwrite",
                             {"always": 0, "never": _lib.COPY_NO_CLOBBER, "update": _lib.COPY_UPDATE})
    if _options.need_bool(one_file_system, "one_file_system"):
        flags |= _lib.COPY_ONE_FS
    if _options.need_bool(fsync, "fsync"):
        flags |= _lib.COPY_FSYNC
    return _lib.sweep_copy_opts(
        size=ctypes.sizeof(_lib.sweep_copy_opts), flags=flags, preserve=_preserve_bits(preserve),
        reflink=_options.choice(reflink, "reflink", _lib.COPY_REFLINK),
        sparse=_options.choice(sparse, "sparse", _lib.COPY_SPARSE),
        order=_options.order_value(order, "order"), backend=_options.backend_value(backend),
        batch_files=0 if batch is None else _options.need_int(batch, "batch", 1, 1 << 30))


def _base_name(p):
    """The last component, trailing slashes ignored (b"a/b/" -> b"b"), as cp names a copy in a directory."""
    p = p.rstrip(b"/") or b"/"
    return p.rsplit(b"/", 1)[-1] or b"/"


def _split_dest(d):
    """dst as (directory it goes in, its name there): b"a/b/c" -> (b"a/b", b"c"), b"c" -> (None, b"c")
    (the current directory, shown as nothing), b"/c" -> (b"/", b"c"). Trailing slashes stay on the name,
    where they mean "must be a directory"."""
    end = len(d)
    while end > 1 and d[end - 1:end] == b"/":
        end -= 1
    b = d.rfind(b"/", 0, end) + 1
    if b == 0:
        return None, d
    return (b"/" if b == 1 else d[:b - 1]), d[b:]
