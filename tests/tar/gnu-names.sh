#!/bin/bash
# SPDX-License-Identifier: MIT
# How names are chosen and changed, beside GNU tar doing the same (GNU tar
# 1.34's suite: xform-h, xform02, xform03, extrac17, onetop01-05,
# exclude0[1-7], opcomp01-02, T-recurse, checkpoint/*, remfiles*, link02,
# xattr06):
#   - --transform on -c (member names, hard link targets with h/H, symlink
#     targets), on -x and -t, with --show-transformed-names; -v lists the
#     names as given unless --show-transformed-names;
#   - --one-top-level[=DIR] on -x and -t, refused where it would leave -C;
#   - --wildcards, --anchored, --ignore-case and their --no- forms, where
#     they stand, for --exclude and for member names; --occurrence;
#     --exclude-backups; many --exclude-from names (hashed, as gnulib);
#   - --recursion, --no-recursion and --exclude lines inside -T lists;
#   - --checkpoint and --checkpoint-action (echo, dot, exec);
#   - --remove-files on -c and -r;
#   - --xattrs-include and --xattrs-exclude on -c and -x;
#   - GNU tar's usage hint, and --usage.
. "$TESTS_DIR/tar/lib.sh"
cd "$WORK" || die "cd"

members() { tar -tf "$1"; }
sorted() { sort "$@"; }
# both CMD...: "$T" CMD... in s/, tar CMD... in g/; outputs in s.out/g.out, s.err/g.err (prog name unified)
both() {
	(cd s && "$T" "$@") > s.out 2> s.err; src=$?
	(cd g && tar "$@") > g.out 2> g.err; grc=$?
	sed -i 's/^sweep-tar:/tar:/; s/sweep-tar --/tar --/g' s.err
}
fresh() { rm -rf s g && mkdir s && (cd s && "$@") && cp -a s g; }
tree() { (cd "$1" && find . | sort); }

case_begin "--transform on -c: names, hard link targets (h, H), symlink targets"
fresh sh -c 'mkdir basedir && echo hello > basedir/test && ln basedir/test basedir/test_link && ln -s test basedir/sym'
for flags in "" h H S; do
	both -cf x.tar --transform="s,^basedir/,,$flags" basedir/test basedir/test_link basedir/sym
	[ $src = 0 ] || fail "--transform ...$flags: exit $src"
	diff <(tar -tvf g/x.tar | awk '{$1=$2=$4=$5=""; print}' | sort) \
		<(tar -tvf s/x.tar | awk '{$1=$2=$4=$5=""; print}' | sort) >&2 || fail "--transform flags '$flags': members differ from GNU tar's"
done
both cvf /dev/null file --transform='s/file/other\/name/' --show-transformed-name
touch s/file g/file && both cvf /dev/null file --transform='s/file/other\/name/' --show-transformed-name
[ "$(cat s.out)" = "other/name" ] && diff g.out s.out >&2 || fail "an escaped delimiter: listed $(cat s.out)"
both cvf /dev/null file --transform='s/file/other/'
[ "$(cat s.out)" = file ] || fail "-cv lists the name as given without --show-transformed-names: $(cat s.out)"
both -cf x.tar --transform='s/\(.*\)/\U\1/;s/X/y/2' basedir/test
diff <(members g/x.tar) <(members s/x.tar) >&2 || fail "\\U and the Nth match: $(members s/x.tar)"
for bad in "s/a" "s/a/b/q" "s/\(a\)/\2/" "flags=z"; do
	both -cf /dev/null --transform="$bad" basedir
	[ $src = 2 ] && [ $grc = 2 ] && diff g.err s.err >&2 || fail "--transform='$bad': exit $src (GNU tar $grc)"
done
case_end

case_begin "--transform, --strip-components, --one-top-level on -x and -t"
fresh sh -c 'mkdir -p a dir/subdir1 dir/subdir2 && echo b > a/b && echo c > c && echo 1 > dir/subdir1/file1 && echo 2 > dir/subdir2/file2 && tar cf a.tar a c && tar cf dir.tar dir'
for opts in "--one-top-level" "--one-top-level --transform s/c/d/" "--one-top-level=top" "--transform s,^,x/,"; do
	rm -rf s/out g/out && mkdir s/out g/out
	# shellcheck disable=SC2086
	both -x -f a.tar -C out $opts
	[ $src = 0 ] && diff <(tree g/out) <(tree s/out) >&2 || fail "-x $opts: exit $src, trees differ"
	# shellcheck disable=SC2086
	both -t -f a.tar $opts --show-transformed
	diff <(sort g.out) <(sort s.out) >&2 || fail "-t $opts --show-transformed: listings differ"
done
rm -rf s/out g/out && mkdir s/out g/out
both -x -v -f dir.tar -C out --strip-components=2 dir/subdir1/
diff g.out s.out >&2 && diff <(tree g/out) <(tree s/out) >&2 || fail "--strip-components -v lists the stored name (extrac17)"
rc=0; (cd s && "$T" -x -f a.tar --one-top-level=../up) 2> up.err || rc=$?
[ $rc = 2 ] && [ ! -e up ] || fail "--one-top-level=../up: exit $rc"
both -x -f noname --one-top-level
[ $src = 2 ] && [ $grc = 2 ] && diff g.err s.err >&2 || fail "--one-top-level without a name to deduce: exit $src (GNU tar $grc)"
case_end

case_begin "matching options where they stand, --occurrence, --exclude-backups"
fresh sh -c 'mkdir -p testdir/dir && touch testdir/file1 testdir/file2 testdir/file3 testdir/file4 testdir/dir/File1 testdir/dir/File2 testdir/dir/File3 testdir/dir/File4 testdir/x~ "testdir/.#y" "testdir/#z#"'
both cf archive --exclude=FILE2 --exclude=file1 --ignore-case --exclude=file3 --no-ignore-case --exclude=FILE2 --exclude=file4 testdir
diff <(members g/archive | sort) <(members s/archive | sort) >&2 || fail "--ignore-case where it stands: members differ"
both cf archive --exclude-backups testdir
diff <(members g/archive | sort) <(members s/archive | sort) >&2 || fail "--exclude-backups: members differ"
both cf archive --no-wildcards --exclude='testdir/dir/File*' --wildcards --exclude='*3' --anchored --exclude=file4 --exclude=testdir/file2 testdir
diff <(members g/archive | sort) <(members s/archive | sort) >&2 || fail "--wildcards, --anchored where they stand: members differ"
tar -cf s/all.tar -C s testdir && cp s/all.tar g/
for sel in "--wildcards --wildcards-match-slash *File2" "--wildcards --no-wildcards-match-slash testdir/*/File2" \
	"--wildcards --ignore-case *FILE2" "--no-anchored file1" "testdir/dir"; do
	# shellcheck disable=SC2086
	both -tf all.tar $sel
	[ $src = $grc ] && diff <(sort g.out) <(sort s.out) >&2 || fail "-t $sel: exit $src (GNU tar $grc), listings differ"
done
# the same name twice: --occurrence picks one
(cd s && "$T" -rf all.tar testdir/file1) && cp s/all.tar g/all.tar
both -tvf all.tar --occurrence=2 testdir/file1
diff g.out s.out >&2 && [ "$(wc -l < s.out)" = 1 ] || fail "--occurrence=2: $(cat s.out)"
for bad in "--occurrence=1 -cf t.tar ." "--occurrence=1 -tf all.tar"; do
	# shellcheck disable=SC2086
	both $bad
	[ $src = 2 ] && [ $grc = 2 ] && diff g.err s.err >&2 || fail "$bad: exit $src (GNU tar $grc)"
done
# names no wildcard character makes a pattern: hashed, as gnulib keeps them
seq 12 20000 | sed 's,^,testdir/file,' > s/many && cp s/many g/many
for anchored in "" --anchored; do
	# shellcheck disable=SC2086
	both cf archive $anchored --exclude-from=many testdir
	diff <(members g/archive | sort) <(members s/archive | sort) >&2 || fail "--exclude-from with 20,000 names $anchored: members differ"
done
case_end

case_begin "--recursion, --no-recursion and --exclude lines in -T lists"
fresh sh -c 'mkdir directory1 directory2 && touch directory1/file directory2/file directory2/skip && printf -- "--no-recursion\ndirectory1/\n--recursion\n--exclude=skip\ndirectory2/\n" > F1'
both cf archive --files-from F1
diff <(members g/archive | sort) <(members s/archive | sort) >&2 || fail "-T with option lines: members differ"
printf -- '--no-such-option\n' > s/F2 && cp s/F2 g/F2
both cf archive -T F2
[ $src = 2 ] && [ $grc = 2 ] || fail "-T with an unknown option: exit $src (GNU tar $grc)"
case_end

case_begin "--checkpoint and --checkpoint-action as GNU tar"
fresh sh -c 'mkdir t && for i in 0 1 2 3 4 5 6 7 8 9; do head -c 10240 /dev/zero > t/$i; done'
for cp in "--checkpoint" "--checkpoint=2" "--checkpoint-action=dot" "--checkpoint=.2" "--checkpoint=3 --checkpoint-action=echo=%s:%u"; do
	# shellcheck disable=SC2086
	both -H gnu $cp -c -f ../a.tar -C t .
	[ $src = 0 ] && diff g.out s.out >&2 && diff g.err s.err >&2 || fail "$cp: output differs from GNU tar's"
done
both -H gnu --checkpoint=4 --checkpoint-action='exec=echo $TAR_CHECKPOINT $TAR_SUBCOMMAND' -c -f ../a.tar -C t .
diff g.out s.out >&2 || fail "--checkpoint-action=exec: $(cat s.out)"
both --checkpoint=5 -t -f ../a.tar
diff g.err s.err >&2 || fail "read checkpoints differ"
both --checkpoint-action=nosuch -cf ../a.tar t
[ $src = 2 ] && [ $grc = 2 ] && diff g.err s.err >&2 || fail "an unknown action: exit $src (GNU tar $grc)"
case_end

case_begin "--remove-files as GNU tar"
fresh sh -c 'mkdir -p a/b && ln -s b a/c && echo 1 > a/b/f && ln a/b/f a/h && echo 2 > a/g && mkdir foo && echo foobar > foo/bar && echo bar > bar && tar -cf foo.tar -C foo bar'
both --remove-files -cf a.tar a
[ $src = 0 ] && [ ! -e s/a ] && diff <(tree g) <(tree s) >&2 || fail "--remove-files: exit $src, trees differ"
[ "$(tar -tvf s/a.tar | grep -c ' link to ')" = 1 ] || fail "--remove-files: hard links not kept"
mkdir xx && tar -xf s/a.tar -C xx && [ "$(stat -c %h xx/a/h)" = 2 ] || fail "--remove-files: the hard link does not extract"
both -rf foo.tar --remove-files -C foo bar
[ $src = 0 ] && diff <(tree g) <(tree s) >&2 || fail "-r --remove-files -C: trees differ"
# remfiles08c, remfiles10: "-C DIR ." removes DIR itself; "." without -C cannot be removed (GNU tar's error)
mkdir -p s/p s/q && echo 1 > s/p/pf && echo 2 > s/q/qf && rm -rf g && cp -a s g
both -rf foo.tar --remove-files -C p . -C ../q .
[ $src = 0 ] && [ ! -e s/p ] && [ ! -e s/q ] && diff <(tree g) <(tree s) >&2 || fail "--remove-files -C p . -C ../q .: exit $src, trees differ"
mkdir -p s/r && echo 1 > s/r/f && rm -rf g && cp -a s g
rc=0; (cd s/r && "$T" -cf ../r.tar --remove-files .) 2> r.err || rc=$?
grc=0; (cd g/r && tar -cf ../r.tar --remove-files .) 2> gr.err || grc=$?
[ $rc = 2 ] && [ $grc = 2 ] && diff <(tree g) <(tree s) >&2 || fail "--remove-files . without -C: exit $rc (GNU tar $grc)"
# what cannot be archived stays; the archive cannot be written: nothing goes
mkdir -p s/k && echo k > s/k/f && rc=0 && (cd s && "$T" --remove-files -cf /nonexistent/x.tar k) 2>/dev/null || rc=$?
[ $rc = 2 ] && [ -f s/k/f ] || fail "--remove-files into an archive that cannot be written removed files (exit $rc)"
both --remove-files -tf a.tar
[ $src = 2 ] || fail "--remove-files with -t: exit $src"
case_end

case_begin "--xattrs-include, --xattrs-exclude"
if setfattr -n user.t -v 1 . 2>/dev/null; then
	fresh sh -c 'mkdir dir out && touch dir/file && for a in excluded incla inclb inclc incl_excluded; do setfattr -n user.$a -v value dir/file; done'
	both --xattrs-include='user.incl*' --xattrs-exclude=user.incl_excluded -cf archive.tar -C dir .
	both -xf archive.tar --xattrs-include='user.incl[ab]' --xattrs-exclude=user.inclb -C out
	[ $src = 0 ] && diff <(cd g && getfattr -d out/file) <(cd s && getfattr -d out/file) >&2 || fail "xattrs restored differ from GNU tar's"
	[ "$(cd s && getfattr -d out/file | grep -c user.)" = 1 ] || fail "xattrs: $(cd s && getfattr -d out/file)"
else
	skip_part "no user xattrs here"
fi
case_end

case_begin "--mode, --owner-map, --group-map, --add-file, --index-file, -P, -l, --backup, --no-overwrite-dir"
fresh sh -c 'touch -- a -File foo bar && chmod 4755 a && mkdir -p d dir1 && echo bla > dir1/file1 && genuid=$(id -u) && printf "+%s\t\"Joe the Plumber:1234\"\n" $(id -u) > uid.map && printf "+%s Plumbers:5678\n" $(id -g) > gid.map && : > empty.map'
for m in "go=rX,u+rw,a-s" "a+x" "u=rwx,g=rx,o=" "+w" "o=u" "0640" "u=rw,go=r"; do
	both -cf m.tar --mode="$m" a d
	diff <(tar -tvf g/m.tar | awk '{print $6, $1}' | sort) <(tar -tvf s/m.tar | awk '{print $6, $1}' | sort) >&2 ||
		fail "--mode=$m: modes differ from GNU tar's"
done
both -cf bad.tar --mode=u+q a
[ $src = 2 ] && [ $grc = 2 ] && diff g.err s.err >&2 || fail "--mode=u+q: exit $src (GNU tar $grc)"
for maps in "--owner-map=uid.map --group-map=gid.map" "--owner-map=empty.map --group-map=empty.map --owner=Fallback:4321 --group=Fb:8765"; do
	# shellcheck disable=SC2086
	both $maps --mtime=@0 -cf o.tar a
	[ "$(tar -tvf s/o.tar | awk '{print $2, $3, $4}')" = "$(tar -tvf g/o.tar | awk '{print $2, $3, $4}')" ] &&
		[ "$(tar --numeric-owner -tvf s/o.tar | awk '{print $2}')" = "$(tar --numeric-owner -tvf g/o.tar | awk '{print $2}')" ] ||
		fail "$maps: owners differ: $(tar -tvf s/o.tar)"
done
both -cvf arc.tar foo --add-file -File
[ "$(sort s.out | tr '\n' ' ')" = "-File foo " ] || fail "--add-file: listed $(cat s.out)"
both -c -v -f - --index-file=idx dir1
[ ! -s s.out ] || [ "$(tar -tf - < s/../s.out 2>/dev/null | head -1)" != "" ] || fail "--index-file: the listing went to the archive"
diff <(sort g/idx) <(sort s/idx) >&2 || fail "--index-file: $(cat s/idx)"
both -cPf p.tar "$PWD/s/../s/foo"
[ "$(tar -tPf s/p.tar)" = "$PWD/s/../s/foo" ] || fail "-cP: stored $(tar -tPf s/p.tar)"
rc=0; "$T" -xPf s/p.tar 2>/dev/null || rc=$?
[ $rc = 2 ] || fail "-xP: exit $rc, want a refusal"
ln s/foo s/foo2 && ln g/foo g/foo2 && both -cl -f l.tar foo
[ $src = 0 ] && diff g.err s.err >&2 || fail "-l: $(cat s.err)"
both -cf t.tar dir1 && both xfv t.tar --backup
diff <(sort g.out) <(sort s.out) >&2 && [ "$(cat s/dir1/file1~)" = bla ] || fail "--backup: $(cat s.out)"
both xf t.tar --backup=numbered && both xf t.tar --backup=numbered
[ -f s/dir1/file1.~2~ ] && diff <(tree g) <(tree s) >&2 || fail "--backup=numbered: trees differ"
chmod 700 s/dir1 g/dir1 && both -xf t.tar --no-overwrite-dir
[ "$(stat -c %a s/dir1)" = 700 ] && [ "$(stat -c %a g/dir1)" = 700 ] || fail "--no-overwrite-dir: mode $(stat -c %a s/dir1)"
both -cf h.tar --hole-detection=raw foo
[ $src = 2 ] || fail "--hole-detection=raw: exit $src (holes are found with SEEK_HOLE only)"
both -cf h.tar --hole-detection=seek foo
[ $src = 0 ] && [ $grc = 0 ] || fail "--hole-detection=seek: exit $src"
case_end

case_begin "--pax-option as GNU tar, or refused"
fresh sh -c 'head -c 100 /dev/urandom > file1; head -c 200 /dev/urandom > file2; touch -d @1.5 file1'
# append02: created at once, or empty and then appended to, the same bytes (one file a run: the read order is the disk's)
po='--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=mtime,delete=atime,delete=ctime'
(cd s && "$T" --mtime=@0 "$po" -cf archive.1 file1 && "$T" --mtime=@0 "$po" -rf archive.1 file2 &&
	"$T" --mtime=@0 "$po" -cf archive.2 -T /dev/null &&
	"$T" --mtime=@0 "$po" -rf archive.2 file1 && "$T" --mtime=@0 "$po" -rf archive.2 file2) || fail "append02: exit $?"
cmp s/archive.1 s/archive.2 >&2 || fail "append02: -c and -r make different archives"
# exthdr.name names the extended headers as GNU tar's template says
both -cf x.tar --pax-option=exthdr.name=%d/PaxHeaders/%f file1
[ "$(head -c 100 s/x.tar | tr -d '\0')" = "$(head -c 100 g/x.tar | tr -d '\0')" ] || fail "exthdr.name: $(head -c 100 s/x.tar | tr -d '\0')"
tar -tvf s/x.tar --full-time | grep -q ' 1970-01-01 00:00:01.5 file1' || fail "exthdr.name: the member's header is damaged: $(tar -tvf s/x.tar --full-time)"
both -cf y.tar --pax-option=delete=mtime file1
[ "$(tar -tvf s/y.tar --full-time | awk '{print $5}')" = 00:00:01 ] || fail "delete=mtime: $(tar -tvf s/y.tar --full-time)"
for bad in "-Hgnu -cf t.tar --pax-option user:=root ." "-cf t.tar --pax-option=delete=path file1" "-cf t.tar --pax-option=linkdata file1" "-czf t.tgz --pax-option=exthdr.name=%f file1"; do
	# shellcheck disable=SC2086
	both $bad
	[ $src = 2 ] && [ ! -s s/t.tar ] || fail "--pax-option ($bad): exit $src"
done
both -Hgnu -cf t.tar --pax-option user:=root .
diff g.err s.err >&2 || fail "--pax-option on a gnu archive: not GNU tar's message"
case_end

case_begin "--sort=name and --order=none: GNU tar's member order, directories restored exactly"
fresh sh -c 'mkdir -p t/d1/sub t/d2 t/c t/c-x && echo a > t/a && echo b > t/d1/b && ln -s a t/l && echo c > t/d1/sub/c && mkfifo t/d2/p && echo f > t/c/f && echo x > t/c-x/x && echo z > t/z && echo y > t/c-y && touch -d 2001-01-01 t/d1 t/d1/sub t/c t && touch -d 2002-02-02 t/c-x'
both -cf n.tar --sort=name t z
diff <(tar -tf g/n.tar) <(tar -tf s/n.tar) >&2 || fail "--sort=name: not GNU tar's member order"
both -cf o.tar t
(cd s && "$T" -cf o.tar --order=none t)
diff <(tar -tf g/o.tar) <(tar -tf s/o.tar) >&2 || fail "--order=none: not GNU tar's member order (the directories' own)"
manifest s/t > want
for a in n o; do
	gnu_x s/$a.tar gx.$a t && same_tree want gx.$a/t
	bsd_x s/$a.tar bx.$a t && same_tree want bx.$a/t
done
case_end

case_begin "a file met twice is a hard link the second time (operands that overlap, -h), as GNU tar (link04)"
fresh sh -c 'mkdir dir && echo TEST > dir/file && ln -s file dir/symlink'
for opts in "cf archive dir dir" "chf archive dir" "cf archive dir dir/file"; do
	# shellcheck disable=SC2086
	both $opts
	# Which of two names met is "the second time" follows each tool's order (GNU tar's
	# readdir, sweep-tar's disk order): the same members, and as many of them hard links.
	diff <(tar -tvf g/archive | sed 's,.*[0-9] dir/,dir/,; s, link to .*,,' | sort) \
		<(tar -tvf s/archive | sed 's,.*[0-9] dir/,dir/,; s, link to .*,,' | sort) >&2 ||
		fail "$opts: members differ from GNU tar's"
	[ "$(tar -tvf g/archive | grep -c ' link to ')" = "$(tar -tvf s/archive | grep -c ' link to ')" ] ||
		fail "$opts: not as many hard link members as GNU tar's"
done
both cfl archive dir dir
[ $src = 0 ] && [ ! -s s.err ] || fail "-l with a file named twice: $(cat s.err)"
case_end

case_begin "GNU tar's usage hint, --usage"
rc=0; "$T" --no-such-option 2> u.err || rc=$?
[ $rc = 64 ] && [ "$(tail -1 u.err)" = "Try 'sweep-tar --help' or 'sweep-tar --usage' for more information." ] || fail "the hint: $(cat u.err)"
"$T" --usage | head -1 | grep -q '^Usage: sweep-tar \[-' || fail "--usage: $("$T" --usage | head -1)"
case_end

finish
