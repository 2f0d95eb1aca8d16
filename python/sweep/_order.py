# SPDX-License-Identifier: MIT
"""sweep.order(): a list of paths in read order (sweep_order_paths(3))."""

import ctypes
import os

from . import _lib, _options, _paths


class Ordered(list):
    """The paths in read order (a list). The paths that could not be stat'ed are at its end, in list order;
    failed holds one OSError for each of them (errno, strerror, filename = the path as given)."""

    def __init__(self, items=(), failed=()):
        super().__init__(items)
        self.failed = list(failed)

    def __repr__(self):
        return f"Ordered({list.__repr__(self)}, failed={self.failed!r})"


def order(paths, *, order="auto", follow=False):
    """Return paths in the order that reads them fastest, filesystem by filesystem.

    paths: an iterable of str, bytes or os.PathLike (not mixing str and bytes); the same objects come back,
    reordered. order: "auto" (each filesystem's policy: first physical byte, inode number, or the list's
    order where sorting does not pay), "physical", "inode" or "none". follow: locate what a symlink in the
    list points to (default: the link itself).

    The result is a list (an Ordered); paths that cannot be stat'ed come last, in list order, and
    result.failed says why for each: an OSError whose filename is that path.
    """
    o = _options.order_value(order, "order", allow_name=False)
    _options.need_bool(follow, "follow")
    items, encoded = _paths.path_list(paths)
    if not items:
        return Ordered()
    lib = _lib.lib()
    n = len(items)
    opts = _lib.sweep_order_opts(size=ctypes.sizeof(_lib.sweep_order_opts), order=o,
                                 flags=_lib.ORDER_FOLLOW if follow else 0)
    argv = (ctypes.c_char_p * n)(*encoded)
    perm = (ctypes.c_size_t * n)()
    nfailed = _lib.check(lib.sweep_order_paths(argv, n, ctypes.byref(opts), perm))
    result = [items[i] for i in perm]
    failed = [_why(lib, opts, encoded[perm[i]], items[perm[i]]) for i in range(n - nfailed, n)]
    return Ordered(result, failed)


def _why(lib, opts, encoded, original):
    """The errno of a path that could not be stat'ed, asked the way the library asked it.

    sweep_order_paths(3) only counts such paths; sweep_orderer_key(3) on the same options gives the -errno.
    """
    o = ctypes.c_void_p()
    _lib.check(lib.sweep_orderer_new(ctypes.byref(opts), ctypes.byref(o)))
    try:
        rc = lib.sweep_orderer_key(o, encoded, 0, ctypes.byref(_lib.sweep_order_key()))
    finally:
        lib.sweep_orderer_free(o)
    if rc < 0:
        return OSError(-rc, os.strerror(-rc), original)
    # It can be stat'ed now: it came back between the two looks.
    return OSError(None, "could not be stat'ed when the list was ordered", original)
