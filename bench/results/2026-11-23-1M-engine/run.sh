#!/bin/bash
# SPDX-License-Identifier: MIT
# Issue 15's targets on the fresh 1M-file ext4 tree (bench/mkfiles --files 1M),
# with the metadata engine wired into the walk and the plan: every pair of
# tools A B run cold (remount) alternately, A B A B, so that each ratio comes
# from two neighbouring runs on this shared, noisy machine.
#
#   run.sh [--fs ext4] [--repeats 3] [--out DIR] [--pairs LIST]
#
# Pairs (LIST, comma separated; default all):
#   plan      sweep-plan --no-compare            vs find -printf '%i %s\n'
#   read      sweep-plan --read --no-compare     vs tar cf - | cat
#   tar       sweep-tar -cf - | cat              vs tar cf - | cat
#   nobody    as uid 65534: sweep-plan --no-compare vs find -printf
#   locate    as uid 65534: sweep-plan --no-compare, its batch located on
#             threads (the default) vs on one (SWEEP_LOCATE_THREADS=1)
#   prefetch  sweep-plan --no-compare            vs the same with --no-metascan
#   ssd       SWEEP_DEVICE=ssd: sweep-plan --no-compare with SWEEP_METASCAN=on vs off
# Every run but the ssd pair's is of the HDD class (SWEEP_DEVICE=hdd, unless
# set otherwise): the loop device over this VM's virtio disk probes as SSD,
# and the issue's targets are about the disk-order path.
# Writes DIR/runs.tsv (one line per run) and DIR/pairs.txt (ratios and medians).
set -euo pipefail
BENCH_PROG=1M-engine
. "$(dirname "$0")/../2026-11-23-1M-profile/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
TAR=$BUILD/utils/sweep-tar

FSLIST=ext4 REPEATS=3 OUT=$HERE/out PAIRS=plan,read,tar,nobody,locate,prefetch,ssd
while [ $# -gt 0 ]; do
	case $1 in
	--fs) FSLIST=$2; shift ;;
	--repeats) REPEATS=$2; shift ;;
	--out) OUT=$2; shift ;;
	--pairs) PAIRS=$2; shift ;;
	*) echo "usage: run.sh [--fs ext4] [--repeats N] [--out DIR] [--pairs LIST]" >&2; exit 2 ;;
	esac
	shift
done
bench_setup "$OUT"
export SWEEP_DEVICE=${SWEEP_DEVICE:-hdd}
[ -x "$TAR" ] || die "build first: $TAR"
TSV=$OUT/runs.tsv
[ -e "$TSV" ] || printf 'fs\tpair\ttool\trep\twall_s\tsys_s\tuser_s\tmaxrss_kb\tload1\n' >"$TSV"

# run FS PAIR TOOL REP cmd...: one cold run, timed
run() {
	local fs=$1 pair=$2 tool=$3 rep=$4 t; shift 4
	cold
	/usr/bin/time -f '%e %S %U %M' -o "$OUT/time" "$@" >/dev/null 2>"$OUT/err" ||
		{ say "$fs $tool failed: $(tail -3 "$OUT/err")"; return 0; }
	t=$(tail -1 "$OUT/time")
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$fs" "$pair" "$tool" "$rep" $t "$(cut -d' ' -f1 /proc/loadavg)" >>"$TSV"
	say "$fs $pair $tool #$rep: wall ${t%% *} s (load $(cut -d' ' -f1 /proc/loadavg))"
}



pair() { # pair FS NAME REP: one A run, then one B run
	local fs=$1 p=$2 rep=$3 T=$MNT/t
	case $p in
	plan)
		run "$fs" plan sweep-plan "$rep" "$PLAN" --no-compare "$T"
		run "$fs" plan find "$rep" find "$T" -printf '%i %s\n' ;;
	read)
		run "$fs" read sweep-plan-read "$rep" "$PLAN" --read --no-compare "$T"
		run "$fs" read gnu-tar "$rep" bash -c 'tar cf - -C "$1" t | cat >/dev/null' _ "$MNT" ;;
	tar)
		run "$fs" tar sweep-tar "$rep" bash -c '"$1" -cf - -C "$2" t | cat >/dev/null' _ "$TAR" "$MNT"
		run "$fs" tar gnu-tar "$rep" bash -c 'tar cf - -C "$1" t | cat >/dev/null' _ "$MNT" ;;
	nobody)
		run "$fs" nobody sweep-plan "$rep" setpriv --reuid=65534 --regid=65534 --clear-groups "$PLAN" --no-compare "$T"
		run "$fs" nobody find "$rep" setpriv --reuid=65534 --regid=65534 --clear-groups find "$T" -printf '%i %s\n' ;;
	locate)
		run "$fs" locate threads "$rep" setpriv --reuid=65534 --regid=65534 --clear-groups "$PLAN" --no-compare "$T"
		run "$fs" locate one-thread "$rep" setpriv --reuid=65534 --regid=65534 --clear-groups env SWEEP_LOCATE_THREADS=1 "$PLAN" --no-compare "$T" ;;
	prefetch)
		run "$fs" prefetch metascan "$rep" "$PLAN" --no-compare "$T"
		run "$fs" prefetch no-metascan "$rep" "$PLAN" --no-compare --no-metascan "$T" ;;
	ssd)
		run "$fs" ssd metascan-on "$rep" env SWEEP_DEVICE=ssd SWEEP_METASCAN=on "$PLAN" --no-compare "$T"
		run "$fs" ssd metascan-off "$rep" env SWEEP_DEVICE=ssd SWEEP_METASCAN=off "$PLAN" --no-compare "$T" ;;
	esac
}


for fs in ${FSLIST//,/ }; do
	mount_1M "$fs"
	chmod 755 "$MNT" # uid 65534 must reach the tree
	for ((rep = 1; rep <= REPEATS; rep++)); do
		for p in ${PAIRS//,/ }; do
			pair "$fs" "$p" "$rep"
		done
	done
	unmount_1M
done

# ratios pair by pair (A / B of the same repeat) and medians
"$HERE/summarize.py" "$TSV" >"$OUT/pairs.txt"
cat "$OUT/pairs.txt"
