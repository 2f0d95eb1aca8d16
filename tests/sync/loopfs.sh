#!/bin/bash
# SPDX-License-Identifier: MIT
# sweep-sync on real ext4/xfs loop filesystems (where FIEMAP gives the read
# order): the same trees and itemized lines as rsync, and a destination that
# fills up (clear error, non-zero exit, old files intact, re-run converges).
. "$TESTS_DIR/sync/lib.sh"
. "$TESTS_DIR/common/loopfs.sh"

loopfs_require ext4
W0=$W
BIND=
on_exit '[ -n "$BIND" ] && umount -l "$BIND"; W=$W0'

populate() { # populate DIR: a tree with some fragmentation from interleaved appends
	local d=$1 i
	mkdir -p "$d"/{x,y/z,w}
	for i in $(seq 1 60); do
		head -c $((i * 1500)) /dev/urandom >"$d/x/f$i"
		head -c 700 /dev/urandom >>"$d/y/z/g$((i % 7))"
		[ $((i % 10)) = 0 ] && ln -s "../x/f$i" "$d/w/l$i"
	done
	ln "$d/x/f1" "$d/w/hard"
}

equiv_on() { # equiv_on FSTYPE
	local fs=$1 mnt size=256M
	[ "$fs" = xfs ] && size=320M # mkfs.xfs wants at least 300 MB
	mnt=$(loopfs_new "$fs" $size) || die "cannot make a $fs loop filesystem"
	W=$mnt
	populate "$W/src"
	run_both "$fs: initial" -a -H --delete -i
	rm -rf "$W/src/y/z/g3" "$W/src/w/l20"
	head -c 5000 /dev/urandom >>"$W/src/x/f7"
	touch -d '2020-02-02' "$W/src/x/f8"
	ln -sfn ../x/f9 "$W/src/w/l30"
	run_both "$fs: after edits" -a -H --delete -i
	run_both "$fs: -c" -a -H --delete -i -c
	W=$W0
}

equiv_on ext4
if command -v mkfs.xfs >/dev/null && { grep -qw xfs /proc/filesystems || modprobe xfs 2>/dev/null; }; then
	equiv_on xfs
else
	skip_part "no xfs here: ext4 only"
fi

# --- -x: a filesystem mounted inside SRC is not entered (its mount point is copied, empty)
inner=$(loopfs_new ext4 32M) || die "cannot make the inner filesystem"
printf 'inside\n' >"$inner/on-inner"
W=$W0
mkdir -p "$W/src/mnt-here" "$W/src/plain"
printf 'outside\n' >"$W/src/plain/f"
BIND=$W/src/mnt-here
mount --bind "$inner" "$BIND" || die "bind mount failed"
run_both "-x with a mount inside SRC" -a -x -i
[ ! -e "$W/s/dst/mnt-here/on-inner" ] || die "-x crossed into the inner filesystem"
run_both "without -x the mount is copied" -a -i
[ -e "$W/s/dst/mnt-here/on-inner" ] || die "the inner filesystem was not copied without -x"
umount "$BIND" && BIND=

# --- a destination that fills up
full=$(loopfs_new ext4 24M) || die "cannot make the small filesystem"
S=$W0/fsrc D=$full/dst
mkdir -p "$S/a"
for i in 1 2 3 4 5 6; do head -c 1048576 /dev/urandom >"$S/a/old$i"; done
"$SYNC" -a "$S/" "$D/" || die "first sync into the small filesystem failed"
cp -a "$D" "$W0/dst-before"
# new contents, and a time the quick check cannot miss (whole seconds)
for i in 1 2 3 4 5 6; do
	head -c 1048576 /dev/urandom >"$S/a/old$i"
	touch -d '2021-01-01 00:00:0'$i "$S/a/old$i"
done
head -c 40000000 /dev/urandom >"$S/a/huge"
rc=0
"$SYNC" -a --delete "$S/" "$D/" 2>"$W0/full.err" || rc=$?
[ $rc != 0 ] || die "a full destination gave exit 0"
grep -q 'No space left on device' "$W0/full.err" || die "no clear error: $(cat "$W0/full.err")"
ok "full destination: exit $rc: $(head -1 "$W0/full.err")"
for i in 1 2 3 4 5 6; do
	f=a/old$i
	cmp -s "$D/$f" "$W0/dst-before/$f" || cmp -s "$D/$f" "$S/$f" || die "$f is damaged (neither old nor new)"
done
[ ! -e "$D/a/huge" ] || die "a partial huge file is in place"
[ -z "$(find "$D" -name '.sweep-tmp.*')" ] || die "temporaries left after the failed run"
# room again: the re-run converges
rm "$S/a/huge"
"$SYNC" -a --delete "$S/" "$D/" || die "re-run after freeing space failed"
compare_trees "$S" "$D"

finish
