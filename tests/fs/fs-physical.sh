#!/bin/bash
# SPDX-License-Identifier: MIT
# On real ext4 and xfs loop images: 2,000 files written in shuffled order by two
# interleaving writers. sweep-plan --order=physical must list them in ascending
# first-block order, its offsets must agree with filefrag -v, and --read (both
# backends, cold cache) must deliver exactly the bytes cat reads. Then 3,000
# files of a block or less written one after the other: read cold in the HDD
# class, the disk's prefetch asks for neighbours together, so the device sees
# at most one read request for every four files (one each when every file
# was asked for on its own).
# Needs root and loop devices; skips (77) without them.
. "${TESTS_DIR:?}/common/lib.sh"
set -u
. "$TESTS_DIR/common/loopfs.sh"
loopfs_require ext4 xfs
require_cmd filefrag
PLAN=${BUILD_ROOT:?}/utils/sweep-plan
scratch=$LOOPFS_WORK/scratch
mkdir -p "$scratch"

# writer LIST: create each file of LIST (lines "dir/name size") under $1
writer() {
	local root=$1 list=$2 path size
	while read -r path size; do
		head -c "$size" /dev/urandom >"$root/$path"
	done <"$list"
}

populate() { # populate MNT
	local mnt=$1 i
	for i in $(seq 0 19); do mkdir -p "$mnt/d$i"; done
	# sizes: mostly small, some a few blocks, a few large enough for several extents
	for i in $(seq 1 2000); do
		case $((i % 50)) in
		0) size=$((1048576 + i * 97)) ;;
		1 | 2 | 3) size=$((40000 + i * 13)) ;;
		*) size=$((1 + (i * 7919) % 12000)) ;;
		esac
		echo "d$((i % 20))/f$i $size"
	done | shuf >"$scratch/all"
	# two writers at once, so their allocations interleave on disk
	split -n l/2 "$scratch/all" "$scratch/part."
	writer "$mnt" "$scratch/part.aa" &
	local pid=$!
	writer "$mnt" "$scratch/part.ab"
	wait $pid
	sync # delayed allocation gets its blocks: FIEMAP then has locations
}

check_fs() { # check_fs FSTYPE
	local fstype=$1 mnt bs out
	mnt=$(loopfs_new "$fstype" 400M) || { fail "$fstype: cannot make a loop filesystem"; return; }
	populate "$mnt"
	bs=$(stat -f -c %S "$mnt")
	out=$scratch/$fstype.out

	case_begin "$fstype: --order=physical ascends by first block, offsets as filefrag -v, fewer seeks"
	"$PLAN" --order=physical "$mnt" >"$out" 2>"$scratch/$fstype.err" || fail "$fstype: sweep-plan exited $?: $(cat "$scratch/$fstype.err")"
	[ "$(wc -l <"$out")" = 2000 ] || fail "$fstype: $(wc -l <"$out") lines, want 2000"
	grep -q '^- ' "$out" && fail "$fstype: files without a location after sync: $(grep -c '^- ' "$out")"
	awk 'NR > 1 && $1 + 0 < prev { print "not ascending at line " NR; bad = 1 } { prev = $1 + 0 } END { exit bad }' "$out" ||
		fail "$fstype: --order=physical is not in ascending first-block order"

	# filefrag -v on every file at once: the physical start of each file's first extent, in bytes
	cut -d' ' -f3- "$out" | tr '\n' '\0' | xargs -0 filefrag -v 2>/dev/null |
		awk -F'[: .]+' -v bs="$bs" '
			/^File size of / { sub(/^File size of /, ""); sub(/ is [0-9]+ \(.*$/, ""); file = $0; next }
			/^ *0:/ && file != "" { printf "%.0f %s\n", $5 * bs, file; file = "" }' >"$scratch/$fstype.ff"
	[ "$(wc -l <"$scratch/$fstype.ff")" = 2000 ] || fail "$fstype: filefrag gave $(wc -l <"$scratch/$fstype.ff") first extents"
	diff <(awk '{ off = $1; $1 = ""; $2 = ""; sub(/^  /, ""); print off " " $0 }' "$out" | sort) \
		<(sort "$scratch/$fstype.ff") >"$scratch/$fstype.diff" ||
		fail "$fstype: offsets disagree with filefrag -v: $(head -4 "$scratch/$fstype.diff")"

	# the sweep moves the head less than the readdir-order walk of the same files
	local r p
	r=$(sed -n 's/.*readdir_seeks=\([0-9]*\).*/\1/p' "$scratch/$fstype.err")
	p=$(sed -n 's/.*plan_seeks=\([0-9]*\).*/\1/p' "$scratch/$fstype.err")
	echo "$fstype: seeks readdir order $r, plan order $p"
	[ -n "$r" ] && [ -n "$p" ] && [ "$p" -le "$r" ] || fail "$fstype: plan seeks $p > readdir seeks $r"

	case_end

	# --read, cold cache, both backends: the data stream equals cat of the files in plan order
	cut -d' ' -f3- "$out" | tr '\n' '\0' | xargs -0 cat | sha256sum >"$scratch/want.sum"
	local total
	total=$(cut -d' ' -f3- "$out" | tr '\n' '\0' | xargs -0 stat -c %s | awk '{ s += $1 } END { print s }')
	local backends=syscall
	have_uring && backends="uring syscall" || skip_part "$fstype: --read --backend=uring: io_uring is not available here"
	for backend in $backends; do
		case_begin "$fstype: --read --backend=$backend delivers what cat reads"
		sync
		echo 3 >/proc/sys/vm/drop_caches
		"$PLAN" --order=physical --read --backend=$backend --dump="$scratch/dump" --no-compare "$mnt" \
			>/dev/null 2>"$scratch/read.err"
		sha256sum <"$scratch/dump" >"$scratch/got.sum"
		grep -q "read 2000 files, $total bytes in .* (backend $backend, " "$scratch/read.err" ||
			fail "$fstype/$backend: totals: $(cat "$scratch/read.err")"
		cmp -s "$scratch/want.sum" "$scratch/got.sum" || fail "$fstype/$backend: data differs from cat"
		grep "read 2000" "$scratch/read.err"
		case_end
	done
	have_uring && small "$fstype" "$mnt" || skip_part "$fstype: the disk's prefetch needs io_uring"
}

# small FSTYPE MNT: neighbouring small files cost far fewer read requests than files
small() {
	local fstype=$1 mnt=$2 dev i r0 r1
	mkdir "$mnt/small"
	for i in $(seq 1 3000); do head -c $((1 + i * 131 % 4096)) /dev/urandom >"$mnt/small/f$i"; done
	sync
	case_begin "$fstype: 3,000 small files read cold in the HDD class: at most 750 read requests"
	dev=$(basename "$(loopfs_dev "$mnt")")
	echo 3 >/proc/sys/vm/drop_caches
	r0=$(awk '{ print $1 }' "/sys/block/$dev/stat")
	SWEEP_DEVICE=hdd "$PLAN" --read --no-compare "$mnt/small" >/dev/null 2>"$scratch/small.err" ||
		fail "$fstype: sweep-plan --read exited $?: $(cat "$scratch/small.err")"
	r1=$(awk '{ print $1 }' "/sys/block/$dev/stat")
	grep -q "read 3000 files" "$scratch/small.err" || fail "$fstype: $(cat "$scratch/small.err")"
	echo "$fstype: 3000 small files in $((r1 - r0)) read requests"
	[ $((r1 - r0)) -le 750 ] || fail "$fstype: $((r1 - r0)) read requests for 3000 small files, want at most 750"
	case_end
}

check_fs ext4
check_fs xfs
finish
