#!/bin/bash
# tar-table.sh OUTDIR IMAGE...: one cold, block-traced run of each tar (and of
# sweep-plan --read, the library's floor) on each aged image, side by side,
# with the trace replayed through the hdd7200 model against the sequential
# bound (bytes / the model's media rate). A run during which anything else
# dropped the page cache is repeated (up to 3 tries).
#   BUILD_DIR=build bench/tar-table.sh /tmp/tt /work/bench-images/full/ext4/step6.img
set -euo pipefail
out=$1; shift
here=$(cd "$(dirname "$0")" && pwd)
B=${BUILD_DIR:-$here/../build}/utils
S=$B/sweep-sim
seq=$(mktemp); trap 'rm -f "$seq"' EXIT
# 1 GiB read as one sequential stream: the model's media rate
python3 "$here/lib/blkstats.py" seq $((1 << 30)) "$seq"
elapsed() { "$S" replay --device hdd7200 --sched fcfs --format tracefs --mode closed --json "$1" | sed -n 's/^ *"elapsed_s": *\([0-9.]*\),*$/\1/p'; }
rate=$(python3 -c "print(2**30 / $(elapsed "$seq"))")
echo "model media rate: $rate B/s"
echo "| fs | tool | wall s | seeks | requests | MB read | HDD model s | bound s | model/bound |"
echo "|---|---|---|---|---|---|---|---|---|"
for img in "$@"; do
	fs=$(blkid -o value -s TYPE "$img")
	for tool in sweep-plan-read sweep-tar gnu-tar gnu-tar-inode bsdtar; do
		case $tool in
		sweep-plan-read) cmd=("$B/sweep-plan" --no-compare -r .) ;;
		sweep-tar) cmd=("$B/sweep-tar" -c -f - .) ;;
		gnu-tar) cmd=(tar -cf - .) ;;
		gnu-tar-inode) cmd=(tar --sort=inode -cf - .) ;;
		bsdtar) cmd=(bsdtar -cf - .) ;;
		esac
		for try in 1 2 3; do
			line=$("$here/lib/trace-run.sh" "$img" "$out/$fs" "$tool" "${cmd[@]}")
			grep -q "drops 0 " <<<"$line" && break
			echo "disturbed by a drop_caches, again: $line" >&2
		done
		hdd=$(elapsed "$out/$fs/$tool.trace")
		python3 - "$fs" "$tool" "$hdd" "$rate" "$line" <<'PY'
import json, re, sys
fs, tool, hdd, rate, line = sys.argv[1:]
st = json.loads(line[line.index("{"):])
wall = float(re.search(r"wall +([0-9.]+)", line).group(1))
bound = st["bytes"] / float(rate)
print(f"| {fs} | {tool} | {wall:.2f} | {st['seeks']} | {st['requests']} | {st['bytes']/1e6:.0f} | {float(hdd):.1f} | {bound:.1f} | {float(hdd)/bound:.2f} |", flush=True)
PY
	done
done
