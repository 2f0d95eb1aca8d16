#!/usr/bin/env python3
# Read response percentiles (ms) of a sweep-sim --csv file: p50 p90 p99 max.
import csv, sys
v = sorted(int(r["response_ns"]) for r in csv.DictReader(open(sys.argv[1])) if r["op"] == "R")
pct = lambda p: v[min(len(v) - 1, max(0, int(p / 100 * len(v) + 0.999999) - 1))] / 1e6
print("reads %d: p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, max %.3f ms" % (len(v), pct(50), pct(90), pct(99), v[-1] / 1e6))
