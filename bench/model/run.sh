#!/bin/bash
# Regenerates the numbers of bench/model/README.md: the seeds' results through
# the model, the calibration, the write path, and the replay speed on this
# machine.
#
#   bench/model/run.sh [BUILD_DIR] > /tmp/model.md
#   PLOTS=/tmp/plots bench/model/run.sh build   # also writes the SVG figures there
#   GNUTAR=FILE bench/model/run.sh build        # the GNU tar capture (bench/model/gnutar-trace.sh)
#                                               # for the replay and speed sections
#   QUICK=1 bench/model/run.sh build            # without the replay speed section
#
# The model's numbers are deterministic (the same on any machine); the
# requests-per-second figures are per CPU second and depend on the machine.
set -euo pipefail
BUILD=${1:-build}
SIM=$BUILD/utils/sweep-sim
[ -x "$SIM" ] || { echo "run.sh: no $SIM; build first (meson setup build && meson compile -C build)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/model-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
# field F of a one-run JSON (a python expression over j)
jf() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }

echo "## hdd7200: the Hitachi Deskstar 7K500 against its specification"
echo
# zone 0 from the start of the disk, zone 29 from its last 256 MiB: 64 KiB sequential reads, one at a time
"$SIM" synth --device hdd7200 --pattern seqread --size 64K --requests 4000 --json >"$work/z0.json"
python3 - "$work/z29.plan" <<'PY'
import sys
# the last zone: 3545 cylinders x 10 heads x 594 sectors, at the end of the 500.1 GB
end = 976789300 * 512
with open(sys.argv[1], "w") as f:
    for i in range(4000):
        f.write("R %d 65536\n" % (end - (4000 - i) * 65536))
PY
"$SIM" replay --device hdd7200 --queue 1 --json "$work/z29.plan" >"$work/z29.json"
"$SIM" synth --device hdd7200 --sched fcfs --requests 20000 --json >"$work/rand.json"
echo "| | Hitachi (published) | model |"
echo "|---|---|---|"
echo "| zone 0 sustained read | 64.8 MB/s | $(jf "$work/z0.json" '"%.1f MB/s" % (j["throughput_mib_s"] * 1.048576)') |"
echo "| zone 29 sustained read | 31.0 MB/s | $(jf "$work/z29.json" '"%.1f MB/s" % (j["throughput_mib_s"] * 1.048576)') |"
echo "| random 4 KiB read, one at a time (overhead + seek + latency + transfer) | 0.05 + 8.5 + 4.17 + 0.05 ms (seek averaged over cylinders) | $(jf "$work/rand.json" '"%.2f ms mean" % j["response_ms"]["mean"]') |"

echo
echo "## Eagle, closed queue of Q random 4 KiB reads, 100 x Q requests (at least 10000; 20 x Q at Q >= 2500)"
echo
echo "| Q | FCFS | SSF | C-SCAN | STF | GSTF210 | GSTF210 freeze | WSTF (M=30 s) | max resp. SSF / C-SCAN / STF / GSTF / freeze / WSTF (s) |"
echo "|---|---|---|---|---|---|---|---|---|"
for q in 1 2 10 100 500 1000 2500 5000; do
	n=$((q * 100)); [ $n -ge 10000 ] || n=10000; [ $q -lt 2500 ] || n=$((q * 20))
	"$SIM" compare --device eagle --sched fcfs,ssf,cscan,stf,gstf,gstf-freeze,wstf --queue $q --requests $n \
		--json >"$work/q$q.json"
	python3 - "$work/q$q.json" $q <<'PY'
import json, sys
r = {x["sched"]: x for x in json.load(open(sys.argv[1]))["runs"]}
u = lambda s: "%.2f%%" % (100 * r[s]["utilization"])
m = lambda s: "%.1f" % (r[s]["response_ms"]["max"] / 1000)
print("| %s | %s | %s | %s | %s | %s | %s | %s | %s / %s / %s / %s / %s / %s |" % (sys.argv[2], u("fcfs"), u("ssf"),
      u("cscan"), u("stf"), u("gstf"), u("gstf-freeze"), u("wstf"), m("ssf"), m("cscan"), m("stf"), m("gstf"),
      m("gstf-freeze"), m("wstf")))
PY
done
echo
echo "GSTF at Q = 1000 against its cylinder group size (Figure 8):"
echo
echo "| group (cylinders) | 1 | 10 | 42 | 105 | 210 | 420 | 840 |"
echo "|---|---|---|---|---|---|---|---|"
row_u="| utilization |" row_m="| max response (s) |"
for g in 1 10 42 105 210 420 840; do
	"$SIM" synth --device eagle --sched gstf --group $g --queue 1000 --json >"$work/g.json"
	row_u="$row_u $(jf "$work/g.json" '"%.2f%%" % (100 * j["utilization"])') |"
	row_m="$row_m $(jf "$work/g.json" '"%.1f" % (j["response_ms"]["max"] / 1000)') |"
done
echo "$row_u"
echo "$row_m"
echo
echo "WSTF with a tighter M at Q = 1000, and M = 3 s at Q = 500 (below STF's mean response):"
echo
"$SIM" synth --device eagle --sched wstf --queue 1000 --max-response 15000 --json >"$work/w15.json"
"$SIM" synth --device eagle --sched wstf --queue 500 --requests 50000 --max-response 3000 --json >"$work/w3.json"
for p in "M = 15 s, Q = 1000:$work/w15.json" "M = 3 s, Q = 500:$work/w3.json"; do
	echo "- ${p%%:*} $(jf "${p#*:}" '"%.2f%%, maximum response %.1f s" % (100 * j["utilization"], j["response_ms"]["max"] / 1000)')"
done

if [ -n "${PLOTS:-}" ]; then
	# head position over time (C-SCAN's sawtooth, SSF's zig-zag, STF's scatter) and response CDFs
	mkdir -p "$PLOTS"
	"$SIM" compare --device eagle --sched ssf,cscan,stf --queue 100 --requests 3000 \
		--plot-head "$PLOTS/eagle-q100-head.svg" --plot-cdf "$PLOTS/eagle-q100-cdf.svg" >/dev/null
fi

echo
echo "## ssd-blockmap (4 MiB logical block, 16 MiB write buffer; without it: buffer_kib=0), one request at a time"
echo
echo "| workload | MiB/s | write amplification | MiB/s without the buffer | write amplification | merges s/p/f |"
echo "|---|---|---|---|---|---|"
for w in "seqwrite 4M 200" "randwrite 4M 200" "randwrite 8M 100" "randwrite 2M 400" "randwrite 4K 1000"; do
	set -- $w
	"$SIM" synth --device ssd-blockmap --sched noop --pattern $1 --size $2 --requests $3 --json >"$work/a.json"
	"$SIM" synth --device ssd-blockmap --set buffer_kib=0 --sched noop --pattern $1 --size $2 --requests $3 \
		--json >"$work/b.json"
	echo "| $1 $2 | $(jf "$work/a.json" '"%.3f | %.2f" % (j["throughput_mib_s"], j["write_amplification"])') |" \
		"$(jf "$work/b.json" '"%.3f | %.2f | %d/%d/%d" % (j["throughput_mib_s"], j["write_amplification"], j["merges"]["switch"], j["merges"]["partial"], j["merges"]["full"])') |"
done

echo
echo "## ssd-blockmap, Postmark-like mix, 20000 requests (MiB/s), with and without the write buffer"
echo
echo "| Q | buffer | noop | deadline | irbw-fifo | irbw-fifo-rp | deadline / noop | irbw-fifo / noop | RP / deadline |"
echo "|---|---|---|---|---|---|---|---|---|"
for q in 8 32 128; do
	for b in 16384 0; do
		"$SIM" compare --device ssd-blockmap --set buffer_kib=$b --sched noop,deadline,irbw-fifo,irbw-fifo-rp \
			--pattern postmark --queue $q --requests 20000 --json >"$work/pm.json"
		python3 - "$work/pm.json" $q $b <<'PY'
import json, sys
r = {x["sched"]: x["throughput_mib_s"] for x in json.load(open(sys.argv[1]))["runs"]}
pc = lambda a, b: "%+.1f%%" % (100 * (r[a] / r[b] - 1))
print("| %s | %s | %.2f | %.2f | %.2f | %.2f | %s | %s | %s |" % (sys.argv[2], "16 MiB" if sys.argv[3] != "0" else "none",
      r["noop"], r["deadline"], r["irbw-fifo"], r["irbw-fifo-rp"], pc("deadline", "noop"), pc("irbw-fifo", "noop"),
      pc("irbw-fifo-rp", "deadline")))
PY
	done
done

echo
echo "## cheetah15k, Postmark SS as a file system sends it (postmark-fs), 64 outstanding, 30000 requests: IOPS"
echo
echo "| device queue depth | write-through noop | write-through deadline | write-back noop | write-back deadline |"
echo "|---|---|---|---|---|"
for d in 1 4 16 64; do
	for wc in through back; do
		"$SIM" compare --device cheetah15k --sched noop,deadline --pattern postmark-fs --queue 64 --depth $d \
			--write-cache $wc --requests 30000 --json >"$work/d-$wc.json"
	done
	python3 - "$work/d-through.json" "$work/d-back.json" $d <<'PY'
import json, sys
t = {x["sched"]: x["iops"] for x in json.load(open(sys.argv[1]))["runs"]}
b = {x["sched"]: x["iops"] for x in json.load(open(sys.argv[2]))["runs"]}
print("| %s | %.0f | %.0f | %.0f | %.0f |" % (sys.argv[3], t["noop"], t["deadline"], b["noop"], b["deadline"]))
PY
done

echo
echo "## hdd7200: the write path (issue 32)"
echo
echo "| workload | MiB/s | utilization | mean response ms |"
echo "|---|---|---|---|"
wp() {
	"$SIM" synth --device hdd7200 "$@" --json >"$work/w.json"
	echo "| $* | $(jf "$work/w.json" '"%.2f | %.1f%% | %.3f" % (j["throughput_mib_s"], 100 * j["utilization"], j["response_ms"]["mean"])') |"
}
wp --pattern randwrite --size 64K --queue 32 --requests 100
wp --pattern randwrite --size 4K --queue 32 --requests 2000
for q in 1 2 4 8 32; do wp --sched fcfs --pattern seqwrite --queue $q --requests 50000; done
for q in 1 32; do wp --sched cscan --pattern seqwrite --queue $q --requests 50000; done
for sn in 64K:4096 1M:256; do
	s=${sn%%:*} n=${sn#*:}
	wp --pattern seqwrite --size $s --requests $n
	wp --pattern seqwrite --size $s --requests $n --write-cache through
	wp --pattern seqread --size $s --requests $n
done
wp --pattern seqread --size 1G --requests 4

echo
echo "## ssd-pagemap, 1.2M 4 KiB requests at 200 IOPS, half random writes (bench/model/gc-trace.py)"
echo
python3 "$(dirname "$0")/gc-trace.py" "$work/gc.disksim"
"$SIM" replay --device ssd-pagemap --sched noop --csv "$work/gc.csv" --json "$work/gc.disksim" >"$work/gc.json"
python3 "$(dirname "$0")/read-pct.py" "$work/gc.csv"
jf "$work/gc.json" '"GC runs %d, pages copied %d, write amplification %.2f" % (j["gc"]["runs"], j["gc"]["pages_copied"], j["write_amplification"])'
rm -f "$work/gc.csv" "$work/gc.disksim"

echo
echo "## Whole-device requests (issue 27): CPU seconds and peak memory"
echo
echo "| trace | CPU s | max RSS |"
echo "|---|---|---|"
for i in $(seq 200); do echo "0,0,17179869184,w,$(printf '%d.%03d' $((i / 1000)) $((i % 1000)))"; done >"$work/w200.spc"
for i in $(seq 1000); do echo "R 0 17179869184"; done >"$work/r1000.plan"
for t in "ssd-pagemap:$work/w200.spc:200 whole-device writes, 1 ms apart" \
	"ssd-blockmap:$work/r1000.plan:1,000 whole-device reads" "ssd-pagemap:$work/r1000.plan:1,000 whole-device reads"; do
	IFS=: read -r dev f label <<<"$t"
	/usr/bin/time -f "%U %S %M" -o "$work/time" "$SIM" replay --device "$dev" "$f" >/dev/null
	read -r u s m <"$work/time"
	echo "| $label on $dev | $(python3 -c "print('%.2f' % ($u + $s))") | $((m / 1024)) MB |"
done

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

[ -z "${QUICK:-}" ] || exit 0
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
# the trace spans 400 GB: folded onto the 16 GiB SSD
speed "replay 1M DiskSim trace on ssd-pagemap noop (open, --wrap)" replay --device ssd-pagemap --sched noop --wrap "$work/1m.disksim"
speed "synth hdd7200 stf, Postmark mix, Q=100" synth --device hdd7200 --sched stf --pattern postmark --queue 100 --requests 60000
speed "synth hdd7200 stf, Postmark mix, Q=20000" synth --device hdd7200 --sched stf --pattern postmark --queue 20000 --requests 60000
speed "synth eagle stf, Q=1000" synth --device eagle --sched stf --queue 1000 --requests 100000
speed "synth eagle wstf, Q=1000" synth --device eagle --sched wstf --queue 1000 --requests 100000
if [ -n "${GNUTAR:-}" ]; then
	# the speed target of issue 13: >= 500k requests per CPU second under STF on every preset
	for d in eagle hdd7200 cheetah15k ssd-blockmap ssd-pagemap; do
		speed "GNU tar capture on $d stf (depend, incl. parsing)" replay --device $d --sched stf "$GNUTAR"
	done
	speed "GNU tar capture on ssd-blockmap stf (open)" replay --device ssd-blockmap --sched stf --mode open "$GNUTAR"
	speed "GNU tar capture on hdd7200 stf (open)" replay --device hdd7200 --sched stf --mode open "$GNUTAR"
fi
