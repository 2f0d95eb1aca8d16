#!/bin/bash
# SPDX-License-Identifier: MIT
# sweep-tar as everyday tar: -T/--null/--no-recursion, -t and -x.
#   - the member set of -T pipelines equals GNU tar's for the same list;
#   - -t and -tv print what GNU tar -t and -tv print, line for line, for
#     archives made by GNU tar (pax and its default format), bsdtar (pax and
#     its default) and sweep-tar;
#   - -x of each restores the tree: pax archives exactly as the source
#     (manifest.py: stat fields, contents, data map, xattrs, ACLs, hard-link
#     groups), the default formats as GNU tar or bsdtar itself extracts them;
#   - path-traversal archives ("../x", "a/../../x", a symlink then a member
#     through it, a hard link to "../x") are refused member by member with an
#     error and exit status 2, and nothing is written outside -C;
#   - an absolute name ("/abs", GNU tar -P's archives) is extracted below -C
#     without its leading '/', as GNU tar and bsdtar extract it, said once in
#     GNU tar's words; the same tree as GNU tar's.
. "$TESTS_DIR/tar/lib.sh"
cd "$WORK" || die "cd $WORK"

python3 "$HERE/mktree.py" "$WORK/src" || die "cannot build the tree"
manifest src/tree > want

# --- -T, --null, --no-recursion against GNU tar ---
members() { tar -tf "$1" | sort -u; } # sweep-tar may store a directory twice (sweep-tar(1) NOTES)
(cd src && find tree -print0) > list0
"$T" -c -f t-null.tar -C src --null --no-recursion -T "$WORK/list0" || die "-T --null --no-recursion"
(cd src && tar -c -f "$WORK/g-null.tar" --null --no-recursion -T "$WORK/list0") 2>/dev/null
diff <(members g-null.tar) <(members t-null.tar) > d || { head d >&2; die "--null --no-recursion -T: member sets differ"; }
# stdin, newline-separated, recursing into the directories named
printf 'tree/hard\ntree/links\n\ntree/empty\ntree/modes\n' > list
(cd src && "$T" -c -f "$WORK/t-nl.tar" -T - < "$WORK/list") || die "-T - (newlines)"
(cd src && tar -c -f "$WORK/g-nl.tar" -T - < "$WORK/list") 2>/dev/null
diff <(members g-nl.tar) <(members t-nl.tar) > d || { head d >&2; die "-T -: member sets differ"; }
[ "$(members t-nl.tar | wc -l)" -gt 3 ] || die "-T -: the directories were not recursed into"
# --no-recursion on the command line: the directory alone
"$T" -c -f t-nr.tar -C src --no-recursion tree/hard || die "--no-recursion"
[ "$(members t-nr.tar)" = "tree/hard/" ] || { members t-nr.tar >&2; die "--no-recursion stored more than tree/hard/"; }
ok "-T, --null, --no-recursion"

# --- the archives: GNU tar, bsdtar, sweep-tar ---
tar -c -f gnu-pax.tar --format=pax --xattrs --xattrs-include='*' --acls -C src tree 2>/dev/null
tar -c -f gnu-def.tar -C src tree 2>/dev/null
LC_ALL=C.UTF-8 bsdtar -c -f bsd-pax.tar --format pax -C src tree 2>/dev/null
LC_ALL=C.UTF-8 bsdtar -c -f bsd-def.tar -C src tree 2>/dev/null
"$T" -c -f sweep.tar -C src tree || die "sweep-tar -c"
acl_modes() { awk '$6 ~ /^tree\/attrs\/(acl|defacl)/ { $1 = substr($1, 1, 4) "???" substr($1, 8) } { print }' "$1"; }
for a in gnu-pax gnu-def bsd-pax bsd-def sweep; do
	[ -s $a.tar ] || die "$a.tar was not made"
	tar -tf $a.tar > $a.gt 2>/dev/null
	"$T" -tf $a.tar > $a.st || die "-t $a.tar: exit $?"
	diff $a.gt $a.st > d || { head d >&2; die "-t $a.tar differs from GNU tar -t"; }
	tar -tvf $a.tar > $a.gtv 2>/dev/null
	"$T" -tvf $a.tar > $a.stv || die "-tv $a.tar: exit $?"
	# Members with an ACL: libarchive shows the ACL's group entry in the group bits (sweep-tar(1) BUGS).
	diff <(acl_modes $a.gtv) <(acl_modes $a.stv) > d || { head d >&2; die "-tv $a.tar differs from GNU tar -tv"; }
	# one stream: from a pipe, compressed
	gzip -c $a.tar | "$T" -tz > $a.pipe || die "-t from a pipe"
	cmp -s $a.st $a.pipe || die "-t $a.tar from a gzip pipe differs"
done
# members named on the command line: one, and one that is not there
"$T" -tf sweep.tar tree/hard > sub.st
tar -tf sweep.tar tree/hard > sub.gt
cmp -s sub.gt sub.st || die "-t MEMBER lists differently from GNU tar"
rc=0; "$T" -tf sweep.tar tree/no-such 2> nf.err || rc=$?
[ $rc = 2 ] && grep -q "tree/no-such: Not found in archive" nf.err || die "-t of a missing member: exit $rc, $(cat nf.err)"
ok "-t and -tv as GNU tar"

# --- -x ---
# sweep-tar's own archives and bsdtar's pax ones carry everything: the source exactly
# (but for the pre-1970 time with a fraction that bsdtar 3.6 writes one second off, sweep-tar(1) BUGS)
for a in sweep bsd-pax; do
	mkdir x.$a
	"$T" -x -f $a.tar -C x.$a 2> x.$a.err || { cat x.$a.err >&2; die "-x $a.tar: exit $?"; }
	same_tree want x.$a/tree "$([ $a = bsd-pax ] && echo pre1970ns)"
done
# GNU tar's keep less (no sparse map without -S, seconds only in its default
# format, a FIFO's other names as FIFOs): the tree GNU tar itself extracts
for a in gnu-pax gnu-def; do
	gnu_x $a.tar ref.$a
	mkdir x.$a && "$T" -x -f $a.tar -C x.$a 2> x.$a.err || { cat x.$a.err >&2; die "-x $a.tar: exit $?"; }
	manifest ref.$a/tree > want.$a && same_tree want.$a x.$a/tree
done
# bsdtar's default (restricted pax): as bsdtar extracts it
bsd_x bsd-def.tar ref.bsd-def
mkdir x.bsd-def && "$T" -x -f bsd-def.tar -C x.bsd-def 2>/dev/null || die "-x bsd-def.tar"
manifest ref.bsd-def/tree > want.bsd-def && same_tree want.bsd-def x.bsd-def/tree pre1970
# from a pipe, compressed: sparse files stay sparse
mkdir x.pipe && gzip -c sweep.tar | "$T" -xz -C x.pipe || die "-x from a pipe"
same_tree want x.pipe/tree
ok "-x restores archives of GNU tar, bsdtar and sweep-tar"

# --- path traversal ---
mkdir -p victim ex
printf 'precious\n' > victim/file
python3 - "$WORK" <<'PY'
import io, sys, tarfile
work = sys.argv[1]
def add(t, name, data=b"evil\n"):
    i = tarfile.TarInfo(name); i.size = len(data); t.addfile(i, io.BytesIO(data))
def link(t, name, target, kind):
    i = tarfile.TarInfo(name); i.type = kind; i.linkname = target; t.addfile(i)
with tarfile.open(work + "/evil.tar", "w", format=tarfile.PAX_FORMAT) as t:
    add(t, "ok1")
    add(t, "../up")
    add(t, "a/../../up2")
    add(t, work + "/abs")
    link(t, "l", work + "/victim", tarfile.SYMTYPE)
    add(t, "l/pwned")
    link(t, "rel", "../victim", tarfile.SYMTYPE)
    add(t, "rel/file")
    link(t, "hl", "../victim/file", tarfile.LNKTYPE)
    add(t, "ok2")
PY
: > evil.err
before=$(cd "$WORK" && find . -path ./ex -prune -o -print | sort; cat victim/file)
rc=0; "$T" -x -f evil.tar -C ex 2> evil.err || rc=$?
[ $rc = 2 ] || { cat evil.err >&2; die "traversal archive: exit $rc, not 2"; }
for m in ../up a/../../up2 l/pwned rel/file hl; do
	grep -qF "sweep-tar: $m: " evil.err || { cat evil.err >&2; die "traversal archive: no error for $m"; }
done
[ "$(cd "$WORK" && find . -path ./ex -prune -o -print | sort; cat victim/file)" = "$before" ] ||
	die "traversal archive: something was written outside -C"
[ -f ex/ok1 ] && [ -f ex/ok2 ] || die "traversal archive: the harmless members were not extracted"
[ ! -e "$WORK/../up" ] && [ ! -e "$WORK/abs" ] || die "traversal archive: a member escaped"
[ -f "ex/${WORK#/}/abs" ] && ! grep -qF "$WORK/abs:" evil.err &&
	[ "$(grep -c "Removing leading \`/' from member names" evil.err)" = 1 ] ||
	{ cat evil.err >&2; die "traversal archive: the absolute name was not extracted below -C, said once"; }
# GNU tar -P writes such names too: "..", refused; absolute, below -C, as GNU tar extracts them
(cd src && tar -c -P -f "$WORK/gnu-up.tar" ../src/tree/hard "$WORK/src/tree/empty" "$WORK/src/tree/empty") 2>/dev/null
mkdir ex2 gx2 && rc=0 && "$T" -x -f gnu-up.tar -C ex2 2> up.err || rc=$?
grc=0 && tar -x -f gnu-up.tar -C gx2 2> /dev/null || grc=$?
[ $rc = 2 ] && [ $grc = 2 ] && grep -q "Path contains '..'" up.err && ! grep -q "Path is absolute" up.err ||
	{ cat up.err >&2; die "GNU tar -P archive: exit $rc (GNU tar $grc)"; }
[ -n "$(ls -A ex2)" ] && diff <(cd gx2 && find . | sort) <(cd ex2 && find . | sort) >&2 ||
	die "GNU tar -P archive: not the tree GNU tar extracts"
# -t lists the names as stored; a hard link's absolute target loses its '/', as in GNU tar -tv
python3 - "$WORK/abslink.tar" <<'PY'
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    f = tarfile.TarInfo("/top/f"); f.size = 3; t.addfile(f, io.BytesIO(b"abc"))
    h = tarfile.TarInfo("//top/h"); h.type = tarfile.LNKTYPE; h.linkname = "/top/f"; t.addfile(h)
PY
for mode in -tvf -xf; do
	rm -rf sx gx && mkdir sx gx
	rc=0; (cd sx && "$T" $mode "$WORK/abslink.tar") > s.out 2> s.err || rc=$?
	grc=0; (cd gx && tar $mode "$WORK/abslink.tar") > g.out 2> g.err || grc=$?
	sed -i 's/^sweep-tar:/tar:/' s.err
	[ $rc = 0 ] && [ $grc = 0 ] && diff g.out s.out >&2 && diff g.err s.err >&2 ||
		die "absolute names, tar $mode: exit $rc (GNU tar $grc), output or messages differ"
done
[ "$(stat -c %h:%i sx/top/h)" = "$(stat -c %h:%i sx/top/f)" ] && [ "$(cat sx/top/h)" = abc ] ||
	die "absolute hard link target: not linked below -C"
ok "traversal archives refused, absolute names below -C, nothing outside -C"
finish
