#!/bin/bash
# SPDX-License-Identifier: MIT
# sweep-sync over ssh against rsync over ssh, to this machine through the
# tests' throwaway sshd (tests/remote/lib.sh: its own keys, a free port, one
# shared ssh connection for both tools, killed and removed at exit): a first
# copy and a no-change re-run, the source cold (the page cache dropped before
# every run), DEST on tmpfs, so that reading the source and the wire are what
# is timed. The two results are compared at the end.
#
#   bench/remote-ssh.sh [SRC [RUNS]]      (root; the tools built in build/)
#
# Timing by farm-bench, sweep-sync (A) and rsync (B) in turn, A/B pair by pair.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export BUILD_ROOT=${BUILD_ROOT:-$ROOT/build} TESTS_DIR=$ROOT/tests
. "$TESTS_DIR/remote/lib.sh"
SRC=${1:-/usr/include}
RUNS=${2:-3}
command -v farm-bench >/dev/null || skip "no farm-bench"
start_sshd
D=$(mktemp -d /dev/shm/sweep-remote-bench.XXXXXX) || die "mktemp"
on_exit "rm -rf '$D'"

# one script a tool: FIRST=1 starts from an empty DEST
for t in sweep rsync; do
	if [ $t = sweep ]; then
		cmd="$SYNC -a -e \"$RSH\" --rsync-path=\"$RSYNC_PATH\""
	else
		cmd="rsync -a -e \"$RSH\""
	fi
	cat >"$W/$t.sh" <<EOF
#!/bin/sh
[ "\${FIRST:-0}" = 1 ] && rm -rf "$D/$t"
echo 3 >/proc/sys/vm/drop_caches
exec $cmd "$SRC/" "$HOST:$D/$t/"
EOF
	chmod +x "$W/$t.sh"
done

echo "== $SRC: $(find "$SRC" | wc -l) entries, $(du -sh "$SRC" | cut -f1); sweep-sync $(git -C "$ROOT" rev-parse --short HEAD), $(rsync --version | head -1)"
echo "== first copy (A: sweep-sync, B: rsync)"
FIRST=1 farm-bench -n "$RUNS" --warmup 0 --timeout 1800 --vs "$W/rsync.sh" -- "$W/sweep.sh"
echo "== no-change re-run"
farm-bench -n "$RUNS" --warmup 0 --timeout 1800 --vs "$W/rsync.sh" -- "$W/sweep.sh"
compare_trees "$D/rsync" "$D/sweep" && ok "sweep-sync over ssh made what rsync over ssh made"
finish
