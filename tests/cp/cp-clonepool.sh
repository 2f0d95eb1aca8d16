#!/bin/bash
# SPDX-License-Identifier: MIT
# The clone pool (lib/copy/copy_clone.c): copies onto the source's own
# filesystem are made on several threads, and nothing else changes:
#  - xfs (reflink): every file cloned (its extents shared with the source's:
#    FIEMAP_EXTENT_SHARED), the tree equal to cp -a's, hard links kept, the
#    reports in the order a copy without the pool makes them;
#  - ext4 (no reflink): every file copied by copy_file_range, equal to cp -a's;
#  - a low open-file limit: every file still copied, none lost;
#  - sources that vanish, shrink, grow or are rewritten mid-run (paused with
#    the test hooks): the copy is what the source held, or the change is
#    reported, and no temporary is left.
. "$TESTS_DIR/cp/lib.sh"
. "$TESTS_DIR/common/loopfs.sh"
. "$TESTS_DIR/common/hooks.sh"
loopfs_require ext4 xfs
require_cmd filefrag

# The engine's own choice of threads (the tests' SWEEP_TEST_COPY=thread
# would send every file to the writer thread), and a pool of 3 even on one CPU.
unset SWEEP_TEST_COPY
export SWEEP_CLONE_THREADS=3
FIELDS=type,mode,owner,size,mtime,data,link,xattr,hl,holes

xfs=$(loopfs_new xfs 512M)
ext4=$(loopfs_new ext4 256M)
xfs_info "$xfs" 2>/dev/null | grep -q 'reflink=1' || skip "xfs without reflink here"

# make_many DIR: 12 directories of 40 files (0 bytes to 200 KiB), a hard link, an xattr.
make_many() {
	python3 - "$1" <<'EOF' || die "making the tree"
import os, random, sys
random.seed(30)
root = sys.argv[1]
for d in range(12):
    sub = os.path.join(root, "d%02d" % d)
    os.makedirs(sub)
    for f in range(40):
        with open(os.path.join(sub, "f%02d" % f), "wb") as fh:
            fh.write(random.randbytes(random.choice([0, 1, 4096, 65536, 200000])))
os.link(os.path.join(root, "d00", "f03"), os.path.join(root, "d05", "hard"))
os.setxattr(os.path.join(root, "d01", "f01"), "user.pool", b"kept")
EOF
}

# shared_all DIR: every non-empty regular file's extents are all shared.
shared_all() {
	local f n=0
	while IFS= read -r -d '' f; do
		filefrag -v "$f" | awk 'NR > 3 && /^ *[0-9]+:/ && !/shared/ {bad = 1} END {exit bad}' ||
			{ echo "not shared: $f"; return 1; }
		n=$((n + 1))
	done < <(find "$1" -type f -size +0 -print0)
	[ "$n" -gt 0 ]
}

# ---- xfs: clones on the pool ----
make_many "$xfs/src"
nfiles=$(find "$xfs/src" -type f | wc -l)
"$SWEEP_CP" -av --stats "$xfs/src" "$xfs/pool" >"$CP_TMP/pool.v" 2>"$CP_TMP/pool.stats"
check "xfs, pool: exits 0" [ $? = 0 ]
check "xfs, pool: every file cloned" grep -Eq "files ([0-9]+) \\(cloned \\1," "$CP_TMP/pool.stats"
cp -a "$xfs/src" "$xfs/ref"
same_tree "xfs, pool: equal to cp -a's" "$FIELDS" "$xfs/ref" "$xfs/pool"
check "xfs, pool: extents shared with the source (FIEMAP_EXTENT_SHARED)" shared_all "$xfs/pool"
check "xfs, pool: the hard link kept" [ "$(stat -c %i "$xfs/pool/d00/f03")" = "$(stat -c %i "$xfs/pool/d05/hard")" ]
check "xfs, pool: no temporaries left" no_temps "$xfs/pool"
SWEEP_CLONE_THREADS=0 "$SWEEP_CP" -av --stats "$xfs/src" "$xfs/serial" >"$CP_TMP/serial.v" 2>"$CP_TMP/serial.stats"
check "xfs, no pool: every file cloned" grep -Eq "files ([0-9]+) \\(cloned \\1," "$CP_TMP/serial.stats"
sed "s,/serial\([/']\),/pool\1,g" "$CP_TMP/serial.v" >"$CP_TMP/serial.as-pool"
check "xfs: -v reports in the order the copy without the pool makes them ($nfiles files)" \
	cmp "$CP_TMP/serial.as-pool" "$CP_TMP/pool.v"

# --reflink=always on the pool, and into a tree that exists (replacing every file).
"$SWEEP_CP" -a --reflink=always "$xfs/src" "$xfs/always"
check "xfs, pool, --reflink=always: exits 0" [ $? = 0 ]
same_tree "xfs, pool, --reflink=always: equal to cp -a's" "$FIELDS" "$xfs/ref" "$xfs/always"
"$SWEEP_CP" -a --stats "$xfs/src/." "$xfs/pool" 2>"$CP_TMP/again.stats"
check "xfs, pool, over an existing copy: exits 0" [ $? = 0 ]
same_tree "xfs, pool, over an existing copy: equal to cp -a's" "$FIELDS" "$xfs/ref" "$xfs/pool"

# A low open-file limit: the pool gets fewer descriptors, or none; nothing is lost.
for n in 24 80; do
	(ulimit -n $n && exec "$SWEEP_CP" -a --stats "$xfs/src" "$xfs/low$n") 2>"$CP_TMP/low.stats"
	check "xfs, ulimit -n $n: exits 0" [ $? = 0 ]
	same_tree "xfs, ulimit -n $n: equal to cp -a's" "$FIELDS" "$xfs/ref" "$xfs/low$n"
	check "xfs, ulimit -n $n: every file cloned" grep -Eq "files ([0-9]+) \\(cloned \\1," "$CP_TMP/low.stats"
done

# ---- ext4: no reflink, copy_file_range on the pool ----
make_many "$ext4/src"
"$SWEEP_CP" -a --stats "$ext4/src" "$ext4/pool" 2>"$CP_TMP/ext4.stats"
check "ext4, pool: exits 0" [ $? = 0 ]
cp -a "$ext4/src" "$ext4/ref"
same_tree "ext4, pool: equal to cp -a's" "$FIELDS" "$ext4/ref" "$ext4/pool"
check "ext4, pool: copy_file_range used" grep -Eq 'copy_file_range [1-9]' "$CP_TMP/ext4.stats"
check "ext4, pool: no temporaries left" no_temps "$ext4/pool"

# ---- sources changed between the walk and the read ----
if ! have_hooks; then
	skip_part "changed-source cases need the pause points (-Dtest_hooks=true)"
else
	v="$xfs/changing"
	mkdir -p "$v/src/d"
	for i in 1 2 3 4 5 6 7 8; do head -c $((i * 5000)) /dev/urandom >"$v/src/d/f$i"; done
	head -c 50000 /dev/urandom >"$v/src/d/shrinks"
	head -c 50000 /dev/urandom >"$v/src/d/grows"
	head -c 50000 /dev/urandom >"$v/src/d/rewritten"
	printf 'gone soon\n' >"$v/src/d/victim"
	rc=0
	(cd "$v" && pause_at plan "$SWEEP_CP" -a --stats src dst 2>"$v/err" &&
		rm src/d/victim && truncate -s 1000 src/d/shrinks && head -c 7000 /dev/urandom >>src/d/grows &&
		head -c 50000 /dev/urandom | dd of=src/d/rewritten conv=notrunc status=none && resume) || rc=$?
	check "changed: exit 1 (the vanished file)" [ "$rc" = 1 ]
	check "changed: the vanished file reported" grep -qx \
		"sweep-cp: cannot open 'src/d/victim' for reading: No such file or directory" "$v/err"
	check "changed: no copy of the vanished file" [ ! -e "$v/dst/d/victim" ]
	for f in shrinks grows rewritten f1 f8; do
		check "changed: $f's copy equals the source as it is now" cmp -s "$v/src/d/$f" "$v/dst/d/$f"
	done
	check "changed: no temporaries left" no_temps "$v/dst"
fi
finish
