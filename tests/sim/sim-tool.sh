#!/bin/bash
# sweep-sim as a user runs it: usage and errors, the JSON fields the issue
# names, byte-identical output for a seed, CSV and plots that agree with the
# JSON, and the utilization definition checked by hand on the Eagle.
set -euo pipefail
SIM=$BUILD_ROOT/utils/sweep-sim
work=$(mktemp -d "${TMPDIR:-/tmp}/sim-tool.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# --help, --version, --list, usage errors (exit 2), run errors (exit 1)
"$SIM" --help | grep -q 'sweep-sim synth' || fail "--help"
"$SIM" --version | grep -q 'libsweep' || fail "--version"
"$SIM" --list | grep -q 'devices: eagle hdd7200 hdd7200-2018 cheetah15k ssd-blockmap ssd-pagemap' || fail "--list"
for bad in "frobnicate" "synth --mode sideways" "replay --device eagle" "synth --queue 0" "synth --size 4Q" \
	"synth --device eagle,hdd7200"; do
	set +e
	# shellcheck disable=SC2086
	"$SIM" $bad >/dev/null 2>"$work/err"
	rc=$?
	set -e
	[ $rc -eq 2 ] || fail "'$bad' exited $rc, not 2"
	grep -q "^sweep-sim: " "$work/err" || fail "'$bad': no 'sweep-sim:' message"
done
set +e
"$SIM" replay --device eagle "$work/missing.trace" >/dev/null 2>"$work/err"
rc=$?
set -e
[ $rc -eq 1 ] || fail "missing trace exited $rc"
grep -qx "sweep-sim: $work/missing.trace: No such file or directory" "$work/err" || fail "missing trace message: $(cat "$work/err")"
"$SIM" synth --device nosuch --sched fcfs >/dev/null 2>&1 && fail "unknown device accepted"

# JSON: exactly the names the issue lists, HDD and SSD
"$SIM" synth --device eagle --sched cscan --queue 20 --requests 3000 --seed 9 --json >"$work/hdd.json"
"$SIM" synth --device ssd-blockmap --sched noop --pattern randwrite --requests 300 --json >"$work/ssd.json"
python3 - "$work/hdd.json" "$work/ssd.json" <<'EOF'
import json, sys
need = ["requests", "busy_s", "utilization", "throughput_mib_s", "response_ms", "seek_count",
        "seek_distance_histogram"]
for path, ssd in ((sys.argv[1], False), (sys.argv[2], True)):
    j = json.load(open(path))
    for k in need + (["write_amplification", "erases", "merges"] if ssd else []):
        assert k in j, (path, k)
    assert set(j["response_ms"]) >= {"mean", "p50", "p90", "p99", "max"}, j["response_ms"]
    r = j["response_ms"]
    assert 0 < r["p50"] <= r["p90"] <= r["p99"] <= r["max"], r
    assert 0 < j["utilization"] <= 1
    if ssd:
        assert set(j["merges"]) == {"switch", "partial", "full"}, j["merges"]
        assert j["write_amplification"] >= 1 and j["erases"] > 0
    else:
        assert j["requests"] == 3000 and j["host_queue"] == 20
        assert sum(b["count"] for b in j["seek_distance_histogram"]) == 3000  # one entry per service
        assert j["seek_count"] == sum(b["count"] for b in j["seek_distance_histogram"] if b["from"] > 0)
        assert "write_amplification" not in j
EOF

# the utilization definition, by hand: every Eagle 4 KiB read transfers for 8 of 67 sectors of a 16.67 ms turn
python3 - "$work/hdd.json" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
xfer = j["requests"] * 8 * (60.0 / 3600 / 67)
assert abs(xfer / j["elapsed_s"] - j["utilization"]) < 1e-6, (xfer / j["elapsed_s"], j["utilization"])
assert abs(j["throughput_mib_s"] - j["bytes"] / 2**20 / j["elapsed_s"]) < 1e-6
EOF

# same seed: byte-identical output; another seed: different
"$SIM" synth --device eagle --sched cscan --queue 20 --requests 3000 --seed 9 --json >"$work/hdd2.json"
cmp -s "$work/hdd.json" "$work/hdd2.json" || fail "same seed, different JSON"
"$SIM" synth --device eagle --sched cscan --queue 20 --requests 3000 --seed 10 --json >"$work/hdd3.json"
cmp -s "$work/hdd.json" "$work/hdd3.json" && fail "another seed, same JSON"

# CSV: one line per request; its responses give the JSON's mean and max
"$SIM" synth --device hdd7200 --sched wstf --queue 16 --requests 2000 --pattern postmark \
	--csv "$work/r.csv" --json >"$work/pm.json"
[ "$(wc -l <"$work/r.csv")" -eq 2001 ] || fail "CSV lines"
python3 - "$work/r.csv" "$work/pm.json" <<'EOF'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
j = json.load(open(sys.argv[2]))
resp = [int(r["response_ns"]) for r in rows]
assert all(int(r["finish_ns"]) - int(r["arrival_ns"]) == int(r["response_ns"]) for r in rows)
assert all(int(r["arrival_ns"]) <= int(r["dispatch_ns"]) <= int(r["start_ns"]) < int(r["finish_ns"]) for r in rows)
assert abs(max(resp) / 1e6 - j["response_ms"]["max"]) < 1e-6
assert abs(sum(resp) / len(resp) / 1e6 - j["response_ms"]["mean"]) < 1e-3
assert sorted(int(r["id"]) for r in rows) == list(range(2000))
assert j["reads"] + j["writes"] == 2000 and j["reads"] > 0 and j["writes"] > 0
EOF

# compare: one run per device and scheduler; plots are well-formed SVG with one CDF line per run
"$SIM" compare --device eagle,cheetah15k --sched fcfs,ssf,stf --queue 8 --requests 1000 --json \
	--plot-head "$work/head.svg" --plot-cdf "$work/cdf.svg" >"$work/cmp.json"
"$SIM" compare --device eagle,cheetah15k --sched fcfs,ssf,stf --queue 8 --requests 1000 >"$work/cmp.txt"
[ "$(grep -c '^eagle/\|^cheetah15k/' "$work/cmp.txt")" -eq 6 ] || fail "compare table rows"
python3 - "$work/cmp.json" "$work/head.svg" "$work/cdf.svg" <<'EOF'
import json, sys, xml.etree.ElementTree as ET
runs = json.load(open(sys.argv[1]))["runs"]
assert [(r["device"], r["sched"]) for r in runs] == [(d, s) for d in ("eagle", "cheetah15k") for s in ("fcfs", "ssf", "stf")]
ns = "{http://www.w3.org/2000/svg}"
head = ET.parse(sys.argv[2]).getroot()
assert len(head.findall(f"{ns}rect")) >= 6 * 1000  # one mark per request (plus frames)
cdf = ET.parse(sys.argv[3]).getroot()
assert len(cdf.findall(f"{ns}polyline")) == 6
for r in runs:
    assert r["requests"] == 1000
# the orderings the seeds predict, on both disks
by = {(r["device"], r["sched"]): r for r in runs}
for d in ("eagle", "cheetah15k"):
    assert by[(d, "fcfs")]["utilization"] < by[(d, "ssf")]["utilization"] < by[(d, "stf")]["utilization"]
EOF

# --set: a parameter of the preset; the Eagle at 7200 rpm keeps its seek but halves rotation and transfer
"$SIM" synth --device eagle --sched fcfs --requests 4000 --set rpm=7200 --json >"$work/fast.json"
python3 - "$work/fast.json" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
want = 1.0 / (18.0 + 60000.0 / 7200 / 2 + 1.0)
assert abs(j["utilization"] - want) < 0.002, (j["utilization"], want)
EOF
set +e
"$SIM" synth --device eagle --set warp=9 >/dev/null 2>"$work/err"
rc=$?
set -e
[ $rc -eq 1 ] && grep -q "^sweep-sim: eagle: no parameter or bad value in 'warp=9'" "$work/err" || fail "--set warp"

# a bad pair in compare is reported, the others still run, exit 1
set +e
"$SIM" compare --device eagle,nosuch --sched fcfs --requests 1000 >"$work/cmp2.txt" 2>"$work/err"
rc=$?
set -e
[ $rc -eq 1 ] || fail "compare with a bad device exited $rc"
grep -q '^eagle/fcfs' "$work/cmp2.txt" || fail "compare stopped at the bad device"
grep -q "sweep-sim: cannot build device 'nosuch'" "$work/err" || fail "bad device message"

# the bandwidth class through the CLI: an SPC trace with two ASUs (streams); stream 1 reserves
# 1 MB/s with a 200 ms deadline while stream 0 floods the Eagle with random 4 KiB reads
python3 - "$work/bw.spc" <<'EOF'
import random, sys
random.seed(5)
lines = []
for i in range(1500):                       # 150/s for 10 s: far more than the disk does
    lines.append((i / 150.0, 0, random.randrange(0, 1100000, 8), 4096))
for i in range(100):                        # 64 KiB every 100 ms
    lines.append((i / 10.0, 1, random.randrange(0, 1100000, 128), 65536))
with open(sys.argv[1], "w") as f:
    for t, asu, lba, size in sorted(lines):
        f.write(f"{asu},{lba},{size},r,{t:.6f}\n")
EOF
for s in cscan bw; do
	"$SIM" replay --device eagle --sched $s --stream 1:1M:200 --csv "$work/bw-$s.csv" "$work/bw.spc" >/dev/null
done
python3 - "$work/bw-cscan.csv" "$work/bw-bw.csv" <<'EOF'
import csv, sys
def mean(path, stream):
    r = [int(x["response_ns"]) for x in csv.DictReader(open(path)) if x["stream"] == stream]
    assert len(r) == (100 if stream == "1" else 1500), len(r)
    return sum(r) / len(r) / 1e6
cs, bw = mean(sys.argv[1], "1"), mean(sys.argv[2], "1")
assert bw < 0.5 * cs, (bw, cs)   # the reservation is honoured
assert bw < 200, bw               # within its deadline on average
assert mean(sys.argv[2], "0") > mean(sys.argv[1], "0") * 0.9   # best effort pays for it
EOF
echo ok
