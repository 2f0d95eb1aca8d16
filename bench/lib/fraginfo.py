#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Fragmentation summary of a tree: walks it in readdir order, depth first (the
order GNU tar reads files), and reports
  files, bytes, mean extents per file, share of files with more than one extent,
  mean extents of the files of 1 MiB or more,
  disorder: share of files whose first block lies before the previous file's
            first block in readdir order (0 = readdir order is physical order,
            about 0.5 = as good as random),
  jumps: non-contiguous moves of >= 1 MiB or backwards when reading every extent
         in readdir order (what a plain tar makes the disk do, data only).
Usage: fraginfo.py DIR [LABEL]  -> one JSON object on stdout
       fraginfo.py --line FILE.json -> the same as one human-readable line."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fiemap import file_extents  # noqa: E402

MIB = 1 << 20


def walk(top):
    try:
        it = list(os.scandir(top))
    except OSError:
        return
    for e in it:
        if e.is_dir(follow_symlinks=False):
            yield from walk(e.path)
        elif e.is_file(follow_symlinks=False):
            yield e


def line(d):
    return (f"{d['files']} files, {d['bytes'] / 2**30:.2f} GiB, "
            f"{d['mean_extents']:.3f} extents/file, {100 * d['multi_extent_share']:.1f}% fragmented, "
            f"{d.get('mean_extents_large', 0):.2f} extents/file >= 1 MiB, "
            f"readdir-vs-physical disorder {d['disorder']:.3f}, {d['jumps']} jumps in readdir order")


def main():
    if sys.argv[1] == "--line":
        with open(sys.argv[2]) as f:
            print(line(json.load(f)))
        return
    top = sys.argv[1]
    files = nbytes = nextents = multi = 0
    large = large_ext = 0
    located = back = jumps = 0
    prev_first = None
    head = None
    for e in walk(top):
        try:
            ex = file_extents(e.path)
            size = e.stat(follow_symlinks=False).st_size
        except OSError:
            continue
        files += 1
        nbytes += size
        nextents += max(len(ex), 1)
        multi += len(ex) > 1
        if size >= MIB:
            large += 1
            large_ext += max(len(ex), 1)
        if not ex:
            continue
        located += 1
        first = ex[0][1]
        if prev_first is not None and first < prev_first:
            back += 1
        prev_first = first
        for _, ph, ln in ex:
            if head is not None and (ph < head or ph - head >= MIB):
                jumps += 1
            head = ph + ln
    res = {
        "label": sys.argv[2] if len(sys.argv) > 2 else top,
        "files": files,
        "bytes": nbytes,
        "mean_extents": round(nextents / files, 4) if files else 0,
        "multi_extent_share": round(multi / files, 4) if files else 0,
        "large_files": large,
        "mean_extents_large": round(large_ext / large, 3) if large else 0,
        "disorder": round(back / max(located - 1, 1), 4),
        "jumps": jumps,
    }
    print(json.dumps(res))


if __name__ == "__main__":
    main()
