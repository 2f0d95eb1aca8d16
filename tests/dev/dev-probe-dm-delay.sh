#!/bin/bash
# SPDX-License-Identifier: MIT
# The probe on a slow device: a tmpfs-backed loop device under a
# device-mapper delay target (every read 10 ms late, as a disk's seek and
# turn would make it; a sequential read pays it once per large request):
# HDD class, while the loop device under it is SSD class. Skips without
# root, loop devices, dmsetup or the delay target.
. "$TESTS_DIR/dev/lib.sh"
dev_setup
command -v dmsetup >/dev/null || skip "no dmsetup"
[ -e /dev/mapper/control ] || skip "no device-mapper in this kernel"
command -v modprobe >/dev/null && modprobe dm-delay 2>/dev/null
dmsetup targets 2>/dev/null | grep -qw delay || skip "no dm-delay target"

L=$(dev_loop 1G) || die "cannot attach a loop device"
name=sweep-dev-test-$$
echo "$name" >>"$T/dms"
dmsetup create "$name" --table "0 $(blockdev --getsz "$L") delay $L 0 10" || die "dmsetup create"
dmsetup mknodes "$name" >/dev/null 2>&1
dm=/dev/mapper/$name
[ -b "$dm" ] || die "no $dm"

fast=$("$P" --cache= "bdev:$L") || die "devclass-probe bdev:$L"
slow=$("$P" --cache= "bdev:$dm") || die "devclass-probe bdev:$dm"
echo "loop:     $fast"
echo "dm-delay: $slow"
dev_expect "$fast" class=ssd reason=probe
dev_expect "$slow" class=hdd reason=probe probes=1 device="$(basename "$(readlink -f "$dm")")"
reads=$(dev_field "$slow" reads)
[ "$reads" -ge 8 ] && [ "$reads" -le 32 ] || die "reads=$reads, want 8..32"
ok "dm-delay over $L -> hdd, $L -> ssd"
finish
