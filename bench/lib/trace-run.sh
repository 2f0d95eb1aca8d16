#!/bin/bash
# trace-run.sh IMAGE OUTDIR NAME CMD...: mount IMAGE read-only (fresh: cold), block-trace CMD run inside it.
# Loop device attached per call (direct I/O), removed after. Prints one line: name wall requests seeks bytes drops.
# TRACE_BUFFER_KB: the trace buffer per CPU (default 131072); a run of millions of requests needs more
# (overrun in the line printed: events lost).
img=$1 out=$2 name=$3; shift 3
mkdir -p "$out"
dev=$(losetup -r --find --show --direct-io=on "$img") || exit 1
mnt=$(mktemp -d /tmp/sweep-trace-run.XXXXXX)
. "$(dirname "$0")/../../tests/common/tracefs.sh"
inst=
cleanup() {
	if [ -n "$inst" ]; then
		echo 0 > $inst/tracing_on 2>/dev/null
		rmdir $inst 2>/dev/null
	fi
	tracefs_release
	umount "$mnt" 2>/dev/null
	[ "$(losetup -n -O BACK-FILE "$dev")" = "$img" ] && losetup -d "$dev"
	rmdir "$mnt"
}
trap cleanup EXIT
# ext4, then xfs (nouuid: a copy of the same image may be mounted by another run)
mount -o ro,noload "$dev" "$mnt" 2>/dev/null || mount -o ro,norecovery,nouuid "$dev" "$mnt" || exit 1
tracefs_find || { echo "no tracefs (mount -t tracefs nodev /sys/kernel/tracing failed)" >&2; exit 1; }
inst=$TRACEFS/instances/sweep-trace-run-$$
mkdir $inst
echo "${TRACE_BUFFER_KB:-131072}" > $inst/buffer_size_kb
maj=$((16#$(stat -L -c %t "$dev"))); min=$((16#$(stat -L -c %T "$dev")))
for e in block_rq_issue block_rq_complete; do
	echo "dev == $(((maj << 20) | min))" > $inst/events/block/$e/filter
	echo 1 > $inst/events/block/$e/enable
done
echo > $inst/trace
d0=$(awk '/^drop_pagecache/ {print $2}' /proc/vmstat)
echo 1 > $inst/tracing_on
s=$(date +%s.%N)
( cd "$mnt" && "$@" ) 2> "$out/$name.err" | wc -c > "$out/$name.bytes"
e=$(date +%s.%N)
echo 0 > $inst/tracing_on
d1=$(awk '/^drop_pagecache/ {print $2}' /proc/vmstat)
cat $inst/trace > "$out/$name.trace"
ov=$(cat $inst/per_cpu/cpu*/stats | awk '/^overrun:/ {s += $2} END {print s + 0}')
st=$(python3 "$(dirname "$0")/blkstats.py" stats "$out/$name.trace")
printf '%-20s wall %7.2f s  out %s  drops %d  overrun %s  %s\n' "$name" "$(echo "$e - $s" | bc)" "$(cat $out/$name.bytes)" $((d1 - d0)) "$ov" "$st"
