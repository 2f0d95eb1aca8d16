#!/bin/bash
# Capture the "gnutar" trace of bench/model/README.md: GNU tar reading a
# deterministic tree of about a million small files on a fresh ext4 image on a
# loop device, cold cache, block_rq_issue/block_rq_complete from a private
# tracefs instance, cut to the first 1,000,000 requests of the loop device.
#
#   bench/model/gnutar-trace.sh OUT.trace [FILES]      (root, loop devices, tracefs)
#
# The tree is the same on every machine (seeded sizes and names); the
# capture's times are the machine's own, so replays differ a little from one
# capture to the next, while the request stream (which blocks, in which
# order) depends only on ext4's allocator and tar. About 6 GB of image in
# TMPDIR and a few minutes.
set -euo pipefail
out=$1 nfiles=${2:-960000}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../tests/common/loopfs.sh"
. "$here/../../tests/common/tracefs.sh"
loopfs_require ext4
inst=
cleanup() {
	[ -n "${pipe_pid:-}" ] && kill "$pipe_pid" 2>/dev/null || true
	[ -n "$inst" ] && [ -d "$inst" ] && { echo 0 >"$inst/events/block/enable" 2>/dev/null || true; rmdir "$inst" 2>/dev/null || true; }
	tracefs_release
	loopfs_cleanup
}
trap cleanup EXIT
tracefs_find || loopfs_skip "no tracefs with instances (mount -t tracefs failed)"
inst=$TRACEFS/instances/sweep-gnutar-$$

mnt=$(loopfs_new ext4 12G -b 4096 -N $((nfiles + 100000)))
dev=$(loopfs_dev "$mnt")
majmin=$(lsblk -dno MAJ:MIN "$dev" | tr -d ' ' | tr : ,)
mount -o remount,noatime "$mnt"
# the tree: 1000 directories of nfiles/1000 files, 85% of 1-4 KiB, 14% of 4-16 KiB, 1% of 16-256 KiB
python3 - "$mnt/tree" "$nfiles" <<'PY'
import os, random, sys
root, n = sys.argv[1], int(sys.argv[2])
rnd = random.Random(20261123)
per = max(1, n // 1000)
buf = bytes(rnd.getrandbits(8) for _ in range(1 << 20))
for d in range(1000):
    dd = os.path.join(root, "d%03d" % d)
    os.makedirs(dd)
    for i in range(per):
        x = rnd.random()
        size = rnd.randint(1, 4096) if x < 0.85 else rnd.randint(4097, 16384) if x < 0.99 else rnd.randint(16385, 1 << 18)
        with open(os.path.join(dd, "f%06x" % rnd.getrandbits(24)), "wb") as f:
            f.write(buf[:size])
PY
sync
echo 3 >/proc/sys/vm/drop_caches
mkdir "$inst"
echo 262144 >"$inst/buffer_size_kb"
echo "dev == $((${majmin%,*} << 20 | ${majmin#*,}))" >"$inst/events/block/filter" 2>/dev/null || true
echo 1 >"$inst/events/block/block_rq_issue/enable"
echo 1 >"$inst/events/block/block_rq_complete/enable"
cat "$inst/trace_pipe" >"$out.raw" &
pipe_pid=$!
(cd "$mnt" && tar -cf - tree | cat >/dev/null)
sleep 2
echo 0 >"$inst/events/block/enable"
sleep 1
kill "$pipe_pid" 2>/dev/null || true
wait "$pipe_pid" 2>/dev/null || true
pipe_pid=
# the loop device's events, up to the completion of its 1,000,000th request
awk -v d="$majmin" -v max=1000000 '$0 ~ ": block_rq_(issue|complete): " d " " {
	print; if ($0 ~ /block_rq_issue/ && $0 ~ / [RW][A-Z]* [0-9]+ \(/) n++
	if (n >= max && ++tail > 64) exit }' "$out.raw" >"$out"
rm -f "$out.raw"
echo "gnutar-trace: $(grep -c ': block_rq_issue: ' "$out") issues from $majmin in $out"
