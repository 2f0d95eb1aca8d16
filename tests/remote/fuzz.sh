#!/bin/bash
# SPDX-License-Identifier: MIT
# fuzz.sh FUZZER SECONDS: the wire decoders' libFuzzer target
# (tests/remote/fuzz/fuzz_wire.c) from fakepeer.py's seed streams, a fixed
# seed and number of runs (FUZZ_SEED=random for a fresh one), in bounded
# memory. Exit 77 when the fuzzer was not built (no clang with libFuzzer).
set -euo pipefail
bin=$1 secs=${2:-3}
[ -n "$bin" ] && [ -x "$bin" ] || { echo "SKIP: no libFuzzer target (clang with libFuzzer missing)"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/wire-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
python3 "${SOURCE_ROOT:-$(dirname "$0")/../..}/tests/remote/fakepeer.py" --corpus "$work/corpus"
seed=${FUZZ_SEED:-1}
[ "$seed" = random ] && seed=0
"$bin" -rss_limit_mb=512 -malloc_limit_mb=256 -timeout=10 -max_len=16384 -seed="$seed" \
	-runs=$((secs * 2500)) -max_total_time=$((secs * 10)) -artifact_prefix="$work/" "$work/corpus" \
	>"$work/fuzz.log" 2>&1 || {
	tail -40 "$work/fuzz.log" >&2
	for f in "$work"/crash-* "$work"/timeout-* "$work"/oom-*; do
		[ -e "$f" ] && { echo "input $(basename "$f") (base64):" >&2; base64 "$f" >&2; }
	done
	echo "FAIL: fuzzing the wire (seed $seed) found a crash" >&2
	exit 1
}
grep -E "^Done [0-9]+ runs" "$work/fuzz.log" || true
echo ok
