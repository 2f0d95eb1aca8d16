#!/bin/bash
# SPDX-License-Identifier: MIT
# A mixed tree (odd names: newlines, invalid UTF-8, spaces, leading dashes,
# 255-byte names; symlinks, hard links, FIFOs, empty directories): every
# order finds exactly what find(1) finds, each entry once; order none is
# find's own sequence, order name is the bytewise depth-first sequence.
. "$TESTS_DIR/walk/lib.sh"
walk_setup "$1"

r=$T/tree
mkdir -p "$r"
python3 - "$r" <<'PY'
import os, sys, random
root = sys.argv[1].encode()
random.seed(7)
odd = [b"new\nline", b"bad\xff\xfeutf8", b"space name", b"-dash", b"x" * 255, b"tab\tname",
       b"back\\slash", b"quote'\"", b"\xe2\x82\xac-euro", b"star*?[a]"]
dirs = [root]
for i in range(120):
    parent = random.choice(dirs)
    name = random.choice(odd) + b"-d%d" % i if i % 7 == 0 else b"d%d" % i
    if len(name) > 255: name = name[:250] + b"%d" % i
    p = os.path.join(parent, name)
    os.mkdir(p)
    dirs.append(p)
for i in range(800):
    parent = random.choice(dirs)
    name = (random.choice(odd) + b"-f%d" % i)[-255:] if i % 5 == 0 else b"f%d" % i
    p = os.path.join(parent, name)
    with open(p, "wb") as f:
        f.write(b"x" * (i % 300))
for i in range(40):
    parent = random.choice(dirs)
    os.symlink(random.choice([b"..", b"f1", b"/nonexistent", random.choice(dirs)]), os.path.join(parent, b"l%d" % i))
for i in range(10):
    os.mkfifo(os.path.join(random.choice(dirs), b"fifo%d" % i))
# a second name of a file somewhere in the tree, at the top
for dirpath, _, files in os.walk(root):
    if files:
        os.link(os.path.join(dirpath, files[0]), os.path.join(root, b"hardlink"))
        break
PY
[ $? = 0 ] || die "the tree generator failed"
[ "$(stat -c %h "$r/hardlink")" = 2 ] || die "the tree has no hard link"

find "$r" -print0 >"$T/find"
[ "$(tr -cd '\0' <"$T/find" | wc -c)" -gt 900 ] || die "tree too small"

for order in inode physical auto none name; do
	for opt in "" --no-stat; do
		"$W" -0 --order=$order $opt "$r" >"$T/walk" 2>"$T/err" || { cat "$T/err" >&2; die "walk-list --order=$order $opt failed"; }
		walk_check_backend "$T/err"
		case $order in inode|physical|auto) walk_check_ahead "$T/err" ;; esac
		same_set "$T/find" "$T/walk" || die "--order=$order $opt: not the set find gives"
	done
done

# Order none is a plain readdir walk: exactly find's sequence (no directory here is big enough for find to sort).
"$W" -0 --order=none "$r" >"$T/walk-none" 2>/dev/null
same_seq "$T/find" "$T/walk-none" || die "order none is not readdir order"

# Order name: depth-first, entries of each directory sorted bytewise (GNU tar --sort=name).
python3 - "$r" >"$T/expect-name" <<'PY'
import os, sys
def walk(p):
    sys.stdout.buffer.write(p + b"\0")
    if os.path.isdir(p) and not os.path.islink(p):
        for n in sorted(os.listdir(p)):
            walk(os.path.join(p, n))
walk(sys.argv[1].encode())
PY
"$W" -0 --order=name "$r" >"$T/walk-name" 2>/dev/null
same_seq "$T/expect-name" "$T/walk-name" || die "order name is not bytewise depth-first"

# Roots as given: a trailing slash gives no double slash, as find prints it.
find "$r/" -print0 >"$T/find-slash"
"$W" -0 "$r/" >"$T/walk-slash" 2>/dev/null
same_set "$T/find-slash" "$T/walk-slash" || die "root with trailing slash"

# Several roots, one of them missing: the others are walked, the error reported, exit 1.
"$W" -0 "$r/d1" "$T/missing" "$r/f1" >"$T/walk-multi" 2>"$T/err-multi"
rc=$?
[ $rc = 1 ] || die "missing root: exit $rc, want 1"
grep -q "missing: root: No such file or directory" "$T/err-multi" || die "missing root not reported"
find "$r/d1" "$r/f1" -print0 >"$T/find-multi" 2>/dev/null
same_set "$T/find-multi" "$T/walk-multi" || die "several roots"

# SKIP from the callback prunes a directory (find -prune); a negative return stops the walk.
victim=$(cd "$r" && ls -d d* | head -1)
find "$r" -name "$victim" -prune -print0 -o -print0 >"$T/find-prune"
"$W" -0 --skip="$victim" "$r" >"$T/walk-prune" 2>/dev/null
same_set "$T/find-prune" "$T/walk-prune" || die "SKIP did not prune like find -prune"
"$W" -0 --stop-after=10 "$r" >"$T/walk-stop" 2>/dev/null
rc=$?
[ $rc = 3 ] || die "stopped walk: exit $rc, want 3 (ECANCELED passed back)"
[ "$(tr -cd '\0' <"$T/walk-stop" | wc -c)" = 10 ] || die "walk went on after the callback stopped it"

# The order depends on the tree (and the read-ahead window), never on timing: two runs, one sequence.
"$W" -0 --order=inode "$r" >"$T/walk-again1" 2>/dev/null
"$W" -0 --order=inode "$r" >"$T/walk-again2" 2>/dev/null
same_seq "$T/walk-again1" "$T/walk-again2" || die "two C-SCAN walks of one tree differ in order"

# Tiny stat batches give the same result.
"$W" -0 --batch=1 "$r" >"$T/walk-b1" 2>/dev/null
same_set "$T/find" "$T/walk-b1" || die "--batch=1"
ok "$(tr -cd '\0' <"$T/find" | wc -c) entries"
finish
