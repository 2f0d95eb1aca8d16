#!/bin/bash
# SPDX-License-Identifier: MIT
# Where the destination has no O_TMPFILE (vfat, NFS), copies are made under
# .sweep-tmp.* names: sweep-cp and sweep-sync remove their own on SIGINT,
# SIGTERM and SIGHUP (exit 20 for sweep-sync, death by the signal for
# sweep-cp), a later run converges, and a name that only looks like theirs
# is never removed. The test build's SWEEP_TEST_NO_TMPFILE makes the engine
# behave as on such a filesystem (this kernel may have none to mount).
. "$TESTS_DIR/common/lib.sh"
set -u
. "$TESTS_DIR/common/hooks.sh"
have_hooks || skip "the tools were built without -Dtest_hooks=true"
export SWEEP_TEST_NO_TMPFILE=1
scratch WORK named
CP=$BUILD_ROOT/utils/sweep-cp SYNC=$BUILD_ROOT/utils/sweep-sync

mnt=$WORK/dst
mkdir "$mnt"
src=$WORK/src
mkdir -p "$src/d"
for i in 1 2 3 4 5 6 7 8; do head -c $((i * 700000)) /dev/urandom >"$src/d/f$i"; done
printf 'mine\n' >"$mnt/.sweep-tmp.notes" # looks like a temporary, is not one

# Copies made on the caller's thread, paused mid-file; and on the engine's
# writer thread, paused where the second copy is complete under its
# temporary name (the thread's own step: the reader's byte count runs ahead
# of the thread, so mid-file is not a point in its timeline).
for copy in serial thread; do
export SWEEP_TEST_COPY=$copy
point=bytes:1000000
[ $copy = thread ] && point=write:2
for sig in INT TERM HUP; do
	for tool in sync cp; do
		dst=$mnt/$tool-$sig
		rm -rf "$dst"
		if [ $tool = sync ]; then
			pause_at $point "$SYNC" -rt "$src/" "$dst/" 2>"$WORK/err" || { fail "$tool $sig ($copy): no pause"; continue; }
		else
			pause_at $point "$CP" -r "$src" "$dst" 2>"$WORK/err" || { fail "$tool $sig ($copy): no pause"; continue; }
		fi
		left=$(find "$mnt" -name '.sweep-tmp.*' ! -name .sweep-tmp.notes | wc -l)
		[ "$left" -ge 1 ] || fail "$tool $sig ($copy): no named temporary while paused mid-file"
		kill -$sig "$PAUSED_PID"
		rc=0
		resume || rc=$?
		want=20
		[ $tool = cp ] && want=$((128 + $(kill -l $sig)))
		[ "$rc" = "$want" ] || fail "$tool $sig ($copy): exit $rc, want $want: $(cat "$WORK/err")"
		left=$(find "$mnt" -name '.sweep-tmp.*' ! -name .sweep-tmp.notes)
		[ -z "$left" ] || fail "$tool $sig ($copy): temporaries left: $left"
		for f in "$dst"/d/f*; do
			[ -e "$f" ] || continue
			cmp -s "$f" "$src/d/$(basename "$f")" || fail "$tool $sig ($copy): a final name holds a partial file: $f"
		done
		ok "$tool SIG$sig at $point ($copy copies): exit $rc, no temporary left"
	done
done
done
unset SWEEP_TEST_COPY
check "the re-run after the signals exits 0" "$SYNC" -rt "$src/" "$mnt/sync-TERM/"
check "the re-run converges" diff -r "$src" "$mnt/sync-TERM"
check "a name that only looks like a temporary is kept" [ "$(cat "$mnt/.sweep-tmp.notes")" = mine ]
finish
