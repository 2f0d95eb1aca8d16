#!/bin/bash
# SPDX-License-Identifier: MIT
# cp's semantics, case by case: GNU cp and sweep-cp run with the same
# arguments in two copies of one fixture; the resulting trees, stdout (-v),
# stderr (program name swapped) and exit status must be the same.
. "$TESTS_DIR/cp/lib.sh"

fixture() {
	local d=$1
	mkdir -p "$d/src/sub/deeper" "$d/existdir/src" "$d/dir2" "$d/emptydir"
	printf 'a\n' >"$d/a"
	printf 'b\n' >"$d/b"
	printf 'file\n' >"$d/src/f"
	printf 'g\n' >"$d/src/sub/g"
	printf 'h\n' >"$d/src/sub/deeper/h"
	printf 'stale\n' >"$d/existdir/src/f"
	printf 'old\n' >"$d/old" && touch -d '2000-01-01' "$d/old"
	printf 'new\n' >"$d/new" && touch -d '2020-01-01' "$d/new"
	printf 'older\n' >"$d/existdir/new" && touch -d '2010-01-01' "$d/existdir/new"
	printf 'newer\n' >"$d/existdir/old" && touch -d '2010-01-01' "$d/existdir/old"
	printf 'keep me\n' >"$d/existing"
	ln -s a "$d/link-a"
	ln -s src "$d/link-src"
	ln -s b "$d/link-b"
	ln -s nowhere "$d/dangling"
	ln -s nowhere "$d/src/sub/dangling-in" # -rL: "cannot stat" inside the tree
	ln "$d/a" "$d/a-hard"
}

# Type, mode, size, link count, symlink target and contents of every entry
# (find and md5sum: many small cases, so no Python start-up per case).
quick_tree() {
	(cd "$1" && find . -printf '%p %y %m %s %n %l\n' | sort &&
		find . -type f -exec md5sum {} + | sort -k2)
}

run_in() { # run_in DIR PROGRAM ARGS... -> DIR.out DIR.err DIR.rc
	local dir=$1; shift
	(cd "$dir" && "$@") >"$dir.out" 2>"$dir.err"
	echo $? >"$dir.rc"
	sort -o "$dir.out" "$dir.out"
}

same_as_cp() {
	local g="$CP_TMP/gnu" s="$CP_TMP/sweep"
	rm -rf "$g" "$s"
	mkdir "$g" "$s"
	fixture "$g"
	fixture "$s"
	run_in "$g" cp "$@"
	run_in "$s" "$SWEEP_CP" "$@"
	sed -i "s/^cp: /sweep-cp: /; s/^Try 'cp --help'/Try 'sweep-cp --help'/" "$g.err"
	quick_tree "$g" >"$g.tree"
	quick_tree "$s" >"$s.tree"
	local bad=
	if [ -n "${REFUSED:-}" ]; then
		# GNU cp reports the error, then still copies once; sweep-cp copies nothing.
		cp "$CP_TMP/pristine.tree" "$g.tree"
	fi
	cmp -s "$g.tree" "$s.tree" || bad="$bad tree"
	cmp -s "$g.out" "$s.out" || bad="$bad stdout"
	cmp -s "$g.err" "$s.err" || bad="$bad stderr"
	cmp -s "$g.rc" "$s.rc" || bad="$bad exit($(cat "$g.rc") vs $(cat "$s.rc"))"
	if [ -z "$bad" ]; then
		ok "cp $* (exit $(cat "$g.rc"))"
	else
		fail "cp $*:$bad"
		diff "$g.tree" "$s.tree" | head -10
		diff "$g.out" "$s.out" | head -10
		diff "$g.err" "$s.err" | head -10
	fi
}

mkdir "$CP_TMP/pristine" && fixture "$CP_TMP/pristine"
quick_tree "$CP_TMP/pristine" >"$CP_TMP/pristine.tree"

# destination exists or not; into a directory; trailing slashes
same_as_cp -r src newdir
same_as_cp -r src existdir
same_as_cp -r src/ newdir/
same_as_cp -r src/ existdir/
same_as_cp -r src existdir/
same_as_cp a newname
same_as_cp a existing
same_as_cp a dir2
same_as_cp a dir2/
same_as_cp a nonexist/
same_as_cp a b dir2
same_as_cp -r a src b dir2
# errors
same_as_cp a b existing
same_as_cp a b missing
same_as_cp nope dir2
same_as_cp a nope dir2
same_as_cp src dir2
same_as_cp a a
# into itself: same message and exit status as cp, and nothing copied at all
REFUSED=1 same_as_cp -r src src
REFUSED=1 same_as_cp -r src src/sub
REFUSED=1 same_as_cp -r src src/sub/new
REFUSED=1 same_as_cp -r . dir2
REFUSED=1 same_as_cp -r src/sub/.. src/sub/deeper/x
same_as_cp -rT src existing
same_as_cp -T a dir2
same_as_cp -T a emptydir
same_as_cp a
same_as_cp
# -n, -u
same_as_cp -n a existing
same_as_cp -rn src existdir
same_as_cp -u old existdir
same_as_cp -u new existdir
same_as_cp -uv old new existdir
# -t, -T
same_as_cp -t dir2 a b
same_as_cp -rt dir2 src a
same_as_cp -t missing a
same_as_cp -t a b
same_as_cp -T a existing
same_as_cp -rT src existdir
same_as_cp -rT src emptydir
# -v
same_as_cp -v a b dir2
same_as_cp -rv src newdir
same_as_cp -av src existdir
# symlinks: followed without -r, kept with -r/-a, followed with -L, roots only with -H
same_as_cp link-a copy
same_as_cp -r link-a copy
same_as_cp -r link-src copy
same_as_cp -rL link-src copy
same_as_cp -rH link-src copy
same_as_cp -r link-src/ copy
same_as_cp -P link-a copy
same_as_cp -d link-a copy
# a symlink at the destination: a file is written through it, a link replaces it
# (a has a second name: cp -a replaces the link then; cp rewrites a in place where
# sweep-cp replaces it, which is only visible through a-hard: see link-b for that)
same_as_cp a link-b
same_as_cp -a a link-b
same_as_cp -a b link-a
same_as_cp -u old link-b
same_as_cp b dangling
same_as_cp -a link-a link-b
# --remove-destination: the name is replaced, never written through
same_as_cp --remove-destination a link-b
same_as_cp --remove-destination b dangling
same_as_cp --remove-destination a existing
same_as_cp -a --remove-destination a link-b
same_as_cp -r --remove-destination src existdir
same_as_cp --remove-destination a a-hard
same_as_cp --remove-destination a a
same_as_cp -n --remove-destination a existing
same_as_cp --remove-destination a dir2/
# hard links: kept with -a/-d, separate copies with -r
same_as_cp -a a a-hard dir2
same_as_cp -r a a-hard dir2
same_as_cp --preserve=links a a-hard dir2
# without -r, a FIFO or a device is read and its data copied (-r recreates it); -L on a dangling link
same_as_cp /dev/null copy
same_as_cp -p /dev/null copy
same_as_cp /dev/null existing
same_as_cp -r /dev/null copy
same_as_cp -rL dangling copy
same_as_cp -L dangling copy
same_as_cp -rL src copy # no dangling link inside: as cp
mkfifo "$CP_TMP/fifo"
(
	cd "$CP_TMP" || exit 1
	for tool in cp "$SWEEP_CP"; do
		rm -f "from-stdin.$(basename "$tool")" "from-pipe.$(basename "$tool")"
		printf 'piped\n' | "$tool" /dev/stdin "from-stdin.$(basename "$tool")"
		"$tool" <(seq 1 1000) "from-pipe.$(basename "$tool")"
	done
)
check "/dev/stdin without -r: its data copied, as cp" cmp -s "$CP_TMP/from-stdin.cp" "$CP_TMP/from-stdin.sweep-cp"
check "<(cmd) without -r: the pipe's data copied, as cp" cmp -s "$CP_TMP/from-pipe.cp" "$CP_TMP/from-pipe.sweep-cp"
check "<(cmd): a regular file" test -f "$CP_TMP/from-pipe.sweep-cp" -a -s "$CP_TMP/from-pipe.sweep-cp"
(printf 'through the fifo\n' >"$CP_TMP/fifo") &
writer=$!
check "a FIFO without -r: exits 0" "$SWEEP_CP" "$CP_TMP/fifo" "$CP_TMP/fifo-copy"
wait $writer
check "a FIFO without -r: its data copied" [ "$(cat "$CP_TMP/fifo-copy")" = "through the fifo" ]

finish
