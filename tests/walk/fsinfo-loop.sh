#!/bin/bash
# SPDX-License-Identifier: MIT
# fsinfo on real filesystems in loop devices: type, block size and policy
# as the kernel reports them, and the disk and rotational flag found by
# following the loop device to its backing file and that file's disk --
# compared with what losetup, findmnt, lsblk and /sys say; and a walk in
# every order finds what find finds there. Skips without root
# or loop devices.
. "$TESTS_DIR/walk/lib.sh"
. "$TESTS_DIR/common/loopfs.sh"
walk_setup "$1"
loopfs_require ext4 xfs

# The disk under a file, the way util-linux sees it ("-" when there is none).
disk_of_file() {
	local src pk
	src=$(findmnt -nvo SOURCE --target "$1") || { echo -; return; }
	case $src in /dev/*) ;; *) echo -; return ;; esac
	src=$(readlink -f "$src")
	if [ -e "/sys/class/block/$(basename "$src")/loop/backing_file" ]; then
		disk_of_file "$(cat "/sys/class/block/$(basename "$src")/loop/backing_file")"
		return
	fi
	pk=$(lsblk -ndo PKNAME "$src" 2>/dev/null)
	[ -n "$pk" ] && echo "$pk" || basename "$src"
}

# ext3 shares ext4's magic number (the name comes from mountinfo); btrfs has
# an anonymous st_dev (the disk comes from the mount source). Both when the
# tools are there.
fslist=(ext4 xfs)
command -v mkfs.ext3 >/dev/null && fslist+=(ext3)
command -v mkfs.btrfs >/dev/null && grep -qw btrfs /proc/filesystems && fslist+=(btrfs)
for fs in "${fslist[@]}"; do
	mnt=$(loopfs_new $fs 300M) || die "cannot make $fs"
	dev=$(loopfs_dev "$mnt")
	back=$(losetup -nO BACK-FILE "$dev")
	disk=$(disk_of_file "$back")
	rot=-1
	# device-mapper or md under the backing file: the walk may pick a slave; accept any rotational value then
	[ "$disk" != - ] && [ -r "/sys/block/$disk/queue/rotational" ] && rot=$(cat "/sys/block/$disk/queue/rotational")
	bs=$(stat -f -c %S "$mnt")
	mkdir "$mnt/d"
	touch "$mnt/d/f"
	for p in "$mnt" "$mnt/d" "$mnt/d/f"; do
		got=$("$W" --fsinfo "$p") || die "--fsinfo $p"
		want="fs=$fs disk=$disk rotational=$rot policy=physical block_size=$bs"
		[ "$got" = "$want" ] || die "$p: got '$got', want '$want'"
	done
	# The walk on each real filesystem, in its own (AUTO) order and the others: what find finds.
	python3 - "$mnt/d" <<'PY'
import os, sys
r = sys.argv[1]
for i in range(30):
    d = os.path.join(r, "dir%d" % i, "sub%d" % (i % 4))
    os.makedirs(d)
    for j in range(12):
        open(os.path.join(d if j % 2 else os.path.dirname(d), "f%d-%d" % (i, j)), "w").write("x" * j * 100)
    os.symlink("..", os.path.join(d, "up"))
PY
	find "$mnt" -print0 >"$T/find"
	for order in auto physical inode none name; do
		"$W" -0 --order=$order "$mnt" >"$T/walk" 2>"$T/err" || { cat "$T/err" >&2; die "$fs --order=$order"; }
		same_set "$T/find" "$T/walk" || die "$fs --order=$order: not what find finds"
	done
	# Every entry of a walk carries the fsinfo of its filesystem.
	"$W" --fs "$mnt" 2>/dev/null | grep -v "^$fs " && die "an entry on $fs described otherwise"
	ok "$fs on $dev ($back) -> $disk rotational=$rot"
done
finish
