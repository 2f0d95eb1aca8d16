#!/bin/bash
# Every trace format sweep-sim reads, on the same 128 requests captured from a
# loop device (tests/sim/data/README): the request count and bytes agree with an
# independent count of the capture, and replaying the timed formats at their
# times gives the very same model output.
set -euo pipefail
SIM=$BUILD_ROOT/utils/sweep-sim
D=$SOURCE_ROOT/tests/sim/data
work=$(mktemp -d "${TMPDIR:-/tmp}/sim-traces.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# the reference: issue events of 7,2 that move data (not flushes or discards), counted by awk
read -r want_n want_bytes < <(awk '/: block_rq_issue: 7,2 / {
	for (i = 1; i <= NF; i++) if ($i == "block_rq_issue:") k = i
	rwbs = $(k + 2); for (j = k + 3; $j !~ /\)$/; j++) ; n = $(j + 3)
	if (n > 0 && rwbs ~ /[RW]/ && rwbs !~ /^D/) { c++; b += n * 512 } } END { print c, b }' "$D/tracefs-loop.txt")
[ "$want_n" -eq 128 ] || fail "reference count $want_n"
all_n=$(grep -c ': block_rq_issue: ' "$D/tracefs-loop.txt" | tr -d ' ')

json() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(*[j[k] for k in sys.argv[2:]])' "$@"; }

# the captures' flushes (FF, no data) are modelled (below); the other formats cannot carry them,
# so the formats are compared on copies without them
for f in tracefs-loop.txt blkparse-loop.txt disksim-loop.txt spc-loop.txt msr-loop.txt plan-loop.txt; do
	grep -v ' FF ' "$D/$f" >"$work/nf-$f"
done
for f in "tracefs@7,2:tracefs-loop.txt" "auto:blkparse-loop.txt" "auto:disksim-loop.txt" "auto:spc-loop.txt" \
	"auto:msr-loop.txt"; do
	fmt=${f%%:*} file=${f#*:}
	"$SIM" replay --device hdd7200 --sched deadline --mode open --format "$fmt" --json "$work/nf-$file" >"$work/$file.json"
	read -r n bytes mode < <(json "$work/$file.json" requests bytes mode)
	[ "$n" -eq "$want_n" ] && [ "$bytes" -eq "$want_bytes" ] || fail "$file: $n requests, $bytes bytes"
	[ "$mode" = open ] || fail "$file: timed trace replayed $mode"
	grep -v '"workload"' "$work/$file.json" >"$work/$file.cmp"
	cmp -s "$work/tracefs-loop.txt.cmp" "$work/$file.cmp" || fail "$file replays differently from the tracefs capture"
done

# by default the captures with issue/complete pairs (tracefs, blkparse) replay their dependencies,
# the same for both; the formats without completions at their times
for f in "tracefs@7,2:tracefs-loop.txt:depend" "auto:blkparse-loop.txt:depend" "auto:disksim-loop.txt:open"; do
	IFS=: read -r fmt file want <<<"$f"
	"$SIM" replay --device hdd7200 --sched deadline --format "$fmt" --json "$work/nf-$file" >"$work/$file.def.json"
	read -r n mode < <(json "$work/$file.def.json" requests mode)
	[ "$n" -eq "$want_n" ] && [ "$mode" = "$want" ] || fail "$file: default replay $mode of $n requests, want $want"
done
grep -v '"workload"' "$work/tracefs-loop.txt.def.json" >"$work/t.cmp"
grep -v '"workload"' "$work/blkparse-loop.txt.def.json" | cmp -s - "$work/t.cmp" || fail "tracefs and blkparse depend differ"
set +e
"$SIM" replay --device hdd7200 --mode depend --json "$D/spc-loop.txt" >/dev/null 2>"$work/err"
rc=$?
set -e
[ $rc -eq 1 ] && grep -q "no issue/complete pairs" "$work/err" || fail "depend on spc: rc $rc"

# the flushes of the capture (3 FF issues of 7,2) are requests of their own: no bytes, and on the
# write-back hdd7200 each one waits for the writes before it to reach the platter, which makes the
# replay of the capture longer than that of the same data requests without them
want_f=$(grep -c ': block_rq_issue: 7,2 FF ' "$D/tracefs-loop.txt")
[ "$want_f" -eq 3 ] || fail "reference flushes $want_f"
for f in tracefs@7,2:tracefs-loop.txt blkparse:blkparse-loop.txt; do
	fmt=${f%%:*} f=${f#*:}
	"$SIM" replay --device hdd7200 --sched deadline --mode open --format "$fmt" --json "$D/$f" >"$work/fl.json"
	read -r n fl bytes el < <(json "$work/fl.json" requests flushes bytes elapsed_s)
	read -r el0 < <(json "$work/$f.json" elapsed_s)
	[ "$n" -eq $((want_n + want_f)) ] && [ "$fl" -eq "$want_f" ] && [ "$bytes" -eq "$want_bytes" ] ||
		fail "$f: $n requests, $fl flushes, $bytes bytes"
	python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= float(sys.argv[2]) else 1)" "$el" "$el0" ||
		fail "$f: with flushes $el s, without $el0 s"
done

# without the device filter the other devices' requests come along (data-moving ones only)
"$SIM" replay --device hdd7200 --format tracefs --json "$D/tracefs-loop.txt" >"$work/all.json"
n=$(json "$work/all.json" requests)
[ "$n" -gt "$want_n" ] && [ "$n" -le "$all_n" ] || fail "unfiltered: $n requests of $all_n issues"

# the plan trace has no times: a closed replay at the depth asked for
"$SIM" replay --device eagle --sched cscan --queue 4 --json "$D/plan-loop.txt" >"$work/plan.json"
read -r n bytes mode q < <(json "$work/plan.json" requests bytes mode host_queue)
[ "$n" -eq "$want_n" ] && [ "$bytes" -eq "$want_bytes" ] && [ "$mode" = closed ] && [ "$q" -eq 4 ] ||
	fail "plan: $n $bytes $mode $q"

# closed replay of a timed trace keeps its observed depth (mean outstanding at each issue)
want_q=$(awk '/: block_rq_(issue|complete): 7,2 / {
	for (i = 1; i <= NF; i++) if ($i ~ /^block_rq_/) k = i
	for (j = k + 3; $j !~ /\)$/; j++) ; n = $(j + 3); rwbs = $(k + 2)
	if ($k == "block_rq_complete:") { if (out > 0) out--; next }
	if (n > 0 && rwbs ~ /[RW]/ && rwbs !~ /^D/) { s += out + 1; c++; out++ } }
	END { printf "%d\n", (s + int(c / 2)) / c }' "$D/tracefs-loop.txt")
"$SIM" replay --device hdd7200 --format tracefs@7,2 --mode closed --json "$D/tracefs-loop.txt" >"$work/closed.json"
[ "$(json "$work/closed.json" host_queue)" -eq "$want_q" ] || fail "closed depth, want $want_q"

# compare replays one trace on several devices: the same requests, the SSD faster than the disk
"$SIM" compare --device hdd7200,ssd-pagemap --sched fcfs,deadline --trace "$D/disksim-loop.txt" --json >"$work/cmp.json"
python3 - "$work/cmp.json" "$want_n" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
assert [(r["device"], r["sched"]) for r in runs] == [("hdd7200", "fcfs"), ("hdd7200", "deadline"),
                                                      ("ssd-pagemap", "fcfs"), ("ssd-pagemap", "deadline")]
assert all(r["requests"] == int(sys.argv[2]) and r["workload"].endswith("disksim-loop.txt") for r in runs)
assert runs[2]["response_ms"]["mean"] < runs[0]["response_ms"]["mean"]
PY

# standard input
"$SIM" replay --device hdd7200 --sched deadline --mode open --json - <"$D/spc-loop.txt" >"$work/stdin.json"
grep -v '"workload"' "$work/stdin.json" | cmp -s - "$work/tracefs-loop.txt.cmp" || fail "replay - differs"

# a file in the wrong format is an error with the file's name, exit 1
set +e
"$SIM" replay --device eagle --format spc "$D/msr-loop.txt" >/dev/null 2>"$work/err"
rc=$?
set -e
[ $rc -eq 1 ] && grep -q "^sweep-sim: $D/msr-loop.txt:1: ASU: " "$work/err" || fail "wrong format: rc $rc $(cat "$work/err")"
echo ok
