#!/bin/bash
# SPDX-License-Identifier: MIT
# A chain of 300 directories with 40-byte names (paths of ~12 KiB, three
# times PATH_MAX) with a file and a side directory at each level: every order
# finds what find finds, and walk-list checks that dirfd/at_name reach every
# entry (it fstatat()s each one).
. "$TESTS_DIR/walk/lib.sh"
walk_setup "$1"

walk_fast_dir deep
r=$FAST
python3 - "$r" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
for i in range(300):
    name = "level-%03d-" % i + "n" * 30
    os.mkdir(name, dir_fd=fd)
    os.close(os.open("file-%d" % i, os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd))
    os.mkdir("side-%d" % i, dir_fd=fd)
    nfd = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
    os.close(fd)
    fd = nfd
os.close(os.open("bottom", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd))
PY

find "$r" -print0 >"$T/find"
maxlen=$(tr '\0' '\n' <"$T/find" | awk '{ if (length($0) > m) m = length($0) } END { print m }')
[ "$maxlen" -gt 8192 ] || die "paths not long enough ($maxlen)"
for order in inode none name; do
	for opt in "" --no-stat; do
		"$W" -0 --order=$order $opt "$r" >"$T/walk" 2>"$T/err" || { head -5 "$T/err" >&2; die "--order=$order $opt failed"; }
		walk_check_backend "$T/err"
		same_set "$T/find" "$T/walk" || die "--order=$order $opt"
	done
done
"$W" -0 --order=none "$r" >"$T/walk-none" 2>/dev/null
same_seq "$T/find" "$T/walk-none" || die "order none is not readdir order on the deep tree"

# Depth as reported: the bottom file is 301 levels down.
"$W" -l --order=inode "$r" 2>/dev/null | awk '$NF ~ /\/bottom$/ { print $1 }' >"$T/depth"
[ "$(cat "$T/depth")" = 301 ] || die "depth of bottom: $(cat "$T/depth"), want 301"

# A low descriptor limit: the walk keeps no descriptor per pending directory.
( ulimit -n 40 && "$W" -0 --order=inode "$r" >"$T/walk-fd" 2>"$T/err-fd" ) || { head "$T/err-fd" >&2; die "C-SCAN walk with 40 fds"; }
same_set "$T/find" "$T/walk-fd" || die "C-SCAN walk with 40 fds"
( ulimit -n 80 && "$W" -0 --order=none "$r" >"$T/walk-fd2" 2>"$T/err-fd2" ) || { head "$T/err-fd2" >&2; die "depth-first walk with 80 fds"; }
same_set "$T/find" "$T/walk-fd2" || die "depth-first walk with 80 fds"
ok "longest path $maxlen bytes"
finish
