#!/bin/bash
# SPDX-License-Identifier: MIT
# sweep-cp on real ext4 and xfs loop filesystems:
#  - across filesystems (tmp -> ext4, ext4 -> xfs): the data goes through the
#    libsweep reader, and the copy equals cp -a's on the same target;
#  - within xfs (reflink): every file is cloned, and equals cp -a's;
#  - read order: files are copied in ascending physical order (filefrag);
#  - a destination that fills up: a clear error, exit 1, no temporaries,
#    files already there are not damaged, and every final name is whole;
#  - -x (--one-file-system): a filesystem mounted inside the source is not
#    entered (its mount point is made, empty), as cp -x does.
. "$TESTS_DIR/cp/lib.sh"
. "$TESTS_DIR/common/loopfs.sh"
loopfs_require ext4 xfs
xmnt=
on_exit '[ -z "$xmnt" ] || umount "$xmnt"'

src="$CP_TMP/src"
mkdir "$src"
make_tree "$src"
# (atimes: checked in cp-tree.sh; here cp and sweep-cp read in turn and move them)
FIELDS=type,mode,owner,size,mtime,data,link,rdev,xattr,hl,holes,blocks

ext4=$(loopfs_new ext4 256M)
xfs=$(loopfs_new xfs 512M)

# tmp -> ext4: the reader path.
"$SWEEP_CP" -a --stats "$src" "$ext4/sweep" 2>"$CP_TMP/stats"
check "tmp -> ext4 exits 0" [ $? = 0 ]
cp -a "$src" "$ext4/ref"
same_tree "tmp -> ext4 vs cp -a" "$FIELDS" "$ext4/ref" "$ext4/sweep"
check "tmp -> ext4: every file read (not cloned or ranged)" \
	grep -Eq 'cloned 0, copy_file_range 0, read [1-9]' "$CP_TMP/stats"

# ext4 -> xfs: reader path, with both backends.
backends=syscall
have_uring && backends="uring syscall" || skip_part "ext4 -> xfs with io_uring: not available here"
for backend in $backends; do
	SWEEP_BACKEND=$backend "$SWEEP_CP" -a "$ext4/sweep" "$xfs/from-ext4-$backend"
	check "ext4 -> xfs ($backend) exits 0" [ $? = 0 ]
done
cp -a "$ext4/sweep" "$xfs/ref-from-ext4"
for backend in $backends; do
	same_tree "ext4 -> xfs ($backend) vs cp -a" "$FIELDS" "$xfs/ref-from-ext4" "$xfs/from-ext4-$backend"
done

# Within xfs: clones where reflink is on (xfs default), copy_file_range otherwise.
env -u SWEEP_TEST_COPY "$SWEEP_CP" -a --stats "$xfs/ref-from-ext4" "$xfs/clone" 2>"$CP_TMP/stats" # (clones: the engine's choice)
cp -a "$xfs/ref-from-ext4" "$xfs/ref-clone"
same_tree "xfs -> xfs vs cp -a" "$FIELDS" "$xfs/ref-clone" "$xfs/clone"
if xfs_info "$xfs" 2>/dev/null | grep -q 'reflink=1'; then
	check "xfs -> xfs: every file cloned" grep -Eq 'files ([0-9]+) \(cloned \1,' "$CP_TMP/stats"
	"$SWEEP_CP" -a --reflink=always "$xfs/ref-from-ext4" "$xfs/always"
	check "xfs --reflink=always exits 0" [ $? = 0 ]
	"$SWEEP_CP" -a --reflink=always "$src" "$xfs/across" 2>"$CP_TMP/always.err"
	check "--reflink=always across filesystems fails" [ $? = 1 ]
	check "--reflink=always across filesystems: cp's message" \
		grep -q "^sweep-cp: failed to clone '.*/across/small' from '.*/src/small': Invalid cross-device link" \
		"$CP_TMP/always.err"
	check "--reflink=always across filesystems: no temporaries left" no_temps "$xfs/across"
	# A clone reads none of the data it clones: neither the reader nor a
	# disk's prefetch reads it ahead (they read all of it before).
	mkdir "$xfs/big"
	for i in 1 2 3 4 5 6 7 8; do head -c 4M /dev/urandom >"$xfs/big/f$i"; done
	xdev=$(loopfs_dev "$xfs")
	sectors_read() { awk -v d="${xdev##*/}" '$3 == d {print $6}' /proc/diskstats; }
	for class in ssd hdd; do
		sync
		umount "$xfs" && mount "$xdev" "$xfs" # cold: its cached pages go with the mount
		before=$(sectors_read)
		SWEEP_DEVICE=$class env -u SWEEP_TEST_COPY "$SWEEP_CP" -a --stats "$xfs/big" "$xfs/big-$class" 2>"$CP_TMP/stats"
		read_mib=$((($(sectors_read) - before) / 2048))
		check "xfs clone of 32 MiB ($class class): every file cloned" grep -q 'files 8 (cloned 8,' "$CP_TMP/stats"
		check "xfs clone of 32 MiB ($class class): $read_mib MiB read from the device, under 8" [ "$read_mib" -lt 8 ]
	done
else
	check "xfs without reflink: copy_file_range used" grep -Eq 'copy_file_range [1-9]' "$CP_TMP/stats"
fi

# Read order: files created in name order but written in a shuffled order lie on
# disk in the shuffled order; sweep-cp must copy them in physical order, as
# filefrag sees it (the -v lines come in the order files are completed).
mkdir "$ext4/order"
for i in $(seq -w 1 60); do : >"$ext4/order/f$i"; done
for i in $(seq -w 1 60 | shuf); do head -c $((20000 + 10#$i * 300)) /dev/urandom >"$ext4/order/f$i"; sync; done
"$SWEEP_CP" -rv --order=physical --reflink=never "$ext4/order" "$CP_TMP/order-copy" >"$CP_TMP/order.v"
check "physical order: exit 0" [ $? = 0 ]
first_block() { filefrag -v "$1" | awk '$1 == "0:" {sub(/\.\..*/, "", $4); print $4; exit}'; }
prev=-1 sorted=1 n=0
while IFS= read -r f; do
	b=$(first_block "$f")
	[ -n "$b" ] && [ "$b" -gt "$prev" ] || { sorted=0; echo "out of order: $f at block ${b:-?} after $prev"; }
	prev=${b:-$prev}
	n=$((n + 1))
done < <(sed -n "s/^'\(.*\/f[0-9]*\)' -> .*/\1/p" "$CP_TMP/order.v")
check "physical order: all 60 files listed" [ "$n" = 60 ]
check "physical order: copied in ascending first block (filefrag)" [ "$sorted" = 1 ]
check "physical order: not simply name order" \
	test "$(sed -n "s/^'.*\/\(f[0-9]*\)' -> .*/\1/p" "$CP_TMP/order.v" | sort -c 2>&1 | wc -l)" != 0
same_tree "physical order: copy equals the source" type,mode,size,data "$ext4/order" "$CP_TMP/order-copy"

# -x: a tmpfs mounted inside the source tree.
xsrc="$CP_TMP/xsrc"
mkdir -p "$xsrc/mnt" "$xsrc/here"
printf 'on the source fs\n' >"$xsrc/here/f"
xmnt="$xsrc/mnt"
mount -t tmpfs -o size=4m sweep-cp-x "$xmnt" || { xmnt=; fail "mount tmpfs for -x"; }
if [ -n "$xmnt" ]; then
	mkdir "$xmnt/below" && printf 'on the tmpfs\n' >"$xmnt/below/g"
	for opts in -ax -rx "-a --one-file-system"; do
		n=$(echo "$opts" | tr -d ' -=')
		cp $opts "$xsrc" "$ext4/x-ref-$n"
		"$SWEEP_CP" $opts "$xsrc" "$ext4/x-$n"
		check "cp $opts: exit 0" [ $? = 0 ]
		same_tree "cp $opts with a mount inside vs cp $opts" type,mode,size,data "$ext4/x-ref-$n" "$ext4/x-$n"
		check "cp $opts: the mount point is made and left empty" \
			test -d "$ext4/x-$n/mnt" -a ! -e "$ext4/x-$n/mnt/below"
	done
	"$SWEEP_CP" -a "$xsrc" "$ext4/x-all"
	check "without -x the mounted filesystem is copied" cmp -s "$xmnt/below/g" "$ext4/x-all/mnt/below/g"
	umount "$xmnt" && xmnt=
fi

# A destination that fills up, written with pwrite and with io_uring writes.
small=$(loopfs_new ext4 24M)
big="$CP_TMP/big"
mkdir -p "$big/d"
for i in $(seq 1 40); do head -c $((1024 * 1024 + i)) /dev/urandom >"$big/d/f$i"; done
printf 'precious old contents\n' >"$CP_TMP/precious"
for writes in pwrite uring; do
	rm -rf "$small/dst"
	mkdir -p "$small/dst/d"
	cp "$CP_TMP/precious" "$small/dst/d/f40"
	(cd "$CP_TMP" && SWEEP_BACKEND=uring "$SWEEP_CP" -a --reflink=never --writes=$writes "$big/." "$small/dst") \
		2>"$CP_TMP/full.err"
	check "full disk ($writes): exit 1" [ $? = 1 ]
	check "full disk ($writes): a clear message" grep -Eq \
		"^sweep-cp: (error writing|cannot create regular file) '$small/dst/(\./)?d/f[0-9]+': No space left on device$" \
		"$CP_TMP/full.err"
	check "full disk ($writes): no temporaries left" no_temps "$small/dst"
	check "full disk ($writes): the existing file is old or new, never damaged" \
		bash -c 'cmp -s "$1" "$2" || cmp -s "$1" "$3"' _ "$small/dst/d/f40" "$CP_TMP/precious" "$big/d/f40"
	whole=0 broken=0
	for f in "$small"/dst/d/f*; do
		n=${f##*/}
		if [ "$n" = f40 ] && cmp -s "$f" "$CP_TMP/precious"; then continue; fi
		if cmp -s "$f" "$big/d/$n"; then whole=$((whole + 1)); else broken=$((broken + 1)); fi
	done
	echo "full disk ($writes): $whole files copied whole before space ran out"
	check "full disk ($writes): every final name is whole" [ "$broken" = 0 ]
	check "full disk ($writes): some files did fit" [ "$whole" -gt 0 ]
done
# Replace, not rewrite (sweep-cp(1) NOTES): an existing file with a second hard
# link. A copy that does not fit leaves both names whole and old; one that does
# gives the name a new inode, so the other link keeps the old contents, where
# cp rewrites the shared inode.
rm -rf "$small/dst"
head -c $((30 * 1024 * 1024)) /dev/urandom >"$CP_TMP/toobig"
printf 'new contents\n' >"$CP_TMP/fits"
for who in gnu sweep; do
	mkdir "$small/rw-$who"
	head -c $((2 * 1024 * 1024)) /dev/urandom >"$small/rw-$who/f"
	ln "$small/rw-$who/f" "$small/rw-$who/f-link"
	cp "$small/rw-$who/f" "$CP_TMP/old-$who"
done
"$SWEEP_CP" --reflink=never "$CP_TMP/toobig" "$small/rw-sweep/f" 2>"$CP_TMP/rw.err"
check "full disk over a linked file: exit 1" [ $? = 1 ]
check "full disk over a linked file: both names keep the old contents" \
	bash -c 'cmp -s "$1/f" "$2" && cmp -s "$1/f-link" "$2"' _ "$small/rw-sweep" "$CP_TMP/old-sweep"
check "full disk over a linked file: no temporaries left" no_temps "$small/rw-sweep"
cp --reflink=never "$CP_TMP/toobig" "$small/rw-gnu/f" 2>/dev/null
differs() { ! cmp -s "$1" "$2"; }
check "(GNU cp, for contrast: its failed rewrite damaged the file)" differs "$small/rw-gnu/f" "$CP_TMP/old-gnu"
"$SWEEP_CP" "$CP_TMP/fits" "$small/rw-sweep/f"
check "over a linked file: the name gets the copy" cmp -s "$small/rw-sweep/f" "$CP_TMP/fits"
check "over a linked file: the other link keeps the old contents" cmp -s "$small/rw-sweep/f-link" "$CP_TMP/old-sweep"
cp "$CP_TMP/fits" "$small/rw-gnu/f"
check "(GNU cp, for contrast: the other link changes too)" cmp -s "$small/rw-gnu/f-link" "$CP_TMP/fits"
rm -rf "$small"/rw-*

# Same through copy_file_range (source and destination on one full filesystem).
rm -rf "$small/dst"
mkdir -p "$small/src2" && head -c $((9 * 1024 * 1024)) /dev/urandom >"$small/src2/a" &&
	head -c $((9 * 1024 * 1024)) /dev/urandom >"$small/src2/b"
"$SWEEP_CP" -a "$small/src2" "$small/dst2" 2>"$CP_TMP/full2.err"
check "full disk, copy_file_range: exit 1" [ $? = 1 ]
check "full disk, copy_file_range: a clear message" grep -q "No space left on device" "$CP_TMP/full2.err"
check "full disk, copy_file_range: no temporaries left" no_temps "$small/dst2"

finish
