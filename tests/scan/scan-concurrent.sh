#!/bin/bash
# SPDX-License-Identifier: MIT
# lib/metascan while writers create, delete, rename, grow, punch and
# truncate files (on ext4 and xfs loop images): the scanner reads inode
# tables and tree blocks that change under it. It must never crash or read
# out of bounds (this test also runs in the ASan build), and every hint must
# stay within what a valid inode could hold (scan-tree checks each one:
# type, size, location inside the device and block-aligned, flags
# consistent). Hints may be stale; they may not be garbage. Once the writers
# stop and the filesystem is synced, every hint must agree with lstat and
# FIEMAP again.
# Needs root and loop devices; skips (77) without them.
set -u
. "${TESTS_DIR:?}/common/lib.sh"
. "$TESTS_DIR/common/loopfs.sh"
loopfs_require ext4 xfs
SCAN=${BUILD_ROOT:?}/tests/scan/scan-tree
SECONDS_EACH=${SCAN_CONCURRENT_SECONDS:-8}

# churn ROOT SECONDS SEED: the writers, in one process with a seeded mix of operations
churn() {
	python3 - "$@" <<'PY'
import ctypes, os, random, sys, time
root, secs, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
libc = ctypes.CDLL(None, use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_longlong, ctypes.c_longlong]
dirs = [f"{root}/d{i}" for i in range(20)]
grow = [f"{root}/grow{i}" for i in range(4)]
names = [f"{d}/f{j}" for d in dirs for j in range(100)]
blob = os.urandom(1 << 16)
end = time.monotonic() + secs
ops = 0
while time.monotonic() < end:
    op = rng.random()
    try:
        if op < 0.25:  # create or rewrite
            with open(rng.choice(names), "wb") as f:
                f.write(blob[: rng.randrange(1 << 16)])
        elif op < 0.40:  # delete
            os.unlink(rng.choice(names))
        elif op < 0.55:  # rename across directories
            os.rename(rng.choice(names), rng.choice(names))
        elif op < 0.65:  # a directory comes and goes
            d = f"{rng.choice(dirs)}/sub{rng.randrange(5)}"
            if os.path.isdir(d):
                for n in os.listdir(d):
                    os.unlink(f"{d}/{n}")
                os.rmdir(d)
            else:
                os.mkdir(d)
                for k in range(rng.randrange(50)):
                    open(f"{d}/x{k}", "wb").close()
        else:  # grow the fragmenting files: small appends with fsync, holes, unwritten parts, truncates
            g = rng.choice(grow)
            fd = os.open(g, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                r = rng.random()
                size = os.fstat(fd).st_size
                if r < 0.6:
                    os.pwrite(fd, blob[:4096], size + 4096 * rng.randrange(2))
                    os.fsync(fd)
                elif r < 0.75 and size > 8192:
                    libc.fallocate(fd, 3, 4096 * rng.randrange(size // 4096), 4096)  # punch
                elif r < 0.9:
                    libc.fallocate(fd, 0, size, 4096 * rng.randrange(1, 64))  # unwritten tail
                elif r < 0.95:
                    os.ftruncate(fd, size // 2)
                else:
                    os.ftruncate(fd, 0)
            finally:
                os.close(fd)
        ops += 1
    except OSError:
        pass
print(f"churn: {ops} operations", file=sys.stderr)
PY
}

run_fs() { # run_fs FSTYPE
	local fs=$1 mnt scans=0 refused=0 pf_refused=0 i out rc
	mnt=$(loopfs_new "$fs" 400M) || { fail "$fs: cannot make a loop filesystem"; return; }
	case_begin "$fs: scans during writes complete or refuse cleanly, every hint plausible; after sync every hint as lstat and FIEMAP"
	out=$LOOPFS_WORK/$fs
	mkdir -p "$mnt/t"
	for i in $(seq 0 19); do mkdir "$mnt/t/d$i"; done
	churn "$mnt/t" 2 1 2>/dev/null # a starting population
	sync
	churn "$mnt/t" "$SECONDS_EACH" 2 2>"$out.churn" &
	local pid=$!
	# scan until the writers stop: hints (FIRST mode) and the directory prefetch (ALL mode)
	while kill -0 $pid 2>/dev/null; do
		"$SCAN" --repeat 3 "$mnt/t" >/dev/null 2>"$out.scan"
		rc=$?
		case $rc in
		0) ;;
		3) # the engine refused what it read mid-write (a superblock or descriptor torn on the device):
		   # the walk then goes without hints; refusing is right, crashing or passing garbage is not
			refused=$((refused + 1)) ;;
		*) fail "$fs: scan during writes, exit $rc: $(grep -E 'MISMATCH|ERROR|runtime error|scan-tree:' "$out.scan" | head -5)" ;;
		esac
		"$SCAN" --prefetch --walk-only "$mnt/t" >/dev/null 2>"$out.pf"
		rc=$?
		case $rc in
		0) ;;
		3) # the same refusal, from the prefetch's own open of the engine: only that open may say so
			grep -q '^scan-tree: metascan open: ' "$out.pf" ||
				fail "$fs: prefetch walk during writes, exit 3 without a refused open: $(head -5 "$out.pf")"
			pf_refused=$((pf_refused + 1)) ;;
		*) fail "$fs: prefetch walk during writes, exit $rc: $(grep -E 'ERROR|runtime error|scan-tree:' "$out.pf" | head -5)" ;;
		esac
		scans=$((scans + 1))
		case_ok || break
	done
	wait $pid
	echo "$fs: $scans scan rounds ($refused scans and $pf_refused prefetch walks refused to open mid-write) during $(cat "$out.churn"); last: $(grep '^hints:' "$out.scan" | tail -1)"
	# how many rounds fit in the writers' time depends on the machine's load: one is the case
	[ $((scans - refused)) -ge 1 ] || fail "$fs: no scan completed while the writers ran ($scans tried)"
	sync
	[ "$fs" = xfs ] && { fsfreeze -f "$mnt" && fsfreeze -u "$mnt"; }
	"$SCAN" --check "$mnt/t" >/dev/null 2>"$out.final" ||
		fail "$fs: after the writers stopped: $(grep -E 'MISMATCH|scan-tree:|ERROR|runtime error' "$out.final" | head -5)"
	note "$fs: after sync: $(grep '^check:' "$out.final")"
	case_end
}

run_fs ext4
run_fs xfs
finish
