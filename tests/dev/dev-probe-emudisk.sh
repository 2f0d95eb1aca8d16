#!/bin/bash
# SPDX-License-Identifier: MIT
# The probe, with nothing forced, on the same ext4 image twice: through a
# plain loop device it is fast storage (SSD class), through the emulated
# disk (bench/emudisk: the hdd7200 model in real time) a disk (HDD class),
# both as the tools see it through the mounted filesystem.
#
# Why the answer does not depend on this machine's speed: the probe calls a
# device a disk when 3 in 4 of its random 4 KiB reads take 1 ms or more,
# and 4 times what 4 KiB of a stream takes. The emulated disk never answers
# before the model's time, only later (a loaded CPU, the FUSE round trip),
# and at --speed 1 the model's time is the drive's. Over a 64 GiB image a
# random read pays a seek across it and part of a turn: in 20,000 runs of
# the probe's pattern through the model (hdd7200, the Deskstar 7K500), the
# lower quartile was never below 3.5 ms (median 5.7 ms). The stream pays no
# seek (and the drive's read-ahead), 0.06 ms per 4 KiB; whatever the machine adds per request
# weighs 64 times more on a 4 KiB read than on a 256 KiB one, so the ratio
# only grows. Skips without root, loop devices, FUSE or the server.
. "$TESTS_DIR/dev/lib.sh"
dev_setup
[ -c /dev/fuse ] || skip "no /dev/fuse"
grep -qw fuse /proc/filesystems || skip "no fuse in this kernel"
EMUDISK=$SOURCE_ROOT/bench/emudisk
export EMUDISK_FUSE=$BUILD_ROOT/bench/emu/emudisk-fuse EMUDISK_RUN=$T/emudisk
[ -x "$EMUDISK_FUSE" ] || skip "no $EMUDISK_FUSE (built only where libfuse3 is)"
command -v mkfs.ext4 >/dev/null || skip "no mkfs.ext4"
touch "$T/emus"

# Filesystems on the emulated disks off first, then the disks, then the rest.
on_exit emu_cleanup
emu_cleanup() {
	local x
	[ -n "$T" ] || return 0
	cd / || true
	tac "$T/mounts" | while read -r x; do
		mountpoint -q "$x" && { umount "$x" 2>/dev/null || umount -l "$x"; }
	done
	while read -r x; do "$EMUDISK" stop "$x" || echo "emudisk stop $x failed" >&2; done <"$T/emus"
	: >"$T/emus"
	# what an interrupted start or stop left behind (all of it ours, under $EMUDISK_RUN)
	for x in "$EMUDISK_RUN"/emu.*; do
		[ -d "$x" ] || continue
		losetup -nO NAME -j "$x/mnt/disk" 2>/dev/null | xargs -r -n1 losetup -d
		# (from the table: mountpoint(1) cannot stat the mount of a server that died)
		grep -q " $x/mnt fuse" /proc/self/mounts && { umount "$x/mnt" 2>/dev/null || umount -l "$x/mnt"; }
		[ -f "$x/pid" ] && kill "$(cat "$x/pid")" 2>/dev/null
	done
	dev_cleanup
}

# mount_ro DEV NAME: mount DEV read-only at $T/NAME (no journal replay, no lazy init); prints the mount point
mount_ro() {
	mkdir "$T/$2"
	mount -o ro,noload "$1" "$T/$2" || return 1
	echo "$T/$2" >>"$T/mounts"
	echo "$T/$2"
}

# One image for both: a sparse 64 GiB ext4 with a small tree (seek distances are a disk's, the tmpfs holds a few MiB).
img=$T/mem/disk.img
truncate -s 64G "$img"
mkfs.ext4 -q -F -E lazy_itable_init=1,lazy_journal_init=1 "$img" >/dev/null || die "mkfs.ext4"
mkdir "$T/src" && mkdir -p "$T/src/t/a" && for i in 1 2 3; do head -c $((i * 5000)) /dev/zero >"$T/src/t/a/f$i"; done
mkdir "$T/fill" && mount -o loop "$img" "$T/fill" && echo "$T/fill" >>"$T/mounts" || die "mount $img"
cp -a "$T/src/t" "$T/fill/" && umount "$T/fill" || die "fill $img"

DU=$BUILD_ROOT/utils/sweep-du
# check DEV CLASS: the probe through the filesystem on DEV, then sweep-du's account of it
check() {
	local dev=$1 want=$2 name mnt line
	name=$(basename "$dev")
	mnt=$(mount_ro "$dev" "mnt-$want") || die "mount $dev"
	line=$("$P" --cache= "$mnt") || die "devclass-probe $mnt"
	echo "$want side, $dev: $line"
	dev_expect "$line" class="$want" reason=probe probes=1 cached=0 device="$name"
	if [ -x "$DU" ]; then
		"$DU" -s --verbose "$mnt/t" >"$T/du.out" 2>"$T/du.err" || die "sweep-du --verbose: $(cat "$T/du.err")"
		grep -q "^sweep-du: $mnt/t: ext4 on $name: device class $want (probe of $name: " "$T/du.err" ||
			{ cat "$T/du.err"; die "sweep-du --verbose on $dev does not say $want by probe"; }
		# and the profile that class gives (lib/device/devclass.c): a disk's sweep, or fast storage's parallelism
		local prof='plan physical, walk physical, no walk threads, .*, reader depth 128, ring 16 MiB, prefetch$'
		[ "$want" = ssd ] && prof='plan none, walk inode, [0-9]* walk threads, .*, reader depth 64, ring 64 MiB, no prefetch$'
		grep -q "^sweep-du: $mnt/t: profile: $prof" "$T/du.err" ||
			{ cat "$T/du.err"; die "sweep-du --verbose on $dev does not give the $want profile"; }
		du -s "$mnt/t" | cmp -s - "$T/du.out" || die "sweep-du differs from du on $dev"
	fi
	umount "$mnt" || die "umount $mnt"
}

plain=$(losetup --find --show -r "$img") || die "cannot attach a loop device"
echo "$plain" >>"$T/loops"
check "$plain" ssd
dev_detach "$plain"
ok "plain loop device -> ssd by probe, and its profile"

emu=$("$EMUDISK" start --read-only --speed 1 "$img") || die "emudisk start $img"
echo "$emu" >>"$T/emus"
[ "$("$EMUDISK" list | awk -v d="$emu" '$1 == d {print $2, $3, $4}')" = "hdd7200 1 $img" ] || die "emudisk list: $("$EMUDISK" list)"
check "$emu" hdd
# the reads reached the model: the server counts them
stats=$("$EMUDISK" stats "$emu") || die "emudisk stats"
echo "$stats"
reads=$(dev_field "$stats" reads) && [ "$reads" -ge 64 ] || die "the server saw $reads reads"
[ "$(dev_field "$stats" errors)" = 0 ] || die "the server saw errors: $stats"
ok "emulated disk -> hdd by probe, and its profile"

# stop: refused while mounted, then everything goes (device, mount, server)
mnt=$(mount_ro "$emu" busy) || die "mount $emu"
"$EMUDISK" stop "$emu" 2>"$T/err" && die "emudisk stop of a mounted device succeeded"
grep -q "in use" "$T/err" || die "emudisk stop: $(cat "$T/err")"
umount "$mnt" || die "umount $mnt"
dir=$(dirname "$(dirname "$(losetup -nO BACK-FILE "$emu")")")
pid=$(cat "$dir/pid")
"$EMUDISK" stop "$emu" || die "emudisk stop $emu"
: >"$T/emus"
[ -e "$dir" ] && die "emudisk stop left $dir"
[ "$(losetup -nO BACK-FILE "$emu" 2>/dev/null)" = "$dir/mnt/disk" ] && die "emudisk stop left $emu attached"
state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) && [ "$state" != Z ] && die "the server $pid still runs ($state)"
ok "emudisk stop: refused while mounted, then detached and ended"
finish
