#!/bin/bash
# SPDX-License-Identifier: MIT
# Where the time of `sweep-plan --no-compare MNT/t` goes on the cold 1M-file
# ext4 tree: /usr/bin/time -v, perf record -g (cpu-clock: this VM has no
# hardware counters), and strace -c -f with both statx backends. Every run
# cold (remount). Writes DIR/profile-*.txt.
#
#   profile.sh [--fs ext4] [--out DIR]
set -euo pipefail
BENCH_PROG=1M-profile
. "$(dirname "$0")/../../lib/files.sh"
FS=ext4 OUT=$HERE/out
while [ $# -gt 0 ]; do
	case $1 in
	--fs) FS=$2; shift ;;
	--out) OUT=$2; shift ;;
	*) echo "usage: profile.sh [--fs ext4|xfs] [--out DIR]" >&2; exit 2 ;;
	esac
	shift
done
bench_setup "$OUT"
command -v perf >/dev/null || die "perf not found (linux-perf)"
command -v strace >/dev/null || die "strace not found"
PERFDATA=$(mktemp /tmp/1M-profile.perf.XXXXXX)
drop_perfdata() { rm -f "$PERFDATA"; }
CLEANUP_HOOKS+=(drop_perfdata)
mount_1M "$FS"

cold
/usr/bin/time -v "$PLAN" --no-compare "$MNT/t" >/dev/null 2>"$OUT/profile-$FS-time-v.txt"
say "time -v: $(grep -E 'Elapsed|System time|User time|Maximum resident' "$OUT/profile-$FS-time-v.txt" | tr -s ' ' | tr '\n' ';')"

cold
perf record -q -g -o "$PERFDATA" -- "$PLAN" --no-compare "$MNT/t" >/dev/null 2>&1
# by kernel entry point and by function, with children: what each syscall costs in total
perf report -i "$PERFDATA" --stdio --children --sort sym --percent-limit 1.5 -g none 2>/dev/null |
	grep -v '^$' >"$OUT/profile-$FS-perf-children.txt"
perf report -i "$PERFDATA" --stdio --no-children --sort sym --percent-limit 0.8 -g none 2>/dev/null |
	grep -v '^$' >"$OUT/profile-$FS-perf-self.txt"
perf report -i "$PERFDATA" --stdio --no-children --sort comm 2>/dev/null | grep -v '^$' >"$OUT/profile-$FS-perf-comm.txt"
say "perf: $(grep -c . "$OUT/profile-$FS-perf-self.txt") lines of self time"

for be in syscall uring; do
	cold
	SWEEP_BACKEND=$be strace -c -f -o "$OUT/profile-$FS-strace-$be.txt" "$PLAN" --no-compare "$MNT/t" >/dev/null 2>&1
	say "strace ($be): $(head -20 "$OUT/profile-$FS-strace-$be.txt" | awk '$NF ~ /^[a-z_0-9]+$/ && $4 ~ /^[0-9]+$/ {printf "%s=%s ", $NF, $4}')"
done
