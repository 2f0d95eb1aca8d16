#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Change a share of the files of a tree, reproducibly: change.py DIR FRACTION SEED.
Each chosen file gets a line appended (new size and mtime), so a sync tool must copy
it again whichever change test it uses."""
import os
import random
import sys


def main():
    top, frac, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    files = []
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames.sort()
        for f in sorted(filenames):
            p = os.path.join(dirpath, f)
            if os.path.isfile(p) and not os.path.islink(p):
                files.append(p)
    rng = random.Random(seed)
    pick = rng.sample(files, max(1, int(len(files) * frac))) if files else []
    for p in pick:
        with open(p, "ab") as f:
            f.write(b"changed by bench/lib/change.py seed %d\n" % seed)
    print(f"change.py: changed {len(pick)} of {len(files)} files", file=sys.stderr)


if __name__ == "__main__":
    main()
