#!/bin/bash
# SPDX-License-Identifier: MIT
# sweep-sync against a hostile peer (tests/remote/fakepeer.py): a sender that
# lists '..', absolute names, a symlink and then a file through it, oversized
# frames and strings, a wrong protocol version, a stream cut short, more data
# than a file's end announces; a receiver that asks for what was not listed; a
# client that feeds 'sweep-sync --server' the same. The peer stands in for the
# remote shell (-e), so no sshd is needed. Every case must end with a clear
# message and a nonzero status (rsync's 12 for the protocol), write nothing
# outside DEST, follow no symlink DEST holds, and leave no temporary behind.
. "$TESTS_DIR/remote/lib.sh"

FP=$TESTS_DIR/remote/fakepeer.py
BOX=$W/box
# named temporaries (test builds), so that one left behind is seen
export SWEEP_TEST_NO_TMPFILE=1

# A DEST with a file, and a symlink to a directory beside it; a canary there.
new_box() {
	rm -rf "$BOX"
	mkdir -p "$BOX/dest" "$BOX/outside"
	echo keep >"$BOX/outside/keep"
	echo old >"$BOX/dest/old"
	ln -s ../outside "$BOX/dest/l"
	find "$BOX" "$BOX/outside/" -path "$BOX/dest" -prune -o -printf '%p %y %s %T@\n' | sort >"$W/outside.before"
}

# What must hold after any case: nothing outside DEST changed, nothing
# written through DEST's symlink, no temporaries, no escape sequence printed.
check_box() {
	local label=$1
	find "$BOX" "$BOX/outside/" -path "$BOX/dest" -prune -o -printf '%p %y %s %T@\n' | sort >"$W/outside.after"
	diff -u "$W/outside.before" "$W/outside.after" >&2 || fail "$label: something outside DEST changed"
	[ ! -e /tmp/escaped ] && [ ! -e "$W/escaped" ] || fail "$label: a file was written outside DEST"
	[ -z "$(find "$BOX" -name '.sweep-tmp.*')" ] || { find "$BOX" -name '.sweep-tmp.*' >&2; fail "$label: a temporary was left"; }
	if grep -q $'\e' "$W/$label.err" "$W/$label.out"; then
		fail "$label: the peer's escape sequence reached the terminal"
	fi
	[ "$(cat "$BOX/dest/old" 2>/dev/null)" = old ] || fail "$label: DEST's own file was lost"
}

# run_case LABEL STATUS MESSAGE-REGEX SWEEP-SYNC-ARGS... (an empty regex: no message wanted)
run_case() {
	local label=$1 want=$2 msg=$3 rc=0 fails=$LIB_FAILS
	shift 3
	timeout 120 "$SYNC" "$@" >"$W/$label.out" 2>"$W/$label.err" || rc=$?
	if grep -q 'runtime error:\|AddressSanitizer\|LeakSanitizer' "$W/$label.err"; then
		cat "$W/$label.err" >&2
		fail "$label: sanitizer report"
	fi
	if [ "$rc" != "$want" ]; then
		cat "$W/$label.err" >&2
		fail "$label: exit $rc, wanted $want"
	elif [ -n "$msg" ] && ! grep -Eq "$msg" "$W/$label.err" "$W/$label.out"; then
		cat "$W/$label.err" >&2
		fail "$label: no message /$msg/"
	fi
	check_box "$label"
	[ "$LIB_FAILS" != "$fails" ] || ok "$label"
}

# ---- a hostile sender (HOST:SRC/ DEST/) ----
pull() { # pull SCENARIO STATUS MESSAGE
	new_box
	run_case "pull-$1" "$2" "$3" -a -e "python3 $FP $1 --sender" h:src/ "$BOX/dest/"
}
P='protocol error'
pull banner 12 'did not answer as sweep-sync --server does'
pull version 12 'protocol version mismatch: .* version 1, the remote one 99'
pull short-hello 12 'did not answer as sweep-sync --server does'
pull dotdot-root 12 "$P: a bad list of operands"
pull slash-in-rel0 12 "$P: a bad list of operands"
pull huge-roots 12 "$P: a bad list of operands"
pull dotdot-entry 12 "$P: a bad entry in the file list"
pull absolute 12 "$P: a bad entry in the file list"
pull empty-component 12 "$P: a bad entry in the file list"
pull dot-component 12 "$P: a bad entry in the file list"
pull dot-not-dir 12 "$P: a bad entry in the file list"
pull huge-xattrs 12 "$P: a bad entry in the file list"
pull bad-length 12 "$P: a bad entry in the file list"
pull outside-root 12 "$P: an entry outside the operands"
pull symlink-then-file 12 "$P: 'l/f' listed below something that is not a directory"
pull file-under-file 12 "$P: 'f/g' listed below something that is not a directory"
pull missing-parent 12 "$P: 'd/f' listed below something that is not a directory"
pull huge-frame 12 "$P: message too long"
pull frame-overrun 12 "$P: unknown message type"
pull compressed-unasked 12 "$P: a compressed message that does not decompress"
pull unknown-type 12 "$P: unknown message type"
pull truncated 12 'connection unexpectedly closed'
pull short-header 12 'connection unexpectedly closed'
pull exit-code 12 "$P: a bad exit status"
pull unasked-file 12 "$P: a file not asked for"
pull data-backwards 12 "$P: data out of place"
pull data-after-end 12 "$P: data out of place"
pull fail-then-data 12 "$P: data out of place"
pull bad-status 12 "$P: a bad end of a file"
pull more-than-announced 12 "$P: a bad end of a file"
pull two-files-open 12 "$P: a bad beginning of a file"
pull no-answer 12 "$P: no answer for a file asked for"
# control characters in the peer's messages are shown, not obeyed
pull escape-text 0 'sweep-sync: \?\[2J\?\]0;owned\? cleared your screen'
# a directory l where DEST has l -> ../outside: the symlink is replaced, not followed
pull dir-over-symlink 0 ''
[ -d "$BOX/dest/l" ] && [ ! -L "$BOX/dest/l" ] && [ "$(cat "$BOX/dest/l/f")" = evil ] ||
	fail "dir-over-symlink: DEST/l is not the directory the sender listed"
ok "a directory listed where DEST has a symlink replaces the symlink"

# ---- a hostile receiver (SRC/ HOST:DEST/): the source is only read ----
mkdir -p "$W/src/d"
echo hi >"$W/src/a"
echo x >"$W/src/d/b"
push() { # push SCENARIO STATUS MESSAGE
	new_box
	run_case "push-$1" "$2" "$3" -a --remove-source-files -e "python3 $FP $1" "$W/src/" h:dst/
	[ "$(cat "$W/src/a")" = hi ] && [ "$(cat "$W/src/d/b")" = x ] || fail "push-$1: the source changed"
}
push req-out-of-range 12 "$P: the receiver asked for something that is not a file listed"
push req-directory 12 "$P: the receiver asked for something that is not a file listed"
push req-bad-length 12 "$P: a bad request from the receiver"
push remove-directory 12 "$P: the receiver asked to remove something that is not a file listed"
push exit-code 12 "$P: a bad exit status"
push escape-text 0 '\?\[31mred\?\[0m and a bell\?'
[ "$(grep -c "$P" "$W/push-req-out-of-range.err")" = 1 ] || fail "a protocol error is said once"

# ---- a hostile client, 'sweep-sync --server' on the far side ----
new_box
rc=0
python3 "$FP" --client sender-dotdot -- "$SYNC" --server --receiver -- "$BOX/dest/" >"$W/srv1.out" 2>"$W/srv1.err" || rc=$?
[ "$rc" = 12 ] || { cat "$W/srv1.err" >&2; fail "a server receiving '../escaped': exit $rc, wanted 12"; }
check_box srv1
ok "a server refuses a client that sends '../escaped'"
rc=0
python3 "$FP" --client receiver-req-out-of-range -- "$SYNC" --server --sender -- "$W/src/" >"$W/srv2.out" 2>"$W/srv2.err" || rc=$?
[ "$rc" = 12 ] || { cat "$W/srv2.err" >&2; fail "a server asked for an index never listed: exit $rc, wanted 12"; }
ok "a server refuses a client that asks for what it did not list"

finish
