#!/bin/bash
# SPDX-License-Identifier: MIT
# fpsync's tar mode (issue 31) drives sweep-tar: each job runs
# "TOOL cf - -C SRC --no-recursion --null -T PART | TOOL xpf - -C DST".
# With two workers the destination holds the source's files, modes and
# times; the reading side drains the pipe after the archive's end, so the
# writing side never says "Broken pipe" (GNU tar does the same).
# Hard links split between two jobs, and the mtime of a directory whose
# entries arrive in a later job, differ with GNU tar as well: left out.
. "$TESTS_DIR/tar/lib.sh"
require_cmd fpsync fpart
cd "$WORK" || die "cd"

mkdir -p src dst tmp
python3 - <<'PY'
import os, random
r = random.Random(7)
for d in range(4):
    os.makedirs("src/d%d/sub" % d)
    for i in range(30):
        with open("src/d%d/%sf%d" % (d, "sub/" if i % 3 == 0 else "", i), "wb") as f:
            f.write(os.urandom(r.choice([0, 100, 5000, 70000])))
os.symlink("d0/f1", "src/link")
PY
chmod 750 src/d1 && chmod 600 src/d2/f4
rc=0; fpsync -m tar -T "$T" -n 2 -f 40 -t "$WORK/tmp" "$WORK/src/" "$WORK/dst/" > fpsync.out 2>&1 || rc=$?
[ $rc = 0 ] || { cat fpsync.out >&2; die "fpsync -m tar with sweep-tar: exit $rc"; }
! cat tmp/log/*/*.stderr | grep -q "^sweep-tar:" || { cat tmp/log/*/*.stderr >&2; fail "a job's sweep-tar said something"; }
# files, symlinks, their modes and times; directories' modes (their mtimes vary by job order, with GNU tar too)
MANIFEST_NO_MAP=1 manifest src | grep -v ' dir ' > want
MANIFEST_NO_MAP=1 manifest dst | grep -v ' dir ' > have
diff want have >&2 && ok "fpsync -m tar: every file as in the source" || fail "fpsync -m tar: the copy differs"
[ "$(stat -c %a dst/d1)" = 750 ] || fail "fpsync -m tar: a directory's mode not kept"
# the pipe itself: nothing said on either side
"$T" cf - -C src d0 2> w.err | (mkdir x && "$T" xpf - -C x) 2> r.err
[ ! -s w.err ] && [ ! -s r.err ] && [ -f x/d0/f1 ] || { cat w.err r.err >&2; fail "cf - | xpf -: $(cat w.err r.err)"; }
finish
