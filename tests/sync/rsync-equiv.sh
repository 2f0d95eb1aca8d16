#!/bin/bash
# SPDX-License-Identifier: MIT
# sweep-sync against rsync over a series of edits to a source tree:
#   rsync-equiv.sh [EXTRA_FLAGS]   (e.g. "", "-H", "-AX")
# After every edit both tools sync the source (-a --delete -i plus the extra
# flags) into destinations of their own; the trees must be identical and the
# itemized lines the same set (order differs: sweep-sync reports files as
# its physical sweep writes them).
. "$TESTS_DIR/sync/lib.sh"

EXTRA=${1:-}
FLAGS=(-a --delete -i)
[ -n "$EXTRA" ] && FLAGS+=("$EXTRA")

case $EXTRA in
*A* | *X*)
	touch "$W/probe"
	setfattr -n user.probe -v 1 "$W/probe" 2>/dev/null || skip "no user xattrs in $W"
	setfacl -m u:1:r "$W/probe" 2>/dev/null || skip "no ACLs in $W"
	rm -f "$W/probe"
	;;
esac
want_ax() { case $EXTRA in *A* | *X*) return 0 ;; esac; return 1; }
want_h() { case $EXTRA in *H*) return 0 ;; esac; return 1; }

S=$W/src
mkdir -p "$S"/{a/b/c,empty,docs,"sp ace",ünï}
printf 'hello\n' >"$S/f1"
printf '' >"$S/zero"
head -c 300000 /dev/urandom >"$S/a/big"
for i in $(seq 1 40); do printf 'file %s\n' "$i" >"$S/a/b/n$i"; done
printf 'deep\n' >"$S/a/b/c/deep"
printf 'x\n' >"$S/sp ace/with space"
printf 'u\n' >"$S/ünï/ü"
truncate -s 1M "$S/sparse" && printf 'tail' >>"$S/sparse"
ln -s f1 "$S/lnk"
ln -s missing "$S/dangling"
ln -s a/b "$S/dirlink"
ln "$S/f1" "$S/hl1"
ln "$S/a/b/n1" "$S/docs/n1-link"
mkfifo "$S/fifo"
chmod 0640 "$S/zero"
chmod 0750 "$S/docs"
chown 1:2 "$S/a/b/n2"
touch -d '2001-02-03 04:05:06.123456789' "$S/a/b/n3"
if want_ax; then
	setfattr -n user.color -v blue "$S/f1"
	setfattr -n user.dir -v yes "$S/a"
	setfacl -m u:1:rw "$S/a/b/n4"
	setfacl -d -m u:2:rx "$S/docs"
fi
run_both "initial copy" "${FLAGS[@]}"
run_both "no changes" "${FLAGS[@]}"
[ -s "$W/s.out" ] && die "an unchanged tree still itemized: $(cat "$W/s.out")"

# new files and directories
mkdir -p "$S/new/dir/deeper" "$S/a/newsub"
printf 'n\n' >"$S/new/file"
printf 'nn\n' >"$S/new/dir/deeper/f"
printf 'm\n' >"$S/a/b/zz-new"
run_both "new files and dirs" "${FLAGS[@]}"

# changed size
printf 'longer now\n' >>"$S/f1"
head -c 1000 /dev/urandom >"$S/a/b/n5"
run_both "changed size" "${FLAGS[@]}"

# mtime only
touch -d '2010-01-01 00:00:00.5' "$S/a/b/n6"
touch "$S/a/b/n7"
run_both "changed mtime only" "${FLAGS[@]}"

# same size and mtime, different contents: the quick check cannot see it...
ref=$(stat -c %y "$S/a/b/n8")
printf 'FILE 8\n' >"$S/a/b/n8"
touch -d "$ref" "$S/a/b/n8"
run_both "same size+mtime (no -c)" "${FLAGS[@]}"
cmp -s "$S/a/b/n8" "$W/s/dst/a/b/n8" && die "quick check should have missed the content change"
# ...-c does
run_both "same size+mtime with -c" "${FLAGS[@]}" -c
cmp "$S/a/b/n8" "$W/s/dst/a/b/n8" || die "-c did not transfer the changed contents"
grep -q '^>fc........ a/b/n8$' "$W/s.out" || die "-c: expected '>fc........ a/b/n8'"

# deletions
rm -rf "$S/a/b/c" "$S/a/b/n9" "$S/new/dir"
run_both "deletions" "${FLAGS[@]}"

# a file replaced by a directory and the reverse
rm "$S/a/b/n10" && mkdir "$S/a/b/n10" && printf 'in\n' >"$S/a/b/n10/inside"
rm -rf "$S/sp ace" && printf 'now a file\n' >"$S/sp ace"
rm "$S/lnk" && mkdir "$S/lnk"
run_both "file <-> directory" "${FLAGS[@]}"

# symlinks retargeted (and a symlink replaced by a file)
ln -sfn f1 "$S/dangling"
ln -sfn a "$S/dirlink"
rm "$S/zero" && ln -s a/big "$S/zero"
run_both "symlinks retargeted" "${FLAGS[@]}"

# hard links added
ln "$S/a/b/n11" "$S/a/b/n11-link"
ln "$S/a/big" "$S/new/big-link"
ln -f "$S/f1" "$S/a/b/n12"
run_both "hard links added" "${FLAGS[@]}"

# attributes only
chmod 0600 "$S/a/b/n13"
chown 3:4 "$S/a/b/n14"
chmod 0700 "$S/a/newsub"
if want_ax; then
	setfattr -n user.color -v red "$S/f1"
	setfattr -x user.dir "$S/a"
	setfacl -m u:3:r "$S/a/b/n15"
fi
run_both "attributes" "${FLAGS[@]}"

# dry run: both tools report the same and change nothing
printf 'dry\n' >"$S/dry-new"
rm "$S/a/b/n16"
python3 "$MANIFEST" "$W/s/dst" >"$W/before"
run_both "dry run" "${FLAGS[@]}" -n
python3 "$MANIFEST" "$W/s/dst" >"$W/after"
diff -u "$W/before" "$W/after" || die "dry run changed the destination"
grep -q '^>f+++++++++ dry-new$' "$W/s.out" || die "dry run did not report dry-new"
grep -q '^\*deleting   a/b/n16$' "$W/s.out" || die "dry run did not report the deletion"
run_both "after dry run" "${FLAGS[@]}"

# and the result is the source itself (hard links only with -H)
if want_h; then compare_trees "$S" "$W/s/dst"; else compare_trees "$S" "$W/s/dst" --no-links; fi
echo "PASS"

finish
