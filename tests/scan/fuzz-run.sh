#!/bin/bash
# SPDX-License-Identifier: MIT
# Run the metascan libFuzzer target for a fixed number of inputs from a fixed
# seed (reproducible). Skips (77) when it was not built: it needs clang with
# libFuzzer (see tests/scan/meson.build).
#   fuzz-run.sh FUZZER [RUNS]
. "${TESTS_DIR:?}/common/lib.sh"
set -u
FUZZ=${1:-}
RUNS=${2:-20000}
[ -n "$FUZZ" ] && [ -x "$FUZZ" ] || skip "no fuzzer binary (clang with -fsanitize=fuzzer is needed)"
FUZZ=$(cd "$(dirname "$FUZZ")" && pwd)/$(basename "$FUZZ")
scratch WORK fuzz-metascan
cd "$WORK" || die "cannot enter $WORK"
# a few seeds: no edit on each image, with and without checksums
mkdir corpus
printf '\000' >corpus/seed0
printf '\001' >corpus/seed1
printf '\002' >corpus/seed2
printf '\003' >corpus/seed3
"$FUZZ" -seed=1 -runs="$RUNS" -max_len=257 -artifact_prefix="$WORK/" corpus 2>"$WORK/log"
rc=$?
tail -3 "$WORK/log" >&2
if [ $rc != 0 ]; then
	for f in "$WORK"/crash-* "$WORK"/leak-* "$WORK"/timeout-*; do
		[ -e "$f" ] && { note "the input that stopped it:"; od -An -tx1 "$f" | head -5 >&2; }
	done
	grep -E 'ERROR|runtime error|#[0-9]+ ' "$WORK/log" | head -20 >&2
	die "the fuzzer stopped with $rc"
fi
ok "$RUNS inputs from seed 1: no crash, leak, timeout or undefined behaviour"
finish
