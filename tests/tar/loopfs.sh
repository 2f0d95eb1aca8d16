#!/bin/bash
# SPDX-License-Identifier: MIT
# On real ext4 and xfs (loop images): a tree aged by create/delete churn, so
# that physical order is neither name nor inode order, plus every kind of
# entry (mktree.py). The archive extracts identical to the source, and the
# plan trace (--plan-trace) lists the files in ascending physical order,
# each at the first block filefrag reports for it. Then -f onto a full
# filesystem: a clear error and a non-zero exit.
. "$TESTS_DIR/tar/lib.sh"
. "$TESTS_DIR/common/loopfs.sh"
loopfs_require ext4 xfs
# These cases assert the disk (HDD-class) order; loop devices on fast
# storage probe as SSD class, where the library keeps the given order.
export SWEEP_DEVICE=hdd
require_cmd filefrag

churn() { # churn DIR: files written in shuffled order, a third deleted, more written into the holes
	python3 - "$1" <<'PY'
import os, random, sys
r = random.Random(42)
top = sys.argv[1]
dirs = [os.path.join(top, "churn", "d%02d" % i) for i in range(12)]
for d in dirs:
    os.makedirs(d)
names = [os.path.join(r.choice(dirs), "f%04d" % i) for i in range(360)]
r.shuffle(names)
for i, n in enumerate(names):
    with open(n, "wb") as f:
        f.write(os.urandom(r.choice([1, 3000, 9000, 40000, 150000])))
for n in names[::3]:
    os.unlink(n)
for i in range(120):
    with open(os.path.join(r.choice(dirs), "g%04d" % i), "wb") as f:
        f.write(os.urandom(r.choice([5000, 20000, 70000])))
PY
}

check_trace() { # check_trace TRACE DIR: R lines ascending per file, each at filefrag's first block
	python3 - "$1" "$2" <<'PY' || die "$1: plan trace is not in physical order"
import os, re, subprocess, sys
first, order = {}, []
for line in open(sys.argv[1]):
    if line.startswith("R "):
        _, off, length, ino = line.split()
        if ino not in first:
            first[ino] = int(off)
            order.append(int(off))
assert order == sorted(order), "first extents not ascending"
# every regular file with data is in the trace, where filefrag puts it
seen = 0
for dirpath, dirs, files in os.walk(sys.argv[2]):
    for n in files:
        p = os.path.join(dirpath, n)
        st = os.lstat(p)
        if not os.path.isfile(p) or os.path.islink(p) or st.st_blocks == 0:
            continue
        out = subprocess.run(["filefrag", "-v", "-b1", p], capture_output=True).stdout.decode("latin-1")
        m = re.search(r"^\s*\d+:\s+\d+\.\.\s*\d+:\s+(\d+)\.\.", out, re.M)
        assert m, "filefrag: " + out
        assert first.get(str(st.st_ino)) == int(m.group(1)), "%s: trace %s, filefrag %s" % (
            p, first.get(str(st.st_ino)), m.group(1))
        seen += 1
assert seen > 300, "only %d files checked" % seen
print("%d files in ascending physical order" % len(order))
PY
}

for fs in ext4 xfs; do
	# 4 KiB ext4 blocks (mke2fs picks 1 KiB for small images): xattrs up to 4 KiB per file.
	if [ $fs = ext4 ]; then
		mnt=$(loopfs_new ext4 256M -b 4096) || die "cannot make ext4"
	else
		mnt=$(loopfs_new xfs 320M) || die "cannot make xfs"
	fi
	churn "$mnt"
	python3 "$HERE/mktree.py" "$mnt" || die "mktree on $fs"
	sync
	# The copies land on the test's own filesystem; xfs preallocates past
	# a write where that one does not, so data maps are compared on ext4 only.
	unset MANIFEST_NO_MAP
	[ $fs = xfs ] && export MANIFEST_NO_MAP=1
	manifest "$mnt" > "$WORK/$fs.want"
	for order in auto physical; do
		a="$WORK/$fs.$order.tar"
		"$T" -c -f "$a" --order=$order --plan-trace "$WORK/$fs.$order.trace" -C "$mnt" . 2> "$WORK/$fs.err"
		rc=$?
		[ $rc = 0 ] || { cat "$WORK/$fs.err" >&2; die "$fs --order=$order: exit status $rc"; }
		grep -q "^# sweep-trace 1" "$WORK/$fs.$order.trace" || die "$fs: no trace header"
		check_trace "$WORK/$fs.$order.trace" "$mnt"
		rm -rf "$WORK/x"
		gnu_x "$a" "$WORK/x"
		# lost+found is root's 0700 directory on ext4, restored like any other.
		same_tree "$WORK/$fs.want" "$WORK/x"
		rm -rf "$WORK/x"
		bsd_x "$a" "$WORK/x"
		same_tree "$WORK/$fs.want" "$WORK/x" "^tree/times/pre1970ns "
		rm -f "$a"
	done
	# The check above can tell: in inode order this tree is not physically sorted.
	"$T" -c -f /dev/null --order=inode --plan-trace "$WORK/$fs.inode.trace" -C "$mnt" . 2> /dev/null
	awk '/^R / && !seen[$4]++ { if ($2 < last) down = 1; last = $2 } END { exit !down }' \
		"$WORK/$fs.inode.trace" || die "$fs: inode order is physical order here; the test proves nothing"

	# Without a trace, and without the raw inodes' hints (which place a file
	# without opening it), a batch already in the page cache is not located
	# (SWEEP_PLAN_CACHE_CHECK). Just remounted (cold), the files with data
	# are archived in physical order, at the places the trace gave; right
	# after that run read them (warm), in inode order.
	dev=$(loopfs_dev "$mnt")
	umount "$mnt" && mount "$dev" "$mnt" || die "$fs: cannot remount"
	SWEEP_METASCAN=off "$T" -c -f "$WORK/$fs.cold.tar" -C "$mnt" . 2> /dev/null ||
		die "$fs: cold archive: exit status $?"
	SWEEP_METASCAN=off "$T" -c -f "$WORK/$fs.warm.tar" -C "$mnt" . 2> /dev/null ||
		die "$fs: warm archive: exit status $?"
	python3 - "$mnt" "$WORK/$fs.physical.trace" "$WORK/$fs.cold.tar" "$WORK/$fs.warm.tar" <<'PY' ||
import os, subprocess, sys
mnt, trace, cold, warm = sys.argv[1:]
first = {}
for line in open(trace):
    if line.startswith("R "):
        first.setdefault(int(line.split()[3]), int(line.split()[1]))
def files(archive):  # (first byte, inode) of each file with data and one name, in member order
    out = []
    for name in subprocess.run(["tar", "-tf", archive], capture_output=True, check=True).stdout.decode().split("\n"):
        p = os.path.join(mnt, name)
        if not name or name.endswith("/") or os.path.islink(p) or not os.path.isfile(p):
            continue
        st = os.lstat(p)
        if st.st_nlink == 1 and st.st_ino in first:
            out.append((first[st.st_ino], st.st_ino))
    return out
c, w = files(cold), files(warm)
assert len(c) > 300 and sorted(c) == sorted(w), "%d and %d files" % (len(c), len(w))
assert [x[0] for x in c] == sorted(x[0] for x in c), "cold: not in physical order"
assert [x[1] for x in w] == sorted(x[1] for x in w), "warm: not in inode order"
print("%d files: cold in physical order, warm in inode order" % len(c))
PY
		die "$fs: archive order by page cache state"
	rm -f "$WORK/$fs.cold.tar" "$WORK/$fs.warm.tar"
done

# -f onto a full filesystem.
small=$(loopfs_new ext4 16M) || die "cannot make the small ext4"
mkdir "$WORK/big" && head -c 41943040 /dev/urandom > "$WORK/big/data"
"$T" -c -f "$small/a.tar" -C "$WORK" big 2> "$WORK/full.err"
rc=$?
[ $rc = 2 ] || { cat "$WORK/full.err" >&2; die "full filesystem: exit status $rc, want 2"; }
grep -q "^sweep-tar: $small/a.tar: Cannot write: No space left on device$" "$WORK/full.err" ||
	{ cat "$WORK/full.err" >&2; die "full filesystem: no clear message"; }
ok "ext4 and xfs round trips in physical order; full filesystem reported"
finish
