# SPDX-License-Identifier: MIT
"""Run pytest on the given test files for meson: exit 77 (skip) when pytest is missing or when every test
skipped, so that a suite that could not run its cases never reports a pass."""
import os
import subprocess
import sys

try:
    import pytest
except ImportError:
    print("SKIP: pytest is not installed (Debian: python3-pytest)")
    sys.exit(77)


class Outcomes:
    def __init__(self):
        self.ran = 0
        self.skipped = 0

    def pytest_runtest_logreport(self, report):
        if report.when == "call" and not report.skipped:
            self.ran += 1
        elif report.skipped:
            self.skipped += 1


def sanitizer_runtimes():
    """The sanitizer runtimes an instrumented libsweep needs loaded first in python (which is not
    instrumented), as the compiler that built it names them; None when one cannot be found."""
    wanted = {"address": "libasan.so", "undefined": "libubsan.so"}
    libs = []
    for s in os.environ["SWEEP_SANITIZE"].split(","):
        if s not in wanted:
            return None
        try:
            path = subprocess.run(["cc", "-print-file-name=" + wanted[s]], capture_output=True, text=True,
                                  check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return None
        if not os.path.isabs(path):
            return None
        libs.append(os.path.realpath(path))
    return libs


def unmount_under(base):
    """Lazily unmount whatever is still mounted below base (deepest first): what fixtures of a pytest that
    was killed or aborted (a sanitizer report is fatal in-process) could not take down. A loop device
    mounted with -o loop goes away with its mount."""
    base = os.path.realpath(base)
    with open("/proc/self/mounts") as f:
        points = [line.split()[1].encode().decode("unicode_escape") for line in f]
    for mnt in sorted((m for m in points if m.startswith(base + "/")), key=len, reverse=True):
        print(f"run.py: {mnt} was left mounted by the tests: unmounting it")
        subprocess.run(["umount", "-l", mnt], check=False)


# pytest runs in a child with its own base directory, so that this process can take down after it what
# a crash left behind (mounts, loop devices, files), and report the crash as a failure.
if not os.environ.get("SWEEP_PY_CHILD"):
    import shutil
    import tempfile
    env = dict(os.environ, SWEEP_PY_CHILD="1")
    env["SWEEP_PY_BASETEMP"] = base = tempfile.mkdtemp(prefix="sweep-pytest-")
    # The ASan+UBSan build: python runs with the runtimes preloaded (LD_PRELOAD), leak checking off (the
    # interpreter keeps its memory to the end by design), every other ASan/UBSan report fatal.
    if os.environ.get("SWEEP_SANITIZE"):
        libs = sanitizer_runtimes()
        if not libs:
            print(f"SKIP: no sanitizer runtime to preload for {os.environ['SWEEP_SANITIZE']}")
            sys.exit(77)
        env["LD_PRELOAD"] = " ".join(libs + [os.environ.get("LD_PRELOAD", "")]).strip()
        # last, so that it wins over a detect_leaks=1 from the caller (bootstrap.sh sets one)
        env["SWEEP_PY_ASAN_OPTIONS"] = os.environ.get("ASAN_OPTIONS", "")
        env["ASAN_OPTIONS"] = "abort_on_error=1:" + os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
        env["UBSAN_OPTIONS"] = "halt_on_error=1:print_stacktrace=1:" + os.environ.get("UBSAN_OPTIONS", "")
        env["SWEEP_PY_PRELOADED"] = "1"
    try:
        rc = subprocess.run([sys.executable] + sys.argv, env=env).returncode
    finally:
        if os.geteuid() == 0:
            unmount_under(base)
        shutil.rmtree(base, ignore_errors=True)
    if rc < 0:
        print(f"run.py: pytest was killed by signal {-rc}")
        rc = 1
    sys.exit(rc)

# The runtimes are loaded in this interpreter now; its children (cc, mkfs, cp, pip) must not get them:
# a compiler under a preloaded ASan crashes. A child python that loads libsweep gets them back
# (conftest.child_python_env).
if os.environ.get("SWEEP_PY_PRELOADED") and "LD_PRELOAD" in os.environ:
    os.environ["SWEEP_PY_LD_PRELOAD"] = os.environ.pop("LD_PRELOAD")
    os.environ["ASAN_OPTIONS"] = os.environ.pop("SWEEP_PY_ASAN_OPTIONS", "")  # the caller's, for the children

here = os.path.dirname(os.path.abspath(__file__))
outcomes = Outcomes()
rc = pytest.main(["-p", "no:cacheprovider", "-rs", "-v", "--rootdir", here,
                  "--basetemp", os.path.join(os.environ["SWEEP_PY_BASETEMP"], "t")]
                 + [os.path.abspath(f) for f in sys.argv[1:]], plugins=[outcomes])
if rc == 0 and outcomes.ran == 0:
    print(f"SKIP: all {outcomes.skipped} tests skipped")
    sys.exit(77)
sys.exit(int(rc))
