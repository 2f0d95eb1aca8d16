#!/bin/bash
# SPDX-License-Identifier: MIT
# Every tool at a low open-file limit (GNU tar's suite runs extrac11 at
# ulimit -n 10), on a tree 13 directories deep with 130 files, a symlink
# and a hard link per level: more directories on one path than there are
# descriptors. The walk, the reader and the tools must let go of what they
# hold and open again (verified) rather than fail a file. Each result is
# compared with the peer's at the same limit:
#   - sweep-tar -c in disk order, --sort=name and --order=none: the members
#     GNU tar stores, and the tree GNU tar extracts from it; sweep-tar -x;
#     sweep-tar -c at 6, 7 and 8 too (a file planned by its path when no
#     descriptor is left to keep its root);
#   - sweep-cp -a and sweep-sync -aH (limits 10 and 16): the tree cp -a makes;
#   - sweep-du and sweep-du -ab (10 and 16): du's lines;
#   - sweep-plan --read and sweep-order (10): every file, no error.
. "$TESTS_DIR/tar/lib.sh"
cd "$WORK" || die "cd"
require_cmd cp du
BIN=$BUILD_ROOT/utils
export MANIFEST_NO_MAP=1

# Runs "$@" with only 0-2 open and RLIMIT_NOFILE at $LIM (meson's own descriptors closed first).
at_limit() {
	(
		for fd in $(ls /proc/self/fd); do
			[ "$fd" -gt 2 ] && eval "exec $fd<&-" 2>/dev/null
		done
		ulimit -n "$LIM" && exec "$@"
	)
}
LIM=10
at_limit true 2>/dev/null || skip "ulimit -n 10 cannot be set here"

p=src
for i in $(seq 1 13); do
	p=$p/dir$i
	mkdir -p "$p"
	for j in $(seq 1 10); do printf 'level %s file %s\n' "$i" "$j" > "$p/f$j"; done
	ln -s f1 "$p/link"
	ln "$p/f2" "$p/hard"
done
[ "$(find src -type f | wc -l)" -gt 100 ] && [ "$(find src -type d | wc -l)" -gt 10 ] || die "tree too small"
manifest src > want.manifest || die "manifest of src"

case_begin "sweep-tar -c and -x at ulimit -n 10, as GNU tar"
at_limit tar -cf gnu.tar src 2> gnu.err || { cat gnu.err >&2; die "GNU tar failed at ulimit -n 10"; }
tar -tf gnu.tar | sort > gnu.list
n=0
for order in "" --sort=name --order=none; do
	n=$((n + 1))
	rc=0; at_limit "$T" -cf "s$n.tar" $order src 2> "s$n.err" || rc=$?
	[ $rc = 0 ] && [ ! -s "s$n.err" ] || fail "sweep-tar -c $order: exit $rc, $(head -3 "s$n.err")"
	diff gnu.list <(tar -tf "s$n.tar" | sort) >&2 || fail "sweep-tar -c $order: members differ from GNU tar's"
	mkdir "g$n" && tar -xf "s$n.tar" -C "g$n" || fail "GNU tar cannot extract sweep-tar -c $order"
	same_tree want.manifest "g$n/src"
	mkdir "x$n" && rc=0 && at_limit "$T" -xf "s$n.tar" -C "x$n" 2> "x$n.err" || rc=$?
	[ $rc = 0 ] && [ ! -s "x$n.err" ] || fail "sweep-tar -x ($order): exit $rc, $(head -3 "x$n.err")"
	same_tree want.manifest "x$n/src"
done
case_end

# Fewer descriptors than GNU tar needs for this tree: at 7 the plan could not
# keep a root for the files beneath it, and every file failed (exit 2).
case_begin "sweep-tar -c at ulimit -n 6, 7 and 8: every member, the tree"
for LIM in 6 7 8; do
	rc=0; at_limit "$T" -cf "low$LIM.tar" src 2> "low$LIM.err" || rc=$?
	[ $rc = 0 ] && [ ! -s "low$LIM.err" ] || fail "sweep-tar -c at $LIM: exit $rc, $(head -3 "low$LIM.err")"
	diff gnu.list <(tar -tf "low$LIM.tar" | sort) >&2 || fail "sweep-tar -c at $LIM: members differ from GNU tar's"
	mkdir "low$LIM" && tar -xf "low$LIM.tar" -C "low$LIM" || fail "GNU tar cannot extract sweep-tar -c at $LIM"
	same_tree want.manifest "low$LIM/src"
done
LIM=10
case_end

cp -a src cp.ref && manifest cp.ref > cp.manifest || die "cp -a"
for LIM in 10 16; do
	case_begin "sweep-cp -a, sweep-sync -aH and sweep-du at ulimit -n $LIM, as cp -a and du"
	rc=0; at_limit "$BIN/sweep-cp" -a src "cp$LIM" 2> "cp$LIM.err" || rc=$?
	[ $rc = 0 ] && [ ! -s "cp$LIM.err" ] || fail "sweep-cp -a: exit $rc, $(head -3 "cp$LIM.err")"
	same_tree cp.manifest "cp$LIM"
	rc=0; at_limit "$BIN/sweep-sync" -aH src/ "sync$LIM/" 2> "sync$LIM.err" || rc=$?
	[ $rc = 0 ] && [ ! -s "sync$LIM.err" ] || fail "sweep-sync -aH: exit $rc, $(head -3 "sync$LIM.err")"
	same_tree cp.manifest "sync$LIM"
	for opts in "" "-ab"; do
		du $opts src | sort > du.want
		rc=0; at_limit "$BIN/sweep-du" $opts src > du.have 2> du.err || rc=$?
		[ $rc = 0 ] && [ ! -s du.err ] || fail "sweep-du $opts: exit $rc, $(head -3 du.err)"
		diff du.want <(sort du.have) >&2 || fail "sweep-du $opts differs from du $opts"
	done
	case_end
done
LIM=10

case_begin "sweep-plan --read and sweep-order at ulimit -n 10"
rc=0; at_limit "$BIN/sweep-plan" --read src > plan.out 2> plan.err || rc=$?
[ $rc = 0 ] || fail "sweep-plan --read: exit $rc, $(head -3 plan.err)"
files=$(find src -type f | wc -l)
[ "$(wc -l < plan.out)" = "$files" ] || fail "sweep-plan listed $(wc -l < plan.out) files of $files"
grep -q "files=$files " plan.err && ! grep -qi "error\|too many" plan.err || fail "sweep-plan --read: $(head -3 plan.err)"
find src -type f | sort > order.in
rc=0; at_limit "$BIN/sweep-order" < order.in > order.out 2> order.err || rc=$?
[ $rc = 0 ] && [ ! -s order.err ] || fail "sweep-order: exit $rc, $(head -3 order.err)"
diff order.in <(sort order.out) >&2 || fail "sweep-order lost or changed paths"
case_end

finish
