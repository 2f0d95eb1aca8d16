#!/bin/bash
# SPDX-License-Identifier: MIT
# remount-cold-ab.sh IMAGE RUNS 'CMD' ['CMD' ...]
#
# Cold runs on fast storage: IMAGE attached read-only to a loop device of
# its own (direct I/O, so nothing of it stays in the page cache of the file
# beneath) and mounted read-only at $M (ext4: noload; xfs: norecovery,
# nouuid); before every run it is unmounted and mounted again, which drops
# its page, inode and dentry caches. The commands alternate, RUNS rounds.
# Prints one line a run (round, wall, user+sys CPU seconds, load average,
# command), then each command's medians. Commands use $M ('du -s $M').
# Needs root. Never touches the image.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: remount-cold-ab.sh IMAGE RUNS 'CMD' ['CMD' ...]" >&2; exit 2; }
img=$1 runs=$2
shift 2
. "$(dirname "$0")/ro-image.sh"
out=$(mktemp)
RO_IMAGE_FILES=("$out" "$out.t")
ro_image_open "$img" remount-cold-ab
export M
for ((i = 1; i <= runs; i++)); do
	for c in "$@"; do
		ro_image_remount
		/usr/bin/time -f '%e %U %S' -o "$out.t" bash -c "$c" >/dev/null 2>&1 || { echo "remount-cold-ab: failed: $c" >&2; exit 1; }
		read -r wall user sys <"$out.t"
		printf '%d\t%s\t%.2f\t%s\t%s\n' "$i" "$wall" "$(echo "$user + $sys" | bc)" "$(cut -d' ' -f1 /proc/loadavg)" "$c" | tee -a "$out"
	done
done
python3 - "$out" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    _, wall, cpu, load, cmd = line.rstrip("\n").split("\t", 4)
    runs.setdefault(cmd, []).append((float(wall), float(cpu), float(load)))
for cmd, v in runs.items():
    print(f"median wall {statistics.median(x[0] for x in v):.3f}  cpu {statistics.median(x[1] for x in v):.3f}  "
          f"load {min(x[2] for x in v):.1f}-{max(x[2] for x in v):.1f}  {cmd}")
PY
