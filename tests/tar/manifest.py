#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What must survive an archive round trip, one line per entry.

    manifest.py DIR

tests/common/manifest.py with the round trip's choices: stat fields, content
digest, data map and sparse flag, symlink target, device numbers, link count
and hard-link group, and xattrs (POSIX ACLs included); no atime or block
count (tar keeps neither); sockets left out (tar skips them).
MANIFEST_NO_MAP=1 leaves out the data map.
"""
import importlib.util
import os
import sys

_spec = importlib.util.spec_from_file_location(
    "sweep_common_manifest", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common", "manifest.py"))
_common = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_common)

ROUND_TRIP = dict(fields="mode owner size mtime data link rdev xattr nlink hl holes sparse".split(), no_sockets=True)


def manifest(path):
    """The manifest of the tree at path, as one string."""
    return _common.manifest(os.fsencode(path), **ROUND_TRIP)


def main():
    _common.main(sys.argv[1:], **ROUND_TRIP)


if __name__ == "__main__":
    main()
