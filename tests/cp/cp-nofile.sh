#!/bin/bash
# SPDX-License-Identifier: MIT
# A hard open-file limit loses nothing (issue 27, defect 6): at ulimit -n 32
# and 64, sweep-cp, sweep-sync and sweep-plan --read copy (read) every file
# of a tree of a few thousand, with batches small enough to be read while
# the walk holds its directories, as GNU cp and rsync do at those limits.
# And the copy engine's own way out: a copy that runs out of descriptors is
# read again once its batch is done (forced through a test hook), or, where
# even that fails, reported for itself alone.
. "$TESTS_DIR/cp/lib.sh"

SWEEP_SYNC=${SWEEP_SYNC:-$BUILD_ROOT/utils/sweep-sync}
SWEEP_PLAN=${SWEEP_PLAN:-$BUILD_ROOT/utils/sweep-plan}

src="$CP_TMP/src"
python3 - "$src" <<'EOF' || die "making the tree"
import os, random, sys
random.seed(27)
root = sys.argv[1]
for d in range(24):
    sub = os.path.join(root, "d%02d" % d, "e%d" % (d % 3))
    os.makedirs(sub)
    for f in range(50):
        p = os.path.join(sub if f % 2 else os.path.dirname(sub), "f%02d" % f)
        with open(p, "wb") as fh:
            fh.write(random.randbytes(random.choice([0, 7, 4096, 30000] if f else [3 << 20])))
os.link(os.path.join(root, "d00", "f00"), os.path.join(root, "d01", "hard"))
EOF
nfiles=$(find "$src" -type f | wc -l)

# same DIR: DIR holds exactly the source's files, byte for byte.
same() {
	diff -r "$src" "$1" >/dev/null && [ "$(find "$1" -type f | wc -l)" = "$nfiles" ]
}

for limit in 32 64; do
	for peer in cp rsync; do
		command -v $peer >/dev/null || continue
		rm -rf "$CP_TMP/peer"
		if [ $peer = cp ]; then
			(ulimit -n $limit && cp -a "$src" "$CP_TMP/peer") 2>"$CP_TMP/err"
		else
			(ulimit -n $limit && rsync -a "$src/" "$CP_TMP/peer/") 2>"$CP_TMP/err"
		fi
		check "ulimit -n $limit: $peer copies all $nfiles files (the reference)" same "$CP_TMP/peer"
	done
	for mode in thread serial; do
		rm -rf "$CP_TMP/dst"
		(ulimit -n $limit && SWEEP_TEST_COPY=$mode "$SWEEP_CP" -a --batch=100 "$src" "$CP_TMP/dst") 2>"$CP_TMP/err"
		rc=$?
		check "ulimit -n $limit, $mode copies: sweep-cp -a exits 0 and says nothing (rc $rc)" \
			[ $rc = 0 -a ! -s "$CP_TMP/err" ]
		check "ulimit -n $limit, $mode copies: sweep-cp -a copies all $nfiles files" same "$CP_TMP/dst"
		head -3 "$CP_TMP/err"
	done
	if [ -x "$SWEEP_SYNC" ]; then
		rm -rf "$CP_TMP/dst"
		(ulimit -n $limit && "$SWEEP_SYNC" -a "$src/" "$CP_TMP/dst/") 2>"$CP_TMP/err"
		rc=$?
		check "ulimit -n $limit: sweep-sync -a exits 0 (rc $rc)" [ $rc = 0 ]
		check "ulimit -n $limit: sweep-sync -a copies all $nfiles files" same "$CP_TMP/dst"
	fi
	if [ -x "$SWEEP_PLAN" ]; then
		(ulimit -n $limit && "$SWEEP_PLAN" --read "$src") >/dev/null 2>"$CP_TMP/err"
		rc=$?
		read_n=$(sed -n 's/.*read \([0-9]*\) files.*/\1/p' "$CP_TMP/err")
		check "ulimit -n $limit: sweep-plan --read reads all $nfiles files, exit 0 (read ${read_n:-?}, rc $rc)" \
			[ $rc = 0 -a "${read_n:-0}" = "$nfiles" ]
	fi
done

# The copy engine's retry, forced (test builds): a copy refused a descriptor
# is read again by itself once its batch is done; a copy refused every time
# is reported, and nothing half-made is left.
if [ -n "${SWEEP_TEST_HOOKS:-}" ]; then
	for mode in thread serial; do
		for every in 7; do
			rm -rf "$CP_TMP/dst"
			SWEEP_TEST_COPY=$mode SWEEP_TEST_COPY_EMFILE=$every "$SWEEP_CP" -a --batch=100 "$src" "$CP_TMP/dst" \
				2>"$CP_TMP/err"
			rc=$?
			check "$mode copies, every ${every}th refused a descriptor once: exit 0, nothing said (rc $rc)" \
				[ $rc = 0 -a ! -s "$CP_TMP/err" ]
			check "$mode copies, every ${every}th refused once: all $nfiles files copied" same "$CP_TMP/dst"
			check "$mode copies, every ${every}th refused once: the hard link kept" \
				[ "$(stat -c %i "$CP_TMP/dst/d00/f00")" = "$(stat -c %i "$CP_TMP/dst/d01/hard")" ]
		done
		rm -rf "$CP_TMP/dst"
		SWEEP_TEST_COPY=$mode SWEEP_TEST_COPY_EMFILE=always "$SWEEP_CP" -a --batch=100 "$src" "$CP_TMP/dst" \
			2>"$CP_TMP/err"
		rc=$?
		n=$(grep -c "cannot create regular file .*: Too many open files" "$CP_TMP/err")
		check "$mode copies, refused every time: exit 1, each file reported once ($n of $nfiles)" \
			[ $rc = 1 -a "$n" = "$nfiles" -a "$(wc -l <"$CP_TMP/err")" = "$nfiles" ]
		check "$mode copies, refused every time: no file, no temporary left" \
			[ "$(find "$CP_TMP/dst" -type f | wc -l)" = 0 ]
	done
else
	skip_part "the forced retry needs a test build (-Dtest_hooks=true)"
fi

finish
