#!/bin/bash
# SPDX-License-Identifier: MIT
# GNU tar's error behaviour: files that vanish or change between the plan
# and the read, files that shrink, grow or change while being read (an
# LD_PRELOAD hook on pread; not under ASan), unreadable files and
# directories (as nobody, side by side with GNU tar), and a reader that
# closes the pipe early. The archive must stay valid throughout.
. "$TESTS_DIR/tar/lib.sh"
HOOK=${1:-}
cd "$WORK" || exit 1

valid() { # valid ARCHIVE: GNU tar and bsdtar read it to the end
	tar -tvf "$1" > "$1.list" 2>&1 || { cat "$1.list" >&2; fail "GNU tar cannot read $1"; }
	bsdtar -tf "$1" > /dev/null 2>&1 || fail "bsdtar cannot read $1"
}

expect_msgs() { # expect_msgs ERRFILE LINE...: exactly these messages, in any order
	local f=$1
	shift
	printf '%s\n' "$@" | sort > "$f.want"
	sort "$f" > "$f.got"
	diff "$f.want" "$f.got" >&2 || fail "messages differ from what GNU tar says"
}

# --- between plan and read -------------------------------------------------
# The plan trace goes to a FIFO. It is larger than a pipe holds, so once its
# first byte arrives the plan is sorted and sweep-tar waits in the trace
# write: nothing has been read yet. The test changes the tree, then drains.
mkdir -p vsrc/many
(cd vsrc/many && seq 1 5000 | xargs touch)
echo victim > vsrc/victim
head -c 1048576 /dev/urandom > vsrc/shrinkme
head -c 1000 vsrc/shrinkme > shrinkme.after
head -c 4096 /dev/urandom > vsrc/growme
head -c 70000 /dev/urandom > vsrc/hl1
ln vsrc/hl1 vsrc/hl2
# Which name of the pair holds the data is fixed by the walk: ask a plain run.
"$T" -cf probe.tar vsrc || fail "probe run"
holder=$(tar -tvf probe.tar | awk '$1 ~ /^-/ && $6 ~ /^vsrc\/hl[12]$/ {print $6}')
other=$(tar -tvf probe.tar | awk '$1 ~ /^h/ && $6 ~ /^vsrc\/hl[12]$/ {print $6}')
[ -n "$holder" ] && [ -n "$other" ] || fail "probe: no hard-link pair in the archive"

mkfifo trace.fifo
"$T" -cf vanish.tar --plan-trace trace.fifo vsrc 2> vanish.err &
pid=$!
exec 3< trace.fifo
dd bs=1 count=1 <&3 > /dev/null 2>&1
rm vsrc/victim "$holder"
cp shrinkme.after vsrc/shrinkme
head -c 5000 /dev/urandom >> vsrc/growme
cat <&3 > /dev/null
exec 3<&-
wait $pid
rc=$?
[ $rc = 1 ] || { cat vanish.err >&2; fail "vanished files: exit status $rc, want 1"; }
# A file that changed after it was planned is archived as it is when opened,
# and the change is reported as GNU tar reports one between its stat and read.
expect_msgs vanish.err "sweep-tar: vsrc/victim: File removed before we read it" \
	"sweep-tar: $holder: File removed before we read it" \
	"sweep-tar: vsrc/shrinkme: file changed as we read it" \
	"sweep-tar: vsrc/growme: file changed as we read it"
valid vanish.tar
mkdir vx && tar -xf vanish.tar -C vx || fail "cannot extract vanish.tar"
[ ! -e vx/vsrc/victim ] || fail "a vanished file is in the archive"
# The other name of the vanished data holder stands in for it, with the data.
cmp vx/"$other" "$other" || fail "$other: not archived in place of $holder"
grep -q "^-.* $other\$" vanish.tar.list || fail "$other is not a regular member"
# Changed before they were opened: archived whole as they are at open.
cmp vx/vsrc/shrinkme vsrc/shrinkme || fail "truncated-before-read file archived wrong"
cmp vx/vsrc/growme vsrc/growme || fail "grown-before-read file archived wrong"

# --- while being read --------------------------------------------------------
# (meson passes b_sanitize: "none" in a plain build)
if [ "${SWEEP_SANITIZE:-none}" != none ] || [ -z "$HOOK" ]; then
	echo "note: LD_PRELOAD cases skipped (sanitizer build or no hook)" >&2
else
	mkdir rsrc
	for f in shrink grow touch; do head -c 3145728 /dev/urandom > rsrc/$f; done
	cp rsrc/shrink shrink.orig
	cp rsrc/grow grow.orig
	SWEEP_BACKEND=syscall LD_PRELOAD="$HOOK" SWEEP_TEST_SHRINK=shrink SWEEP_TEST_GROW=grow \
		SWEEP_TEST_TOUCH=touch "$T" -cf during.tar rsrc 2> during.err
	rc=$?
	[ $rc = 1 ] || { cat during.err >&2; fail "changed while read: exit status $rc, want 1"; }
	kept=$(stat -c %s rsrc/shrink)
	[ "$kept" -lt 3145728 ] || fail "the hook did not shrink the file"
	expect_msgs during.err \
		"sweep-tar: rsrc/shrink: File shrank by $((3145728 - kept)) bytes; padding with zeros" \
		"sweep-tar: rsrc/grow: file changed as we read it" \
		"sweep-tar: rsrc/touch: file changed as we read it"
	valid during.tar
	mkdir dx && tar -xf during.tar -C dx || fail "cannot extract during.tar"
	[ "$(stat -c %s dx/rsrc/shrink)" = 3145728 ] || fail "shrunk member is not padded to its header size"
	cmp -n "$kept" dx/rsrc/shrink shrink.orig || fail "shrunk member: data before the cut differs"
	tail -c +$((kept + 1)) dx/rsrc/shrink | tr -d '\0' | cmp -s - /dev/null ||
		fail "shrunk member: padding is not zeros"
	cmp dx/rsrc/grow grow.orig || fail "grown member: not the size planned at open"
fi

# --- unreadable files and directories, as nobody, beside GNU tar --------------
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null; then
	mkdir -p ur/d ur/ok/deeper
	echo secret > ur/d/f
	echo secret > ur/f
	echo fine > ur/ok/deeper/g
	chmod 000 ur/d ur/f
	as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
	as_nobody "$T" -c ur > ur.sweep.tar 2> ur.sweep.err
	rc=$?
	as_nobody tar -c ur > ur.gnu.tar 2> ur.gnu.err
	grc=$?
	[ $rc = 2 ] && [ $grc = 2 ] || fail "unreadable: exit status $rc (GNU tar $grc), want 2"
	sed 's/^tar: /sweep-tar: /' ur.gnu.err | sort > ur.gnu.msgs
	sort ur.sweep.err > ur.sweep.msgs
	diff ur.gnu.msgs ur.sweep.msgs >&2 || fail "unreadable: messages differ from GNU tar's"
	valid ur.sweep.tar
	diff <(tar -tf ur.gnu.tar | sort) <(tar -tf ur.sweep.tar | sort) >&2 ||
		fail "unreadable: members differ from GNU tar's"
	chmod 755 ur/d
	chmod 644 ur/f
else
	echo "note: unreadable-file cases skipped (need root to switch to nobody)" >&2
fi

# --- the reader goes away ----------------------------------------------------
mkdir big && head -c 4194304 /dev/urandom > big/data
"$T" -c big 2> pipe.err | head -c 1000 > /dev/null
rc=${PIPESTATUS[0]}
[ "$rc" != 0 ] || fail "closed pipe: exit status 0"
grep -q "^sweep-tar: -: Cannot write: Broken pipe$" pipe.err || { cat pipe.err >&2; fail "closed pipe: no clear message"; }

# --- a terminal is refused (script gives it one) -----------------------------
if command -v script > /dev/null; then
	script -qec "$T -c big" /dev/null > tty.out 2>&1
	grep -q "Refusing to write archive contents to terminal" tty.out || { cat tty.out >&2; fail "wrote to a terminal"; }
fi
echo "ok: vanished, changed, unreadable, broken pipe, terminal"
