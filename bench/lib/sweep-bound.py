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
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blkstats  # noqa: E402

SPLIT = 2048  # sectors: requests split at 1 MiB


def extents(path):
    """The union of the read requests' sectors, as sorted [start, end) runs."""
    union = []
    for _, s, n, rwbs in sorted(blkstats.issues(path), key=lambda r: r[1]):
        if "R" not in rwbs:
            continue
        if union and s <= union[-1][1]:
            union[-1][1] = max(union[-1][1], s + n)
        else:
            union.append([s, s + n])
    return union


def bound(sim, device, union):
    reqs = [(s, min(SPLIT, e - s)) for a, e in union for s in range(a, e, SPLIT)]
    with tempfile.TemporaryDirectory() as d:
        t = os.path.join(d, "sweep.trace")
        blkstats.write_reads(t, reqs, "one ascending sweep, every request queued at once", step=0)
        out = subprocess.run([sim, "replay", "--device", device, "--sched", "cscan", "--format", "tracefs",
                              "--mode", "open", t], capture_output=True, text=True, check=True).stdout
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
