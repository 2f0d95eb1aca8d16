#!/bin/bash
# SPDX-License-Identifier: MIT
# Meson's hook for bench/run --quick: skip (77) where the harness cannot run at
# all, otherwise run it and pass its exit status on. bench/run itself refuses
# with a message and exit 1 in those cases; a test suite wants a skip instead.
# Usage: bench/quick-test.sh OUTDIR   (BUILD_DIR names the build to measure)
here=$(cd "$(dirname "$0")" && pwd)
skip() { echo "SKIP: $*" >&2; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root"
[ -e /dev/loop-control ] || skip "no loop devices"
. "$here/../tests/common/tracefs.sh"
# bench/run mounts tracefs itself where it is not mounted: only probe here, leave nothing behind.
tracefs_find || skip "no tracefs"
[ -e "$TRACEFS/events/block/block_rq_issue" ] || { tracefs_release; skip "tracefs has no block events"; }
tracefs_release
for fs in ext4 xfs; do
	command -v "mkfs.$fs" >/dev/null || skip "no mkfs.$fs"
done
/usr/bin/python3 -c 'import matplotlib' 2>/dev/null || skip "python3-matplotlib missing"
exec "$here/run" --quick --out "${1:-${BUILD_DIR:-.}/bench-quick}"
