#!/bin/bash
# SPDX-License-Identifier: MIT
# The headline demo (./bootstrap.sh demo): how far out of disk order a plain
# walk of a real tree reads its files, and how much of that the sweep saves.
#
#   bench/demo.sh [DIR]      (default /usr/share; no root needed where FIEMAP works)
#
# The counts come from sweep-plan: the first physical byte of every regular file
# (FIEMAP), in the order a plain depth-first walk in readdir order visits them
# (what tar, cp -r and rsync do) and in the order libsweep plans them.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-/usr/share}
PLAN=${SWEEP_PLAN:-build/utils/sweep-plan}
[ -x "$PLAN" ] || { echo "demo: $PLAN not built (run ./bootstrap.sh demo)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fstype=$(findmnt -n -o FSTYPE --target "$dir" 2>/dev/null || stat -f -c %T "$dir")
echo "sweep demo: reading $dir ($fstype) in disk order"
echo

"$PLAN" --order=physical --read "$dir" >"$tmp/plan" 2>"$tmp/err" || true
# the first files of a plain walk: small batches, so it can stop as soon as enough were seen
"$PLAN" --order=none --no-compare --max-files=64 "$dir" 2>/dev/null | head -200 >"$tmp/walk" || true
grep -v -e ' summary: ' -e ' read [0-9]* files' "$tmp/err" | head -5 >&2 || true
summary=$(grep ' summary: ' "$tmp/err") || { echo "demo: sweep-plan failed:" >&2; cat "$tmp/err" >&2; exit 1; }
read_line=$(grep ' read [0-9]* files' "$tmp/err" || true)
val() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$summary"; }

files=$(val files) bytes=$(val bytes) located=$(val located)
if [ "${located:-0}" -lt 2 ]; then
	echo "This filesystem does not say where file data lives (no FIEMAP): nothing to compare."
	echo "libsweep falls back to inode order here."
	exit 0
fi

# first files of each order, with where on the disk they start
show() { # show FILE TITLE
	echo "$2"
	awk '$1 != "-" { n++; off = $1 / 1073741824; $1 = ""; $2 = ""; sub(/^  /, "");
	      printf "    at %8.3f GiB  %s\n", off, (length($0) > 60 ? "..." substr($0, length($0) - 56) : $0)
	      if (n == 6) exit }' "$1"
}
show "$tmp/walk" "A plain walk (readdir order, as tar and cp -r read) starts like this:"
show "$tmp/plan" "The sweep (libsweep physical order) starts like this:"
echo

awk -v files="$files" -v bytes="$bytes" -v located="$located" \
	-v rj="$(val readdir_jumps)" -v rs="$(val readdir_seeks)" -v rb="$(val readdir_back)" -v rt="$(val readdir_travel)" \
	-v pj="$(val plan_jumps)" -v ps="$(val plan_seeks)" -v pb="$(val plan_back)" -v pt="$(val plan_travel)" \
	-v bpe="$(val plan_bytes_per_entry)" '
function human(b) {
	split("B KiB MiB GiB TiB PiB", u, " ")
	for (i = 1; b >= 1024 && i < 6; i++) b /= 1024
	return sprintf("%.1f %s", b, u[i])
}
BEGIN {
	printf "%d regular files, %s of data; %d have a known disk location.\n\n", files, human(bytes), located
	printf "Moving from one file to the next, the disk head has to jump (the next file does not start\n"
	printf "where the last one ended) this many times:\n"
	printf "  %-28s %10s %14s %12s %14s\n", "", "jumps", "seeks (>=1MiB", "backwards", "head travel"
	printf "  %-28s %10s %14s %12s %14s\n", "", "", "or backwards)", "", ""
	printf "  %-28s %10d %14d %12d %14s\n", "plain walk (readdir order)", rj, rs, rb, human(rt)
	printf "  %-28s %10d %14d %12d %14s\n", "sweep (physical order)", pj, ps, pb, human(pt)
	if (ps > 0)
		printf "\nThe sweep seeks %.0fx less often than the plain walk (%d times instead of %d)", rs / ps, ps, rs
	else
		printf "\nThe sweep never seeks (the plain walk seeks %d times)", rs
	printf ",\nand its plan costs %d bytes of memory per file.\n", bpe
}'
if [ -n "$read_line" ]; then
	echo
	echo "Reading it all through the reader, in that order (page cache may be warm):"
	echo "  ${read_line#*: }"
fi
