#!/bin/bash
# SPDX-License-Identifier: MIT
# sweep_extents_get, sweep_extent_first and sweep_data_map on real ext4 and
# xfs loop filesystems, against filefrag -v (e2fsprogs) and SEEK_DATA as
# python sees it: fragmented files (two writers interleaved), sparse files,
# preallocated (unwritten) extents, empty files. Skips without root/loop.
. "$TESTS_DIR/walk/lib.sh"
. "$TESTS_DIR/common/loopfs.sh"
walk_setup "$1"
loopfs_require ext4 xfs
command -v filefrag >/dev/null || skip "no filefrag"

for fs in ext4 xfs; do
	mnt=$(loopfs_new $fs 300M) || die "cannot make $fs"
	python3 - "$mnt" <<'PY'
import os, sys
m = sys.argv[1]
blk = os.statvfs(m).f_bsize
# two files written in turns, synced each time: their blocks interleave
a = os.open(m + "/frag-a", os.O_CREAT | os.O_WRONLY, 0o644)
b = os.open(m + "/frag-b", os.O_CREAT | os.O_WRONLY, 0o644)
for i in range(40):
    for fd in (a, b):
        os.write(fd, bytes([65 + i % 26]) * blk * 3)
        os.fsync(fd)
os.close(a); os.close(b)
# sparse: data, a hole, data, a trailing hole
s = os.open(m + "/sparse", os.O_CREAT | os.O_WRONLY, 0o644)
os.pwrite(s, b"x" * blk * 2, 0)
os.pwrite(s, b"y" * blk, 1 << 20)
os.ftruncate(s, 3 << 20)
os.fsync(s); os.close(s)
# preallocated, never written: unwritten extents, no data
p = os.open(m + "/prealloc", os.O_CREAT | os.O_WRONLY, 0o644)
os.posix_fallocate(p, 0, blk * 16)
os.pwrite(p, b"z" * blk, blk * 4)   # one written block in the middle
os.fsync(p); os.close(p)
open(m + "/empty", "w").close()
# many small files, half synced (allocated), half not (delayed allocation on ext4/xfs)
for i in range(50):
    fd = os.open(m + "/small%d" % i, os.O_CREAT | os.O_WRONLY, 0o644)
    os.write(fd, b"s" * (100 + i * 37))
    if i % 2:
        os.fsync(fd)
    os.close(fd)
PY
	# One walk-list and one filefrag over all files (process start-up is most of the cost under ASan).
	files=("$mnt"/*)
	"$W" --extents "${files[@]}" >"$T/ours" || die "--extents"
	filefrag -v "${files[@]}" >"$T/ff" 2>&1 || die "filefrag"
	python3 - "$T/ours" "$T/ff" <<'PY' || die "$fs: extents differ from filefrag"
import os, re, sys
def split(text, start):
    # sections per file, keyed by path
    out, cur = {}, None
    for line in text.split("\n"):
        m = re.match(start, line)
        if m:
            cur = m.group(1)
            out[cur] = []
        if cur is not None:
            out[cur].append(line)
    return out
ours = split(open(sys.argv[1]).read(), r"^file (.*)$")
ffs = split(open(sys.argv[2]).read(), r"^File size of (.*) is \d+")
assert set(ours) == set(ffs) and len(ours) >= 50, "files: %r vs %r" % (sorted(ours), sorted(ffs))
for path in sorted(ours):
    ff = "\n".join(ffs[path])
    bs = int(re.search(r"blocks? of (\d+) bytes", ff).group(1))
    theirs = []
    for m in re.finditer(r"^\s*\d+:\s*(\d+)\.\.\s*(\d+):\s*(\d+)\.\.\s*(\d+):\s*(\d+):\s*(?:\d+:)?\s*(\S*)\s*$", ff, re.M):
        lo, hi, po, pe, ln, flags = m.groups()
        noloc = any(f in flags for f in ("unwritten", "unknown_loc", "delalloc", "inline", "encoded", "not_aligned"))
        theirs.append([int(lo) * bs, int(po) * bs, int(ln) * bs, noloc])
    mine, src, first, data = [], None, None, []
    for line in ours[path]:
        w = line.split()
        if not w: continue
        if w[0] == "source": src = (int(w[1]), int(w[2]))
        if w[0] == "ext": mine.append([int(w[1]), w[2], int(w[3]), w[4] if len(w) > 4 else ""])
        if w[0] == "first": first = int(w[1])
        if w[0] == "data": data.append((int(w[1]), int(w[2])))
    where = os.path.basename(path) + ": "
    assert src == (0, 1), where + "not from FIEMAP: %r" % (src,)
    assert len(mine) == len(theirs), where + "extent count %d, filefrag %d" % (len(mine), len(theirs))
    for (l, p, n, fl), (tl, tp, tn, noloc) in zip(mine, theirs):
        assert l == tl, where + "extent %r vs %r" % ((l, p, n), (tl, tp, tn))
        if noloc:
            # filefrag prints no usable length for some of these (delalloc: 0)
            assert p == "-" and "noloc" in fl, where + "unlocated extent has a location: %r" % ((l, p, n, fl),)
        else:
            assert n >= tn and n - tn < bs, where + "length %r vs %r" % ((l, p, n), (tl, tp, tn))
            assert int(p) == tp, where + "physical %s vs %d" % (p, tp)
    located = [int(p) for l, p, n, fl in mine if p != "-"]
    if located:
        assert first == located[0], where + "first %r, want %d" % (first, located[0])
    else:
        assert first == -61, where + "first %r for a file with no located data, want -ENODATA" % first
    # data map against SEEK_DATA/SEEK_HOLE
    fd = os.open(path, os.O_RDONLY)
    size = os.fstat(fd).st_size
    want, off = [], 0
    while off < size:
        try:
            d = os.lseek(fd, off, os.SEEK_DATA)
        except OSError:
            break
        h = min(os.lseek(fd, d, os.SEEK_HOLE), size)
        want.append((d, h - d))
        off = h
    os.close(fd)
    assert data == want, where + "data map %r, SEEK_DATA says %r" % (data, want)
PY
	# the cases the test is for did happen
	filefrag -v "$mnt/prealloc" | grep -q unwritten || die "$fs: no unwritten extent in prealloc"
	"$W" --extents "$mnt/prealloc" | grep -q "^ext .* - .*noloc" || die "$fs: prealloc has no unlocated extent"
	n=$(filefrag "$mnt/frag-a" | sed -n 's/.*: \([0-9]*\) extents\{0,1\} found/\1/p')
	[ "${n:-0}" -gt 1 ] || note "$fs kept frag-a in $n extent(s)"
	ok "$fs"
done
finish
