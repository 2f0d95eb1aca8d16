#!/bin/bash
# SPDX-License-Identifier: MIT
# On xfs in the HDD class, a cold walk of a whole filesystem must not read
# its directories one by one in the order the walk meets them: xfs places a
# directory's block apart from its inode, so inode order would send the
# head back and forth. The walk's inode sweep (bulkstat, one ascending pass)
# hands each directory that has blocks to the read-ahead threads, which
# open it by handle and list it while the sweep goes on, so the drive
# orders those reads with the inode clusters (lib/metascan/metascan_bulkstat.c);
# the walk then finds every directory cached and keys them by inode. The
# layout: 40 directories made in one go (xfs spreads them over its
# allocation groups, inodes ascending within each), then filled past their
# inodes in reverse order, so that within a group the later inode has the
# earlier block. Cold, every one of the 40 is read ahead by handle and the
# walk finds what find finds; warm (the same mount again), nothing is read
# ahead and the order is inode order. Skips without root, loop devices,
# mkfs.xfs or strace.
. "$TESTS_DIR/walk/lib.sh"
. "$TESTS_DIR/common/loopfs.sh"
walk_setup "$1"
loopfs_require xfs
command -v xfs_io >/dev/null || skip "no xfs_io"
command -v strace >/dev/null || skip "no strace"
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
	# LeakSanitizer cannot run under ptrace: the sanitizer pass checks leaks elsewhere
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		strace -ff -qq -e trace=open_by_handle_at -o "$T/$pass.strace" "$W" -0 "$mnt" >"$T/$pass" 2>"$T/$pass.err" ||
		{ cat "$T/$pass.err" >&2; die "$pass walk failed"; }
	same_set "$T/find" "$T/$pass" || die "$pass walk: not the set find gives"
	visit_order "$T/$pass" | while read -r d; do grep "^$d " "$T/layout"; done >"$T/$pass.order"
	[ "$(wc -l <"$T/$pass.order")" = 40 ] || die "$pass walk: $(wc -l <"$T/$pass.order") of the 40 directories seen"
done
# one file a thread (-ff): no call is split into unfinished and resumed lines
handles() { cat "$1".* | grep -c 'open_by_handle_at(.*= [0-9]'; }
cold=$(handles "$T/cold.strace")
[ "$cold" -ge 40 ] || die "cold walk: $cold directories read ahead by handle (want all 40 with blocks)"
ok "cold walk: $cold directories read ahead by handle during the inode sweep"
warm=$(handles "$T/warm.strace")
[ "$warm" = 0 ] || die "warm walk: $warm directories read ahead (a warm tree has nothing to read)"
warm_desc=$(descents <"$T/warm.order")
[ "$warm_desc" -ge 10 ] || die "warm walk: $warm_desc descents (a warm tree reads nothing, its keys stay inodes)"
ok "warm walk: nothing read ahead, inode order ($warm_desc descents)"
finish
