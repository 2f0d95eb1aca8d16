#!/bin/bash
# SPDX-License-Identifier: MIT
# Symbolic links: not followed by default (links listed as links, as
# find -P); with --follow every directory link is entered, links back to an
# ancestor are reported as loops and not entered, links to links that loop
# are stat errors, dangling links are listed as themselves -- all as find -L
# does. --follow-roots follows a root that is a link, as find -H. A
# directory swapped for a symlink during the walk is not followed.
. "$TESTS_DIR/walk/lib.sh"
walk_setup "$1"

r=$T/loops
mkdir -p "$r/a/b/c" "$r/d/e"
touch "$r/a/f" "$r/a/b/g" "$r/d/e/h"
ln -s ../.. "$r/a/b/up"       # back to the root: loop
ln -s . "$r/a/self"           # itself: loop
ln -s ../d "$r/a/b/c/tod"     # another directory: entered again under a new name
ln -s nowhere "$r/a/dangling" # dangling: listed as the link
ln -s l2 "$r/d/l1"            # l1 -> l2 -> l1: ELOOP on stat
ln -s l1 "$r/d/l2"
ln -s "$r/a" "$T/rootlink"

# Not following: the set of find -P, and no error.
find "$r" -print0 >"$T/find-P"
"$W" -0 "$r" >"$T/walk-P" 2>"$T/err-P" || die "walk without --follow reported errors"
same_set "$T/find-P" "$T/walk-P" || die "without --follow"

for order in inode none name; do
	find -L "$r" -print0 >"$T/find-L" 2>"$T/find-err"
	# find leaves out what it cannot stat (ELOOP); the walk hands those out with stat_err.
	# (find quotes with '...' in the C locale, with ‘...’ in UTF-8 ones)
	sed -n -e "s/^find: '\(.*\)': Too many levels of symbolic links$/\1/p" \
		-e "s/^find: ‘\(.*\)’: Too many levels of symbolic links$/\1/p" "$T/find-err" | tr '\n' '\0' >>"$T/find-L"
	"$W" -0 --follow --order=$order "$r" >"$T/walk-L" 2>"$T/err-L"
	rc=$?
	[ $rc = 1 ] || { cat "$T/err-L" >&2; die "--follow --order=$order: exit $rc, want 1"; }
	same_set "$T/find-L" "$T/walk-L" || die "--follow --order=$order: not what find -L finds"
	want=$(grep -c "File system loop detected" "$T/find-err")
	got=$(grep -c ": loop: Too many levels of symbolic links$" "$T/err-L")
	[ "$want" = 2 ] && [ "$got" = "$want" ] || die "--follow --order=$order: $got loops reported, find reports $want"
	grep -q "/d/l1: stat: Too many levels of symbolic links" "$T/err-L" || die "l1 -> l2 -> l1 not reported"
done

# A root that is a symlink: listed as a link by default, followed with --follow-roots (find -H).
find "$T/rootlink" -print0 >"$T/find-root"
"$W" -0 "$T/rootlink" >"$T/walk-root" 2>/dev/null
same_set "$T/find-root" "$T/walk-root" || die "symlink root without following"
find -H "$T/rootlink" -print0 >"$T/find-H"
"$W" -0 --follow-roots "$T/rootlink" >"$T/walk-H" 2>/dev/null
same_set "$T/find-H" "$T/walk-H" || die "--follow-roots is not find -H"
# A directory replaced by a symlink to / after it was listed (the tree changing
# under the walk): reported, not followed, the rest walked.
mkdir -p "$r/x/victim/deeper" "$r/x/after"
touch "$r/x/victim/deeper/f" "$r/x/after/g"
for order in inode physical none name; do
	find "$r" -print0 | grep -zv "/x/victim/" >"$T/find-R"
	"$W" -0 --replace=victim --order=$order "$r" >"$T/walk-R" 2>"$T/err-R"
	rc=$?
	rm "$r/x/victim" && mv "$r/x/victim.moved" "$r/x/victim"
	[ $rc = 1 ] || { cat "$T/err-R" >&2; die "replaced directory, --order=$order: exit $rc, want 1"; }
	grep -q "/x/victim: opendir: " "$T/err-R" || die "replaced directory not reported (--order=$order)"
	same_set "$T/find-R" "$T/walk-R" || die "replaced directory, --order=$order: the walk followed it or lost entries"
done
ok "walk-loops"
finish
