# SPDX-License-Identifier: MIT
# Sourced by the libFuzzer runners (tests/sim/fuzz.sh, tests/remote/fuzz.sh).
#
# fuzz_corpus FUZZER WORK WHAT HINT SECONDS OPTION...: about SECONDS of
# fuzzing from WORK/corpus with the fuzzer's OPTIONs, from a fixed seed and
# for a fixed number of runs (FUZZ_SEED=random for a fresh one), so that the
# suite gives the same verdict every time. On a crash, timeout or OOM: the
# log's tail and each input that stopped it in base64 (HINT, when not empty,
# says where to keep it), then exit 1.
fuzz_corpus() {
	local bin=$1 work=$2 what=$3 hint=$4 secs=$5 seed=${FUZZ_SEED:-1} f
	shift 5
	[ "$seed" = random ] && seed=0
	"$bin" "$@" -seed="$seed" -runs=$((secs * 2500)) -max_total_time=$((secs * 10)) -artifact_prefix="$work/" \
		"$work/corpus" >"$work/fuzz.log" 2>&1 || {
		tail -40 "$work/fuzz.log" >&2
		for f in "$work"/crash-* "$work"/timeout-* "$work"/oom-*; do
			[ -e "$f" ] && { echo "input $(basename "$f") (base64${hint:+; $hint}):" >&2; base64 "$f" >&2; }
		done
		echo "FAIL: fuzzing $what (seed $seed) found a crash" >&2
		exit 1
	}
	grep -E "^Done [0-9]+ runs" "$work/fuzz.log" || true
}
