# SPDX-License-Identifier: MIT
# Shared by bench/files-run and the 1M-file scripts in results/: paths, a
# mount point torn down on every exit path, the many-files images
# (bench/mkfiles), cold remounts. Set BENCH_PROG before sourcing; then call
# bench_setup once the options are read. HERE is the sourcing script's
# directory.
HERE=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
SCAN=$BUILD/tests/scan/scan-tree
PLAN=$BUILD/utils/sweep-plan
. "$ROOT/bench/lib/common.sh"
MNT= DEV= IMG=
CLEANUP_HOOKS=()

bench_setup() { # bench_setup OUTDIR
	bench_require_root_loop
	[ -x "$SCAN" ] && [ -x "$PLAN" ] || die "build first: $SCAN, $PLAN"
	mkdir -p "$1"
	MNT=$(mktemp -d "/tmp/$BENCH_PROG.XXXXXX")
	trap bench_teardown EXIT
	trap 'exit 130' INT TERM
}

bench_teardown() {
	local h
	for h in "${CLEANUP_HOOKS[@]}"; do "$h"; done
	bench_cleanup_mounts
	[ -n "$MNT" ] && rmdir "$MNT" 2>/dev/null
	return 0
}

# mount_1M FS: build (or reuse) the 1M-file image of FS and mount it on $MNT
# (BENCH_FILES=10k: a small one, to try the scripts out; BENCH_AGED=1: the
# image after bench/mkfiles --aged)
mount_1M() {
	local aged=()
	[ "${BENCH_AGED:-0}" = 1 ] && aged=(--aged)
	IMG=$("$ROOT/bench/mkfiles" --fs "$1" --files "${BENCH_FILES:-1M}" "${aged[@]}")
	bench_attach "$IMG" DEV
	bench_mount "$DEV" "$MNT" noatime
}

unmount_1M() { bench_umount "$MNT" && bench_detach "$DEV"; }

# cold: drop the filesystem's caches and the loop device's page cache (remount)
cold() { bench_umount "$MNT" && bench_mount "$DEV" "$MNT" noatime; }
