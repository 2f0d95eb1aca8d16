#!/bin/bash
# SPDX-License-Identifier: MIT
# What coreutils' own tests/du catches (issue 28), against GNU du: -t and
# --threshold with 0 in every spelling (no threshold; -0 is refused),
# negative and unit thresholds, bad ones named as given (tests/du/threshold.sh);
# du -L down a chain of more symlinks than the kernel follows in one path:
# "cannot access ...: Too many levels of symbolic links" at the first entry
# past the limit, exit 1, the sizes above it as du gives them
# (tests/du/long-sloop.sh).
set -u
. "$TESTS_DIR/du/lib.sh"

t=$DU_TMP/t
mkdir -p "$t/a/b" "$t/a/c"
for i in 0 1 2 3; do head -c $((i * 3000)) /dev/zero >"$t/a/b/$i"; done
cd "$t" || die "cd"

note "thresholds"
for th in 0 00 0K 0KiB -0 -0K 1 4K 8K -4K -8K 1M 0x 0B x ''; do
	du_same -a -t "$th" a
	du_same -a --threshold="$th" a
	du_same -a --threshold="$th" -S a
done
du_same -a --thr=0 a
du_same -a -t0 --apparent-size a

note "a chain of 60 symlinks under -L (the kernel follows 40 in one path)"
mkdir "$t/chain" && cd "$t/chain" || die "cd"
mkdir $(seq 60) || die "mkdir"
for i in $(seq 60); do ln -s ../$((i + 1)) $i/s || die "ln"; done
echo foo >61
du_same -L 1
du_same -L -a 1
du_same -L -s 1
du_same -L -a 20
du_same -P -a 1
du_same -a 1/s/s/s
finish
