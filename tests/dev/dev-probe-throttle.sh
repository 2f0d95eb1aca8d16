#!/bin/bash
# SPDX-License-Identifier: MIT
# The probe on a slow device: a tmpfs-backed loop device, read from a
# block-I/O cgroup that lets 50 reads a second through (blk-throttle,
# cgroup v1 blkio.throttle.read_iops_device or v2 io.max), costs 10-20 ms a
# random read, as a disk does, and streams in large requests: HDD class. Outside the cgroup it is fast: SSD class. Skips without root, loop
# devices or a blk-throttle cgroup controller.
. "$(dirname "$0")/lib.sh"
dev_setup

L=$(dev_loop 1G) || dev_fail "cannot attach a loop device"
mm=$(dev_majmin "$L")
cg=
if [ -w /sys/fs/cgroup/blkio/cgroup.procs ] && [ -e /sys/fs/cgroup/blkio/blkio.throttle.read_iops_device ]; then
	cg=/sys/fs/cgroup/blkio/sweep-dev-test-$$
	mkdir "$cg" && echo "$cg" >>"$T/cgroups" || dev_skip "cannot make a blkio cgroup"
	echo "$mm 50" >"$cg/blkio.throttle.read_iops_device" || dev_skip "blkio throttle refused"
else
	root=
	for r in /sys/fs/cgroup /sys/fs/cgroup/unified; do
		[ -f "$r/cgroup.controllers" ] && grep -qw io "$r/cgroup.controllers" && root=$r && break
	done
	[ -n "$root" ] || dev_skip "no blk-throttle cgroup controller (blkio or io)"
	grep -qw io "$root/cgroup.subtree_control" || echo +io >"$root/cgroup.subtree_control" 2>/dev/null ||
		dev_skip "cannot enable the io controller"
	cg=$root/sweep-dev-test-$$
	mkdir "$cg" && echo "$cg" >>"$T/cgroups" || dev_skip "cannot make an io cgroup"
	echo "$mm riops=50" >"$cg/io.max" || dev_skip "io.max refused"
fi

fast=$("$P" --cache= "bdev:$L") || dev_fail "devclass-probe bdev:$L"
slow=$(sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' _ "$cg" "$P" --cache= "bdev:$L") ||
	dev_fail "devclass-probe bdev:$L in $cg"
echo "outside: $fast"
echo "inside:  $slow"
dev_expect "$fast" class=ssd reason=probe probes=1
dev_expect "$slow" class=hdd reason=probe probes=1
# The probe stays small on a slow device: it stops timing random reads after about 0.4 s.
reads=$(dev_field "$slow" reads)
[ "$reads" -ge 8 ] && [ "$reads" -le 32 ] || dev_fail "reads=$reads, want 8..32"
echo "ok: $L throttled to 50 reads/s -> hdd, unthrottled -> ssd"
