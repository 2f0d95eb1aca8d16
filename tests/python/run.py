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


here = os.path.dirname(os.path.abspath(__file__))
outcomes = Outcomes()
rc = pytest.main(["-p", "no:cacheprovider", "-rs", "-v", "--rootdir", here]
                 + [os.path.abspath(f) for f in sys.argv[1:]], plugins=[outcomes])
if rc == 0 and outcomes.ran == 0:
    print(f"SKIP: all {outcomes.skipped} tests skipped")
    sys.exit(77)
sys.exit(int(rc))
