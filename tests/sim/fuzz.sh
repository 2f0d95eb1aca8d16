#!/bin/bash
# fuzz.sh FORMAT FUZZER SECONDS: the kept crash inputs of FORMAT first (each must
# now pass), then SECONDS of fuzzing from the format's sample traces, in bounded
# memory (-rss_limit_mb, -malloc_limit_mb). Exit 77 when the fuzzer was not built
# (no clang with libFuzzer). A longer run: tests/sim/README.
set -euo pipefail
fmt=$1 bin=$2 secs=${3:-3}
[ -n "$bin" ] && [ -x "$bin" ] || { echo "SKIP: no libFuzzer target (clang with libFuzzer missing)"; exit 77; }
D=${SOURCE_ROOT:-$(dirname "$0")/../..}/tests/sim/data
work=$(mktemp -d "${TMPDIR:-/tmp}/sim-fuzz-$fmt.XXXXXX")
trap 'rm -rf "$work"' EXIT
. "${SOURCE_ROOT:-$(dirname "$0")/../..}/tests/common/fuzz-corpus.sh"
opts=(-rss_limit_mb=512 -malloc_limit_mb=256 -timeout=10 -max_len=8192)
crashes=("$D/fuzz/$fmt"/*)
if [ -e "${crashes[0]}" ]; then
	"$bin" "${opts[@]}" "${crashes[@]}" >"$work/regress.log" 2>&1 || { cat "$work/regress.log" >&2; echo "FAIL: a kept crash input of $fmt fails again" >&2; exit 1; }
fi
mkdir "$work/corpus"
cp "$D/$fmt"-*.txt "$work/corpus/" 2>/dev/null || true
[ ! -e "${crashes[0]}" ] || cp "${crashes[@]}" "$work/corpus/"
# Longer or random runs: tests/sim/README.
fuzz_corpus "$bin" "$work" "$fmt" "keep it in tests/sim/data/fuzz/$fmt/" "$secs" "${opts[@]}"
echo ok
