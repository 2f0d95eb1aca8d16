#!/bin/bash
# SPDX-License-Identifier: MIT
# GNU tar's error behaviour: files that vanish or change between the plan
# and the read, files that shrink, grow or change while being read (with
# sweep-tar held on a full pipe, and with an LD_PRELOAD hook on pread, not
# under ASan), unreadable files and
# directories (as nobody, side by side with GNU tar), and a reader that
# closes the pipe early. The archive must stay valid throughout.
. "$TESTS_DIR/tar/lib.sh"
HOOK=${1:-}
cd "$WORK" || die "cd $WORK"

valid() { # valid ARCHIVE: GNU tar and bsdtar read it to the end
	tar -tvf "$1" > "$1.list" 2>&1 || { cat "$1.list" >&2; die "GNU tar cannot read $1"; }
	bsdtar -tf "$1" > /dev/null 2>&1 || die "bsdtar cannot read $1"
}

expect_msgs() { # expect_msgs ERRFILE LINE...: exactly these messages, in any order
	local f=$1
	shift
	printf '%s\n' "$@" | sort > "$f.want"
	sort "$f" > "$f.got"
	diff "$f.want" "$f.got" >&2 || die "messages differ from what GNU tar says"
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
# Which name of the pair holds the data is fixed by the read order: ask a plain run.
"$T" -cf probe.tar vsrc || die "probe run"
holder=$(tar -tvf probe.tar | awk '$1 ~ /^-/ && $6 ~ /^vsrc\/hl[12]$/ {print $6}')
other=$(tar -tvf probe.tar | awk '$1 ~ /^h/ && $6 ~ /^vsrc\/hl[12]$/ {print $6}')
[ -n "$holder" ] && [ -n "$other" ] || die "probe: no hard-link pair in the archive"

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
[ $rc = 1 ] || { cat vanish.err >&2; die "vanished files: exit status $rc, want 1"; }
# A file that changed after it was planned is archived as it is when opened,
# and the change is reported as GNU tar reports one between its stat and read.
expect_msgs vanish.err "sweep-tar: vsrc/victim: File removed before we read it" \
	"sweep-tar: $holder: File removed before we read it" \
	"sweep-tar: vsrc/shrinkme: file changed as we read it" \
	"sweep-tar: vsrc/growme: file changed as we read it"
valid vanish.tar
mkdir vx && tar -xf vanish.tar -C vx || die "cannot extract vanish.tar"
[ ! -e vx/vsrc/victim ] || die "a vanished file is in the archive"
# The other name of the vanished data holder stands in for it, with the data.
cmp vx/"$other" "$other" || die "$other: not archived in place of $holder"
grep -q "^-.* $other\$" vanish.tar.list || die "$other is not a regular member"
# Changed before they were opened: archived whole as they are at open.
cmp vx/vsrc/shrinkme vsrc/shrinkme || die "truncated-before-read file archived wrong"
cmp vx/vsrc/growme vsrc/growme || die "grown-before-read file archived wrong"

# --- while being read, by pipe: runs in every build ---------------------------
# The archive goes to a FIFO. The test takes 2 MiB of it and stops reading:
# sweep-tar then waits in a write in the middle of the file's data, with the
# syscall backend's 1 MiB read window at most ahead of it. The test changes
# the file, then drains the rest. Data without zero bytes, so that the
# padding after a cut shows where the cut was.
pipe_case() { # pipe_case NAME COMMAND...: archive psrc/NAME (8 MiB), running COMMAND mid-file
	local name=$1 pid
	shift
	mkdir -p psrc
	head -c 8388608 /dev/urandom | tr '\0' '\1' > psrc/$name
	cp psrc/$name $name.orig
	rm -f pipe.fifo && mkfifo pipe.fifo
	SWEEP_BACKEND=syscall "$T" -c -f pipe.fifo psrc/$name 2> $name.err &
	pid=$!
	exec 4< pipe.fifo
	dd bs=65536 count=32 iflag=fullblock <&4 > $name.tar 2> /dev/null
	"$@"
	cat <&4 >> $name.tar
	exec 4<&-
	wait $pid
	echo $? > $name.rc
	valid $name.tar
	rm -rf px && mkdir px && tar -xf $name.tar -C px || die "$name: cannot extract"
}
pipe_case cut truncate -s 1048576 psrc/cut
[ "$(cat cut.rc)" = 1 ] || { cat cut.err >&2; die "cut while read: exit status $(cat cut.rc), want 1"; }
[ "$(stat -c %s px/psrc/cut)" = 8388608 ] || die "cut while read: member not padded to its header size"
kept=$(python3 -c 'import sys; d = open(sys.argv[1], "rb").read(); print(d.find(b"\0"))' px/psrc/cut)
[ "$kept" -ge 1048576 ] && [ "$kept" -lt 8388608 ] || die "cut while read: no cut in the member ($kept)"
cmp -n "$kept" px/psrc/cut cut.orig || die "cut while read: data before the cut differs"
tail -c +$((kept + 1)) px/psrc/cut | tr -d '\0' | cmp -s - /dev/null || die "cut while read: padding is not zeros"
expect_msgs cut.err "sweep-tar: psrc/cut: File shrank by $((8388608 - kept)) bytes; padding with zeros"
pipe_case longer sh -c 'head -c 100000 /dev/urandom >> psrc/longer'
[ "$(cat longer.rc)" = 1 ] || die "grown while read: exit status $(cat longer.rc), want 1"
expect_msgs longer.err "sweep-tar: psrc/longer: file changed as we read it"
cmp px/psrc/longer longer.orig || die "grown while read: not the file as it was at open"
# Same size, new ctime (after a pause, so that the coarse clock has moved on).
pipe_case rewritten sh -c 'sleep 0.1; dd if=psrc/rewritten of=psrc/rewritten bs=1 count=1 conv=notrunc 2>/dev/null'
[ "$(cat rewritten.rc)" = 1 ] || die "rewritten while read: exit status $(cat rewritten.rc), want 1"
expect_msgs rewritten.err "sweep-tar: psrc/rewritten: file changed as we read it"

# --- while being read, by LD_PRELOAD -------------------------------------------
# (meson passes b_sanitize: "none" in a plain build)
if [ "${SWEEP_SANITIZE:-none}" != none ] || [ -z "$HOOK" ]; then
	skip_part "LD_PRELOAD cases (sanitizer build or no hook)"
else
	mkdir rsrc
	for f in shrink grow touch; do head -c 3145728 /dev/urandom > rsrc/$f; done
	cp rsrc/shrink shrink.orig
	cp rsrc/grow grow.orig
	SWEEP_BACKEND=syscall LD_PRELOAD="$HOOK" SWEEP_TEST_SHRINK=shrink SWEEP_TEST_GROW=grow \
		SWEEP_TEST_TOUCH=touch "$T" -cf during.tar rsrc 2> during.err
	rc=$?
	[ $rc = 1 ] || { cat during.err >&2; die "changed while read: exit status $rc, want 1"; }
	kept=$(stat -c %s rsrc/shrink)
	[ "$kept" -lt 3145728 ] || die "the hook did not shrink the file"
	expect_msgs during.err \
		"sweep-tar: rsrc/shrink: File shrank by $((3145728 - kept)) bytes; padding with zeros" \
		"sweep-tar: rsrc/grow: file changed as we read it" \
		"sweep-tar: rsrc/touch: file changed as we read it"
	valid during.tar
	mkdir dx && tar -xf during.tar -C dx || die "cannot extract during.tar"
	[ "$(stat -c %s dx/rsrc/shrink)" = 3145728 ] || die "shrunk member is not padded to its header size"
	cmp -n "$kept" dx/rsrc/shrink shrink.orig || die "shrunk member: data before the cut differs"
	tail -c +$((kept + 1)) dx/rsrc/shrink | tr -d '\0' | cmp -s - /dev/null ||
		die "shrunk member: padding is not zeros"
	cmp dx/rsrc/grow grow.orig || die "grown member: not the size planned at open"
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
	[ $rc = 2 ] && [ $grc = 2 ] || die "unreadable: exit status $rc (GNU tar $grc), want 2"
	sed 's/^tar: /sweep-tar: /' ur.gnu.err | sort > ur.gnu.msgs
	sort ur.sweep.err > ur.sweep.msgs
	diff ur.gnu.msgs ur.sweep.msgs >&2 || die "unreadable: messages differ from GNU tar's"
	valid ur.sweep.tar
	diff <(tar -tf ur.gnu.tar | sort) <(tar -tf ur.sweep.tar | sort) >&2 ||
		die "unreadable: members differ from GNU tar's"
	chmod 755 ur/d
	chmod 644 ur/f
else
	skip_part "unreadable-file cases (need root to switch to nobody)"
fi

# --- the reader goes away ----------------------------------------------------
mkdir big && head -c 4194304 /dev/urandom > big/data
"$T" -c big 2> pipe.err | head -c 1000 > /dev/null
rc=${PIPESTATUS[0]}
[ "$rc" != 0 ] || die "closed pipe: exit status 0"
grep -q "^sweep-tar: -: Cannot write: Broken pipe$" pipe.err || { cat pipe.err >&2; die "closed pipe: no clear message"; }

# --- a terminal is refused (script gives it one) -----------------------------
if command -v script > /dev/null; then
	script -qec "$T -c big" /dev/null > tty.out 2>&1
	grep -q "Refusing to write archive contents to terminal" tty.out || { cat tty.out >&2; die "wrote to a terminal"; }
fi
ok "vanished, changed, unreadable, broken pipe, terminal"
finish
