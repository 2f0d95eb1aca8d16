#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pairs.py RUNS.TSV [REFS.TSV]: per pair of tools (A B, run alternately), each
tool's median wall, kernel (sys) and user time, max RSS and load, then A/B
ratios repeat by repeat and their median (wall and CPU); then the reference
lines of REFS.TSV (bench/files-run: the checkers' pass times)."""
import collections
import csv
import statistics
import sys

rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
by = collections.OrderedDict()
for r in rows:
    by.setdefault((r["fs"], r["pair"]), collections.OrderedDict()).setdefault(r["tool"], {})[r["rep"]] = r
for (fs, pair), tools in by.items():
    names = list(tools)
    print(f"== {fs} {pair}: {' / '.join(names)}")
    for t in names:
        rs = list(tools[t].values())
        w = [float(r["wall_s"]) for r in rs]
        med = lambda k: statistics.median(float(r[k]) for r in rs)
        print(f"  {t:16} n={len(rs)} wall median {statistics.median(w):7.2f} s (range {min(w):.2f}-{max(w):.2f})"
              f"  sys {med('sys_s'):6.2f}  user {med('user_s'):6.2f}  maxRSS {med('maxrss_kb') / 1024:6.1f} MiB"
              f"  load {med('load1'):5.1f}")
    if len(names) == 2:
        a, b = names
        wall, cpu = [], []
        for rep in tools[a]:
            if rep in tools[b]:
                ra, rb = tools[a][rep], tools[b][rep]
                wall.append(float(ra["wall_s"]) / float(rb["wall_s"]))
                ca = float(ra["sys_s"]) + float(ra["user_s"])
                cb = float(rb["sys_s"]) + float(rb["user_s"])
                cpu.append(ca / cb if cb else float("nan"))
        if wall:
            print(f"  {a}/{b} wall per repeat: {' '.join(f'{x:.3f}' for x in wall)}; median {statistics.median(wall):.3f}")
            print(f"  {a}/{b} CPU per repeat:  {' '.join(f'{x:.3f}' for x in cpu)}; median {statistics.median(cpu):.3f}")
if len(sys.argv) > 2:
    refs = list(csv.DictReader(open(sys.argv[2]), delimiter="\t"))
    if refs:
        print("== references (cold, on the unmounted image)")
    for r in refs:
        print(f"  {r['fs']:5} {r['checker']:10} wall {float(r['wall_s']):7.2f} s  sys {float(r['sys_s']):6.2f}"
              f"  user {float(r['user_s']):6.2f}  {r['passes']}")
