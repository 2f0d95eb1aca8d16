#!/bin/bash
# SPDX-License-Identifier: MIT
# Directories that GNU tar fills through placeholders (sweep-tar(1) NOTES):
# a symlink whose target is absolute or has a ".." component, and a hard
# link to one, are made at the very end of GNU tar's extraction, after it
# has set the status of every directory not marked for later. A directory
# holding one must come back with its own mtime in every member order.
#
# First a fixed order that left such a directory with the extraction time:
# --order=name with a plan bound of exactly two files. The walk meets
# r/c/f, then r/c-x/a, which fills the plan; the batch is written sorted by
# path ("r/c-x/a" < "r/c/f", since '-' sorts before '/'), and only then does
# the walk meet r/c-x/z. So GNU tar creates r/c-x for a member inside it,
# sets and forgets it for r/c/f outside it, and meets the link with no entry
# for r/c-x left to mark. The same for r/h-x, with a hard link to the
# symlink. Then every --order, plan bounds of a few files and the default,
# and both reader backends, over the same tree.
. "$TESTS_DIR/tar/lib.sh"
keep_on_fail
cd "$WORK" || die "cd $WORK"

mkdir -p r/c r/c-x r/h r/h-x r/n/deep/er
echo f > r/c/f
echo a > r/c-x/a
ln -s /etc/passwd r/c-x/z
ln -s ../c r/c-x/up
echo f > r/h/f
echo a > r/h-x/a
ln -P r/c-x/z r/h-x/zz
ln -s ../../../c-x r/n/deep/er/back
echo x > r/n/deep/er/x
ln -s plain r/n/deep/plain
# Distinct times, directories last (each file made above changed its parent).
i=0
for p in $(find r -depth); do
	i=$((i + 1))
	touch -h -d "2001-02-03 04:05:$((i % 60)).$((100000000 + i))" "$p"
done

# Each archive is extracted by both tars into x/N.g and x/N.b; one Python
# run compares them all with the source at the end (all_same).
n=0
: > variants
extract() { # extract ARCHIVE WHAT
	n=$((n + 1))
	gnu_x "$1" "x/$n.g"
	bsd_x "$1" "x/$n.b"
	printf '%s\t%s\n' "x/$n.g/r" "GNU tar, $2" "x/$n.b/r" "bsdtar, $2" >> variants
}
all_same() {
	python3 - "$HERE" r variants <<'PY' || die "some directories were not restored exactly (diffs above)"
import difflib, sys
sys.path.insert(0, sys.argv[1])
from manifest import manifest
want = manifest(sys.argv[2]).splitlines()
bad = 0
for line in open(sys.argv[3]):
    path, what = line.rstrip("\n").split("\t")
    have = manifest(path).splitlines()
    if have != want:
        bad += 1
        sys.stderr.write("%s: differs from the source\n" % what)
        sys.stderr.writelines(l + "\n" for l in difflib.unified_diff(want, have, "source", path, n=0, lineterm=""))
sys.exit(1 if bad else 0)
PY
	: > variants
}

# The plan memory of one file with a 5-byte path (r/c/f): a bound one byte
# above it holds one such file and is full with the second.
"$T" -c --order=name --totals -f probe.tar r/c 2> probe.err || die "probe run"
one=$(sed -n 's/.*(peak \([0-9]*\) bytes).*/\1/p' probe.err)
[ -n "$one" ] || { cat probe.err >&2; die "probe: no plan memory in --totals"; }

"$T" -c --order=name --memory-limit=$((one + 1)) -f fixed.tar r || die "fixed order: sweep-tar failed"
# The order this test is about; if the walk or plan ever change it, say so.
tar -tf fixed.tar | grep -v '/$' > fixed.order
want_order='r/c-x/a r/c/f r/c-x/up r/c-x/z r/h-x/a r/h/f r/h-x/zz'
[ "$(grep -E '^r/(c|c-x|h|h-x)/' fixed.order | tr '\n' ' ')" = "$want_order " ] ||
	{ cat fixed.order >&2; die "fixed order: not the member order this test needs"; }
extract fixed.tar "the fixed order"
all_same

# Every order, bounds of 1, 2, 3 and 5 files (a batch per k files) and the default.
for order in name none inode physical; do
	for k in 1 2 3 5 0; do
		limit=$([ $k = 0 ] && echo 64M || echo $((one * k + 1)))
		"$T" -c --order=$order --memory-limit=$limit -f "o.$order.$k.tar" r ||
			die "--order=$order --memory-limit=$limit"
		extract "o.$order.$k.tar" "--order=$order --memory-limit=$limit"
	done
done
for order in name inode; do
	for k in 1 2 0; do
		limit=$([ $k = 0 ] && echo 64M || echo $((one * k + 1)))
		SWEEP_BACKEND=syscall "$T" -c --order=$order --memory-limit=$limit -f "s.$order.$k.tar" r ||
			die "syscall --order=$order --memory-limit=$limit"
		extract "s.$order.$k.tar" "SWEEP_BACKEND=syscall --order=$order --memory-limit=$limit"
	done
done
all_same
ok "placeholder directories restored in every order"
finish
