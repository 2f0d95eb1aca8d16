#!/bin/bash
# SPDX-License-Identifier: MIT
# --log-file and --log-file-format beside rsync: the same lines (less the
# time and pid prefix and the byte counts), in the same order, names with
# control characters escaped as \#ooo so no name forges a line or reaches
# the terminal raw; unknown format escapes refused.
. "$TESTS_DIR/sync/lib.sh"

S=$W/src
mkdir -p "$S/sub"
printf 'a\n' >"$S/plain"
printf 'b\n' >"$S/sub/deep"
printf 'c\n' >"$S/esc_"$'\033'"[2J"
printf 'd\n' >"$S/nl_"$'\n'"2026-01-01 00:00:00 [1] forged"
printf 'e\n' >"$S/c1_"$'\233'"x"
printf 'f\n' >"$S/back\\#123slash"
ln -s plain "$S/link"
ln "$S/plain" "$S/hard"
touch -d '2001-01-01' "$S"/* "$S/sub/deep"

# the log less "YYYY/MM/DD HH:MM:SS [PID] " and the lines whose counts differ by design (bytes on a wire)
strip() { sed -E 's/^[0-9]{4}\/[0-9]{2}\/[0-9]{2} [0-9:]{8} \[[0-9]+\] //; /^sent .* bytes/d; /^total size is/d; s/^(rsync|sweep-sync): //' "$1"; }

logs_match() { # LABEL ARGS...: both tools, fresh DESTs, the logs compared
	local label=$1 rc=0 sc=0; shift
	rm -rf "$W/r" "$W/s" "$W/r.log" "$W/s.log"
	mkdir -p "$W/r" "$W/s"
	(cd "$W/r" && rsync "$@" --log-file="$W/r.log" ../src/ dst/) >/dev/null 2>&1 || rc=$?
	(cd "$W/s" && "$SYNC" "$@" --log-file="$W/s.log" ../src/ dst/) >/dev/null 2>"$W/s.err" || sc=$?
	grep -q 'runtime error:' "$W/s.err" && fail "$label: sanitizer: $(cat "$W/s.err")"
	[ "$rc" = "$sc" ] || fail "$label: rsync exit $rc, sweep-sync exit $sc"
	strip "$W/r.log" >"$W/r.l"
	strip "$W/s.log" >"$W/s.l"
	if diff -u "$W/r.l" "$W/s.l" >&2; then ok "$label: the same log as rsync's"; else fail "$label: logs differ"; fi
}

logs_match "-a" -a
cp "$W/s.log" "$W/first.log"
logs_match "-av" -av
# -H: rsync logs a new group's links after the file they link to; sweep-sync, as on stdout, in list order (a known
# difference of -i's order too); an existing group is compared below
logs_match "-ai --log-file-format" -ai "--log-file-format=%o %i %-20n|%'l|%B|%U:%G%L"
# an update and a deletion
for side in r s; do printf 'old\n' >"$W/$side/dst/gone" && printf 'new\n' >>"$W/$side/dst/plain"; done
printf 'x' >>"$S/sub/deep"
rm -f "$W/r.log" "$W/s.log"
# (after: sweep-sync deletes after the transfer, where rsync's --delete interleaves)
(cd "$W/r" && rsync -aH --delete-after --log-file="$W/r.log" ../src/ dst/) >/dev/null || fail "rsync --delete-after"
(cd "$W/s" && "$SYNC" -aH --delete-after --log-file="$W/s.log" ../src/ dst/) >/dev/null || fail "sweep-sync --delete-after"
strip "$W/r.log" >"$W/r.l"
strip "$W/s.log" >"$W/s.l"
if diff -u "$W/r.l" "$W/s.l" >&2; then ok "-aH --delete-after: the same log as rsync's"; else fail "--delete-after: logs differ"; fi

case_begin "no raw control byte in the log, and one line per entry"
L=$W/first.log
! LC_ALL=C grep -q "$(printf '[\033\233]')" "$L" || fail "a raw escape byte"
! grep -q '^2026-01-01 ' "$L" || fail "a name forged a line"
grep -qF 'nl_\#0122026-01-01 00:00:00 [1] forged' "$L" || fail "a newline in a name not escaped as \\#012"
grep -qF 'esc_\#033[2J' "$L" || fail "ESC not escaped as \\#033"
grep -qF 'c1_\#233x' "$L" || fail "C1 CSI not escaped as \\#233"
grep -qF 'back\#134#123slash' "$L" || fail "a literal \\#123 in a name is not escaped"
case_end

case_begin "errors go to the log too, and the status is rsync's"
rc=0; "$SYNC" -a --log-file="$W/e.log" "$W/missing" "$W/e/" >/dev/null 2>&1 || rc=$?
[ "$rc" = 23 ] && grep -q 'sweep-sync: link_stat .*missing.* failed' "$W/e.log" && grep -q '(code 23)' "$W/e.log" ||
	fail "exit $rc, log: $(cat "$W/e.log")"
case_end

case_begin "a log file that cannot be opened is said, and the run goes on without it, as rsync's"
rc=0; "$SYNC" -a --log-file="$W/no/such/dir/x.log" "$S/" "$W/nolog/" >/dev/null 2>"$W/e" || rc=$?
rrc=0; rsync -a --log-file="$W/no/such/dir/x.log" "$S/" "$W/nolog-r/" >/dev/null 2>&1 || rrc=$?
[ "$rc" = "$rrc" ] && [ "$rc" = 0 ] && grep -q 'failed to open log-file' "$W/e" && grep -q 'Ignoring "log file" setting.' "$W/e" &&
	[ -f "$W/nolog/plain" ] || fail "exit $rc (rsync $rrc): $(cat "$W/e")"
case_end

case_begin "a format escape we do not have is refused"
rc=0; "$SYNC" -a --log-file="$W/x.log" --log-file-format='%i %C' "$S/" "$W/never/" 2>"$W/e" || rc=$?
[ "$rc" = 1 ] && grep -q 'escape %C is not supported' "$W/e" && [ ! -e "$W/never" ] && [ ! -e "$W/x.log" ] ||
	fail "exit $rc: $(cat "$W/e")"
case_end

finish
