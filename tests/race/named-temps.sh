#!/bin/bash
# SPDX-License-Identifier: MIT
# Where the destination has no O_TMPFILE (vfat, NFS), copies are made under
# .sweep-tmp.* names: sweep-cp and sweep-sync remove their own on SIGINT,
# SIGTERM and SIGHUP (exit 20 for sweep-sync, death by the signal for
# sweep-cp), a later run converges, and a name that only looks like theirs
# is never removed. The test build's SWEEP_TEST_NO_TMPFILE makes the engine
# behave as on such a filesystem (this kernel may have none to mount).
set -u
. "$TESTS_DIR/common/hooks.sh"
have_hooks || { echo "SKIP: the tools were built without -Dtest_hooks=true"; exit 77; }
export SWEEP_TEST_NO_TMPFILE=1
LOOPFS_WORK=$(mktemp -d "${TMPDIR:-/tmp}/sweep-named.XXXXXX")
trap 'rm -rf "$LOOPFS_WORK"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
CP=$BUILD_ROOT/utils/sweep-cp SYNC=$BUILD_ROOT/utils/sweep-sync

mnt=$LOOPFS_WORK/dst
mkdir "$mnt"
src=$LOOPFS_WORK/src
mkdir -p "$src/d"
for i in 1 2 3 4 5 6 7 8; do head -c $((i * 700000)) /dev/urandom >"$src/d/f$i"; done
printf 'mine\n' >"$mnt/.sweep-tmp.notes" # looks like a temporary, is not one

for sig in INT TERM HUP; do
	for tool in sync cp; do
		dst=$mnt/$tool-$sig
		rm -rf "$dst"
		if [ $tool = sync ]; then
			pause_at bytes:1000000 "$SYNC" -rt "$src/" "$dst/" 2>"$LOOPFS_WORK/err" || { fail "$tool $sig: no pause"; continue; }
		else
			pause_at bytes:1000000 "$CP" -r "$src" "$dst" 2>"$LOOPFS_WORK/err" || { fail "$tool $sig: no pause"; continue; }
		fi
		left=$(find "$mnt" -name '.sweep-tmp.*' ! -name .sweep-tmp.notes | wc -l)
		[ "$left" -ge 1 ] || fail "$tool $sig: no named temporary while paused mid-file"
		kill -$sig "$PAUSED_PID"
		rc=0
		resume || rc=$?
		want=20
		[ $tool = cp ] && want=$((128 + $(kill -l $sig)))
		[ "$rc" = "$want" ] || fail "$tool $sig: exit $rc, want $want: $(cat "$LOOPFS_WORK/err")"
		left=$(find "$mnt" -name '.sweep-tmp.*' ! -name .sweep-tmp.notes)
		[ -z "$left" ] || fail "$tool $sig: temporaries left: $left"
		for f in "$dst"/d/f*; do
			[ -e "$f" ] || continue
			cmp -s "$f" "$src/d/$(basename "$f")" || fail "$tool $sig: a final name holds a partial file: $f"
		done
		echo "ok: $tool SIG$sig mid-file: exit $rc, no temporary left"
	done
done
"$SYNC" -rt "$src/" "$mnt/sync-TERM/" || fail "the re-run after the signals"
diff -r "$src" "$mnt/sync-TERM" || fail "the re-run did not converge"
[ "$(cat "$mnt/.sweep-tmp.notes")" = mine ] || fail "a name that only looks like a temporary was removed"
echo "$fails failed"
[ $fails = 0 ]
