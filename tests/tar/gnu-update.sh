#!/bin/bash
# SPDX-License-Identifier: MIT
# -r, -u, -A, --delete, -d and -W, each beside GNU tar doing the same to a
# copy of the same archive (GNU tar 1.34's suite: append*, update*,
# shortupd, delete0[1-5], opcomp0[3-4], difflink, verify, numeric):
#   - -r appends after the last member, whatever blocking made the archive,
#     and the archive stays whole records; -u appends what is newer than its
#     member and leaves a directory in the archive to its entries;
#   - --delete in place and as a filter (-f -), a big member, long names,
#     a name that is not there (exit 2, the archive untouched);
#   - -A adds the members of other archives;
#   - refused as GNU tar refuses them: -r on a compressed archive (-z or by
#     its magic), -r with -f -, -W with -t, -z or -f -; a file that is no
#     archive is left as it was;
#   - -d reports each difference in GNU tar's words, -W lists "Verify NAME".
. "$TESTS_DIR/tar/lib.sh"
cd "$WORK" || die "cd"

members() { tar -tf "$1"; }
# both CMD...: run "$T" CMD... in s/ and tar CMD... in g/ (copies of one tree and archive)
both() {
	(cd s && "$T" "$@") > s.out 2> s.err; src=$?
	(cd g && tar "$@") > g.out 2> g.err; grc=$?
	sed -i 's/^sweep-tar:/tar:/; s/sweep-tar --/tar --/g' s.err
}
fresh() { rm -rf s g && mkdir s && (cd s && "$@") && cp -a s g; }

case_begin "-r appends after the last member, as GNU tar"
fresh sh -c 'echo 1 > file1; echo 2 > file2; for f in a b c d e f g h i; do echo $f > $f; done'
both -cf archive file1; both -rf archive file2
[ $src = 0 ] && [ $grc = 0 ] || fail "-r: exit $src (GNU tar $grc)"
diff <(members g/archive) <(members s/archive) >&2 || fail "-r: members differ from GNU tar's"
[ $(( $(stat -c %s s/archive) % 10240 )) = 0 ] || fail "-r: the archive is not whole records"
# blocking changed between runs (append05)
both -cf b.tar -b1 a b c; both -rvf b.tar -b3 d e f; both -rvf b.tar -b5 g h i
diff <(sort g.out) <(sort s.out) >&2 || fail "-rv: listing differs"
diff <(members g/b.tar | sort) <(members s/b.tar | sort) >&2 || fail "-r -b: members differ"
[ $(( $(stat -c %s s/b.tar) % 2560 )) = 0 ] || fail "-r -b5: not whole records of 2560 bytes: $(stat -c %s s/b.tar)"
# a missing archive is made (shortupd), an empty one from -T /dev/null is appended to
both -rf new.tar file1 && [ $src = 0 ] && [ "$(members s/new.tar)" = file1 ] || fail "-r on a missing archive: exit $src"
both -cf e.tar -T /dev/null; both -rf e.tar file1; both -rf e.tar file2
[ "$(members s/e.tar | tr '\n' ' ')" = "file1 file2 " ] || fail "-r after -T /dev/null: $(members s/e.tar)"
# GNU tar reads what sweep-tar appended to GNU tar's archive, and the other way round
tar -cf g/mixed.tar -C g file1 && "$T" -rf g/mixed.tar -C s file2 && [ "$(members g/mixed.tar | tr '\n' ' ')" = "file1 file2 " ] ||
	fail "-r after GNU tar: $(members g/mixed.tar)"
case_end

case_begin "-r refused where GNU tar refuses it"
fresh sh -c 'echo 1 > f'
tar -czf s/z.tgz -C s f && cp s/z.tgz g/ && cp s/z.tgz z.before
both -rzf z.tgz f
[ $src = 2 ] && [ $grc = 2 ] && diff g.err s.err >&2 || fail "-rz: exit $src (GNU tar $grc)"
both -rf z.tgz f
[ $src = 2 ] && [ $grc = 2 ] && diff g.err s.err >&2 || fail "-r on a gzip archive: exit $src (GNU tar $grc)"
cmp -s s/z.tgz z.before || fail "-r on a gzip archive changed it"
both -rf - f
[ $src = 2 ] && [ $grc = 2 ] && diff g.err s.err >&2 || fail "-rf -: exit $src (GNU tar $grc)"
# not an archive: left as it was (GNU tar would write after the garbage)
head -c 3000 /dev/urandom > s/junk && cp s/junk junk.before
(cd s && "$T" -rf junk f) 2> junk.err; rc=$?
[ $rc = 2 ] && cmp -s s/junk junk.before || fail "-r on a file that is no archive: exit $rc, changed: $(cmp s/junk junk.before)"
case_end

case_begin "-u appends what is newer, as GNU tar"
fresh sh -c 'mkdir -p dir/sub && echo 1 > dir/f1 && echo 2 > dir/sub/f2 && touch -d 2001-01-01 dir/f1 dir/sub/f2'
tar -cf s/u.tar -C s dir && cp s/u.tar g/u.tar
both -uvf u.tar dir
[ $src = 0 ] && [ ! -s s.out ] && cmp -s s/u.tar g/u.tar || fail "-u of an unchanged tree: exit $src, listed $(cat s.out)"
touch s/dir/f1 g/dir/f1 && echo 3 > s/dir/sub/new && cp s/dir/sub/new g/dir/sub/new
both -uvf u.tar dir
diff <(sort g.out) <(sort s.out) >&2 || fail "-uv: listing differs from GNU tar's"
diff <(members g/u.tar | sort) <(members s/u.tar | sort) >&2 || fail "-u: members differ from GNU tar's"
# with -C, as update03
both -uvf u.tar -C dir sub
diff <(sort g.out) <(sort s.out) >&2 || fail "-u -C: listing differs from GNU tar's"
case_end

case_begin "--delete in place and as a filter, as GNU tar"
p=This_is_a_very_long_file_name_prefix_that_is_designed_to_cause_problems_with_file_names_that_run_into_a_limit_of_the_posix_tar_formatXX
fresh sh -c "head -c 50000 /dev/urandom > big; head -c 3073 /dev/zero > 1; cp 1 2; cp 1 3; touch ${p}1 ${p}2 ${p}3 ${p}4"
both -cf a.tar big 1 2 3 ./${p}1 ./${p}2 ./${p}3 ./${p}4
both -f a.tar --delete 1 ./${p}3
[ $src = 0 ] && [ $grc = 0 ] || fail "--delete: exit $src (GNU tar $grc)"
diff <(members g/a.tar | sort) <(members s/a.tar | sort) >&2 || fail "--delete: members differ from GNU tar's"
[ $(( $(stat -c %s s/a.tar) % 10240 )) = 0 ] || fail "--delete: not whole records"
tar -xOf s/a.tar big | cmp - s/big || fail "--delete: the member before the deleted one is damaged"
# (the member sweep-tar wrote first: its read order is the disk's)
both -f a.tar --delete "$(members s/a.tar | head -1)"
mkdir dx && tar -xf s/a.tar -C dx && for m in $(members s/a.tar); do cmp -s "dx/$m" "s/$m" || fail "--delete: $m damaged"; done
diff <(members g/a.tar | sort) <(members s/a.tar | sort) >&2 || fail "--delete of a member"
# from stdin to stdout (delete02)
(cd s && "$T" -cf p.tar 1 2 3 && "$T" f - --delete 2 < p.tar > p2.tar) || fail "--delete -f -: exit $?"
[ "$(members s/p2.tar | sort | tr '\n' ' ')" = "1 3 " ] || fail "--delete -f -: $(members s/p2.tar)"
# a name not in the archive (delete05): GNU tar's message and status, the archive as it was
cp s/a.tar a.before
both --file a.tar --blocking-factor=20 --delete tre
[ $src = 2 ] && [ $grc = 2 ] && diff g.err s.err >&2 && cmp -s s/a.tar a.before || fail "--delete tre: exit $src (GNU tar $grc)"
# a directory operand deletes what is below it
mkdir -p s/d/e && touch s/d/e/x s/d/y && (cd s && "$T" -cf d.tar d 1 && "$T" -f d.tar --delete d) || fail "--delete d: exit $?"
[ "$(members s/d.tar)" = 1 ] || fail "--delete of a directory left $(members s/d.tar)"
case_end

case_begin "-A adds the members of other archives"
fresh sh -c 'echo 1 > f1; echo 2 > f2; echo 3 > f3'
(cd s && "$T" -cf a.tar f1 && "$T" -cf b.tar f2 && tar -cf c.tar f3 && "$T" -Af a.tar b.tar c.tar) || fail "-A: exit $?"
[ "$(members s/a.tar | tr '\n' ' ')" = "f1 f2 f3 " ] || fail "-A: GNU tar lists $(members s/a.tar)"
rc=0; (cd s && "$T" -Azf a.tar b.tar) 2> A.err || rc=$?
[ $rc = 2 ] && grep -q "Cannot concatenate compressed archives" A.err || fail "-Az: exit $rc"
case_end

case_begin "-d reports differences in GNU tar's words"
fresh sh -c 'mkdir a; echo x > a/x; ln -s x a/y; ln a/x a/z; echo c > a/c; echo m > a/m; mkfifo a/p'
tar -cf s/a.tar -C s a && cp s/a.tar g/a.tar
both -df a.tar
[ $src = 0 ] && [ ! -s s.out ] && [ ! -s s.err ] || fail "-d of the same tree: exit $src, $(cat s.out s.err)"
for d in s g; do
	(cd $d && rm a/z && ln -s x a/z && echo changed > a/c && chmod 600 a/m && touch -d 2001-01-01 a/m &&
		rm a/y && ln -s elsewhere a/y && rm a/p)
done
both -df a.tar
[ $src = 1 ] && [ $grc = 1 ] || fail "-d: exit $src (GNU tar $grc)"
diff <(sort g.out) <(sort s.out) >&2 || fail "-d: differences reported differ from GNU tar's"
diff <(sort g.err) <(sort s.err) >&2 || fail "-d: messages differ from GNU tar's"
both --diff -vf a.tar a/x
diff g.out s.out >&2 || fail "-dv: listing differs"
# the owner columns of -dvv as in GNU tar (numeric)
both --compare -vvf a.tar --numeric-owner a/x
[ "$(awk '{print $2}' s.out)" = "$(awk '{print $2}' g.out)" ] || fail "--compare -vv --numeric-owner: $(cat s.out)"
case_end

case_begin "-W verifies the archive written, refused where GNU tar refuses it"
fresh sh -c 'touch foo'
both -cvf archive.tar --verify foo
[ $src = 0 ] && diff g.out s.out >&2 || fail "-cvW: exit $src, listing $(cat s.out)"
for bad in "-tWf archive.tar" "-cWzf z.tgz foo" "-cWf - foo"; do
	# shellcheck disable=SC2086
	both $bad
	[ $src = 2 ] && [ $grc = 2 ] && diff g.err s.err >&2 || fail "$bad: exit $src (GNU tar $grc)"
done
case_end

finish
