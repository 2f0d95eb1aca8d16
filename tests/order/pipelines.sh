#!/bin/bash
# SPDX-License-Identifier: MIT
# sweep-order feeding the tools that take a list of paths, as its man page
# shows: GNU tar --null -T -, borg create --paths-from-stdin, restic backup
# --files-from-raw, xargs -0. Each gets the list in sweep-order's order (tar
# and borg keep it: checked in their listings) and stores the tree whole
# (extracted or restored and compared). Repositories are made in the test.
. "$TESTS_DIR/common/lib.sh"
set -u
. "$TESTS_DIR/common/loopfs.sh"
loopfs_require ext4
# These cases assert the disk (HDD-class) order; loop devices on fast
# storage probe as SSD class, where the library keeps the given order.
export SWEEP_DEVICE=hdd
ORDER=$BUILD_ROOT/utils/sweep-order

mnt=$(loopfs_new ext4 64M) || die "no ext4 image"
mkdir -p "$mnt/t/x" "$mnt/t/y"
for i in $(seq 1 40); do
	head -c $((i % 9 * 2000 + 10)) /dev/urandom >"$mnt/t/x/f$i"
	head -c $((i % 5 * 3000 + 10)) /dev/urandom >"$mnt/t/y/g$i"
done
sync
for i in $(seq 1 40 4); do rm "$mnt/t/x/f$i"; head -c 9000 /dev/urandom >"$mnt/t/y/late$i"; done
sync
W=$LOOPFS_WORK
cd "$mnt" || die "cd $mnt"
find t -type f -print0 | sort -z >"$W/list"
"$ORDER" -0 <"$W/list" >"$W/ordered" || fail "sweep-order failed"
cmp -s "$W/list" "$W/ordered" && fail "the layout did not scatter (name order = disk order)"
tr '\0' '\n' <"$W/ordered" >"$W/ordered.txt"

# GNU tar: members in the list's order
"$ORDER" -0 <"$W/list" | tar --null -T - -cf "$W/t.tar" || fail "tar -T failed"
tar -tf "$W/t.tar" >"$W/tar.members"
cmp -s "$W/tar.members" "$W/ordered.txt" && ok "tar: members in sweep-order's order" || fail "tar: member order differs"
mkdir "$W/tar-x" && tar -xf "$W/t.tar" -C "$W/tar-x" && diff -r t "$W/tar-x/t" >/dev/null &&
	ok "tar: the tree comes back whole" || fail "tar: extracted tree differs"

# borg: items in the list's order
if command -v borg >/dev/null; then
	export BORG_PASSPHRASE= BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK=yes BORG_BASE_DIR=$W/borg-home
	borg init -e none "$W/borg" >/dev/null 2>&1 || fail "borg init"
	"$ORDER" -0 <"$W/list" | borg create --paths-from-stdin --paths-delimiter '\0' "$W/borg::a" 2>"$W/borg.err" ||
		fail "borg create: $(cat "$W/borg.err")"
	borg list --format '{path}{NL}' "$W/borg::a" >"$W/borg.items" 2>/dev/null
	cmp -s "$W/borg.items" "$W/ordered.txt" && ok "borg: items in sweep-order's order" || fail "borg: item order differs"
	mkdir "$W/borg-x" && (cd "$W/borg-x" && borg extract "$W/borg::a" 2>/dev/null) && diff -r t "$W/borg-x/t" >/dev/null &&
		ok "borg: the tree comes back whole" || fail "borg: extracted tree differs"
else
	skip_part "no borg"
fi

# restic: a snapshot of exactly the list
if command -v restic >/dev/null; then
	export RESTIC_PASSWORD=sweep-test RESTIC_CACHE_DIR=$W/restic-cache
	restic init -q --repo "$W/restic" >/dev/null 2>&1 || fail "restic init"
	"$ORDER" -0 <"$W/list" | restic -q -r "$W/restic" backup --files-from-raw /dev/stdin >/dev/null 2>"$W/restic.err" ||
		fail "restic backup: $(cat "$W/restic.err")"
	restic -q -r "$W/restic" restore latest --target "$W/restic-x" >/dev/null 2>&1 || fail "restic restore"
	diff -r t "$W/restic-x/t" >/dev/null && ok "restic: the tree comes back whole" || fail "restic: restored tree differs"
else
	skip_part "no restic"
fi

# xargs -0 cat: the data in the list's order
a=$("$ORDER" -0 <"$W/list" | xargs -0 cat | sha256sum)
b=$(while IFS= read -r -d '' p; do cat "$p"; done <"$W/ordered" | sha256sum)
[ "$a" = "$b" ] && ok "xargs -0 cat: data in sweep-order's order" || fail "xargs -0 cat differs"
cd /
finish
