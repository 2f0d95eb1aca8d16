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
# Each warm-up REPEATS times (default 3): the fewest requests is what the cache
# can do; a cache drop by someone else only adds requests (see buffers_*).
#
#   cache.sh [--fs ext4,xfs] [--repeats N] [--out DIR]
set -euo pipefail
BENCH_PROG=1M-cache
. "$(dirname "$0")/../../lib/files.sh"
. "$ROOT/bench/lib/tracefs.sh"
FSLIST=ext4,xfs OUT=$HERE/out REPEATS=3
while [ $# -gt 0 ]; do
	case $1 in
	--fs) FSLIST=$2; shift ;;
	--out) OUT=$2; shift ;;
	--repeats) REPEATS=$2; shift ;;
	*) echo "usage: cache.sh [--fs ext4,xfs] [--repeats N] [--out DIR]" >&2; exit 2 ;;
	esac
	shift
done
bench_setup "$OUT"
CLEANUP_HOOKS+=(trace_cleanup)
trace_require
TSV=$OUT/cache.tsv
[ -e "$TSV" ] || printf 'fs\twarmup\trep\twarmup_s\tbuffers_before_MiB\tbuffers_after_MiB\tfind_wall_s\tfind_sys_s\trequests\tMiB\n' >"$TSV"

# MiB of all block devices' page caches (/proc/meminfo Buffers). Other sessions on a
# shared machine drop caches for their own cold runs; a drop shows here as a fall.
buffers() { awk '/^Buffers:/ { printf "%.0f", $2 / 1024 }' /proc/meminfo; }

# measure FS WARMUP REP cmd...: cold mount, warm-up, then a traced find
measure() {
	local fs=$1 name=$2 rep=$3 w0 w1 lost; shift 3
	cold
	w0=$(date +%s.%N)
	[ $# -gt 0 ] && { "$@" >/dev/null 2>"$OUT/warmup.err" || say "$fs $name: warm-up failed: $(tail -2 "$OUT/warmup.err")"; }
	w1=$(date +%s.%N)
	[ "$fs" = ext4 ] && [ $# -gt 0 ] && echo 2 >/proc/sys/vm/drop_caches
	local before after
	before=$(buffers)
	trace_start
	/usr/bin/time -f '%e %S' -o "$OUT/time" find "$MNT/t" -printf '%i %s\n' >/dev/null
	lost=$(trace_stop "$OUT/trace-$fs-$name.txt")
	after=$(buffers)
	local req mib
	read -r req mib < <(awk '/block_rq_issue/ { n++; for (i = 1; i <= NF; i++) if ($i == "+") s += $(i + 1) }
		END { printf "%d %.1f\n", n, s * 512 / 1048576 }' "$OUT/trace-$fs-$name.txt")
	rm -f "$OUT/trace-$fs-$name.txt"
	printf '%s\t%s\t%s\t%.2f\t%s\t%s\t%s\t%s\t%s\t%s\n' "$fs" "$name" "$rep" "$(echo "$w1 - $w0" | bc)" "$before" "$after" \
		$(cat "$OUT/time") "$req" "$mib" >>"$TSV"
	say "$fs $name #$rep: warm-up $(echo "$w1 - $w0" | bc) s, buffers $before -> $after MiB, find $(cat "$OUT/time") (wall, sys), $req requests, $mib MiB, lost $lost"
}

for fs in ${FSLIST//,/ }; do
	mount_1M "$fs"
	trace_target "$DEV"
	INOS=$OUT/$fs.inos
	[ -s "$INOS" ] || "$SCAN" --inos-out "$INOS" "$MNT/t" >/dev/null 2>&1
	for ((rep = 1; rep <= REPEATS; rep++)); do
		measure "$fs" cold "$rep"
		if [ "$fs" = ext4 ]; then
			measure "$fs" dirs "$rep" "$SCAN" --walk-only --prefetch "$MNT/t"
			measure "$fs" inodes "$rep" "$SCAN" --inos-in "$INOS" "$MNT/t"
			measure "$fs" dirs+inodes "$rep" "$SCAN" --prefetch "$MNT/t"
		else
			measure "$fs" inodes "$rep" "$SCAN" --inos-in "$INOS" "$MNT/t"
			measure "$fs" bulkstat "$rep" "$SCAN" --bulkstat --inos-in "$INOS" "$MNT/t"
		fi
	done
	unmount_1M
done
column -t "$TSV"
