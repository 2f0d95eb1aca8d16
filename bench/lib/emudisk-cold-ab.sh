#!/bin/bash
# SPDX-License-Identifier: MIT
# emudisk-cold-ab.sh [--probed] [--preset NAME] [--speed N] IMAGE RUNS 'CMD_A' 'CMD_B'
#
# Cold wall time of two commands, alternating A B A B ..., RUNS times each.
# Every run gets a fresh emulated disk (bench/emudisk start --read-only,
# hdd7200): nothing of the image in the page cache, in the filesystem's
# buffers or in the drive's own cache. The image is mounted read-only
# (ext4: noload; xfs: norecovery) at $M, which the commands use
# ('du -s $M'). Prints each run's wall (the command alone, not the disk's
# start) and the medians, min-max and median B/A.
#
# --probed: before the timed run, a sweep-du of the top directory alone
# (--max-depth=0 --exclude='*') lets the tools probe the device class and
# keep it in /run/sweep, as any earlier run on that disk would; the mount
# is then made afresh (and the device's buffers dropped), so the timed run
# is still cold. Without it, each run of a sweep tool pays the probe (about
# 40 reads, 0.2 s on this drive), as the first run on a newly attached disk
# does. Needs root; BUILD_DIR (default build) has the emudisk server and
# sweep-du. --preset and --speed go to bench/emudisk start (default: its own,
# hdd7200 at speed 1).
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=$(readlink -f "${BUILD_DIR:-$HERE/../build}")
export BUILD_DIR
probed= disk_opts=()
while [ $# -gt 4 ]; do
	case $1 in
	--probed) probed=1; shift ;;
	--preset|--speed) disk_opts+=("$1" "$2"); shift 2 ;;
	*) break ;;
	esac
done
[ $# = 4 ] || { echo "usage: emudisk-cold-ab.sh [--probed] [--preset NAME] [--speed N] IMAGE RUNS 'CMD_A' 'CMD_B'" >&2; exit 2; }
img=$1 runs=$2 A=$3 B=$4
M=$(mktemp -d /tmp/emudisk-cold-ab.XXXXXX)
export M
dev=
out=$(mktemp)
cleanup() {
	mountpoint -q "$M" && umount "$M"
	[ -n "$dev" ] && "$HERE/emudisk" stop "$dev" >/dev/null
	rmdir "$M"
	rm -f "$out"
}
trap cleanup EXIT

mount_ro() {
	mount -o ro,noload "$dev" "$M" 2>/dev/null || mount -o ro,norecovery,nouuid "$dev" "$M"
}

one() { # one CMD: WALL = the seconds CMD took on a fresh cold disk (no subshell: the trap must see dev)
	dev=$("$HERE/emudisk" start --read-only ${disk_opts[@]+"${disk_opts[@]}"} "$img")
	mount_ro
	if [ -n "$probed" ]; then
		"$BUILD_DIR/utils/sweep-du" -s --max-depth=0 --exclude='*' "$M" >/dev/null 2>&1 || true
		umount "$M"
		blockdev --flushbufs "$dev"
		mount_ro
	fi
	local s e rc=0
	s=$(date +%s.%N)
	bash -c "$1" >/dev/null 2>&1 || rc=$?
	e=$(date +%s.%N)
	umount "$M"
	"$HERE/emudisk" stop "$dev" >/dev/null
	dev=
	[ "$rc" = 0 ] || { echo "emudisk-cold-ab: exit $rc from: $1" >&2; exit 1; }
	WALL=$(echo "$e - $s" | bc)
}

for ((i = 1; i <= runs; i++)); do
	for k in A B; do
		one "${!k}"
		printf '%3d %s %6.3f\n' "$i" "$k" "$WALL" | tee -a "$out"
	done
done
python3 - "$out" "$A" "$B" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
for k, cmd in (("A", sys.argv[2]), ("B", sys.argv[3])):
    xs = [float(r[2]) for r in rows if r[1] == k]
    print(f"{k} median {statistics.median(xs):.3f} ({min(xs):.3f}-{max(xs):.3f})  {cmd}")
a = statistics.median(float(r[2]) for r in rows if r[1] == "A")
b = statistics.median(float(r[2]) for r in rows if r[1] == "B")
print(f"B/A {b / a:.3f}x")
PY
