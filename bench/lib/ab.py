#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""ab.py RUNS 'COMMAND_A' 'COMMAND_B': run two shell commands in turn (A B A B
...), RUNS times each, and print each run's wall, user and system seconds,
then each command's medians and the A/B ratios taken pair by pair (their
median): pairing keeps a ratio meaningful when the machine's speed drifts
during the call. Wall is a monotonic clock around the child; user and system
are the kernel's accounting of the finished child (and all it waited for).
The commands' output goes to /dev/null; a command that fails stops the call
(exit 1), so that no failed run is counted as a time."""
import os
import resource
import statistics
import subprocess
import sys
import time


def one(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    rc = subprocess.call(["sh", "-c", cmd], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if rc != 0:
        sys.exit(f"ab.py: exit {rc} from: {cmd}")
    return wall, after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime


def main():
    if len(sys.argv) != 4 or not sys.argv[1].isdigit() or int(sys.argv[1]) < 1:
        sys.exit("usage: ab.py RUNS 'COMMAND_A' 'COMMAND_B'")
    runs, cmds = int(sys.argv[1]), {"A": sys.argv[2], "B": sys.argv[3]}
    for k, c in cmds.items():
        print(f"{k} = {c}")
    got = {"A": [], "B": []}
    print("run  cmd   wall_s   user_s    sys_s")
    for i in range(runs):
        for k in ("A", "B"):
            w, u, s = one(cmds[k])
            got[k].append((w, u, s))
            print(f"{i + 1:3}  {k:3} {w:8.3f} {u:8.3f} {s:8.3f}", flush=True)
    med = lambda xs: statistics.median(xs)
    print("            min   median      max")
    for k in ("A", "B"):
        for j, name in enumerate(("wall", "cpu")):
            xs = [r[0] if j == 0 else r[1] + r[2] for r in got[k]]
            print(f"{k} {name:6} {min(xs):8.3f} {med(xs):8.3f} {max(xs):8.3f}")
    for j, name in enumerate(("wall", "cpu")):
        pick = (lambda r: r[0]) if j == 0 else (lambda r: r[1] + r[2])
        xs = [pick(a) / pick(b) for a, b in zip(got["A"], got["B"]) if pick(b) > 0]
        if xs:
            print(f"A/B {name:4} {min(xs):8.4f} {med(xs):8.4f} {max(xs):8.4f}")


if __name__ == "__main__":
    main()
