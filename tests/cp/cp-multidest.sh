#!/bin/bash
# SPDX-License-Identifier: MIT
# sweep-cp onto a destination that spans two filesystems (two ext4 loop
# images, the second mounted inside the destination): one writer thread per
# destination filesystem (lib/copy/copy_thread.c), and the copy is still
# cp -a's, byte for byte and in its metadata, hard links included;
# SWEEP_COPY_THREADS=1 (every copy on one thread) makes the same tree;
# sweep-sync onto the same two filesystems makes rsync's tree, also with
# --delete.
# A copy that fails on one filesystem (it fills up) fails alone: exit 1, the
# file it would have replaced is whole, no temporaries on either, and the
# copies to the other filesystem are all made.
. "$TESTS_DIR/cp/lib.sh"
. "$TESTS_DIR/common/loopfs.sh"
loopfs_require ext4
binds=()
unbind() {
	local i
	for ((i = ${#binds[@]} - 1; i >= 0; i--)); do
		umount "${binds[$i]}" 2>/dev/null || umount -l "${binds[$i]}" 2>/dev/null
	done
}
on_exit unbind # (registered after loopfs_require: runs before its teardown)
FIELDS=type,mode,owner,size,mtime,data,link,rdev,xattr,hl,holes

d1=$(loopfs_new ext4 128M)
d2=$(loopfs_new ext4 64M)

# bind_inner DIR: a directory of the second filesystem mounted at DIR/inner.
bind_inner() {
	mkdir -p "$1/inner" "$d2/$2" || return 1
	mount --bind "$d2/$2" "$1/inner" || return 1
	binds+=("$1/inner")
}

# The source: a tree on the first destination, another inside it (inner) on
# the second, hard links within each.
src="$CP_TMP/src"
mkdir -p "$src/inner"
make_tree "$src"
make_tree "$src/inner"
for i in $(seq 1 40); do printf 'top %s\n' "$i" >"$src/d1/f$i"; printf 'in %s\n' "$i" >"$src/inner/d1/f$i"; done
ln "$src/inner/d1/f1" "$src/inner/f1-link"

for how in sweep one ref; do
	mkdir -p "$d1/$how/src" && bind_inner "$d1/$how/src" "$how" || die "cannot mount $d2 inside $d1/$how"
done
[ "$(stat -c %d "$d1/sweep/src")" != "$(stat -c %d "$d1/sweep/src/inner")" ] || die "inner is not another filesystem"

env -u SWEEP_TEST_COPY SWEEP_COPY_THREADS=8 "$SWEEP_CP" -a --stats "$src" "$d1/sweep" 2>"$CP_TMP/stats"
check "two destination filesystems: exits 0" [ $? = 0 ]
env -u SWEEP_TEST_COPY SWEEP_COPY_THREADS=1 "$SWEEP_CP" -a --stats "$src" "$d1/one" 2>"$CP_TMP/stats.one"
check "one writer thread: exits 0" [ $? = 0 ]
cp -a "$src" "$d1/ref"
same_tree "two writer threads vs cp -a" "$FIELDS" "$d1/ref/src" "$d1/sweep/src"
same_tree "one writer thread vs cp -a" "$FIELDS" "$d1/ref/src" "$d1/one/src"
check "a writer thread for each destination filesystem" grep -q 'writer threads 2$' "$CP_TMP/stats"
check "SWEEP_COPY_THREADS=1: one writer thread for both" grep -q 'writer threads 1$' "$CP_TMP/stats.one"
check "the files were read, not cloned" grep -Eq 'cloned 0, copy_file_range 0, read [1-9]' "$CP_TMP/stats"
check "no temporaries left" no_temps "$d1/sweep"
check "the hard link inside the second filesystem is one inode" \
	[ "$(stat -c %i "$d1/sweep/src/inner/d1/f1")" = "$(stat -c %i "$d1/sweep/src/inner/f1-link")" ]

# sweep-sync (the same engine) onto the same two filesystems, as rsync does,
# then again with a file changed and one removed on each, with --delete.
SWEEP_SYNC=${SWEEP_SYNC:-$BUILD_ROOT/utils/sweep-sync}
if [ -x "$SWEEP_SYNC" ] && command -v rsync >/dev/null; then
	for how in sync rsync; do
		mkdir -p "$d1/$how/src" && bind_inner "$d1/$how/src" "$how" || die "cannot mount $d2 inside $d1/$how"
	done
	sync_both() { # sync_both FIELDS [OPTION]
		local fields=$1
		shift
		env -u SWEEP_TEST_COPY SWEEP_COPY_THREADS=8 "$SWEEP_SYNC" -aHAX "$@" "$src/" "$d1/sync/src/"
		check "sweep-sync $* onto two filesystems: exits 0" [ $? = 0 ]
		rsync -aHAX "$@" "$src/" "$d1/rsync/src/"
		same_tree "sweep-sync $* onto two filesystems vs rsync" "$fields" "$d1/rsync/src" "$d1/sync/src"
	}
	# (no holes: rsync without -S writes them out; after --delete, rsync
	# gave a directory it deleted in a time other than the source's)
	sync_both "${FIELDS%,holes}"
	printf 'changed top\n' >"$src/d1/f2"
	printf 'changed inner\n' >"$src/inner/d1/f2"
	rm "$src/d1/f3" "$src/inner/d1/f3"
	sync_both type,mode,owner,size,data,link,rdev,xattr,hl --delete
	check "--delete: the changed files have the source's times" \
		[ "$(stat -c %y "$d1/sync/src/d1/f2" "$d1/sync/src/inner/d1/f2")" = "$(stat -c %y "$src/d1/f2" "$src/inner/d1/f2")" ]
	check "--delete removed the file on each filesystem" \
		[ ! -e "$d1/sync/src/d1/f3" ] && [ ! -e "$d1/sync/src/inner/d1/f3" ]
	check "sweep-sync: no temporaries left" no_temps "$d1/sync"
else
	skip_part "sweep-sync onto two filesystems: no sweep-sync or rsync"
fi

# One writer fails (the second filesystem fills up), the other goes on.
full="$CP_TMP/full"
mkdir -p "$full/inner"
make_tree "$full"
for i in $(seq 1 20); do printf 'in %s\n' "$i" >"$full/inner/f$i"; done
head -c $((80 * 1024 * 1024)) /dev/zero | tr '\0' x >"$full/inner/huge"
mkdir -p "$d1/full/full" && bind_inner "$d1/full/full" full || die "cannot mount $d2 inside $d1/full"
printf 'the old huge\n' >"$d1/full/full/inner/huge"
env -u SWEEP_TEST_COPY SWEEP_COPY_THREADS=8 "$SWEEP_CP" -a --stats "$full" "$d1/full" 2>"$CP_TMP/full.err"
check "a full second filesystem: exit 1" [ $? = 1 ]
check "a full second filesystem: the error names the file" grep -q "inner/huge.*No space left on device" "$CP_TMP/full.err"
check "a full second filesystem: two writer threads" grep -q 'writer threads 2$' "$CP_TMP/full.err"
check "the file it would have replaced is whole" [ "$(cat "$d1/full/full/inner/huge")" = "the old huge" ]
check "no temporaries left on either filesystem" no_temps "$d1/full"
# (against the source on another filesystem: holes are laid out by each filesystem)
same_tree "the first filesystem's copies all made" "${FIELDS%,holes}" "$full/d1" "$d1/full/full/d1"
for i in $(seq 1 20); do
	cmp -s "$full/inner/f$i" "$d1/full/full/inner/f$i" || fail "the second filesystem's inner/f$i"
done
ok "the second filesystem's other copies all made"

finish
