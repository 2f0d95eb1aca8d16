#!/bin/bash
# Regenerates the numbers of bench/model/README.md: the seeds' results through
# the model, and the model's replay speed on this machine.
#
#   bench/model/run.sh [BUILD_DIR] > /tmp/model.md
#   PLOTS=/tmp/plots bench/model/run.sh build   # also writes the SVG figures there
#   GNUTAR=FILE bench/model/run.sh build        # the GNU tar capture (bench/model/gnutar-trace.sh)
#                                               # for the replay and speed sections
#
# The model's numbers are deterministic (the same on any machine); the
# requests-per-second figures are per CPU second and depend on the machine.
set -euo pipefail
BUILD=${1:-build}
SIM=$BUILD/utils/sweep-sim
[ -x "$SIM" ] || { echo "run.sh: no $SIM; build first (meson setup build && meson compile -C build)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/model-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "## Eagle, closed queue of Q random 4 KiB reads, 100 x Q requests"
echo
echo "| Q | FCFS | SSF | C-SCAN | STF | GSTF210 | GSTF210 freeze | WSTF (M=30 s) | max resp. SSF / C-SCAN / STF / GSTF / freeze / WSTF (s) |"
echo "|---|---|---|---|---|---|---|---|---|"
for q in 1 2 10 100 1000 2500 5000; do
	"$SIM" compare --device eagle --sched fcfs,ssf,cscan,stf,gstf,gstf-freeze,wstf --queue $q --json >"$work/q$q.json"
	python3 - "$work/q$q.json" $q <<'PY'
import json, sys
r = {x["sched"]: x for x in json.load(open(sys.argv[1]))["runs"]}
u = lambda s: "%.1f%%" % (100 * r[s]["utilization"])
m = lambda s: "%.1f" % (r[s]["response_ms"]["max"] / 1000)
print("| %s | %s | %s | %s | %s | %s | %s | %s | %s / %s / %s / %s / %s / %s |" % (sys.argv[2], u("fcfs"), u("ssf"),
      u("cscan"), u("stf"), u("gstf"), u("gstf-freeze"), u("wstf"), m("ssf"), m("cscan"), m("stf"), m("gstf"),
      m("gstf-freeze"), m("wstf")))
PY
done
echo
echo "WSTF with a tighter M at Q = 1000, and M = 3 s at Q = 500 (below STF's mean response):"
echo
"$SIM" synth --device eagle --sched wstf --queue 1000 --max-response 15000 --json >"$work/w15.json"
"$SIM" synth --device eagle --sched wstf --queue 500 --requests 50000 --max-response 3000 --json >"$work/w3.json"
python3 - "$work/w15.json" "$work/w3.json" <<'PY'
import json, sys
for p, label in zip(sys.argv[1:], ("M = 15 s, Q = 1000", "M = 3 s, Q = 500")):
    j = json.load(open(p))
    print("- %s: %.1f%%, maximum response %.1f s" % (label, 100 * j["utilization"], j["response_ms"]["max"] / 1000))
PY

if [ -n "${PLOTS:-}" ]; then
	# head position over time (C-SCAN's sawtooth, SSF's zig-zag, STF's scatter) and response CDFs
	mkdir -p "$PLOTS"
	"$SIM" compare --device eagle --sched ssf,cscan,stf --queue 100 --requests 3000 \
		--plot-head "$PLOTS/eagle-q100-head.svg" --plot-cdf "$PLOTS/eagle-q100-cdf.svg" >/dev/null
fi

echo
echo "## ssd-blockmap (4 MiB logical block), one request at a time"
echo
echo "| workload | MiB/s | merges switch/partial/full | write amplification |"
echo "|---|---|---|---|"
for w in "seqwrite 4M 200" "randwrite 4M 200" "randwrite 2M 400" "randwrite 4K 1000"; do
	set -- $w
	"$SIM" synth --device ssd-blockmap --sched noop --pattern $1 --size $2 --requests $3 --json >"$work/ssd.json"
	python3 - "$work/ssd.json" "$1 $2" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); m = j["merges"]
print("| %s | %.2f | %d/%d/%d | %.2f |" % (sys.argv[2], j["throughput_mib_s"], m["switch"], m["partial"], m["full"],
                                          j["write_amplification"]))
PY
done

echo
echo "## ssd-blockmap, Postmark-like mix, 20000 requests"
echo
echo "| Q | noop | deadline | irbw-fifo | irbw-fifo-rp (MiB/s) |"
echo "|---|---|---|---|---|"
for q in 8 32 128; do
	"$SIM" compare --device ssd-blockmap --sched noop,deadline,irbw-fifo,irbw-fifo-rp --pattern postmark \
		--queue $q --requests 20000 --json >"$work/pm.json"
	python3 - "$work/pm.json" $q <<'PY'
import json, sys
r = {x["sched"]: x["throughput_mib_s"] for x in json.load(open(sys.argv[1]))["runs"]}
print("| %s | %.2f | %.2f | %.2f | %.2f |" % (sys.argv[2], r["noop"], r["deadline"], r["irbw-fifo"], r["irbw-fifo-rp"]))
PY
done

echo
echo "## cheetah15k, 64 random 4 KiB reads outstanding: disk queue depth"
echo
echo "| device queue depth | noop IOPS | deadline IOPS |"
echo "|---|---|---|"
for d in 1 4 16 64; do
	"$SIM" compare --device cheetah15k --sched noop,deadline --pattern randread --queue 64 --depth $d \
		--requests 6400 --json >"$work/ncq.json"
	python3 - "$work/ncq.json" $d <<'PY'
import json, sys
r = {x["sched"]: x["iops"] for x in json.load(open(sys.argv[1]))["runs"]}
print("| %s | %.0f | %.0f |" % (sys.argv[2], r["noop"], r["deadline"]))
PY
done

echo
echo "## ssd-pagemap, 1.2M 4 KiB requests at 200 IOPS, half random writes (bench/model/gc-trace.py)"
echo
python3 "$(dirname "$0")/gc-trace.py" "$work/gc.disksim"
"$SIM" replay --device ssd-pagemap --sched noop --csv "$work/gc.csv" --json "$work/gc.disksim" >"$work/gc.json"
python3 "$(dirname "$0")/read-pct.py" "$work/gc.csv"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print("GC runs %d, pages copied %d, write amplification %.2f" % (j["gc"]["runs"], j["gc"]["pages_copied"], j["write_amplification"]))' "$work/gc.json" 2>/dev/null || true
rm -f "$work/gc.csv" "$work/gc.disksim"

if [ -n "${GNUTAR:-}" ]; then
	echo
	echo "## The GNU tar capture ($(grep -c ': block_rq_issue: ' "$GNUTAR") requests): replay modes"
	echo
	echo "| mode | hdd7200 fcfs MiB/s | hdd7200 deadline MiB/s | deadline / fcfs |"
	echo "|---|---|---|---|"
	for mode in depend open; do
		"$SIM" compare --device hdd7200 --sched fcfs,deadline --mode $mode --trace "$GNUTAR" --json >"$work/gt.json"
		python3 - "$work/gt.json" $mode <<'PY'
import json, sys
r = {x["sched"]: x["throughput_mib_s"] for x in json.load(open(sys.argv[1]))["runs"]}
print("| %s | %.2f | %.2f | %.2f |" % (sys.argv[2], r["fcfs"], r["deadline"], r["deadline"] / r["fcfs"]))
PY
	done
fi

echo
echo "## Replay speed (this machine, -O2 debugoptimized build)"
echo
# a 1M-request DiskSim trace: Poisson arrivals at 150/s, 4 KiB to 64 KiB, 30% writes, over 400 GB
python3 - "$work/1m.disksim" <<'PY'
import random, sys
random.seed(1)
t = 0.0
with open(sys.argv[1], "w") as f:
    for i in range(1000000):
        t += random.expovariate(150.0) * 1000
        f.write("%.6f 0 %d %d %d\n" % (t, random.randrange(0, 800000000, 8), 8 * random.choice((1, 2, 4, 16)),
                                        0 if random.random() < 0.3 else 1))
PY
echo "| run | requests | CPU s | requests per CPU second |"
echo "|---|---|---|---|"
# CPU time (user + system) rather than wall time: the machine is shared
speed() {
	local label=$1; shift
	local TIMEFORMAT='%U %S'
	{ time "$SIM" "$@" --json >"$work/speed.json"; } 2>"$work/time"
	python3 - "$work/speed.json" "$work/time" "$label" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); u, s = map(float, open(sys.argv[2]).read().split())
print("| %s | %d | %.2f | %.0f |" % (sys.argv[3], j["requests"], u + s, j["requests"] / (u + s)))
PY
}
speed "synth hdd7200 fcfs, random 4 KiB, Q=32 (NCQ 32)" synth --device hdd7200 --sched fcfs --queue 32 --requests 1000000
speed "synth hdd7200 cscan, random 4 KiB, Q=32" synth --device hdd7200 --sched cscan --queue 32 --depth 1 --requests 1000000
speed "synth ssd-pagemap noop, random 4 KiB reads, Q=32" synth --device ssd-pagemap --sched noop --queue 32 --requests 1000000
speed "synth ssd-pagemap noop, random 4 KiB writes, Q=32" synth --device ssd-pagemap --sched noop --queue 32 --pattern randwrite --requests 1000000
speed "replay 1M DiskSim trace on hdd7200 deadline (open)" replay --device hdd7200 --sched deadline "$work/1m.disksim"
speed "replay 1M DiskSim trace on ssd-pagemap noop (open)" replay --device ssd-pagemap --sched noop "$work/1m.disksim"
speed "synth hdd7200 stf, Postmark mix, Q=100" synth --device hdd7200 --sched stf --pattern postmark --queue 100 --requests 60000
speed "synth hdd7200 stf, Postmark mix, Q=20000" synth --device hdd7200 --sched stf --pattern postmark --queue 20000 --requests 60000
if [ -n "${GNUTAR:-}" ]; then
	# the speed target of issue 13: >= 500k requests per CPU second under STF on every preset
	for d in eagle hdd7200 cheetah15k ssd-blockmap ssd-pagemap; do
		speed "GNU tar capture on $d stf (depend, incl. parsing)" replay --device $d --sched stf "$GNUTAR"
	done
	speed "GNU tar capture on ssd-blockmap stf (open)" replay --device ssd-blockmap --sched stf --mode open "$GNUTAR"
	speed "GNU tar capture on hdd7200 stf (open)" replay --device hdd7200 --sched stf --mode open "$GNUTAR"
fi
