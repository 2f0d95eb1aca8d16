#!/bin/bash
# SPDX-License-Identifier: MIT
# The everyday GNU tar options of issue 28, each against GNU tar doing the
# same: --exclude on -t and -x, --exclude-vcs, --exclude-caches[-under|-all],
# --exclude-tag[-under|-all], -I/--use-compress-program, -h,
# --hard-dereference, --format=gnu|ustar|v7|pax, reproducible archives
# (--sort=name, --mtime, --owner, --group, --numeric-owner, no atime or
# ctime in the headers), -T lines naming another -T list, options after the
# operands (GNU tar's "has no effect" and exit 2), TAR_OPTIONS.
. "$TESTS_DIR/tar/lib.sh"
cd "$WORK" || die "cd"

members() { tar -tf "$1" | sort; }
# same_as_gnu WHAT ARGS...: sweep-tar -c and GNU tar -c with ARGS hold the same members
same_as_gnu() {
	local what=$1
	shift
	rm -f s.tar g.tar
	"$T" -c -f s.tar "$@" 2> s.err || { cat s.err >&2; fail "$what: sweep-tar exit $?"; return; }
	tar -c -f g.tar "$@" 2> g.err || { cat g.err >&2; fail "$what: GNU tar exit $?"; return; }
	diff <(members g.tar) <(members s.tar) >&2 || fail "$what: members differ from GNU tar's"
}

mkdir -p src/a/.git src/a/CVS src/cache src/fakecache src/tagged/sub src/under/sub src/all/sub
echo 1 > src/a/f && echo g > src/a/.git/HEAD && echo c > src/a/CVS/Root && echo o > src/a/x.o && echo i > src/a/.gitignore
printf 'Signature: 8a477f597d28d172789f06886806bc55\nrest\n' > src/cache/CACHEDIR.TAG && echo c > src/cache/data
printf 'not a signature\n' > src/fakecache/CACHEDIR.TAG && echo c > src/fakecache/data
for d in tagged under all; do touch src/$d/TAG && echo s > src/$d/sub/s && echo t > src/$d/t; done
ln src/a/f src/a/hard
ln -s a src/link

case_begin "--exclude-vcs, --exclude-caches*, --exclude-tag* as GNU tar"
same_as_gnu --exclude-vcs --exclude-vcs src
same_as_gnu --exclude-caches --exclude-caches src
same_as_gnu --exclude-caches-under --exclude-caches-under src
same_as_gnu --exclude-caches-all --exclude-caches-all src
same_as_gnu --exclude-tag --exclude-tag=TAG src
same_as_gnu --exclude-tag-under --exclude-tag-under=TAG src
same_as_gnu --exclude-tag-all --exclude-tag-all=TAG src
# -v: GNU tar's note for each tagged directory
"$T" -cv -f s.tar --exclude-tag=TAG src > /dev/null 2> s.err
tar -cv -f g.tar --exclude-tag=TAG src > /dev/null 2> g.err
diff <(sed 's/^tar: //' g.err | sort) <(sed 's/^sweep-tar: //' s.err | sort) >&2 || fail "--exclude-tag -v: notes differ"
case_end

case_begin "--exclude on -t and -x as GNU tar"
tar -cf all.tar src
diff <(tar -tf all.tar --exclude='*.o' --exclude=.git | sort) <("$T" -tf all.tar --exclude='*.o' --exclude=.git | sort) >&2 ||
	fail "-t --exclude: listings differ"
mkdir gx tx
tar -xf all.tar -C gx --exclude=a --exclude='*/sub'
"$T" -xf all.tar -C tx --exclude=a --exclude='*/sub' || fail "-x --exclude: exit $?"
diff <(cd gx && find . | sort) <(cd tx && find . | sort) >&2 || fail "-x --exclude: trees differ"
case_end

case_begin "-I/--use-compress-program"
"$T" -c -I gzip -f i.tgz src || fail "-c -I gzip: exit $?"
gzip -t i.tgz || fail "-I gzip did not write gzip"
mkdir ix && "$T" -x --use-compress-program=gzip -f i.tgz -C ix && [ -f ix/src/a/f ] || fail "-x -I gzip"
case_end

case_begin "-h, --hard-dereference"
"$T" -chf h.tar src/link || fail "-h: exit $?"
tar -tvf h.tar | grep -q '^d.* src/link/$' || fail "-h: src/link not stored as the directory it points to"
tar -tf h.tar | grep -qx src/link/f || fail "-h: the directory's files are missing"
"$T" -c --hard-dereference -f hd.tar src/a && tar -c --hard-dereference -f ghd.tar src/a
[ "$(tar -tvf hd.tar | grep -c '^h')" = 0 ] && [ "$(tar -tvf ghd.tar | grep -c '^h')" = 0 ] ||
	fail "--hard-dereference: hard link members stored"
cmp <(tar -xOf hd.tar src/a/hard) src/a/f || fail "--hard-dereference: the second name lacks its data"
case_end

case_begin "--format=gnu|ustar|v7|pax"
magic() { od -An -c -j257 -N8 "$1" | tr -d ' '; }
for f in gnu ustar v7 pax posix; do
	"$T" -c --format=$f -f f.$f.tar src/a/f src/a/x.o || fail "--format=$f: exit $?"
	tar -c --format=$f -f g.$f.tar src/a/f src/a/x.o
	[ "$(magic f.$f.tar)" = "$(magic g.$f.tar)" ] || fail "--format=$f: header magic $(magic f.$f.tar), GNU tar's $(magic g.$f.tar)"
	diff <(members g.$f.tar) <(members f.$f.tar) >&2 || fail "--format=$f: members differ"
done
rc=0; "$T" -c --format=cpio -f x.tar src 2> fmt.err || rc=$?
[ $rc = 2 ] && grep -q "Invalid archive format" fmt.err || fail "--format=cpio: exit $rc, $(cat fmt.err)"
case_end

case_begin "reproducible archives"
repro() { "$T" -c --sort=name --mtime='2020-01-02 03:04:05 UTC' --owner=0 --group=0 --numeric-owner -f "$1" src; }
repro r1.tar || fail "reproducible options: exit $?"
sleep 1.1 && cat src/a/f > /dev/null && chmod 644 src/a/f && touch -a src/a/x.o # atime and ctime move
repro r2.tar
cmp -s r1.tar r2.tar || fail "two runs over the same tree differ"
! grep -aq -e 'atime=' -e 'ctime=' r1.tar || fail "atime or ctime in the pax headers"
[ "$(tar -tvf r1.tar --full-time | awk '{print $2, $4, $5}' | sort -u)" = "0/0 2020-01-02 03:04:05" ] ||
	fail "--mtime/--owner/--group: $(tar -tvf r1.tar --full-time | head -3)"
"$T" -c --owner=user:4242 --group=grp:4343 -f og.tar src/a/f && tar -c --owner=user:4242 --group=grp:4343 -f gog.tar src/a/f
[ "$(tar -tvf og.tar | awk '{print $2}')" = "$(tar -tvf gog.tar | awk '{print $2}')" ] || fail "--owner=NAME:ID: not GNU tar's"
tar -tvf og.tar --numeric-owner | grep -q ' 4242/4343 ' || fail "--owner=NAME:ID: ids not stored"
rc=0; "$T" -c --mtime='next blue moon' -f m.tar src 2> m.err || rc=$?
[ $rc = 2 ] && grep -q "Invalid date format" m.err || fail "a date sweep-tar cannot read is accepted: exit $rc"
case_end

case_begin "-T lines naming another -T list, as GNU tar"
printf "src/a/f\n" > inner && printf "src/a/x.o\n" > inner2 && printf -- "-T inner\nsrc/cache/data\n--files-from=inner2\n" > outer
same_as_gnu "nested -T" -T outer
case_end

case_begin "options after the operands: GNU tar's messages and exit status"
rc=0; "$T" -c -f late.tar src/a --exclude=x.o -C src 2> late.err || rc=$?
grc=0; tar -c -f glate.tar src/a --exclude=x.o -C src 2> glate.err || grc=$?
[ $rc = 2 ] && [ $grc = 2 ] || fail "options after operands: exit $rc (GNU tar $grc), want 2"
diff <(sed 's/^tar: //' glate.err) <(sed 's/^sweep-tar: //' late.err) >&2 || fail "options after operands: messages differ"
diff <(members glate.tar) <(members late.tar) >&2 || fail "options after operands: members differ"
case_end

case_begin "TAR_OPTIONS"
TAR_OPTIONS="--format=ustar --exclude='*.o'" "$T" cf env.tar src/a || fail "TAR_OPTIONS: exit $?"
[ "$(magic env.tar)" = "ustar\\000" ] || fail "TAR_OPTIONS --format=ustar not applied: $(magic env.tar)"
! tar -tf env.tar | grep -q 'x\.o$' || fail "TAR_OPTIONS --exclude not applied"
case_end

finish
