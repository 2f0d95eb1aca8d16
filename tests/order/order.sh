#!/bin/bash
# SPDX-License-Identifier: MIT
# sweep-order on real filesystems: its output is in FIEMAP order within each
# filesystem (checked independently in Python), filesystems in order of first
# appearance, unstat-able paths last with a warning and exit 1, NUL-separated
# names with any bytes round-trip, and a list sorted in many runs on disk
# (a tiny --memory) comes out the same as one sorted in memory.
. "$TESTS_DIR/common/lib.sh"
set -u
. "$TESTS_DIR/common/loopfs.sh"
loopfs_require ext4
# These cases assert the disk (HDD-class) order; loop devices on fast
# storage probe as SSD class, where the library keeps the given order.
export SWEEP_DEVICE=hdd
ORDER=$BUILD_ROOT/utils/sweep-order

mnt=$(loopfs_new ext4 128M) || die "no ext4 image"
# Interleave the allocations of several directories, then punch holes in the
# layout and fill them, so that name order and disk order differ.
for d in a b c d; do mkdir -p "$mnt/$d"; done
for i in $(seq 1 60); do
	for d in a b c d; do head -c $(((i * 7 + ${#d}) % 13 * 1500 + 100)) /dev/urandom >"$mnt/$d/f$i"; done
done
sync
for i in $(seq 1 60 3); do rm "$mnt/b/f$i"; done
for i in $(seq 1 20); do head -c 20000 /dev/urandom >"$mnt/c/late$i"; done
: >"$mnt/a/empty"
printf 'x' >"$mnt/a/weird"$'\n'"name"
printf 'y' >"$mnt/d/sp ace"
printf 'z' >"$mnt/d/$(printf 'ctl\001\033byte\377')"
sync

W=$LOOPFS_WORK
(cd "$mnt" && find . -type f -print0 | sort -z) >"$W/list"
cd "$mnt" || die "cd $mnt"
"$ORDER" -0 <"$W/list" >"$W/out" 2>"$W/err"
rc=$?
[ $rc = 0 ] && [ ! -s "$W/err" ] && ok "exit 0, nothing on stderr" || fail "exit $rc: $(cat "$W/err")"
cmp -s <(tr '\0' '\n' <"$W/list" | sort) <(tr '\0' '\n' <"$W/out" | sort) && ok "the same paths out as in" ||
	fail "paths lost or added"
python3 "$TESTS_DIR/order/firstblock.py" <"$W/out" >"$W/blocks"
# located files ascending, the unlocated (empty) ones after them
if awk '$1 == "-" { seen_none = 1; next }
	seen_none || ($1 + 0 < last) { bad = 1 }
	{ last = $1 + 0 }
	END { exit bad }' "$W/blocks"; then
	ok "in FIEMAP order ($(grep -vc '^-' "$W/blocks") located files)"
else
	fail "not in FIEMAP order"
fi
cmp -s "$W/list" "$W/out" && fail "name order and disk order are the same: the layout did not scatter"

# SSD class: positioning costs nothing, the list comes out as it went in
SWEEP_DEVICE=ssd "$ORDER" -0 <"$W/list" >"$W/out-ssd" || fail "SWEEP_DEVICE=ssd failed"
cmp -s "$W/list" "$W/out-ssd" && ok "SSD class: input order kept" || fail "SSD class reordered the list"
"$ORDER" -0 --device=ssd <"$W/list" | cmp -s "$W/list" - && ok "--device=ssd: input order kept" || fail "--device=ssd reordered"
SWEEP_DEVICE=ssd "$ORDER" -0 --device=hdd <"$W/list" | cmp -s "$W/out" - && ok "--device=hdd wins over SWEEP_DEVICE" ||
	fail "--device=hdd did not give the disk order"
"$ORDER" --device=fast </dev/null 2>"$W/err.dev"; [ $? = 2 ] && grep -q "invalid --device argument 'fast'" "$W/err.dev" &&
	ok "--device=fast refused" || fail "--device=fast: $(cat "$W/err.dev")"

# a tiny memory bound: many runs on disk, merged
"$ORDER" -0 -S 2K <"$W/list" >"$W/out-runs" || fail "-S 2K failed"
cmp -s "$W/out" "$W/out-runs" && ok "sorted in runs on disk = sorted in memory" || fail "runs differ"

# newline-separated too
grep -zv weird "$W/list" | tr '\0' '\n' >"$W/list.nl"
"$ORDER" <"$W/list.nl" >"$W/out.nl" || fail "newline mode failed"
cmp -s <(grep -zv weird "$W/out" | tr '\0' '\n') "$W/out.nl" && ok "newline-separated: same order" ||
	fail "newline mode order differs"

# unstat-able paths: passed through last, in list order, with a warning, exit 1
{ printf './nope1\0'; cat "$W/list"; printf './nope2\0'; } >"$W/list.bad"
"$ORDER" -0 <"$W/list.bad" >"$W/out.bad" 2>"$W/err.bad"
rc=$?
[ $rc = 1 ] && ok "unstat-able paths: exit 1" || fail "unstat-able paths: exit $rc"
[ "$(tr '\0' '\n' <"$W/out.bad" | tail -2 | tr '\n' ' ')" = "./nope1 ./nope2 " ] &&
	ok "unstat-able paths last, in list order" || fail "unstat-able paths not last"
grep -qx "sweep-order: ./nope1: No such file or directory" "$W/err.bad" && ok "a warning per path" ||
	fail "no warning: $(cat "$W/err.bad")"

# two filesystems interleaved in the list: grouped, in order of first appearance
mkdir -p "$W/tmpfs" && mount -t tmpfs none "$W/tmpfs" && echo "$W/tmpfs" >>"$W/mounts"
for i in 1 2 3; do printf 't%s' $i >"$W/tmpfs/t$i"; done
{ printf '%s\0' "$W/tmpfs/t3" ./a/f1 "$W/tmpfs/t1" ./b/f2 "$W/tmpfs/t2"; } | "$ORDER" -0 | tr '\0' ' ' >"$W/mixed"
[ "$(cut -d' ' -f1-3 "$W/mixed")" = "$W/tmpfs/t3 $W/tmpfs/t1 $W/tmpfs/t2" ] &&
	ok "a filesystem where sorting does not pay keeps the list's order, first named first" ||
	fail "mixed filesystems: $(cat "$W/mixed")"
umount "$W/tmpfs"

# bad usage
"$ORDER" --order=name </dev/null 2>/dev/null; [ $? = 2 ] && ok "--order=name refused" || fail "--order=name accepted"
"$ORDER" extra </dev/null 2>/dev/null; [ $? = 2 ] && ok "an operand refused" || fail "an operand accepted"
cd /
finish
