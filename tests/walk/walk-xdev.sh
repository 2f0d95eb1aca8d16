#!/bin/bash
# SPDX-License-Identifier: MIT
# --xdev (du -x, find -xdev): a filesystem mounted inside the tree is listed
# as its mount point but not entered; without --xdev it is walked, and its
# entries carry that filesystem's fsinfo (walk-list -l prints the fs name).
# Needs root to mount a tmpfs; skips otherwise.
. "$TESTS_DIR/walk/lib.sh"
walk_setup "$1"
[ "$(id -u)" = 0 ] || skip "needs root to mount"

r=$T/tree
mkdir -p "$r/a/mnt" "$r/b"
touch "$r/a/f" "$r/b/g"
mount -t tmpfs -o size=1M sweep-walk-test "$r/a/mnt" 2>/dev/null || skip "cannot mount tmpfs"
on_exit 'umount "$r/a/mnt"'
mkdir "$r/a/mnt/inside"
touch "$r/a/mnt/inside/h" "$r/a/mnt/i"

for order in inode none; do
	find "$r" -print0 >"$T/find"
	"$W" -0 --order=$order "$r" >"$T/walk" 2>"$T/err" || die "--order=$order"
	same_set "$T/find" "$T/walk" || die "--order=$order without --xdev"
	find "$r" -xdev -print0 >"$T/find-x"
	"$W" -0 --xdev --order=$order "$r" >"$T/walk-x" 2>"$T/err" || die "--xdev --order=$order"
	same_set "$T/find-x" "$T/walk-x" || die "--xdev --order=$order is not find -xdev"
	grep -qz "/a/mnt$" "$T/walk-x" || die "mount point not listed"
done
# fsinfo per entry: tmpfs inside, the outer filesystem elsewhere.
"$W" --fs "$r" 2>/dev/null >"$T/fs"
grep -q "^tmpfs .*/a/mnt/inside/h$" "$T/fs" || { cat "$T/fs" >&2; die "entry on the tmpfs not described as tmpfs"; }
outer=$(stat -f -c %T "$T")
grep "/b/g$" "$T/fs" | grep -qv "^tmpfs" || [ "$outer" = tmpfs ] || die "outer entry described as tmpfs"
ok "walk-xdev"
finish
