# SPDX-License-Identifier: MIT
"""sweep.copy(): the library's copy engine gives what `cp -a` gives (compared through tests/cp/manifest.py),
and its failures are OSErrors with the errno cp would show, nothing written outside the destination."""
import errno
import os
import shutil
import subprocess
import sys

import pytest

import sweep
from conftest import SOURCE_ROOT, WEIRD_NAMES, make_sparse

MANIFEST = os.path.join(SOURCE_ROOT, "tests", "cp", "manifest.py")
# everything cp -a keeps that a test can see; atime moves when read, blocks with the method
FIELDS = "type,mode,owner,size,mtime,data,link,rdev,xattr,hl,holes"


def manifest(root, fields=FIELDS):
    r = subprocess.run([sys.executable, MANIFEST, "--fields=" + fields, root], capture_output=True, check=True)
    return r.stdout.decode("utf-8", "surrogateescape").splitlines()


def xattrs_supported(d):
    probe = os.path.join(d, ".xattr-probe")
    open(probe, "wb").close()
    try:
        os.setxattr(probe, "user.probe", b"1")
        return True
    except OSError:
        return False
    finally:
        os.unlink(probe)


def source_tree(root):
    """Every kind of entry cp -a copies: data of several sizes, empty, sparse, odd names, symlinks (also
    dangling), hard links, a FIFO, modes, old times, xattrs where supported, nested and empty directories."""
    r = os.fsencode(root)
    os.makedirs(r + b"/d/e/f")
    os.mkdir(r + b"/empty-dir")
    for i, size in enumerate((1, 4095, 4096, 70000, 3 << 20)):
        with open(r + b"/d/file%d" % i, "wb") as f:
            f.write(os.urandom(size))
    open(r + b"/d/e/empty", "wb").close()
    make_sparse(r + b"/sparse")
    for n in WEIRD_NAMES:
        with open(r + b"/d/e/f/" + n, "wb") as f:
            f.write(n * 10)
    os.symlink(b"d/file0", r + b"/link")
    os.symlink(b"nowhere", r + b"/dangling")
    os.link(r + b"/d/file1", r + b"/hard")
    os.mkfifo(r + b"/fifo")
    os.chmod(r + b"/d/file2", 0o640)
    os.chmod(r + b"/d/e", 0o750)
    os.chmod(r + b"/d/file3", 0o4755)
    if xattrs_supported(root):
        os.setxattr(r + b"/d/file0", "user.note", b"\x00\xffvalue")
        os.setxattr(r + b"/d/e", "user.dir", b"x")
    for dirpath, dirnames, filenames in os.walk(r, topdown=False):
        for n in filenames + dirnames:
            os.utime(os.path.join(dirpath, n), ns=(1_000_000_123, 1_500_000_000_456_789_012), follow_symlinks=False)
    os.utime(r, ns=(1_000_000_123, 1_400_000_000_000_000_001))


def test_same_as_cp_a(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    source_tree(src)
    if not shutil.which("cp"):
        pytest.skip("no cp")
    subprocess.run(["cp", "-a", str(src), str(tmp_path / "by-cp")], check=True)
    stats = sweep.copy(src, tmp_path / "by-sweep", preserve="all", hard_links=True)
    want = manifest(tmp_path / "by-cp")
    assert manifest(tmp_path / "by-sweep") == want
    assert manifest(src) == want  # and both are the source
    assert stats.errors == 0 and stats.files == 13 and stats.bytes > 3 << 20


def test_bytes_names_and_into(tmp_path):
    src = os.fsencode(tmp_path / "src")
    os.mkdir(src)
    for n in WEIRD_NAMES:
        with open(src + b"/" + n, "wb") as f:
            f.write(n)
    out = os.fsencode(tmp_path / "out")
    os.mkdir(out)
    sweep.copy(src, out, into=True)  # as cp -r src out/
    for n in WEIRD_NAMES:
        with open(out + b"/src/" + n, "rb") as f:
            assert f.read() == n
    sweep.copy([src + b"/" + WEIRD_NAMES[0], src + b"/" + WEIRD_NAMES[1]], out)  # a list goes into dst
    assert sorted(os.listdir(out)) == sorted([b"src", WEIRD_NAMES[0], WEIRD_NAMES[1]])


def test_missing_source(tmp_path):
    with pytest.raises(OSError) as ei:
        sweep.copy(tmp_path / "nope", tmp_path / "copy")
    e = ei.value
    assert isinstance(e, sweep.CopyError)
    assert e.errno == errno.ENOENT and e.filename == str(tmp_path / "nope")  # a PathLike comes back as str
    assert [p.op for p in e.errors] == ["stat"]
    assert not (tmp_path / "copy").exists()


def test_missing_destination_directory(tmp_path):
    (tmp_path / "f").write_bytes(b"x")
    with pytest.raises(sweep.CopyError) as ei:
        sweep.copy(tmp_path / "f", tmp_path / "no" / "copy")
    assert ei.value.errno == errno.ENOENT
    with pytest.raises(sweep.CopyError) as ei:
        sweep.copy(tmp_path / "f", tmp_path / "f", into=True)  # into a file
    assert ei.value.errno == errno.ENOTDIR and ei.value.errors[0].op == "target"


def test_symlinks_inside_the_destination_are_never_followed(tmp_path):
    """Symlinks in the destination tree where the source has a directory and a file. cp -a refuses the
    directory with the same words, but writes the file through its symlink (outside the destination);
    the engine replaces that symlink instead (sweep_copy_tree(3): never through a symlink in a tree)."""
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    (src / "sub" / "f").write_bytes(b"new")
    (src / "g").write_bytes(b"new g")
    for name in ("dst", "by-cp"):
        outside = tmp_path / (name + "-outside")
        outside.mkdir()
        (outside / "g").write_bytes(b"old g")
        (tmp_path / name).mkdir()
        os.symlink(outside, tmp_path / name / "sub")
        os.symlink(outside / "g", tmp_path / name / "g")
    before = manifest(tmp_path / "dst-outside")
    with pytest.raises(sweep.CopyError) as ei:
        sweep.copy(src, tmp_path / "dst", preserve="all")  # merged into dst, as cp -aT
    e = ei.value
    assert [(p.op, p.errno) for p in e.errors] == [("overwrite_nondir", None)]
    assert e.errno is None and e.filename2 == str(tmp_path / "dst" / "sub")
    assert manifest(tmp_path / "dst-outside") == before  # nothing written through either symlink
    assert (tmp_path / "dst" / "g").read_bytes() == b"new g" and not (tmp_path / "dst" / "g").is_symlink()
    assert (tmp_path / "dst" / "sub").is_symlink()

    cp = subprocess.run(["cp", "-a", "-T", str(src), str(tmp_path / "by-cp")], capture_output=True, text=True)
    assert cp.returncode == 1
    assert cp.stderr.strip() == "cp: " + str(e).replace(
        str(tmp_path / "dst"), str(tmp_path / "by-cp"))
    assert (tmp_path / "by-cp-outside" / "g").read_bytes() == b"new g"  # cp wrote through the link


def test_unreadable_source_file_is_reported_and_the_rest_copied(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root reads a mode-000 file")
    src = tmp_path / "src"
    src.mkdir()
    (src / "a").write_bytes(b"a")
    (src / "secret").write_bytes(b"s")
    os.chmod(src / "secret", 0)
    with pytest.raises(sweep.CopyError) as ei:
        sweep.copy(src, tmp_path / "dst")
    assert ei.value.errno == errno.EACCES and ei.value.errors[0].op == "open_src"
    assert (tmp_path / "dst" / "a").read_bytes() == b"a"


@pytest.mark.parametrize("kw,exc", [
    ({"preserve": ("mode", "colour")}, ValueError),
    ({"overwrite": "sometimes"}, ValueError),
    ({"recursive": 1}, TypeError),
    ({"batch": 0}, ValueError),
    ({"order": "diagonal"}, ValueError),
])
def test_wrong_options(tmp_path, kw, exc):
    with pytest.raises(exc):
        sweep.copy(tmp_path, tmp_path / "x", **kw)
    assert not (tmp_path / "x").exists()


def test_wrong_paths(tmp_path):
    with pytest.raises(TypeError):
        sweep.copy(str(tmp_path), os.fsencode(tmp_path / "x"))  # str and bytes mixed
    with pytest.raises(ValueError):
        sweep.copy([], tmp_path)
    with pytest.raises(ValueError):
        sweep.copy("a\0b", tmp_path / "x")
