#!/bin/bash
# SPDX-License-Identifier: MIT
# Cases where sweep-tar must do what GNU tar does, each run on both:
#   - a damaged header in the middle: "Skipping to next header", every other
#     member listed and extracted, exit 2 (not a silent stop with exit 0);
#   - old-style bundles: each letter takes its argument in order ("cfv
#     out.tar dir" writes out.tar, never ./v; also xfv, cfvT, xfvz, xpf -);
#   - each -C applies to the names after it on -x;
#   - -p, --same-owner, --no-same-owner, -o, --numeric-owner, --xattrs,
#     --acls, -m accepted with their meaning;
#   - --warning=no-KEYWORD silences those warnings, exit status kept; -a
#     picks the compression by suffix; -b sets the record size;
#   - from GNU tar's own suite (T-rec, T-null, opcomp06, shortfile,
#     longv7, lustar01, xattr05, xattr07, extrac13): a -T list named twice,
#     NULs in a list read by lines, --acls on a non-POSIX format, a file that
#     is no archive, names too long for v7/ustar (lustar02: an unsplittable
#     directory name, its contents left out), xattr names with '=' and
#     '%', --skip-old-files -v over an existing tree, -x -h refused, --acls
#     into a directory with a default ACL (acls03), -t into a closed pipe
#     (sigpipe), -c and -x at ulimit -n 10 (extrac11), times just before
#     1970 with a fraction (time01: rounded to the second libarchive can
#     write, never the 2 s off it would write itself), --ignore-failed-read
#     (ignfail: "Warning: Cannot ...", exit status kept).
. "$TESTS_DIR/tar/lib.sh"
cd "$WORK" || die "cd"

# --- a damaged header ---
case_begin "a damaged header is skipped as GNU tar skips it"
echo a > a && echo b > b && echo c > c
tar --format=ustar -cf three.tar a b c
python3 -c '
import sys
d = open("three.tar", "rb").read()
open("bad.tar", "wb").write(d[:1024] + b"\x01" * 512 + d[1024:])'
for tool in "$T" tar; do
	name=$(basename "$tool")
	rm -rf "x.$name" && mkdir "x.$name"
	rc=0; "$tool" -xf bad.tar -C "x.$name" 2> "x.$name.err" || rc=$?
	[ $rc = 2 ] || fail "$name -x of a damaged archive: exit $rc, want 2"
	[ "$(ls "x.$name" | tr '\n' ' ')" = "a b c " ] || fail "$name -x of a damaged archive: extracted $(ls "x.$name")"
	grep -q "^$name: Skipping to next header$" "x.$name.err" || { cat "x.$name.err" >&2; fail "$name -x: no 'Skipping to next header'"; }
	rc=0; "$tool" -tf bad.tar > "t.$name" 2> "t.$name.err" || rc=$?
	[ $rc = 2 ] && [ "$(tr '\n' ' ' < "t.$name")" = "a b c " ] || fail "$name -t of a damaged archive: exit $rc, listed $(cat "t.$name")"
done
cmp -s x.tar/b x.sweep-tar/b || fail "the member after the damage differs"
case_end

# --- old-style bundles ---
case_begin "old-style bundles give each letter its argument in order"
mkdir -p dir/sub && echo z > dir/z && echo y > dir/sub/y && echo keep > v
"$T" cfv out.tar dir > cfv.out 2>&1 || fail "cfv out.tar dir: exit $?"
[ "$(cat v)" = keep ] || fail "cfv out.tar dir overwrote ./v"
[ "$(tar -tf out.tar | sort | tr '\n' ' ')" = "dir/ dir/sub/ dir/sub/y dir/z " ] || fail "cfv: out.tar holds $(tar -tf out.tar)"
grep -q "^dir/z$" cfv.out || fail "cfv: -v listed nothing"
printf 'dir/z\n' > list
"$T" cfvT out2.tar list > /dev/null || fail "cfvT out2.tar list: exit $?"
[ "$(tar -tf out2.tar)" = dir/z ] || fail "cfvT: out2.tar holds $(tar -tf out2.tar)"
mkdir xv && (cd xv && "$T" xfv ../out.tar > ../xfv.out) || fail "xfv: exit $?"
[ -f xv/dir/sub/y ] && grep -q "^dir/z$" xfv.out || fail "xfv: not extracted or not listed"
gzip -c out.tar > out.tgz && mkdir xz && (cd xz && "$T" xfvz ../out.tgz > /dev/null) && [ -f xz/dir/z ] || fail "xfvz"
mkdir xp && (cd xp && "$T" xpf - < ../out.tar) && [ -f xp/dir/sub/y ] || fail "xpf - (fpsync's tar mode)"
rc=0; "$T" cf 2> cf.err || rc=$?
[ $rc = 2 ] && grep -q "option requires an argument -- 'f'" cf.err || fail "cf without its argument: exit $rc, $(cat cf.err)"
case_end

# --- -C applies to the names after it ---
case_begin "each -C applies to the names after it (-x)"
mkdir -p s/d s/e && echo 1 > s/d/d1 && echo 2 > s/e/e1
tar -cf de.tar -C s d e
mkdir -p gx/y tx/y
tar -xf de.tar -C gx d -C y e
"$T" -xf de.tar -C tx d -C y e || fail "-x with two -C: exit $?"
diff <(cd gx && find . | sort) <(cd tx && find . | sort) >&2 || fail "-C order: not GNU tar's tree"
[ -f tx/d/d1 ] && [ -f tx/y/e/e1 ] || fail "-C order: d should be in tx, e in tx/y"
case_end

# --- ownership and permission options ---
case_begin "-p, --same-owner, --no-same-owner, --numeric-owner, -m"
mkdir -p o && echo f > o/f && chmod 4751 o/f && touch -d 2001-01-01 o/f
tar -cf o.tar --owner=4242 --group=4343 --numeric-owner -C o f
if is_root; then
	mkdir o1 o2 o3
	"$T" -xf o.tar -C o1 || fail "-x as root: exit $?"
	[ "$(stat -c '%u %g %a' o1/f)" = "4242 4343 4751" ] || fail "root's default: owner and mode not restored: $(stat -c '%u %g %a' o1/f)"
	"$T" -x --no-same-owner -f o.tar -C o2 || fail "--no-same-owner: exit $?"
	[ "$(stat -c '%u %a' o2/f)" = "0 751" ] || fail "--no-same-owner: $(stat -c '%u %a' o2/f), want 0 751 (no set-id)"
	(umask 077 && "$T" -x --no-same-permissions -f o.tar -C o3) || fail "--no-same-permissions: exit $?"
	[ "$(stat -c %a o3/f)" = 700 ] || fail "--no-same-permissions: mode $(stat -c %a o3/f), want 700 (umask 077)"
fi
mkdir o4 && "$T" -xpf o.tar -C o4 --same-owner 2> /dev/null
[ "$(stat -c %Y o4/f)" = "$(date -d 2001-01-01 +%s)" ] || fail "-xp: mtime not restored"
mkdir o5 && "$T" -xmf o.tar -C o5 || fail "-m: exit $?"
[ "$(stat -c %Y o5/f)" != "$(date -d 2001-01-01 +%s)" ] || fail "-m: the mtime was restored"
# --numeric-owner on -c stores no names, as GNU tar
"$T" -c --numeric-owner -f n.tar -C o f && tar -c --numeric-owner -f gn.tar -C o f
[ "$(tar -tvf n.tar | awk '{print $2}')" = "$(tar -tvf gn.tar | awk '{print $2}')" ] || fail "--numeric-owner -c: owner column differs from GNU tar's"
# -o with -c is --old-archive (V7), with -x --no-same-owner: as GNU tar takes it
"$T" -co -f v7.tar -C o f && tar -co -f gv7.tar -C o f || fail "-co: exit $?"
[ "$(od -An -c -j257 -N6 v7.tar)" = "$(od -An -c -j257 -N6 gv7.tar)" ] || fail "-co: not the V7 format GNU tar writes"
case_end

case_begin "--warning, -a, -b as GNU tar"
mkdir -p w && echo w > w/f && : > w/sock.placeholder
rc=0; "$T" -cf w/a.tar w 2> w1.err || rc=$?
grep -q "file is the archive; not dumped" w1.err || fail "the archive inside the tree: no warning"
rc=0; "$T" -cf w/a.tar --warning=no-ignore-archive w 2> w2.err || rc=$?
[ ! -s w2.err ] || fail "--warning=no-ignore-archive: $(cat w2.err)"
rc=0; "$T" -cf x.tar --warning=no-such-thing w 2> w3.err || rc=$?
[ $rc = 2 ] && grep -q "invalid argument" w3.err || fail "--warning=no-such-thing: exit $rc"
"$T" -caf auto.tar.gz w/f && gzip -t auto.tar.gz || fail "-a with .tar.gz: not gzip"
"$T" -caf auto.tar.zst w/f && zstd -qt auto.tar.zst 2>/dev/null || { command -v zstd >/dev/null && fail "-a with .tar.zst: not zstd"; }
"$T" -cb 1 -f b1.tar w/f && [ $(( $(stat -c %s b1.tar) % 512 )) = 0 ] && [ "$(stat -c %s b1.tar)" -lt 10240 ] ||
	fail "-b 1: not padded to 512-byte records: $(stat -c %s b1.tar)"
case_end

case_begin "behaviours GNU tar's own suite checks"
mkdir -p g && cd g || die "cd g"
echo 1 > file1 && echo 2 > file2
printf 'file1\n-T F2\n' > F1 && printf 'file2\n-T F1\n' > F2
rc=0; "$T" -cf rec.tar -T F1 2> rec.err || rc=$?
[ $rc = 2 ] && grep -qx "sweep-tar: F1: file list requested from F2 already read from command line" rec.err ||
	fail "a -T list named twice: exit $rc, $(cat rec.err)"
[ "$(tar -tf rec.tar | sort | tr '\n' ' ')" = "file1 file2 " ] || fail "a -T list named twice: members $(tar -tf rec.tar)"
printf 'file1\0file2\n' > nul.list
rc=0; "$T" -cf nul.tar -T nul.list 2> nul.err || rc=$?
[ $rc = 0 ] && grep -q "nul.list: file name read contains nul character" nul.err &&
	[ "$(tar -tf nul.tar | sort | tr '\n' ' ')" = "file1 file2 " ] || fail "NULs in a -T list: exit $rc, $(cat nul.err)"
rc=0; "$T" -c --acls --format=ustar -f acl.tar file1 2> acl.err || rc=$?
[ $rc = 2 ] && grep -q -- "--acls can be used only on POSIX archives" acl.err || fail "--acls --format=ustar: exit $rc"
echo "not an archive" > short
rc=0; "$T" -tf short 2> short.err || rc=$?
[ $rc = 2 ] && grep -q "This does not look like a tar archive" short.err || fail "a file that is no archive: exit $rc"
long=$(printf 'n%.0s' $(seq 120))
mkdir -p "$long" && echo x > "$long/f"
rc=0; "$T" -c --format=v7 -f v7.tar "$long/f" 2> v7.err || rc=$?
[ $rc = 2 ] && grep -q "file name is too long (max 99); not dumped" v7.err || fail "too long for v7: exit $rc, $(cat v7.err)"
# lustar02: a directory whose name cannot be split for ustar is left out with what is below it, in GNU tar's words
p155=$(printf 'p%.0s' $(seq 155))
mkdir -p "$p155" && touch "$p155/tween_name_and_prefix"
rc=0; "$T" -c --format=ustar -f u.tar "$p155" 2> u.err || rc=$?
grc=0; tar -c --format=ustar -f gu.tar "$p155" 2> gu.err || grc=$?
[ $rc = 2 ] && [ $grc = 2 ] && diff <(sed 's/^tar:/sweep-tar:/' gu.err) u.err >&2 || fail "an unsplittable directory name: exit $rc (GNU tar $grc)"
rc=0; "$T" -x -h -f rec.tar 2> h.err || rc=$?
[ $rc = 2 ] || fail "-x -h accepted (it would write through symlinks): exit $rc"
if setfattr -n 'user.=NAME%3D=' -v value file1 2>/dev/null; then
	"$T" -c -f xa.tar file1 && mkdir xa && "$T" -x --xattrs -f xa.tar -C xa || fail "xattr with '=' and '%': exit $?"
	[ "$(getfattr -d --absolute-names xa/file1 2>/dev/null | grep '^user')" = "$(getfattr -d --absolute-names file1 2>/dev/null | grep '^user')" ] ||
		fail "an xattr name with '=' and '%' changed on the way: $(getfattr -d xa/file1 2>&1)"
else
	skip_part "xattr names with '=': setfattr cannot set user.* here"
fi
# --skip-old-files -v: GNU tar's note for each member kept, existing directories left as they are
mkdir -p sk/d && echo old > sk/d/f && chmod 700 sk/d && tar -cf sk.tar -C sk d
chmod 755 sk/d && echo mine > sk/d/f
rc=0; "$T" -xv --skip-old-files -f sk.tar -C sk > /dev/null 2> sk.err || rc=$?
[ $rc = 0 ] && grep -qx "sweep-tar: d/f: skipping existing file" sk.err && grep -qx "sweep-tar: d: skipping existing file" sk.err ||
	fail "--skip-old-files -v: exit $rc, $(cat sk.err)"
[ "$(cat sk/d/f)" = mine ] && [ "$(stat -c %a sk/d)" = 755 ] || fail "--skip-old-files changed what exists"
# -t into a pipe its reader closes early: a quiet end, as GNU tar's (sigpipe.at)
head -c 4000000 /dev/urandom > big && "$T" -cf big.tar big || fail "-cf big.tar: exit $?"
{ "$T" -xOf big.tar 2> sp.err | head -c 1 > /dev/null; }
[ ! -s sp.err ] || fail "-xO | head -c 1: $(cat sp.err)"
# --acls: a member without an ACL does not keep one inherited from -C's default ACL (acls03)
if command -v setfacl >/dev/null && mkdir acld && setfacl -d -m u:nobody:rwx acld 2>/dev/null; then
	"$T" -x --acls -f rec.tar -C acld || fail "-x --acls into a directory with a default ACL: exit $?"
	! getfacl -p acld/file1 2>/dev/null | grep -q nobody || fail "--acls: file1 kept the ACL inherited from -C"
else
	skip_part "default ACLs: no setfacl, or no ACL support here"
fi
# time01: times just before 1970 with a fraction. GNU tar stores them exactly;
# libarchive cannot write a time between -1 and 0 s, which sweep-tar rounds to
# the nearest second (not the -1 - FRAC libarchive would write, up to 2 s off).
mkdir t1969 && touch -d 1969-12-31T23:59:59.75 t1969/q && touch -d 1969-12-31T23:59:59.25 t1969/h &&
	touch -d 1969-12-31T23:59:58.25 t1969/o || die "touch before 1970"
"$T" -cf t1969.tar t1969 && tar --format=posix -cf gt1969.tar t1969 || fail "-c of times before 1970: exit $?"
for how in gnu-of-gnu gnu sweep; do
	mkdir "x1969.$how"
	case $how in
	gnu-of-gnu) tar -xf gt1969.tar -C "x1969.$how" ;;
	gnu) tar -xf t1969.tar -C "x1969.$how" ;;
	sweep) "$T" -xf t1969.tar -C "x1969.$how" ;;
	esac 2> /dev/null || fail "$how: -x of times before 1970: exit $?"
	want="-0.250000000 -0.750000000 -1.750000000 "
	[ $how = gnu-of-gnu ] || want="0.000000000 -1.000000000 -1.750000000 "
	got=$(stat -c %.9Y "x1969.$how/t1969/q" "x1969.$how/t1969/h" "x1969.$how/t1969/o" | tr '\n' ' ')
	[ "$got" = "$want" ] || fail "$how: times before 1970 came back as $got, want $want"
done
cd .. || die "cd .."
case_end

# --ignore-failed-read: what cannot be read is GNU tar's "Warning: ...", exit status kept (GNU tar's ignfail)
case_begin "--ignore-failed-read as GNU tar"
mkdir -p ign/t/locked && echo a > ign/t/a && echo s > ign/t/secret && chmod 000 ign/t/locked ign/t/secret
chmod 777 ign
for tool in "$T" tar; do
	name=$(basename "$tool")
	rc=0; (cd ign && "$tool" -cf "/dev/null" missing t --ignore-failed-read) 2> "ign.$name.err" || rc=$?
	[ $rc = 0 ] || fail "$name --ignore-failed-read, a missing operand: exit $rc, $(cat "ign.$name.err")"
	grep -qx "$name: missing: Warning: Cannot stat: No such file or directory" "ign.$name.err" ||
		fail "$name --ignore-failed-read: $(cat "ign.$name.err")"
	rc=0; (cd ign && "$tool" -cf /dev/null --warning=no-failed-read missing --ignore-failed-read) 2> "ign.$name.err" || rc=$?
	[ $rc = 0 ] && [ ! -s "ign.$name.err" ] || fail "$name --warning=no-failed-read: exit $rc, $(cat "ign.$name.err")"
	rc=0; (cd ign && "$tool" -cf /dev/null missing) 2> /dev/null || rc=$?
	[ $rc = 2 ] || fail "$name without --ignore-failed-read: exit $rc"
	if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null; then
		rc=0; (cd ign && setpriv --reuid=65534 --regid=65534 --clear-groups "$tool" -cf "ign.$name.tar" \
			--ignore-failed-read t) 2> "ign.$name.err" || rc=$?
		[ $rc = 0 ] || fail "$name --ignore-failed-read, unreadable file and directory: exit $rc, $(cat "ign.$name.err")"
		sed "s/^$name:/tar:/" "ign.$name.err" | sort > "ign.$name.msgs"
	fi
done
if [ -f ign.tar.msgs ]; then
	diff ign.tar.msgs "ign.$(basename "$T").msgs" >&2 || fail "--ignore-failed-read: messages differ from GNU tar's"
	grep -q "t/locked: Warning: Cannot open: Permission denied" ign.tar.msgs || fail "GNU tar: $(cat ign.tar.msgs)"
	[ "$(tar -tf "ign/ign.$(basename "$T").tar" | sort | tr '\n' ' ')" = "$(tar -tf ign/ign.tar.tar | sort | tr '\n' ' ')" ] ||
		fail "--ignore-failed-read: members differ from GNU tar's"
else
	skip_part "unreadable files: not root, or no setpriv"
fi
chmod 755 ign/t/locked; chmod 644 ign/t/secret
case_end

# GNU tar's extrac11: few but enough descriptors (ulimit -n 10) for a tree 11 deep
case_begin "-c and -x at ulimit -n 10, as GNU tar"
mkdir -p fd/a/b/c/d/e/f/g/h/i/j/k fd/out fd/gout
for d in $(find fd/a -type d); do for f in X Y Z; do echo $f > "$d/$f"; done; done
if ( exec 3<&- 4<&- 5<&- 6<&- 7<&- 8<&- 9<&- && ulimit -n 10 ) 2>/dev/null; then
	( cd fd && exec 3<&- 4<&- 5<&- 6<&- 7<&- 8<&- 9<&- && ulimit -n 10 && "$T" -cf s.tar a && "$T" -xf s.tar -C out a ) 2> fd.err ||
		fail "ulimit -n 10: exit $?, $(cat fd.err)"
	( cd fd && exec 3<&- 4<&- 5<&- 6<&- 7<&- 8<&- 9<&- && ulimit -n 10 && tar -cf g.tar a && tar -xf g.tar -C gout a ) ||
		fail "ulimit -n 10: GNU tar failed too"
	diff -r fd/a fd/out/a >&2 || fail "ulimit -n 10: the tree extracted differs"
	diff <(tar -tf fd/g.tar | sort) <(tar -tf fd/s.tar | sort) >&2 || fail "ulimit -n 10: members differ from GNU tar's"
else
	skip_part "ulimit -n 10 cannot be set here"
fi
case_end

finish
