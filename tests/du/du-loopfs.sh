#!/bin/bash
# SPDX-License-Identifier: MIT
# sweep-du against GNU du on real ext4 and xfs filesystems (loop images),
# where the C-SCAN walk order really differs from readdir order, with a
# filesystem mounted inside the tree for -x, a tmpfs holding a directory of
# more than 10,000 entries (fts does not sort those on tmpfs), and mount
# points inside a directory of more than 10,000 entries on ext4.
set -u
. "$TESTS_DIR/du/lib.sh"
. "$TESTS_DIR/common/loopfs.sh"
loopfs_require ext4 xfs

ext4=$(loopfs_new ext4 256M) || die "cd"
xfs=$(loopfs_new xfs 320M) || die "cd"
"$TESTS_DIR/du/mktree.sh" "$ext4/t" big
"$TESTS_DIR/du/mktree.sh" "$xfs/t"
# a filesystem inside each tree: -x must leave it out, plain du must count it
mkdir "$ext4/t/mnt" "$xfs/t/mnt"
inner=$(loopfs_new ext4 64M) || die "cd"
mkdir "$inner/data" && head -c 200000 /dev/urandom >"$inner/data/blob"
mount --bind "$inner" "$ext4/t/mnt"
LOOPFS_MOUNTS+=("$ext4/t/mnt")
mount --bind "$inner" "$xfs/t/mnt"
LOOPFS_MOUNTS+=("$xfs/t/mnt")
tmp=$DU_TMP/tmpfs
mkdir "$tmp"
mount -t tmpfs -o size=64M tmpfs "$tmp" && LOOPFS_MOUNTS+=("$tmp")
mkdir "$tmp/many" && (cd "$tmp/many" && seq -f 't%05g' 1 10200 | xargs touch && mkdir sub && echo x >sub/f)
mount --bind "$tmp" "$xfs/t/mnt/data" && LOOPFS_MOUNTS+=("$xfs/t/mnt/data")
# mount points in the directory of 10,500 entries, one of them a bind mount
# from the same filesystem (same st_dev), one a file: there d_ino, which fts
# sorts on, is not st_ino, and sweep-du must read the directory for it
mount --bind "$ext4/t/a" "$ext4/t/many/dir5" && LOOPFS_MOUNTS+=("$ext4/t/many/dir5")
mount --bind "$inner/data/blob" "$ext4/t/many/n00007" && LOOPFS_MOUNTS+=("$ext4/t/many/n00007")
sync

for fs in "$ext4" "$xfs"; do
	cd "$fs" || die "cd"
	du_matrix t
	du_same -x -a t t/mnt
	du_same -xs t/mnt t
	du_same -a "$tmp"
	cd /
done
cd "$ext4" || die "cd"
du_same -a t/many
# with no bind mount of ext4 left, the file mounted from the inner filesystem
# is told by its st_dev alone
umount "$ext4/t/many/dir5" || die "umount dir5"
du_same -a t/many
cd /
finish
