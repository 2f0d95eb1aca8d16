#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Counts from a tracefs block trace (block_rq_issue / block_rq_complete text).

  blkstats.py stats TRACE [CSV]  -> JSON: requests, bytes, read/write split, seeks
                                    (and the head-position CSV, as `head` writes it)
  blkstats.py seq BYTES OUT      -> a synthetic tracefs trace reading BYTES in one
                                    sequential run (the model's bound)
  blkstats.py head TRACE OUT.csv -> time,sector of every issued request (head plot)
  blkstats.py outside TRACE      -> seconds between the trace markers "... tool start" and
                                    "... tool end" (bench/emudisk-run writes them) that lie
                                    before the first request or after the last one

A seek is a non-contiguous move of at least 1 MiB forwards, or any move backwards,
between consecutive issued requests (the definition the issues use)."""
import json
import re
import sys

SECTOR = 512
MIB = 1 << 20
_RX = re.compile(r"\s(\d+\.\d+):\s+(block_rq_issue|block_rq_complete):\s+(\d+),(\d+)\s+(\S+)\s.*?(\d+) \+ (\d+)")


def issues(path):
    """[(time, sector, nsectors, rwbs)] of issued data requests, in trace order."""
    out = []
    with open(path, errors="replace") as f:
        for line in f:
            m = _RX.search(line)
            if not m or m.group(2) != "block_rq_issue":
                continue
            n = int(m.group(7))
            if n == 0:  # flushes and other requests that move no data
                continue
            out.append((float(m.group(1)), int(m.group(6)), n, m.group(5)))
    return out


def stats(path, reqs=None):
    if reqs is None:
        reqs = issues(path)
    res = {"requests": 0, "bytes": 0, "read_requests": 0, "read_bytes": 0,
           "write_requests": 0, "write_bytes": 0, "seeks": 0, "seek_distance": 0,
           "duration": 0.0}
    end = None
    for t, sec, n, rwbs in reqs:
        b = n * SECTOR
        res["requests"] += 1
        res["bytes"] += b
        kind = "read" if "R" in rwbs else "write" if "W" in rwbs else None
        if kind:
            res[kind + "_requests"] += 1
            res[kind + "_bytes"] += b
        start = sec * SECTOR
        if end is not None and (start < end or start - end >= MIB):
            res["seeks"] += 1
            res["seek_distance"] += abs(start - end)
        end = start + b
    if reqs:
        res["duration"] = round(reqs[-1][0] - reqs[0][0], 6)
    return res


def seq(nbytes, out, chunk=512 * 1024):
    """Same line format as the kernel's, so every consumer parses it the same way."""
    reqs, sec, left = [], 2048, nbytes
    while left > 0:
        ns = (min(chunk, left) + SECTOR - 1) // SECTOR
        reqs.append((sec, ns))
        sec += ns
        left -= ns * SECTOR
    write_reads(out, reqs, "synthetic sequential read")


def write_reads(out, reqs, what, step=0.000001):
    """A synthetic trace of (sector, nsectors) reads issued in this order, step seconds apart
    (1 us by default; 0: all at once)."""
    with open(out, "w") as f:
        f.write(f"# {what}, bench/lib/blkstats.py\n")
        t = 1.0
        for sec, ns in reqs:
            f.write(f"           bench-0       [000] .....  {t:.6f}: block_rq_issue: 7,0 R {ns * SECTOR} () "
                    f"{sec} + {ns} none,0,0 [bench]\n")
            f.write(f"           bench-0       [000] .....  {t:.6f}: block_rq_complete: 7,0 R () "
                    f"{sec} + {ns} none,0,0 [0]\n")
            t += step


def head(path, out, reqs=None):
    if reqs is None:
        reqs = issues(path)
    t0 = reqs[0][0] if reqs else 0.0
    with open(out, "w") as f:
        f.write("time,sector,nsectors,rwbs\n")
        for t, sec, n, rwbs in reqs:
            f.write(f"{t - t0:.6f},{sec},{n},{rwbs}\n")


_MARK = re.compile(r"\s(\d+\.\d+):\s+tracing_mark_write:.*tool (start|end)")
_EVENT = re.compile(r"\s(\d+\.\d+):\s+block_rq_(issue|complete):")


def outside(path):
    """Seconds of the tool's run outside [first request issued, last completed]; nan without markers."""
    mark, first, last = {}, None, None
    with open(path, errors="replace") as f:
        for line in f:
            m = _EVENT.search(line)
            if m:
                t = float(m.group(1))
                first = t if first is None else first
                last = t
                continue
            m = _MARK.search(line)
            if m:
                mark[m.group(2)] = float(m.group(1))
    if len(mark) < 2:
        return float("nan")
    if first is None:
        return mark["end"] - mark["start"]
    return max(0.0, first - mark["start"]) + max(0.0, mark["end"] - last)


def main():
    cmd = sys.argv[1]
    if cmd == "stats":
        reqs = issues(sys.argv[2])
        print(json.dumps(stats(sys.argv[2], reqs)))
        if len(sys.argv) > 3:
            head(sys.argv[2], sys.argv[3], reqs)
    elif cmd == "seq":
        seq(int(sys.argv[2]), sys.argv[3])
    elif cmd == "head":
        head(sys.argv[2], sys.argv[3])
    elif cmd == "outside":
        print(f"{outside(sys.argv[2]):.6f}")
    else:
        sys.exit("usage: blkstats.py stats TRACE [CSV] | seq BYTES OUT | head TRACE OUT.csv | outside TRACE")


if __name__ == "__main__":
    main()
