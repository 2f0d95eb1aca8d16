#!/bin/bash
# SPDX-License-Identifier: MIT
# On xfs in the HDD class, a walk of a whole cold filesystem visits its
# directories in the order their blocks lie, not their inodes': after the
# inode sweep (bulkstat) every inode is cached and the directory blocks are
# what is left to read, and xfs places a directory's block apart from its
# inode. The layout: 40 directories made in one go (xfs spreads them over
# its allocation groups, inodes ascending within each), then filled past
# their inodes in reverse order, so that within a group the later inode has
# the earlier block. The walk must visit them with their first blocks
# ascending (one wrap at most, C-SCAN), where inode order would descend at
# almost every step; and find what find finds. Warm (the same mount again),
# nothing is read and the order is inode order again. Skips without root,
# loop devices or mkfs.xfs.
. "$TESTS_DIR/walk/lib.sh"
. "$TESTS_DIR/common/loopfs.sh"
walk_setup "$1"
loopfs_require xfs
command -v xfs_io >/dev/null || skip "no xfs_io"
unset SWEEP_TEST_DISK_READS # the real cold/warm signal
export SWEEP_DEVICE=hdd

mnt=$(loopfs_new xfs 320M) || die "cannot make the filesystem"
for i in $(seq -w 1 40); do mkdir "$mnt/d$i"; done
for i in $(seq -w 40 -1 1); do
	for j in $(seq 1 40); do : >"$mnt/d$i/a-rather-long-name-so-that-the-directory-needs-a-block-$j"; done
done
# each directory: NAME INODE FIRST-BLOCK (512-byte units)
for i in $(seq -w 1 40); do
	b=$(xfs_io -r -c bmap "$mnt/d$i" | sed -n 's/^[[:space:]]*0: \[0\.\.[0-9]*\]: \([0-9]*\)\.\..*/\1/p')
	[ -n "$b" ] || die "d$i has no block (xfs_io bmap)"
	echo "d$i $(stat -c %i "$mnt/d$i") $b"
done >"$T/layout"
find "$mnt" -print0 >"$T/find"
# descents of the blocks taken in the order of column $1 of the layout (or of a file of names)
descents() { awk '{ if (NR > 1 && $3 < p) d++; p = $3 } END { print d + 0 }'; }
by_ino=$(sort -k2,2n "$T/layout" | descents)
[ "$by_ino" -ge 10 ] || skip "the allocator put the blocks in inode order ($by_ino descents): nothing to tell apart"

dev=$(loopfs_dev "$mnt")
umount "$mnt" && mount "$dev" "$mnt" || die "cannot mount the image again"
visit_order() { # the directories in the order their entries were handed out
	tr '\0' '\n' <"$1" | sed -n "s|^$mnt/\(d[0-9]*\)/.*|\1|p" | awk '!seen[$0]++'
}
for pass in cold warm; do
	"$W" -0 "$mnt" >"$T/$pass" 2>"$T/$pass.err" || { cat "$T/$pass.err" >&2; die "$pass walk failed"; }
	same_set "$T/find" "$T/$pass" || die "$pass walk: not the set find gives"
	visit_order "$T/$pass" | while read -r d; do grep "^$d " "$T/layout"; done >"$T/$pass.order"
	[ "$(wc -l <"$T/$pass.order")" = 40 ] || die "$pass walk: $(wc -l <"$T/$pass.order") of the 40 directories seen"
done
cold=$(descents <"$T/cold.order")
warm=$(descents <"$T/warm.order")
[ "$cold" -le 1 ] || { cat "$T/cold.order" >&2; die "cold walk: the directory blocks descend $cold times (inode order: $by_ino)"; }
ok "cold walk: directories in block order ($cold descents; inode order would give $by_ino)"
[ "$warm" -ge 10 ] || die "warm walk: $warm descents (a warm tree reads nothing, its keys stay inodes)"
ok "warm walk: inode order ($warm descents)"
finish
