#!/bin/bash
# SPDX-License-Identifier: MIT
# rsync's options that shape the destination tree (issue 28): --mkpath,
# each beside rsync on the same trees: same exit status, same lines in the
# same order and the same tree.
. "$TESTS_DIR/sync/lib.sh"

S=$W/src
mkdir -p "$S/sub"
printf 'text\n' >"$S/text"
printf 'extra\n' >"$S/sub/extra"
touch -d '2001-01-01' "$S/text" "$S/sub/extra" "$S/sub" "$S"

# ---- --mkpath ----
run_args "without --mkpath a missing parent is an error" ../src/text to/a/b/new -ai
[ ! -e "$W/s/to" ] || die "without --mkpath something was made"
run_args "--mkpath, a file to a new name" ../src/text to/a/b/new -ai --mkpath
run_args "--mkpath, a file into DEST/" ../src/text to/c/d/ -ai --mkpath
run_args "--mkpath, a tree into DEST" ../src/ to/e/f -ai --mkpath
run_args "--mkpath, a tree into DEST/, one level missing" ../src/ to/e/g/ -ai --mkpath
run_args "--mkpath, nothing missing" ../src/ to/e/f -ai --mkpath
run_args "--mkpath, a name with no directory" ../src/text to_text -ai --mkpath
run_args "--mkpath -n, a file" ../src/text to/n/m/new -ai --mkpath -n
run_args "--mkpath -n, a tree" ../src/ to/n/m -ai --mkpath -n
[ ! -e "$W/s/to/n" ] || die "--mkpath -n made something"
OUT_FILTER='s/^sent .* bytes\/sec$/sent/; s/  speedup is .*$//'
run_args "--mkpath -v" ../src/ to/v/w -rtv --mkpath
OUT_FILTER=
run_args "--mkpath --no-mkpath" ../src/text to/x/y/new -ai --mkpath --no-mkpath
# a file on the way: rsync's mkdir error, exit 11, nothing made
for side in r s; do mkdir -p "$W/$side/nd" && : >"$W/$side/nd/file"; done
rc=0; (cd "$W/s" && "$SYNC" -ai --mkpath ../src/ nd/file/x/y) >/dev/null 2>"$W/s.err" || rc=$?
[ "$rc" = 11 ] && grep -q "mkdir .*nd/file/x/y.* failed" "$W/s.err" || die "--mkpath through a file: exit $rc: $(cat "$W/s.err")"
ok "--mkpath through a file: mkdir failed, exit 11"
# a symlink on the way that an untrusted user owns is not followed (as DEST's own are not)
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	mkdir -p "$W/s/elsewhere"
	ln -s "$W/s/elsewhere" "$W/s/trap" && chown -h nobody "$W/s/trap"
	rc=0; (cd "$W/s" && "$SYNC" -a --mkpath ../src/ trap/x/y) >/dev/null 2>"$W/s.err" || rc=$?
	[ "$rc" != 0 ] && [ -z "$(ls -A "$W/s/elsewhere")" ] || die "--mkpath followed an untrusted symlink: exit $rc"
	grep -q "untrusted user" "$W/s.err" || die "--mkpath untrusted symlink: $(cat "$W/s.err")"
	ok "--mkpath does not follow a symlink an untrusted user owns: exit $rc"
else
	skip_part "not root: the untrusted symlink case"
fi

# ---- -m, --prune-empty-dirs ----
M=$W/msrc
mkdir -p "$M/empty/e1/e2" "$M/full/d1/d2" "$M/mixed/sub" "$M/onlylogs/sub"
printf 'data\n' >"$M/full/d1/d2/file"
printf 'k\n' >"$M/mixed/sub/keep.txt"
printf 'd\n' >"$M/mixed/sub/drop.log"
printf 'a\n' >"$M/onlylogs/sub/a.log"
ln -s nowhere "$M/onlylogs/link" # a symlink is content: its chain stays
mkdir -p "$M/lone/x"
run_args "-m prunes empty chains" ../msrc/ m1 -ai -m
[ ! -e "$W/s/m1/empty" ] && [ -e "$W/s/m1/full/d1/d2/file" ] || die "-m: empty chain kept or full one lost"
run_args "-m prunes chains a filter emptied" ../msrc/ m2 -ai -m --exclude='*.log'
[ -L "$W/s/m2/onlylogs/link" ] && [ ! -e "$W/s/m2/onlylogs/sub" ] || die "-m with --exclude"
run_args "--prune-empty-dirs --no-m keeps them" ../msrc/ m3 -ai --prune-empty-dirs --no-m
mkdir -p "$W/r/m4/empty/e1" "$W/r/m4/lone/x"
printf 'x\n' >"$W/r/m4/lone/x/old"
rm -rf "$W/s/m4" && cp -a "$W/r/m4" "$W/s/m4"
run_args "-m leaves the destination's own directories" ../msrc/ m4 -ai -m
run_args "-m --delete removes what was pruned" ../msrc/ m4 -ai -m --delete
[ ! -e "$W/s/m4/lone" ] || die "-m --delete kept a pruned directory"
run_args "-m, an empty operand without a slash" ../msrc/empty m5/ -ai -m
run_args "-m, an empty operand's contents to a new DEST" ../msrc/empty/ m6 -ai -m
run_args "-m -n" ../msrc/ m7 -ai -m -n

# ---- --delay-updates: written into DIR/.~tmp~, put in place at the end ----
mkdir -p "$W/dsrc/a/b"
for f in top a/one a/b/two a/b/three; do printf '%s\n' "$f" >"$W/dsrc/$f"; done
ln "$W/dsrc/a/b/two" "$W/dsrc/a/b/two-link"
touch -d '2001-01-01' "$W/dsrc"/a/b/* "$W/dsrc"/a/one "$W/dsrc/top"
run_args "--delay-updates, a new tree" ../dsrc/ du/ -ai --delay-updates
for side in r s; do rm "$W/$side/du/a/b/two-link" && ln "$W/$side/du/a/b/two" "$W/$side/du/a/b/two-link"; done
# updates, with a stale file of an earlier run in a .~tmp~ (overwritten, then gone) and another one that stays
for f in top a/b/two; do printf 'changed %s\n' "$f" >>"$W/dsrc/$f"; done
for side in r s; do
	mkdir -p "$W/$side/du/a/b/.~tmp~" "$W/$side/du/a/.~tmp~"
	printf 'stale\n' >"$W/$side/du/a/b/.~tmp~/two"
	printf 'stale\n' >"$W/$side/du/a/.~tmp~/other"
	touch -d '2001-01-01' "$W/$side/du/a/.~tmp~/other" "$W/$side/du/a/.~tmp~"
done
run_args "--delay-updates, updates over stale files" ../dsrc/ du/ -aiH --delay-updates
[ ! -e "$W/s/du/a/b/.~tmp~" ] && [ -f "$W/s/du/a/.~tmp~/other" ] || die "--delay-updates: .~tmp~ left or removed wrongly"
[ "$(stat -c %i "$W/s/du/a/b/two")" = "$(stat -c %i "$W/s/du/a/b/two-link")" ] || die "--delay-updates -H: not linked"
ok "--delay-updates: the used .~tmp~ removed, one holding another file kept, hard links intact"
run_args "--delay-updates --delete: .~tmp~ is not deleted" ../dsrc/ du/ -ai --delay-updates --delete
# a .~tmp~ that is a symlink is never written through
mkdir -p "$W/s/dl/a" "$W/outside"
ln -s "$W/outside" "$W/s/dl/a/.~tmp~"
rc=0; "$SYNC" -a --delay-updates "$W/dsrc/" "$W/s/dl/" >/dev/null 2>"$W/s.err" || rc=$?
[ "$rc" = 23 ] && [ -z "$(ls -A "$W/outside")" ] && [ ! -e "$W/s/dl/a/one" ] && [ -f "$W/s/dl/top" ] ||
	die "--delay-updates through a symlinked .~tmp~: exit $rc, outside: $(ls -A "$W/outside"): $(cat "$W/s.err")"
ok "--delay-updates: a symlink at .~tmp~ is an error for that directory's files, nothing written through"

finish
