# SPDX-License-Identifier: MIT
"""Run pytest on the given test files for meson: exit 77 (skip) when pytest is missing or when every test
skipped, so that a suite that could not run its cases never reports a pass."""
import os
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
    import subprocess
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


# The ASan+UBSan build: python runs with the runtimes preloaded (LD_PRELOAD), leak checking off (the
# interpreter keeps its memory to the end by design), every other ASan/UBSan report fatal.
if os.environ.get("SWEEP_SANITIZE") and not os.environ.get("SWEEP_PY_PRELOADED"):
    libs = sanitizer_runtimes()
    if not libs:
        print(f"SKIP: no sanitizer runtime to preload for {os.environ['SWEEP_SANITIZE']}")
        sys.exit(77)
    os.environ["LD_PRELOAD"] = " ".join(libs + [os.environ.get("LD_PRELOAD", "")]).strip()
    # last, so that it wins over a detect_leaks=1 from the caller (bootstrap.sh sets one)
    os.environ["SWEEP_PY_ASAN_OPTIONS"] = os.environ.get("ASAN_OPTIONS", "")
    os.environ["ASAN_OPTIONS"] = "abort_on_error=1:" + os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    os.environ["UBSAN_OPTIONS"] = "halt_on_error=1:print_stacktrace=1:" + os.environ.get("UBSAN_OPTIONS", "")
    os.environ["SWEEP_PY_PRELOADED"] = "1"
    os.execv(sys.executable, [sys.executable] + sys.argv)

# The runtimes are loaded in this interpreter now; its children (cc, mkfs, cp, pip) must not get them:
# a compiler under a preloaded ASan crashes. A child python that loads libsweep gets them back
# (conftest.child_python_env).
if os.environ.get("SWEEP_PY_PRELOADED") and "LD_PRELOAD" in os.environ:
    os.environ["SWEEP_PY_LD_PRELOAD"] = os.environ.pop("LD_PRELOAD")
    os.environ["ASAN_OPTIONS"] = os.environ.pop("SWEEP_PY_ASAN_OPTIONS", "")  # the caller's, for the children

here = os.path.dirname(os.path.abspath(__file__))
outcomes = Outcomes()
rc = pytest.main(["-p", "no:cacheprovider", "-rs", "-v", "--rootdir", here]
                 + [os.path.abspath(f) for f in sys.argv[1:]], plugins=[outcomes])
if rc == 0 and outcomes.ran == 0:
    print(f"SKIP: all {outcomes.skipped} tests skipped")
    sys.exit(77)
sys.exit(int(rc))
