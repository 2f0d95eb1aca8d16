#!/usr/bin/env python3
# The SSD GC trace of issue 13 in DiskSim ascii: N (default 1.2M) 4 KiB requests
# arriving at 200 IOPS (Poisson), half random writes and half random reads over
# 16 GiB (ssd-pagemap's size). Deterministic: the same file from the same N.
#   bench/model/gc-trace.py OUT [N]
import random, sys
out, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1200000
rnd = random.Random(13)
t = 0.0
pages = (16 << 30) // 4096
with open(out, "w") as f:
    for i in range(n):
        t += rnd.expovariate(200.0) * 1000.0
        f.write("%.6f 0 %d 8 %d\n" % (t, rnd.randrange(pages) * 8, rnd.random() < 0.5))
