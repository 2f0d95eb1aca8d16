#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""sweep-bound.py [--sim SWEEP_SIM] [--device PRESET] TRACE...

The one-sweep bound of a run: the disk model's time to read, in a single
ascending pass, exactly the blocks the traced run read (the union of the
block_rq_issue reads of each tracefs TRACE), every request queued at once
under the C-SCAN host scheduler. No order of those reads can take less on
that drive: this is the floor under any tool that must read those blocks,
below which a wall-time target is a physical impossibility. Where the
blocks are contiguous it is the sequential bound (bytes over the zone's
sustained rate); where deletions left holes between them, the head still
passes under the holes (a gap shorter than a seek costs its rotation), so
it is above bytes / rate. Prints one line a trace: the trace, the bytes,
the extents, the bound in seconds. Requests are split at 1 MiB."""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ISSUE = re.compile(r"block_rq_issue: \S+ (\S+) .*?\) (\d+) \+ (\d+)")


def extents(path):
    ext = []
    for line in open(path, errors="replace"):
        m = ISSUE.search(line)
        if m and "R" in m.group(1) and int(m.group(3)) > 0:
            ext.append((int(m.group(2)), int(m.group(3))))
    ext.sort()
    union = []
    for s, n in ext:
        if union and s <= union[-1][1]:
            union[-1][1] = max(union[-1][1], s + n)
        else:
            union.append([s, s + n])
    return union


def bound(sim, device, union):
    with tempfile.NamedTemporaryFile("w", suffix=".disksim", delete=False) as f:
        for s, e in union:
            while s < e:
                n = min(e - s, 2048)
                f.write(f"0.0 0 {s} {n} 1\n")
                s += n
        name = f.name
    try:
        out = subprocess.run([sim, "replay", "--device", device, "--sched", "cscan", "--format", "disksim",
                              "--mode", "open", name], capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(name)
    row = [l for l in out.splitlines() if l.startswith(device + "/")]
    return float(row[0].split()[2])  # busy_s


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sim", default=os.environ.get("SWEEP_SIM", "build/utils/sweep-sim"))
    ap.add_argument("--device", default="hdd7200")
    ap.add_argument("traces", nargs="+")
    a = ap.parse_args()
    for t in a.traces:
        u = extents(t)
        if not u:
            print(f"{t}\t0\t0\t0.000")
            continue
        nbytes = sum(e - s for s, e in u) * 512
        print(f"{t}\t{nbytes}\t{len(u)}\t{bound(a.sim, a.device, u):.3f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
