# SPDX-License-Identifier: MIT
# Shared shell helpers for bench/mkaged and bench/run: messages, root/loop checks,
# and loop-device/mount bookkeeping torn down on every exit path.

BENCH_PROG=${BENCH_PROG:-bench}
BENCH_MOUNTS=()
BENCH_DEVS=()
PY=${PYTHON:-/usr/bin/python3}
[ -x "$PY" ] || PY=python3

say() { echo "$BENCH_PROG: $*" >&2; }
die() { say "$*"; exit 1; }

# Refuse clearly when the harness cannot do its job here.
bench_require_root_loop() {
	[ "$(id -u)" = 0 ] || die "needs root (loop devices, mount, drop_caches, tracefs)"
	[ -e /dev/loop-control ] || die "no loop devices (/dev/loop-control missing)"
	command -v losetup >/dev/null || die "losetup not found"
	local probe dev
	probe=$(mktemp "${TMPDIR:-/tmp}/bench-probe.XXXXXX")
	truncate -s 1M "$probe"
	dev=$(losetup --find --show "$probe" 2>/dev/null) || { rm -f "$probe"; die "cannot attach a loop device"; }
	losetup -d "$dev"
	rm -f "$probe"
}

bench_require_fs() {
	local fs
	for fs in "$@"; do
		command -v "mkfs.$fs" >/dev/null || die "mkfs.$fs not found"
		grep -qw "$fs" /proc/filesystems || modprobe "$fs" 2>/dev/null ||
			grep -qw "$fs" /proc/filesystems || die "kernel has no $fs"
	done
}

# bench_attach IMG VAR: attach IMG and store the loop device in VAR (not printed:
# a command substitution would run in a subshell and lose the bookkeeping that
# the exit trap needs). direct-io so that reads really reach the backing disk:
# with buffered loop I/O a "cold" run may be served from the host page cache.
bench_attach() {
	local -n _dev=$2
	_dev=$(losetup --find --show --direct-io=on "$1") || return 1
	BENCH_DEVS+=("$_dev")
}

# bench_mount DEV DIR [mount options]
bench_mount() {
	mkdir -p "$2"
	mount ${3:+-o "$3"} "$1" "$2" || return 1
	BENCH_MOUNTS+=("$2")
}

bench_umount() { # bench_umount DIR: unmount one mount early (it stays out of cleanup)
	local i
	umount "$1" || return 1
	for i in "${!BENCH_MOUNTS[@]}"; do
		[ "${BENCH_MOUNTS[$i]}" = "$1" ] && unset 'BENCH_MOUNTS[i]'
	done
	return 0
}

bench_detach() {
	local i
	losetup -d "$1" || return 1
	for i in "${!BENCH_DEVS[@]}"; do
		[ "${BENCH_DEVS[$i]}" = "$1" ] && unset 'BENCH_DEVS[i]'
	done
	return 0
}

bench_cleanup_mounts() {
	local m d
	cd / || true
	for m in $(printf '%s\n' "${BENCH_MOUNTS[@]}" | tac); do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	done
	for d in "${BENCH_DEVS[@]}"; do
		losetup -d "$d" 2>/dev/null
	done
	BENCH_MOUNTS=()
	BENCH_DEVS=()
}

# drop_caches [DIR]: write back (only DIR's filesystem when given: on a shared
# machine a global sync waits for everyone's writes), then drop clean caches.
drop_caches() {
	if [ -n "${1:-}" ]; then sync -f "$1"; else sync; fi
	echo 3 > /proc/sys/vm/drop_caches
}
