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
. "${SOURCE_ROOT:-$(dirname "$0")/../..}/tests/common/fuzz-corpus.sh"
python3 "${SOURCE_ROOT:-$(dirname "$0")/../..}/tests/remote/fakepeer.py" --corpus "$work/corpus"
fuzz_corpus "$bin" "$work" "the wire" "" "$secs" -rss_limit_mb=512 -malloc_limit_mb=256 -timeout=10 -max_len=16384
echo ok
