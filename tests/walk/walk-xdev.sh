#!/bin/bash
# SPDX-License-Identifier: MIT
# --xdev (du -x, find -xdev): a filesystem mounted inside the tree is listed
# as its mount point but not entered; without --xdev it is walked, and its
# entries carry that filesystem's fsinfo (walk-list -l prints the fs name).
# Needs root to mount a tmpfs; skips otherwise.
. "$(dirname "$0")/lib.sh"
walk_setup "$1"
[ "$(id -u)" = 0 ] || walk_skip "needs root to mount"

r=$T/tree
mkdir -p "$r/a/mnt" "$r/b"
touch "$r/a/f" "$r/b/g"
mount -t tmpfs -o size=1M sweep-walk-test "$r/a/mnt" 2>/dev/null || walk_skip "cannot mount tmpfs"
trap 'umount "$r/a/mnt"; walk_cleanup' EXIT
mkdir "$r/a/mnt/inside"
touch "$r/a/mnt/inside/h" "$r/a/mnt/i"

for order in inode none; do
	find "$r" -print0 >"$T/find"
	"$W" -0 --order=$order "$r" >"$T/walk" 2>"$T/err" || walk_fail "--order=$order"
	same_set "$T/find" "$T/walk" || walk_fail "--order=$order without --xdev"
	find "$r" -xdev -print0 >"$T/find-x"
	"$W" -0 --xdev --order=$order "$r" >"$T/walk-x" 2>"$T/err" || walk_fail "--xdev --order=$order"
	same_set "$T/find-x" "$T/walk-x" || walk_fail "--xdev --order=$order is not find -xdev"
	grep -qz "/a/mnt$" "$T/walk-x" || walk_fail "mount point not listed"
done
# fsinfo per entry: tmpfs inside, the outer filesystem elsewhere.
"$W" --fs "$r" 2>/dev/null >"$T/fs"
grep -q "^tmpfs .*/a/mnt/inside/h$" "$T/fs" || { cat "$T/fs" >&2; walk_fail "entry on the tmpfs not described as tmpfs"; }
outer=$(stat -f -c %T "$T")
grep "/b/g$" "$T/fs" | grep -qv "^tmpfs" || [ "$outer" = tmpfs ] || walk_fail "outer entry described as tmpfs"
echo ok
