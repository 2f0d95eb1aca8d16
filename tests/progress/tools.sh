#!/bin/bash
# SPDX-License-Identifier: MIT
# Each tool's --progress=1 on a small tree, as a log sees it: every line has
# the documented shape, the walk shows "scanning:" lines, and the summary's
# numbers are what the tool did (counted here with find, and from the
# archive, the copy, the listing). Time is the test clock of the test-hooks
# build (SWEEP_TEST_CLOCK=step:S: every clock reading moves it S seconds),
# so how many lines come depends on what the run counts, never on how fast
# the machine is. Then the terminal (script(1)), the options' errors, and
# silence without --progress.
. "$TESTS_DIR/common/lib.sh"
. "$TESTS_DIR/common/hooks.sh"
trap lib_exit EXIT

[ -n "${SWEEP_TEST_HOOKS:-}" ] || skip "needs the test-hooks build (SWEEP_TEST_CLOCK)"
U="$BUILD_ROOT/utils"
for t in sweep-tar sweep-cp sweep-du sweep-plan sweep-sync; do
	[ -x "$U/$t" ] || skip "no $t"
done
require_cmd tar
scratch W progress
cd "$W" || die "cd"

# --- the tree: files of many sizes, an empty one, a sparse one, a hard link,
# a symlink, a FIFO, nested directories
mkdir -p src/a/b/c src/d src/e
for i in $(seq 1 60); do head -c $((i * 2000 + i)) /dev/urandom >"src/a/f$i"; done
for i in $(seq 1 30); do head -c $((i * 37)) /dev/urandom >"src/a/b/g$i"; done
for i in $(seq 1 10); do head -c 300000 /dev/urandom >"src/a/b/c/big$i"; done
: >src/d/empty
truncate -s 3M src/d/sparse
printf 'tail' >>src/d/sparse
ln src/a/f7 src/e/hard
ln -s ../a/f2 src/e/sym
mkfifo src/e/fifo

DIRS=$(find src -type d | wc -l)
FILES=$(find src -type f | wc -l)
OTHERS=$(find src ! -type d ! -type f | wc -l)
BYTES_ONCE=$(find src -type f -printf '%i %s\n' | sort -u | awk '{ s += $2 } END { print s }')
BYTES_NAMES=$(find src -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')
note "tree: $DIRS dirs, $FILES files, $OTHERS others, $BYTES_ONCE bytes ($BYTES_NAMES by name)"

N='[0-9]+'
SZ='[0-9.]+ (B|KiB|MiB|GiB|TiB)'
HMS='[0-9]+:[0-9]{2}:[0-9]{2}'
SCAN="scanning: $N dirs, $N files(, $SZ)?"
# a total that can still grow: ">=" (the tests run in the C locale), no percentage, the ETA a bound
# a batch being sorted (on a disk: each file located first), shown at once
PLAN="planning $N files"
MOVE="$N/(>=)?$N files, $SZ/(>=)?$SZ( \([0-9]+%\))?, $SZ/s, ETA (>=)?($HMS|--:--:--)"

# shape TOOL FILE: every line is a periodic line or the summary (the last one)
shape() {
	local tool=$1 f=$2 bad last
	bad=$(grep -Evx "$tool: \[$HMS\] ($SCAN|$PLAN|$MOVE)" "$f" | grep -v "^$tool: done: ")
	[ -z "$bad" ] || { fail "$tool: lines not of the documented shape: $bad"; return; }
	last=$(tail -n 1 "$f")
	[[ $last == "$tool: done: "* ]] || { fail "$tool: the last line is not the summary: $last"; return; }
	[ "$(grep -c "^$tool: done: " "$f")" = 1 ] || { fail "$tool: not one summary"; return; }
	ok "$tool: $(grep -c "^$tool: \[" "$f") periodic lines of the documented shape, then the summary"
}

# lines TOOL FILE WHAT: at least one periodic line of the kind ("scanning" or "moving")
lines() {
	local tool=$1 f=$2 what=$3 re
	re=$([ "$what" = scanning ] && echo "$SCAN" || echo "$MOVE")
	if grep -Eqx "$tool: \[$HMS\] $re" "$f"; then
		ok "$tool: $what lines"
	else
		fail "$tool: no $what line in: $(cat "$f")"
	fi
}

# planned TOOL FILE WANT...: the "planning N files" lines, in order, are WANT (the batches' sizes)
planned() {
	local tool=$1 f=$2 have
	shift 2
	have=$(sed -En "s/^$tool: \[$HMS\] planning ([0-9]+) files$/\1/p" "$f" | tr '\n' ' ')
	if [ "$have" = "$* " ]; then
		ok "$tool: a planning line for each batch ($*)"
	else
		fail "$tool: planning lines for batches of '$have', want '$* '"
	fi
}

# summary TOOL FILE DIRS FILES OTHERS BYTES: the summary's exact numbers
summary() {
	local tool=$1 f=$2 want
	want="$tool: done: "
	[ "$3" != 0 ] && want+="$3 dirs, "
	want+="$4 files, "
	[ "$5" != 0 ] && want+="$5 others, "
	want+="$6 bytes ("
	if [[ $(tail -n 1 "$f") == "$want"* ]]; then
		ok "$tool: summary '$want...)'"
	else
		fail "$tool: summary '$(tail -n 1 "$f")', want '$want...'"
	fi
}

# --- sweep-tar -c: the summary against the archive itself
SWEEP_TEST_CLOCK=step:0.01 "$U/sweep-tar" -c --progress=1 -f a.tar src 2>tar.err
check "sweep-tar --progress=1 exits 0" test $? = 0
shape sweep-tar tar.err
lines sweep-tar tar.err scanning
lines sweep-tar tar.err moving
planned sweep-tar tar.err "$FILES"
summary sweep-tar tar.err "$DIRS" "$FILES" "$OTHERS" "$BYTES_ONCE"
tar -tvf a.tar >a.list || die "tar -tvf a.tar"
check "sweep-tar: files in the summary = regular and hard-link members" \
	test "$(grep -c '^[-h]' a.list)" = "$FILES"
check "sweep-tar: bytes in the summary = the regular members' sizes" \
	test "$(awk '/^-/ { s += $3 } END { print s }' a.list)" = "$BYTES_ONCE"
# (a directory may be stored twice, early for a symlink that needs it: names are counted)
check "sweep-tar: dirs and others in the summary = the archive's" \
	test "$(grep '^d' a.list | awk '{ print $NF }' | sort -u | wc -l)/$(grep -c '^[lp]' a.list)" = "$DIRS/$OTHERS"

# --- sweep-cp -a: against the copy
SWEEP_TEST_CLOCK=step:0.01 "$U/sweep-cp" -a --progress=1 src dst 2>cp.err
check "sweep-cp --progress=1 exits 0" test $? = 0
shape sweep-cp cp.err
lines sweep-cp cp.err scanning
lines sweep-cp cp.err moving
planned sweep-cp cp.err $((FILES - 1)) # the hard link is linked to its first name's copy, not read
summary sweep-cp cp.err "$DIRS" "$FILES" "$OTHERS" "$BYTES_ONCE"
check "sweep-cp: the copy has what the summary says" test \
	"$(find dst -type d | wc -l)/$(find dst -type f | wc -l)/$(find dst ! -type d ! -type f | wc -l)/$(find dst -type f -printf '%i %s\n' | sort -u | awk '{ s += $2 } END { print s }')" = \
	"$DIRS/$FILES/$OTHERS/$BYTES_ONCE"

# --- sweep-du: the walk is the work (sizes are apparent sizes, each file once, as tar and cp count them)
SWEEP_TEST_CLOCK=step:0.2 "$U/sweep-du" --progress=1 src >du.out 2>du.err
check "sweep-du --progress=1 exits 0" test $? = 0
shape sweep-du du.err
lines sweep-du du.err scanning
summary sweep-du du.err "$DIRS" "$FILES" "$OTHERS" "$BYTES_ONCE"
"$U/sweep-du" src >du.plain 2>du.plain.err
check "sweep-du: the report is the same with --progress" cmp -s du.out du.plain
check "sweep-du: nothing on stderr without --progress and a terminal" test ! -s du.plain.err
SWEEP_TEST_CLOCK=step:0.2 "$U/sweep-du" -l --progress=1 src >/dev/null 2>du-l.err
summary sweep-du du-l.err "$DIRS" "$FILES" "$OTHERS" "$BYTES_NAMES"

# --- sweep-plan --read: reads every name (a hard link's data twice), as its own read line says
SWEEP_TEST_CLOCK=step:0.01 "$U/sweep-plan" --read --no-compare --progress=1 src >plan.out 2>plan.err
check "sweep-plan --read --progress=1 exits 0" test $? = 0
grep -Ev "^sweep-plan: (read [0-9]|summary: )" plan.err >plan.prog
shape sweep-plan plan.prog
lines sweep-plan plan.prog moving
planned sweep-plan plan.prog "$FILES"
summary sweep-plan plan.prog "$DIRS" "$FILES" "$OTHERS" "$BYTES_NAMES"
check "sweep-plan: the summary = its read line" \
	grep -q "^sweep-plan: read $FILES files, $BYTES_NAMES bytes in " plan.err
# batches of 40 files: a planning line before each is sorted
SWEEP_TEST_CLOCK=step:0.01 "$U/sweep-plan" --read --no-compare --max-files=40 --progress=1 src >/dev/null 2>plan40.err
grep -Ev "^sweep-plan: (read [0-9]|summary: )" plan40.err >plan40.prog
shape sweep-plan plan40.prog
want40=()
for ((i = 0; i + 40 <= FILES; i += 40)); do want40+=(40); done
[ $((FILES % 40)) = 0 ] || want40+=($((FILES % 40)))
planned sweep-plan plan40.prog "${want40[@]}"
SWEEP_TEST_CLOCK=step:0.01 "$U/sweep-plan" --no-compare --progress=1 src >/dev/null 2>plan0.err
grep -v "^sweep-plan: summary: " plan0.err >plan0.prog
shape sweep-plan plan0.prog
summary sweep-plan plan0.prog "$DIRS" "$FILES" "$OTHERS" "$BYTES_NAMES"

# --- sweep-sync -a: the source's scan, then files and bytes transferred (without -H a hard
# link's data goes twice, as with rsync); the second run transfers nothing
SWEEP_TEST_CLOCK=step:0.01 "$U/sweep-sync" -a --progress=1 src/ sdst/ >sync.out 2>sync.err
check "sweep-sync --progress=1 exits 0" test $? = 0
shape sweep-sync sync.err
lines sweep-sync sync.err scanning
lines sweep-sync sync.err moving
planned sweep-sync sync.err "$FILES"
summary sweep-sync sync.err "$DIRS" "$FILES" 0 "$BYTES_NAMES"
check "sweep-sync: the last scanning line counts the source's files" \
	grep -q "scanning: $DIRS dirs, $FILES files, " <(grep scanning sync.err | tail -n 1)
SWEEP_TEST_CLOCK=step:0.01 "$U/sweep-sync" -a --progress=1 src/ sdst/ >sync2.out 2>sync2.err
summary sweep-sync sync2.err "$DIRS" 0 0 0

# --- the tree changes between the plan and the read: one file goes, one grows, one
# shrinks. The last line still says what was archived and copied (sizes at open).
changed_tree() {
	rm -rf chg && cp -a src chg || die "cp -a src chg"
}
change() {
	rm chg/a/f3
	head -c 5000 /dev/urandom >>chg/a/f9
	truncate -s 100 chg/a/b/c/big2
}
changed_tree
SWEEP_TEST_CLOCK=step:0.01 pause_at plan "$U/sweep-tar" -c --progress=1 -f chg.tar chg 2>chg-tar.err ||
	die "sweep-tar did not stop at its plan"
change
resume
rc=$?
check "sweep-tar, tree changed: exit 1 (a file vanished), as GNU tar" test $rc = 1
tar -tvf chg.tar >chg.list 2>/dev/null
summary sweep-tar chg-tar.err "$DIRS" "$(grep -c '^[-h]' chg.list)" "$OTHERS" \
	"$(awk '/^-/ { s += $3 } END { print s }' chg.list)"
check "sweep-tar, tree changed: one file fewer than planned" test "$(grep -c '^[-h]' chg.list)" = $((FILES - 1))
changed_tree
SWEEP_TEST_CLOCK=step:0.01 pause_at plan "$U/sweep-cp" -a --progress=1 chg chg-dst 2>chg-cp.err ||
	die "sweep-cp did not stop at its plan"
change
resume
summary sweep-cp chg-cp.err "$DIRS" "$(find chg-dst -type f | wc -l)" "$OTHERS" \
	"$(find chg-dst -type f -printf '%i %s\n' | sort -u | awk '{ s += $2 } END { print s }')"

# --- a terminal: one line redrawn ("\r"), with the time left, then the summary on a line of its own
if command -v script >/dev/null; then
	SWEEP_TEST_CLOCK=step:0.01 script -qec "'$U/sweep-cp' -a --progress src tty-dst" /dev/null >tty.out
	check "sweep-cp --progress on a terminal exits 0" test $? = 0
	tr '\r' '\n' <tty.out | sed 's/\x1b\[K//g' >tty.lines
	check "terminal: redrawn lines with the time left" grep -Eq "^sweep-cp: $MOVE$" tty.lines
	check "terminal: the planning line" grep -Eq "^sweep-cp: $PLAN$" tty.lines
	check "terminal: no log lines (no [elapsed])" bash -c "! grep -q '^sweep-cp: \[' tty.lines"
	check "terminal: the line is erased and the summary follows" \
		grep -aq $'\r\x1b\\[Ksweep-cp: done: '"$DIRS dirs, $FILES files" tty.out
	# --progress=SECONDS on a terminal: full lines, not redrawn
	SWEEP_TEST_CLOCK=step:0.01 script -qec "'$U/sweep-cp' -a --progress=1 src tty-dst2" /dev/null >tty2.out
	check "terminal, --progress=1: full lines" grep -Eaq "^sweep-cp: \[$HMS\] ($SCAN|$MOVE)"$'\r?$' tty2.out
	# -v on the same terminal: each listed name on a line of its own, never after the progress line
	SWEEP_TEST_CLOCK=step:0.01 script -qec "'$U/sweep-tar' -cv --progress -f tty.tar src" /dev/null >tty3.out
	check "terminal, sweep-tar -cv: the listing is complete" \
		test "$(tr -d '\r' <tty3.out | sed 's/.*\x1b\[K//' | grep -c '^src')" = "$(tar -tf tty.tar | wc -l)"
	check "terminal, sweep-tar -cv: no name drawn after the progress line" \
		bash -c "! grep -Paq '[^\r]\x1b\[K[^\r\n]' tty3.out"
else
	skip_part "no script(1): the terminal cases"
fi

# --- without --progress nothing is shown where stderr is not a terminal
for run in "sweep-tar -c -f q.tar src" "sweep-cp -a src q-cp" "sweep-sync -a src/ q-sync/"; do
	# shellcheck disable=SC2086
	SWEEP_TEST_CLOCK=step:1 "$U"/$run >/dev/null 2>quiet.err
	check "${run%% *} without --progress: nothing on stderr" test ! -s quiet.err
done
# sweep-plan always ends with its read and summary lines on stderr: only those
SWEEP_TEST_CLOCK=step:1 "$U/sweep-plan" --read --no-compare src >/dev/null 2>quiet.err
check "sweep-plan without --progress: its own two lines only" \
	test "$(grep -Evc "^sweep-plan: (read [0-9]|summary: )" quiet.err)" = 0

# --- errors: refused with the tool's usage status, nothing done
for bad in 0 -1 abc 1e3 inf '' 86401; do
	"$U/sweep-tar" -c --progress="$bad" -f bad.tar src 2>bad.err
	rc=$?
	check "sweep-tar --progress='$bad': exit 2, said why, no archive" \
		test $rc = 2 -a ! -e bad.tar -a "$(grep -c "invalid --progress argument" bad.err)" = 1
done
for t in "sweep-cp -a SRC bad-cp:1" "sweep-du SRC:1" "sweep-plan SRC:2" "sweep-sync -a SRC/ bad-sync/:1"; do
	run=${t%:*} want=${t##*:}
	# shellcheck disable=SC2086
	set -- ${run/SRC/src}
	tool=$1
	shift
	"$U/$tool" --progress=0 "$@" >/dev/null 2>bad.err
	rc=$?
	check "$tool --progress=0: exit $want, said why, nothing made" \
		test $rc = "$want" -a ! -e bad-cp -a ! -e bad-sync -a "$(grep -c "invalid --progress argument '0'" bad.err)" = 1
done
"$U/sweep-tar" -c -f t.tar src 2>/dev/null
for m in -t -x; do
	"$U/sweep-tar" "$m" --progress -f t.tar >/dev/null 2>bad.err
	rc=$?
	check "sweep-tar $m --progress: refused (exit 2), not ignored" \
		test $rc = 2 -a "$(grep -c -- "--progress works with -c only" bad.err)" = 1
done

finish
