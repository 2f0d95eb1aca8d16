#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Markdown report and PNG plots from a bench/run output directory:
   report.py OUT [MORE...]  -> OUT/report.md, OUT/summary.json, OUT/*.png
With more directories (e.g. one bench/run per filesystem, run at the same time),
their results, summaries and traces are merged into OUT first.
Medians over the repeats; the headline table checks the issues' claims, the
targets table issue 11's, per device mode (hdd: HDD model; ssd: wall time)."""
import collections
import glob
import json
import os
import statistics
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

MIB = 1 << 20
# presentation order, and the peers each sweep tool is compared with
ORDER = ["sweep-plan-read", "sweep-tar", "gnu-tar", "gnu-tar-inode", "bsdtar",
         "sweep-du", "du", "diskus", "sweep-cp", "cp-a", "xcp", "fcp", "sweep-sync", "rsync"]
LABEL = {"sweep-plan-read": "sweep-plan --read", "gnu-tar": "GNU tar",
         "gnu-tar-inode": "GNU tar --sort=inode", "bsdtar": "bsdtar", "cp-a": "cp -a",
         "du": "GNU du", "rsync": "rsync -a", "sweep-tar": "sweep-tar",
         "sweep-du": "sweep-du", "sweep-cp": "sweep-cp", "sweep-sync": "sweep-sync",
         "diskus": "diskus", "xcp": "xcp", "fcp": "fcp"}
GROUPS = ["tar", "du", "cp", "sync"]
# The device modes of a run: "hdd" (SWEEP_DEVICE=hdd, judged by the HDD model),
# "ssd" (SWEEP_DEVICE=ssd, judged by wall time on this machine's disk). Peers have
# no mode ("any") and serve both.
MODE = "hdd"


def dest_words(dest):
    """Where bench/run's --dest put the copies, in words."""
    if dest == "tmpfs":
        return "copies go to a tmpfs"
    if dest == "same":
        return ("copies go to the source's own filesystem (grown by the image's size; the tools "
                "copy its `tree`), and each copy's time includes a sync of it")
    return f"copies go to `{dest}`, another filesystem, and each copy's time includes a sync of it"


def label(tool, device="any"):
    """The tool's name, with its device mode when the run had more than one or it is not hdd."""
    name = LABEL.get(tool, tool)
    if device != "any" and (MODE == "both" or device != "hdd"):
        name += f" [{device}]"
    return name


def serves(device, mode):
    """Does a row of this device serve the comparisons of this mode?"""
    return device in (mode, "any")
PHASE = {"full": "", "first": " (first copy)", "nochange": " (no-change re-run)",
         "1pct": " (after changing 1%)"}
HDD_LIMIT = {"ext4": 1.5, "xfs": 2.5}


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def load(out):
    rows = [json.loads(l) for l in open(os.path.join(out, "results.jsonl")) if l.strip()]
    for r in rows:  # results from before device modes: sweep tools ran as on a disk
        r.setdefault("device", "hdd" if r["tool"].startswith("sweep") else "any")
    params = json.load(open(os.path.join(out, "params.json")))
    frag = {}
    for p in glob.glob(os.path.join(out, "frag-*.json")):
        d = json.load(open(p))
        fs, step = os.path.basename(p)[5:-5].split("-step")
        frag[(fs, int(step))] = d
    return rows, params, frag


def summarize(rows, seqbw):
    g = collections.defaultdict(list)
    for r in rows:
        g[(r["fs"], r["step"], r["group"], r["tool"], r["phase"], r["device"])].append(r)
    s = {}
    for k, rs in g.items():
        t = [r["trace"] for r in rs]
        m = {
            "runs": len(rs),
            "failed": sum(r["exit"] != 0 for r in rs),
            "wall": med([r["wall"] for r in rs]),
            "wall_min": min(r["wall"] for r in rs),
            "wall_max": max(r["wall"] for r in rs),
            "cpu": med([r["user"] + r["sys"] for r in rs]),
            "rss_mib": med([r["maxrss_kb"] / 1024 for r in rs]),
            "requests": med([x["requests"] for x in t]),
            "bytes": med([x["bytes"] for x in t]),
            "seeks": med([x["seeks"] for x in t]),
            "hdd": med([r["hdd"] for r in rs]),
            "ssd": med([r["ssd"] for r in rs]),
            "hdd_bound": med([r["hdd_bound"] for r in rs]),
            "ssd_bound": med([r["ssd_bound"] for r in rs]),
            "lost": sum(r.get("lost_events", 0) for r in rs),
        }
        m["wall_bound"] = m["bytes"] / seqbw if seqbw else None
        s[k] = m
    return s


def fmt(x, nd=2):
    if x is None:
        return "–"
    if isinstance(x, float) and not x.is_integer():
        return f"{x:.{nd}f}"
    return f"{int(x)}"


def ratio(a, b):
    return a / b if a is not None and b else None


def verdict(ok):
    return "–" if ok is None else ("**yes**" if ok else "no")


def pick(s, fs, step, tool, phase, mode):
    """The summary of one tool at one step, in the given device mode (or a peer's)."""
    for (f, st, g, t, p, d), m in s.items():
        if f == fs and st == step and t == tool and p == phase and serves(d, mode):
            return m
    return None


def targets(s, fses, last):
    """Issue 11's targets at the last step: rows of (class, target, fs, measured, peers, met)."""
    out = []
    for fs in fses:
        def get(tool, phase="full", mode="hdd"):
            return pick(s, fs, last[fs], tool, phase, mode)

        for tool in ("sweep-tar", "sweep-plan-read"):
            m = get(tool)
            hb = ratio(m["hdd"], m["hdd_bound"]) if m else None
            if hb is not None:
                out.append(("HDD model", f"{label(tool)} ≤ 1.25x the sequential bound", fs,
                            f"{fmt(hb)}x ({fmt(m['hdd'])} s, bound {fmt(m['hdd_bound'])} s)", "–",
                            verdict(hb <= 1.25)))
        for tool, peer, phase, lim in (("sweep-du", "du", "full", 0.2), ("sweep-cp", "cp-a", "full", 0.1),
                                       ("sweep-sync", "rsync", "first", 0.1),
                                       ("sweep-sync", "rsync", "nochange", 0.3)):
            a, b = get(tool, phase), get(peer, phase)
            r = ratio(a["hdd"], b["hdd"]) if a and b else None
            if r is not None:
                out.append(("HDD model", f"{label(tool)}{PHASE[phase]} ≤ {lim}x {LABEL[peer]}", fs,
                            f"{fmt(r)}x ({fmt(a['hdd'])} s)", f"{LABEL[peer]} {fmt(b['hdd'])} s",
                            verdict(r <= lim)))
        for tool, peers, phase, lim in (("sweep-du", ("du", "diskus"), "full", 1.0),
                                        ("sweep-cp", ("cp-a", "xcp", "fcp"), "full", 1.0),
                                        ("sweep-sync", ("rsync",), "first", 0.6),
                                        ("sweep-tar", ("gnu-tar",), "full", 0.7)):
            a = get(tool, phase, "ssd")
            ps = [(p, get(p, phase, "ssd")) for p in peers]
            ps = [(p, m) for p, m in ps if m]
            if not a or a["wall"] is None or not ps:
                continue
            best = min(m["wall"] for _, m in ps)
            what = "the fastest of " + ", ".join(LABEL[p] for p, _ in ps) if lim == 1.0 else f"{lim}x {LABEL[ps[0][0]]}"
            out.append(("fast device, wall", f"{label(tool, 'ssd')}{PHASE[phase]} ≤ {what}", fs,
                        f"{fmt(a['wall'])} s ({fmt(a['wall_min'])}–{fmt(a['wall_max'])})",
                        "; ".join(f"{LABEL[p]} {fmt(m['wall'])} s" for p, m in ps),
                        verdict(a["wall"] <= lim * best)))
    return out


def headline(s, fses, last):
    """Rows: claim, fs, sweep, peer(s), result."""
    out = []

    def get(fs, tool, phase="full"):
        return pick(s, fs, last[fs], tool, phase, "hdd")

    for fs in fses:
        tar = get(fs, "gnu-tar")
        pr = get(fs, "sweep-plan-read")
        if pr and tar:
            r = ratio(pr["seeks"], tar["seeks"])
            out.append(("#2 sweep-plan --read vs GNU tar: seeks ≤ 1/20", fs,
                        f"{fmt(pr['seeks'])} seeks, {fmt(pr['wall'])} s",
                        f"{fmt(tar['seeks'])} seeks, {fmt(tar['wall'])} s",
                        f"seek ratio 1/{fmt(1 / r, 1) if r else '∞'}: {verdict(r is not None and r <= 0.05)}; "
                        f"faster: {verdict(pr['wall'] < tar['wall'])}"))
        st = get(fs, "sweep-tar")
        peers = [(t, get(fs, t)) for t in ("gnu-tar", "gnu-tar-inode", "bsdtar")]
        peers = [(t, m) for t, m in peers if m]
        if st and peers:
            fewest = all(st["seeks"] < m["seeks"] for _, m in peers)
            fastest = all(st["wall"] < m["wall"] for _, m in peers)
            hb = ratio(st["hdd"], st["hdd_bound"])
            lim = HDD_LIMIT.get(fs, 2.5)
            out.append((f"#6 sweep-tar vs tars: fewest seeks, lowest wall, HDD model ≤ {lim}x bound", fs,
                        f"{fmt(st['seeks'])} seeks, {fmt(st['wall'])} s, HDD {fmt(hb)}x bound",
                        "; ".join(f"{LABEL[t]} {fmt(m['seeks'])} seeks, {fmt(m['wall'])} s" for t, m in peers),
                        f"fewest seeks: {verdict(fewest)}; fastest: {verdict(fastest)}; "
                        f"within {lim}x: {verdict(None if hb is None else hb <= lim)}"))
        for sw, peer, phase, issue in (("sweep-du", "du", "full", 4), ("sweep-cp", "cp-a", "full", 4),
                                       ("sweep-sync", "rsync", "first", 5),
                                       ("sweep-sync", "rsync", "1pct", 5),
                                       ("sweep-sync", "rsync", "nochange", 7)):
            a, b = get(fs, sw, phase), get(fs, peer, phase)
            if a and b:
                out.append((f"#{issue} {sw} vs {LABEL[peer]}{PHASE[phase]}: fewer seeks, lower wall", fs,
                            f"{fmt(a['seeks'])} seeks, {fmt(a['wall'])} s",
                            f"{fmt(b['seeks'])} seeks, {fmt(b['wall'])} s",
                            f"fewer seeks: {verdict(a['seeks'] < b['seeks'] or (a['seeks'] == b['seeks'] == 0))}; "
                            f"faster: {verdict(a['wall'] < b['wall'])}"))
    return out


def tool_key(k):
    fs, step, group, tool, phase, device = k
    po = list(PHASE).index(phase)
    return (fs, step, GROUPS.index(group) if group in GROUPS else 9,
            po, ORDER.index(tool) if tool in ORDER else 99, device)


def save(fig, out, name):
    fig.tight_layout()
    fig.savefig(os.path.join(out, name), dpi=90)
    plt.close(fig)
    return name


def plot_runtime(s, fses, out):
    files = []
    for fs in fses:
        groups = [("tar", "full"), ("du", "full"), ("cp", "full"), ("sync", "first"), ("sync", "1pct")]
        groups = [g for g in groups if any(k[0] == fs and k[2] == g[0] and k[4] == g[1] for k in s)]
        if not groups:
            continue
        steps = sorted({k[1] for k in s if k[0] == fs})
        # wall time (noisy on a shared machine) above, seeks (machine-independent) below
        fig, axes = plt.subplots(2, len(groups), figsize=(4.2 * len(groups), 6.6), squeeze=False)
        for row, (metric, ylabel) in enumerate((("wall", "wall time, s (median)"), ("seeks", "seeks (median)"))):
            for ax, (grp, phase) in zip(axes[row], groups):
                series = sorted({(k[3], k[5]) for k in s if k[0] == fs and k[2] == grp and k[4] == phase},
                                key=lambda td: (ORDER.index(td[0]) if td[0] in ORDER else 99, td[1]))
                for t, d in series:
                    pts = sorted((k[1], m[metric]) for k, m in s.items()
                                 if k[0] == fs and k[2] == grp and k[3] == t and k[4] == phase and k[5] == d)
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o",
                            linestyle="-" if t.startswith("sweep") else "--", label=label(t, d))
                ax.set_title(f"{fs}: {grp}{PHASE[phase]}", fontsize=9)
                ax.set_xlabel("aging step")
                ax.set_xlim(steps[0] - 0.5, steps[-1] + 0.5)
                ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
                ax.set_ylabel(ylabel)
                ax.set_ylim(bottom=0)
                ax.legend(fontsize=7)
        files.append(save(fig, out, f"runtime-{fs}.png"))
    return files


def head_traces(out, fs, step):
    """{(group, tool, device, phase): csv path} of the head traces kept for one step."""
    found = {}
    for p in glob.glob(os.path.join(out, "traces", f"{fs}-step{step}-*.csv")):
        tag = os.path.basename(p)[len(f"{fs}-step{step}-"):-4]
        phase = "full"
        for ph in PHASE:
            if tag.endswith("-" + ph):
                tag, phase = tag[:-len(ph) - 1], ph
        tool, _, device = tag.partition("@")
        if not device:  # traces from before device modes
            device = "hdd" if tool.startswith("sweep") else "any"
        group = next((g for g, ts in (("tar", ("sweep-plan-read", "sweep-tar", "gnu-tar", "gnu-tar-inode", "bsdtar")),
                                      ("du", ("sweep-du", "du", "diskus")), ("cp", ("sweep-cp", "cp-a", "xcp", "fcp")),
                                      ("sync", ("sweep-sync", "rsync"))) if tool in ts), "other")
        found[(group, tool, device, phase)] = p
    return found


def read_head(path):
    rows = [l.split(",") for l in open(path).read().split("\n")[1:] if l]
    return [float(r[0]) for r in rows], [int(r[1]) * 512 / 2**30 for r in rows]


def plot_head(out, fses, last, modes):
    """Where each tool sends the head: request offset over time, one panel per tool,
    one row per group, one figure per filesystem and device mode (every tool's first
    cold run of the last step; sync: its first copy)."""
    files = []
    for fs in fses:
        traces = head_traces(out, fs, last[fs])
        for mode in modes:
            rows = []
            for g in GROUPS + ["other"]:
                phase = "first" if g == "sync" else "full"
                ts = sorted(((t, d, p) for (gg, t, d, ph), p in traces.items()
                             if gg == g and ph == phase and serves(d, mode)),
                            key=lambda x: ORDER.index(x[0]) if x[0] in ORDER else 99)
                if ts:
                    rows.append((g, ts))
            if not rows:
                continue
            ncol = max(len(ts) for _, ts in rows)
            fig, axes = plt.subplots(len(rows), ncol, figsize=(3.6 * ncol, 2.8 * len(rows)),
                                     squeeze=False, sharey=True)
            for r, (g, ts) in enumerate(rows):
                for c in range(ncol):
                    ax = axes[r][c]
                    if c >= len(ts):
                        ax.axis("off")
                        continue
                    t, d, p = ts[c]
                    x, y = read_head(p)
                    ax.plot(x, y, ",", markersize=1)
                    ax.set_title(f"{label(t, d)}{PHASE['first'] if g == 'sync' else ''}: {len(x)} requests",
                                 fontsize=8)
                    ax.set_xlabel("time since first request, s", fontsize=7)
                    if c == 0:
                        ax.set_ylabel(f"{g}: offset, GiB", fontsize=8)
                    ax.tick_params(labelsize=7)
            fig.suptitle(f"{fs}, step {last[fs]}, sweep tools as on {'an HDD' if mode == 'hdd' else 'an SSD'}",
                         fontsize=10)
            files.append(save(fig, out, f"head-{fs}{'' if mode == 'hdd' else '-' + mode}.png"))
    return files


def plot_bound(s, fses, last, out):
    items = []
    for k, m in sorted(s.items(), key=lambda kv: tool_key(kv[0])):
        fs, step, group, tool, phase, device = k
        if step != last.get(fs) or phase == "nochange":
            continue
        items.append((f"{fs} {label(tool, device)}{PHASE[phase]}", ratio(m["hdd"], m["hdd_bound"]),
                      ratio(m["ssd"], m["ssd_bound"]), ratio(m["wall"], m["wall_bound"])))
    if not items:
        return []
    fig, ax = plt.subplots(figsize=(9, 0.32 * len(items) + 1.5))
    y = range(len(items))
    h = 0.27
    for i, (name, col) in enumerate((("HDD model", 1), ("SSD model", 2), ("wall on loop", 3))):
        ax.barh([v + (i - 1) * h for v in y], [it[col] or 0 for it in items], height=h, label=name)
    ax.set_yticks(list(y))
    ax.set_yticklabels([it[0] for it in items], fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.axvline(1, color="k", linewidth=0.8)
    ax.set_xlabel("time / bound (bytes read at the sequential rate), log scale")
    ax.legend(fontsize=7)
    return [save(fig, out, "bound.png")]


def merge(out, more):
    """Fold other bench/run output directories into OUT (results, aging summaries,
    head traces, skipped steps, filesystems and commands)."""
    params = json.load(open(os.path.join(out, "params.json")))
    params["commands"] = [params.get("command")]
    with open(os.path.join(out, "results.jsonl"), "a") as res:
        for d in more:
            p2 = json.load(open(os.path.join(d, "params.json")))
            params["fs"] += [f for f in p2["fs"] if f not in params["fs"]]
            params["commands"].append(p2.get("command"))
            res.write(open(os.path.join(d, "results.jsonl")).read())
            for f in (glob.glob(os.path.join(d, "frag-*.json")) + glob.glob(os.path.join(d, "traces", "*.csv")) +
                      glob.glob(os.path.join(d, "device-auto-*.txt"))):
                rel = os.path.relpath(f, d)
                os.makedirs(os.path.dirname(os.path.join(out, rel)), exist_ok=True)
                with open(f) as src, open(os.path.join(out, rel), "w") as dst:
                    dst.write(src.read())
            sk = os.path.join(d, "skipped")
            if os.path.exists(sk):
                with open(os.path.join(out, "skipped"), "a") as dst:
                    dst.write(" " + open(sk).read().strip())
    with open(os.path.join(out, "params.json"), "w") as f:
        json.dump(params, f, indent=1)


def main():
    out = sys.argv[1]
    if len(sys.argv) > 2:
        merge(out, sys.argv[2:])
    global MODE
    rows, params, frag = load(out)
    MODE = params.get("device_mode", "hdd")
    modes = ["hdd", "ssd"] if MODE == "both" else [MODE]
    seqbw = params.get("seq_bandwidth")
    s = summarize(rows, seqbw)
    fses = [f for f in params["fs"] if any(k[0] == f for k in s)]
    last = {fs: max(k[1] for k in s if k[0] == fs) for fs in fses}
    L = []
    L.append("# sweep benchmark on aged loopback filesystems\n")
    cmds = params.get("commands") or [params.get("command")]
    if len(cmds) > 1:
        L.append("Run as " + " and ".join(f"`{c}`" for c in cmds) + ", at the same time, merged with "
                 f"`bench/lib/report.py {' '.join(['OUT'] + ['DIR'] * (len(cmds) - 1))}`; wall times of each "
                 "include the other's load, counts and modeled times do not.\n")
    recipe = f" --recipe fragment --fill {params.get('fill', 90)}" if params.get("recipe") == "fragment" else ""
    L.append(f"Command: `{cmds[0]}` (images: `bench/mkaged --source {params['source']} "
             f"--size {params['size']} --steps {params['age_steps']} --seed {params['seed']}{recipe}`), "
             f"{params.get('date')}.\n")
    L.append(f"Machine: {params.get('cpu')}, {params.get('cores')} cores, {params.get('mem_gib')} GiB RAM, "
             f"kernel {params.get('kernel')}; images are files on `{params.get('backing')}` "
             f"(rotational={params.get('rotational')}), attached with `losetup --direct-io=on`. "
             f"Sequential read through a loop device: {seqbw / MIB:.0f} MiB/s"
             f"{' (' + params['seq_bandwidth_note'] + ')' if params.get('seq_bandwidth_note') else ''}.\n")
    cold = {"drop": "`sync; echo 3 > /proc/sys/vm/drop_caches`",
            "remount": "the image unmounted and mounted again (its caches only)",
            "both": "the image unmounted and mounted again, and `echo 3 > /proc/sys/vm/drop_caches`"}
    L.append(f"Every number is the median of {params['repeats']} cold runs "
             f"({cold.get(params.get('cold', 'drop'))} before each), tools alternating in a rotated order. "
             f"Harness at commit {params.get('commit', '?')}. Seeks: non-contiguous moves of "
             "≥ 1 MiB or backwards between consecutive requests issued to the loop device (tracefs "
             "`block_rq_issue`). Model: the trace replayed by `sweep-sim replay --device "
             f"{params.get('sim_hdd') or '–'}/{params.get('sim_ssd') or '–'} --sched {params.get('sim_sched')}`; "
             "the bound is the bytes read over the model's media rate (1 GiB replayed as one sequential run). "
             "Archives go to a pipe "
             f"(`| cat >/dev/null`); {dest_words(params.get('dest', 'tmpfs'))}.\n")
    sk = os.path.join(out, "skipped")
    if os.path.exists(sk) and open(sk).read().strip():
        L.append(f"Not measured (past the run's --stop-by time): {open(sk).read().strip()}.\n")
    if params.get("missing"):
        L.append(f"Not built when this ran, so not measured: {params['missing']}.\n")
    peers = params.get("peers") or {}
    if peers:
        L.append("Parallel peers (`bench/setup-peers`, cargo): " +
                 ", ".join(f"{p} {v}" for p, v in sorted(peers.items())) + ".\n")
    if params.get("peers_missing"):
        L.append(f"Peers not installed, so not measured: {params['peers_missing']}.\n")
    L.append({"hdd": "Device mode **hdd**: the sweep tools ran with `SWEEP_DEVICE=hdd` (physical order); "
                     "judge them by the HDD model.\n",
              "ssd": "Device mode **ssd**: the sweep tools ran with `SWEEP_DEVICE=ssd` (a full queue); judge "
                     "them by wall time on this machine's own disk.\n",
              "both": "Device modes **hdd and ssd**: every sweep tool ran twice in the same alternating runs, "
                      "with `SWEEP_DEVICE=hdd` ([hdd]: judge by the HDD model) and `SWEEP_DEVICE=ssd` "
                      "([ssd]: judge by wall time on this machine's own disk); the peers ran once.\n"}[MODE])
    auto = sorted(glob.glob(os.path.join(out, "device-auto-*.txt")))
    if auto:
        seen = sorted({open(p).read().strip() for p in auto if open(p).read().strip()})
        if seen:
            L.append("Left to itself (`SWEEP_DEVICE` unset), the library chose for these images: " +
                     "; ".join(f"`{x}`" for x in seen) + ".\n")
    failed = [(k, m["failed"]) for k, m in s.items() if m["failed"]]
    if failed:
        L.append("**Runs that exited non-zero:** " + ", ".join(f"{k[0]} step {k[1]} {k[3]} {k[4]} ({n})"
                                                             for k, n in failed) + "\n")
    L.append("## Headline (last aging step)\n")
    L.append("| claim | fs | sweep | peers | result |\n|---|---|---|---|---|")
    for row in headline(s, fses, last):
        L.append("| " + " | ".join(row) + " |")
    L.append("")
    tg = targets(s, fses, last)
    if tg:
        L.append("## Issue 11 targets (last aging step)\n")
        L.append("| class | target | fs | sweep | peers | met |\n|---|---|---|---|---|---|")
        for row in tg:
            L.append("| " + " | ".join(row) + " |")
        L.append("")
    L.append("## Aging\n")
    L.append("| fs | step | files | GiB | extents/file | files with >1 extent | extents/file ≥ 1 MiB "
             "| readdir-vs-physical disorder | jumps in readdir order |\n|---|---|---|---|---|---|---|---|---|")
    for (fs, step), d in sorted(frag.items()):
        L.append(f"| {fs} | {step} | {d['files']} | {d['bytes'] / 2**30:.2f} | {d['mean_extents']:.3f} | "
                 f"{100 * d['multi_extent_share']:.1f}% | {d.get('mean_extents_large', 0):.2f} | "
                 f"{d['disorder']:.3f} | {d['jumps']} |")
    L.append("\nDisorder: share of files whose first block lies before the previous file's, reading in "
             "readdir order (0.5 is random).\n")
    L.append("## All runs (medians)\n")
    L.append("| fs | step | tool | wall s (min–max) | CPU s | RSS MiB | requests | MiB | seeks | HDD model s | "
             "SSD model s | HDD / bound | SSD / bound | wall / bound |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for k, m in sorted(s.items(), key=lambda kv: tool_key(kv[0])):
        fs, step, group, tool, phase, device = k
        L.append(f"| {fs} | {step} | {label(tool, device)}{PHASE[phase]} | {fmt(m['wall'])} "
                 f"({fmt(m['wall_min'])}–{fmt(m['wall_max'])}) | {fmt(m['cpu'])} | {fmt(m['rss_mib'], 1)} | "
                 f"{fmt(m['requests'])} | {fmt(m['bytes'] / MIB, 1)} | {fmt(m['seeks'])} | {fmt(m['hdd'])} | "
                 f"{fmt(m['ssd'])} | {fmt(ratio(m['hdd'], m['hdd_bound']))} | "
                 f"{fmt(ratio(m['ssd'], m['ssd_bound']))} | {fmt(ratio(m['wall'], m['wall_bound']))} |")
    lost = sum(m["lost"] for m in s.values())
    if lost:
        L.append(f"\n**{lost} trace events were lost to ring-buffer overruns**; counts above are low by that much.")
    L.append("\n## Plots\n")
    for f in plot_runtime(s, fses, out):
        L.append(f"![runtime against aging step]({f})\n")
    for f in plot_head(out, fses, last, modes):
        L.append(f"![head position over time]({f})\n")
    for f in plot_bound(s, fses, last, out):
        L.append(f"![modeled and measured time over the bound]({f})\n")
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(L) + "\n")
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump([{"fs": k[0], "step": k[1], "group": k[2], "tool": k[3], "phase": k[4], "device": k[5], **m}
                   for k, m in sorted(s.items(), key=lambda kv: tool_key(kv[0]))], f, indent=1)


if __name__ == "__main__":
    main()
