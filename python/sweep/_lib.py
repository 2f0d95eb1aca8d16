# SPDX-License-Identifier: MIT
"""The C side: loading libsweep, its structures and its function prototypes.

Every structure here mirrors one of include/sweep/*.h field for field, under
the C names (tests/python/test_layout.py compiles a C program that prints
their sizes and offsets and compares them with these). Only what the package
uses is mirrored. Structures that begin with a size field are the library's
size-versioned options: it accepts a shorter one, so a package built against
an older header keeps working with a newer library.
"""

import ctypes
import os
import threading
from ctypes import (CFUNCTYPE, POINTER, Structure, c_bool, c_char_p, c_int, c_int64, c_size_t, c_uint,
                    c_uint32, c_uint64, c_void_p)

# enums are int-sized in the C ABI; sig_atomic_t is int on Linux
c_enum = c_int


class sweep_stat(Structure):
    _fields_ = [
        ("dev", c_uint64), ("ino", c_uint64), ("rdev", c_uint64),
        ("size", c_uint64),
        ("blocks", c_uint64),
        ("mode", c_uint32), ("nlink", c_uint32), ("uid", c_uint32), ("gid", c_uint32),
        ("blksize", c_uint32),
        ("reserved", c_uint32),
        ("atime_sec", c_int64), ("mtime_sec", c_int64), ("ctime_sec", c_int64),
        ("atime_nsec", c_uint32), ("mtime_nsec", c_uint32), ("ctime_nsec", c_uint32),
        ("reserved2", c_uint32),
    ]


class sweep_extent(Structure):
    _fields_ = [("logical", c_uint64), ("physical", c_uint64), ("length", c_uint64), ("flags", c_uint32)]


class sweep_order_opts(Structure):
    _fields_ = [("size", c_size_t), ("order", c_enum), ("flags", c_uint)]


class sweep_order_key(Structure):
    _fields_ = [("group", c_uint64), ("major", c_uint64), ("minor", c_uint64), ("seq", c_uint64)]


class sweep_plan_entry(Structure):
    _fields_ = [
        ("path", c_char_p),
        ("dev", c_uint64), ("ino", c_uint64), ("size", c_uint64), ("phys", c_uint64),
        ("ctime_sec", c_int64), ("ctime_nsec", c_uint32),
        ("nextents", c_uint32),
        ("extents", POINTER(sweep_extent)),
        ("cookie", c_uint64),
        ("root", c_uint32), ("rel", c_uint32), ("flags", c_uint32),
    ]


class sweep_file(Structure):
    _fields_ = [
        ("entry", POINTER(sweep_plan_entry)),
        ("fd", c_int),
        ("st", sweep_stat),
        ("data_map", POINTER(sweep_extent)),
        ("data_map_len", c_size_t),
        ("length", c_uint64),
    ]


READ_BEGIN = CFUNCTYPE(c_int, POINTER(sweep_file), c_void_p)
READ_DATA = CFUNCTYPE(c_int, POINTER(sweep_file), c_uint64, c_void_p, c_size_t, c_void_p)
READ_END = CFUNCTYPE(c_int, POINTER(sweep_file), c_int, c_void_p)
READ_AFTER_BEGIN = CFUNCTYPE(c_bool, POINTER(sweep_file), c_void_p)


class sweep_read_ops(Structure):
    _fields_ = [("size", c_size_t), ("begin", READ_BEGIN), ("data", READ_DATA), ("end", READ_END),
                ("read_after_begin", READ_AFTER_BEGIN)]


class sweep_read_stats(Structure):
    _fields_ = [("size", c_size_t), ("files", c_uint64), ("bytes", c_uint64), ("failed", c_uint64),
                ("changed", c_uint64), ("requests", c_uint64),
                ("devices", c_uint64)]


BATCH_HOOK = CFUNCTYPE(c_int, c_void_p, c_void_p)
BATCH_END_HOOK = CFUNCTYPE(c_int, c_void_p, c_int, c_void_p)


class sweep_batch_opts(Structure):
    _fields_ = [
        ("size", c_size_t),
        ("order", c_enum),
        ("max_files", c_size_t),
        ("max_bytes", c_size_t),
        ("plan_flags", c_uint),
        ("backend", c_enum),
        ("queue_depth", c_uint),
        ("buffer_size", c_size_t),
        ("max_buffered", c_size_t),
        ("read_flags", c_uint),
        ("ops", POINTER(sweep_read_ops)),
        ("on_batch", BATCH_HOOK),
        ("on_batch_end", BATCH_END_HOOK),
        ("ctx", c_void_p),
        ("on_sort", BATCH_HOOK),
    ]


class sweep_batch_stats(Structure):
    _fields_ = [("size", c_size_t), ("files", c_uint64), ("batches", c_uint64), ("plan_memory_sum", c_uint64),
                ("plan_memory_peak", c_uint64), ("read", sweep_read_stats)]


class sweep_entry(Structure):
    _fields_ = [
        ("path", c_char_p), ("path_len", c_size_t), ("name", c_char_p),
        ("dirfd", c_int), ("at_name", c_char_p),
        ("dir_id", c_uint64), ("id", c_uint64),
        ("dirent_index", c_uint32), ("root_index", c_uint32),
        ("depth", c_int), ("d_type", ctypes.c_ubyte), ("stat_err", c_int),
        ("st", sweep_stat),
        ("fs", c_void_p),
        ("root_fd", c_int), ("rel", c_char_p),
        ("root_dev", c_uint64), ("root_ino", c_uint64),
        ("flags", c_uint),
        ("hint", c_void_p),
    ]


class sweep_walk_error(Structure):
    _fields_ = [("path", c_char_p), ("op", c_enum), ("err", c_int)]


WALK_ON_ENTRY = CFUNCTYPE(c_int, POINTER(sweep_entry), c_void_p)
WALK_ON_ERROR = CFUNCTYPE(c_int, POINTER(sweep_walk_error), c_void_p)


class sweep_walk_opts(Structure):
    _fields_ = [
        ("size", c_size_t), ("flags", c_uint), ("order", c_enum), ("stat_batch", c_uint), ("backend", c_enum),
        ("on_entry", WALK_ON_ENTRY), ("on_error", WALK_ON_ERROR), ("ctx", c_void_p),
    ]


class sweep_copy_error(Structure):
    _fields_ = [("op", c_enum), ("meta", c_enum), ("err", c_int), ("src", c_char_p), ("dst", c_char_p),
                ("cookie", c_uint64)]


COPY_ON_ERROR = CFUNCTYPE(c_int, POINTER(sweep_copy_error), c_void_p)
COPY_ON_STEP = CFUNCTYPE(c_int, c_enum, c_char_p, c_char_p, c_uint64, c_void_p)


class sweep_copy_opts(Structure):
    _fields_ = [
        ("size", c_size_t),
        ("flags", c_uint),
        ("preserve", c_uint),
        ("reflink", c_enum),
        ("sparse", c_enum),
        ("writes", c_enum),
        ("order", c_enum),
        ("backend", c_enum),
        ("batch_files", c_size_t),
        ("batch_bytes", c_size_t),
        ("queue_depth", c_uint),
        ("on_error", COPY_ON_ERROR),
        ("on_done", c_void_p),   # callbacks the package does not set are plain pointers
        ("on_bytes", c_void_p),
        ("on_plan", c_void_p),
        ("on_step", COPY_ON_STEP),
        ("ctx", c_void_p),
        ("cancel", POINTER(c_int)),
        ("backup", c_enum),
        ("backup_suffix", c_char_p),
        ("on_exists", c_void_p),
        ("xattr_wanted", c_void_p),
    ]


class sweep_copy_stats(Structure):
    _fields_ = [
        ("size", c_size_t),
        ("files", c_uint64), ("dirs", c_uint64), ("others", c_uint64), ("skipped", c_uint64),
        ("bytes", c_uint64), ("cloned", c_uint64), ("ranged", c_uint64), ("batches", c_uint64),
        ("errors", c_uint64), ("write_requests", c_uint64),
        ("writes_uring", c_uint32), ("tmpfile", c_uint32), ("writers", c_uint32),
    ]


# Every mirrored structure, by its C name (struct NAME), for the layout test.
STRUCTS = {cls.__name__: cls for cls in (
    sweep_stat, sweep_extent, sweep_order_opts, sweep_order_key, sweep_plan_entry, sweep_file, sweep_read_ops,
    sweep_read_stats, sweep_batch_opts, sweep_batch_stats, sweep_entry, sweep_walk_error, sweep_walk_opts,
    sweep_copy_error, sweep_copy_opts,
    sweep_copy_stats)}

# The constants of include/sweep/*.h the package uses.
ORDER = {"auto": 0, "physical": 1, "inode": 2, "name": 3, "none": 4}
BACKEND = {"auto": 0, "uring": 1, "syscall": 2}
ORDER_FOLLOW = 0x1
WALK_FOLLOW, WALK_XDEV = 0x1, 0x4
READ_SPARSE, READ_NOATIME = 0x1, 0x2
READ_SHRANK, READ_GREW, READ_CHANGED = 1, 2, 3
PRESERVE = {"mode": 0x01, "owner": 0x02, "times": 0x04, "xattr": 0x08, "acl": 0x10, "strict": 0x100}
PRESERVE_ALL = 0x1f
COPY_RECURSIVE, COPY_DEREF_ALL, COPY_DEREF_ROOTS, COPY_LINKS = 0x001, 0x002, 0x004, 0x008
COPY_NO_CLOBBER, COPY_UPDATE, COPY_FSYNC, COPY_ONE_FS = 0x010, 0x020, 0x040, 0x200
COPY_REFLINK = {"auto": 0, "always": 1, "never": 2}
COPY_SPARSE = {"auto": 0, "always": 1, "never": 2}
COPY_OP_CHANGED = 20

# (name, restype, argtypes) of every function called.
_PROTOTYPES = [
    ("sweep_version", c_char_p, []),
    ("sweep_order_paths", c_int, [POINTER(c_char_p), c_size_t, POINTER(sweep_order_opts), POINTER(c_size_t)]),
    ("sweep_orderer_new", c_int, [POINTER(sweep_order_opts), POINTER(c_void_p)]),
    ("sweep_orderer_free", c_void_p, [c_void_p]),
    ("sweep_orderer_key", c_int, [c_void_p, c_char_p, c_uint64, POINTER(sweep_order_key)]),
    ("sweep_batch_new", c_int, [POINTER(sweep_batch_opts), POINTER(c_void_p)]),
    ("sweep_batch_free", c_void_p, [c_void_p]),
    ("sweep_walk", c_int, [POINTER(c_char_p), c_size_t, POINTER(sweep_walk_opts)]),
    ("sweep_batch_add_entry", c_int, [c_void_p, POINTER(sweep_entry), c_uint64]),
    ("sweep_batch_add_path", c_int, [c_void_p, c_char_p, POINTER(sweep_stat), c_int, c_uint64]),
    ("sweep_batch_flush", c_int, [c_void_p]),
    ("sweep_batch_stats", c_int, [c_void_p, POINTER(sweep_batch_stats)]),
    ("sweep_copy_new", c_int, [POINTER(sweep_copy_opts), POINTER(c_void_p)]),
    ("sweep_copy_free", c_void_p, [c_void_p]),
    ("sweep_copy_set_dest", c_int, [c_void_p, c_int, c_char_p, c_char_p]),
    ("sweep_copy_tree", c_int, [c_void_p, c_char_p, c_char_p]),
    ("sweep_copy_finish", c_int, [c_void_p]),
    ("sweep_copy_stats", c_int, [c_void_p, POINTER(sweep_copy_stats)]),
]

AT_FDCWD = -100

# The ABI this package mirrors: the soname's major (libsweep.so.0), and the oldest version with every
# function and field used here. Within one soname the library only grows (size-versioned structures).
SONAME_MAJOR = 0
MIN_VERSION = (0, 1, 0)


def check_version(version, name):
    """ImportError unless the library's sweep_version() is in this package's soname and new enough."""
    try:
        v = tuple(int(x) for x in version.split(".")[:3])
    except ValueError:
        raise ImportError(f"sweep: {name} reports an unreadable version {version!r}") from None
    if v[0] != SONAME_MAJOR or v < MIN_VERSION:
        want = ".".join(map(str, MIN_VERSION))
        raise ImportError(f"sweep: {name} is libsweep {version}; this package needs libsweep.so.{SONAME_MAJOR} "
                          f"at least {want} and below {SONAME_MAJOR + 1}.0")

_lock = threading.Lock()
_lib = None


def library_path_wanted():
    """What will be loaded: $SWEEP_LIBRARY when set, else the soname through the loader's path."""
    return os.environ.get("SWEEP_LIBRARY") or f"libsweep.so.{SONAME_MAJOR}"


def lib():
    """libsweep, loaded once (at import: ImportError when it is missing, unusable or of another ABI)."""
    global _lib
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is None:
            name = library_path_wanted()
            try:
                handle = ctypes.CDLL(name, use_errno=False)
            except OSError as e:
                raise ImportError(f"sweep: cannot load libsweep ({name}): {e}; install libsweep "
                                  "or point SWEEP_LIBRARY at libsweep.so") from e
            try:
                for fname, restype, argtypes in _PROTOTYPES:
                    f = getattr(handle, fname)
                    f.restype = restype
                    f.argtypes = argtypes
            except AttributeError as e:
                raise ImportError(f"sweep: {name} is not a libsweep this package can use: {e}") from e
            check_version(handle.sweep_version().decode(), name)
            _lib = handle
    return _lib


def check(rc, filename=None, filename2=None):
    """A libsweep return value: negative errno -> OSError with that errno, else rc."""
    if rc < 0:
        err = -rc
        if filename2 is not None:
            raise OSError(err, os.strerror(err), filename, None, filename2)
        if filename is not None:
            raise OSError(err, os.strerror(err), filename)
        raise OSError(err, os.strerror(err))
    return rc


def stat_to_c(st):
    """An os.stat_result as struct sweep_stat (what the batch plans against: size, ctime, inode)."""
    c = sweep_stat()
    c.dev, c.ino, c.rdev = st.st_dev, st.st_ino, st.st_rdev
    c.size = max(st.st_size, 0)
    c.blocks = st.st_blocks
    c.mode, c.nlink, c.uid, c.gid = st.st_mode, st.st_nlink, st.st_uid, st.st_gid
    c.blksize = st.st_blksize
    c.atime_sec, c.atime_nsec = divmod(st.st_atime_ns, 1_000_000_000)
    c.mtime_sec, c.mtime_nsec = divmod(st.st_mtime_ns, 1_000_000_000)
    c.ctime_sec, c.ctime_nsec = divmod(st.st_ctime_ns, 1_000_000_000)
    return c
