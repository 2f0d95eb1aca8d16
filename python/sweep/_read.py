# SPDX-License-Identifier: MIT
"""sweep.read(): files' data in plan order, through the batch API (sweep_batch_new(3)).

The library reads a batch in one sweep and calls back begin, data..., end for
each file, strictly in plan order, from inside sweep_batch_add_path() and
sweep_batch_flush(). A generator cannot yield from inside a C callback, so
the batch runs in a background thread that puts what the callbacks see into a
channel bounded in bytes; the caller's iteration takes from it. When the
caller is slower, the callbacks wait, and the reader waits with them: memory
stays bounded by the channel (max_queued) plus the reader's own ring
(max_buffered), however large a file is. No file is ever held whole.
"""

import collections
import ctypes
import errno
import os
import stat as _stat
import threading
from typing import NamedTuple

from . import _errors, _lib, _options, _paths


class Stat(NamedTuple):
    """The file as fstat(2) saw it right after it was opened for reading (os.stat_result's names)."""
    st_mode: int
    st_ino: int
    st_dev: int
    st_nlink: int
    st_uid: int
    st_gid: int
    st_size: int
    st_atime_ns: int
    st_mtime_ns: int
    st_ctime_ns: int
    st_blksize: int
    st_blocks: int
    st_rdev: int

    @classmethod
    def from_c(cls, s):
        ns = 1_000_000_000
        return cls(s.mode, s.ino, s.dev, s.nlink, s.uid, s.gid, s.size, s.atime_sec * ns + s.atime_nsec,
                   s.mtime_sec * ns + s.mtime_nsec, s.ctime_sec * ns + s.ctime_nsec, s.blksize, s.blocks, s.rdev)


class _Stopped(Exception):
    """The consumer closed the channel: the producer winds down."""


class _Channel:
    """A queue bounded in bytes (and items), which the consumer can close to release a blocked producer."""

    def __init__(self, max_bytes, max_items=4096):
        self._cv = threading.Condition()
        self._items = collections.deque()
        self._bytes = 0
        self._max_bytes = max_bytes
        self._max_items = max_items
        self._closed = False

    def put(self, item, nbytes=0):
        with self._cv:
            # One item always fits, so a piece larger than the bound still passes, alone.
            while not self._closed and self._items and (self._bytes + nbytes > self._max_bytes
                                                        or len(self._items) >= self._max_items):
                self._cv.wait()
            if self._closed:
                raise _Stopped
            self._items.append((item, nbytes))
            self._bytes += nbytes
            self._cv.notify_all()

    def put_last(self, item):
        with self._cv:
            if not self._closed:
                self._items.append((item, 0))
                self._cv.notify_all()

    def get(self):
        with self._cv:
            while not self._items:
                self._cv.wait()
            item, nbytes = self._items.popleft()
            self._bytes -= nbytes
            self._cv.notify_all()
            return item

    @property
    def closed(self):
        return self._closed

    def close(self):
        with self._cv:
            self._closed = True
            self._items.clear()
            self._bytes = 0
            self._cv.notify_all()


def read(paths, *, chunk=1 << 20, order="auto", follow=False, sparse=False, noatime=False, batch=4096,
         max_queued=16 << 20, max_buffered=0, queue_depth=0, backend="auto", one_file_system=False):
    """Read regular files in plan order, yielding (path, file).

    paths: either one tree root (a str, bytes or os.PathLike naming a directory or a file), walked in C-SCAN
    order by the library (sweep_walk(3)), its regular files yielded as root + "/" + the names below it (str
    for a str or os.PathLike root, bytes for a bytes root); or an iterable of str, bytes or os.PathLike, each
    naming a file (consumed lazily, in the background, batch by batch), the path objects coming back as
    given. Each batch of up to `batch` files is sorted into read order (order: "auto", "physical", "inode",
    "name", "none") and read in one sweep. file is a File: iterate it for the file's bytes, in pieces of at
    most `chunk` bytes. follow: read what a symlink points to (default: in a list, a symlink is reported as
    not a regular file; in a tree, symlinks, like directories and special files, are passed over).
    one_file_system: a tree walk stays on the root's filesystem. sparse: skip holes on the device (the bytes
    still come, holes as zeros; File.pieces() gives the data regions only). noatime: O_NOATIME where
    permitted.

    Per-file problems never stop the iteration: iterating a File raises its ReadError (an OSError) after
    its last byte, or at once when nothing of it could be read, and File.error holds it too. Paths that
    could not be planned (no such file, not a regular file in a list; a directory a walk could not read or
    an entry it could not stat) come after the batch they were in, as a File that raises at once.

    Memory: at most max_queued bytes (default 16 MiB) wait between the reader and the caller, plus the
    reader's ring (max_buffered, default up to 64 MiB) and one batch's plan. Returns a Reader: an iterator
    that is also a context manager; close() (or leaving the with block) stops the read.
    """
    params = {
        "chunk": _options.need_int(chunk, "chunk", 4096, 1 << 30),
        "order": _options.order_value(order, "order"),
        "follow": _options.need_bool(follow, "follow"),
        "sparse": _options.need_bool(sparse, "sparse"),
        "noatime": _options.need_bool(noatime, "noatime"),
        "batch": _options.need_int(batch, "batch", 1, 1 << 30),
        "max_queued": _options.need_int(max_queued, "max_queued", 1),
        "max_buffered": _options.need_int(max_buffered, "max_buffered", 0),
        "queue_depth": _options.need_int(queue_depth, "queue_depth", 0, 1 << 16),
        "backend": _options.backend_value(backend),
        "one_file_system": _options.need_bool(one_file_system, "one_file_system"),
    }
    if isinstance(paths, (str, bytes, os.PathLike)):
        root = _paths.to_bytes(paths, "the tree root")
        os.stat(root)  # a root that is not there is an error of the call (FileNotFoundError, ...)
        feed = _tree_feeder(root, _paths.kind(paths))
    else:
        if isinstance(paths, (list, tuple)):
            _paths.path_list(paths)  # every element checked now, not halfway through the read
        else:
            try:
                paths = iter(paths)
            except TypeError:
                raise TypeError(f"paths must be a tree root or an iterable of paths, not {type(paths).__name__}") \
                    from None
        feed = _list_feeder(paths)
    _lib.lib()  # a missing library is an error of the call, not of the first next()
    return Reader(feed, params)


class Reader:
    """Iterator of (path, File) in plan order; use as a context manager or close() it when stopping early."""

    def __init__(self, feed, params):
        self._feed = feed
        self._params = params
        self._chan = _Channel(params["max_queued"])
        self._thread = None
        self._current = None
        self._done = False

    def __iter__(self):
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __next__(self):
        if self._done:
            raise StopIteration
        if self._thread is None:
            # The thread gets the channel and the parameters, never self: a Reader the caller dropped is
            # collected, and its __del__ stops the thread.
            self._thread = threading.Thread(target=_produce, args=(self._chan, self._feed, self._params),
                                            name="sweep-read", daemon=True)
            self._thread.start()
        if self._current is not None:
            self._current._finish()
            self._current = None
        msg = self._chan.get()
        kind = msg[0]
        if kind == "begin":
            _, path, st = msg
            self._current = File(self._chan, self._params["chunk"], path, st)
            return path, self._current
        if kind == "unread":  # nothing of it was read: the error is all there is
            _, path, exc = msg
            return path, File(self._chan, self._params["chunk"], path, None, exc)
        _, exc = msg  # "done"
        self._finish_thread()
        if exc is not None:
            raise exc
        raise StopIteration

    def _finish_thread(self):
        self._done = True
        self._chan.close()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()

    def close(self):
        """Stop reading: the background thread ends, the library's descriptors are closed."""
        if self._current is not None:
            self._current._abandon()
            self._current = None
        if not self._done:
            self._finish_thread()

    def __del__(self):
        self.close()


class File:
    """One file of read(): iterate it for its bytes (one pass). path is as given; stat is the file as opened
    (None when it could not be opened); size is the number of bytes that will come. error is None, or the
    ReadError the iteration raises, once the file's end was seen."""

    def __init__(self, chan, chunk, path, st, error=None):
        # The channel, not the Reader: a File the caller keeps must not keep its Reader alive, or a Reader
        # dropped mid-iteration would never be collected and its thread never stopped.
        self.path = path
        self.stat = st
        self.size = st.st_size if st is not None else 0
        self.error = error
        self._chan = chan
        self._ended = st is None  # no data will come: the end was already seen
        self._raised = False
        self._abandoned = False
        self._pos = 0             # next byte offset the caller gets
        self._held = None         # a data piece past a hole, waiting for the zeros before it
        self._chunk = chunk

    def __repr__(self):
        return f"<sweep.File {self.path!r} size={self.size} error={self.error!r}>"

    def _piece(self):
        """The next (offset, bytes) of data from the reader, or None at the file's end."""
        if self._held is not None:
            p, self._held = self._held, None
            return p
        if self._ended:
            return None
        msg = self._chan.get()
        if msg[0] == "data":
            return msg[1], msg[2]
        _, status = msg  # "end"
        self._ended = True
        self.error = _errors.status_error(status, self.path)
        return None

    def _check_usable(self):
        if self._abandoned:
            raise RuntimeError(f"the data of {self.path!r} was skipped: iterate a file before asking read() "
                               "for the next one")

    def _fail_or_stop(self):
        if self.error is not None and not self._raised:
            self._raised = True
            raise self.error
        raise StopIteration

    def __iter__(self):
        return self

    def __next__(self):
        self._check_usable()
        p = self._piece()
        if p is None:
            if self.error is None and self._pos < self.size:
                return self._zeros(self.size)  # a hole at the end (sparse)
            self._fail_or_stop()
        offset, data = p
        if offset > self._pos:  # a hole skipped on the device (sparse): zeros first
            self._held = p
            return self._zeros(offset)
        self._pos = offset + len(data)
        return data

    def _zeros(self, upto):
        n = min(upto - self._pos, self._chunk)
        self._pos += n
        return bytes(n)

    def pieces(self):
        """The data regions as (offset, bytes), holes left out (with sparse=True); the same single pass as
        iterating the file, and the same ReadError at the end."""
        self._check_usable()
        while True:
            p = self._piece()
            if p is None:
                break
            self._pos = p[0] + len(p[1])
            yield p
        if self.error is None:
            self._pos = max(self._pos, self.size)
        try:
            self._fail_or_stop()
        except StopIteration:
            return

    def _finish(self):
        """The caller asks for the next file: what is left of this one is read past (not kept)."""
        while self._piece() is not None:
            self._abandoned = True
        if self.error is None and self._pos < self.size:
            self._abandoned = True

    def _abandon(self):
        if not self._ended:
            self._ended = True
            self._abandoned = True


class _Feeding:
    """What the producer thread shares with a feeder: the batch, its callbacks' state, and the channel."""

    def __init__(self, lib, chan, batch, params, state):
        self.lib, self.chan, self.batch, self.params, self.state = lib, chan, batch, params, state
        self.planned = {}    # cookie -> path as the caller sees it, for the batch being read
        self.unplanned = []  # (path, exception) met since the last batch, reported after it
        self.cookie = 0

    def added(self, rc, path):
        """After a sweep_batch_add_*(): False when the run must stop (a callback or the reader stopped it)."""
        if rc >= 0:
            return True
        if self.state["exc"] is not None or self.state["batch_failed"]:
            return False
        # The file itself could not be added (the batch goes on).
        self.planned.pop(self.cookie, None)
        self.unplanned.append((path, _errors.read_error(-rc, path)))
        return True

    def next_cookie(self, path):
        self.cookie += 1
        self.planned[self.cookie] = path
        return self.cookie


def _list_feeder(paths):
    """Feed a list of paths: each stat'ed here, regular files added by path."""
    def feed(f):
        follow = f.params["follow"]
        kind = None
        for path in paths:
            if f.chan.closed:
                raise _Stopped
            bpath = _paths.to_bytes(path, "each path")
            k = _paths.kind(path)
            if kind is not None and k is not kind:
                raise TypeError("cannot mix str and bytes paths")
            kind = k
            try:
                st = os.stat(bpath, follow_symlinks=follow)
            except OSError as e:
                f.unplanned.append((path, _errors.read_error(e.errno, path)))
                continue
            if not _stat.S_ISREG(st.st_mode):
                f.unplanned.append((path, _not_regular(st.st_mode, path)))
                continue
            cookie = f.next_cookie(path)
            rc = f.lib.sweep_batch_add_path(f.batch, bpath, ctypes.byref(_lib.stat_to_c(st)), int(follow), cookie)
            if not f.added(rc, path):
                return rc
        return f.lib.sweep_batch_flush(f.batch)
    return feed


def _walk_order(plan_order):
    """The walk order a plan order needs: NONE and NAME keep the walk's order, so the walk must produce
    it; every other order sorts the plan, and the walk goes by the filesystem's policy (as sweep-plan)."""
    none, name = _lib.ORDER["none"], _lib.ORDER["name"]
    if plan_order in (none, name):
        return plan_order
    if plan_order in (_lib.ORDER["physical"], _lib.ORDER["inode"]):
        return _lib.ORDER["inode"]
    return _lib.ORDER["auto"]


def _tree_feeder(root, as_type):
    """Feed the regular files of the tree at root, walked by the library (its entries added as they come,
    reached again beneath the walk root without following anything swapped in since)."""
    def feed(f):
        stop = {"rc": 0}

        def on_entry(e, ctx):
            ec = e.contents
            if ec.stat_err or not _stat.S_ISREG(ec.st.mode):
                return 0  # stat errors come through on_error; only regular files are read
            path = _paths.from_bytes(ctypes.string_at(ec.path, ec.path_len), as_type)
            rc = f.lib.sweep_batch_add_entry(f.batch, e, f.next_cookie(path))
            if not f.added(rc, path):
                stop["rc"] = rc
                return rc
            return 0

        def on_error(err, ctx):
            c = err.contents
            path = _paths.from_bytes(c.path, as_type)
            f.unplanned.append((path, _errors.read_error(-c.err, path)))
            return 0

        entry_cb = _lib.WALK_ON_ENTRY(f.guarded(on_entry))
        error_cb = _lib.WALK_ON_ERROR(f.guarded(on_error))
        flags = (_lib.WALK_FOLLOW if f.params["follow"] else 0) | \
            (_lib.WALK_XDEV if f.params["one_file_system"] else 0)
        opts = _lib.sweep_walk_opts(size=ctypes.sizeof(_lib.sweep_walk_opts), flags=flags,
                                    order=_walk_order(f.params["order"]), backend=f.params["backend"],
                                    on_entry=entry_cb, on_error=error_cb)
        roots = (ctypes.c_char_p * 1)(root)
        rc = f.lib.sweep_walk(roots, 1, ctypes.byref(opts))
        if rc < 0:
            return stop["rc"] or rc
        return f.lib.sweep_batch_flush(f.batch)
    return feed


def _produce(chan, feed, params):
    """The background thread: plan and read with a sweep_batch, feeding chan. Ends with ("done", exc)."""
    lib = _lib.lib()
    state = {"exc": None, "batch_failed": False, "open": None}

    def guarded(fn):
        def call(*args):
            try:
                return fn(*args)
            except _Stopped:
                return -errno.ECANCELED
            except BaseException as e:  # noqa: B036 - carried to the consumer, never lost in C
                if state["exc"] is None:
                    state["exc"] = e
                return -errno.ECANCELED
        return call

    b = ctypes.c_void_p()
    f = _Feeding(lib, chan, b, params, state)
    f.guarded = guarded

    def on_begin(fp, ctx):
        fc = fp.contents
        cookie = fc.entry.contents.cookie
        state["open"] = cookie
        chan.put(("begin", f.planned[cookie], Stat.from_c(fc.st)))
        return 0

    def on_data(fp, offset, buf, n, ctx):
        chan.put(("data", offset, ctypes.string_at(buf, n)), n)
        return 0

    def on_end(fp, status, ctx):
        cookie = fp.contents.entry.contents.cookie
        path = f.planned.pop(cookie)
        if state["open"] == cookie:
            state["open"] = None
            chan.put(("end", status))
        else:  # never opened: begin was not called
            chan.put(("unread", path, _errors.status_error(status, path) or _errors.read_error(errno.EIO, path)))
        return 0

    def report_unplanned():
        for path, exc in f.unplanned:
            chan.put(("unread", path, exc))
        f.unplanned.clear()

    def on_batch_end(plan, status, ctx):
        if status < 0:
            state["batch_failed"] = True
        report_unplanned()
        return 0

    begin_cb = _lib.READ_BEGIN(guarded(on_begin))
    data_cb = _lib.READ_DATA(guarded(on_data))
    end_cb = _lib.READ_END(guarded(on_end))
    batch_end_cb = _lib.BATCH_END_HOOK(guarded(on_batch_end))
    ops = _lib.sweep_read_ops(size=ctypes.sizeof(_lib.sweep_read_ops), begin=begin_cb, data=data_cb, end=end_cb)
    read_flags = (_lib.READ_SPARSE if params["sparse"] else 0) | (_lib.READ_NOATIME if params["noatime"] else 0)
    opts = _lib.sweep_batch_opts(size=ctypes.sizeof(_lib.sweep_batch_opts), order=params["order"],
                                 max_files=params["batch"], backend=params["backend"],
                                 queue_depth=params["queue_depth"], buffer_size=params["chunk"],
                                 max_buffered=params["max_buffered"], read_flags=read_flags,
                                 ops=ctypes.pointer(ops), on_batch_end=batch_end_cb)
    fatal = None
    try:
        _lib.check(lib.sweep_batch_new(ctypes.byref(opts), ctypes.byref(b)))
        rc = feed(f)
        if state["exc"] is None and rc < 0 and rc != -errno.ECANCELED:
            fatal = OSError(-rc, os.strerror(-rc))
        if state["exc"] is None and fatal is None:
            report_unplanned()  # after the last batch, or when it was empty (no hook ran)
    except _Stopped:
        pass
    except BaseException as e:  # noqa: B036 - an error of the input (a bad path, the caller's iterator)
        fatal = e
    finally:
        lib.sweep_batch_free(b)
    exc = state["exc"] if not isinstance(state["exc"], _Stopped) else None
    chan.put_last(("done", exc or fatal))


def _not_regular(mode, path):
    if _stat.S_ISDIR(mode):
        err, what = errno.EISDIR, "is a directory, not a regular file"
    elif _stat.S_ISLNK(mode):
        err, what = errno.ELOOP, "is a symbolic link (not followed), not a regular file"
    else:
        err, what = errno.EINVAL, "is not a regular file"
    return _errors.NotRegularFileError(err, what, path)
