#!/bin/bash
# SPDX-License-Identifier: MIT
# sweep-tar against an attacker (uid 65534) who swaps things between the
# walk and the reads (tests/race/lib.sh). The archive goes to out/a.tar; the
# secret must never be in it, it must stay readable by GNU tar, and no
# member may carry another file's metadata.
#
# What GNU tar 1.34 does in the same cases was checked by hand: GNU tar
# stopped (an LD_PRELOAD SIGSTOP) at its openat() of the file, after its
# fstatat(), the attacker swapped, GNU tar went on. GNU tar opens each file
# O_NOFOLLOW below the directory descriptor it holds, then fstats the fd.
#   (a) file -> symlink to the secret: "src/d/g: Cannot open: Too many levels
#       of symbolic links", exit 2. sweep-tar: the same.
#   (b) directory -> symlink: GNU tar still holds the old directory open and
#       archives its files from there (only "src/d: file changed as we read
#       it", exit 1). sweep-tar reopens each file below the walk root without
#       following symlinks, so it cannot reach them any more: "Cannot open:
#       Too many levels of symbolic links" for each, exit 2.
#   (c) file -> another regular file: GNU tar archives the new file with its
#       own metadata (exit 1, for the directory). sweep-tar's reader refuses
#       a file it did not plan: "file changed as we read it; not dumped",
#       exit 1; nothing of either file is archived.
#   (d) file removed: "File removed before we read it", exit 1 (both).
#   (e) shrank or grew before the open: GNU tar fstats after its open, so
#       it archives the new size and says nothing (exit 0); sweep-tar in
#       the HDD class compares with the size the plan found when it located
#       the file: "file changed as we read it", exit 1. In the SSD class
#       nothing stats a regular file before the reader opens it (the walk
#       leaves them to the reader's fstat, the plan does not locate): as
#       GNU tar, the new size and nothing said, exit 0. Shrank while read (sweep-tar paused with the file open and its
#       header size taken): "File shrank by N bytes; padding with zeros" as
#       in GNU tar, or, when io_uring had already read it all,
#       "file changed as we read it"; exit 1 either way.
. "$TESTS_DIR/race/lib.sh"
TAR=$BUILD_ROOT/utils/sweep-tar
A=out/a.tar

# GNU tar reads the whole archive, and lists it as "mode owner size name" (plus the checks' own words).
valid() { tar -tf "$W/$A" >/dev/null 2>&1; }
listing() { tar -tvf "$W/$A" --numeric-owner 2>/dev/null | awk '{print $1, $2, $3, $6}'; }
member() { grep -Eq -- " $1\$" <<<"$(listing)"; }
no_member() { ! member "$1"; }
not_said() { ! said "$1"; }
# the member NAME holds exactly the bytes of FILE (saved before the attack)
member_is() { cmp -s <(tar -xOf "$W/$A" "$1" 2>/dev/null) "$2"; }
# NAME's header: mode, owner/group, size as FILE had them (FILE saved before the attack)
meta_of() { [ "$(stat -c '%A %u/%g %s' "$2")" = "$(listing | awk -v n="$1" '$4 == n {print $1, $2, $3}')" ]; }

# the member NAME holds a prefix of OLD (at least MIN bytes, as read before the file was cut), then zeros
old_then_zeros() {
	tar -xOf "$W/$A" "$1" 2>/dev/null | python3 -c '
import sys
have, old, least = sys.stdin.buffer.read(), open(sys.argv[1], "rb").read(), int(sys.argv[2])
k = next((i for i in range(len(have)) if have[i] != old[i]), len(have)) if len(have) == len(old) else -1
sys.exit(0 if k >= least and have[k:].count(0) == len(have) - k else 1)' "$2" "$3"
}

for backend in $(race_backends); do
export SWEEP_BACKEND=$backend # both reader backends
for ((iter = 0; iter < ITERATIONS; iter++)); do
	CASE="tar ($backend): (a) file -> symlink to a root-only secret"
	world
	run_paused plan 'rm src/d/g && ln -s ../../secret/shadow src/d/g' "$TAR" -cf $A src
	expect "exit 2" [ "$RC" = 2 ]
	expect "says what GNU tar says" said "^sweep-tar: src/d/g: Cannot open: Too many levels of symbolic links$"
	expect "no member src/d/g" no_member src/d/g
	expect "the rest is archived" member_is src/d/big "$W/src/d/big"
	expect "GNU tar reads the archive" valid
	check_outside

	CASE="tar ($backend): (b) directory -> symlink to the secret's directory"
	world
	run_paused plan 'mv src/d src/d.gone && ln -s ../secret src/d' "$TAR" -cf $A src
	expect "exit 2" [ "$RC" = 2 ]
	expect "says it for each of its files" said "^sweep-tar: src/d/h: Cannot open: Too many levels of symbolic links$"
	expect "no member from it" no_member 'src/d/(g|h|big)'
	expect "the other directory is archived" member_is src/e/f6 "$W/src/e/f6"
	expect "GNU tar reads the archive" valid
	check_outside

	CASE="tar ($backend): (b') directory -> symlink, deeper files planned below it"
	world
	mkdir -p "$W/src/d/sub" && printf 'deep\n' >"$W/src/d/sub/k" && chown -R 65534:65534 "$W/src/d/sub"
	run_paused plan 'mv src/d src/d.gone && mkdir src/d && ln -s ../../secret src/d/sub' "$TAR" -cf $A src
	expect "exit 2" [ "$RC" = 2 ]
	expect "says the way holds a symlink" said "^sweep-tar: src/d/sub/k: Cannot open: Too many levels of symbolic links$"
	expect "GNU tar reads the archive" valid
	check_outside

	CASE="tar ($backend): (c) file -> another file (the attacker's)"
	world
	cp -p "$W/src/d/g" "$RACE_TMP/g.before"
	run_paused plan 'printf evil-and-longer >src/d/g.new && chmod 4755 src/d/g.new && mv -f src/d/g.new src/d/g' \
		"$TAR" -cf $A src
	expect "exit 1" [ "$RC" = 1 ]
	expect "says the file changed" said "^sweep-tar: src/d/g: file changed as we read it; not dumped$"
	expect "no member src/d/g (neither file's data under the other's header)" no_member src/d/g
	expect "the others keep their own metadata" meta_of src/d/h "$W/src/d/h"
	expect "GNU tar reads the archive" valid
	check_outside

	CASE="tar ($backend): (d) file removed"
	world
	run_paused plan 'rm src/d/g' "$TAR" -cf $A src
	expect "exit 1" [ "$RC" = 1 ]
	expect "says what GNU tar says" said "^sweep-tar: src/d/g: File removed before we read it$"
	expect "no member src/d/g" no_member src/d/g
	expect "GNU tar reads the archive" valid
	check_outside

	CASE="tar ($backend): (e) file shrank and grew before it was opened"
	world
	run_paused plan 'truncate -s 1000 src/d/big && printf more >>src/d/h' "$TAR" -cf $A src
	if [ "${SWEEP_DEVICE:-}" = ssd ]; then
		expect "exit 0, as GNU tar" [ "$RC" = 0 ]
		expect "says nothing of big, as GNU tar" not_said "src/d/big"
		expect "says nothing of h, as GNU tar" not_said "src/d/h"
	else
		expect "exit 1" [ "$RC" = 1 ]
		expect "says big changed" said "^sweep-tar: src/d/big: file changed as we read it$"
		expect "says h changed" said "^sweep-tar: src/d/h: file changed as we read it$"
	fi
	expect "big archived as it was opened" member_is src/d/big "$W/src/d/big"
	expect "h archived as it was opened" member_is src/d/h "$W/src/d/h"
	expect "GNU tar reads the archive" valid
	check_outside

	CASE="tar ($backend): (e) file shrank while read"
	world
	head -c $((8 << 20)) /dev/urandom >"$W/src/d/big"
	cp "$W/src/d/big" "$RACE_TMP/big.before"
	# Pause once big is open and checked (its header size taken): the first file of --order=name in src/d.
	run_paused read:1 'truncate -s 4096 src/d/big' "$TAR" -cf $A --order=name src/d
	expect "exit 1" [ "$RC" = 1 ]
	expect "says it shrank or changed" said "^sweep-tar: src/d/big: (File shrank by [0-9]+ bytes; padding with zeros|file changed as we read it)$"
	expect "the member keeps its header size" [ "$(listing | awk '$4 == "src/d/big" {print $3}')" = $((8 << 20)) ]
	expect "its bytes: the old ones up to where it was cut (at least the 4096 left), then zeros" \
		old_then_zeros src/d/big "$RACE_TMP/big.before" 4096
	expect "GNU tar reads the archive" valid
	check_outside

	CASE="tar ($backend): hard links, both names -> symlinks to the secret (the second is opened late)"
	world
	ln "$W/src/d/g" "$W/src/d/g2"
	run_paused plan 'for n in g g2; do rm src/d/$n && ln -s ../../secret/shadow src/d/$n; done' "$TAR" -cf $A src
	expect "exit 2" [ "$RC" = 2 ]
	expect "says it for g" said "^sweep-tar: src/d/g: Cannot open: Too many levels of symbolic links$"
	expect "says it for g2" said "^sweep-tar: src/d/g2: Cannot open: Too many levels of symbolic links$"
	expect "neither is archived" no_member 'src/d/g2?'
	expect "GNU tar reads the archive" valid
	check_outside

	CASE="tar ($backend): hard links, the first name -> symlink, the second archived in its place"
	world
	ln "$W/src/d/g" "$W/src/d/g2"
	cp "$W/src/d/g" "$RACE_TMP/g.before"
	run_paused plan 'rm src/d/g && ln -s ../../secret/shadow src/d/g' "$TAR" -cf $A src
	expect "exit 2" [ "$RC" = 2 ]
	expect "says it for g" said "^sweep-tar: src/d/g: Cannot open: Too many levels of symbolic links$"
	expect "g2 holds g's data" member_is src/d/g2 "$RACE_TMP/g.before"
	expect "GNU tar reads the archive" valid
	check_outside
done
done
finish
