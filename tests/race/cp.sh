#!/bin/bash
# SPDX-License-Identifier: MIT
# sweep-cp against an attacker who swaps things between the walk and the
# reads, and in the destination while it is written (tests/race/lib.sh).
. "$TESTS_DIR/race/lib.sh"
CP=$BUILD_ROOT/utils/sweep-cp

for backend in $(race_backends); do
export SWEEP_BACKEND=$backend # both reader backends
# copies made on the caller's thread, and every one on the engine's writer thread
for copy in serial thread; do
export SWEEP_TEST_COPY=$copy
for ((iter = 0; iter < ITERATIONS; iter++)); do
	CASE="cp ($backend, $copy): source file -> symlink to a root-only secret"
	world
	run_paused plan 'rm src/d/g && ln -s ../../secret/shadow src/d/g' "$CP" -a src pub/dst/
	expect "exit 1" [ "$RC" = 1 ]
	expect "says the file was replaced" said "'src/d/g' was replaced during the copy; not copied"
	expect "no copy of it" [ ! -e "$W/pub/dst/src/d/g" ]
	expect "the rest is copied" same_file "$W/src/d/big" "$W/pub/dst/src/d/big"
	check_outside

	CASE="cp ($backend, $copy): source directory -> symlink to the secret's directory"
	world
	run_paused plan 'mv src/d src/d.gone && ln -s ../secret src/d' "$CP" -a src pub/dst/
	expect "exit 1" [ "$RC" = 1 ]
	expect "says its files were replaced" said "'src/d/h' was replaced during the copy"
	expect "the other directory is copied" same_file "$W/src/e/f6" "$W/pub/dst/src/e/f6"
	check_outside

	CASE="cp ($backend, $copy): source file -> another file (the attacker's)"
	world
	run_paused plan 'printf evil >src/d/g.new && mv -f src/d/g.new src/d/g' "$CP" -a src pub/dst/
	expect "exit 1" [ "$RC" = 1 ]
	expect "says the file was replaced" said "'src/d/g' was replaced during the copy"
	expect "no copy of it" [ ! -e "$W/pub/dst/src/d/g" ]
	check_outside

	CASE="cp ($backend, $copy): source file -> directory"
	world
	run_paused plan 'rm src/d/g && mkdir src/d/g' "$CP" -a src pub/dst/
	expect "exit 1" [ "$RC" = 1 ]
	expect "says the file was replaced" said "'src/d/g' was replaced during the copy"
	check_outside

	CASE="cp ($backend, $copy): destination directory -> symlink outside (before the reads)"
	world
	"$CP" -a "$W/src" "$W/pub/dst/" # a previous copy: dst/src/d belongs to the attacker, like src/d
	run_paused plan 'mv pub/dst/src/d pub/dst/src/d.old && ln -s ../../../victim pub/dst/src/d' "$CP" -a src pub/dst/
	expect "exit 1" [ "$RC" = 1 ]
	expect "says the way is a symlink" said "cannot create regular file 'pub/dst/src/d/g': Too many levels of symbolic links"
	expect "the other directory is copied" same_file "$W/src/e/f1" "$W/pub/dst/src/e/f1"
	check_outside

	CASE="cp ($backend, $copy): destination directories -> symlinks outside (a copy complete, not yet in place)"
	world
	"$CP" -a "$W/src" "$W/pub/dst/"
	chown 65534:65534 "$W/pub/dst/src/e"
	run_paused write:1 'for d in d e; do mv pub/dst/src/$d pub/dst/src/$d.old && ln -s ../../../victim pub/dst/src/$d; done' \
		"$CP" -a src pub/dst/
	expect "exit 1" [ "$RC" = 1 ]
	expect "says a directory was replaced or is a symlink" \
		said "(was replaced during the copy|Too many levels of symbolic links)"
	check_outside

	# The engine keeps a destination directory open between the files of one
	# directory: a directory moved away under it must never get a name.
	CASE="cp ($backend, $copy): destination directories moved away and made again (the first copy not yet in place)"
	world
	"$CP" -a "$W/src" "$W/pub/dst/" # the directories as a previous copy left them (the attacker's), empty
	rm -f "$W"/pub/dst/src/[de]/*
	chown 65534:65534 "$W/pub/dst/src/e"
	run_paused write:1 'for d in d e; do mv pub/dst/src/$d pub/dst/src/$d.old && mkdir pub/dst/src/$d; done' \
		"$CP" -a src pub/dst/
	expect "nothing named in the directories moved away" \
		[ -z "$(find "$W/pub/dst/src/d.old" "$W/pub/dst/src/e.old" -mindepth 1 -print -quit)" ]
	# The paused copy, made before the swap, is named in the new directory or
	# refused as replaced (which, depends on whether its directory came from
	# the cache); every other file is copied into the new directories.
	replaced=$(grep -c "was replaced during the copy" <<<"$ERR")
	expect "every file copied into the new directories or said replaced" \
		[ "$(( $(find "$W/pub/dst/src/d" "$W/pub/dst/src/e" -type f | wc -l) + replaced ))" = 9 -a "$replaced" -le 1 ]
	expect "exit 1 only for a file said replaced" [ "$RC" = "$replaced" ]
	expect "the copies are whole" sh -c 'cd "$1/pub/dst/src" && for f in d/* e/*; do cmp -s "$f" "$1/src/$f" || exit 1; done' sh "$W"
	check_outside

	CASE="cp ($backend, $copy): destination root -> symlink outside"
	world
	run_paused plan 'mv pub/dst pub/dst.old && ln -s ../victim pub/dst' "$CP" -a src pub/dst/
	expect "exit 0" [ "$RC" = 0 ]
	expect "the copy went where the run began" same_file "$W/src/d/big" "$W/pub/dst.old/src/d/big"
	check_outside

	CASE="cp ($backend, $copy): a symlink planted in the destination tree (GNU cp writes through it)"
	world
	mkdir -p "$W/pub/dst/src/d"
	ln -s ../../../../victim/g "$W/pub/dst/src/d/g"
	RC=0
	(cd "$W" && "$CP" -r src pub/dst/) 2>"$RACE_TMP/err" || RC=$?
	expect "exit 0" [ "$RC" = 0 ]
	expect "the symlink was replaced by the copy" same_file "$W/src/d/g" "$W/pub/dst/src/d/g"
	expect "it is a file now" [ ! -L "$W/pub/dst/src/d/g" ]
	check_outside
done
done
done
unset SWEEP_TEST_COPY
finish
