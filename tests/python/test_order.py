# SPDX-License-Identifier: MIT
"""sweep.order() gives exactly what sweep-order prints for the same list, keeps the caller's objects and
types, and says why each path it could not stat came last."""
import errno
import os
import pathlib
import subprocess

import pytest

import sweep
from conftest import BUILD_ROOT, in_fiemap_order, scattered_files

ORDER_TOOL = os.path.join(BUILD_ROOT, "utils", "sweep-order")


def tool_order(paths, *args, cwd=None):
    """sweep-order -0 on paths (bytes): (its output as a list, its exit status)."""
    if not os.access(ORDER_TOOL, os.X_OK):
        pytest.skip("sweep-order was not built (-Dtools=false)")
    r = subprocess.run([ORDER_TOOL, "-0", *args], input=b"".join(p + b"\0" for p in paths),
                       capture_output=True, cwd=cwd)
    out = r.stdout.split(b"\0")
    assert out[-1] == b""
    return out[:-1], r.returncode


def listing(root):
    """Everything in a scattered tree, plus what order() must pass through or locate specially."""
    files = scattered_files(root)
    os.symlink(b"a/f1", os.path.join(os.fsencode(root), b"link"))
    os.symlink(b"nowhere", os.path.join(os.fsencode(root), b"dangling"))
    r = os.fsencode(root)
    extra = [r + b"/link", r + b"/dangling", r + b"/a", r + b"/nope1", files[0] + b"/notdir", r + b"/nope2"]
    # the unstat-able ones interleaved with the rest, so "last, in list order" is a real rearrangement
    return files[:5] + extra[:4] + files[5:40] + extra[4:] + files[40:]


@pytest.mark.parametrize("order", ["auto", "physical", "inode", "none"])
@pytest.mark.parametrize("follow", [False, True])
def test_same_as_sweep_order(place, order, follow):
    paths = listing(place)
    args = ["--order=" + order] + (["-L"] if follow else [])
    want, rc = tool_order(paths, *args)
    got = sweep.order(paths, order=order, follow=follow)
    assert got == want
    assert rc == 1  # some paths could not be stat'ed
    lost = [p for p in paths if p.endswith((b"/nope1", b"/nope2", b"/notdir"))
            or (follow and p.endswith(b"/dangling"))]
    assert got[-len(lost):] == lost
    assert [e.filename for e in got.failed] == lost
    if order in ("auto", "physical", "inode"):
        assert list(got) != [p for p in paths if p not in lost] + lost, "the layout did not scatter"


@pytest.mark.parametrize("order", ["auto", "physical"])
def test_fiemap_order_on_ext4(place, order):
    # SWEEP_DEVICE=hdd (conftest): the HDD policy of ext4 is physical order
    paths = scattered_files(place)
    got = sweep.order(paths, order=order)
    assert sorted(got) == sorted(paths) and got.failed == []
    assert in_fiemap_order(got)
    assert not in_fiemap_order(paths), "the layout did not scatter: name order is disk order"


def test_str_paths_same_order_as_bytes(place):
    paths = listing(place)
    as_str = [os.fsdecode(p) for p in paths]
    got = sweep.order(as_str)
    assert all(type(p) is str for p in got)
    assert [os.fsencode(p) for p in got] == sweep.order(paths)
    assert all(type(e.filename) is str for e in got.failed)


def test_failed_carries_errno(tmp_path):
    f = tmp_path / "file"
    f.write_bytes(b"x")
    paths = [str(tmp_path / "gone"), str(f), str(f / "below"), "x" * 5000]
    got = sweep.order(paths)
    assert got[0] == str(f)
    assert got[1:] == [paths[0], paths[2], paths[3]]
    assert [type(e) for e in got.failed] == [FileNotFoundError, NotADirectoryError, OSError]
    assert [e.errno for e in got.failed] == [errno.ENOENT, errno.ENOTDIR, errno.ENAMETOOLONG]
    assert [e.filename for e in got.failed] == [paths[0], paths[2], paths[3]]


def test_returns_the_callers_objects(tmp_path):
    objs = [pathlib.Path(tmp_path / n) for n in ("b", "a", "c")]
    for p in objs:
        p.write_bytes(b"1")
    got = sweep.order(objs)
    assert sorted(map(id, got)) == sorted(map(id, objs))
    assert isinstance(got, list) and got.failed == []
    assert sweep.order(iter(objs)) == got  # any iterable
    assert sweep.order([]) == [] and sweep.order([]).failed == []


def test_same_as_sweep_order_on_the_tests_own_filesystem(tmp_path):
    # Whatever the filesystem under the test, order() and sweep-order agree on it.
    names = [os.fsencode(tmp_path / ("f%d" % i)) for i in range(30)]
    for n in reversed(names):
        with open(n, "wb") as f:
            f.write(b"x" * 5000)
    want, rc = tool_order(names)
    assert rc == 0
    assert sweep.order(names) == want


@pytest.mark.parametrize("bad,exc", [
    ("a-string", TypeError),
    (b"bytes", TypeError),
    (pathlib.Path("/"), TypeError),
    (42, TypeError),
    ([1, 2], TypeError),
    (["ok", b"mixed"], TypeError),
    (["nul\0byte"], ValueError),
])
def test_wrong_paths(bad, exc):
    with pytest.raises(exc):
        sweep.order(bad)


@pytest.mark.parametrize("kw,exc", [
    ({"order": "name"}, ValueError),  # the orderer refuses name order: it is not a read order
    ({"order": "sideways"}, ValueError),
    ({"order": 1}, TypeError),
    ({"follow": 1}, TypeError),
    ({"follow": "yes"}, TypeError),
])
def test_wrong_options(kw, exc):
    with pytest.raises(exc):
        sweep.order(["/"], **kw)
