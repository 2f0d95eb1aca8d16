# SPDX-License-Identifier: MIT
# Block tracing through a private tracefs instance (blktrace's relay files are often
# refused in sandboxes; an instance does not disturb anyone else's tracing).

# TRACEFS, tracefs_find (mounts tracefs where nobody has), tracefs_release
. "$(dirname "${BASH_SOURCE[0]}")/../../tests/common/tracefs.sh"
TRACE_INST=

trace_require() {
	tracefs_find || die "tracefs is not available (mount -t tracefs nodev /sys/kernel/tracing failed)"
	[ -e "$TRACEFS/events/block/block_rq_issue" ] || die "tracefs has no block/block_rq_issue event"
	TRACE_INST=$TRACEFS/instances/sweep-bench-$$
	mkdir "$TRACE_INST" || die "cannot create a tracefs instance under $TRACEFS/instances"
	# room for a whole cold run (about 60 bytes an event) without overruns
	echo "${TRACE_BUFFER_KB:-131072}" > "$TRACE_INST/buffer_size_kb"
	echo 0 > "$TRACE_INST/tracing_on"
}

# trace_target DEV: only events of this block device (kernel dev_t: major<<20 | minor)
trace_target() {
	local maj min e
	maj=$((16#$(stat -L -c %t "$1")))
	min=$((16#$(stat -L -c %T "$1")))
	for e in block_rq_issue block_rq_complete; do
		echo "dev == $(((maj << 20) | min))" > "$TRACE_INST/events/block/$e/filter"
		echo 1 > "$TRACE_INST/events/block/$e/enable"
	done
}

trace_start() {
	echo > "$TRACE_INST/trace"
	echo 1 > "$TRACE_INST/tracing_on"
}

# trace_stop OUT: stop and save; prints the number of events lost to overruns
trace_stop() {
	echo 0 > "$TRACE_INST/tracing_on"
	cat "$TRACE_INST/trace" > "$1"
	cat "$TRACE_INST"/per_cpu/cpu*/stats 2>/dev/null | awk '/^overrun:/ {s += $2} END {print s + 0}'
}

trace_cleanup() {
	if [ -n "$TRACE_INST" ] && [ -d "$TRACE_INST" ]; then
		echo 0 > "$TRACE_INST/tracing_on" 2>/dev/null
		rmdir "$TRACE_INST" 2>/dev/null || true
	fi
	TRACE_INST=
	tracefs_release
}
