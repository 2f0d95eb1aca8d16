#!/bin/bash
# SPDX-License-Identifier: MIT
# sweep-du of a whole xfs filesystem on either device class, where the walk takes
# its files' stats from a bulkstat table (lib/walk/walk_table.c) instead
# of a stat each: the same output as GNU du for every option set, and the
# table really answered (far fewer stat calls than files). With a file of
# the filesystem covered by a bind mount, stat and bulkstat would disagree
# about it: the table must stand aside and du's answer still come out.
set -u
. "$TESTS_DIR/du/lib.sh"
. "$TESTS_DIR/common/loopfs.sh"
loopfs_require xfs
require_cmd strace

xfs=$(loopfs_new xfs 320M) || die "cd"
"$TESTS_DIR/du/mktree.sh" "$xfs" big
# files of every size class, and a hard link counted once
mkdir "$xfs/more" && for i in $(seq 1 300); do head -c $((i * 97)) /dev/zero >"$xfs/more/f$i"; done
ln "$xfs/more/f7" "$xfs/more/f7.hl"
mkdir -p "$xfs/more/sub/deeper" && echo x >"$xfs/more/sub/deeper/f" && echo y >"$xfs/more/sub/g"
# an attribute block on inodes whose data lives in the inode (fast symlink, short-form
# directory) or nowhere (device): bulkstat says 0 blocks there, stat counts the attributes'
ln -s small "$xfs/sym-xattr" && mkdir "$xfs/dir-xattr" && mknod "$xfs/dev-xattr" c 1 3 || die "mknod"
for f in sym-xattr dir-xattr dev-xattr; do
	python3 -c 'import os, sys; os.setxattr(sys.argv[1], "trusted.big", b"v" * 3000, follow_symlinks=False)' "$xfs/$f" ||
		die "setxattr $f"
done
sync
# cold, as a user's first du (the table is what a cold walk saves on)
dev=$(findmnt -n -o SOURCE "$xfs") || die "no device for $xfs"
remount() { umount "$xfs" && mount "$dev" "$xfs"; }

export SWEEP_DEVICE=ssd
cd / || die "cd"
du_matrix "$xfs"
du_same -a --time "$xfs"
du_same -a --time=ctime --time-style=full-iso "$xfs"

# stat calls of one cold sweep-du -a: the entries are listed; files are not stat'ed one by one
stats() {
	remount || die "remount"
	strace -f -qq -e trace=newfstatat,statx,fstatat64 -o "$DU_TMP/strace" "$SWEEP_DU" -a "$xfs" >/dev/null 2>&1
	grep -c . "$DU_TMP/strace"
}
files=$(find "$xfs" -xdev ! -type d | wc -l)
n=$(stats)
if [ "$n" -lt $((files / 4)) ]; then ok "table answered: $n stat calls for $files files"; else fail "$n stat calls for $files files: no table"; fi

# the HDD class: the table is made after the walk's inode sweep (one ascending pass on a few
# threads), and the directories that have blocks are read by handle as the sweep meets them
export SWEEP_DEVICE=hdd
remount || die "remount"
du_same -a "$xfs"
remount || die "remount"
du_same -a --time -x "$xfs"
n=$(stats)
if [ "$n" -lt $((files / 4)) ]; then ok "hdd class: $n stat calls for $files files"; else fail "hdd class: $n stat calls for $files files: no table"; fi
remount || die "remount"
strace -f -qq -e trace=open_by_handle_at -o "$DU_TMP/strace" "$SWEEP_DU" -s "$xfs" >/dev/null 2>&1
n=$(grep -c 'open_by_handle_at(.*= [0-9]' "$DU_TMP/strace")
if [ "$n" -gt 0 ]; then ok "hdd class: $n directories read by handle"; else fail "hdd class: no directory read by handle on a cold sweep"; fi
export SWEEP_DEVICE=ssd

# a bind mount of one directory is that directory, not its filesystem: in either class, no
# sweep or table of every inode (XFS_IOC_BULKSTAT / INUMBERS, 'X' 0x7f / 0x80), du's answer
bm=$DU_TMP/bind-more
mkdir "$bm" || die "mkdir"
whole_ioctls() { grep -cE 'XFS_IOC_(BULKSTAT|INUMBERS)|_IOC\(_IOC_READ, 0x58, 0x(7f|80)' "$DU_TMP/strace"; }
for cls in hdd ssd; do
	remount || die "remount"
	SWEEP_DEVICE=$cls strace -f -qq -e trace=ioctl -o "$DU_TMP/strace" "$SWEEP_DU" -s "$xfs" >/dev/null 2>&1
	[ "$(whole_ioctls)" -gt 0 ] || fail "$cls class: the whole filesystem was not swept (the check below would prove nothing)"
	remount || die "remount"
	mount --bind "$xfs/more" "$bm" && LOOPFS_MOUNTS+=("$bm") || die "bind mount"
	SWEEP_DEVICE=$cls strace -f -qq -e trace=ioctl -o "$DU_TMP/strace" "$SWEEP_DU" -a "$bm" >"$DU_TMP/bind.out" 2>&1
	n=$(whole_ioctls)
	if [ "$n" = 0 ]; then ok "$cls class, bind mount of a directory: no whole-filesystem sweep"; else fail "$cls class, bind mount of a directory: $n whole-filesystem ioctls"; fi
	SWEEP_DEVICE=$cls du_same -a "$bm"
	umount "$bm" || die "umount $bm"
done

# a bind mount on one of its files: the table stands aside (each file stat'ed), the answer is du's
blob=$DU_TMP/blob
head -c 300000 /dev/urandom >"$blob"
mount --bind "$blob" "$xfs/a/small" && LOOPFS_MOUNTS+=("$xfs/a/small")
du_same -a "$xfs"
du_same -s "$xfs"
umount "$xfs/a/small"
finish
