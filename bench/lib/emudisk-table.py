#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The tables of bench/emudisk-run (medians of the cold runs).

  emudisk-table.py RUNS.TSV REPLAYS.TSV

Per filesystem and tool: wall seconds (min-max), CPU seconds (user +
system), requests and seeks of the block trace; the trace replayed through
the model closed (drive time alone, no think time) and depend (each request
when the one it waited for completes, plus the gap the trace shows: the
drive's time and the tool's own); the seconds the tool spent before its
first request and after its last (outside: in no replay); wall over depend
plus outside, and what the emulation added to each request, (wall - depend
- outside) / requests (the loop device's worker, the FUSE round trip, the
machine's wake-ups, which a real disk does not add); the emulated
drive's busy time over the open replay's (the same requests at the same
times: 1.00 when the emulator's model did what the replay's did); answers
the emulator gave late (1 ms or more after the model's time, or held by the
backing file). Then the sweep tools over their peers, in wall time and in
both replays. Replays are in model seconds: runs at --speed 1 compare.
Runs during which the page cache was dropped (drops > 0) are left out."""
import csv
import statistics
import sys

ORDER = ["gnu-tar", "bsdtar", "sweep-tar", "cp-a", "sweep-cp", "rsync", "sweep-sync", "du", "sweep-du"]
PEERS = [("sweep-tar", "gnu-tar", 0.2), ("sweep-tar", "bsdtar", None), ("sweep-cp", "cp-a", 0.15),
         ("sweep-sync", "rsync", None), ("sweep-du", "du", None)]
NAMES = {"gnu-tar": "GNU tar", "cp-a": "cp -a", "rsync": "rsync -a", "du": "GNU du"}


def med(vals):
    vals = [v for v in vals if v == v]
    return statistics.median(vals) if vals else float("nan")


def main():
    runs_path, replays_path = sys.argv[1:3]
    rep = {}
    with open(replays_path) as f:
        for r in csv.DictReader(f, delimiter="\t"):
            rep[r["name"]] = {k: float(v) if v else float("nan") for k, v in r.items() if k != "name"}
    runs, dropped = {}, 0
    with open(runs_path) as f:
        for r in csv.DictReader(f, delimiter="\t"):
            if r.get("drops") not in (None, "", "0"):
                dropped += 1
                continue
            r.update(rep.get(f"{r['fs']}-step{r['step']}-{r['tool']}-r{r['repeat']}", {}))
            runs.setdefault((r["fs"], r["tool"]), []).append(r)
    fses = sorted({fs for fs, _ in runs})
    if dropped:
        print(f"({dropped} runs left out: the page cache was dropped during them)\n")

    def col(rows, key):
        return med([float(r.get(key, "nan")) for r in rows])

    print("| fs | tool | runs | wall s (min-max) | CPU s | requests | seeks | replay closed s | replay depend s "
          "| outside s | wall / (depend + outside) | ms added a request | drive busy / open replay | late answers |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    m = {}
    for fs in fses:
        for t in [t for t in ORDER if (fs, t) in runs]:
            rows = runs[fs, t]
            ws = [float(r["wall_s"]) for r in rows]
            w, reqs, dep, out = med(ws), col(rows, "requests"), col(rows, "depend_s"), col(rows, "outside_s")
            m[fs, t] = (w, col(rows, "closed_s"), dep)
            cpu = med([float(r["user_s"]) + float(r["sys_s"]) for r in rows])
            late = med([int(r["emu_lagged"]) + int(r["emu_late_backing"]) for r in rows])
            busy = col(rows, "emu_busy_s") / col(rows, "open_busy_s")
            bad = " (exit status!)" if any(r["rc"] != "0" for r in rows) else ""
            print(f"| {fs} | {NAMES.get(t, t)}{bad} | {len(rows)} | {w:.2f} ({min(ws):.2f}-{max(ws):.2f}) "
                  f"| {cpu:.2f} | {reqs:.0f} | {col(rows, 'seeks'):.0f} | {m[fs, t][1]:.1f} | {dep:.1f} "
                  f"| {out:.1f} | {w / (dep + out):.2f} | {(w - dep - out) / reqs * 1000:.2f} | {busy:.2f} | {late:.0f} |")
    print()
    print("| fs | sweep | peer | wall ratio | target | replay closed ratio | replay depend ratio |")
    print("|---|---|---|---|---|---|---|")
    for fs in fses:
        for s, p, target in PEERS:
            if (fs, s) not in m or (fs, p) not in m:
                continue
            (ws, cs, ds), (wp, cp, dp) = m[fs, s], m[fs, p]
            tgt = "" if target is None else f"≤ {target}x: {'**met**' if ws / wp <= target else 'missed'}"
            print(f"| {fs} | {s} | {NAMES.get(p, p)} | {ws / wp:.3f}x | {tgt} | {cs / cp:.3f}x | {ds / dp:.3f}x |")


if __name__ == "__main__":
    main()
