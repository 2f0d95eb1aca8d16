#!/bin/bash
# SPDX-License-Identifier: MIT
# A walk of a whole filesystem on a disk reads every inode in use first, in
# one sweep (lib/walk/walk_meta.c, inode_sweep): ext4's inode tables through the
# block device, xfs's inode clusters by bulkstat. On an ext4 and an xfs loop
# image holding a file of every mapping class (populate.py), HDD class:
#  - walking the mount root sweeps (the counts say so); a subtree of a few
#    directories does not, one of more directories than the sweep costs
#    (SWEEP_MIN_RENT, 16, here) does, after it has visited that many, with
#    the same plan as without;
#  - a plan sorted as a batch sorts (--defer) is the same too; on ext4 it
#    locates the files whose first extent is in a tree block by its own raw
#    sweep (plan_deep.c; the walk reads no tree block);
#  - the sweep changes nothing a tool outputs: sweep-plan's plan, sweep-du -a
#    (also = GNU du -a) and sweep-tar's archive listing are the same with it,
#    with SWEEP_METASCAN=off (no sweep) and as uid 65534 (bulkstat and the
#    device refused: the fallback);
#  - the tools do make the sweep's calls (strace: XFS_IOC_BULKSTAT on xfs,
#    the block device opened on ext4);
#  - xfs: directories are opened by inode number (a handle), as the walk
#    starts their blocks after a cold sweep; not without the capabilities.
# Needs root and loop devices; skips (77) without them.
set -u
. "${TESTS_DIR:?}/common/lib.sh"
. "$TESTS_DIR/common/loopfs.sh"
loopfs_require ext4 xfs
PH=${BUILD_ROOT:?}/tests/scan/plan-hints
U=$BUILD_ROOT/utils
W=$LOOPFS_WORK
chmod 755 "$W" # uid 65534 must reach the mount points
export SWEEP_DEVICE=hdd # the sweep is for disks; loop devices may probe as SSD
unset SWEEP_METASCAN

meta() { sed -n 's/.*\b'"$2"'=\([0-9]*\).*/\1/p' "$1"; } # meta FILE KEY: a count from plan-hints' stderr
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

check_fs() { # check_fs FSTYPE COUNT-KEY
	local fs=$1 key=$2 mnt
	mnt=$(loopfs_new "$fs" 320M) || die "$fs: cannot make the filesystem"
	python3 "$TESTS_DIR/scan/populate.py" "$mnt/t" 4096 || die "$fs: populate failed"
	mkdir -p "$mnt/u/v" && echo data >"$mnt/u/v/w"
	# directories of several blocks each, made in turns so that their blocks interleave
	python3 - "$mnt/d" <<'PY'
import os, sys
for i in range(40):
    os.makedirs(f"{sys.argv[1]}/d{i}")
for k in range(120):
    for i in range(40):
        with open(f"{sys.argv[1]}/d{i}/a-rather-long-file-name-to-fill-directory-blocks-{k:04d}", "w") as f:
            f.write("x" * (k % 7))
PY
	chmod -R a+rX "$mnt"
	sync
	# xfs writes inodes home lazily; nothing here depends on it, but keep the device current
	[ "$fs" = xfs ] && { xfs_freeze -f "$mnt" && xfs_freeze -u "$mnt"; }

	"$PH" "$mnt" >"$W/$fs.plan" 2>"$W/$fs.plan.err" || die "$fs: plan-hints failed: $(tail -2 "$W/$fs.plan.err")"
	[ "$(meta "$W/$fs.plan.err" "$key")" -gt 0 ] || die "$fs: no inode sweep at the mount root: $(tail -1 "$W/$fs.plan.err")"
	"$PH" "$mnt/u" >/dev/null 2>"$W/$fs.sub.err" || die "$fs: plan-hints of a subtree failed"
	[ "$(meta "$W/$fs.sub.err" "$key")" = 0 ] || die "$fs: a subtree of 2 directories was swept: $(tail -1 "$W/$fs.sub.err")"
	"$PH" "$mnt/d" >"$W/$fs.subd" 2>"$W/$fs.subd.err" || die "$fs: plan-hints of a subtree failed"
	[ "$(meta "$W/$fs.subd.err" "$key")" -gt 0 ] || die "$fs: a subtree of 41 directories was not swept: $(tail -1 "$W/$fs.subd.err")"
	SWEEP_METASCAN=off "$PH" "$mnt/d" >"$W/$fs.subd.off" 2>/dev/null || die "$fs: plan-hints (off) of a subtree failed"
	cmp -s "$W/$fs.subd" "$W/$fs.subd.off" || { diff "$W/$fs.subd" "$W/$fs.subd.off" | head -5 >&2; die "$fs: the subtree's plan differs with the sweep"; }
	# ext4: once a run of tables is swept the walk no longer reads its files' inodes; a plan that
	# locates as it goes gets each one when it asks (no open), a batch's plan by its raw sweep.
	if [ "$fs" = ext4 ]; then
		local files=4800
		[ "$(meta "$W/$fs.subd.err" plan_located)" = 0 ] && [ "$(meta "$W/$fs.subd.err" plan_hinted)" = $files ] ||
			die "ext4: the swept subtree's files were not all placed by their inodes: $(tail -1 "$W/$fs.subd.err")"
		"$PH" --defer "$mnt/d" >"$W/$fs.subd.defer" 2>"$W/$fs.subd.defer.err" || die "$fs: plan-hints --defer of a subtree failed"
		cmp -s "$W/$fs.subd.defer" "$W/$fs.subd.off" || { diff "$W/$fs.subd.defer" "$W/$fs.subd.off" | head -5 >&2; die "ext4: the subtree's deferred plan differs"; }
		local hinted deep
		hinted=$(meta "$W/$fs.subd.defer.err" plan_hinted) deep=$(meta "$W/$fs.subd.defer.err" plan_deep)
		[ "$(meta "$W/$fs.subd.defer.err" plan_located)" = 0 ] && [ $((hinted + deep)) = $files ] && [ "$deep" -gt $((files / 2)) ] ||
			die "ext4: the swept subtree's batch was not located by the plan's raw sweep: $(tail -1 "$W/$fs.subd.defer.err")"
	fi
	SWEEP_METASCAN=off "$PH" "$mnt" >"$W/$fs.plan.off" 2>"$W/$fs.plan.off.err" || die "$fs: plan-hints (off) failed"
	[ "$(meta "$W/$fs.plan.off.err" "$key")" = 0 ] || die "$fs: SWEEP_METASCAN=off still swept"
	cmp -s "$W/$fs.plan" "$W/$fs.plan.off" || { diff "$W/$fs.plan" "$W/$fs.plan.off" | head -5 >&2; die "$fs: the plan differs with the sweep"; }
	# Located when the plan is sorted, as in a batch: the walk reads no extent-tree block, and on
	# ext4 the files whose first extent is in one (populate.py makes such trees) are located by the
	# plan's own raw sweep of those blocks, to the same first byte as FIEMAP's.
	"$PH" --defer "$mnt" >"$W/$fs.defer" 2>"$W/$fs.defer.err" || die "$fs: plan-hints --defer failed"
	cmp -s "$W/$fs.defer" "$W/$fs.plan.off" || { diff "$W/$fs.defer" "$W/$fs.plan.off" | head -5 >&2; die "$fs: the deferred plan differs"; }
	[ "$fs" = ext4 ] && { [ "$(meta "$W/$fs.defer.err" plan_deep)" -gt 0 ] || die "ext4: no file located by the plan's raw sweep: $(tail -1 "$W/$fs.defer.err")"; }

	local how
	for how in sweep off nobody; do
		local pre=(env) o=$W/$fs.$how
		[ $how = off ] && pre=(env SWEEP_METASCAN=off)
		[ $how = nobody ] && pre=(nobody env)
		"${pre[@]}" "$U/sweep-plan" -o physical --no-compare "$mnt" >"$o.splan" 2>"$o.err" || die "$fs $how: sweep-plan failed: $(tail -2 "$o.err")"
		"${pre[@]}" "$U/sweep-du" -a "$mnt" >"$o.du" 2>"$o.err" || die "$fs $how: sweep-du failed: $(tail -2 "$o.err")"
		# tar -tv pads its columns to the widest field seen so far, so the spacing depends on member
		# order (disk order, which the sweep may change); the fields are compared, not the padding.
		"${pre[@]}" "$U/sweep-tar" -cf - -C "$mnt" . 2>"$o.err" | tar -tvf - --full-time >"$o.tar.tv" ||
			die "$fs $how: sweep-tar | tar -t failed: $(tail -2 "$o.err")"
		tr -s ' ' <"$o.tar.tv" >"$o.tar"
		[ -s "$o.tar" ] || die "$fs $how: empty archive"
	done
	local f
	for f in splan du tar; do
		[ $f = tar ] && { sort "$W/$fs.sweep.tar" >"$W/$fs.sweep.tar.s"; } # member order follows disk order
		for how in off nobody; do
			local a=$W/$fs.sweep.$f b=$W/$fs.$how.$f
			if [ $f = tar ]; then sort "$b" >"$b.s"; a=$a.s; b=$b.s; fi
			cmp -s "$a" "$b" || { diff "$a" "$b" | head -5 >&2; die "$fs: $f output with the sweep differs from $how"; }
		done
	done
	du -a "$mnt" >"$W/$fs.gnu.du"
	cmp -s "$W/$fs.gnu.du" "$W/$fs.sweep.du" || { diff "$W/$fs.gnu.du" "$W/$fs.sweep.du" | head -5 >&2; die "$fs: sweep-du -a is not du -a"; }

	# ext4: the directory blocks the engine finds from the inode tables are
	# exactly every located extent of every directory, as FIEMAP says.
	if [ "$fs" = ext4 ]; then
		"$BUILD_ROOT/tests/scan/scan-tree" --dir-blocks "$mnt" >"$W/dirblocks" || die "ext4: scan-tree --dir-blocks failed"
		find "$mnt" -xdev -type d -print0 | python3 "$TESTS_DIR/scan/dir-extents.py" >"$W/dirblocks.want" ||
			die "ext4: FIEMAP of the directories failed"
		[ "$(awk '{ s += $3 } END { print s }' "$W/dirblocks.want")" -ge $((64 * 4096)) ] ||
			die "ext4: too few directory blocks to compare: $(cat "$W/dirblocks.want")"
		cmp -s "$W/dirblocks.want" "$W/dirblocks" ||
			{ diff "$W/dirblocks.want" "$W/dirblocks" | head -5 >&2; die "ext4: the engine's directory blocks differ from FIEMAP's"; }
	fi

	# The tool itself sweeps (not only the test program).
	# LeakSanitizer cannot stop the threads of a traced process (the ASan build): no leak check under strace.
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		strace -f -e trace=ioctl,openat -o "$W/$fs.strace" "$U/sweep-du" -s "$mnt" >/dev/null 2>&1 || die "$fs: strace sweep-du failed"
	if [ "$fs" = xfs ]; then
		grep -q 'XFS_IOC_BULKSTAT\|_IOC(_IOC_READ, 0x58, 0x7f' "$W/$fs.strace" || die "xfs: sweep-du made no bulkstat call"
	else
		grep -q "openat(.*\"$(loopfs_dev "$mnt")\"" "$W/$fs.strace" || die "ext4: sweep-du did not open the block device"
	fi
	if [ "$fs" = xfs ]; then
		# The directories' blocks read by handle (walk_meta.c, dirs_heard): every
		# directory opens (with a wrong generation none would), a file among them is left out,
		# and without the capabilities nothing does.
		local dirs got
		dirs=$(find "$mnt" -xdev -type d | wc -l)
		{ find "$mnt" -xdev -type d -printf '%i\n'; stat -c %i "$mnt/u/v/w"; } >"$W/dirinos"
		got=$("$BUILD_ROOT/tests/scan/scan-tree" --read-dirs "$mnt" <"$W/dirinos")
		[ "$got" = "opened $dirs" ] || die "xfs: directories opened by handle: $got, want opened $dirs"
		got=$(nobody "$BUILD_ROOT/tests/scan/scan-tree" --read-dirs "$mnt" <"$W/dirinos")
		[ "$got" = "read-dirs: EPERM" ] || die "xfs: directories by handle as uid 65534: $got, want EPERM"
	fi
	ok "$fs: swept at the root ($key=$(meta "$W/$fs.plan.err" "$key")), same output with, without and as uid 65534"
}

check_fs ext4 table_bytes
check_fs xfs bulkstat_inodes
finish
