#!/bin/bash
# SPDX-License-Identifier: MIT
# sweep-sync over ssh against rsync over ssh, to this machine through the
# tests' throwaway sshd (tests/remote/lib.sh: its own keys, a free port, one
# shared ssh connection for both tools, killed and removed at exit): a first
# copy and a no-change re-run, the source cold (the page cache dropped before
# every run), DEST on tmpfs, so that reading the source and the wire are what
# is timed. The two results are compared at the end.
#
#   bench/remote-ssh.sh [--pull] [--image IMG] [SRC [RUNS]]   (root; tools in build/)
#
# --pull   the far side sends (host:SRC/ DEST/: the server walks and reads);
#          default a push (SRC/ host:DEST/: the client does)
# --image  IMG (an ext4 or xfs image, e.g. of bench/mkaged) served by an
#          emulated disk (bench/emudisk, hdd7200, read-only) and mounted; SRC
#          is then a path inside it (default: all of it). The sweep tools pick
#          their device class themselves.
#
# Timing by bench/lib/ab.py: sweep-sync (A) and rsync (B) in turn, A/B pair by pair.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export BUILD_ROOT=${BUILD_ROOT:-$ROOT/build} TESTS_DIR=$ROOT/tests
. "$TESTS_DIR/remote/lib.sh"
PULL= IMAGE=
while [ $# -gt 0 ]; do
	case $1 in
	--pull) PULL=1 ;;
	--image) IMAGE=$2; shift ;;
	-*) die "unknown option $1" ;;
	*) break ;;
	esac
	shift
done
SRC=${1:-}
RUNS=${2:-3}
start_sshd
D=$(mktemp -d /dev/shm/sweep-remote-bench.XXXXXX) || die "mktemp"
on_exit "rm -rf '$D'"
if [ -n "$IMAGE" ]; then
	[ -f "$IMAGE" ] || die "$IMAGE: no such image"
	EMUDISK="env BUILD_DIR=$BUILD_ROOT $ROOT/bench/emudisk"
	MNT=$(mktemp -d /tmp/sweep-remote-bench-mnt.XXXXXX) || die "mktemp"
	on_exit "rmdir '$MNT'"
	EMU_DEV=$($EMUDISK start --read-only "$IMAGE") || die "emudisk start $IMAGE"
	on_exit "$EMUDISK stop '$EMU_DEV' >/dev/null"
	case $(blkid -o value -s TYPE "$EMU_DEV") in
	xfs) mount -o ro,norecovery,nouuid "$EMU_DEV" "$MNT" ;;
	*) mount -o ro,noload "$EMU_DEV" "$MNT" ;;
	esac || die "mount $EMU_DEV"
	on_exit "umount '$MNT'"
	SRC=$MNT/${SRC#/}
fi
SRC=${SRC:-/usr/include}

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
EOF
	if [ -n "$PULL" ]; then
		echo "exec $cmd \"$HOST:$SRC/\" \"$D/$t/\"" >>"$W/$t.sh"
	else
		echo "exec $cmd \"$SRC/\" \"$HOST:$D/$t/\"" >>"$W/$t.sh"
	fi
	chmod +x "$W/$t.sh"
done

echo "== ${PULL:+pull from }$SRC${IMAGE:+ (on an emulated disk, $IMAGE)}: $(find "$SRC" | wc -l) entries, $(du -sh "$SRC" | cut -f1); sweep-sync $(git -C "$ROOT" rev-parse --short HEAD), $(rsync --version | head -1)"
echo "== first copy (A: sweep-sync, B: rsync)"
FIRST=1 python3 "$ROOT/bench/lib/ab.py" "$RUNS" "$W/sweep.sh" "$W/rsync.sh" || die "a run failed"
echo "== no-change re-run"
python3 "$ROOT/bench/lib/ab.py" "$RUNS" "$W/sweep.sh" "$W/rsync.sh" || die "a run failed"
compare_trees "$D/rsync" "$D/sweep" && ok "sweep-sync over ssh made what rsync over ssh made"
finish
