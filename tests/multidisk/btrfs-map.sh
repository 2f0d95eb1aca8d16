#!/bin/bash
# SPDX-License-Identifier: MIT
# btrfs over two disks (two loop devices over files of a private tmpfs, so
# each is a disk of its own), on real devices:
#  - data single: the chunk tree maps each file's first byte to one of the
#    two devices, and the bytes found there on that device (O_DIRECT) are
#    the file's; both devices hold files; sweep-plan --read reads both at
#    once and delivers every file's data, whole;
#  - as uid 65534 the chunk tree cannot be read: the map says so and every
#    file is still read, in one sweep;
#  - data raid0: one striped spindle of two members, read as one group.
. "${TESTS_DIR:?run through meson test: TESTS_DIR is not set}/common/lib.sh"
. "$TESTS_DIR/multidisk/lib.sh"
require_root
require_cmd mkfs.btrfs python3
md_disks_on_tmpfs 900M
loopfs_require
grep -qw btrfs /proc/filesystems || modprobe btrfs 2>/dev/null || grep -qw btrfs /proc/filesystems ||
	skip "kernel has no btrfs"
SHOW="$BUILD_ROOT/tests/multidisk/devmap-show"
PLAN="$BUILD_ROOT/utils/sweep-plan"
scratch T

# Two 400 MiB devices: data chunks of about 40 MiB, each on the device with the more room left.
btrfs_two() { # btrfs_two PROFILE -> mount point
	local a b mnt
	# Attached and mounted here, listed where loopfs_cleanup finds them (this runs in a subshell).
	truncate -s 400M "$LOOPFS_WORK/b$1-1.img" "$LOOPFS_WORK/b$1-2.img"
	a=$(losetup --find --show "$LOOPFS_WORK/b$1-1.img") || return 1
	echo "$a" >>"$LOOPFS_WORK/devs"
	b=$(losetup --find --show "$LOOPFS_WORK/b$1-2.img") || return 1
	echo "$b" >>"$LOOPFS_WORK/devs"
	mkfs.btrfs -q -f -d "$1" -m raid1 "$a" "$b" >/dev/null 2>&1 || return 1
	mnt="$LOOPFS_WORK/btrfs-$1"
	mkdir -p "$mnt"
	mount "$a" "$mnt" || return 1
	echo "$mnt" >>"$LOOPFS_WORK/mounts"
	echo "$mnt"
}

fill() { # fill DIR: 60 files of 2 MiB, in 3 directories, world-readable
	local d=$1 i
	mkdir -p "$d/a" "$d/b" "$d/c"
	for i in $(seq 1 60); do
		head -c 2097152 /dev/urandom >"$d/$(printf '%s/f%02d' "$(echo a b c | cut -d' ' -f$((i % 3 + 1)))" "$i")"
	done
	chmod -R a+rX "$d"
	sync
}

M=$(btrfs_two single) || die "cannot make a two-device btrfs"
fill "$M"

case_begin "single: each file's first bytes are where the chunk tree says"
"$SHOW" locate "$M"/*/f* >"$T/where" || fail "devmap-show locate"
while read -r f dev off group; do
	[ "$dev" = - ] && { fail "$f: not located"; continue; }
	want=$(head -c 65536 "$f" | sha256sum)
	# btrfs places data in 4 KiB sectors: the device read past the page cache, where the file's first 64 KiB are
	got=$(dd if="/dev/$dev" bs=4096 skip=$((off / 4096)) count=16 iflag=direct 2>/dev/null | sha256sum)
	[ $((off % 4096)) = 0 ] || fail "$f: offset $off is not a sector's"
	[ "$got" = "$want" ] || fail "$f: /dev/$dev at $off does not hold its data"
done <"$T/where"
ndev=$(awk '{print $2}' "$T/where" | sort -u | wc -l)
ngroup=$(awk '{print $4}' "$T/where" | sort -u | wc -l)
[ "$ndev" = 2 ] || fail "files on $ndev devices, want both"
[ "$ngroup" = 2 ] || fail "$ngroup groups, want 2 (the raid1 metadata holds no file's data)"
case_end

case_begin "single: sweep-plan --read reads both devices at once, every file whole"
SWEEP_DEVICE=hdd "$PLAN" --read --no-compare --dump "$T/dump" "$M" >/dev/null 2>"$T/err" || fail "sweep-plan failed: $(cat "$T/err")"
grep -q "read 60 files, 125829120 bytes" "$T/err" || fail "not every byte read: $(grep read "$T/err")"
grep -q ", 2 disks at once)" "$T/err" || fail "not both disks at once: $(grep read "$T/err")"
md_chunks_same "$T/dump" 2097152 "$M" || fail "the data read is not the files' data"
case_end

case_begin "as uid 65534: no chunk tree, said so, one sweep, every file"
setpriv --reuid 65534 --regid 65534 --clear-groups "$SHOW" map "$M/a/f03" >"$T/map" 2>&1 || fail "devmap-show as 65534"
grep -q "chunk tree not readable" "$T/map" || fail "no word of the chunk tree: $(cat "$T/map")"
SWEEP_DEVICE=hdd setpriv --reuid 65534 --regid 65534 --clear-groups "$PLAN" --read --no-compare "$M" >/dev/null 2>"$T/err" ||
	fail "sweep-plan as 65534: $(cat "$T/err")"
grep -q "read 60 files, 125829120 bytes" "$T/err" || fail "as 65534: $(grep read "$T/err")"
grep -q "disks at once" "$T/err" && fail "as 65534, without the map, still read side by side"
case_end

R=$(btrfs_two raid0) || die "cannot make a raid0 btrfs"
fill "$R"
case_begin "raid0: one striped spindle of both devices, one group"
"$SHOW" map "$R" >"$T/map" || fail "devmap-show map"
grep -Eq '^spindle btrfs-[0-9a-f]{8}-striped striped 2 ' "$T/map" || fail "no striped spindle of 2: $(cat "$T/map")"
SWEEP_DEVICE=hdd "$PLAN" --read --no-compare "$R" >/dev/null 2>"$T/err" || fail "sweep-plan raid0"
grep -q "read 60 files, 125829120 bytes" "$T/err" || fail "raid0: $(grep read "$T/err")"
grep -q "disks at once" "$T/err" && fail "raid0 read as two groups"
case_end

finish
