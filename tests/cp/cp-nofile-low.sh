#!/bin/bash
# SPDX-License-Identifier: MIT
# The lowest open-file limits GNU cp copies at: ulimit -n 8, 9 and 10.
# sweep-cp -a (with its own batches, and with --batch=100, read while the
# walk holds its directories) makes the same copy as cp -a at the same
# limit: contents, modes, owners, times, xattrs, symlinks, hard links, and
# says nothing. A tree of many small directories, each with a few files, a
# symlink and a subdirectory with an xattr: a directory is made, and its
# xattrs read, while the walk, the batch being read and the cached
# destination directory hold the rest (found copying /usr/share/doc), and
# in the SSD class while the walk reads directories ahead; and a FIFO's mode
# set by name (glibc's fchmodat opens it: fchmodat2 needs no descriptor). At 8 and 9 a
# batch read mid-walk has not the three descriptors a copy needs even for
# one file by itself: its files are carried to the last flush, after the
# walk (copy_carry.c).
. "$TESTS_DIR/cp/lib.sh"

src="$CP_TMP/src"
python3 - "$src" <<'EOF2' || die "making the tree"
import os, random, sys
random.seed(8)
root = sys.argv[1]
for d in range(40):
    top = os.path.join(root, "p%02d" % d)
    os.makedirs(os.path.join(top, "sub", "deep"))
    for f in range(4):
        with open(os.path.join(top, "f%d" % f), "wb") as fh:
            fh.write(random.randbytes(random.choice([0, 100, 5000])))
    with open(os.path.join(top, "sub", "g"), "wb") as fh:
        fh.write(b"g" * d)
    with open(os.path.join(top, "sub", "deep", "h"), "wb") as fh:
        fh.write(b"h" * d)
    os.symlink("f0", os.path.join(top, "ln"))
    os.symlink("../p%02d" % ((d + 1) % 40), os.path.join(top, "sub", "up"))
    os.chmod(os.path.join(top, "f2"), 0o600)
    if d % 8 == 0:
        os.mkfifo(os.path.join(top, "sub", "fifo"), 0o640)
    os.chmod(os.path.join(top, "sub", "deep"), 0o750)
    os.utime(os.path.join(top, "sub"), ns=(10**18 + d, 10**18 + d))
    try:
        os.setxattr(os.path.join(top, "sub"), "user.x", b"d%d" % d)
        os.setxattr(os.path.join(top, "f1"), "user.y", b"f%d" % d)
    except OSError:
        pass # no user xattrs here: the rest still counts
os.link(os.path.join(root, "p00", "f3"), os.path.join(root, "p01", "hard"))
EOF2
fields=mode,owner,size,mtime,data,link,xattr,hl

# low N: in a subshell, the open-file limit N, with only stdin, stdout and
# stderr open below it (a descriptor the test runner leaves open takes one).
low() {
	exec 3<&- 4<&- 5<&- 6<&- 7<&- 8<&- 9<&-
	ulimit -n "$1"
}

for limit in 8 9 10; do
	rm -rf "$CP_TMP/peer"
	(low $limit && cp -a "$src" "$CP_TMP/peer") 2>"$CP_TMP/err"
	rc=$?
	check "ulimit -n $limit: cp -a exits 0 (the reference, rc $rc)" [ $rc = 0 -a ! -s "$CP_TMP/err" ]
	same_tree "ulimit -n $limit: cp -a copies the tree" "$fields" "$src" "$CP_TMP/peer"
	for batch in "" --batch=100; do
		rm -rf "$CP_TMP/dst"
		(low $limit && "$SWEEP_CP" -a $batch "$src" "$CP_TMP/dst") 2>"$CP_TMP/err"
		rc=$?
		check "ulimit -n $limit, sweep-cp -a $batch: exit 0, nothing said (rc $rc)" [ $rc = 0 -a ! -s "$CP_TMP/err" ]
		head -3 "$CP_TMP/err"
		same_tree "ulimit -n $limit, sweep-cp -a $batch: the copy cp -a makes" "$fields" "$CP_TMP/peer" "$CP_TMP/dst"
		check "ulimit -n $limit, sweep-cp -a $batch: no temporary left" no_temps "$CP_TMP/dst"
	done
done

# Under 8 (5 besides stdin, stdout and stderr) sweep-cp refuses the limit
# whole, once, before it makes anything (GNU cp goes on down to 5).
for limit in 7 4; do
	rm -rf "$CP_TMP/dst"
	(low $limit && "$SWEEP_CP" -a "$src" "$CP_TMP/dst") 2>"$CP_TMP/err"
	rc=$?
	check "ulimit -n $limit: sweep-cp -a exits 1 with one message (rc $rc: $(head -1 "$CP_TMP/err"))" \
		[ $rc = 1 -a "$(wc -l <"$CP_TMP/err")" = 1 -a -n "$(grep "too few file descriptors" "$CP_TMP/err")" ]
	check "ulimit -n $limit: nothing made" [ ! -e "$CP_TMP/dst" ]
done

# A carried file is read again by its path, checked to be the file walked:
# the source swapped for a symlink to a look-alike tree before the carried
# batch is read (the third: --batch=200 of 241 files, the first read
# mid-walk at ulimit -n 8) copies nothing of the look-alike, and each file
# not copied is said replaced.
if [ -n "${SWEEP_TEST_HOOKS:-}" ]; then
	nfiles=$(find "$src" -type f | wc -l)
	cp -a "$src" "$CP_TMP/evil" && find "$CP_TMP/evil" -type f -exec sh -c 'echo EVIL >"$1"' sh {} \;
	restore() { [ -L "$src" ] && rm "$src" && mv "$CP_TMP/src.real" "$src"; }
	on_exit restore
	rm -rf "$CP_TMP/dst"
	SWEEP_TEST_PAUSE=plan:3 bash -c 'exec 3<&- 4<&- 5<&- 6<&- 7<&- && ulimit -n 8 && exec "$@"' sh "$SWEEP_CP" -a --batch=200 "$src" "$CP_TMP/dst" \
		2>"$CP_TMP/err" &
	pid=$!
	for ((i = 0; i < 6000; i++)); do
		[ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" = T ] && break
		[ -e "/proc/$pid" ] || break
		sleep 0.01
	done
	mv "$src" "$CP_TMP/src.real" && ln -s evil "$src"
	kill -CONT $pid 2>/dev/null
	wait $pid
	rc=$?
	restore
	replaced=$(grep -c "was replaced during the copy; not copied" "$CP_TMP/err")
	copied=$(find "$CP_TMP/dst" -type f | wc -l)
	check "swapped before the carried batch: exit 1, $replaced carried files said replaced (rc $rc)" \
		[ $rc = 1 -a "$replaced" -gt 0 -a "$(wc -l <"$CP_TMP/err")" = "$replaced" ]
	check "swapped before the carried batch: nothing of the look-alike copied" \
		[ -z "$(grep -rl EVIL "$CP_TMP/dst")" ]
	check "swapped before the carried batch: $copied copied + $replaced said replaced = $nfiles" \
		[ $((copied + replaced)) = "$nfiles" ]
	differ=$(cd "$CP_TMP/dst" && find . -type f | while read -r f; do cmp -s "$src/$f" "$f" || echo "$f"; done)
	check "swapped before the carried batch: every copy is its source's ($differ)" [ -z "$differ" ]
	check "swapped before the carried batch: no temporary left" no_temps "$CP_TMP/dst"
else
	skip_part "the swap before the carried batch needs a test build (-Dtest_hooks=true)"
fi

finish
