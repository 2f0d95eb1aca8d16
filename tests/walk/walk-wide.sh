#!/bin/bash
# SPDX-License-Identifier: MIT
# 100,000 entries in one directory (files, a few subdirectories and
# symlinks): found exactly once each, as find finds them, in C-SCAN order
# the entries come out by inode. The tree takes a while to make, so this
# one test runs both statx backends on it.
. "$TESTS_DIR/walk/lib.sh"
walk_setup syscall

walk_fast_dir wide
r=$FAST
python3 - "$r" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
for i in range(100000):
    if i % 10000 == 0:
        os.mkdir("sub%06d" % i, dir_fd=fd)
        os.close(os.open("sub%06d/inner" % i, os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd))
    elif i % 997 == 0:
        os.symlink("f%06d" % (i - 1), "l%06d" % i, dir_fd=fd)
    else:
        os.close(os.open("f%06d" % i, os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd))
PY
find "$r" -print0 >"$T/find"
n=$(tr -cd '\0' <"$T/find" | wc -c)
[ "$n" -gt 100000 ] || die "only $n entries"
# Per backend: the C-SCAN walk (its -l listing gives the set too: no name
# here has a space or newline) and one depth-first order.
# The last pass has the read-ahead threads load the directories (the wide one
# is stat'ed partly by a thread, partly by the walk).
backends="syscall threads"
have_uring && backends="uring syscall threads" || skip_part "the io_uring walk: not available here"
for variant in $backends; do
	SWEEP_BACKEND=$variant
	unset SWEEP_WALK_THREADS
	if [ $variant = threads ]; then
		export SWEEP_WALK_THREADS=8
		SWEEP_BACKEND=syscall
		have_uring && SWEEP_BACKEND=uring
	fi
	export SWEEP_BACKEND
	"$W" -l --order=inode "$r" >"$T/long" 2>"$T/err" || { head -5 "$T/err" >&2; die "$SWEEP_BACKEND -l"; }
	walk_check_backend "$T/err"
	walk_check_ahead "$T/err"
	awk '{ printf "%s%c", $7, 0 }' "$T/long" >"$T/walk"
	same_set "$T/find" "$T/walk" || die "$SWEEP_BACKEND --order=inode"
	# Inode order inside the big directory: the inode column of its direct entries ascends.
	awk '$1 == 1 { if ($5 < last) bad++; last = $5 } END { exit bad ? 1 : 0 }' "$T/long" ||
		die "$SWEEP_BACKEND: entries of the wide directory not in inode order"
	# dirent_index: a permutation of 0..N-1 for the big directory.
	awk '$1 == 1 { print $4 }' "$T/long" | sort -n | awk '$1 != NR - 1 { bad = 1 } END { exit bad }' ||
		die "$SWEEP_BACKEND: dirent_index is not a permutation"
	order=name
	[ "$SWEEP_BACKEND" = syscall ] && order=none
	"$W" -0 --order=$order "$r" >"$T/walk" 2>"$T/err" || { head -5 "$T/err" >&2; die "$SWEEP_BACKEND --order=$order failed"; }
	same_set "$T/find" "$T/walk" || die "$SWEEP_BACKEND --order=$order"
done
ok "$n entries"
finish
