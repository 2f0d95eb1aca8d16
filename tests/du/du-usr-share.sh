#!/bin/bash
# SPDX-License-Identifier: MIT
# sweep-du against GNU du on a real system tree (/usr/share: tens of
# thousands of entries laid down by the package manager, with the
# filesystem's own readdir order, hard links and symlinks).
set -u
. "$TESTS_DIR/du/lib.sh"
root=${DU_SYSTEM_TREE:-/usr/share}
[ -d "$root" ] || skip "no $root"

for set in "-a" "-sh" "-ab --si" "-d1 -c -S" "-L -d 3" "-x --exclude=*.gz -d 2"; do
	# shellcheck disable=SC2086
	du_same $set "$root"
done
# several system trees at once: shared hard links and overlaps are counted once
du_same -c -d 1 "$root/doc" "$root" "$root/man"
finish
