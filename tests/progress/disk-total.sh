#!/bin/bash
# SPDX-License-Identifier: MIT
# The planned total on a disk. In the HDD class sweep-tar's walk does not
# stat regular files (the plan learns their sizes as it locates them), and
# the total used to be the sizes of the files opened so far: it grew with
# the bytes done and showed "100%" at 2%. Now, on a cold ext4 (the plan
# locates every file), each line's total is the whole tree's from the
# first line after the walk on; on a warm one (a batch in the page cache
# is not located, so its sizes come only as files are opened) the total
# is shown as a lower bound (">=", no percentage) until it is known (unless
# the raw inodes the walk read as root gave the sizes).
# sweep-plan --read the same way. Time is the test build's step clock.
. "$TESTS_DIR/common/lib.sh"
. "$TESTS_DIR/common/loopfs.sh"
trap lib_exit EXIT

[ -n "${SWEEP_TEST_HOOKS:-}" ] || skip "needs the test-hooks build (SWEEP_TEST_CLOCK)"
U="$BUILD_ROOT/utils"
[ -x "$U/sweep-tar" ] && [ -x "$U/sweep-plan" ] || skip "no sweep-tar or sweep-plan"
loopfs_require ext4
mnt=$(loopfs_new ext4 128M) || die "cannot make an ext4 on a loop device"
dev=$(loopfs_dev "$mnt")
scratch W progress-disk

mkdir -p "$mnt/t/a/b" "$mnt/t/c"
for i in $(seq 1 80); do head -c $((i * 4099)) /dev/urandom >"$mnt/t/a/f$i"; done
for i in $(seq 1 40); do head -c $((i * 13)) /dev/urandom >"$mnt/t/a/b/g$i"; done
for i in $(seq 1 6); do head -c 1000000 /dev/urandom >"$mnt/t/c/big$i"; done
: >"$mnt/t/c/empty"
BYTES=$(find "$mnt/t" -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')
FILES=$(find "$mnt/t" -type f | wc -l)
note "tree: $FILES files, $BYTES bytes"

cold() { umount "$mnt" && mount "$dev" "$mnt" || die "cannot remount $mnt"; }

# totals TOOL FILE KIND: the lines after the walk against the summary. KIND
# "known": each line's total is the final one (a percentage, no ">=");
# "bound": a total still open is ">=" without a percentage, a known one the final.
totals() {
	local tool=$1 f=$2 kind=$3 final line moving=0 open=0
	final=$(sed -n "s/^$tool: done: .* $BYTES bytes (\\(.*\\)) in .*/\\1/p" "$f")
	[ -n "$final" ] || { fail "$tool ($kind): summary without $BYTES bytes: $(tail -n 1 "$f")"; return; }
	while IFS= read -r line; do
		[[ $line == "$tool: ["*"] scanning: "* || $line == "$tool: ["*"] planning "*" files" ]] && continue
		[[ $line == "$tool: ["* ]] || continue
		moving=$((moving + 1))
		if [[ $line == *">="* ]]; then
			open=$((open + 1))
			[[ $kind == bound && $line != *%* ]] ||
				{ fail "$tool ($kind): a total that can grow: $line"; return; }
		elif [[ $line != *" files, "*"/$final ("[0-9]*"%), "* ]]; then
			fail "$tool ($kind): the total is not the tree's ($final): $line"
			return
		fi
	done <"$f"
	[ "$moving" -gt 0 ] || { fail "$tool ($kind): no line after the walk: $(cat "$f")"; return; }
	if [ "$kind" = bound ] && [ "$open" = 0 ]; then
		fail "$tool ($kind): no lower bound while sizes were unknown: $(cat "$f")"
		return
	fi
	ok "$tool ($kind): $moving lines, $open of them with a lower bound, the others with the tree's total $final"
}

cold
SWEEP_TEST_CLOCK=step:0.05 "$U/sweep-tar" --device=hdd -c --progress=1 -f "$W/cold.tar" -C "$mnt" t 2>"$W/tar-cold.err"
check "sweep-tar, cold: exit 0" test $? = 0
totals sweep-tar "$W/tar-cold.err" known

# warm: the batch is in the page cache (just read), so it is not located;
# the raw inodes the walk read (root, ext4) still give every size
SWEEP_TEST_CLOCK=step:0.05 "$U/sweep-tar" --device=hdd -c --progress=1 -f "$W/warm.tar" -C "$mnt" t 2>"$W/tar-warm.err"
check "sweep-tar, warm: exit 0" test $? = 0
totals sweep-tar "$W/tar-warm.err" known
check "sweep-tar: the same archive cold and warm" cmp -s <(tar -tvf "$W/cold.tar") <(tar -tvf "$W/warm.tar")
# warm, and no raw reads: the sizes come only as the files are opened
SWEEP_METASCAN=off SWEEP_TEST_CLOCK=step:0.05 "$U/sweep-tar" --device=hdd -c --progress=1 -f "$W/warm2.tar" \
	-C "$mnt" t 2>"$W/tar-warm2.err"
check "sweep-tar, warm, no raw reads: exit 0" test $? = 0
totals sweep-tar "$W/tar-warm2.err" bound

cold
SWEEP_TEST_CLOCK=step:0.05 "$U/sweep-plan" --device=hdd --read --no-compare --progress=1 "$mnt/t" >/dev/null \
	2>"$W/plan.err"
check "sweep-plan --read, cold: exit 0" test $? = 0
totals sweep-plan "$W/plan.err" known

finish
