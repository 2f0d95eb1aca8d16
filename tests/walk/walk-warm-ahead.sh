#!/bin/bash
# SPDX-License-Identifier: MIT
# The SSD class's read-ahead threads only while the tree is cold
# (walk_ahead.c): unless SWEEP_WALK_THREADS asks for them, the walk loads
# each directory itself while what it did since the last one read nothing
# from the disk, and the first load that reads starts the threads and hands
# the rest to them. The disk-read signal is forced either way (SWEEP_TEST_DISK_READS,
# a test hook): warm, no directory is read ahead; cold, the threads read
# them. The entries and their order are the same either way.
. "$TESTS_DIR/walk/lib.sh"
. "$TESTS_DIR/common/hooks.sh"
have_hooks || skip "needs -Dtest_hooks=true (SWEEP_TEST_DISK_READS)"
walk_setup syscall
export SWEEP_DEVICE=ssd # the class whose profile has the threads, whatever this disk is

for i in $(seq 1 40); do
	mkdir -p "$T/t/d$i/sub"
	: >"$T/t/d$i/f" && : >"$T/t/d$i/sub/g"
done
# AUTO order: a chosen one is walked as one pass, without the threads (resolve_order).
SWEEP_TEST_DISK_READS=never "$W" -0 "$T/t" >"$T/warm" 2>"$T/warm.err" || { cat "$T/warm.err" >&2; die "warm walk failed"; }
SWEEP_TEST_DISK_READS=always "$W" -0 "$T/t" >"$T/cold" 2>"$T/cold.err" || { cat "$T/cold.err" >&2; die "cold walk failed"; }
SWEEP_WALK_THREADS=8 SWEEP_TEST_DISK_READS=never "$W" -0 "$T/t" >"$T/asked" 2>"$T/asked.err" ||
	{ cat "$T/asked.err" >&2; die "walk with the threads asked for failed"; }
n=$(walk_ahead_count "$T/warm.err")
[ "${n:-x}" = 0 ] || die "warm tree: ${n:-no count} directories read ahead by the threads, expected none"
n=$(walk_ahead_count "$T/cold.err")
[ "${n:-0}" -gt 0 ] || die "cold tree: no directory read ahead by the threads"
n=$(walk_ahead_count "$T/asked.err")
[ "${n:-0}" -gt 0 ] || die "SWEEP_WALK_THREADS=8 on a warm tree: no directory read ahead by the threads"
cmp -s "$T/warm" "$T/cold" || die "the warm and the cold walk differ (entries or order)"
cmp -s "$T/warm" "$T/asked" || die "the walk alone and the threads' walk differ (entries or order)"
# A warm walk does not even start the threads (they start with the first load that reads).
if command -v strace >/dev/null; then
	for how in never always; do
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 SWEEP_TEST_DISK_READS=$how \
			strace -f -qq -e trace=clone,clone3 -o "$T/clones.$how" "$W" -0 "$T/t" >/dev/null 2>&1 ||
			die "walk under strace failed"
	done
	n=$(grep -c 'clone' "$T/clones.never")
	[ "$n" = 0 ] || die "warm tree: $n threads started, expected none"
	n=$(grep -c 'clone' "$T/clones.always")
	[ "$n" -ge 2 ] || die "cold tree: $n threads started, expected the read-ahead threads"
fi
find "$T/t" -print0 >"$T/find"
same_set "$T/find" "$T/warm" || die "the warm walk is not find's set"
ok "warm: the walk alone; cold and asked for: the threads; one sequence"
finish
