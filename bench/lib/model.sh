# Source it. The HDD model's view of a block trace, shared by the bench tables.
#   model_elapsed TRACE   seconds the hdd7200 model (FCFS, closed, the traced depth) needs for TRACE
#   model_rate            the model's media rate in B/s (1 GiB read as one sequential stream)
#   model_row FS TOOL TRACE-RUN-LINE   one markdown row: wall, seeks, requests, MB, model s, bound s, model/bound
MODEL_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
model_elapsed() {
	"$MODEL_SIM" replay --device hdd7200 --sched fcfs --format tracefs --mode closed --json "$1" |
		sed -n 's/^ *"elapsed_s": *\([0-9.]*\),*$/\1/p'
}
model_rate() {
	local seq r
	seq=$(mktemp)
	python3 "$MODEL_HERE/blkstats.py" seq $((1 << 30)) "$seq"
	r=$(python3 -c "print(2**30 / $(model_elapsed "$seq"))")
	rm -f "$seq"
	echo "$r"
}
model_row() { # FS TOOL TRACE LINE
	python3 - "$1" "$2" "$(model_elapsed "$3")" "$MODEL_RATE" "$4" <<'PY'
import json, re, sys
fs, tool, hdd, rate, line = sys.argv[1:]
st = json.loads(line[line.index("{"):])
wall = float(re.search(r"wall +([0-9.]+)", line).group(1))
bound = st["bytes"] / float(rate)
print(f"| {fs} | {tool} | {wall:.2f} | {st['seeks']} | {st['requests']} | {st['bytes']/1e6:.0f} | {float(hdd):.1f} | {bound:.1f} | {float(hdd)/bound:.2f} |", flush=True)
PY
}
