#!/bin/bash
# SPDX-License-Identifier: MIT
# Does the filesystem find, in the block device's page cache, the metadata
# lib/metascan read there? Block requests (tracefs block_rq_issue on the loop
# device) of `find MNT/t -printf '%i %s\n'` after different warm-ups, each
# from a cold mount:
#   cold            nothing before find
#   dirs            scan-tree --walk-only --prefetch (directory blocks prefetched
#                   level by level, through sweep__metascan_ranges/_prefetch)
#   dirs+inodes     scan-tree --prefetch (the same, then the hints of every
#                   inode: the inode tables read through the device's cache)
#   inodes          scan-tree --inos-in (only the inode tables)
#   bulkstat (xfs)  scan-tree --bulkstat --inos-in (XFS_IOC_BULKSTAT of every inode)
# On ext4, after a warm-up, `echo 2 > drop_caches` drops dentries and inodes
# (not the page cache), so that find pays every iget and every lookup itself
# and only the page cache can help it. On xfs nothing is dropped (xfs keeps
# its buffers in its own cache, which that would empty).
#
#   cache.sh [--fs ext4,xfs] [--out DIR]
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
BENCH_PROG=1M-cache
. "$ROOT/bench/lib/common.sh"
. "$ROOT/bench/lib/tracefs.sh"
FSLIST=ext4,xfs OUT=$HERE/out
while [ $# -gt 0 ]; do
	case $1 in
	--fs) FSLIST=$2; shift ;;
	--out) OUT=$2; shift ;;
	*) echo "usage: cache.sh [--fs ext4,xfs] [--out DIR]" >&2; exit 2 ;;
	esac
	shift
done
bench_require_root_loop
SCAN=$BUILD/tests/scan/scan-tree
mkdir -p "$OUT"
MNT=$(mktemp -d /tmp/1M-cache.XXXXXX)
trap 'trace_cleanup; bench_cleanup_mounts; rmdir "$MNT" 2>/dev/null' EXIT
trap 'exit 130' INT TERM
trace_require
cold() { bench_umount "$MNT"; bench_mount "$DEV" "$MNT" noatime; }
TSV=$OUT/cache.tsv
[ -e "$TSV" ] || printf 'fs\twarmup\twarmup_s\tfind_wall_s\tfind_sys_s\trequests\tMiB\n' >"$TSV"

# measure FS WARMUP cmd...: cold mount, warm-up, then a traced find
measure() {
	local fs=$1 name=$2 w0 w1 lost; shift 2
	cold
	w0=$(date +%s.%N)
	[ $# -gt 0 ] && "$@" >/dev/null 2>&1
	w1=$(date +%s.%N)
	[ "$fs" = ext4 ] && [ $# -gt 0 ] && echo 2 >/proc/sys/vm/drop_caches
	trace_start
	/usr/bin/time -f '%e %S' -o "$OUT/time" find "$MNT/t" -printf '%i %s\n' >/dev/null
	lost=$(trace_stop "$OUT/trace-$fs-$name.txt")
	local req mib
	read -r req mib < <(awk '/block_rq_issue/ { n++; for (i = 1; i <= NF; i++) if ($i == "+") s += $(i + 1) }
		END { printf "%d %.1f\n", n, s * 512 / 1048576 }' "$OUT/trace-$fs-$name.txt")
	rm -f "$OUT/trace-$fs-$name.txt"
	printf '%s\t%s\t%.2f\t%s\t%s\t%s\t%s\n' "$fs" "$name" "$(echo "$w1 - $w0" | bc)" $(cat "$OUT/time") "$req" "$mib" >>"$TSV"
	say "$fs $name: warm-up $(echo "$w1 - $w0" | bc) s, find $(cat "$OUT/time") (wall, sys), $req requests, $mib MiB, lost $lost"
}

for fs in ${FSLIST//,/ }; do
	IMG=$("$ROOT/bench/mkfiles" --fs "$fs" --files 1M)
	bench_attach "$IMG" DEV
	bench_mount "$DEV" "$MNT" noatime
	trace_target "$DEV"
	INOS=$OUT/$fs.inos
	[ -s "$INOS" ] || "$SCAN" --inos-out "$INOS" "$MNT/t" >/dev/null 2>&1
	measure "$fs" cold
	if [ "$fs" = ext4 ]; then
		measure "$fs" dirs "$SCAN" --walk-only --prefetch "$MNT/t"
		measure "$fs" inodes "$SCAN" --inos-in "$INOS" "$MNT/t"
		measure "$fs" dirs+inodes "$SCAN" --prefetch "$MNT/t"
	else
		measure "$fs" inodes "$SCAN" --inos-in "$INOS" "$MNT/t"
		measure "$fs" bulkstat "$SCAN" --bulkstat --inos-in "$INOS" "$MNT/t"
	fi
	bench_umount "$MNT"
	bench_detach "$DEV"
done
column -t "$TSV"
