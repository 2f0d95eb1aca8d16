#!/bin/bash
# SPDX-License-Identifier: MIT
# rsync's symlink options (issue 28), each beside rsync on the same trees:
# -L/--copy-links, -k/--copy-dirlinks, --copy-unsafe-links (rsync's
# lexical "unsafe": an absolute target, or one whose ".." climb above the
# top of the transfer), --safe-links (such links not made, and not kept as
# backups), and a dangling link under -L ("symlink has no referent", exit
# 23). rsync's testsuite catches these in links, unsafe-links, safe-links,
# safe-links-absolute-intree, safe-links-unsafe-def and ki72-safe-links-backup.
. "$TESTS_DIR/sync/lib.sh"

S=$W/src
mkdir -p "$S/safe/files" "$S/safe/links" "$S/safe/d1/d2/realdir" "$S/unsafe"
printf 'one\n' >"$S/safe/files/file1"
printf 'two\n' >"$S/safe/files/file2"
printf 'out\n' >"$S/unsafe/unsafefile"
printf 'in\n' >"$S/safe/d1/d2/realdir/inside"
ln -s ../files/file1 "$S/safe/links/file1"
ln -s ../../unsafe/unsafefile "$S/safe/links/unsafefile"
ln -s a/a/a/../../../unsafe2 "$S/safe/links/unsafe2"
ln -s "$S/safe/files/file2" "$S/safe/links/absolute"
ln -s realdir "$S/safe/d1/d2/dirlink"
ln -s ../../files "$S/safe/d1/d2/up-in-tree"
touch -h -d '2011-01-01' "$S"/safe/links/* "$S"/safe/d1/d2/dirlink "$S"/safe/d1/d2/up-in-tree

run_args "-a keeps every link" ../src/safe/ l0 -a -i
run_args "-L: every link followed, directories walked" ../src/safe/ l1 -a -i -L
run_args "-k: links to directories followed, the rest kept" ../src/safe/ l2 -a -i -k
run_args "--copy-unsafe-links" ../src/safe/ l3 -a -i --copy-unsafe-links
run_args "--copy-unsafe-links with the top one level down" ../src/safe/d1/ l4 -a -i --copy-unsafe-links
# rsync's generator prints these lines as it goes, before its receiver names the files (the order is
# its processes'): compared as sets
SENT='s/^sent .* bytes\/sec$/sent/; s/  speedup is .*$//'
OUT_ORDER=sort OUT_FILTER=$SENT run_args "--safe-links -v names what it ignores" ../src/safe/ l5 -a -v --safe-links
run_args "--safe-links -L: -L wins" ../src/safe/ l6 -a -i --safe-links -L
run_args "-L on SRC without a slash" ../src/safe l7 -a -i -L

# a dangling link: rsync says so and exits 23 (nothing is deleted after it)
mkdir -p "$W/dang"
printf 'x\n' >"$W/dang/f"
ln -s nowhere "$W/dang/broken"
mkdir -p "$W/r/l8" "$W/s/l8"
printf 'extra\n' | tee "$W/r/l8/extra" >"$W/s/l8/extra"
touch -d '2011-01-01' "$W/r/l8/extra" "$W/s/l8/extra"
run_args "-L over a dangling link: exit 23, no deletion" ../dang/ l8 -a -i -L --delete
grep -q 'symlink has no referent' "$W/s.err" || die "no rsync message: $(cat "$W/s.err")"

# --safe-links with -b: an unsafe symlink that is replaced is not kept as a backup, a safe one is
mkdir -p "$W/b-src" "$W/r/b1"
printf 'new\n' >"$W/b-src/escape"
printf 'new\n' >"$W/b-src/link"
ln -s ../../sensitive "$W/r/b1/escape"
ln -s link-target "$W/r/b1/link"
cp -a "$W/r/b1" "$W/s/b1"
OUT_ORDER=sort OUT_FILTER=$SENT run_args "--safe-links -b: no backup of an unsafe link" ../b-src/ b1 -a -v -b \
	--suffix=.bak --safe-links
[ ! -L "$W/s/b1/escape.bak" ] && [ -L "$W/s/b1/link.bak" ] || die "--safe-links backups"

# a link back to a directory above it: rsync follows it 40 levels deep until
# the kernel says ELOOP; sweep-sync stops at the loop. Both exit 23.
mkdir -p "$W/loop/a"
printf 'x\n' >"$W/loop/a/f"
ln -s .. "$W/loop/a/up"
r=0; "$SYNC" -rL "$W/loop/" "$W/s/loop" 2>"$W/loop.err" || r=$?
[ "$r" = 23 ] && [ -f "$W/s/loop/a/f" ] && [ ! -e "$W/s/loop/a/up" ] || die "-L loop: exit $r, $(cat "$W/loop.err")"
ok "-L: a symlink loop is an error (exit 23, as rsync's), not followed"

# over a remote shell they are refused by name (not yet done there), before the shell is started
for opt in -L -k --copy-unsafe-links --safe-links; do
	r=0; "$SYNC" -a "$opt" -e "touch $W/shell-ran" "$S/" host:dst 2>"$W/rem.err" || r=$?
	[ "$r" = 1 ] && grep -q 'does not support --[a-z-]* over a remote shell' "$W/rem.err" && [ ! -e "$W/shell-ran" ] ||
		die "$opt over a remote shell: exit $r, $(cat "$W/rem.err")"
done
ok "-L, -k, --copy-unsafe-links, --safe-links over a remote shell: refused by name, exit 1"
finish
