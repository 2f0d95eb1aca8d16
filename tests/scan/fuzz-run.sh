#!/bin/bash
# SPDX-License-Identifier: MIT
# Run the metascan libFuzzer target for a fixed number of inputs from a fixed
# seed (reproducible). Skips (77) when it was not built: it needs clang with
# libFuzzer (see tests/scan/meson.build).
#   fuzz-run.sh FUZZER [RUNS]
set -u
FUZZ=${1:-}
RUNS=${2:-20000}
if [ -z "$FUZZ" ] || [ ! -x "$FUZZ" ]; then
	echo "SKIP: no fuzzer binary (clang with -fsanitize=fuzzer is needed)" >&2
	exit 77
fi
FUZZ=$(cd "$(dirname "$FUZZ")" && pwd)/$(basename "$FUZZ")
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fuzz-metascan.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1
# a few seeds: no edit on each image, with and without checksums
printf '\000' >seed0
printf '\001' >seed1
printf '\002' >seed2
printf '\003' >seed3
mkdir corpus && mv seed* corpus/
"$FUZZ" -seed=1 -runs="$RUNS" -max_len=257 -artifact_prefix="$WORK/" corpus 2>"$WORK/log"
rc=$?
tail -3 "$WORK/log" >&2
if [ $rc != 0 ]; then
	echo "FAIL: the fuzzer stopped with $rc; the input that did it:" >&2
	for f in "$WORK"/crash-* "$WORK"/leak-* "$WORK"/timeout-*; do
		[ -e "$f" ] && od -An -tx1 "$f" | head -5 >&2
	done
	grep -E 'ERROR|runtime error|#[0-9]+ ' "$WORK/log" | head -20 >&2
	exit 1
fi
exit 0
