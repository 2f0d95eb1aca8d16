#!/bin/bash
# SPDX-License-Identifier: MIT
# The walk's physical-order directory keys (FIEMAP on each queued directory)
# are for a cold tree: a subdirectory whose stat batch came from the inode
# cache throughout is keyed by inode instead of being opened for FIEMAP.
# On a fresh mount of an ext4 loop image (cold) the walk asks FIEMAP for
# its directories; walking the same tree again (warm), it asks for none;
# both walks find what find finds. The metadata engine is off, so the keys
# can only come from FIEMAP. "Cold" is a clock-free fact: the listing or
# the stats had to read the disk (task I/O accounting), so a faster CPU
# cannot turn the cold walk warm; with the test hook the answer is forced
# both ways, and the walk keys accordingly. Skips without root or loop devices.
. "$TESTS_DIR/walk/lib.sh"
. "$TESTS_DIR/common/loopfs.sh"
walk_setup "$1"
loopfs_require ext4
export SWEEP_METASCAN=off
unset SWEEP_TEST_DISK_READS # the first part is about the real signal

mnt=$(loopfs_new ext4 64M) || die "cannot make the filesystem"
for i in $(seq 40); do
	mkdir -p "$mnt/t/d$i/e"
	echo "$i" >"$mnt/t/d$i/f"
done
find "$mnt/t" -print0 >"$T/find"
dev=$(loopfs_dev "$mnt")
umount "$mnt" && mount "$dev" "$mnt" || die "cannot mount the image again"

for pass in cold warm; do
	"$W" -0 --order=physical "$mnt/t" >"$T/$pass" 2>"$T/$pass.err" || { cat "$T/$pass.err" >&2; die "$pass walk failed"; }
	same_set "$T/find" "$T/$pass" || die "$pass walk: not the set find gives"
done
cold=$(sed -n 's/.* dir_fiemaps=\([0-9]*\) .*/\1/p' "$T/cold.err")
warm=$(sed -n 's/.* dir_fiemaps=\([0-9]*\) .*/\1/p' "$T/warm.err")
[ "$cold" -ge 40 ] || die "cold walk: $cold FIEMAP calls for 81 directories (the keys should come from FIEMAP)"
# The root is stat'ed alone, by the walk's start, not in a batch: it is keyed by FIEMAP either way.
[ "$warm" -le 1 ] || die "warm walk: $warm FIEMAP calls (cached directories should be keyed by inode)"
ok "cold walk: $cold FIEMAP calls, warm walk: $warm (the root)"

. "$TESTS_DIR/common/hooks.sh"
if have_hooks; then
	# The tree is warm now: forced "read the disk", every directory is keyed by FIEMAP again.
	SWEEP_TEST_DISK_READS=always "$W" -0 --order=physical "$mnt/t" >"$T/forced" 2>"$T/forced.err" || die "forced-cold walk failed"
	same_set "$T/find" "$T/forced" || die "forced-cold walk: not the set find gives"
	n=$(sed -n 's/.* dir_fiemaps=\([0-9]*\) .*/\1/p' "$T/forced.err")
	[ "$n" -ge 80 ] || die "warm tree forced cold: $n FIEMAP calls for 81 directories"
	# And cold after a remount, forced "nothing read": keyed by inode.
	umount "$mnt" && mount "$dev" "$mnt" || die "cannot mount the image again"
	SWEEP_TEST_DISK_READS=never "$W" -0 --order=physical "$mnt/t" >"$T/forced" 2>"$T/forced.err" || die "forced-warm walk failed"
	same_set "$T/find" "$T/forced" || die "forced-warm walk: not the set find gives"
	n=$(sed -n 's/.* dir_fiemaps=\([0-9]*\) .*/\1/p' "$T/forced.err")
	[ "$n" -le 1 ] || die "cold tree forced warm: $n FIEMAP calls"
	ok "forced both ways: the keys follow the disk-read signal"
fi
finish
