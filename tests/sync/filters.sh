#!/bin/bash
# SPDX-License-Identifier: MIT
# rsync's filter rules beyond plain --exclude (issue 28), each beside rsync
# on the same trees: per-directory merge files (-F's .rsync-filter,
# dir-merge with its modifiers, -C's .cvsignore), the rule modifiers, the
# perishable rules --delete ignores inside a directory it removes, the
# receiver's own merge files, and the errors (same exit status as rsync).
# rsync's testsuite catches these in filter-depth, cvs-exclude,
# ki73-cvs-clear-list, merge, delete and filter-merge-symlink.
. "$TESTS_DIR/sync/lib.sh"

S=$W/src
mkdir -p "$S/d1/d2/d3" "$S/keep" "$S/CVS" "$S/e1/e2"
for f in secret.top d1/secret.mid d1/d2/secret.deep d1/d2/d3/secret.deeper a.c b.o core x~ keep/k.o \
	d1/top d1/d2/top e1/a.junk e1/e2/b.junk e1/e2/c.txt CVS/Entries; do
	printf '%s\n' "$f" >"$S/$f"
done
printf -- '- secret*\n- /top\n' >"$S/d1/d2/.rsync-filter"
printf -- '- top\n' >"$S/d1/.rsync-filter"
printf '*.junk\n' >"$S/e1/.cvsignore"
printf '!\n*.txt\n' >"$S/e1/e2/.cvsignore"

run_args "-F: .rsync-filter at depth, anchored at its directory" ../src/ f1 -a -i -F
[ -e "$W/s/f1/d1/secret.mid" ] && [ ! -e "$W/s/f1/d1/d2/secret.deep" ] || die "-F scope"
run_args "-FF: the filter files themselves left out" ../src/ f2 -a -i -FF
run_args "dir-merge n (no inheritance)" ../src/ f3 -a -i --filter=':n .rsync-filter'
run_args "dir-merge e (the file left out) and a long name" ../src/ f4 -a -i --filter='dir-merge,e .rsync-filter'
printf 'secret.top a.c\n' >"$S/.words"
run_args "dir-merge w- (words, all excludes)" ../src/ f5 -a -i --filter=':w- .words'
run_args "-C: the CVS list and each .cvsignore, with '!'" ../src/ f6 -a -i -C
run_args "-C on SRC without a slash" ../src f6b -a -i -C
run_args "exclude,! */ (directories only)" ../src/ f7 -a -i -f 'exclude,! */'
run_args "-! *.c (negated)" ../src/ f8 -a -i --filter='-! *.c' --filter='+ */' --filter='- *'
run_args "-/ (an absolute rule)" ../src/ f9 -a -i --filter="-/ $S/d1/top"
run_args "a merge file inside a per-directory one" ../src/ f10 -a -i --filter=': .mf'
printf -- '- b.o\n' >"$W/parent-rules"
printf -- '. %s\n' "$W/parent-rules" >"$S/.mf"
run_args "a merge file inside a per-directory one (read)" ../src/ f10 -a -i --filter=': .mf'
rm "$S/.mf"

# a per-directory file above the transfer: -F reads every parent's
printf -- '- core\n' >"$W/.rsync-filter"
run_args "-F reads the .rsync-filter of the directories above SRC" ../src/ f11 -a -i -F
rm "$W/.rsync-filter"

# ---- --delete with the receiver's rules ----
# both DESTs the same copy (the tree comparison includes the times)
mkdir -p "$W/r/del" "$W/s"
cp -a "$S/." "$W/r/del/"
mkdir -p "$W/r/del/gone/sub"
printf 'x\n' | tee "$W/r/del/gone/x.o" "$W/r/del/gone/sub/core" "$W/r/del/extra.o" "$W/r/del/extra" >/dev/null
printf 'P pro*\n' >"$W/r/del/.keep-rules"
printf 'x\n' | tee "$W/r/del/protected" "$W/r/del/plain" >/dev/null
cp -a "$W/r/del" "$W/s/del"
run_args "-C --delete: perishable rules do not keep a removed directory's contents" ../src/ del -a -i -C --delete-after \
	--filter=': .keep-rules'
[ -e "$W/s/del/protected" ] && [ -e "$W/s/del/extra.o" ] && [ ! -e "$W/s/del/gone" ] || die "-C --delete"
mkdir -p "$W/r/del2"
printf 'P foo\n- bar\n' >"$W/r/del2/filters"
touch "$W/r/del2/foo" "$W/r/del2/bar" "$W/r/del2/baz"
cp -a "$W/r/del2" "$W/s/del2"
COMPARE_OPTS="--no-root-time --no-times" run_args "the receiver's merge file: P protects, - does not (--delete-excluded)" ../src/ del2 -r --exclude=baz \
	--filter=': filters' --delete-excluded
[ -e "$W/s/del2/foo" ] && [ ! -e "$W/s/del2/bar" ] || die "receiver merge file"

# ---- errors: rsync's exit status ----
run_args "an invalid modifier" ../src/ e1 -a --filter='-Q x'
run_args "'!' with trailing characters" ../src/ e2 -a --filter='! x'
run_args "a merge file that is missing" ../src/ e3 -a --filter=". $W/no-such-file"
printf -- 'nonsense rule\n' >"$S/e1/.rsync-filter"
# (whether rsync made DEST before its sender met the file depends on its processes' timing: not compared)
rr=0; rsync -a -F "$S/" "$W/r/e4" >/dev/null 2>&1 || rr=$?
sr=0; "$SYNC" -a -F "$S/" "$W/s/e4" >/dev/null 2>"$W/s.err" || sr=$?
[ "$rr" = 1 ] && [ "$sr" = 1 ] || die "a bad rule in a per-directory file: rsync exit $rr, sweep-sync exit $sr"
grep -q '<rule from .*line 1>' "$W/s.err" || die "the rule's text was echoed: $(cat "$W/s.err")"
ok "a bad rule in a per-directory file stops the run (exit 1), the file and line named, not the rule"
rm "$S/e1/.rsync-filter"

# ---- xattr filter rules ('x'): which names -X copies, and which of DEST's it leaves alone ----
if command -v setfattr >/dev/null && setfattr -n user.probe -v 1 "$W" 2>/dev/null; then
	X=$W/xsrc
	mkdir -p "$X/d"
	printf 'a\n' >"$X/a"
	printf 'b\n' >"$X/d/b"
	setfattr -n user.keep -v 1 "$X/a"
	setfattr -n user.skip1 -v 2 "$X/a"
	setfattr -n user.skip2 -v x "$X/d"
	[ "$(id -u)" = 0 ] && setfattr -n trusted.t -v 3 "$X/d/b"
	touch -d '2001-01-01' "$X/a" "$X/d/b" "$X/d" "$X"
	for side in r s; do
		mkdir -p "$W/$side/xf/d"
		printf 'a\n' >"$W/$side/xf/a" && touch -d '2001-01-01' "$W/$side/xf/a"
		setfattr -n user.skip1 -v old "$W/$side/xf/a"  # excluded: stays as it is
		setfattr -n user.other -v gone "$W/$side/xf/a" # not excluded, not in the source: removed
	done
	run_args "-X with '-x user.skip*': excluded names neither copied nor removed" ../xsrc/ xf -aiX -f'-x user.skip*'
	run_args "-X with '+x user.skip1' before '-x user.*'" ../xsrc/ xf2 -aiX -f'+x user.skip1' -f'-x user.*'
	run_args "-X with '-x_system.*' '-x_security.*' (rsync's testsuite's)" ../xsrc/ xf3 -aiX -f-x_system.* -f-x_security.*
	run_args "-X, an xattr rule, --link-dest: equal xattrs link" ../xsrc/ xf4 -aiX -f'-x user.skip2' --link-dest=../xf3
	[ "$(stat -c %h "$W/s/xf4/d/b")" = "$(stat -c %h "$W/r/xf4/d/b")" ] || die "--link-dest -X: link counts differ from rsync's"
else
	skip_part "no user xattrs here: xattr filter rules"
fi

# ---- hostile merge files ----
mkfifo "$S/d1/d2/d3/.rsync-filter"
r=0; timeout 60 "$SYNC" -aF "$S/" "$W/s/h1" >/dev/null 2>&1 || r=$?
[ "$r" = 0 ] && [ -e "$W/s/h1/d1/d2/d3/.rsync-filter" ] || die "a FIFO as a merge file: exit $r"
ok "a FIFO named .rsync-filter is not read (no hang) and is copied as a FIFO"
rm "$S/d1/d2/d3/.rsync-filter"
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	printf 'canary\n' >"$W/outside"
	printf 'c\n' >"$S/d1/canary"
	ln -s "$W/outside" "$S/d1/.cvsignore" && chown -h nobody "$S/d1/.cvsignore"
	"$SYNC" -aC "$S/" "$W/s/h2" || die "-C over a planted symlink"
	[ -e "$W/s/h2/d1/canary" ] || die "a .cvsignore symlink of another user was followed"
	ok "a per-directory merge file that is another user's symlink is not followed"
else
	skip_part "planting another user's symlink needs root"
fi
finish
