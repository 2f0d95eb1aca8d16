#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The tables of bench/emudisk-run from its runs.tsv (medians of the cold runs).

  emudisk-table.py RUNS.TSV SPEED

Per filesystem and tool: wall seconds (min-max), CPU seconds (user + system),
requests and seeks of the block trace, the trace replayed through the model
(closed queue at the traced depth) in model seconds and in real seconds at
SPEED, wall over that, the same with what the machine adds per request
(overhead_ms, measured before each run, times the requests) added to the
replay, the emulated drive's busy time over the replay's, and answers the
emulator gave 1 ms or more late. Then the sweep tools over their peers."""
import csv
import statistics
import sys

PEERS = [("sweep-tar", "gnu-tar", 0.2), ("sweep-tar", "bsdtar", None), ("sweep-cp", "cp-a", 0.15),
         ("sweep-sync", "rsync", None), ("sweep-du", "du", None)]
NAMES = {"gnu-tar": "GNU tar", "cp-a": "cp -a", "rsync": "rsync -a", "du": "GNU du"}


def med(rows, key):
    vals = [float(r[key]) for r in rows if r[key] not in ("", "nan")]
    return statistics.median(vals) if vals else float("nan")


def main():
    path, speed = sys.argv[1], float(sys.argv[2])
    runs = {}
    with open(path) as f:
        for r in csv.DictReader(f, delimiter="\t"):
            runs.setdefault((r["fs"], r["tool"]), []).append(r)
    fses = sorted({fs for fs, _ in runs})
    order = [t for t in ("gnu-tar", "bsdtar", "sweep-tar", "cp-a", "sweep-cp", "rsync", "sweep-sync", "du",
                         "sweep-du") if any((fs, t) in runs for fs in fses)]
    print(f"| fs | tool | runs | wall s (min-max) | CPU s | requests | seeks | replay s | replay at {speed:g}x, s "
          "| wall / replay | ms a request | wall / (replay + requests x ms) | drive busy / replay | late answers |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    wall = {}
    for fs in fses:
        for t in order:
            rows = runs.get((fs, t))
            if not rows:
                continue
            bad = sum(r["rc"] != "0" for r in rows)
            w = med(rows, "wall_s")
            wall[fs, t] = w
            ws = [float(r["wall_s"]) for r in rows]
            cpu = statistics.median(float(r["user_s"]) + float(r["sys_s"]) for r in rows)
            rep = med(rows, "replay_s")
            busy = med(rows, "emu_busy_s")
            late = statistics.median(int(r["emu_lagged"]) + int(r["emu_late_backing"]) for r in rows)
            ovh = med(rows, "overhead_ms")
            explained = rep / speed + med(rows, "requests") * ovh / 1000
            print(f"| {fs} | {NAMES.get(t, t)}{' (exit status!)' if bad else ''} | {len(rows)} "
                  f"| {w:.2f} ({min(ws):.2f}-{max(ws):.2f}) | {cpu:.2f} | {med(rows, 'requests'):.0f} "
                  f"| {med(rows, 'seeks'):.0f} | {rep:.1f} | {rep / speed:.2f} | {w / (rep / speed):.2f} "
                  f"| {ovh:.3f} | {w / explained:.2f} "
                  f"| {busy / rep:.2f} | {late:.0f} |")
    print()
    print("| fs | sweep | peer | wall ratio | target | replay ratio |")
    print("|---|---|---|---|---|---|")
    for fs in fses:
        for s, p, target in PEERS:
            if (fs, s) not in wall or (fs, p) not in wall:
                continue
            rr = med(runs[fs, s], "replay_s") / med(runs[fs, p], "replay_s")
            ratio = wall[fs, s] / wall[fs, p]
            tgt = "" if target is None else f"≤ {target}x: {'**met**' if ratio <= target else 'missed'}"
            print(f"| {fs} | {s} | {NAMES.get(p, p)} | {ratio:.3f}x | {tgt} | {rr:.3f}x |")


if __name__ == "__main__":
    main()
