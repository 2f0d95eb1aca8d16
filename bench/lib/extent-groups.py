#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What a physical-order prefetch could gain, group size by group size.

  extent-groups.py PLAN MOUNT SIM [GROUP_MIB...]

PLAN is `sweep-plan DIR` output run from MOUNT (plan order; paths relative
to MOUNT, GNU tar escapes). Every planned file's extents come from FIEMAP.
For each group size G (MiB; 0: no sort, each file whole in plan order;
"all": one group), the files are cut into consecutive groups of G bytes in
plan order, each group's extents sorted by physical address, adjacent
extents merged into requests of up to 1 MiB, and the request stream
replayed through SIM (sweep-sim replay, hdd7200, fcfs, 32 outstanding).
Prints one line per group size: MiB, requests, modelled seconds.

It models the reader's data phase alone (no metadata), with the device
doing the merging a queue of 32 allows; compare the numbers with each
other, not with a block trace.
"""
import fcntl
import json
import os
import struct
import subprocess
import sys
import tempfile

FS_IOC_FIEMAP = 0xC020660B
EXTENT_LAST = 0x1
MIB = 1 << 20


def extents(path):
    """[(physical, length)] of a file, in logical order."""
    out, start = [], 0
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        while True:
            n = 512
            buf = bytearray(struct.pack("=QQIIII", start, (1 << 64) - 1 - start, 0, 0, n, 0) + bytes(56 * n))
            fcntl.ioctl(fd, FS_IOC_FIEMAP, buf)
            cnt = struct.unpack_from("=I", buf, 20)[0]
            last = cnt == 0
            for i in range(cnt):
                lo, ph, ln, _, _, fl = struct.unpack_from("=QQQQQI", buf, 32 + 56 * i)
                out.append((ph, ln))
                start = lo + ln
                last = last or bool(fl & EXTENT_LAST)
            if last:
                return out
    finally:
        os.close(fd)


def unescape(p):
    return p.encode().decode("unicode_escape").encode("latin1")


def planned(plan, mnt):
    files = []
    with open(plan) as f:
        for line in f:
            rel = unescape(line.rstrip("\n").split(" ", 2)[2])
            path = os.path.join(mnt.encode(), rel)
            try:
                st = os.lstat(path)
                files.append((st.st_size, extents(path)))
            except OSError:
                pass
    return files


def model(order, sim):
    """Merge the extent stream into requests of up to 1 MiB and replay it; (requests, seconds)."""
    reqs = []
    for ph, ln in order:
        ln = (ln + 4095) // 4096 * 4096
        if reqs and reqs[-1][0] + reqs[-1][1] == ph and reqs[-1][1] + ln <= MIB:
            reqs[-1][1] += ln
            continue
        while ln > 0:
            c = min(ln, MIB)
            reqs.append([ph, c])
            ph, ln = ph + c, ln - c
    with tempfile.NamedTemporaryFile("w", suffix=".trace", delete=False) as f:
        t = 1.0
        for ph, ln in reqs:
            for ev in ("issue", "complete"):
                f.write(f"  x-0 [000] ..... {t:.6f}: block_rq_{ev}: 7,0 R {ln if ev == 'issue' else ''} () "
                        f"{ph // 512} + {ln // 512} none,0,0 [x]\n")
            t += 1e-6
        name = f.name
    try:
        res = subprocess.run([sim, "replay", "--device", "hdd7200", "--sched", "fcfs", "--format", "tracefs",
                              "--mode", "closed", "--queue", "32", "--json", name],
                             capture_output=True, text=True, check=True)
    finally:
        os.unlink(name)
    return len(reqs), json.loads(res.stdout)["elapsed_s"]


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    plan, mnt, sim = sys.argv[1:4]
    sizes = sys.argv[4:] or ["0", "16", "64", "256", "1024", "all"]
    files = planned(plan, mnt)
    print(f"# files {len(files)} bytes {sum(s for s, _ in files)} extents {sum(len(e) for _, e in files)}")
    for g in sizes:
        group = None if g == "all" else int(g) * MIB
        order, cur, held = [], [], 0
        for size, ex in files:
            if group == 0:
                order += ex
                continue
            cur += ex
            held += size
            if group is not None and held >= group:
                order += sorted(cur)
                cur, held = [], 0
        order += sorted(cur)
        n, secs = model(order, sim)
        print(f"{g} {n} {secs:.2f}", flush=True)


if __name__ == "__main__":
    main()
