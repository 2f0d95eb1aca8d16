#!/bin/bash
# SPDX-License-Identifier: MIT
# A tree deeper than PATH_MAX (about 5,600 bytes of path at the bottom) with
# every kind of entry down there: sweep-cp -a must copy it whole, on every
# data path, and copy again over its own earlier copy. GNU cp 9 and GNU tar
# stop at PATH_MAX ("File name too long"), so the reference is the source
# tree itself, read by manifest.py through directory descriptors.
. "$TESTS_DIR/cp/lib.sh"

src="$CP_TMP/src"
long=$(printf 'd%.0s' $(seq 1 200))
mkdir "$src"
(
	cd "$src" || exit 1
	for i in $(seq 1 28); do
		mkdir "$long$i" && cd "$long$i" || exit 1
		[ "$i" = 14 ] && printf 'halfway\n' >mid && mkdir empty
	done
	printf 'leaf\n' >file
	head -c 300000 /dev/urandom >big
	truncate -s 4M sparse && printf 'x' | dd of=sparse bs=1 seek=2000000 conv=notrunc status=none
	ln file hard
	ln -s ../target sym
	mkfifo fifo
	setfattr -n user.deep -v yes file 2>/dev/null
	chmod 0640 big
	touch -d '2001-02-03 04:05:06.123456789' file
	touch -h -d '2002-03-04 05:06:07.5' sym
	# a hard link whose other name is near the top
	ln big "$src/${long}1/big-top"
) || die "could not build the deep tree"
depth=$(cd "$src" && find . -name file -printf '%p' | wc -c)
check "the tree is deeper than PATH_MAX ($depth bytes)" [ "$depth" -gt 4096 ]

FIELDS=type,mode,owner,size,mtime,data,link,rdev,xattr,hl,holes
for how in "" "--reflink=never" "--reflink=never --writes=uring" "--reflink=never --sparse=never"; do
	name=deep$(echo "$how" | tr -d ' -=')
	SWEEP_BACKEND=uring "$SWEEP_CP" -a $how "$src" "$CP_TMP/$name" 2>"$CP_TMP/err"
	check "-a $how: exit 0" [ $? = 0 ]
	check "-a $how: no messages" [ ! -s "$CP_TMP/err" ]
	if [ "$how" = "--reflink=never --sparse=never" ]; then
		same_tree "-a $how: equals the source" type,mode,owner,size,mtime,data,link,rdev,xattr,hl "$src" "$CP_TMP/$name"
	else
		same_tree "-a $how: equals the source" "$FIELDS" "$src" "$CP_TMP/$name"
	fi
	check "-a $how: no temporaries left" no_temps "$CP_TMP/$name"
done

# Again over the first copy: every deep name is replaced through its directory.
(cd "$src" && cd "$(find . -name file -printf '%h')" && printf 'changed\n' >file && touch -d '2003-01-01' file)
"$SWEEP_CP" -a "$src/." "$CP_TMP/deep" 2>"$CP_TMP/err"
check "-a over an existing deep copy: exit 0" [ $? = 0 ]
same_tree "-a over an existing deep copy: equals the source" "$FIELDS" "$src" "$CP_TMP/deep"
check "-a over an existing deep copy: no temporaries left" no_temps "$CP_TMP/deep"

# -r: fresh modes and times, hard links become copies.
"$SWEEP_CP" -r "$src" "$CP_TMP/deep-r" 2>"$CP_TMP/err"
check "-r: exit 0" [ $? = 0 ]
same_tree "-r: same types, sizes and data" type,size,data,link "$src" "$CP_TMP/deep-r"

finish
