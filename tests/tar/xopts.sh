#!/bin/bash
# SPDX-License-Identifier: MIT
# sweep-tar's everyday extraction options and -C lines in -T files, each
# against GNU tar doing the same:
#   - -C DIR (and -CDIR, --directory=DIR) lines in a -T file change
#     directory for the names after them; another option there is GNU tar's
#     "FILE:LINE: unrecognized option" and exit 2; --null and
#     --verbatim-files-from make such lines names;
#   - --strip-components=1 and 2 extract the tree GNU tar extracts (hard
#     links to stripped names included), and a stripped name that climbs
#     ("top/../../x" -> "../x") is refused with nothing written outside -C;
#   - -O writes the same bytes as GNU tar -O (sparse members with their
#     holes as zeros), -v then lists on stderr, nothing lands on disk;
#   - -k keeps a file that exists (error, exit 2), --skip-old-files keeps it
#     silently (exit 0), the default replaces it; a symlink standing where a
#     member goes is replaced, never written through.
. "$TESTS_DIR/tar/lib.sh"
cd "$WORK" || die "cd $WORK"

python3 "$HERE/mktree.py" "$WORK/src" || die "cannot build the tree"
"$T" -c -f sweep.tar -C src tree || die "cannot archive the tree"

# --- -C lines in -T files ---
mkdir -p s/sub s/sub/deeper && echo r > s/README && echo m > s/sub/main.c && echo d > s/sub/deeper/x
members() { tar -tf "$1" | sort; }
printf 'README\n-C sub\nmain.c\n-Cdeeper\nx\n--directory=..\nmain.c\n' > l1
(cd s && "$T" -c -f ../t1.tar -T ../l1) || die "-T with -C lines: exit $?"
(cd s && tar -c -f ../g1.tar -T ../l1) || die "GNU tar refused the same list"
diff <(members g1.tar) <(members t1.tar) > d || { cat d >&2; die "-C lines in -T: member sets differ from GNU tar's"; }
# the -C of a -T file stays in force after it, as in GNU tar
printf -- '-C sub\n' > l2
(cd s && "$T" -c -f ../t2.tar -T ../l2 main.c && tar -c -f ../g2.tar -T ../l2 main.c) || die "-C at the end of -T"
diff <(members g2.tar) <(members t2.tar) > d || { cat d >&2; die "-C from a -T file does not stay in force"; }
# another option in a -T file: GNU tar's message and status, the rest archived
printf 'README\n-v\nsub/main.c\n' > l3
(cd s && "$T" -c -f ../t3.tar -T ../l3) 2> t3.err
rc=$?
(cd s && tar -c -f ../g3.tar -T ../l3) 2> g3.err
[ $rc = 2 ] || die "an unknown option in -T: exit $rc, want GNU tar's 2"
grep -q "^sweep-tar: ../l3:2: unrecognized option$" t3.err || { cat t3.err >&2; die "unknown option in -T: not GNU tar's message"; }
grep -q "^tar: ../l3:2: unrecognized option$" g3.err || { cat g3.err >&2; die "GNU tar's message changed: $(cat g3.err)"; }
diff <(members g3.tar) <(members t3.tar) > d || { cat d >&2; die "-T with a bad line: member sets differ"; }
# names that start with '-': --verbatim-files-from and --null take them as names
echo dash > s/-v
(cd s && "$T" -c -f ../t4.tar --verbatim-files-from -T ../l3) || die "--verbatim-files-from: exit $?"
[ "$(members t4.tar)" = "$(printf -- '-v\nREADME\nsub/main.c')" ] || { members t4.tar >&2; die "--verbatim-files-from: '-v' not taken as a name"; }
printf 'README\0-v\0' > l5
(cd s && "$T" -c -f ../t5.tar --null -T ../l5) || die "--null with a '-' name: exit $?"
[ "$(members t5.tar)" = "$(printf -- '-v\nREADME')" ] || { members t5.tar >&2; die "--null: '-v' not taken as a name"; }
ok "-C lines in -T files as GNU tar"

# --- --strip-components ---
for n in 1 2; do
	gnu_x sweep.tar g.s$n --strip-components=$n
	mkdir t.s$n
	"$T" -x -f sweep.tar -C t.s$n --strip-components=$n 2> t.s$n.err || { cat t.s$n.err >&2; die "--strip-components=$n: exit $?"; }
	[ -n "$(ls -A t.s$n)" ] || die "--strip-components=$n extracted nothing"
	# -C itself is no member once the top is stripped: its own times are the run's
	manifest g.s$n > want.s$n && same_tree want.s$n t.s$n '^[.] dir '
done
"$T" -x -f sweep.tar --strip-components=x 2> bad.err && die "--strip-components=x accepted"
grep -q "Invalid number of elements" bad.err || { cat bad.err >&2; die "--strip-components=x: no clear error"; }
# a name that climbs once stripped is refused; nothing lands outside -C
mkdir -p evil/top victim ex && echo safe > victim/keep && echo bad > evil/top/payload
python3 - "$WORK" <<'PY' || die "cannot craft the archive"
import sys, tarfile
w = sys.argv[1]
with tarfile.open(f"{w}/climb.tar", "w", format=tarfile.PAX_FORMAT) as t:
    for name in ("a/../../victim/keep", "a/../victim/new", "b/ok"):
        t.add(f"{w}/evil/top/payload", arcname=name)
PY
"$T" -x -f climb.tar -C ex --strip-components=1 2> climb.err
rc=$?
[ $rc = 2 ] || { cat climb.err >&2; die "a climbing stripped name: exit $rc, want 2"; }
[ "$(cat victim/keep)" = safe ] && [ ! -e victim/new ] && [ ! -e new ] || die "a stripped name wrote outside -C"
[ "$(cat ex/ok)" = bad ] || die "the member that stays inside was not extracted"
ok "--strip-components as GNU tar, climbing names refused"

# --- -O ---
# GNU tar's through a pipe: to a regular file it seeks over the holes of
# sparse members and overwrites what came before (GNU tar 1.34)
tar -x -O -f sweep.tar 2>/dev/null | cat > g.out
mkdir o && (cd o && "$T" -x -O -f ../sweep.tar > ../t.out) || die "-O: exit $?"
cmp g.out t.out || die "-O: not GNU tar's bytes"
[ -z "$(ls -A o)" ] || die "-O wrote to disk: $(ls -A o)"
[ "$(stat -c %s t.out)" -gt 1000000 ] || die "-O: the sparse member's holes are missing"
member=tree/sizes/f65537
"$T" -x -v -O -f sweep.tar "$member" > t1.out 2> t1.err || die "-xvO MEMBER: exit $?"
tar -x -O -f sweep.tar "$member" 2>/dev/null | cat > g1.out
cmp g1.out t1.out || die "-O MEMBER: not GNU tar's bytes"
[ "$(cat t1.err)" = "$member" ] || { cat t1.err >&2; die "-xvO: the listing is not on stderr alone"; }
ok "-O as GNU tar"

# --- existing files: -k, --skip-old-files, the default ---
mkdir k && echo one > k/f && echo two > k/g && tar -c -f kg.tar -C k f g
prep() { rm -rf kx && mkdir kx && echo mine > kx/f && ln -s ../victim/keep kx/g; }
prep
"$T" -x -k -f kg.tar -C kx 2> k.err
rc=$?
[ $rc = 2 ] || die "-k over an existing file: exit $rc, want 2"
grep -q "^sweep-tar: f: Cannot open: File exists$" k.err || { cat k.err >&2; die "-k: not GNU tar's message"; }
[ "$(cat kx/f)" = mine ] && [ -L kx/g ] || die "-k replaced an existing file"
prep
"$T" -x --skip-old-files -f kg.tar -C kx 2> s.err || die "--skip-old-files: exit $?"
[ ! -s s.err ] || { cat s.err >&2; die "--skip-old-files said something"; }
[ "$(cat kx/f)" = mine ] && [ -L kx/g ] || die "--skip-old-files replaced an existing file"
prep
"$T" -x -f kg.tar -C kx || die "extracting over existing files: exit $?"
[ "$(cat kx/f)" = one ] && [ ! -L kx/g ] && [ "$(cat kx/g)" = two ] || die "the default did not replace existing files"
[ "$(cat victim/keep)" = safe ] || die "a member was written through a symlink"
# -k looks at a name without following a symlink on the way: a member
# through one is refused as such, not taken for a file that exists outside
mkdir kl && ln -s ../victim kl/v && tar -c -f kv.tar -C k f --transform 's,^f$,v/keep,'
"$T" -x -k -f kv.tar -C kl 2> kv.err
rc=$?
[ $rc = 2 ] || die "-k, a member through a symlink: exit $rc, want 2"
grep -q "symlink" kv.err && ! grep -q "File exists" kv.err ||
	{ cat kv.err >&2; die "-k looked through a symlink on the way"; }
[ "$(cat victim/keep)" = safe ] || die "-k wrote through a symlink"
ok "-k, --skip-old-files, replace by default; nothing written through a symlink"
finish
