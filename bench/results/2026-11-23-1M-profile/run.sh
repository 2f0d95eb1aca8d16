#!/bin/bash
# SPDX-License-Identifier: MIT
# Cold runs on the issue-15 trees (bench/mkfiles --files 1M, ext4 and xfs):
# the per-inode walk and plan against the raw metadata engine (lib/metascan,
# driven by tests/scan/scan-tree) and the filesystems' own checkers.
#
#   run.sh [--fs ext4,xfs] [--repeats 3] [--out DIR]
#
# Every run is cold: the image is unmounted and mounted again (that drops the
# filesystem's caches and the loop device's page cache; the loop device does
# direct I/O, so the host's page cache of the image file plays no part).
# Tools rotate their order each repeat. Writes DIR/runs.tsv (one line per
# run) and prints the medians.
set -euo pipefail
BENCH_PROG=1M-profile
. "$(dirname "$0")/../../lib/files.sh"

FSLIST=ext4,xfs REPEATS=3 OUT=$HERE/out
while [ $# -gt 0 ]; do
	case $1 in
	--fs) FSLIST=$2; shift ;;
	--repeats) REPEATS=$2; shift ;;
	--out) OUT=$2; shift ;;
	*) echo "usage: run.sh [--fs ext4,xfs] [--repeats N] [--out DIR]" >&2; exit 2 ;;
	esac
	shift
done
bench_setup "$OUT"
TSV=$OUT/runs.tsv
[ -e "$TSV" ] || printf 'fs\ttool\trep\twall_s\tsys_s\tuser_s\tmaxrss_kb\tload1\tphases\n' >"$TSV"
# run FS TOOL REP cmd...: one cold run, timed by /usr/bin/time; phase lines of scan-tree kept
run() {
	local fs=$1 tool=$2 rep=$3; shift 3
	cold
	/usr/bin/time -f '%e %S %U %M' -o "$OUT/time" "$@" >/dev/null 2>"$OUT/err" ||
		{ say "$fs $tool failed: $(tail -3 "$OUT/err")"; return 0; }
	local t phases
	t=$(tail -1 "$OUT/time")
	# scan-tree's "phase: key=value ... s=N" lines, and e2fsck's/xfs_repair's pass times
	phases=$(grep -E '^(walk|hints|bulkstat|statx|prefetch):' "$OUT/err" | sed 's/ (inside the walk)//; s/: .* s=/=/' | tr '\n' ' ' || true)
	phases+=$(grep -E '^Pass [0-9]+:.*time:' "$OUT/err" | sed -E 's/^Pass ([0-9]+):.*time: *([0-9.]+).*/pass\1=\2/' | tr '\n' ' ' || true)
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$fs" "$tool" "$rep" $t "$(cut -d' ' -f1 /proc/loadavg)" "$phases" >>"$TSV"
	say "$fs $tool #$rep: wall ${t%% *} s  $phases"
}

# checker FS REP: e2fsck -fn -tt / xfs_repair -n on the unmounted device, cold
checker() {
	local fs=$1 rep=$2 t
	bench_umount "$MNT"
	if [ "$fs" = ext4 ]; then
		/usr/bin/time -f '%e %S %U %M' -o "$OUT/time" e2fsck -fn -tt "$DEV" >"$OUT/err" 2>&1 || true
	else
		/usr/bin/time -f '%e %S %U %M' -o "$OUT/time" xfs_repair -n "$DEV" >"$OUT/err" 2>&1 || true
	fi
	t=$(tail -1 "$OUT/time")
	local phases
	phases=$(grep -E '^Pass [0-9]+:.*time:' "$OUT/err" | sed -E 's/^Pass ([0-9]+):.*time: *([0-9.]+).*/pass\1=\2/' | tr '\n' ' ' || true)
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$fs" "$([ "$fs" = ext4 ] && echo e2fsck || echo xfs_repair)" "$rep" $t "$(cut -d' ' -f1 /proc/loadavg)" "$phases" >>"$TSV"
	say "$fs checker #$rep: wall ${t%% *} s  $phases"
	bench_mount "$DEV" "$MNT" noatime
}

for fs in ${FSLIST//,/ }; do
	mount_1M "$fs"
	INOS=$OUT/$fs.inos
	"$SCAN" --walk-only "$MNT/t" 2>/dev/null || true
	"$SCAN" --inos-out "$INOS" "$MNT/t" 2>/dev/null >/dev/null
	tools=(find plan walk walk-prefetch hints hints-nocsum walk-hints walk-prefetch-hints checker)
	[ "$fs" = xfs ] && tools=(find plan walk hints bulkstat walk-statx checker)
	for ((rep = 1; rep <= REPEATS; rep++)); do
		n=${#tools[@]}
		for ((k = 0; k < n; k++)); do
			t=${tools[$(((k + rep - 1) % n))]}
			case $t in
			find) run "$fs" find "$rep" find "$MNT/t" -printf '%i %s\n' ;;
			plan) run "$fs" sweep-plan "$rep" "$PLAN" --no-compare "$MNT/t" ;;
			walk) run "$fs" walk-getdents "$rep" "$SCAN" --walk-only "$MNT/t" ;;
			walk-prefetch) run "$fs" walk-getdents-prefetch "$rep" "$SCAN" --walk-only --prefetch "$MNT/t" ;;
			hints) run "$fs" hints "$rep" "$SCAN" --inos-in "$INOS" "$MNT/t" ;;
			hints-nocsum) run "$fs" hints-nocsum "$rep" "$SCAN" --nocsum --inos-in "$INOS" "$MNT/t" ;;
			walk-hints) run "$fs" walk+hints "$rep" "$SCAN" "$MNT/t" ;;
			walk-prefetch-hints) run "$fs" walk-prefetch+hints "$rep" "$SCAN" --prefetch "$MNT/t" ;;
			bulkstat) run "$fs" bulkstat "$rep" "$SCAN" --bulkstat --inos-in "$INOS" "$MNT/t" ;;
			walk-statx) run "$fs" walk+statx "$rep" "$SCAN" --statx "$MNT/t" ;;
			checker) checker "$fs" "$rep" ;;
			esac
		done
	done
	unmount_1M
done

# medians per fs and tool
python3 - "$TSV" <<'PY'
import csv, statistics, sys, collections
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
by = collections.OrderedDict()
for r in rows:
    by.setdefault((r["fs"], r["tool"]), []).append(r)
print(f"{'fs':5} {'tool':24} {'n':>2} {'wall s':>8} {'range':>13} {'sys s':>7} {'user s':>7} {'RSS MB':>7} {'load':>5}  phases (median)")
for (fs, tool), rs in by.items():
    w = [float(r["wall_s"]) for r in rs]
    ph = collections.defaultdict(list)
    for r in rs:
        for kv in r["phases"].split():
            k, v = kv.split("=")
            ph[k].append(float(v))
    phs = " ".join(f"{k}={statistics.median(v):.3f}" for k, v in ph.items())
    print(f"{fs:5} {tool:24} {len(rs):>2} {statistics.median(w):8.2f} {min(w):6.2f}-{max(w):<6.2f} "
          f"{statistics.median(float(r['sys_s']) for r in rs):7.2f} {statistics.median(float(r['user_s']) for r in rs):7.2f} "
          f"{statistics.median(float(r['maxrss_kb']) for r in rs) / 1024:7.1f} "
          f"{statistics.median(float(r['load1']) for r in rs):5.1f}  {phs}")
PY
