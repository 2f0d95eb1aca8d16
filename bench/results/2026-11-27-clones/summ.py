#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""summ.py RUNS.txt: medians of cold-ab.sh output per tool, and the first tool's wall over each's, pair by pair (the median)."""
import sys, statistics as st, collections
# Columns of runs-*.txt: round, tool, wall s, user s, sys s, 1-min load when it started.
rows=[l.split() for l in open(sys.argv[1]) if l.strip() and l.split()[0].isdigit()]
by=collections.defaultdict(dict)
for r in rows: by[r[1]][int(r[0])]=(float(r[2]),float(r[3]),float(r[4]),float(r[5]))
names=list(dict.fromkeys(r[1] for r in rows))
base=names[0]
for n in names:
    v=list(by[n].values())
    w=st.median(x[0] for x in v); c=st.median(x[1]+x[2] for x in v); ld=st.median(x[3] for x in v)
    ratios=[by[base][i][0]/by[n][i][0] for i in by[n] if i in by[base]]
    print(f"{n:8s} runs {len(v)} wall median {w:.2f}  cpu(user+sys) median {c:.2f}  load median {ld:.1f}  {base}/{n} pairwise median {st.median(ratios):.2f}")
