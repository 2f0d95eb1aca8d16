#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/common/manifest.py under its old name, for callers that still use
it (tests/python/test_copy.py). Same options and output."""
import os
import runpy

runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common", "manifest.py"),
               run_name="__main__")
