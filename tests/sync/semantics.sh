#!/bin/bash
# SPDX-License-Identifier: MIT
# rsync's command-line meaning, checked against rsync itself: SRC with and
# without a trailing slash, DEST missing or present, a single file to a new
# name, options that leave types out, --exclude with --delete, -ii, errors.
. "$TESTS_DIR/sync/lib.sh"

S=$W/src
mkdir -p "$S/sub/deep" "$S/obj" "$S/keep"
printf 'a\n' >"$S/a"
printf 'b\n' >"$S/sub/b.c"
printf 'o\n' >"$S/sub/b.o"
printf 'd\n' >"$S/sub/deep/d.o"
printf 'k\n' >"$S/keep/k"
printf 'x\n' >"$S/obj/x"
ln -s a "$S/lnk"
mkfifo "$S/fifo"
touch -d '2012-01-01 01:01:01' "$S/a"
touch -d '2013-01-01 01:01:01' "$S/sub/b.c"
touch -d '2015-05-05 05:05:05' "$S/sub"

# trailing slash on SRC, DEST missing or present
run_args "SRC/ into a new DEST" ../src/ d1 -a -i
run_args "SRC into a new DEST" ../src d2 -a -i
run_args "SRC into an existing DEST" ../src d2 -a -i
run_args "SRC/. like SRC/" ../src/. d3 -a -i
run_args "SRC/ into DEST/" ../src/ d4/ -a -i
# a single file: to a new name, into a directory, into DEST/ that is missing
run_args "file to a new name" ../src/a newname -a -i
run_args "file into a directory" ../src/a d1 -a -i
run_args "file into a missing DEST/" ../src/sub/b.c newdir/ -a -i
run_args "file over an existing file" ../src/sub/b.c newname -a -i
# what -a leaves in or out
# (without -t the files get the time of the copy: compare everything else)
COMPARE_OPTS="--no-root-time --no-times" run_args "-r without -l or -D" ../src/ d5 -r -i
COMPARE_OPTS="--no-root-time --no-times" run_args "no -r: directories skipped" ../src/ d6 -i
COMPARE_OPTS="--no-root-time --no-times" run_args "no -r, DEST/" ../src/ d6/ -i
run_args "no -r, SRC without slash" ../src d7 -lptgoD -i
run_args "-rt only" ../src/ d8 -rt -i
run_args "-rlpt, then -ii" ../src/ d9 -rlpt -i
run_args "-ii lists unchanged items" ../src/ d9 -rlpt -ii

# --exclude, rsync's rules, and excluded files survive --delete
run_args "excludes" ../src/ d10 -a -i --exclude='*.o' --exclude=/obj --exclude='keep/'
printf 'old\n' >"$W/r/d10/junk.o"
printf 'gone\n' >"$W/r/d10/stale"
cp -a "$W/r/d10/junk.o" "$W/r/d10/stale" "$W/s/d10/"
run_args "excludes with --delete" ../src/ d10 -a -i --delete --exclude='*.o' --exclude=/obj --exclude='keep/'
[ -e "$W/s/d10/junk.o" ] || die "--delete removed an excluded file"
[ ! -e "$W/s/d10/stale" ] || die "--delete left an extraneous file"

# anchored and wildcard patterns when SRC has no slash (the transfer root is its parent)
k=0
for pat in /src/sub sub/ /sub 'sub/b*' '**/d.o' 'src/sub/***' '*.[co]'; do
	k=$((k + 1))
	run_args "--exclude=$pat" ../src dx$k -a -i --exclude="$pat"
done

# names rsync escapes in its output: control bytes, "\#ddd", bytes the locale's charset lacks
N=$W/names
mkdir -p "$N"
for n in $'new\nline' 'back\#123slash' $'tab\there' $'\x7fdel' $'\xc3\xbc' $'bad\xff' $'\xed\xa0\x80surrogate'; do
	printf 'x' >"$N/$n"
done
ln -s $'\x01target' "$N/lnk"
run_args "odd names (C locale)" ../names/ dn1 -a -i
if locale -a 2>/dev/null | grep -qix 'c.utf-\?8'; then
	LC_ALL=C.UTF-8 run_args "odd names (C.UTF-8 locale)" ../names/ dn2 -a -i
fi

# errors: a missing source gives 23 as in rsync
run_args "missing SRC" ../nonexistent d11 -a -i
grep -q 'nonexistent.*No such file or directory' "$W/s.err" || die "no clear error for a missing SRC"

# -v names the transferred files (operands.sh compares -v with rsync, header and totals too)
rm -rf "$W/r" "$W/s"
mkdir -p "$W/s"
(cd "$W/s" && "$SYNC" -av ../src/ dv) >"$W/v.out" || die "-v failed"
for n in a sub/b.c keep/k 'lnk -> a'; do
	grep -qxF "$n" "$W/v.out" || die "-v did not name $n: $(cat "$W/v.out")"
done

# usage
"$SYNC" --help | grep -q 'Usage: sweep-sync' || die "--help"
"$SYNC" --version | grep -q 'sweep' || die "--version"
rc=0; "$SYNC" -a 2>/dev/null || rc=$?
[ $rc = 1 ] || die "missing operands: exit $rc, want 1"
rc=0; "$SYNC" --no-such-option a b 2>/dev/null || rc=$?
[ $rc = 1 ] || die "unknown option: exit $rc, want 1"

finish
