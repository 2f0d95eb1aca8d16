# SPDX-License-Identifier: MIT
# Shared by the device-class tests: source it, then call dev_setup.
#
#   dev_setup                 # exit 77 without root or loop devices; $T scratch, tmpfs at $T/mem
#   L=$(dev_loop 1G)          # a loop device over a sparse file on that tmpfs (fast)
#   dev_field "$line" class   # the value of key=value in a devclass-probe line
#
# Everything set up (device-mapper devices, cgroups, mounts, loop devices,
# cache files the tools left in /run/sweep for them) is torn down by the
# exit (on_exit), on success, failure or interruption. Lists live in files
# under $T, because $(...) runs helpers in a subshell.
# Checks, skips, cleanup and the exit status: tests/common/lib.sh.
. "$TESTS_DIR/common/lib.sh"
set -u
# These tests are about the probe: never the class the suite may force (meson -Dtest_device).
unset SWEEP_DEVICE

P=$BUILD_ROOT/tests/dev/devclass-probe
T=

dev_setup() {
	[ -x "$P" ] || die "no $P"
	[ "$(id -u)" = 0 ] || skip "needs root"
	[ -e /dev/loop-control ] || skip "no /dev/loop-control"
	command -v losetup >/dev/null || skip "no losetup"
	T=$(mktemp -d "${TMPDIR:-/tmp}/sweep-dev.XXXXXX")
	chmod 755 "$T"
	on_exit dev_cleanup
	touch "$T/dms" "$T/cgroups" "$T/mounts" "$T/loops"
	mkdir "$T/mem"
	mount -t tmpfs -o size=2300m sweep-dev-test "$T/mem" || skip "cannot mount tmpfs"
	# The cross-run cache of the tests: root's, writable by nobody else, like /run/sweep.
	mkdir -m 755 "$T/cache"
	local probe
	truncate -s 1M "$T/mem/probe.img"
	probe=$(losetup --find --show "$T/mem/probe.img" 2>/dev/null) || skip "cannot attach a loop device"
	losetup -d "$probe"
	rm -f "$T/mem/probe.img"
}

# dev_loop SIZE [NAME]: attach a loop device over a new sparse file in the tmpfs; prints /dev/loopN.
dev_loop() {
	local size=$1 img dev
	img=$(mktemp "$T/mem/img.XXXXXX")
	truncate -s "$size" "$img"
	dev=$(losetup --find --show "$img") || return 1
	echo "$dev" >>"$T/loops"
	echo "$dev"
}

# The MAJ:MIN of a block device node.
dev_majmin() {
	printf '%d:%d\n' "0x$(stat -L -c %t "$1")" "0x$(stat -L -c %T "$1")"
}

dev_field() { # dev_field LINE KEY
	local kv
	for kv in $1; do
		[ "${kv%%=*}" = "$2" ] && { echo "${kv#*=}"; return 0; }
	done
	return 1
}

# dev_expect LINE KEY=VALUE...: every pair must be in the line.
dev_expect() {
	local line=$1 kv got
	shift
	for kv in "$@"; do
		got=$(dev_field "$line" "${kv%%=*}") || die "no ${kv%%=*} in: $line"
		[ "$got" = "${kv#*=}" ] || die "want $kv, got ${kv%%=*}=$got in: $line"
	done
}

# dev_mount_ext4 DEV: mkfs.ext4 and mount DEV; prints the mount point.
dev_mount_ext4() {
	local mnt
	command -v mkfs.ext4 >/dev/null || skip "no mkfs.ext4"
	mnt=$(mktemp -d "$T/mnt.XXXXXX")
	mkfs.ext4 -q -F "$1" >/dev/null || return 1
	mount "$1" "$mnt" || return 1
	echo "$mnt" >>"$T/mounts"
	echo "$mnt"
}

# Detach loop device DEV if it is still ours (another test may have its number by now).
dev_detach() {
	local back f
	back=$(losetup -nO BACK-FILE "$1" 2>/dev/null) || return 0
	case $back in "$T"/*) ;; *) return 0 ;; esac
	# What the tools cached in /run/sweep about it (the key names our backing file).
	f="/run/sweep/device-$(dev_majmin "$1")"
	[ -f "$f" ] && grep -q "back=$T/" "$f" && rm -f "$f"
	losetup -d "$1"
}

dev_cleanup() {
	local x
	cd / || true
	[ -n "$T" ] || return 0
	while read -r x; do
		dmsetup remove --retry "$x" >/dev/null 2>&1
	done <"$T/dms"
	while read -r x; do
		rmdir "$x" 2>/dev/null
	done <"$T/cgroups"
	tac "$T/mounts" | while read -r x; do
		mountpoint -q "$x" && { umount "$x" 2>/dev/null || umount -l "$x"; }
	done
	while read -r x; do
		dev_detach "$x"
	done <"$T/loops"
	mountpoint -q "$T/mem" && { umount "$T/mem" 2>/dev/null || umount -l "$T/mem"; }
	rm -rf "$T"
	T=
}
