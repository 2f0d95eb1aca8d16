#!/bin/bash
# SPDX-License-Identifier: MIT
# partly-warm-ab.sh IMAGE RUNS BUILD [BUILD ...]
#
# A tree mostly in memory, a few of its directories not: IMAGE attached
# read-only to a loop device of its own (direct I/O) and mounted read-only
# at $M; before each run it is mounted again (every cache of it dropped),
# then all of it is read (find, cat: untimed) but the directories whose
# paths match one of the find -path patterns in $COLD (default
# "*/drivers/net */fs/xfs", in the linux-lite images' trees). Then BUILD's
# sweep-cp -a copies $M into a fresh directory under /dev/shm, in the class
# $SWEEP_DEVICE (default ssd), timed alone (wait4: user+system CPU, wall,
# voluntary context switches). The builds alternate, RUNS rounds; then
# each build's medians. Needs root. Never touches the image.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: partly-warm-ab.sh IMAGE RUNS BUILD [BUILD ...]" >&2; exit 2; }
img=$1 runs=$2
shift 2
COLD=${COLD:-*/drivers/net */fs/xfs}
export SWEEP_DEVICE=${SWEEP_DEVICE:-ssd}
. "$(dirname "$0")/ro-image.sh"
out=$(mktemp)
RO_IMAGE_FILES=("$out")
ro_image_open "$img" partly-warm-ab
read -ra pats <<<"$COLD" # (no globbing of the patterns here)
prune=()
for c in "${pats[@]}"; do prune+=(${prune[0]+-o} -path "$c"); done
for ((i = 1; i <= runs; i++)); do
	for b in "$@"; do
		ro_image_remount
		find "$M" \( "${prune[@]}" \) -prune -o -type f -print0 | xargs -0 cat >/dev/null 2>&1 || true
		dst=$(mktemp -d /dev/shm/partly-warm-ab.XXXXXX)
		python3 - "$b/utils/sweep-cp" "$M" "$dst/c" "$i" "$b" <<'PY' | tee -a "$out"
import os, sys, time
cp, src, dst, rnd, build = sys.argv[1:6]
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    os.execv(cp, [cp, "-a", src, dst])
_, status, ru = os.wait4(pid, 0)
load = open("/proc/loadavg").read().split()[0]
print(f"{rnd}\t{ru.ru_utime + ru.ru_stime:.3f}\t{time.monotonic() - t0:.3f}\t{ru.ru_nvcsw}\t{load}\t"
      f"{os.waitstatus_to_exitcode(status)}\t{build}")
PY
		rm -rf "$dst"
	done
done
python3 - "$out" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    _, cpu, wall, cs, load, rc, build = line.rstrip("\n").split("\t")
    runs.setdefault(build, []).append((float(cpu), float(wall), int(cs), float(load), int(rc)))
for b, v in runs.items():
    print(f"median cpu {statistics.median(x[0] for x in v):.3f}  wall {statistics.median(x[1] for x in v):.3f}  "
          f"ctx {statistics.median(x[2] for x in v):.0f}  load {min(x[3] for x in v):.1f}-{max(x[3] for x in v):.1f}  "
          f"exit {max(x[4] for x in v)}  {b}")
PY
