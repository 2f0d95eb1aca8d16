#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Markdown report and PNG plots from a bench/run output directory:
   report.py OUT [MORE...]  -> OUT/report.md, OUT/summary.json, OUT/*.png
With more directories (e.g. one bench/run per filesystem, run at the same time),
their results, summaries and traces are merged into OUT first.
Medians over the repeats; the headline table checks the issues' claims."""
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
         "sweep-du", "du", "sweep-cp", "cp-a", "sweep-sync", "rsync"]
LABEL = {"sweep-plan-read": "sweep-plan --read", "gnu-tar": "GNU tar",
         "gnu-tar-inode": "GNU tar --sort=inode", "bsdtar": "bsdtar", "cp-a": "cp -a",
         "du": "GNU du", "rsync": "rsync -a", "sweep-tar": "sweep-tar",
         "sweep-du": "sweep-du", "sweep-cp": "sweep-cp", "sweep-sync": "sweep-sync"}
PHASE = {"full": "", "first": " (first copy)", "nochange": " (no-change re-run)",
         "1pct": " (after changing 1%)"}
HDD_LIMIT = {"ext4": 1.5, "xfs": 2.5}


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def load(out):
    rows = [json.loads(l) for l in open(os.path.join(out, "results.jsonl")) if l.strip()]
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
        g[(r["fs"], r["step"], r["group"], r["tool"], r["phase"])].append(r)
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


def headline(s, fses, last):
    """Rows: claim, fs, sweep, peer(s), result."""
    out = []

    def get(fs, tool, phase="full"):
        for (f, st, g, t, p), m in s.items():
            if f == fs and st == last[fs] and t == tool and p == phase:
                return m
        return None

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
    fs, step, group, tool, phase = k
    po = list(PHASE).index(phase)
    return (fs, step, ["tar", "du", "cp", "sync"].index(group) if group in ("tar", "du", "cp", "sync") else 9,
            po, ORDER.index(tool) if tool in ORDER else 99)


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
                tools = sorted({k[3] for k in s if k[0] == fs and k[2] == grp and k[4] == phase},
                               key=lambda t: ORDER.index(t) if t in ORDER else 99)
                for t in tools:
                    pts = sorted((k[1], m[metric]) for k, m in s.items()
                                 if k[0] == fs and k[2] == grp and k[3] == t and k[4] == phase)
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o",
                            linestyle="-" if t.startswith("sweep") else "--", label=LABEL.get(t, t))
                ax.set_title(f"{fs}: {grp}{PHASE[phase]}", fontsize=9)
                ax.set_xlabel("aging step")
                ax.set_xlim(steps[0] - 0.5, steps[-1] + 0.5)
                ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
                ax.set_ylabel(ylabel)
                ax.set_ylim(bottom=0)
                ax.legend(fontsize=7)
        files.append(save(fig, out, f"runtime-{fs}.png"))
    return files


def plot_head(out, fses, last):
    files = []
    for fs in fses:
        curves = []
        for tool in ("gnu-tar", "sweep-tar"):
            p = os.path.join(out, "traces", f"{fs}-step{last[fs]}-{tool}.csv")
            if os.path.exists(p):
                rows = [l.split(",") for l in open(p).read().split("\n")[1:] if l]
                curves.append((tool, [float(r[0]) for r in rows], [int(r[1]) * 512 / 2**30 for r in rows]))
        if not curves:
            continue
        fig, axes = plt.subplots(1, len(curves), figsize=(5.5 * len(curves), 3.8), squeeze=False, sharey=True)
        for ax, (tool, t, pos) in zip(axes[0], curves):
            ax.plot(t, pos, ",", markersize=1)
            ax.set_title(f"{fs} step {last[fs]}: {LABEL[tool]}", fontsize=9)
            ax.set_xlabel("time since first request, s")
            ax.set_ylabel("request offset on the device, GiB")
        files.append(save(fig, out, f"head-{fs}.png"))
    return files


def plot_bound(s, fses, last, out):
    items = []
    for k, m in sorted(s.items(), key=lambda kv: tool_key(kv[0])):
        fs, step, group, tool, phase = k
        if step != last.get(fs) or phase == "nochange":
            continue
        items.append((f"{fs} {LABEL.get(tool, tool)}{PHASE[phase]}", ratio(m["hdd"], m["hdd_bound"]),
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
            for f in glob.glob(os.path.join(d, "frag-*.json")) + glob.glob(os.path.join(d, "traces", "*.csv")):
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
    rows, params, frag = load(out)
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
    L.append(f"Command: `{cmds[0]}` (images: `bench/mkaged --source {params['source']} "
             f"--size {params['size']} --steps {params['age_steps']} --seed {params['seed']}`), "
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
             "(`| cat >/dev/null`); copies go to a tmpfs.\n")
    sk = os.path.join(out, "skipped")
    if os.path.exists(sk) and open(sk).read().strip():
        L.append(f"Not measured (past the run's --stop-by time): {open(sk).read().strip()}.\n")
    if params.get("missing"):
        L.append(f"Not built when this ran, so not measured: {params['missing']}.\n")
    failed = [(k, m["failed"]) for k, m in s.items() if m["failed"]]
    if failed:
        L.append("**Runs that exited non-zero:** " + ", ".join(f"{k[0]} step {k[1]} {k[3]} {k[4]} ({n})"
                                                             for k, n in failed) + "\n")
    L.append("## Headline (last aging step)\n")
    L.append("| claim | fs | sweep | peers | result |\n|---|---|---|---|---|")
    for row in headline(s, fses, last):
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
        fs, step, group, tool, phase = k
        L.append(f"| {fs} | {step} | {LABEL.get(tool, tool)}{PHASE[phase]} | {fmt(m['wall'])} "
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
    for f in plot_head(out, fses, last):
        L.append(f"![head position over time]({f})\n")
    for f in plot_bound(s, fses, last, out):
        L.append(f"![modeled and measured time over the bound]({f})\n")
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(L) + "\n")
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump([{"fs": k[0], "step": k[1], "group": k[2], "tool": k[3], "phase": k[4], **m}
                   for k, m in sorted(s.items(), key=lambda kv: tool_key(kv[0]))], f, indent=1)


if __name__ == "__main__":
    main()
