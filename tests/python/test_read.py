# SPDX-License-Identifier: MIT
"""sweep.read(): every file's exact bytes, in plan order, with each file that vanished, changed or was
replaced reported as such (never wrong data, never silently left out), in bounded memory."""
import errno
import os
import pathlib
import tracemalloc

import pytest

import sweep
from conftest import WEIRD_NAMES, fd_count, in_fiemap_order, make_sparse, scattered_files


def contents(p):
    with open(p, "rb") as f:
        return f.read()


def read_all(paths, **kw):
    """[(path, bytes or the exception the file raised)] in delivery order; paths may be a Reader already."""
    out = []
    with (paths if isinstance(paths, sweep.Reader) else sweep.read(paths, **kw)) as r:
        for path, f in r:
            try:
                out.append((path, b"".join(f)))
            except OSError as e:
                assert f.error is e
                out.append((path, e))
    return out


def tree(root):
    files = scattered_files(root)
    big = os.path.join(os.fsencode(root), b"big")
    with open(big, "wb") as f:
        f.write(os.urandom(3 << 20) + b"tail")  # several chunks, not a multiple of the chunk size
    sparse = os.path.join(os.fsencode(root), b"sparse")
    make_sparse(sparse)
    # Written back before the plan looks: a delayed-allocation extent has no
    # location yet (it sorts last), while in_fiemap_order() looks after the
    # read, when it has one. Under load writeback comes late: a flake (CI).
    os.sync()
    return files + [big, sparse]


@pytest.mark.parametrize("batch", [4096, 7])
@pytest.mark.parametrize("backend", ["auto", "syscall"])
def test_exact_bytes_in_plan_order(place, batch, backend):
    paths = tree(place)
    got = read_all(paths, batch=batch, backend=backend, chunk=1 << 16)
    # plan order: each batch of `batch` files, as order() puts it
    want = []
    for i in range(0, len(paths), batch):
        want += sweep.order(paths[i:i + batch])
    assert [p for p, _ in got] == want
    assert want != paths, "the layout did not scatter: the order proves nothing"
    for p, data in got:
        assert data == contents(p), p


def regular_files(root):
    """Every regular file below root (bytes), by os.walk: what a tree read must deliver."""
    out = []
    for d, _, names in os.walk(os.fsencode(root)):
        out += [os.path.join(d, n) for n in names if os.path.isfile(os.path.join(d, n))
                and not os.path.islink(os.path.join(d, n))]
    return out


def full_tree(root):
    """tree() plus what a tree read passes over: symlinks, a FIFO, empty and nested directories."""
    paths = tree(root)
    r = os.fsencode(root)
    os.makedirs(r + b"/deep/er/est")
    with open(r + b"/deep/er/est/leaf", "wb") as f:
        f.write(b"leaf")
    os.mkdir(r + b"/emptydir")
    os.symlink(b"a/f1", r + b"/link")
    os.symlink(b"nowhere", r + b"/dangling")
    os.mkfifo(r + b"/fifo")
    os.sync()  # as in tree(): every file located before the plan
    return paths + [r + b"/deep/er/est/leaf"]


@pytest.mark.parametrize("backend", ["auto", "syscall"])
def test_tree_root_exact_bytes_in_disk_order(place, backend):
    paths = full_tree(place)
    got = read_all(os.fsencode(place), backend=backend, chunk=1 << 16)
    assert sorted(p for p, _ in got) == sorted(paths) == sorted(regular_files(place))
    for p, data in got:
        assert data == contents(p), p
    delivered = [p for p, _ in got]
    assert in_fiemap_order(delivered)
    assert not in_fiemap_order(sorted(delivered)), "the layout did not scatter: name order is disk order"
    names = {os.path.basename(p) for p in delivered}
    assert set(WEIRD_NAMES) <= names and b"empty" in names and b"sparse" in names


def test_tree_root_types(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f").write_bytes(b"f")
    (tmp_path / "g").write_bytes(b"g")
    os.symlink("g", tmp_path / "link")
    as_str = dict(read_all(str(tmp_path)))
    assert as_str == {str(tmp_path / "d" / "f"): b"f", str(tmp_path / "g"): b"g"}
    assert dict(read_all(tmp_path)) == as_str  # a PathLike root yields str
    assert dict(read_all(os.fsencode(tmp_path))) == {os.fsencode(p): d for p, d in as_str.items()}
    followed = dict(read_all(str(tmp_path), follow=True))
    assert followed[str(tmp_path / "link")] == b"g"
    assert dict(read_all(str(tmp_path / "g"))) == {str(tmp_path / "g"): b"g"}  # a file as the root


def test_tree_root_missing_raises_at_the_call(tmp_path):
    with pytest.raises(FileNotFoundError):
        sweep.read(tmp_path / "nope")


def test_tree_vanished_file_is_reported_not_fatal(place):
    names = [place / ("f%02d" % i) for i in range(20)]
    for p in names:
        p.write_bytes(p.name.encode() * 1000)
    os.sync()
    # the last in plan order; one file at a time (syscall reader, depth 1, one piece waiting), so the
    # reader has not opened it when the first file is delivered
    victim = str(sweep.order(names)[-1])
    got = []
    with sweep.read(str(place), batch=50, backend="syscall", queue_depth=1, max_queued=1) as r:
        for path, f in r:
            if not got:
                os.unlink(victim)
            try:
                got.append((path, b"".join(f)))
            except OSError as e:
                got.append((path, e))
    d = dict(got)
    assert sorted(d) == sorted(map(str, names))
    assert isinstance(d[victim], FileNotFoundError) and d[victim].filename == victim
    for p in names:
        if str(p) != victim:
            assert d[str(p)] == p.name.encode() * 1000


def test_str_paths_with_undecodable_bytes(place):
    paths = tree(place)
    as_str = [os.fsdecode(p) for p in paths]
    got = read_all(as_str)
    assert [type(p) for p, _ in got] == [str] * len(paths)
    assert sorted(p for p, _ in got) == sorted(as_str)
    for p, data in got:
        assert data == contents(p)
    assert any("\udcff" in p for p, _ in got)  # the \xff name came through as os.listdir would give it


@pytest.mark.parametrize("sparse", [False, True])
def test_sparse_and_empty(tmp_path, sparse):
    s, e = tmp_path / "sparse", tmp_path / "empty"
    make_sparse(s, 9 << 20)
    e.write_bytes(b"")
    got = dict(read_all([s, e], sparse=sparse, chunk=1 << 20))
    assert got[e] == b""
    assert got[s] == s.read_bytes()
    assert len(got[s]) == 9 << 20


def test_pieces_skip_holes(tmp_path):
    s = tmp_path / "sparse"
    make_sparse(s, 9 << 20)
    data = s.read_bytes()
    with sweep.read([s], sparse=True, chunk=1 << 16) as r:
        path, f = next(r)
        pieces = list(f.pieces())
    assert sum(len(b) for _, b in pieces) < len(data) // 2  # the holes were not delivered
    for off, b in pieces:
        assert data[off:off + len(b)] == b
    assert [o for o, _ in pieces] == sorted(o for o, _ in pieces)


def test_pieces_at_most_chunk(tmp_path):
    p = tmp_path / "f"
    p.write_bytes(os.urandom(1 << 20))
    with sweep.read([p], chunk=4096) as r:
        for _, f in r:
            sizes = [len(b) for b in f]
    assert sum(sizes) == 1 << 20 and max(sizes) <= 4096 and len(sizes) >= 256


def test_file_metadata(tmp_path):
    p = tmp_path / "f"
    p.write_bytes(b"12345")
    st = os.stat(p)
    with sweep.read([p]) as r:
        for _, f in r:
            assert f.size == 5
            assert (f.stat.st_ino, f.stat.st_dev, f.stat.st_size, f.stat.st_mtime_ns) == \
                (st.st_ino, st.st_dev, 5, st.st_mtime_ns)
            assert b"".join(f) == b"12345"
            assert f.error is None


def test_vanished_before_the_iteration_started(tmp_path):
    a, b, c = (tmp_path / n for n in "abc")
    for p in (a, b, c):
        p.write_bytes(p.name.encode() * 10)
    r = sweep.read([a, b, c])
    b.unlink()  # after the call, before anything was read
    got = dict(read_all(r))
    assert list(got) == sweep.order([a, c]) + [b]  # the path that could not be planned comes after its batch
    assert isinstance(got[b], FileNotFoundError) and isinstance(got[b], sweep.ReadError)
    assert got[b].errno == errno.ENOENT and got[b].filename == b
    assert got[a] == b"a" * 10 and got[c] == b"c" * 10


def meddling(paths, after, action):
    """The paths, with action() run once `after` was planned (the reader has not opened it yet: the batch
    is read when the list ends)."""
    for p in paths:
        yield p
        if p == after:
            action()


def test_vanished_after_it_was_planned(tmp_path):
    names = [tmp_path / ("f%d" % i) for i in range(20)]
    for p in names:
        p.write_bytes(os.urandom(5000))
    victim = names[7]
    got = read_all(meddling(names, victim, victim.unlink))
    assert sorted(p for p, _ in got) == sorted(names)  # reported, not skipped
    err = dict(got)[victim]
    assert isinstance(err, FileNotFoundError) and isinstance(err, sweep.ReadError)
    assert err.filename == victim
    for p, data in got:
        if p != victim:
            assert data == p.read_bytes()


def test_replaced_after_it_was_planned(tmp_path):
    a, other = tmp_path / "a", tmp_path / "other"
    a.write_bytes(b"planned" * 100)
    other.write_bytes(b"impostor" * 100)
    chunks = []
    with sweep.read(meddling([a], a, lambda: os.replace(other, a))) as r:
        for path, f in r:
            with pytest.raises(sweep.FileReplacedError) as ei:
                for b in f:
                    chunks.append(b)
    assert chunks == []  # not a byte of the file that stands there now
    assert ei.value.errno == errno.ESTALE and ei.value.filename == a
    assert isinstance(ei.value, OSError)


@pytest.mark.parametrize("change,act", [
    ("grew", lambda p: p.open("ab").write(b"more")),
    ("shrank", lambda p: os.truncate(p, 10)),
])
def test_changed_after_it_was_planned(tmp_path, change, act):
    a = tmp_path / "a"
    a.write_bytes(b"x" * 100000)
    with sweep.read(meddling([a], a, lambda: act(a))) as r:
        for path, f in r:
            data = []
            with pytest.raises(sweep.FileChangedError) as ei:
                for b in f:
                    data.append(b)
            assert f.error is ei.value
    assert ei.value.change == change and ei.value.filename == a
    assert isinstance(ei.value, sweep.ReadError)


def test_not_regular_files(tmp_path):
    f, d, link = tmp_path / "f", tmp_path / "d", tmp_path / "link"
    f.write_bytes(b"data")
    d.mkdir()
    link.symlink_to("f")
    os.mkfifo(tmp_path / "fifo")
    got = dict(read_all([d, link, tmp_path / "fifo", f]))
    assert got[f] == b"data"
    for p, err in ((d, errno.EISDIR), (link, errno.ELOOP), (tmp_path / "fifo", errno.EINVAL)):
        assert isinstance(got[p], sweep.NotRegularFileError) and got[p].errno == err
    assert dict(read_all([link], follow=True))[link] == b"data"


def test_stopping_early_and_skipping_files(tmp_path):
    names = [tmp_path / ("f%d" % i) for i in range(50)]
    for p in names:
        p.write_bytes(os.urandom(70000))
    before = fd_count()
    r = sweep.read(names, chunk=4096, max_queued=8192)
    first_path, first = next(r)
    second_path, second = next(r)  # first was never iterated: read past
    assert b"".join(second) == second_path.read_bytes()
    with pytest.raises(RuntimeError):
        next(first)
    third_path, third = next(r)
    next(third)
    r.close()
    with pytest.raises(RuntimeError):  # closed in the middle of its data
        list(third)
    assert list(r) == []
    assert fd_count() == before


def test_dropped_reader_stops_its_thread(tmp_path):
    names = [tmp_path / ("f%d" % i) for i in range(30)]
    for p in names:
        p.write_bytes(os.urandom(100000))
    before = fd_count()
    for _ in range(5):
        r = sweep.read(names, chunk=4096, max_queued=4096)
        next(r)
        thread = r._thread
        del r
        thread.join(timeout=60)
        assert not thread.is_alive()
    assert fd_count() == before


def test_memory_stays_bounded_for_a_huge_file(tmp_path):
    huge = tmp_path / "huge"
    with open(huge, "wb") as f:
        f.truncate(512 << 20)  # read in full (sparse=False): 512 MiB of zeros from the page cache
    tracemalloc.start()
    try:
        n = 0
        with sweep.read([huge], chunk=1 << 20, max_queued=4 << 20, max_buffered=4 << 20) as r:
            for _, f in r:
                for b in f:
                    n += len(b)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert n == 512 << 20
    assert peak < 32 << 20, f"peak {peak} bytes of Python memory for a 512 MiB file"


def test_errors_of_the_input_surface_from_the_iteration(tmp_path):
    a = tmp_path / "a"
    a.write_bytes(b"a")

    def bad_list():
        yield a
        yield 42

    def failing_list():
        yield a
        raise KeyError("from the caller's iterator")

    with pytest.raises(TypeError):
        read_all(bad_list())
    with pytest.raises(KeyError):
        read_all(failing_list())
    with pytest.raises(TypeError):
        read_all(iter([str(a), os.fsencode(a)]))


@pytest.mark.parametrize("args,kw,exc", [
    (("no-such-root",), {}, FileNotFoundError),
    ((b"no-such-root",), {}, FileNotFoundError),
    ((pathlib.Path("no-such-root"),), {}, FileNotFoundError),
    (("nul\0root",), {}, ValueError),
    ((42,), {}, TypeError),
    (([1],), {}, TypeError),
    ((["a", b"b"],), {}, TypeError),
    ((["nul\0"],), {}, ValueError),
    (([],), {"chunk": 0}, ValueError),
    (([],), {"chunk": "big"}, TypeError),
    (([],), {"chunk": True}, TypeError),
    (([],), {"batch": 0}, ValueError),
    (([],), {"order": "random"}, ValueError),
    (([],), {"backend": "carrier-pigeon"}, ValueError),
    (([],), {"sparse": None}, TypeError),
    (([],), {"max_queued": -1}, ValueError),
])
def test_wrong_arguments_fail_at_the_call(args, kw, exc):
    with pytest.raises(exc):
        sweep.read(*args, **kw)


def test_empty_list():
    assert list(sweep.read([])) == []
