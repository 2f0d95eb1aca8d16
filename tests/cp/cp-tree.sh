#!/bin/bash
# SPDX-License-Identifier: MIT
# sweep-cp -a of a tree holding every kind of entry must equal what cp -a
# makes: contents, type, mode, owner, ns mtime (and atime of files), symlink
# targets, device numbers, xattrs and ACLs, the hole map and allocated
# blocks, and the hard-link structure. Checked for each data path (same
# filesystem: reflink/copy_file_range; --reflink=never: the reader, with
# io_uring and with plain syscalls), and -r / --sparse against cp's same options.
. "$TESTS_DIR/cp/lib.sh"

src="$CP_TMP/src"
mkdir "$src"
make_tree "$src"
python3 "$MANIFEST" --fields=type,atime "$src" >"$CP_TMP/src.atime"

# First, before anything has read the source (cp updates atimes as it reads).
# (the engine's own choice: a test build's SWEEP_TEST_COPY=thread would take no clone or kernel copy)
env -u SWEEP_TEST_COPY "$SWEEP_CP" -a --stats "$src" "$CP_TMP/auto" 2>"$CP_TMP/auto.err"
check "sweep-cp -a exits 0" [ $? = 0 ]
python3 "$MANIFEST" --fields=type,atime "$CP_TMP/auto" >"$CP_TMP/auto.atime"
check "file atimes preserved (ns)" cmp -s "$CP_TMP/src.atime" "$CP_TMP/auto.atime"

cp -a "$src" "$CP_TMP/ref"
FIELDS=type,mode,owner,size,mtime,data,link,rdev,xattr,hl,holes,blocks
same_tree "-a, default (same filesystem) vs cp -a" "$FIELDS" "$CP_TMP/ref" "$CP_TMP/auto"
check "same filesystem: data went through copy_file_range or a clone" \
	grep -Eq 'files [0-9]+ \(cloned [0-9]+, copy_file_range [1-9]' "$CP_TMP/auto.err"
check "no temporaries left" no_temps "$CP_TMP/auto"

# Reads and writes each through io_uring or syscalls; SWEEP_BACKEND=syscall
# keeps io_uring out of the writes too.
for backend in uring syscall; do
	for writes in uring pwrite; do
		how="$backend reads, --writes=$writes"
		if [ $backend = uring ] && ! have_uring; then
			skip_part "$how: io_uring is not available here"
			continue
		fi
		SWEEP_BACKEND=$backend "$SWEEP_CP" -a --stats --reflink=never --writes=$writes "$src" \
			"$CP_TMP/read-$backend-$writes" 2>"$CP_TMP/read.err"
		check "--reflink=never ($how) exits 0" [ $? = 0 ]
		same_tree "-a --reflink=never ($how) vs cp -a" "$FIELDS" "$CP_TMP/ref" "$CP_TMP/read-$backend-$writes"
		check "--reflink=never ($how): every file read" \
			grep -Eq 'cloned 0, copy_file_range 0, read [1-9]' "$CP_TMP/read.err"
		want=pwrite
		[ $backend = uring ] && [ $writes = uring ] && want=io_uring
		check "--reflink=never ($how): data written with $want" \
			grep -Eq "write requests [1-9][0-9]* \\($want, " "$CP_TMP/read.err"
		rm -rf "$CP_TMP/read-$backend-$writes"
	done
done
# The default write path, and sparse copies punched through io_uring writes.
"$SWEEP_CP" -a --stats --reflink=never "$src" "$CP_TMP/read-default" 2>"$CP_TMP/read.err"
check "default writes are pwrite (measured better)" grep -q 'write requests [1-9][0-9]* (pwrite, ' "$CP_TMP/read.err"
check "copies are made as O_TMPFILE (no name until complete)" grep -q ', O_TMPFILE)' "$CP_TMP/read.err"
SWEEP_BACKEND=uring "$SWEEP_CP" -a --sparse=always --reflink=never --writes=uring "$src" "$CP_TMP/sp-uring"
cp -a --sparse=always --reflink=never "$src" "$CP_TMP/ref-sp"
same_tree "--sparse=always --writes=uring vs cp --sparse=always" "$FIELDS" "$CP_TMP/ref-sp" "$CP_TMP/sp-uring"
rm -rf "$CP_TMP/read-default" "$CP_TMP/sp-uring" "$CP_TMP/ref-sp"

# Small sweeps: hard links whose first name was copied in an earlier batch, or
# is still queued; directories made between batches.
for b in 1 3; do
	"$SWEEP_CP" -a --order=inode --batch=$b --stats "$src" "$CP_TMP/batch$b" 2>"$CP_TMP/batch.err"
	same_tree "-a --order=inode --batch=$b vs cp -a" "$FIELDS" "$CP_TMP/ref" "$CP_TMP/batch$b"
	check "--batch=$b: several sweeps" grep -Eq 'sweeps ([2-9]|[1-9][0-9]+),' "$CP_TMP/batch.err"
done

# Without -a: modes less the umask, fresh times, hard links become copies.
umask 022
cp -r "$src" "$CP_TMP/ref-r"
"$SWEEP_CP" -r "$src" "$CP_TMP/r"
same_tree "-r vs cp -r" type,mode,owner,size,data,link,rdev,hl "$CP_TMP/ref-r" "$CP_TMP/r"
umask 077
rm -rf "$CP_TMP/ref-r" "$CP_TMP/r"
cp -r "$src" "$CP_TMP/ref-r"
"$SWEEP_CP" -r "$src" "$CP_TMP/r"
same_tree "-r under umask 077 vs cp -r" type,mode,owner,size,data,link,rdev,hl "$CP_TMP/ref-r" "$CP_TMP/r"
umask 022

# -p keeps mode, owner and times but not xattrs or links.
cp -rp "$src" "$CP_TMP/ref-p"
"$SWEEP_CP" -rp "$src" "$CP_TMP/p"
same_tree "-rp vs cp -rp" type,mode,owner,size,mtime,data,link,rdev,hl "$CP_TMP/ref-p" "$CP_TMP/p"

# --sparse=always punches zero blocks; --sparse=never fills holes.
for mode in always never; do
	for how in auto never; do
		cp -a --sparse=$mode --reflink=never "$src" "$CP_TMP/ref-$mode"
		"$SWEEP_CP" -a --sparse=$mode --reflink=$how "$src" "$CP_TMP/sp-$mode-$how"
		same_tree "--sparse=$mode --reflink=$how vs cp --sparse=$mode" "$FIELDS" \
			"$CP_TMP/ref-$mode" "$CP_TMP/sp-$mode-$how"
		rm -rf "$CP_TMP/ref-$mode" "$CP_TMP/sp-$mode-$how"
	done
done

# A second run over an existing copy replaces every file atomically and ends equal.
echo changed >"$CP_TMP/auto/small"
"$SWEEP_CP" -a "$src/." "$CP_TMP/auto"
same_tree "-a over an existing copy vs cp -a" "$FIELDS" "$CP_TMP/ref" "$CP_TMP/auto"

# --progress: without a terminal, log lines and a summary last (tests/progress has the lines' shape).
"$SWEEP_CP" -a --progress "$src" "$CP_TMP/prog-pipe" 2>"$CP_TMP/prog.err"
check "--progress without a terminal ends with the summary" \
	test $? = 0 -a "$(tail -n 1 "$CP_TMP/prog.err" | cut -c1-15)" = "sweep-cp: done:"
if command -v script >/dev/null; then
	script -qec "'$SWEEP_CP' -a --progress '$src' '$CP_TMP/prog-tty'" /dev/null >"$CP_TMP/prog.tty"
	check "--progress on a terminal exits 0" [ $? = 0 ]
	check "--progress on a terminal ends with the summary" \
		grep -aq "sweep-cp: done: [0-9]* dirs, [0-9]* files, .* bytes" "$CP_TMP/prog.tty"
	same_tree "--progress copy vs cp -a" "$FIELDS" "$CP_TMP/ref" "$CP_TMP/prog-tty"
fi

finish
