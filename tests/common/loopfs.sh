# SPDX-License-Identifier: MIT
# Real filesystems on loop devices for shell tests. Source this file, then:
#
#   loopfs_require                 # exit 77 (skip) without root, loop devices or mkfs
#   mnt=$(loopfs_new ext4 256M)    # make an image, mkfs, attach, mount; prints the mount point
#   loopfs_dev "$mnt"              # the loop device behind a mount point
#
# Everything set up is torn down at exit (unmount, detach, remove the image),
# whether the test passes, fails or is interrupted. With tests/common/lib.sh
# sourced first, that is an on_exit entry and a skip is lib.sh's skip;
# otherwise an EXIT trap, and a test that needs its own EXIT work calls
# loopfs_cleanup from its trap.

LOOPFS_WORK=${LOOPFS_WORK:-}
LOOPFS_CLEANUP_SET=
LOOPFS_MOUNTS=()
LOOPFS_DEVS=()

loopfs_skip() {
	if declare -F skip >/dev/null; then skip "$@"; fi
	echo "SKIP: $*" >&2
	exit 77
}

loopfs_require() {
	[ "$(id -u)" = 0 ] || loopfs_skip "needs root"
	[ -e /dev/loop-control ] || loopfs_skip "no /dev/loop-control"
	command -v losetup >/dev/null || loopfs_skip "no losetup"
	for fs in "$@"; do
		command -v "mkfs.$fs" >/dev/null || loopfs_skip "no mkfs.$fs"
		grep -qw "$fs" /proc/filesystems || modprobe "$fs" 2>/dev/null ||
			grep -qw "$fs" /proc/filesystems || loopfs_skip "kernel has no $fs"
	done
	# The teardown is registered once, also when the caller chose LOOPFS_WORK
	# (tests/multidisk puts it on a tmpfs of its own): without it, every loop
	# device and mount of the test would outlive it.
	if [ -z "$LOOPFS_CLEANUP_SET" ]; then
		LOOPFS_CLEANUP_SET=1
		[ -n "$LOOPFS_WORK" ] || LOOPFS_WORK=$(mktemp -d "${TMPDIR:-/tmp}/sweep-loopfs.XXXXXX")
		mkdir -p "$LOOPFS_WORK"
		if declare -F on_exit >/dev/null; then
			on_exit loopfs_cleanup
		else
			trap loopfs_cleanup EXIT
			trap 'exit 130' INT TERM
		fi
	fi
	# Probe once that attaching a loop device really works here.
	local probe="$LOOPFS_WORK/probe.img" dev
	truncate -s 1M "$probe"
	dev=$(losetup --find --show "$probe" 2>/dev/null) || loopfs_skip "cannot attach a loop device"
	losetup -d "$dev"
	rm -f "$probe"
}

# loopfs_new FSTYPE SIZE [mkfs options...] -> prints mount point
loopfs_new() {
	local fstype=$1 size=$2; shift 2
	# mnt=$(loopfs_new ...) runs in a subshell, where the arrays do not reach
	# the EXIT trap: number the images by what is on disk and list devices
	# and mounts in files that loopfs_cleanup also reads.
	local n
	n=$(find "$LOOPFS_WORK" -maxdepth 1 -name 'fs*.img' | wc -l)
	local img="$LOOPFS_WORK/fs$n.img" mnt="$LOOPFS_WORK/mnt$n" dev
	truncate -s "$size" "$img"
	dev=$(losetup --find --show "$img") || return 1
	LOOPFS_DEVS+=("$dev")
	echo "$dev" >>"$LOOPFS_WORK/devs"
	case $fstype in
	ext4) mkfs.ext4 -q -F "$@" "$dev" >/dev/null ;;
	xfs) mkfs.xfs -q -f "$@" "$dev" >/dev/null ;;
	*) "mkfs.$fstype" "$@" "$dev" >/dev/null ;;
	esac || return 1
	mkdir -p "$mnt"
	mount "$dev" "$mnt" || return 1
	LOOPFS_MOUNTS+=("$mnt")
	echo "$mnt" >>"$LOOPFS_WORK/mounts"
	echo "$mnt"
}

loopfs_dev() {
	findmnt -n -o SOURCE --target "$1"
}

loopfs_cleanup() {
	local i m
	cd / || true
	if [ -n "$LOOPFS_WORK" ] && [ -f "$LOOPFS_WORK/mounts" ]; then
		mapfile -t m <"$LOOPFS_WORK/mounts"
		LOOPFS_MOUNTS=("${m[@]}" "${LOOPFS_MOUNTS[@]}")
		mapfile -t m <"$LOOPFS_WORK/devs"
		LOOPFS_DEVS+=("${m[@]}")
	fi
	for ((i = ${#LOOPFS_MOUNTS[@]} - 1; i >= 0; i--)); do
		mountpoint -q "${LOOPFS_MOUNTS[$i]}" || continue
		umount "${LOOPFS_MOUNTS[$i]}" 2>/dev/null || umount -l "${LOOPFS_MOUNTS[$i]}" 2>/dev/null
	done
	for dev in "${LOOPFS_DEVS[@]}"; do
		losetup -d "$dev" 2>/dev/null
	done
	LOOPFS_MOUNTS=()
	LOOPFS_DEVS=()
	[ -n "$LOOPFS_WORK" ] && rm -rf "$LOOPFS_WORK"
	LOOPFS_WORK=
}
