#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Where the head goes on xfs: every request of a block trace by what it hits.

  xfs-kinds.py IMAGE TRACE [--sim SWEEP_SIM] [--device PRESET] [--mode closed|depend]
               [--queue Q] [--json]

IMAGE is the xfs image (or device) the trace was taken on, read with xfs_db -r
(blockget, then blockuse of every block: data, dir, inode, btree blocks, log...);
the trace is tracefs block_rq_issue/complete text of that image's loop device,
with the image at offset 0. Each request is counted under the kind most of its
blocks have: requests, MiB, seeks into it (the issues' definition, blkstats.py);
a metadata request ("M" in its rwbs) into a file's blocks is its extent btree,
which blockuse counts as the file's data.
With --sim, the trace is replayed through the model (sweep-sim replay, as
bench/run does) and the drive's busy time is shared out by kind, in the order
the model finished the requests: the time each one kept the drive busy beyond
the one before. Data is also split by the gap before each data request, the
part of its time beyond its transfer at the model's sequential rate.

With --limits (and --sim), what the same requests would cost read in the best
order any reader of these files through the filesystem could hope for: sorted
into one ascending pass of metadata then one of data ("two passes": a walk must
read the directories and inodes before it knows where the data is), the data
alone in one pass, and everything in one pass; each replayed at depth 1 and 32.

Needs xfsprogs (xfs_db). bench/results/2026-11-26-xfs-disk used it."""
import argparse
import collections
import csv
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blkstats  # noqa: E402

MIB = 1 << 20
AGMETA = {"sb", "agf", "agi", "agfl", "btbno", "btcnt", "btino", "btfino", "btrefcnt", "btrmap", "freelist"}


def xfs_db(image, *cmds):
    args = ["xfs_db", "-r"]
    for c in cmds:
        args += ["-c", c]
    return subprocess.run(args + [image], check=True, capture_output=True, text=True).stdout


def block_kinds(image):
    """(kind of each block by its linear number, block size)"""
    geo = {}
    for line in xfs_db(image, "sb", "print blocksize agblocks agcount agblklog").splitlines():
        k, _, v = line.partition(" = ")
        geo[k.strip()] = int(v)
    bs, agb, agc, log = geo["blocksize"], geo["agblocks"], geo["agcount"], geo["agblklog"]
    cmds = ["blockget"]
    for a in range(agc):
        cmds += [f"fsblock {a << log}", f"blockuse -c {agb}"]
    rx = re.compile(r"block \d+ \((\d+)/(\d+)\) type (\S+)")
    kinds = {}
    for line in xfs_db(image, *cmds).splitlines():
        m = rx.match(line)
        if m:
            k = m.group(3)
            kinds[int(m.group(1)) * agb + int(m.group(2))] = "agmeta" if k in AGMETA else k
    return kinds, bs


def kind_of(kinds, bs, off, length, meta=False):
    c = collections.Counter(kinds.get(b, "?") for b in range(off // bs, max((off + length + bs - 1) // bs, off // bs + 1)))
    k = c.most_common(1)[0][0]
    # xfs_db's blockuse counts a file's extent-btree blocks as its data; xfs reads
    # them as metadata buffers (REQ_META, "M" in rwbs), data never is
    return "extent btree" if k == "data" and meta else k


def sim(args, trace, extra):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "c.csv")
        cmd = [args.sim, "replay", "--device", args.device, "--sched", "fcfs", "--format", "tracefs",
               "--mode", args.mode, "--csv", out] + extra + [trace]
        subprocess.run(cmd, check=True, capture_output=True)
        with open(out) as f:
            return list(csv.DictReader(f))


def model_rate(args):
    """The model's sequential rate (bytes/s): 1 GiB in one run, as bench/run measures it."""
    with tempfile.TemporaryDirectory() as d:
        t = os.path.join(d, "seq.trace")
        blkstats.seq(1 << 30, t)
        rows = sim(args, t, [])
    return (1 << 30) / (max(int(r["finish_ns"]) for r in rows) / 1e9)


def limits(args, reqs):
    meta = sorted((s, n) for s, n, k in reqs if k != "data")
    data = sorted((s, n) for s, n, k in reqs if k == "data")
    orders = {"two passes": meta + data, "data alone": data, "one pass": sorted(meta + data)}
    out = {}
    with tempfile.TemporaryDirectory() as d:
        for name, order in orders.items():
            if not order:
                continue
            t = os.path.join(d, "l.trace")
            blkstats.write_reads(t, order, "best order")
            out[name] = {f"q{q}": round(max(int(r["finish_ns"]) for r in sim(args, t, ["--mode", "closed", "--queue", str(q)]))
                                        / 1e9, 3) for q in (1, 32)}
    return out


def gap_class(d):
    if d == 0:
        return "contiguous"
    if d < 0:
        return "backwards"
    for lim, name in ((64 << 10, "< 64 KiB"), (MIB, "< 1 MiB"), (16 * MIB, "< 16 MiB")):
        if d < lim:
            return name
    return ">= 16 MiB"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("image")
    ap.add_argument("trace")
    ap.add_argument("--sim", help="sweep-sim, to share the model's time out by kind")
    ap.add_argument("--device", default="hdd7200")
    ap.add_argument("--mode", default="closed", choices=("closed", "depend"))
    ap.add_argument("--queue", type=int, help="closed mode at this depth (default: the trace's mean depth)")
    ap.add_argument("--limits", action="store_true", help="replay the same requests in the best orders (needs --sim)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    kinds, bs = block_kinds(args.image)
    reqs = blkstats.issues(args.trace)
    res = collections.defaultdict(lambda: collections.Counter())
    end = None
    classified = []
    meta = {sec for _, sec, _, rwbs in reqs if "M" in rwbs}
    for _, sec, n, _ in reqs:
        off, ln = sec * blkstats.SECTOR, n * blkstats.SECTOR
        k = kind_of(kinds, bs, off, ln, sec in meta)
        classified.append((sec, n, k))
        res[k]["requests"] += 1
        res[k]["bytes"] += ln
        if end is not None and (off < end or off - end >= MIB):
            res[k]["seeks"] += 1
        end = off + ln
    out = {"requests": len(reqs), "seeks": sum(r["seeks"] for r in res.values()), "kinds": {}}
    if args.sim:
        rows = sim(args, args.trace, ["--queue", str(args.queue)] if args.queue else [])
        rate = model_rate(args)
        rows.sort(key=lambda r: int(r["finish_ns"]))
        prev, pend, pk = 0, None, None
        gaps = collections.defaultdict(lambda: collections.Counter())
        for r in rows:
            s, f, off, ln = int(r["start_ns"]), int(r["finish_ns"]), int(r["offset"]), int(r["length"])
            busy = max(f - max(s, prev), 0)
            prev = max(prev, f)
            k = kind_of(kinds, bs, off, ln, off // blkstats.SECTOR in meta)
            res[k]["model_ns"] += busy
            if k == "data":
                g = "after metadata" if pk not in (None, "data") else gap_class(off - pend) if pend is not None else "first"
                gaps[g]["requests"] += 1
                gaps[g]["excess_ns"] += busy - ln / rate * 1e9
            pend, pk = off + ln, k
        out["model_s"] = round(prev / 1e9, 3)
        out["model_rate"] = round(rate)
        out["bound_s"] = round(sum(r["bytes"] for r in res.values()) / rate, 3)
        out["data_gaps"] = {g: {"requests": v["requests"], "excess_s": round(v["excess_ns"] / 1e9, 3)}
                            for g, v in sorted(gaps.items(), key=lambda x: -x[1]["excess_ns"])}
        if args.limits:
            out["limits_s"] = limits(args, classified)
    for k, v in sorted(res.items(), key=lambda x: (-x[1]["model_ns"], -x[1]["requests"])):
        e = {"requests": v["requests"], "mib": round(v["bytes"] / MIB, 1), "seeks": v["seeks"]}
        if args.sim:
            e["model_s"] = round(v["model_ns"] / 1e9, 3)
        out["kinds"][k] = e
    if args.json:
        print(json.dumps(out))
        return
    print(f"{args.trace}: {out['requests']} requests, {out['seeks']} seeks"
          + (f", model {out['model_s']} s, bound {out['bound_s']} s ({out['model_s'] / out['bound_s']:.2f}x)" if args.sim else ""))
    print("| kind | requests | MiB | seeks into it |" + (" model s |" if args.sim else ""))
    print("|---|---|---|---|" + ("---|" if args.sim else ""))
    for k, e in out["kinds"].items():
        print(f"| {k} | {e['requests']} | {e['mib']} | {e['seeks']} |" + (f" {e['model_s']} |" if args.sim else ""))
    if args.sim and out["data_gaps"]:
        print("data, by the gap before each request: requests, model s beyond the transfer")
        for g, e in out["data_gaps"].items():
            print(f"  {g:15} {e['requests']:6} {e['excess_s']:7.2f}")
    for name, v in out.get("limits_s", {}).items():
        print(f"limit, {name}: {v['q1']} s at depth 1, {v['q32']} s at depth 32"
              f" ({v['q1'] / out['bound_s']:.2f}x, {v['q32'] / out['bound_s']:.2f}x the bound)")


if __name__ == "__main__":
    main()
