#!/bin/bash
# SPDX-License-Identifier: MIT
# The command line against GNU tar's: member lists for -C, absolute names,
# --exclude/-X and --one-file-system; tar -tv listings; -v; -f -; the old
# "cf" syntax; compression filters; --totals; the archive inside the tree;
# --progress on a terminal; usage errors.
. "$TESTS_DIR/tar/lib.sh"
cd "$WORK" || die "cd $WORK"

# A directory that holds a symlink GNU tar extracts through a placeholder
# is stored twice (sweep-tar(1) NOTES; checked below): count it once.
members() { tar -tf "$1" | awk '!/\/$/ || !seen[$0]++' | sort; }
same_members() { # same_members SWEEP_ARCHIVE GNU_ARCHIVE WHAT
	diff <(members "$2") <(members "$1") >&2 || die "$3: members differ from GNU tar's"
}

# A plain tree (no ACLs, sparse files or hard links, whose listings legitimately differ).
mkdir -p s/a/b s/c s/empty s/dir/sub1 s/dir/sub2 s/x.o.d
for f in s/a/one s/a/b/two s/c/three s/a/b/t.o s/dir/sub1/k s/dir/sub2/k s/x.o.d/y; do
	head -c $((RANDOM % 5000)) /dev/urandom > "$f"
done
ln -s ../c/three s/a/link
mkfifo s/c/fifo
chmod 700 s/c
touch -d '2001-02-03 04:05:06.123456789' s/a/one s/a

"$T" --help | grep -q '^Usage: sweep-tar -c' || die "--help"
"$T" --version | grep -q 'sweep' || die "--version"
"$T" -f x.tar s 2> err; [ $? = 2 ] || die "no -c: want exit status 2"
"$T" -cf x.tar 2> err; [ $? = 2 ] || die "no operands: want exit status 2"
grep -q "Cowardly refusing to create an empty archive" err || die "no operands: GNU tar's message"
"$T" -c --order=sideways s > /dev/null 2>&1; [ $? = 2 ] || die "bad --order accepted"
# An unknown option and a missing argument: GNU tar's exit status (argp's 64), whatever it is.
for bad in "--no-such-option" "-cf"; do
	tar $bad > /dev/null 2>&1; grc=$?
	"$T" $bad > /dev/null 2>&1; rc=$?
	[ $rc = $grc ] || die "'$bad': exit status $rc, GNU tar $grc"
done

# A missing operand: GNU tar's messages and exit status, the rest archived.
"$T" -cf miss.tar s/a nothere 2> miss.err; rc=$?
tar -cf gmiss.tar s/a nothere 2> gmiss.err; grc=$?
[ $rc = 2 ] && [ $grc = 2 ] || die "missing operand: exit status $rc (GNU tar $grc), want 2"
diff <(sed 's/^tar: /sweep-tar: /' gmiss.err) miss.err >&2 || die "missing operand: messages differ from GNU tar's"
same_members miss.tar gmiss.tar "missing operand"

# tar -tv listings, to the nanosecond, and the same members.
"$T" -cf mine.tar s || die "sweep-tar -cf"
tar --format=pax -cf gnu.tar s || die "GNU tar"
# (tar -tv pads its columns to the widest seen so far: squeeze the blanks)
diff <(tar --full-time -tvf gnu.tar | tr -s ' ' | sort -k6) \
	<(tar --full-time -tvf mine.tar | tr -s ' ' | awk '!/^d/ || !seen[$0]++' | sort -k6) >&2 ||
	die "tar -tv listings differ"
# s/a/link points to ../c/three: s/a/ comes right before it, and again with the directories at the end.
tar -tf mine.tar | grep -n -e '^s/a/$' -e '^s/a/link$' | cut -d: -f2 | tr '\n' ' ' > twice
[ "$(cat twice)" = "s/a/ s/a/link s/a/ " ] || die "s/a/ not stored before s/a/link and at the end: $(cat twice)"

# Old syntax, -f -, and -v (stdout when the archive is a file, stderr when it is stdout).
"$T" cf old.tar s || die "old-style cf"
same_members old.tar gnu.tar "cf"
"$T" -cv -f - s > stdout.tar 2> list.err || die "-cv -f -"
same_members stdout.tar gnu.tar "-f -"
diff <(sort list.err) <(tar -tf stdout.tar | sort) >&2 || die "-v listing (archive on stdout) differs from the members"
"$T" -cvf v.tar s > list.out || die "-cvf"

# -f - into a pipe: the pipe is grown to hold a whole 1 MB block (a write
# larger than the pipe sleeps until the reader drains it), where the kernel
# allows it; either way the archive is whole and padded to 10240 bytes.
"$T" -cf - s 2> /dev/null | python3 -c '
import fcntl, sys
data = sys.stdin.buffer.read()
sys.stdout.buffer.write(data)
print(fcntl.fcntl(0, 1032), file=sys.stderr)  # F_GETPIPE_SZ, after sweep-tar wrote it all
' > pipe.tar 2> pipe.size || die "-f - into a pipe"
same_members pipe.tar gnu.tar "-f - into a pipe"
[ $(($(stat -c %s pipe.tar) % 10240)) = 0 ] || die "-f - into a pipe: not padded to 10240 bytes"
if [ "$(cat /proc/sys/fs/pipe-max-size)" -ge 1048576 ]; then
	[ "$(cat pipe.size)" -ge 1024000 ] || die "-f - into a pipe: the pipe holds $(cat pipe.size) bytes, not a block"
fi
diff <(sort list.out) <(tar -tf v.tar | sort) >&2 || die "-v listing differs from the members"

# -C, more than once and relative to the one before, as GNU tar does.
mkdir -p o/p
cp -a s o/p/t
"$T" -cf c.tar -C s a c -C ../o p/t || die "-C"
tar -cf gc.tar -C s a c -C ../o p/t || die "GNU tar -C"
same_members c.tar gc.tar "-C"

# Absolute names lose their leading '/', with GNU tar's note.
"$T" -cf abs.tar "$WORK/s/a" 2> abs.err || die "absolute operand"
tar -cf gabs.tar "$WORK/s/a" 2> /dev/null
same_members abs.tar gabs.tar "absolute operand"
grep -qx "sweep-tar: Removing leading \`/' from member names" abs.err || die "no note about the leading '/'"
for ex in "$WORK/s/a/b" "${WORK#/}/s/a/b"; do
	"$T" -cf abs.tar --exclude="$ex" "$WORK/s/a" 2> /dev/null || die "absolute operand, --exclude=$ex"
	tar -cf gabs.tar --exclude="$ex" "$WORK/s/a" 2> /dev/null
	same_members abs.tar gabs.tar "absolute operand, --exclude=$ex"
done

# Names that climb out of the extraction directory lose everything up to
# their last ".." (and a leading '/'), with GNU tar's notes, one per prefix
# and kind; with hard links, for their targets too.
mkdir -p up/x/p up/a up/b
echo f > up/x/p/f && ln up/x/p/f up/x/p/f2 && echo b > up/b/bf
for ops in "../x" "./../x" "../x/p/../p" "../a/../b" ".." "./.." "$WORK/up/x/.." "/$WORK/up/x" "../x ../b ../x/p"; do
	# shellcheck disable=SC2086 # several operands in one string
	(cd up/a && "$T" -cf ../../dd.tar $ops 2> ../../dd.err && tar -cf ../../gdd.tar $ops 2> ../../gdd.err) ||
		die "$ops: exit status $?"
	same_members dd.tar gdd.tar "$ops"
	diff <(sed 's/^tar: /sweep-tar: /' gdd.err) dd.err >&2 || die "$ops: notes differ from GNU tar's"
	tar -tf dd.tar | grep -E '(^|/)\.\.(/|$)|^/' && die "$ops: a member name still climbs out"
done
# Python's tarfile (no filter) extracts names as stored: nothing may land outside its target.
(cd up/a && "$T" -cf ../../dd.tar ../x ./../b ../a/../x/p) 2> /dev/null || die "climbing operands"
mkdir -p pyx/inner
python3 - dd.tar pyx/inner <<'PY' || die "Python's tarfile extracted outside its target"
import os, sys, tarfile
with tarfile.open(sys.argv[1]) as tf:
    tf.extractall(sys.argv[2])
top = os.path.dirname(os.path.abspath(sys.argv[2]))
assert os.listdir(top) == ["inner"], os.listdir(top)
assert sorted(os.listdir(sys.argv[2])) == ["b", "x"], os.listdir(sys.argv[2])
PY
[ -z "$(find "$WORK" -mindepth 1 -maxdepth 1 -newer dd.tar ! -name pyx)" ] || die "files appeared in $WORK next to the archive"

# "--" ends the options; what follows is archived, under the last -C.
"$T" -cf dd.tar -- s || die "-- s"
same_members dd.tar gnu.tar "-- s"
"$T" -cf dd.tar -C o -- p/t || die "-C o -- p/t"
tar -cf gdd.tar -C o -- p/t
same_members dd.tar gdd.tar "-C o -- p/t"

# Two compression options: refused as GNU tar refuses them; the same one twice is fine.
for zz in -czjf "-cz --zstd -f" "-cJ -j -f" "--xz --gzip -cf"; do
	# shellcheck disable=SC2086
	"$T" $zz zz.tar s 2> zz.err; rc=$?
	# shellcheck disable=SC2086
	tar $zz gzz.tar s 2> gzz.err; grc=$?
	[ $rc = 2 ] && [ $grc = 2 ] || die "$zz: exit status $rc (GNU tar $grc), want 2"
	[ "$(head -1 zz.err)" = "sweep-tar: Conflicting compression options" ] &&
		[ "$(sed -n 2p zz.err)" = "Try 'sweep-tar --help' or 'sweep-tar --usage' for more information." ] &&
		[ "$(head -1 gzz.err)" = "tar: Conflicting compression options" ] &&
		[ "$(sed -n 2p gzz.err)" = "Try 'tar --help' or 'tar --usage' for more information." ] || { cat zz.err >&2; die "$zz: not GNU tar's message"; }
	[ ! -e zz.tar ] || die "$zz: an archive was written"
done
"$T" -czzf zz.tar s && "$T" -c --gzip -z -f zz.tar s || die "-z twice refused"

# -v and messages escape control bytes in names as GNU tar does, in C and in UTF-8.
mkdir -p ctl
for n in $'nl\nx' $'esc\033[31m' $'tab\tx' $'cr\rx' $'bell\a' 'back\slash' $'del\x7f' $'lat\xe9' $'utf\xc3\xa9' 'sp ace'; do
	: > "ctl/$n"
done
for loc in C C.UTF-8; do
	LC_ALL=$loc "$T" -cvf ctl.tar ctl | sort > ctl.$loc || die "-v ($loc)"
	LC_ALL=$loc tar -cvf gctl.tar ctl | sort > gctl.$loc
	diff gctl.$loc ctl.$loc >&2 || die "-v ($loc): not GNU tar's escapes"
	LC_ALL=C grep -q $'[\x01-\x1f\x7f]' ctl.$loc && die "-v ($loc): a raw control byte"
done
grep -qxF 'ctl/esc\033[31m' ctl.C && grep -qxF 'ctl/lat\351' ctl.C || die "-v: unexpected escapes"

# --exclude and -X: GNU tar's matching (unanchored, wildcards match '/', leading directories).
printf '%s\n' '*.o' 'dir/sub1' > patterns
for ex in "--exclude=*.o" "--exclude=b" "--exclude=s/a/b" "--exclude=dir/sub*" "--exclude=*/k" "-Xpatterns"; do
	"$T" -cf ex.tar "$ex" s || die "$ex"
	tar -cf gex.tar "$ex" s || die "GNU tar $ex"
	same_members ex.tar gex.tar "$ex"
done

# Compression filters: each decompresses cleanly and extracts to the same tree.
manifest s > s.want
for z in -z -j -J --zstd; do
	"$T" -c $z -f z.tar s || die "$z"
	case $z in
	-z) gzip -t < z.tar ;; -j) bzip2 -t < z.tar ;; -J) xz -t < z.tar ;; --zstd) zstd -q -t < z.tar ;;
	esac || die "$z: the compressed stream does not test clean"
	rm -rf zx && mkdir zx && tar -xpf z.tar -C zx || die "$z: GNU tar cannot extract"
	same_tree s.want zx/s
done

# --totals: GNU tar's line, whose count is the archive's size, and the plan's memory.
"$T" -c --totals -f t.tar s 2> totals || die "--totals"
size=$(stat -c %s t.tar)
grep -Eq "^Total bytes written: $size \([0-9.]+[KMG]?i?B, [0-9.]+[KMG]?i?B/s\)$" totals ||
	{ cat totals >&2; die "--totals: not GNU tar's line for $size bytes"; }
grep -Eq "plan memory: [0-9]+ bytes per file" totals || die "--totals: no plan memory per file"

# No writable TMPDIR: the directory entries wait in memory instead.
TMPDIR=/nonexistent "$T" -cf notmp.tar s || die "TMPDIR=/nonexistent"
same_members notmp.tar gnu.tar "TMPDIR=/nonexistent"

# The archive inside the tree it archives.
"$T" -cf s/self.tar s 2> self.err || die "archive inside the tree"
grep -qx "sweep-tar: s/self.tar: file is the archive; not dumped" self.err || die "archive archived into itself"
tar -tf s/self.tar | grep -q self.tar && die "the archive contains itself"
rm s/self.tar

# Hard links: the data once, then links.
head -c 100000 /dev/urandom > s/h1 && ln s/h1 s/c/h2 && ln s/h1 s/a/h3
"$T" -cvf h.tar s > /dev/null || die "hard links"
[ "$(tar -tvf h.tar | grep -c '^h.* link to ')" = 2 ] || die "hard links: not two link members"
[ "$(tar -tvf h.tar | grep -cE '^-.* s/(h1|c/h2|a/h3)$')" = 1 ] || die "hard links: data stored more than once"

# --one-file-system: a filesystem mounted inside the tree stays out, its mount point in.
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=1m sweeptartest s/empty 2> /dev/null; then
	echo inner > s/empty/inner
	"$T" -cf x1.tar --one-file-system s; rc=$?
	tar -cf gx1.tar --one-file-system s 2> /dev/null
	umount s/empty
	[ $rc = 0 ] || die "--one-file-system: exit status $rc"
	same_members x1.tar gx1.tar "--one-file-system"
	members x1.tar | grep -qx "s/empty/" || die "--one-file-system: mount point missing"
fi

# --progress: without a terminal, log lines and a summary last; on one
# (script), the line redrawn with files and bytes against the total, a rate
# and the time left. The test build's step clock moves 0.01 s at every
# reading, so redraws come however fast the machine is (tests/progress has
# the lines' shape and numbers).
head -c 8000000 /dev/urandom > s/big
"$T" -c --progress -f p.tar s 2> p.err || die "--progress"
[ "$(tail -n 1 p.err | cut -c1-16)" = "sweep-tar: done:" ] || die "--progress: no summary without a terminal"
if command -v script > /dev/null && [ -n "${SWEEP_TEST_HOOKS:-}" ]; then
	SWEEP_TEST_CLOCK=step:0.01 script -qec "$T -c --progress -f p2.tar s" /dev/null > p.tty 2>&1
	grep -aEq "sweep-tar: [0-9]+/(>=)?[0-9]+ files, [0-9.]+ [KMG]?i?B/(>=)?[0-9.]+ [KMG]?i?B( \([0-9]+%\))?, [0-9.]+ [KMG]?i?B/s, ETA " p.tty ||
		{ cat -v p.tty >&2; die "--progress: no progress line on a terminal"; }
	same_members p2.tar p.tar "--progress"
fi
ok "command line like GNU tar's"

# The archive's size is what GNU tar's would be: whole 10240-byte records,
# the last one padded (sweep-tar writes in 1 MB blocks of such records);
# compressed, no padding at all after the compressed stream. A tree of more
# than one block, so a short last block shows.
mkdir big && head -c 3000000 /dev/urandom > big/r1 && head -c 1234567 /dev/urandom > big/r2
"$T" -c -f big.tar big || die "archiving big/"
# GNU tar's size: the members and the two zero blocks, rounded up to a record
want=$(python3 -c '
import sys, tarfile
with tarfile.open(sys.argv[1]) as t:
    t.getmembers()
    print(-(-(t.offset + 1024) // 10240) * 10240)' big.tar) || die "python cannot read big.tar"
[ "$(stat -c %s big.tar)" = "$want" ] || die "archive of $(stat -c %s big.tar) bytes, GNU tar's padding gives $want"
"$T" -c -z -f - big | gzip -t || die "-z: the stream is not clean gzip (padding after it?)"
ok "archive size in whole records as GNU tar's"
finish
