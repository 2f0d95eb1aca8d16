#!/bin/bash
# SPDX-License-Identifier: MIT
# sweep-sync under faults: SIGKILL in the middle of the transfer, a source
# file that vanishes after the scan, an unreadable source file. The run is
# stopped at a known point with the tools' pause points (tests/common/hooks.sh),
# so nothing here depends on timing.
. "$TESTS_DIR/sync/lib.sh"
. "$TESTS_DIR/common/hooks.sh"
have_hooks || skip "the tools were built without -Dtest_hooks=true"

S=$W/src D=$W/dst OLD=$W/old
mkdir -p "$S/d1" "$S/d2"
# (96 files, so that the kill lands mid-run)
for i in $(seq 1 96); do
	head -c 262144 /dev/urandom >"$S/d$((i % 2 + 1))/f$i"
done
"$SYNC" -a "$S/" "$D/" || die "first sync failed"
compare_trees "$S" "$D"

# --- SIGKILL mid-run: every final name holds the old or the new file, never a part
cp -a "$D" "$OLD"
for i in $(seq 1 96); do
	head -c 262144 /dev/urandom >"$S/d$((i % 2 + 1))/f$i"
done
head -c 1048576 /dev/urandom >"$S/d1/big-new"
# same sizes, so a new mtime must tell the quick check (the rewrite may fall in the first sync's second)
touch -d '2001-02-03 04:05:06' "$S"/d[12]/f*
# The copies onto the source's own filesystem on the caller's thread, the
# one the pause stops at: a copy that replaces a file is linked under a
# temporary name, then renamed over it, and a clone pool thread stopped
# between the two (a SIGKILL there leaves the temporary, as rsync's) made
# the "no temporaries" check below fail now and then.
SWEEP_CLONE_THREADS=0 SWEEP_TEST_PAUSE=bytes:2000000 "$SYNC" -a "$S/" "$D/" &
pid=$!
wait_stopped $pid || { kill -9 $pid 2>/dev/null; die "sweep-sync did not reach the stop point"; }
new=0 old=0 partial=0
for f in $(cd "$S" && find . -type f); do
	if [ ! -e "$D/$f" ]; then
		continue
	elif cmp -s "$S/$f" "$D/$f"; then
		new=$((new + 1))
	elif [ -e "$OLD/$f" ] && cmp -s "$OLD/$f" "$D/$f"; then
		old=$((old + 1))
	else
		partial=$((partial + 1))
		echo "partial: $f" >&2
	fi
done
kill -9 $pid
wait $pid 2>/dev/null
note "killed mid-run: $new files new, $old old, $partial partial, $(find "$D" -name '.sweep-tmp.*' | wc -l) temporaries"
[ $partial = 0 ] || die "a final name held a partial file"
[ $new -gt 0 ] && [ $old -gt 0 ] || die "the kill did not land mid-run ($new new, $old old)"
# Copies are unnamed (O_TMPFILE) until complete: the kill left no name behind.
[ -z "$(find "$D" -name '.sweep-tmp.*')" ] || die "temporaries left by the kill"
"$SYNC" -a "$S/" "$D/" || die "re-run after SIGKILL failed"
compare_trees "$S" "$D"

# --- a source file vanishes after the scan: exit 24, the rest is synced
for i in 1 2 3; do printf 'v%s\n' $i >"$S/d2/v$i"; done
SWEEP_TEST_PAUSE=walk "$SYNC" -a "$S/" "$D/" 2>"$W/vanish.err" &
pid=$!
wait_stopped $pid || { kill -9 $pid; die "sweep-sync did not stop after the scan"; }
rm "$S/d2/v2"
kill -CONT $pid
rc=0
wait $pid || rc=$?
[ $rc = 24 ] || { cat "$W/vanish.err" >&2; die "vanished file: exit $rc, want 24"; }
grep -q 'vanished.*d2/v2' "$W/vanish.err" || die "no 'vanished' message: $(cat "$W/vanish.err")"
[ ! -e "$D/d2/v2" ] || die "the vanished file was created"
cmp "$S/d2/v1" "$D/d2/v1" && cmp "$S/d2/v3" "$D/d2/v3" || die "the other files were not synced"
ok "vanished source file: exit 24"

# --- a source file that grows while it is read: a warning that names it, but
# nothing vanished, so exit 0 as rsync (which sends what it read without a
# word); the next run picks up the rest
printf 'before\n' >"$S/d2/changes"
touch -d '2003-01-01' "$S/d2/changes"
SWEEP_TEST_PAUSE=read:1 "$SYNC" -a "$S/" "$D/" 2>"$W/changed.err" &
pid=$!
wait_stopped $pid || { kill -9 $pid; die "sweep-sync did not stop at the first read"; }
printf 'appended while read\n' >>"$S/d2/changes"
kill -CONT $pid
rc=0
wait $pid || rc=$?
[ $rc = 0 ] || { cat "$W/changed.err" >&2; die "grown file: exit $rc, want 0 (rsync's)"; }
grep -q "WARNING: '$S/d2/changes' changed while it was read" "$W/changed.err" ||
	die "the warning does not name the source: $(cat "$W/changed.err")"
grep -q "vanished" "$W/changed.err" && die "a grown file reported as vanished: $(cat "$W/changed.err")"
"$SYNC" -a "$S/" "$D/" || die "re-run after the change failed"
cmp "$S/d2/changes" "$D/d2/changes" || die "the re-run did not pick up the change"
ok "source grew while read: a warning, exit 0, nothing said to have vanished"

# --- an unreadable file: exit 23 like rsync, the rest is synced, no deletion
run_unprivileged() {
	if [ "$(id -u)" = 0 ]; then
		# root reads anything: drop the capabilities that let it
		setpriv --bounding-set -dac_override,-dac_read_search "$@"
	else
		"$@"
	fi
}
if [ "$(id -u)" = 0 ] && ! setpriv --bounding-set -dac_override,-dac_read_search true 2>/dev/null; then
	skip_part "unreadable-file case: cannot drop capabilities here"
else
	printf 'secret\n' >"$S/d1/secret"
	chmod 000 "$S/d1/secret"
	printf 'other\n' >"$S/d1/other"
	printf 'extra\n' >"$D/d1/extraneous"
	cp -a "$D" "$W/rdst"
	rc=0
	run_unprivileged "$SYNC" -a --delete "$S/" "$D/" >"$W/unread.out" 2>"$W/unread.err" || rc=$?
	rrc=0
	run_unprivileged rsync -a --delete "$S/" "$W/rdst/" >/dev/null 2>&1 || rrc=$?
	[ $rc = 23 ] || { cat "$W/unread.err" >&2; die "unreadable file: exit $rc, want 23"; }
	[ $rrc = 23 ] || die "rsync gave $rrc for the unreadable file (test assumption broken)"
	grep -q 'd1/secret.*Permission denied' "$W/unread.err" || die "no clear error: $(cat "$W/unread.err")"
	grep -q 'skipping file deletion' "$W/unread.out" || die "deletion not refused after an I/O error"
	[ -e "$D/d1/extraneous" ] || die "--delete ran after an I/O error"
	[ ! -e "$D/d1/secret" ] || die "a partial or empty copy of the unreadable file exists"
	cmp "$S/d1/other" "$D/d1/other" || die "the readable file was not synced"
	ok "unreadable file: exit 23, deletion skipped"
	chmod 644 "$S/d1/secret"

	# an unreadable directory: the same (rsync: "opendir failed", exit 23, no deletion)
	mkdir -p "$S/locked" && printf 'l\n' >"$S/locked/in" && chmod 000 "$S/locked"
	rc=0
	run_unprivileged "$SYNC" -a --delete "$S/" "$D/" >/dev/null 2>"$W/lock.err" || rc=$?
	rrc=0
	run_unprivileged rsync -a --delete "$S/" "$W/rdst/" >/dev/null 2>&1 || rrc=$?
	[ $rc = 23 ] && [ $rrc = 23 ] || die "unreadable directory: exit $rc (rsync $rrc), want 23"
	grep -q 'locked.*Permission denied' "$W/lock.err" || die "no clear error: $(cat "$W/lock.err")"
	[ -e "$D/d1/extraneous" ] || die "--delete ran after an unreadable directory"
	chmod 755 "$S/locked"
	ok "unreadable directory: exit 23, deletion skipped"
fi

# --- a destination directory that only becomes writable through the sync (rsync
# changes a directory's permissions before it fills it)
if [ "$(id -u)" != 0 ] || setpriv --bounding-set -dac_override,-dac_read_search true 2>/dev/null; then
	H=$W/perm && mkdir -p "$H/src/sub" "$H/dst" "$H/rdst" && printf 'p\n' >"$H/src/sub/f"
	chmod 555 "$H/dst" "$H/rdst"
	rc=0; run_unprivileged "$SYNC" -a "$H/src/" "$H/dst/" 2>"$W/perm.err" || rc=$?
	rrc=0; run_unprivileged rsync -a "$H/src/" "$H/rdst/" 2>/dev/null || rrc=$?
	[ $rc = $rrc ] || die "read-only DEST that SRC makes writable: exit $rc, rsync $rrc: $(cat "$W/perm.err")"
	compare_trees "$H/rdst" "$H/dst"
	ok "read-only DEST made writable first: exit $rc like rsync"
fi

# --- not root: a read-only directory is opened while its contents change, then restored
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1 &&
	setpriv --reuid nobody --regid "$(id -g nobody)" --clear-groups true 2>/dev/null; then
	as_nobody() { setpriv --reuid nobody --regid "$(id -g nobody)" --clear-groups "$@"; }
	H=$W/ro && mkdir -p "$H/src/sub" && printf '1\n' >"$H/src/sub/f"
	chmod 755 "$W" && chown -R "nobody:$(id -g nobody)" "$H" && chmod 555 "$H/src/sub"
	as_nobody "$SYNC" -a "$H/src/" "$H/dst/" || die "first sync as nobody failed"
	chmod 755 "$H/src/sub" && printf '22\n' >"$H/src/sub/f" && touch -d 2001-01-01 "$H/src/sub/f" && chmod 555 "$H/src/sub"
	rc=0; as_nobody "$SYNC" -a "$H/src/" "$H/dst/" 2>"$W/ro.err" || rc=$?
	[ $rc = 0 ] || die "update inside a read-only directory (not root): exit $rc: $(cat "$W/ro.err")"
	compare_trees "$H/src" "$H/dst"
	chmod 700 "$W"
	ok "read-only directory updated by a non-root user and restored to 555"
fi

# --- a hard-link group whose last name cannot be made: the other name still gets the data
if command -v chattr >/dev/null; then
	H=$W/hl && mkdir -p "$H/src/a" "$H/src/b" "$H/dst/a" && printf 'data\n' >"$H/src/a/x"
	ln "$H/src/a/x" "$H/src/b/y"
	touch "$H/dst/b"
	if chattr +i "$H/dst/b" 2>/dev/null; then
		rc=0; "$SYNC" -aH "$H/src/" "$H/dst/" 2>"$W/hl.err" || rc=$?
		chattr -i "$H/dst/b"
		[ $rc = 23 ] || die "immutable obstacle: exit $rc, want 23: $(cat "$W/hl.err")"
		cmp "$H/src/a/x" "$H/dst/a/x" || die "the reachable name of the hard-link group was not copied"
		ok "hard-link group with an unreachable last name: exit 23, the other name copied"
	fi
fi

# --- SIGTERM: exit 20 as rsync, nothing partial, the next run converges
for i in 1 2 3 4 5 6; do head -c 262144 /dev/urandom >"$S/d1/f$((i * 2 - 1))"; done
touch -d '2002-03-04 05:06:07' "$S"/d1/f*
SWEEP_TEST_PAUSE=bytes:300000 "$SYNC" -a "$S/" "$D/" 2>"$W/term.err" &
pid=$!
wait_stopped $pid || { kill -9 $pid; die "sweep-sync did not reach the stop point"; }
kill -TERM $pid
kill -CONT $pid
rc=0
wait $pid || rc=$?
[ $rc = 20 ] || die "SIGTERM: exit $rc, want 20"
"$SYNC" -a --delete "$S/" "$D/" || die "re-run after SIGTERM failed"
compare_trees "$S" "$D"
ok "SIGTERM: exit 20, re-run converges"

# --- -P: rsync's lines, a name then "SIZE 100% RATE TIME (xfr#N, to-chk=R/T)" for each file written
for i in $(seq 1 4); do head -c 262144 /dev/urandom >"$S/d2/p$i"; done
"$SYNC" -aP "$S/" "$D/" >"$W/progress.out" 2>&1 || die "-P run failed: $(cat "$W/progress.out")"
tr '\r' '\n' <"$W/progress.out" >"$W/progress.lines"
for i in $(seq 1 4); do
	grep -A2 -x "d2/p$i" "$W/progress.lines" | grep -Eq '^ +262,144 100% +[0-9]+\.[0-9]{2}[kMG]B/s +[0-9]+:[0-9]{2}:[0-9]{2} \(xfr#[0-9]+, to-chk=[0-9]+/[0-9]+\)$' ||
		die "no rsync-like progress line under d2/p$i: $(cat -A "$W/progress.out" | head -20)"
done
grep -q '^sending incremental file list$' "$W/progress.lines" || die "-P: no file-list header"
ok "-P: a name and rsync's progress line for each file"
"$SYNC" -a --info=progress2 "$S/" "$W/p2/" >"$W/progress2.out" || die "--info=progress2 failed"
tr '\r' '\n' <"$W/progress2.out" | grep -Eq '^ +[0-9,]+ +100% +[0-9.]+[kMG]B/s +[0-9]+:[0-9]{2}:[0-9]{2} \(xfr#[0-9]+, to-chk=0/[0-9]+\)' ||
	die "--info=progress2: no closing total line: $(cat -A "$W/progress2.out" | tail -3)"
grep -q 'd2/p1' "$W/progress2.out" && die "--info=progress2 named files"
ok "--info=progress2: one total line, no names"

# --- dry run after all that changes nothing
rm -f "$S/d2/f1"
printf 'n\n' >"$S/d1/newer"
python3 "$MANIFEST" "$D" >"$W/before"
"$SYNC" -a -n -i --delete "$S/" "$D/" >"$W/dry.out" || die "dry run failed"
python3 "$MANIFEST" "$D" >"$W/after"
diff -u "$W/before" "$W/after" || die "the dry run changed the destination"
grep -q '^\*deleting   d2/f1$' "$W/dry.out" && grep -q '^>f+++++++++ d1/newer$' "$W/dry.out" ||
	die "dry run did not report the changes: $(cat "$W/dry.out")"

finish
