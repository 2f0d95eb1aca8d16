#!/bin/bash
# SPDX-License-Identifier: MIT
# cold-ab.sh LOOPDEV MNT RUNS NAME=CMD...: copy MNT/tree to MNT/dst with each
# CMD ($S and $D name them) in turn, RUNS rounds, the order rotated a round;
# before each run the copy is removed and MNT unmounted and mounted again
# (cold), and each run ends with a sync of MNT. Prints: round, name, wall,
# user and system seconds, and the 1-minute load when it started.
set -u
L=$1 M=$2 runs=$3
shift 3
specs=("$@")
n=${#specs[@]}
err=$(mktemp)
trap 'rm -f "$err"' EXIT
for ((i = 0; i < runs; i++)); do
	for ((k = 0; k < n; k++)); do
		spec=${specs[$(((k + i) % n))]}
		rm -rf "$M/dst" && sync && umount "$M" && mount "$L" "$M" || exit 1
		load=$(cut -d' ' -f1 /proc/loadavg)
		/usr/bin/time -o "$err" -f "%e %U %S" bash -c "S=$M/tree D=$M/dst; ${spec#*=} && sync -f $M" >/dev/null 2>&1 ||
			{ echo "failed: ${spec#*=}" >&2; exit 1; }
		echo "$i ${spec%%=*} $(tail -1 "$err") $load"
	done
done
rm -rf "$M/dst"
