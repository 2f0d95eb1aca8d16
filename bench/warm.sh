#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/warm.sh: the warm-cache targets of bench/README.md, side by side.
#
#   bench/warm.sh BUILD [TREE] [REPEATS]
#
# TREE (default /usr/share) is read once to warm the caches, then each pair
# runs alternately REPEATS times (default 5):
#   sweep-tar -c             against  tar --format=pax --xattrs --acls -c
#   sweep-tar -c --device=ssd
#   sweep-du -s              against  du -s
#   sweep-cp -a TREE DEST    against  cp -a TREE DEST
# WARM_ONLY="tar cp" runs those pairs only.
# WARM_BASE=BUILD0 runs BUILD0's sweep-tar and sweep-cp too (base-tar,
# base-tar-ssd, base-cp), alternating with the rest: a before/after in one
# pass, under one load.
# SWEEP_DEVICE=hdd|ssd (the library's override) reaches every sweep tool.
# DEST is a fresh directory under $WARM_DEST (default /dev/shm), removed
# before each copy, untimed, so that both write to memory too.
# Archives go through a pipe to cat (GNU tar skips reading data when its
# archive is /dev/null). Each run's user+system CPU, wall and context
# switches are those of the first command of the pipeline alone, from
# wait4() in microseconds (/usr/bin/time rounds to 10 ms, a tenth of a du
# run); the report gives medians and the ratio of medians to the GNU tool,
# and the context switches (a machine-independent count).
set -euo pipefail
BUILD=${1:?usage: bench/warm.sh BUILD [TREE] [REPEATS]}
TREE=${2:-/usr/share}
REPEATS=${3:-5}
T=$BUILD/utils/sweep-tar
D=$BUILD/utils/sweep-du
C=$BUILD/utils/sweep-cp
[ -x "$T" ] && [ -x "$D" ] && [ -x "$C" ] || { echo "warm.sh: no sweep-tar/sweep-du/sweep-cp in $BUILD" >&2; exit 2; }
OUT=$(mktemp -d)
DEST=$(mktemp -d "${WARM_DEST:-/dev/shm}/warm.XXXXXX")
trap 'rm -rf "$OUT" "$DEST"' EXIT

# rtime.py OUT CMD...: run CMD; "user sys wall voluntary involuntary" of it alone into OUT
cat >"$OUT/rtime.py" <<'PY'
import os, sys, time
out, argv = sys.argv[1], sys.argv[2:]
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)
_, status, ru = os.wait4(pid, 0)
wall = time.monotonic() - t0
with open(out, "w") as f:
    f.write(f"{ru.ru_utime:.6f} {ru.ru_stime:.6f} {wall:.6f} {ru.ru_nvcsw} {ru.ru_nivcsw}\n")
sys.exit(os.waitstatus_to_exitcode(status))
PY

declare -A CMD=(
	[gnu-tar]="tar --format=pax --xattrs --acls -cf - '$TREE' 2>/dev/null | cat >/dev/null"
	[sweep-tar]="'$T' -cf - '$TREE' 2>/dev/null | cat >/dev/null"
	[sweep-tar-ssd]="'$T' --device=ssd -cf - '$TREE' 2>/dev/null | cat >/dev/null"
	[gnu-du]="du -s '$TREE' >/dev/null"
	[sweep-du]="'$D' -s '$TREE' >/dev/null"
	[gnu-cp]="cp -a '$TREE' '$DEST/copy'"
	[sweep-cp]="'$C' -a '$TREE' '$DEST/copy'"
)
ORDER=(gnu-tar sweep-tar sweep-tar-ssd gnu-du sweep-du gnu-cp sweep-cp)
if [ -n "${WARM_BASE:-}" ]; then
	[ -x "$WARM_BASE/utils/sweep-tar" ] && [ -x "$WARM_BASE/utils/sweep-cp" ] ||
		{ echo "warm.sh: no sweep-tar/sweep-cp in $WARM_BASE" >&2; exit 2; }
	CMD[base-tar]="'$WARM_BASE/utils/sweep-tar' -cf - '$TREE' 2>/dev/null | cat >/dev/null"
	CMD[base-tar-ssd]="'$WARM_BASE/utils/sweep-tar' --device=ssd -cf - '$TREE' 2>/dev/null | cat >/dev/null"
	CMD[base-cp]="'$WARM_BASE/utils/sweep-cp' -a '$TREE' '$DEST/copy'"
	ORDER=(gnu-tar base-tar sweep-tar base-tar-ssd sweep-tar-ssd gnu-du sweep-du gnu-cp base-cp sweep-cp)
fi
if [ -n "${WARM_ONLY:-}" ]; then # e.g. WARM_ONLY="tar cp": those pairs only
	keep=()
	for id in "${ORDER[@]}"; do
		pair=${id#*-}
		[[ " $WARM_ONLY " == *" ${pair%%-*} "* ]] && keep+=("$id")
	done
	ORDER=("${keep[@]}")
fi

# one timed run: the first command of the pipeline only (time wraps it alone)
run() { # run ID
	local id=$1 cmd=${CMD[$1]} first rest
	rm -rf "$DEST/copy" # untimed: the copies start from nothing
	first=${cmd%%|*}
	rest=
	[[ $cmd == *"|"* ]] && rest="|${cmd#*|}"
	bash -c "python3 '$OUT/rtime.py' '$OUT/t' $first $rest"
	cat "$OUT/t" >> "$OUT/$id"
}

for id in "${ORDER[@]}"; do run "$id"; done # warm the caches
for id in "${ORDER[@]}"; do : > "$OUT/$id"; done
for ((i = 0; i < REPEATS; i++)); do
	for id in "${ORDER[@]}"; do run "$id"; done
done

python3 - "$OUT" "$TREE" "$REPEATS" "${ORDER[@]}" <<'PY'
import statistics, sys
out, tree, reps, ids = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
med = {}
for i in ids:
    rows = [list(map(float, l.split())) for l in open(f"{out}/{i}") if l.strip()]
    med[i] = dict(cpu=statistics.median(r[0] + r[1] for r in rows),
                  wall=statistics.median(r[2] for r in rows),
                  csw=statistics.median(r[3] + r[4] for r in rows))
print(f"# warm cache, {tree}, medians of {reps} alternating runs")
print("| tool | CPU s | wall s | ctx switches | CPU / GNU | wall / GNU |")
print("|---|---|---|---|---|---|")
for i in ids:
    ref = med["gnu-" + i.split("-")[1]]
    m = med[i]
    print(f"| {i} | {m['cpu']:.3f} | {m['wall']:.3f} | {m['csw']:.0f} | "
          f"{m['cpu'] / ref['cpu']:.2f} | {m['wall'] / ref['wall']:.2f} |")
PY
