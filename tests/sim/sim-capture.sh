#!/bin/bash
# A live capture: tracefs block_rq_issue/complete (in a private tracefs
# instance) while dd reads a file with O_DIRECT on a loop-mounted ext4, then
# the trace replayed through sweep-sim. Checked against filefrag (every read
# lands in the file's extents and covers it exactly) and dd (request count).
set -euo pipefail
. "$SOURCE_ROOT/tests/common/loopfs.sh"
. "$SOURCE_ROOT/tests/common/tracefs.sh"
loopfs_require
SIM=$BUILD_ROOT/utils/sweep-sim
command -v filefrag >/dev/null || loopfs_skip "no filefrag"
inst=
work=$(mktemp -d "${TMPDIR:-/tmp}/sim-capture.XXXXXX")
cleanup() {
	[ -n "$inst" ] && [ -d "$inst" ] && { echo 0 >"$inst/events/block/enable" 2>/dev/null || true; rmdir "$inst" || true; }
	tracefs_release
	rm -rf "$work"
	loopfs_cleanup
}
trap cleanup EXIT
# A fresh machine has tracefs unmounted: mount it (and unmount it at exit).
tracefs_find || loopfs_skip "no tracefs with instances (mount -t tracefs failed)"
inst=$TRACEFS/instances/sweep-sim-test-$$
fail() { echo "FAIL: $*" >&2; exit 1; }

mnt=$(loopfs_new ext4 64M -b 4096)
dev=$(loopfs_dev "$mnt")
majmin=$(lsblk -dno MAJ:MIN "$dev" | tr -d ' ' | tr : ,)
dd if=/dev/urandom of="$mnt/f" bs=1M count=3 oflag=direct status=none
sync
mkdir "$inst" 2>/dev/null || loopfs_skip "cannot make a tracefs instance"
echo 1 >"$inst/events/block/block_rq_issue/enable"
echo 1 >"$inst/events/block/block_rq_complete/enable"
dd if="$mnt/f" of=/dev/null bs=64k iflag=direct status=none
echo 0 >"$inst/events/block/enable"
cat "$inst/trace" >"$work/trace"

# reads of this device in the capture, by awk: sector and count
awk -v d="$majmin" '$0 ~ ": block_rq_issue: " d " " {
	for (i = 1; i <= NF; i++) if ($i == "block_rq_issue:") k = i
	if ($(k + 2) !~ /R/ || $(k + 2) ~ /M/) next  # data reads only: a dropped cache may add metadata reads
	for (j = k + 3; $j !~ /\)$/; j++) ; print $(j + 1), $(j + 3) }' "$work/trace" >"$work/reads"
[ -s "$work/reads" ] || fail "no reads captured for $majmin"

# filefrag: the file's extents in 4 KiB blocks; every read inside them, together exactly the file
filefrag -v -b4096 "$mnt/f" | awk '/^ *[0-9]+:/ { gsub(/[.:]/, " "); print $4, $5 }' >"$work/extents"
python3 - "$work/reads" "$work/extents" <<'PY'
import sys
reads = [tuple(map(int, l.split())) for l in open(sys.argv[1])]
ext = [tuple(map(int, l.split())) for l in open(sys.argv[2])]
covered = 0
for sec, n in reads:
    a, b = sec * 512, (sec + n) * 512
    assert any(s * 4096 <= a and b <= (e + 1) * 4096 for s, e in ext), (sec, n, ext)
    covered += b - a
assert covered == 3 << 20, covered
PY

# sweep-sim replays the same requests: by default each when the one it waited for completes
# (a capture has issue/complete pairs), and closed
"$SIM" replay --device hdd7200 --format "tracefs@$majmin" --json "$work/trace" >"$work/open.json"
"$SIM" replay --device ssd-pagemap --format "tracefs@$majmin" --mode closed --json "$work/trace" >"$work/closed.json"
python3 - "$work/open.json" "$work/closed.json" "$(wc -l <"$work/reads")" <<'PY'
import json, sys
n = int(sys.argv[3])
for p in sys.argv[1:3]:
    j = json.load(open(p))
    assert j["reads"] >= n and j["bytes"] >= 3 << 20, (p, j["reads"], n)
o = json.load(open(sys.argv[1]))
assert o["mode"] == "depend" and o["cache_hits"] > 0   # sequential 64 KiB reads hit the read-ahead
PY
# libsweep's own plan traces (sweep-plan -t): the same files planned in physical order and in
# readdir order; replayed on a modelled disk, physical order must cost less time and fewer seeks
PLAN=$BUILD_ROOT/utils/sweep-plan
if [ -x "$PLAN" ]; then
	for i in $(seq 1 100); do
		for d in a b c; do
			mkdir -p "$mnt/t/$d"
			head -c $((4096 * (i % 7 + 1))) /dev/urandom >"$mnt/t/$d/f$i"
		done
	done
	sync
	for o in physical none; do
		"$PLAN" --order=$o -t "$work/${o:0:4}.trace" "$mnt/t" >/dev/null 2>"$work/plan.err" ||
			fail "sweep-plan --order=$o: $(cat "$work/plan.err")"
	done
	for o in phys none; do
		"$SIM" replay --device hdd7200 --sched fcfs --queue 1 --json "$work/$o.trace" >"$work/$o.json"
	done
	python3 - "$work/phys.json" "$work/none.json" "$(grep -c '^R ' "$work/phys.trace")" <<'PY'
import json, sys
p, n = (json.load(open(x)) for x in sys.argv[1:3])
assert p["requests"] == n["requests"] == int(sys.argv[3]) >= 300, (p["requests"], n["requests"], sys.argv[3])
assert p["mode"] == "closed" and p["bytes"] == n["bytes"]
assert p["busy_s"] < n["busy_s"] and p["seek_count"] < n["seek_count"], (p["busy_s"], n["busy_s"])
PY
fi
echo ok
