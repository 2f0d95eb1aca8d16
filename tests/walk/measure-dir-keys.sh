#!/bin/bash
# SPDX-License-Identifier: MIT
# Not a test: measures whether keying the C-SCAN directory queue by the
# directory's first physical block (order physical) beats keying it by inode
# (order inode, the seed's choice) and a plain readdir walk (order none, what
# find/tar/cp do), on an aged ext4 image with cold caches.
#
#   [FS=xfs] tests/walk/measure-dir-keys.sh BUILD_DIR [WORKDIR]   (root; a few minutes)
#
# Cold cache without touching anyone else's: the image sits on a loop device
# with direct I/O (no host page cache), and is unmounted and mounted again
# before each run. Requests are counted from a tracefs instance of our own
# (block_rq_issue on that loop device); a seek is a move of at least 1 MiB or
# any move backwards, as issue 2 counts them.
#
# Result on 2026-11-22 (62,082 entries, 5,646 directories, 3 GiB ext4 aged by
# interleaved copies and random deletions; virtio disk, so seconds mean
# little, seeks are what an HDD would pay), two rounds:
#   find               ~2,995-3,139 seeks
#   order none         ~3,015-3,294 seeks (the same walk as find)
#   order inode        ~1,264-1,341 seeks
#   order physical       ~655-851 seeks   <- directory-block keys: AUTO uses them
# Request counts were the same (6,500-6,900) for all.
# The same on xfs (FS=xfs, 62,118 entries): find ~1,880 seeks (it stats
# nothing, so fewer requests), order none ~2,370-2,630, order inode
# ~1,080-1,170, order physical the same as inode: xfs inode numbers encode
# where the inode is, and its directory blocks sit next to it.
set -eu
build=$1
fs=${FS:-ext4}
work=${2:-/work/walk-bench}/$fs
W=$build/tests/walk/walk-list
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 77; }
mkdir -p "$work"
img=$work/$fs.img mnt=$work/mnt
mkdir -p "$mnt"
dev=
. "$(dirname "$0")/../common/tracefs.sh"
tracefs_find || { echo "no tracefs" >&2; exit 77; }
tr=$TRACEFS/instances/sweep-walk-$$
cleanup() {
	[ -d "$tr" ] && { echo 0 >"$tr/tracing_on"; rmdir "$tr"; }
	tracefs_release
	mountpoint -q "$mnt" && umount "$mnt"
	[ -n "$dev" ] && losetup -d "$dev"
	return 0
}
trap cleanup EXIT

if [ ! -f "$work/aged" ]; then
	rm -f "$img"
	truncate -s 3G "$img"
	case $fs in
	xfs) mkfs.xfs -q -f "$img" ;;
	*) "mkfs.$fs" -q -F "$img" ;;
	esac
	dev=$(losetup --find --show --direct-io=on "$img")
	mount "$dev" "$mnt"
	# Aging: trees copied by two writers at once (their blocks interleave),
	# then churn: random deletions, more copies, files added to old directories.
	cp -a /usr/share/doc "$mnt/r1-doc" & cp -a /usr/include "$mnt/r1-inc" & wait
	find "$mnt" -type f | shuf -n 20000 --random-source=<(yes) | xargs -d '\n' rm -f
	cp -a /usr/share/man "$mnt/r2-man" & cp -a /usr/share/locale "$mnt/r2-loc" & wait
	find "$mnt" -type f | shuf -n 20000 --random-source=<(yes 2) | xargs -d '\n' rm -f
	find "$mnt" -type d | shuf -n 3000 --random-source=<(yes 3) | while read -r d; do
		for i in 1 2 3 4 5 6; do echo "$d $i" >"$d/late-$i"; done
	done
	cp -a /usr/share/i18n "$mnt/r3-i18n" & cp -a /usr/include "$mnt/r3-inc" & wait
	umount "$mnt"
	losetup -d "$dev"
	dev=
	touch "$work/aged"
fi

dev=$(losetup --find --show --direct-io=on "$img")
mount -o ro "$dev" "$mnt"
devno=$(printf '%d,%d' $(stat -L -c '0x%t 0x%T' "$dev"))
echo "image: $(find "$mnt" | wc -l) entries, $(find "$mnt" -type d | wc -l) directories on $dev ($devno)"
mkdir "$tr"
echo "$(( 64 * 1024 ))" >"$tr/buffer_size_kb"
echo 1 >"$tr/events/block/block_rq_issue/enable"

# count: requests, seeks, sectors moved, from the trace.
count() {
	awk -v dev="$devno" '
		/block_rq_issue:/ {
			for (i = 1; i <= NF; i++) if ($i == dev) break
			if (i > NF) next
			# dev rwbs bytes () sector + nr [comm]
			for (j = i; j <= NF; j++) if ($j == "+") break
			s = $(j - 1); n = $(j + 1)
			if (s !~ /^[0-9]+$/) next
			req++
			if (have && (s < end || s - end >= 2048)) seeks++
			if (have) move += (s > end ? s - end : end - s)
			end = s + n; have = 1
		}
		END { printf "%d requests, %d seeks, %.0f MiB head travel", req, seeks, move / 2048 }' "$1"
}

run() { # run LABEL CMD...
	local label=$1; shift
	umount "$mnt"; mount -o ro "$dev" "$mnt"
	echo >"$tr/trace"
	echo 1 >"$tr/tracing_on"
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >/dev/null 2>&1 || true
	t1=$(date +%s.%N)
	echo 0 >"$tr/tracing_on"
	cat "$tr/trace" >"$work/trace-$label"
	printf '%-22s %6.2f s  %s\n' "$label" "$(echo "$t1 - $t0" | bc)" "$(count "$work/trace-$label")"
}

for round in 1 2; do
	echo "round $round"
	run find find "$mnt"
	run none "$W" -0 --order=none "$mnt"
	run inode-uring env SWEEP_BACKEND=uring "$W" -0 --order=inode "$mnt"
	run inode-syscall env SWEEP_BACKEND=syscall "$W" -0 --order=inode "$mnt"
	run physical-uring env SWEEP_BACKEND=uring "$W" -0 --order=physical "$mnt"
	run physical-syscall env SWEEP_BACKEND=syscall "$W" -0 --order=physical "$mnt"
done
