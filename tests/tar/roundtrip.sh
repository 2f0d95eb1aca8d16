#!/bin/bash
# SPDX-License-Identifier: MIT
# Round trip of a tree with every kind of entry (mktree.py), in every --order,
# with a memory limit small enough to force a flush every few files, and on
# both reader backends: extracted with GNU tar and with bsdtar, each result
# compared with the source (manifest.py: stat fields, contents, data map,
# xattrs, ACLs, hard-link groups), plus diff -r and tar --compare; the part
# deeper than PATH_MAX (which neither extractor can create) is checked by
# reading the archive with Python's tarfile.
. "$TESTS_DIR/tar/lib.sh"
# The member order depends on where the files land on disk: keep what failed.
keep_on_fail

python3 "$HERE/mktree.py" "$WORK/src" --deep || die "cannot build the tree"
manifest "$WORK/src/tree" > "$WORK/want"

check_deep() { # the members under deep/ against the source, through directory fds
	python3 - "$1" "$WORK/src/deep" <<'PY' || die "$1: deep part differs"
import hashlib, os, stat, sys, tarfile
want = {}
def walk(fd, rel):
    for n in sorted(os.listdir(fd)):
        p = rel + "/" + n
        st = os.stat(n, dir_fd=fd, follow_symlinks=False)
        want[p] = st
        if stat.S_ISDIR(st.st_mode):
            sub = os.open(n, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            walk(sub, p)
            os.close(sub)
top = os.open(sys.argv[2], os.O_RDONLY | os.O_DIRECTORY)
walk(top, "deep")
got = {m.name: m for m in tarfile.open(sys.argv[1]) if m.name.startswith("deep/")}
assert sorted(got) == sorted(want), "member names differ"
tf = tarfile.open(sys.argv[1])
holders = {}
for name, m in got.items():
    st = want[name]
    assert stat.S_IMODE(st.st_mode) == m.mode or m.islnk() or m.issym(), name
    if m.isreg():
        h = hashlib.sha256(tf.extractfile(m).read()).hexdigest()
        holders[st.st_ino] = (name, h)
    elif m.islnk():
        assert m.size == 0, name
    elif m.issym():
        assert m.linkname == "bottom", name
for name, m in got.items():
    if m.islnk():
        assert want[m.linkname].st_ino == want[name].st_ino, name
bottom = [m for n, m in got.items() if n.endswith("/bottom") or n.endswith("/bottom2")]
assert len(bottom) == 2 and sum(m.isreg() for m in bottom) == 1
reg = [m for m in bottom if m.isreg()][0]
assert reg.pax_headers.get("SCHILY.xattr.user.deep") == "yes", reg.pax_headers
PY
}

variant() { # variant NAME [sweep-tar options...]
	local name=$1 a="$WORK/$1.tar" rc
	shift
	"$T" -c -f "$a" --totals "$@" -C "$WORK/src" tree deep 2> "$WORK/$name.err"
	rc=$?
	[ $rc = 0 ] || { cat "$WORK/$name.err" >&2; die "$name: exit status $rc"; }
	# Sockets are skipped with a note, as GNU tar does; besides --totals' lines
	# (the device class and profile of each operand, the totals) nothing else is said.
	grep -q "^sweep-tar: tree/sock: socket ignored$" "$WORK/$name.err" || die "$name: no socket note"
	[ "$(grep -c "^sweep-tar: $WORK/src/[a-z]*: .*: device class [hds]*d (" "$WORK/$name.err")" = 2 ] ||
		die "$name: --totals did not name each operand's device class"
	[ "$(grep -c "^sweep-tar: $WORK/src/[a-z]*: profile: plan [a-z]*, walk " "$WORK/$name.err")" = 2 ] ||
		die "$name: --totals did not give each operand's device profile"
	if grep -v -e "socket ignored" -e "^Total bytes written" -e "^Members:" -e ": device class [hds]*d (" \
		-e "^sweep-tar: $WORK/src/[a-z]*: profile: " \
		"$WORK/$name.err" >&2; then
		die "$name: unexpected messages"
	fi
	gnu_x "$a" "$WORK/$name.g" tree
	same_tree "$WORK/want" "$WORK/$name.g/tree"
	bsd_x "$a" "$WORK/$name.b" tree
	# bsdtar 3.6 misreads pax times before 1970 with a fraction (see sweep-tar(1) BUGS).
	same_tree "$WORK/want" "$WORK/$name.b/tree" "^times/pre1970ns "

	# diff -r: only the entries it cannot compare may be mentioned.
	diff -r --no-dereference "$WORK/src/tree" "$WORK/$name.g/tree" > "$WORK/$name.diff" 2>&1
	if grep -v -e " is a fifo while " -e " special file while " -e "^Only in $WORK/src/tree: sock$" \
		"$WORK/$name.diff" >&2; then
		die "$name: diff -r found differences"
	fi
	# GNU tar --compare against the source. ACLs put the mask in stat's group
	# bits where pax carries the group entry, which --compare calls a mode
	# difference, so those few are left to the manifests above.
	(cd "$WORK/src" && tar --compare -f "$a" --exclude=tree/attrs tree) > "$WORK/$name.cmp" 2>&1 ||
		{ grep -v hdrcharset "$WORK/$name.cmp" >&2; die "$name: tar --compare found differences"; }
	check_deep "$a"
	rm -rf "$WORK/$name.g" "$WORK/$name.b"
}

variant auto

# As a user who cannot write into read-only directories: since directory
# entries come last, GNU tar still fills them, then sets their modes and times.
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null; then
	mkdir "$WORK/user" && chown 65534:65534 "$WORK/user"
	cp "$WORK/auto.tar" "$WORK/user.tar" && chmod 644 "$WORK/user.tar"
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		tar -x -p -f "$WORK/user.tar" -C "$WORK/user" --warning=no-timestamp tree/modes tree/empty \
		2> "$WORK/user.err" || { cat "$WORK/user.err" >&2; die "GNU tar as nobody could not extract"; }
	for d in modes/ro modes/ro/sub empty/nested/deeper; do
		[ "$(stat -c '%a %Y' "$WORK/user/tree/$d")" = "$(stat -c '%a %Y' "$WORK/src/tree/$d")" ] ||
			die "as nobody: $d: mode or mtime not restored"
	done
	cmp "$WORK/user/tree/modes/ro/inside" "$WORK/src/tree/modes/ro/inside" || die "as nobody: read-only dir not filled"
fi
for order in physical inode name none; do
	variant "$order" --order="$order"
done
# 1 KiB of plan: a flush every few files, so hard links meet their data
# holder in earlier, the same and later batches.
variant tiny --memory-limit=1K
batches=$(sed -n 's/.* in \([0-9]*\) batch.*/\1/p' "$WORK/tiny.err")
[ "${batches:-0}" -ge 5 ] || die "--memory-limit=1K read in ${batches:-?} batches"
# Name order with flushes: batches sorted by full path ("c-x/" before "c/")
# interleave directories that the walk keeps apart.
variant tiny-name --memory-limit=1K --order=name
SWEEP_BACKEND=syscall variant syscall --order=physical
SWEEP_BACKEND=syscall variant syscall-tiny --memory-limit=1K --order=inode
ok "round trip in every order, with many flushes, on both backends"
finish
