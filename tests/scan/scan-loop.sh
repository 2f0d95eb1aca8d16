#!/bin/bash
# SPDX-License-Identifier: MIT
# lib/metascan on real loop images: ext4 (4 KiB and 1 KiB blocks, inline_data,
# gdt_csum without 64bit, meta_bg), ext2 (block maps) and xfs (v5, large
# inodes, v4 where the kernel still mounts it), each holding a file of every
# size and mapping class (populate.py). After sync, for every entry:
#  - the raw hint's mode, size and nlink equal lstat's;
#  - its first physical byte equals sweep_extent_first() (FIEMAP), and the
#    length of that extent, and ONE_EXTENT only when FIEMAP lists one extent;
#  - sweep__metascan_ranges of every directory and fragmented file equals
#    FIEMAP's located extents;
#  - symlinks (no FIEMAP from user space) and xfs directories (xfs has no
#    FIEMAP for them) against debugfs / xfs_db;
#  - as uid 65534 the open fails cleanly with EACCES or EPERM.
# Needs root and loop devices; skips (77) without them.
set -u
. "${TESTS_DIR:?}/common/lib.sh"
. "$TESTS_DIR/common/loopfs.sh"
loopfs_require ext4 xfs
SCAN=${BUILD_ROOT:?}/tests/scan/scan-tree
POP=$TESTS_DIR/scan/populate.py
ran=0
# the mount points must be reachable by uid 65534 for the unprivileged run
chmod 755 "$LOOPFS_WORK"

# ext4: the block map of inode INO at logical block 0, in bytes ("-" without one)
ext4_first() { # DEV INO BS
	local b
	if debugfs -R "stat <$2>" "$1" 2>/dev/null | grep -q '^Fast link dest:'; then
		echo - # the target is in the inode (bmap would read it as block numbers)
		return
	fi
	b=$(debugfs -R "bmap <$2> 0" "$1" 2>/dev/null | tail -1)
	if [[ $b =~ ^[0-9]+$ ]] && [ "$b" != 0 ]; then echo $((b * $3)); else echo -; fi
}

# xfs: the first written extent of inode INO's data fork, in bytes ("-" without one)
xfs_first() { # DEV INO BS AGBLOCKS
	xfs_db -r -c "inode $2" -c "bmap -d" "$1" 2>/dev/null |
		awk -v bs="$3" -v agb="$4" '
			/startblock/ && $NF == 0 && !done {
				# data offset 0 startblock 1234 (0/1234) count 1 flag 0
				for (i = 1; i <= NF; i++) if ($i ~ /^\([0-9]+\/[0-9]+\)$/) { s = $i; gsub(/[()]/, "", s); split(s, a, "/") }
				printf "%.0f\n", (a[1] * agb + a[2]) * bs; done = 1 }
			END { if (!done) print "-" }'
}

check_fs() { # check_fs LABEL FSTYPE SIZE [mkfs options...]
	local label=$1 fstype=$2 size=$3 mnt dev bs out agb
	shift 3
	mnt=$(loopfs_new "$fstype" "$size" "$@" 2>"$LOOPFS_WORK/$label.mkerr")
	if [ -z "$mnt" ] || ! mountpoint -q "$mnt"; then
		if [ "$label" = xfs-v4 ]; then
			skip_part "$label: not available here (kernel or mkfs refuses v4 xfs)"
			return
		fi
		fail "$label: cannot make the filesystem: $(cat "$LOOPFS_WORK/$label.mkerr")"
		return
	fi
	chmod 755 "$mnt"
	dev=$(loopfs_dev "$mnt")
	bs=$(stat -f -c %S "$mnt")
	python3 "$POP" "$mnt/t" "$bs" || { fail "$label: populate failed"; return; }
	sync
	# xfs writes inodes back to their home blocks lazily; a freeze writes everything
	[ "$fstype" = xfs ] && { fsfreeze -f "$mnt" && fsfreeze -u "$mnt"; }
	out=$LOOPFS_WORK/$label
	ran=$((ran + 1))
	case_begin "$label: every hint as lstat and FIEMAP (symlinks$([ "$fstype" = xfs ] && echo ", directories") as $([ "$fstype" = xfs ] && echo xfs_db || echo debugfs)), EACCES/EPERM as uid 65534, the image by --dev"
	local blockmap=
	[ "$fstype" = ext2 ] && blockmap=--blockmap
	if ! "$SCAN" --check --list $blockmap "$mnt/t" >"$out.list" 2>"$out.err"; then
		fail "$label: scan-tree --check: $(grep -E 'MISMATCH|scan-tree:|ERROR|runtime error' "$out.err" | head -8)"
	fi
	echo "$label (bs $bs): $(grep '^check:' "$out.err")"
	grep -q 'fiemap=0 ' "$out.err" && fail "$label: FIEMAP compared nothing"

	# what FIEMAP cannot show: symlinks everywhere, directories on xfs
	local ino why mode nlink sz phys flags path want n=0
	[ "$fstype" = xfs ] && agb=$(xfs_db -r -c "sb 0" -c "print agblocks" "$dev" | awk '{print $3}')
	while read -r ino why mode nlink sz phys flags path; do
		case $mode in
		120*) ;;
		40*) [ "$fstype" = xfs ] || continue ;;
		*) continue ;;
		esac
		if [ "$fstype" = xfs ]; then want=$(xfs_first "$dev" "$ino" "$bs" "$agb"); else want=$(ext4_first "$dev" "$ino" "$bs"); fi
		[ "$phys" = "$want" ] || fail "$label: $path (inode $ino, mode $mode): hint $phys, on-disk map $want"
		n=$((n + 1))
	done <"$out.list"
	echo "$label: $n symlinks$([ "$fstype" = xfs ] && echo " and directories") checked against $([ "$fstype" = xfs ] && echo xfs_db || echo debugfs)"

	# without read access to the device: a clean EACCES/EPERM, nothing else
	local r
	r=$(setpriv --reuid 65534 --regid 65534 --clear-groups "$SCAN" "$mnt/t" 2>"$out.nobody.err")
	local rc=$?
	if [ $rc != 3 ] || ! [[ $r == "open: EACCES" || $r == "open: EPERM" ]]; then
		fail "$label: as uid 65534: exit $rc, '$r' (want exit 3, open: EACCES or EPERM): $(head -3 "$out.nobody.err")"
	fi
	# the same without a mount: the image itself, through sweep__metascan_open_dev
	if ! "$SCAN" --dev "$dev" "$mnt/t" >/dev/null 2>"$out.dev.err"; then
		fail "$label: --dev $dev: $(tail -3 "$out.dev.err")"
	fi
	case_end
}

check_fs ext4-4k ext4 400M -b 4096
check_fs ext4-1k ext4 300M -b 1024
check_fs ext4-inline ext4 400M -b 4096 -O inline_data
check_fs ext4-gdtcsum ext4 400M -b 4096 -O ^metadata_csum,^64bit,uninit_bg
check_fs ext4-metabg ext4 400M -b 4096 -O meta_bg,^resize_inode
check_fs ext2 ext2 400M -b 4096
check_fs ext2-1k ext2 300M -b 1024
check_fs xfs xfs 400M
check_fs xfs-big-inodes xfs 400M -i size=2048
check_fs xfs-v4 xfs 400M -m crc=0
[ $ran -gt 0 ] || skip "no filesystem could be made"
finish
