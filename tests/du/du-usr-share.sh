#!/bin/bash
# SPDX-License-Identifier: MIT
# sweep-du against GNU du on a real system tree (/usr/share: tens of
# thousands of entries laid down by the package manager, with the
# filesystem's own readdir order, hard links and symlinks).
set -u
. "$TESTS_DIR/du/lib.sh"
root=${DU_SYSTEM_TREE:-/usr/share}
[ -d "$root" ] || { echo "SKIP: no $root" >&2; exit 77; }

for set in "" "-a" "-sh" "-ab" "-d1 -c" "--apparent-size --si -a" "-x -d 2" "-L -d 3" \
	"--exclude=*.gz -d 1" "-S -k" "--inodes -d 1"; do
	# shellcheck disable=SC2086
	du_same $set "$root"
done
# several system trees at once: shared hard links and overlaps are counted once
du_same -c -d 1 "$root/doc" "$root" "$root/man"
du_finish
