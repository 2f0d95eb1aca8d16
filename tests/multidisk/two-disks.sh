#!/bin/bash
# SPDX-License-Identifier: MIT
# A tree over two disks: ext4 on one loop device, xfs on another mounted
# inside it (each over a file of a private tmpfs, so each is a disk of its
# own). The tools read both disks at once; what must hold whatever the
# timing:
#  - sweep-plan --read: both disks at once, every file read;
#  - sweep-tar: the archive complete and valid (GNU tar extracts exactly the
#    source: names, types, modes, sizes, contents, links), as GNU tar's;
#  - sweep-cp -a: the copy is the source;
#  - sweep-order --split-by-device: one list per disk, each holding that
#    disk's files only, in that disk's order, together the whole input; a
#    path that cannot be stat'ed in a list of its own, exit status 1.
. "${TESTS_DIR:?run through meson test: TESTS_DIR is not set}/common/lib.sh"
. "$TESTS_DIR/multidisk/lib.sh"
require_root
require_cmd python3 tar
md_disks_on_tmpfs 800M
loopfs_require ext4 xfs
B="$BUILD_ROOT/utils"
MANIFEST="$TESTS_DIR/common/manifest.py"
scratch T

A=$(loopfs_new ext4 256M -b 4096) || die "cannot make the ext4 disk"
X=$(loopfs_new xfs 320M) || die "cannot make the xfs disk"
# Files of every size from empty to a few MiB, directories, symlinks, hard links, a sparse file on each disk.
mkdir -p "$A/src/tree/other" "$A/src/tree/e/f"
mount --bind "$X" "$A/src/tree/other" || die "cannot mount the xfs disk inside the tree"
echo "$A/src/tree/other" >>"$LOOPFS_WORK/mounts"
for i in $(seq 1 40); do
	mkdir -p "$A/src/tree/other/d$((i % 4))"
	head -c $((i * 37000)) /dev/urandom >"$A/src/tree/other/d$((i % 4))/g$i"
	head -c $((i * 23000)) /dev/urandom >"$A/src/tree/h$i"
done
ln "$A/src/tree/other/d1/g1" "$A/src/tree/other/d1/g1-link"
ln "$A/src/tree/h2" "$A/src/tree/e/f/h2-link"
ln -s ../h3 "$A/src/tree/e/sym"
ln -s d2/g2 "$A/src/tree/other/sym"
: >"$A/src/tree/e/empty"
: >"$A/src/tree/other/empty"
truncate -s 5M "$A/src/tree/e/sparse" "$A/src/tree/other/sparse"
printf data | dd of="$A/src/tree/e/sparse" bs=1 seek=3000000 conv=notrunc 2>/dev/null
printf data | dd of="$A/src/tree/other/sparse" bs=1 seek=4000000 conv=notrunc 2>/dev/null
sync
S="$A/src/tree"
[ "$(stat -c %d "$S")" != "$(stat -c %d "$S/other")" ] || die "the two disks are one filesystem"
manifest() { python3 "$MANIFEST" --fields=mode,owner,size,data,link,hl --no-times "$1"; }
manifest "$S" >"$T/want"

case_begin "sweep-plan --read: both disks at once"
SWEEP_DEVICE=hdd "$B/sweep-plan" --read --no-compare "$S" >/dev/null 2>"$T/err" || fail "sweep-plan: $(cat "$T/err")"
nfiles=$(find "$S" -type f | wc -l) # each name: a hard link is read under each of its names
grep -q "read $nfiles files" "$T/err" || fail "not every file read ($nfiles): $(grep read "$T/err")"
grep -q ", 2 disks at once)" "$T/err" || fail "not both disks at once: $(grep read "$T/err")"
case_end

for dev in hdd ssd; do
	case_begin "sweep-tar ($dev class): the archive is complete and valid"
	rm -rf "$T/x" "$T/a.tar"
	mkdir "$T/x"
	SWEEP_DEVICE=$dev "$B/sweep-tar" -cf "$T/a.tar" -C "$S" . 2>"$T/err" || fail "sweep-tar: $(cat "$T/err")"
	tar -xpf "$T/a.tar" -C "$T/x" || fail "GNU tar cannot extract it"
	manifest "$T/x" >"$T/got"
	cmp -s "$T/want" "$T/got" || fail "extracted tree differs: $(diff "$T/want" "$T/got" | head -5)"
	# each name once (a directory holding a symlink is also written early, for GNU tar: tar.h)
	tar -tf "$T/a.tar" | sed 's|/$||' | sort -u >"$T/members"
	(cd "$S" && tar -cf - . | tar -tf - | sed 's|/$||' | sort) >"$T/gnu-members"
	cmp -s "$T/members" "$T/gnu-members" || fail "members differ from GNU tar's: $(diff "$T/members" "$T/gnu-members" | head -5)"
	tar -df "$T/a.tar" -C "$S" >"$T/diff" 2>&1 || fail "tar --compare: $(head -5 "$T/diff")"
	case_end
done

case_begin "sweep-cp -a: the copy is the source"
SWEEP_DEVICE=hdd "$B/sweep-cp" -a "$S" "$T/copy" 2>"$T/err" || fail "sweep-cp: $(cat "$T/err")"
manifest "$T/copy" >"$T/got"
cmp -s "$T/want" "$T/got" || fail "copy differs: $(diff "$T/want" "$T/got" | head -5)"
case_end

case_begin "sweep-order --split-by-device: one list per disk"
(cd "$S" && find . -type f -print0) >"$T/in"
printf './no such file\0' >>"$T/in"
(cd "$S" && SWEEP_DEVICE=hdd "$B/sweep-order" -0 --split-by-device="$T/l." <"$T/in" >"$T/names" 2>"$T/err")
rc=$?
[ "$rc" = 1 ] || fail "exit status $rc with a path that cannot be stat'ed, want 1"
tr '\0' '\n' <"$T/names" | sort >"$T/names.txt"
nlists=$(wc -l <"$T/names.txt")
[ "$nlists" = 3 ] || fail "$nlists lists, want 2 disks and the rest: $(cat "$T/names.txt")"
grep -qx "$T/l.rest" "$T/names.txt" || fail "no list of the rest"
[ "$(tr '\0' '\n' <"$T/l.rest")" = "./no such file" ] || fail "the rest: $(tr '\0' ' ' <"$T/l.rest")"
devs=
while read -r l; do
	[ "$l" = "$T/l.rest" ] && continue
	case $l in "$T"/l.loop*) ;; *) fail "list $l not named after its loop device" ;; esac
	# every file of a list on one filesystem, another for each list
	d=$(cd "$S" && tr '\0' '\n' <"$l" | xargs -d '\n' stat -c %d | sort -u)
	[ "$(echo "$d" | wc -l)" = 1 ] || fail "$l spans filesystems"
	devs="$devs $d"
	# in that disk's order: the list ordered again alone is itself
	(cd "$S" && SWEEP_DEVICE=hdd "$B/sweep-order" -0 <"$l" >"$T/again") || fail "sweep-order of $l"
	cmp -s "$l" "$T/again" || fail "$l is not in its disk's order"
done <"$T/names.txt"
[ "$(echo $devs | tr ' ' '\n' | sort -u | wc -l)" = 2 ] || fail "the two lists are not the two disks"
cat "$T"/l.* | tr '\0' '\n' | sort >"$T/out"
tr '\0' '\n' <"$T/in" | sort >"$T/in.txt"
cmp -s "$T/in.txt" "$T/out" || fail "the lists together are not the input"
case_end

case_begin "sweep-order --split-by-device refuses to write through a symlink"
ln -s "$T/victim" "$T/s.rest"
printf 'x\n' | (cd "$S" && "$B/sweep-order" --split-by-device="$T/s." >/dev/null 2>"$T/err")
[ ! -e "$T/victim" ] || fail "a list was written through a symlink"
grep -q "cannot write" "$T/err" || fail "no error for the symlinked list: $(cat "$T/err")"
case_end

finish
