#!/bin/bash
# SPDX-License-Identifier: MIT
# rsync's everyday options (issue 28), each beside rsync on the same trees:
# same exit status, same lines in the same order (rsync's name order, the
# same in every run) and the same tree.
. "$TESTS_DIR/sync/lib.sh"

S=$W/src
mkdir -p "$S/sub/deep" "$S/big" "$S/dir2"
for f in a b sub/c sub/deep/d dir2/e; do printf '%s\n' "$f" >"$S/$f"; done
head -c 100000 /dev/zero >"$S/big/100k"
head -c 5000 /dev/zero >"$S/big/5k"
ln -s a "$S/lnk"
touch -d '2010-01-01 00:00:00' "$S"/a "$S"/b "$S"/sub/c
# refresh: make DEST (both sides) a fresh copy of $S
fresh() { rm -rf "$W/r/$1" "$W/s/$1"; mkdir -p "$W/r" "$W/s"; cp -a "$S" "$W/r/$1"; cp -a "$S" "$W/s/$1"; }

# ---- the order of the lines: rsync's, and the same in every run ----
run_args "-i in name order" ../src/ o1 -a -i
for k in 1 2 3; do
	rm -rf "$W/s/o2"
	(cd "$W/s" && "$SYNC" -ai ../src/ o2) >"$W/run$k.out"
done
cmp -s "$W/run1.out" "$W/run2.out" && cmp -s "$W/run1.out" "$W/run3.out" || die "two identical runs printed differently"
ok "three identical runs print the same lines"
OUT_FILTER='s/^sent .* bytes\/sec$/sent/; s/  speedup is .*$//'
run_args "-v in name order" ../src/ o3 -rtv
run_args "-tv of a changed tree" ../src/ o3 -rtv
touch -d '2001-01-01' "$W/r/o3/sub" "$W/s/o3/sub"
printf 'more\n' >>"$S/sub/deep/d"
run_args "-tv lists a directory where rsync does" ../src/ o3 -rtv
OUT_FILTER=

# ---- -u, --size-only, --modify-window ----
fresh u1
printf 'newer in DEST\n' | tee "$W/r/u1/a" >"$W/s/u1/a"
touch -d '2030-01-01' "$W/r/u1/a" "$W/s/u1/a"
printf 'older in DEST\n' | tee "$W/r/u1/b" >"$W/s/u1/b"
touch -d '2000-01-01' "$W/r/u1/b" "$W/s/u1/b"
run_args "-u keeps what is newer in DEST" ../src/ u1 -a -i -u
[ "$(cat "$W/s/u1/a")" = "newer in DEST" ] || die "-u replaced a newer file"
fresh so
printf 'a\n' >"$W/r/so/b" && cp -a "$W/r/so/b" "$W/s/so/b" # same size, other time and data
run_args "--size-only" ../src/ so -a -i --size-only
fresh mw
touch -d '2010-01-01 00:00:01' "$W/r/mw/a" "$W/s/mw/a"
run_args "--modify-window=2" ../src/ mw -a -i --modify-window=2
run_args "--modify-window=0 (whole seconds)" ../src/ mw -a -i --modify-window=0

# ---- --max-size, --min-size (rsync's SIZE syntax) ----
run_args "--max-size=10k" ../src/ ms1 -a -i --max-size=10k
run_args "--min-size=5000" ../src/ ms2 -a -i --min-size=5000
run_args "--max-size=4.9KB (powers of 1000)" ../src/ ms3 -a -i --max-size=4.9KB
run_args "--max-size=5000-1" ../src/ ms4 -a -i --max-size=5000-1
run_args "--max-size=x is invalid" ../src/ ms5 -a --max-size=x
grep -q -- '--max-size=x is invalid' "$W/s.err" || die "no rsync-like message: $(cat "$W/s.err")"

# ---- --existing, --ignore-existing ----
fresh ex1; rm "$W/r/ex1/b" "$W/s/ex1/b"; rm -r "$W/r/ex1/sub/deep" "$W/s/ex1/sub/deep"
printf 'changed\n' >>"$S/a"
run_args "--existing" ../src/ ex1 -a -i --existing
run_args "--ignore-existing" ../src/ ex1 -a -i --ignore-existing
run_args "--existing --info=skip names what it skips" ../src/ ex2 -a --existing --info=skip

# ---- deletions ----
extra() { for f in "$@"; do mkdir -p "$(dirname "$W/r/$f")" "$(dirname "$W/s/$f")"; printf 'x\n' >"$W/r/$f"; cp -a "$W/r/$f" "$W/s/$f"; done; }
fresh d1; extra d1/zz d1/sub/yy d1/gone/g1 d1/gone/g2 d1/keep.o
run_args "--delete-after: deletions at the end, rsync's order" ../src/ d1 -a -i --delete-after --exclude='*.o'
[ -e "$W/s/d1/keep.o" ] || die "--delete removed an excluded file"
fresh d2; extra d2/zz d2/keep.o d2/sub/x.o
run_args "--delete-excluded" ../src/ d2 -a -i --delete-after --delete-excluded --exclude='*.o'
[ ! -e "$W/s/d2/keep.o" ] || die "--delete-excluded kept an excluded file"
fresh d3; extra d3/z1 d3/z2 d3/z3 d3/sub/z4
run_args "--max-delete=2: exit 25" ../src/ d3 -a -i --delete-after --max-delete=2
grep -q 'Deletions stopped due to --max-delete limit (2 skipped)' "$W/s.err" || die "$(cat "$W/s.err")"
fresh d4; extra d4/z1
run_args "--max-delete=0: nothing deleted, exit 25" ../src/ d4 -a -i --delete-after --max-delete=0
fresh d5; extra d5/z1 d5/sub/z2
run_args "--delete-before" ../src/ d5 -a -i --delete-before
run_args "--delete without -r or -d" ../src/ d6 -lpt --delete
fresh d7; extra d7/p.keep d7/z
run_args "--filter='P *.keep' protects from --delete" ../src/ d7 -a -i --delete-after --filter='P *.keep'
[ -e "$W/s/d7/p.keep" ] || die "a protected file was deleted"

# ---- filter rules ----
run_args "--filter='- *.o' and '+ '" ../src/ f1 -a -i --filter='+ sub/' --filter='- /sub/deep' --filter='exclude dir2'
run_args "--filter='H'/'S' (hide, show)" ../src/ f2 -a -i --filter='S big/5k' --filter='H big/*'
printf -- '- a\n# comment\n+ b\n- b\n' >"$W/rules"
run_args "--filter='. FILE' (merge)" ../src/ f3 -a -i --filter=". $W/rules"
run_args "--filter='!' clears" ../src/ f4 -a -i --filter='- a' --filter='!' --filter='- b'
run_args "an unknown filter rule" ../src/ f5 -a --filter='nonsense x'

# ---- -d, -q, --stats, -h, -z, --numeric-ids, -W ----
run_args "-d: directories without their contents" ../src/ dd1 -d -lpt -i
run_args "-d SRC without a slash" ../src dd2 -d -lpt -i
[ -d "$W/s/dd2" ] && [ ! -e "$W/s/dd2/src" ] || die "-d: one directory to a new name did not take the name"
mkdir -p "$W/empty"
run_args "-r: an empty directory to a new name" ../empty dd3 -a -i
run_args "-q: nothing on stdout" ../src/ q1 -a -q -i
[ -s "$W/s.out" ] && die "-q printed: $(cat "$W/s.out")"
OUT_FILTER='s/^\(File list generation time\|Total bytes sent\|Total bytes received\|File list size\): .*/\1/; s/^sent .* bytes\/sec$/sent/; s/  speedup is .*$//'
run_args "--stats" ../src/ st1 -a --stats
run_args "--stats again, nothing to do" ../src/ st1 -a --stats
run_args "--stats -h" ../src/ st2 -a --stats -h
OUT_FILTER=
run_args "-z, --compress-level, --numeric-ids, -W: accepted" ../src/ z1 -a -i -z --compress-level=3 --numeric-ids -W

# ---- --remove-source-files ----
cp -a "$S" "$W/rs-r" && cp -a "$S" "$W/rs-s"
rr=0; rsync -a -i --remove-source-files "$W/rs-r/" "$W/r/rs" >"$W/r.out" || rr=$?
sr=0; "$SYNC" -a -i --remove-source-files "$W/rs-s/" "$W/s/rs" >"$W/s.out" || sr=$?
[ "$rr" = "$sr" ] || die "--remove-source-files: exit $sr, rsync $rr"
diff <(cd "$W/rs-r" && find . | sort) <(cd "$W/rs-s" && find . | sort) || die "--remove-source-files left a different source"
compare_trees "$W/r/rs" "$W/s/rs" --no-root-time --no-times
ok "--remove-source-files: the same files left in the source as rsync leaves"

# ---- without -p: the destination's default ACL, no set-id bits from the source ----
P=$W/perm-src
mkdir -p "$P/sgid" "$P/plain"
printf 'f\n' >"$P/f" && chmod 640 "$P/f"
printf 'x\n' >"$P/x" && chmod 4755 "$P/x"
chmod 2775 "$P/sgid"
mkdir -p "$W/r/acl" "$W/s/acl" "$W/r/sg" "$W/s/sg"
chmod 2755 "$W/r/sg" "$W/s/sg"
if command -v setfacl >/dev/null && setfacl -d -m u::rwx,g::rwx,o::rwx "$W/r/acl" "$W/s/acl" 2>/dev/null; then
	COMPARE_OPTS="--no-root-time --no-times" run_args "-r without -p: the default ACL decides" ../perm-src/ acl -r -i
else
	skip_part "no default ACLs here"
fi
COMPARE_OPTS="--no-root-time --no-times" run_args "-rt without -p: a set-group-ID DEST" ../perm-src/ sg -rt -i
COMPARE_OPTS="--no-root-time --no-times" run_args "-rt without -p, umask 077" ../perm-src/ um -rt -i
(umask 077; cd "$W/r" && rsync -rt ../perm-src/ um2 && cd "$W/s" && "$SYNC" -rt ../perm-src/ um2) || die "umask 077 runs"
compare_trees "$W/r/um2" "$W/s/um2" --no-root-time --no-times
ok "without -p under umask 077: the same modes as rsync"

# ---- -H links devices, FIFOs and symlinks too (rsync's devices test) ----
H=$W/hl-src
mkdir -p "$H"
mkfifo "$H/f1" && ln "$H/f1" "$H/f2"
ln -s t "$H/l1" && ln "$H/l1" "$H/l2"
if is_root; then mknod "$H/b1" b 1 1 && ln "$H/b1" "$H/b2"; fi
run_args "-H: non-regular hard links" ../hl-src/ hl1 -aiH
run_args "-H: non-regular hard links, again" ../hl-src/ hl1 -aiH

# ---- a DEST inode with two names, -vv's "is uptodate", -ii's kept hard links (rsync's itemize test) ----
H2=$W/hl2-src
mkdir -p "$H2"
printf 'one\n' >"$H2/f1" && ln "$H2/f1" "$H2/f2" && printf 'x\n' >"$H2/g"
touch -d '2001-01-01' "$H2/f1" "$H2/g"
mkdir -p "$W/r" && rsync -aH "$H2/" "$W/r/h2" && cp -a "$W/r/h2" "$W/s/h2"
touch -d '2005-01-01' "$H2/f1"
run_args "-i: the second name of a DEST inode is looked at again" ../hl2-src/ h2 -rlpt -i
OUT_FILTER='s/^sent .* bytes\/sec$/sent/; s/  speedup is .*$//'
# (where rsync puts the "=>" line of a link made again depends on its processes: compared as sets)
OUT_ORDER=sort run_args "-vv: NAME is uptodate" ../hl2-src/ h2 -aH -vv
OUT_FILTER=
run_args "-ii: hard links already in place" ../hl2-src/ h2 -aH -ii

# ---- --force: a non-empty directory in the way of a file, deep down (rsync's update test) ----
F=$W/force-src
mkdir -p "$F/d1/d2/d3"
printf 'now a file\n' >"$F/d1/d2/d3/f3"
touch -d '2012-01-01' "$F/d1/d2/d3/f3" "$F/d1/d2/d3" "$F/d1/d2" "$F/d1" "$F"
# blocker SIDE: a directory with something in it where SRC has the file (the directories' times left as SRC's:
# made now, the second could turn between SRC, r's and s's, and only one side itemize them)
blocker() {
	rm -rf "$W/$1/fo/d1/d2/d3/f3"
	mkdir -p "$W/$1/fo/d1/d2/d3/f3/sub" && printf 'blocker\n' >"$W/$1/fo/d1/d2/d3/f3/sub/occupant"
	touch -d '2013-01-01' "$W/$1/fo/d1/d2/d3/f3/sub/occupant" "$W/$1/fo/d1/d2/d3/f3/sub" "$W/$1/fo/d1/d2/d3/f3"
	touch -d '2012-01-01' "$W/$1/fo/d1/d2/d3" "$W/$1/fo/d1/d2" "$W/$1/fo/d1" "$W/$1/fo"
}
blocker r && blocker s
run_args "a non-empty directory in the way, without --force: exit 23, kept" ../force-src/ fo -a -i
[ -f "$W/s/fo/d1/d2/d3/f3/sub/occupant" ] || die "the directory in the way went without --force"
run_args "--force: it goes, its contents itemized as deleted" ../force-src/ fo -a -i --force
[ -f "$W/s/fo/d1/d2/d3/f3" ] || die "--force did not make way"
blocker r && blocker s
run_args "--force --no-force: kept again" ../force-src/ fo -a -i --force --no-force
[ -f "$W/s/fo/d1/d2/d3/f3/sub/occupant" ] || die "--no-force did not undo --force"

# ---- -S: zero-filled blocks become holes (rsync's sparse test) ----
mkdir -p "$W/sp-src/d1/d2"
printf 'head' >"$W/sp-src/d1/d2/zeros"
dd if=/dev/zero of="$W/sp-src/d1/d2/zeros" bs=64k seek=1 count=16 conv=notrunc status=none
printf 'tail' >>"$W/sp-src/d1/d2/zeros"
touch -d '2012-01-01' "$W/sp-src/d1/d2/zeros"
run_args "-S" ../sp-src/ sp1 -a -i -S
[ "$(stat -c %b "$W/s/sp1/d1/d2/zeros")" -lt "$(stat -c %b "$W/sp-src/d1/d2/zeros")" ] ||
	die "-S wrote the zeros: $(stat -c '%b blocks, %s bytes' "$W/s/sp1/d1/d2/zeros")"
run_args "-S --no-sparse" ../sp-src/ sp2 -a -i -S --no-sparse

# ---- -I: a change behind the same size and time is copied (rsync's compare test) ----
mkdir -p "$W/it-src/d1/d2"
printf 'aaaa\n' >"$W/it-src/d1/d2/f" && printf 'bb\n' >"$W/it-src/g"
touch -d '2010-01-01' "$W/it-src/d1/d2/f" "$W/it-src/g"
for side in r s; do
	mkdir -p "$W/$side" && rsync -a "$W/it-src/" "$W/$side/it"
	printf 'cccc\n' >"$W/$side/it/d1/d2/f" && touch -d '2010-01-01' "$W/$side/it/d1/d2/f"
done
run_args "without -I the stealth change stays" ../it-src/ it -a -i
run_args "-I -n" ../it-src/ it -a -i -I -n
run_args "-I" ../it-src/ it -a -i -I
[ "$(cat "$W/s/it/d1/d2/f")" = aaaa ] || die "-I left the stealth change"
run_args "-I -c: the checksums decide" ../it-src/ it -a -i -I -c
run_args "-I --size-only: the size decides" ../it-src/ it -a -i -I --size-only

# ---- options sweep-sync refuses by name ----
for opt in --inplace --append --fuzzy --block-size=1024 --partial-dir=x --temp-dir=x --bwlimit=1 --no-whole-file \
	--write-batch=x --read-batch=x --keep-dirlinks; do
	rc=0; "$SYNC" -a "$opt" "$S/" "$W/never" >/dev/null 2>"$W/s.err" || rc=$?
	[ "$rc" = 1 ] && grep -q "does not support ${opt%%=*}\$" "$W/s.err" ||
		die "$opt: exit $rc: $(cat "$W/s.err")"
	[ ! -e "$W/never" ] || die "$opt: something was made"
done
ok "rsync options sweep-sync cannot honour are refused by name, exit 1"

# ---- --max-alloc, --stop-at, --stop-after: rsync's checks and messages, exit 1 for a bad value ----
for spec in "--max-alloc=0|max-alloc must be greater than zero" "--max-alloc=1k|--max-alloc=1k is too small" \
	"--max-alloc=1x|--max-alloc=1x is invalid" "--stop-at=2000-01-01T00:00|--stop-at time is not in the future" \
	"--stop-at=25:00|invalid --stop-at format" "--stop-at=tomorrow|invalid --stop-at format" \
	"--stop-after=0|invalid --stop-after value" "--stop-after=x|invalid --stop-after value"; do
	opt=${spec%%|*} msg=${spec#*|}
	rc=0; "$SYNC" -a "$opt" "$S/" "$W/never" >/dev/null 2>"$W/s.err" || rc=$?
	# (rsync 3.5's own testsuite wants 0 refused; some builds take it as "no limit")
	rrc=0; rsync -a "$opt" "$S/" "$W/never-r" >/dev/null 2>&1 || rrc=$?
	[ "$opt" = --max-alloc=0 ] && rrc=1
	[ "$rc" = 1 ] && [ "$rrc" = 1 ] && grep -qF -- "$msg" "$W/s.err" && [ ! -e "$W/never" ] ||
		die "$opt: exit $rc (rsync $rrc): $(cat "$W/s.err")"
done
ok "bad --max-alloc, --stop-at and --stop-after values: rsync's message, exit 1, nothing made"
run_args "--max-alloc and --stop-at that do not bind" ../src/ ma -ai --max-alloc=1G --stop-at=2099-01-01T00:00 --stop-after=600
# a list beyond --max-alloc: rsync's message, exit 22, nothing made
mkdir -p "$W/many" && (cd "$W/many" && seq 1 9000 | xargs touch)
rc=0; "$SYNC" -a --max-alloc=1M "$W/many/" "$W/s/many/" >/dev/null 2>"$W/s.err" || rc=$?
[ "$rc" = 22 ] && grep -q "exceeded --max-alloc=1048576 setting" "$W/s.err" && [ -z "$(ls -A "$W/s/many" 2>/dev/null)" ] ||
	die "--max-alloc=1M over 9000 entries: exit $rc: $(cat "$W/s.err")"
RSYNC_MAX_ALLOC=1M "$SYNC" -a "$W/many/" "$W/s/many2/" >/dev/null 2>&1 && die "\$RSYNC_MAX_ALLOC was not read"
ok "--max-alloc (and \$RSYNC_MAX_ALLOC): a file list beyond it stops the run, exit 22"
# the stop time reached (the test build's clock moved past it): rsync's message, exit 30, nothing half made
if [ "${SWEEP_TEST_HOOKS:-}" = 1 ]; then
	rc=0; SWEEP_TEST_TIME_SHIFT=7200 "$SYNC" -a --stop-after=60 "$S/" "$W/s/stopped/" >/dev/null 2>"$W/s.err" || rc=$?
	[ "$rc" = 30 ] && grep -q "stopping at requested limit" "$W/s.err" &&
		[ -z "$(find "$W/s/stopped" -type f 2>/dev/null)" ] || die "--stop-after reached: exit $rc: $(cat "$W/s.err")"
	ok "--stop-after reached: stopping at requested limit, exit 30, no file made"
else
	skip_part "the stop time reached needs the test build"
fi

finish
