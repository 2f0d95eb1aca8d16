#!/bin/bash
# SPDX-License-Identifier: MIT
# sweep-sync against an attacker who swaps things after the scan, while the
# files are written, and just before --delete runs (tests/race/lib.sh).
. "$TESTS_DIR/race/lib.sh"
SYNC=$BUILD_ROOT/utils/sweep-sync

# A destination from an earlier sync, with an extraneous file where --delete will look.
synced_world() {
	world
	"$SYNC" -a "$W/src/" "$W/pub/dst/" || die "the first sync"
	printf 'stale\n' >"$W/pub/dst/d/important.db" # victim/ has one too
	chown 65534:65534 "$W/pub/dst/d/important.db"
	printf 'changed g\n' >"$W/src/d/g" # so the next run writes into d
	touch -d '2001-01-01' "$W/src/d/g"
	chown 65534:65534 "$W/src/d/g"
}

for backend in $(race_backends); do
export SWEEP_BACKEND=$backend # both reader backends
# copies made on the caller's thread, and every one on the engine's writer thread
for copy in serial thread; do
export SWEEP_TEST_COPY=$copy
for ((iter = 0; iter < ITERATIONS; iter++)); do
	for del in "" --delete; do
		CASE="sync ($backend, $copy) $del: destination directory -> symlink outside, after the scan"
		synced_world
		run_paused walk 'mv pub/dst/d pub/dst/d.old && ln -s ../../victim pub/dst/d' "$SYNC" -ai $del src/ pub/dst/
		expect "exit 23" [ "$RC" = 23 ]
		expect "no deletion in the symlink's target" [ -e "$W/victim/important.db" ]
		expect "says the way is a symlink" said "Too many levels of symbolic links"
		[ -n "$del" ] && expect "deletions were skipped after the errors" grep -q 'skipping file deletion' <<<"$OUT"
		check_outside

		CASE="sync ($backend, $copy) $del: destination directory -> symlink outside, while a file is written"
		synced_world
		run_paused write:1 'mv pub/dst/d pub/dst/d.old && ln -s ../../victim pub/dst/d' "$SYNC" -ai $del src/ pub/dst/
		expect "exit 23" [ "$RC" = 23 ]
		expect "says the directory changed under it" said "(replaced|Too many levels of symbolic links)"
		check_outside

		CASE="sync ($backend, $copy) $del: source file -> symlink to a root-only secret"
		synced_world
		run_paused walk 'rm src/d/g && ln -s ../../secret/shadow src/d/g' "$SYNC" -ai $del src/ pub/dst/
		expect "exit 23" [ "$RC" = 23 ]
		expect "says the file was replaced" said "src/d/g'?: replaced since the scan; not transferred"
		expect "the old copy stays" [ "$(cat "$W/pub/dst/d/g")" = g-data ]
		check_outside

		CASE="sync ($backend, $copy) $del: source directory -> symlink to the secret's directory"
		synced_world
		run_paused walk 'mv src/d src/d.gone && ln -s ../secret src/d' "$SYNC" -ai $del src/ pub/dst/
		expect "exit 23" [ "$RC" = 23 ]
		expect "nothing under d was deleted" [ -e "$W/pub/dst/d/h" ]
		check_outside

		CASE="sync ($backend, $copy) $del: source file -> another file"
		synced_world
		run_paused walk 'printf evil >src/d/g.new && mv -f src/d/g.new src/d/g' "$SYNC" -ai $del src/ pub/dst/
		expect "exit 23" [ "$RC" = 23 ]
		expect "the old copy stays" [ "$(cat "$W/pub/dst/d/g")" = g-data ]
		check_outside

		CASE="sync ($backend, $copy) $del: destination root -> symlink outside"
		synced_world
		run_paused walk 'mv pub/dst pub/dst.old && ln -s ../victim pub/dst' "$SYNC" -ai $del src/ pub/dst/
		expect "exit 0" [ "$RC" = 0 ]
		expect "the sync went where it began" same_file "$W/src/d/g" "$W/pub/dst.old/d/g"
		[ -n "$del" ] && expect "--delete ran there" [ ! -e "$W/pub/dst.old/d/important.db" ]
		check_outside
	done

	CASE="sync ($backend, $copy) --delete: destination directory -> symlink outside, just before the deletions"
	synced_world
	printf 'changed g\n' >"$W/pub/dst/d/g" # nothing to transfer: the run goes straight to --delete
	touch -r "$W/src/d/g" "$W/pub/dst/d/g"
	run_paused delete 'mv pub/dst/d pub/dst/d.old && ln -s ../../victim pub/dst/d' "$SYNC" -ai --delete src/ pub/dst/
	expect "exit 23" [ "$RC" = 23 ]
	expect "no deletion in the symlink's target" [ -e "$W/victim/important.db" ]
	expect "says the way is a symlink" said "important.db.*Too many levels of symbolic links"
	check_outside
done
done
done
unset SWEEP_TEST_COPY

# Not races, but from the same review.
CASE="sync: a DEST-only name that looks like a temporary is kept without --delete"
world
"$SYNC" -a "$W/src/" "$W/pub/dst/"
printf 'my notes\n' >"$W/pub/dst/.sweep-tmp.notes.txt"
"$SYNC" -a "$W/src/" "$W/pub/dst/"
expect "it is still there" [ "$(cat "$W/pub/dst/.sweep-tmp.notes.txt")" = "my notes" ]

CASE="sync: DEST is a symlink to a directory (used as the directory, as rsync does)"
world
mkdir -p "$W/real" "$W/rreal"
ln -s real "$W/dlink" && ln -s rreal "$W/rlink"
printf 'x\n' >"$W/real/extra" && printf 'x\n' >"$W/rreal/extra"
for args in "-a" "-a --delete"; do
	RC=0; (cd "$W" && "$SYNC" $args src/ dlink) >"$RACE_TMP/out" 2>"$RACE_TMP/err" || RC=$?
	RRC=0; (cd "$W" && rsync $args src/ rlink) >/dev/null 2>&1 || RRC=$?
	ERR=$(cat "$RACE_TMP/err")
	expect "$args: exit $RRC like rsync" [ "$RC" = "$RRC" ]
	expect "$args: nothing on stderr" [ -z "$ERR" ]
	expect "$args: copied into the directory" same_file "$W/src/d/big" "$W/real/d/big"
	expect "$args: the symlink stays" [ -L "$W/dlink" ]
	expect "$args: extra file as rsync left it" [ "$(ls "$W/real/extra" 2>/dev/null)" = "$(ls "$W/rreal/extra" 2>/dev/null | sed 's/rreal/real/')" ]
done
finish
