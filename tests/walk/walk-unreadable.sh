#!/bin/bash
# SPDX-License-Identifier: MIT
# Directories the walker may not read or search: each failure goes through
# on_error, the rest of the tree is still walked, and the walk exits 1 --
# the same entries and the same failing paths as find(1) run as the same
# user. As root, the walk runs as nobody (setpriv), since root reads anything.
. "$TESTS_DIR/walk/lib.sh"
walk_setup "$1"

as_user=()
if [ "$(id -u)" = 0 ]; then
	command -v setpriv >/dev/null || skip "root, and no setpriv to drop privileges"
	as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	"${as_user[@]}" true 2>/dev/null || skip "setpriv cannot drop privileges here"
	"${as_user[@]}" test -x "$W" || skip "nobody cannot run $W"
fi

r=$T/tree
mkdir -p "$r/open/sub" "$r/noperm/inner" "$r/noread/inner" "$r/nosearch/inner" "$r/deep/a/b/locked/x"
touch "$r/open/f" "$r/open/sub/g" "$r/noperm/inner/h" "$r/noread/f" "$r/nosearch/f1" "$r/nosearch/f2" "$r/deep/a/b/locked/x/y"
chmod 000 "$r/noperm"           # no read, no search: cannot be opened
chmod 311 "$r/noread"           # search but no read: cannot be listed
chmod 644 "$r/nosearch"         # read but no search: listed, but nothing in it can be stat'ed
chmod 000 "$r/deep/a/b/locked"
chmod -R a+rX "$r/open" "$r/deep/a/b" 2>/dev/null
chmod 000 "$r/deep/a/b/locked"
[ "$(id -u)" = 0 ] && chown -R 0:0 "$r"
"${as_user[@]}" test -r "$r/open" || skip "the scratch directory $T is not reachable as the test user"

for order in inode none name; do
	"${as_user[@]}" find "$r" -print0 >"$T/find" 2>"$T/find-err"
	"${as_user[@]}" "$W" -0 --order=$order "$r" >"$T/walk" 2>"$T/err"
	rc=$?
	[ $rc = 1 ] || { cat "$T/err" >&2; die "--order=$order: exit $rc, want 1"; }
	walk_check_backend "$T/err"
	# find lists what it need not stat (it goes by d_type); the walk stats everything and
	# hands out what it could not stat with stat_err: same entries, each once.
	grep ': stat: ' "$T/err" | sed 's/^walk-list: \(.*\): stat: .*/\1/' | tr '\n' '\0' >"$T/stat-failed"
	cat "$T/find" "$T/stat-failed" | sort -zu >"$T/find-plus"
	same_set "$T/find-plus" "$T/walk" || die "--order=$order: entries differ from find"
	# Every path find could not read, the walk reported too; it may add stat failures, nothing else.
	sed -n -e "s/^find: '\(.*\)': Permission denied$/\1/p" -e "s/^find: ‘\(.*\)’: Permission denied$/\1/p" \
		"$T/find-err" | sort >"$T/find-failed"
	sed -n 's/^walk-list: \(.*\): [a-z]*: Permission denied$/\1/p' "$T/err" | sort >"$T/walk-failed"
	missing=$(comm -23 "$T/find-failed" "$T/walk-failed")
	[ -z "$missing" ] || die "--order=$order: not reported: $missing"
	[ -s "$T/find-failed" ] || die "find saw no error: the test tree is wrong"
	for p in $(comm -13 "$T/find-failed" "$T/walk-failed"); do
		grep -qF "walk-list: $p: stat: Permission denied" "$T/err" || die "--order=$order: unexpected failure $p"
	done
	grep -q "noperm: opendir: Permission denied" "$T/err" || die "noperm not reported as opendir"
	grep -q "noread: opendir: Permission denied" "$T/err" || die "noread not reported"
	grep -q "nosearch/f1: stat: Permission denied" "$T/err" || die "nosearch/f1 not reported as stat"
	grep -qz "/nosearch/f2$" "$T/walk" || die "nosearch/f2 not handed out"
	grep -q "locked: opendir: Permission denied" "$T/err" || die "locked not reported"
	grep -qz "/open/sub/g$" "$T/walk" || die "the walk did not carry on past the errors"
done
ok "walk-unreadable"
finish
