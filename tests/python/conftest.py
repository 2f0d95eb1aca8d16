# SPDX-License-Identifier: MIT
"""Shared pieces of the Python package's tests: where things are, a real filesystem, trees, manifests."""
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.environ.get("SOURCE_ROOT") or os.path.dirname(os.path.dirname(HERE))
BUILD_ROOT = os.environ.get("BUILD_ROOT") or os.path.join(SOURCE_ROOT, "build")
if os.path.join(SOURCE_ROOT, "python") not in sys.path:
    sys.path.insert(0, os.path.join(SOURCE_ROOT, "python"))
if not os.environ.get("SWEEP_LIBRARY") and os.path.exists(os.path.join(BUILD_ROOT, "lib", "libsweep.so")):
    os.environ["SWEEP_LIBRARY"] = os.path.join(BUILD_ROOT, "lib", "libsweep.so")


sys.path.insert(0, os.path.join(SOURCE_ROOT, "tests", "order"))
from firstblock import first as first_physical  # noqa: E402 - FIEMAP, independently of libsweep

# Loop devices report themselves non-rotational, and the SSD class keeps the list's order: the tests that
# assert a disk order need the HDD class's policy (the library reads this at each call).
os.environ.setdefault("SWEEP_DEVICE", "hdd")


def child_python_env(env):
    """env for a child python that loads libsweep: in the sanitizer build it needs the runtimes
    preloaded, as this interpreter has them (run.py keeps them out of every other child)."""
    if os.environ.get("SWEEP_PY_LD_PRELOAD"):
        # the interpreter's own memory is never freed by design: no leak report for it
        env = dict(env, LD_PRELOAD=os.environ["SWEEP_PY_LD_PRELOAD"],
                   ASAN_OPTIONS=env.get("ASAN_OPTIONS", "") + ":detect_leaks=0")
    return env


def fd_count():
    return len(os.listdir("/proc/self/fd"))


def _skip_unless_root_loop():
    if os.geteuid() != 0:
        pytest.skip("a loop-mounted ext4 needs root")
    if not shutil.which("mkfs.ext4") or not os.path.exists("/dev/loop-control"):
        pytest.skip("no mkfs.ext4 or loop devices")


@pytest.fixture(scope="session")
def ext4(tmp_path_factory):
    """A fresh ext4 on a loop device (unmounted and detached afterwards), where files have physical places
    and the order differs from the names' order; skips without root or loop devices."""
    _skip_unless_root_loop()
    work = tmp_path_factory.mktemp("ext4")
    img, mnt = work / "fs.img", work / "mnt"
    mnt.mkdir()
    with open(img, "wb") as f:
        f.truncate(128 << 20)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(img)], check=True, stdout=subprocess.DEVNULL)
    # -o loop: the loop device goes away with the unmount
    r = subprocess.run(["mount", "-o", "loop", str(img), str(mnt)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a loop device: {r.stderr.strip()}")
    try:
        yield mnt
    finally:
        # A thread a failed test left reading there keeps it busy: detach lazily then, so that neither the
        # mount nor the loop device (autoclear) outlives the run.
        if subprocess.run(["umount", str(mnt)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(mnt)], check=False)
        img.unlink()


@pytest.fixture
def place(ext4, request):
    """A fresh directory on the ext4 image for one test."""
    d = ext4 / request.node.name.replace("/", "_").replace("[", "_").replace("]", "")
    d.mkdir()
    yield d
    shutil.rmtree(d, ignore_errors=True)


WEIRD_NAMES = [b"sp ace", b"new\nline", b"ctl\x01\x1bbyte\xff", b"\xe9t\xe9 latin1", b"-dash", b"*star?"]


def scattered_files(root, rounds=40, dirs=(b"a", b"b", b"c", b"d")):
    """Files written interleaved across directories, some removed and refilled, so that disk order, inode
    order and name order differ. Returns their paths (bytes), in name order."""
    root = os.fsencode(root)
    for d in dirs:
        os.makedirs(os.path.join(root, d), exist_ok=True)
    for i in range(rounds):
        for j, d in enumerate(dirs):
            with open(os.path.join(root, d, b"f%d" % i), "wb") as f:
                f.write(os.urandom(((i * 7 + j) % 13) * 1500 + 100))
    os.sync()
    for i in range(0, rounds, 3):
        os.unlink(os.path.join(root, dirs[1], b"f%d" % i))
    for i in range(rounds // 2):
        with open(os.path.join(root, dirs[2], b"late%d" % i), "wb") as f:
            f.write(os.urandom(20000))
    for n in WEIRD_NAMES:
        with open(os.path.join(root, dirs[3], n), "wb") as f:
            f.write(n * 100)
    open(os.path.join(root, dirs[0], b"empty"), "wb").close()
    os.sync()
    out = []
    for d in dirs:
        for n in sorted(os.listdir(os.path.join(root, d))):
            out.append(os.path.join(root, d, n))
    return out


def in_fiemap_order(paths):
    """True when paths are in first-physical-byte order as FIEMAP reports it, the files without a location
    (empty ones) after all located ones: the order the library must give on the HDD class."""
    keys = [first_physical(p) for p in paths]
    located = [k for k in keys if k is not None]
    return located == sorted(located) and keys[:len(located)] == located


def make_sparse(path, size=8 << 20):
    """A file with data, a hole, data, and a hole to its end."""
    with open(path, "wb") as f:
        f.write(b"head" * 1000)
        f.seek(3 << 20)
        f.write(b"middle" * 1000)
        f.truncate(size)
