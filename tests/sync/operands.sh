#!/bin/bash
# SPDX-License-Identifier: MIT
# Several SRC operands, --include/--exclude-from/--include-from and -v's
# closing totals, each checked against rsync itself on the same trees.
. "$TESTS_DIR/sync/lib.sh"

mkdir -p "$W/a/sub" "$W/b/deep" "$W/c/sub"
printf 'a x\n' >"$W/a/x"
printf 'a y\n' >"$W/a/sub/y"
printf 'b x!\n' >"$W/b/x"
printf 'b z z z\n' >"$W/b/deep/z.c"
printf 'c x\n' >"$W/c/x"
printf 'c q\n' >"$W/c/sub/q.o"
printf 'c r\n' >"$W/c/sub/r.c"
printf 'lone\n' >"$W/file"
ln -s a-target "$W/a/lnk"
touch -d '2011-01-01 01:01:01' "$W/a/x" "$W/c/x"

# ---- several SRC operands ----
run_argv "SRC/ SRC FILE into a new DEST/" m1 -a -i ../a/ ../b ../file m1/
run_argv "again: nothing to do" m1 -a -i ../a/ ../b ../file m1/
[ -s "$W/s.out" ] && die "a re-run still itemized: $(cat "$W/s.out")"
run_argv "several SRCs, DEST without a slash" m2 -a -i ../a ../b m2
# a name that two operands give: the first operand's entry is used, directories merge
run_argv "shared names, a/ first" m3 -a -i ../a/ ../c/ m3
[ "$(cat "$W/s/m3/x")" = "a x" ] || die "the first operand's x was not kept"
run_argv "shared names, c/ first" m4 -a -i ../c/ ../a/ m4
[ "$(cat "$W/s/m4/x")" = "c x" ] || die "the first operand's x was not kept"
run_argv "two files into a directory" m5 -a -i ../a/x ../c/sub/q.o m5/
# a file and a directory of one name: the directory is kept, whichever operand comes first
mkdir -p "$W/p" "$W/q/n" && printf 'file\n' >"$W/p/n" && printf 'kid\n' >"$W/q/n/kid"
run_argv "a file, then a directory of the same name" m9 -a -i ../p/ ../q/ m9/
[ -d "$W/s/m9/n" ] || die "the directory lost to a file of the same name"
run_argv "a directory, then a file of the same name" m10 -a -i ../q/ ../p/ m10/

# --delete: only below what the operands name (all of DEST when one ends in '/')
mkdir -p "$W/r/m6/b" "$W/r/m7/b" "$W/s"
for f in m6/extra m6/b/extra m7/extra m7/b/extra; do printf 'extra\n' >"$W/r/$f"; done
cp -a "$W/r/m6" "$W/r/m7" "$W/s/"
run_argv "--delete, SRC/ among the operands" m6 -a -i --delete ../a/ ../b m6/
[ -e "$W/s/m6/extra" ] && die "--delete kept an extraneous file beside SRC/'s contents"
run_argv "--delete, operands without slashes" m7 -a -i --delete ../a ../b m7/
[ -e "$W/s/m7/extra" ] || die "--delete removed a file that no operand names"
[ -e "$W/s/m7/b/extra" ] && die "--delete kept an extraneous file below an operand"

# A missing operand: the others are copied, nothing is deleted, exit 23. rsync
# agrees for a missing SRC/ (its change_dir fails: "IO error encountered --
# skipping file deletion")...
mkdir -p "$W/r/m8" && printf 'keep\n' >"$W/r/m8/stale" && cp -a "$W/r/m8" "$W/s/"
run_argv "a missing SRC/ among others" m8 -a -i --delete ../a/x ../missing/ ../c/ m8/
[ -e "$W/s/m8/stale" ] || die "--delete ran after a missing SRC/"
grep -q "missing.*No such file or directory" "$W/s.err" || die "no error for the missing SRC/"
grep -q "IO error encountered -- skipping file deletion" "$W/s.out" || die "no word on the skipped deletions"
# ...but rsync 3.x deletes after a missing SRC without the slash (its link_stat
# failure is not an I/O error). sweep-sync deletes nothing there either: a
# mistyped operand must never cost the destination its files (sweep-sync(1)).
mkdir -p "$W/s/m8b" && printf 'keep\n' >"$W/s/m8b/stale"
rc=0
(cd "$W/s" && "$SYNC" -a -i --delete ../a/x ../missing ../c/ m8b/) >"$W/s.out" 2>"$W/s.err" || rc=$?
[ "$rc" = 23 ] || die "a missing SRC: exit $rc, not 23"
[ -e "$W/s/m8b/stale" ] || die "--delete ran after a missing SRC"
[ -e "$W/s/m8b/x" ] && [ -e "$W/s/m8b/sub/r.c" ] || die "the other operands were not copied"
grep -q 'link_stat .*missing.* failed: No such file or directory' "$W/s.err" || die "no error for the missing SRC"
grep -q "IO error encountered -- skipping file deletion" "$W/s.out" || die "no word on the skipped deletions"
ok "a missing SRC among others: exit 23, nothing deleted"

# ---- --include, --exclude-from, --include-from ----
run_argv "--include before --exclude" i1 -a -i --include='*/' --include='*.c' --exclude='*' ../c/ ../b/ i1/
run_argv "an include after the exclude does not help" i2 -a -i --exclude='*.c' --include='r.c' ../c/ i2/
run_argv "'+ ' in --exclude is an include" i3 -a -i --exclude='+ r.c' --exclude='*.c' ../c/ i3/
cat >"$W/rules" <<'EOF'
# a comment
; another

+ q.o
- *.o
/x
EOF
run_argv "--exclude-from with comments and prefixes" i4 -a -i --exclude-from="$W/rules" ../c/ ../a/ i4/
# the same rules from standard input (sweep-sync alone: rsync would read the same pipe)
(cd "$W/s" && "$SYNC" -a --exclude-from=- ../c/ ../a/ i4stdin/ <"$W/rules") || die "--exclude-from=-"
compare_trees "$W/r/i4" "$W/s/i4stdin" --no-root-time
printf 'deep/\nz.c\n' >"$W/incl"
run_argv "--include-from" i5 -a -i --include-from="$W/incl" --exclude='*' ../b/ i5/
run_argv "--exclude-from a missing file" i7 -a -i --exclude-from="$W/no-such-rules" ../c/ i7/
grep -q 'no-such-rules.*No such file or directory' "$W/s.err" || die "no error for a missing rules file"

# ---- -v: the file list and rsync's closing lines ----
# rsync's "sent"/"received" count its protocol; sweep-sync's "sent" is the file
# data written, so those numbers are compared with the data sizes, the rest with rsync.
OUT_FILTER='s/^sent .* bytes\/sec$/sent/; s/  speedup is .*$//; s/ (DRY RUN)$//'
sent_line() { grep -E '^sent [0-9,]+ bytes  received 0 bytes  [0-9,]+\.[0-9]{2} bytes/sec$' "$W/s.out" ||
	die "$1: no rsync-like 'sent' line: $(cat "$W/s.out")"; }
data=$(( $(stat -c %s "$W/a/x" "$W/a/sub/y" "$W/b/x" "$W/b/deep/z.c" "$W/file" | paste -sd+) ))
run_argv "-av, several SRCs" v1 -av ../a/ ../b ../file v1/
[ "$(sent_line -av | awk '{gsub(",", "", $2); print $2}')" = "$data" ] ||
	die "-av: 'sent' is not the $data data bytes written: $(cat "$W/s.out")"
grep -qE '^total size is [0-9,]+  speedup is [0-9]+\.[0-9]{2}$' "$W/s.out" || die "-av: speedup line"
run_argv "-av again: nothing sent" v1 -av ../a/ ../b ../file v1/
sent_line "-av again" | grep -q '^sent 0 bytes' || die "a re-run sent data"
grep -qx 'total size is [0-9,]*  speedup is inf' "$W/s.out" || die "a re-run's speedup: $(cat "$W/s.out")"
printf 'grown a lot\n' >>"$W/a/sub/y"
rm "$W/b/x"
run_argv "-avn --delete" v1 -avn --delete ../a/ ../b ../file v1/
grep -q ' (DRY RUN)$' "$W/s.out" || die "-n: no (DRY RUN) mark"
run_argv "-av --delete" v1 -av --delete ../a/ ../b ../file v1/
COMPARE_OPTS="--no-root-time --no-times" run_argv "-v without -r" v2 -v ../file v2
run_argv "-avi: itemized lines between the header and the totals" v4 -avi ../a/ ../b v4/
# a tree with large sizes, for the digit grouping of "total size"
mkdir -p "$W/big"
head -c 1234567 /dev/zero >"$W/big/zeros"
run_argv "-av, a large total" v3 -av ../big/ v3/
grep -qx 'total size is 1,234,567  speedup is 1.00' "$W/s.out" || die "large total: $(cat "$W/s.out")"

# ---- a SRC alone, and --list-only: rsync's listing, nothing written ----
printf 'esc\n' >"$W/c/e_"$'\033'"x"
mkfifo "$W/c/fifo"
chmod 4755 "$W/c/x"
run_argv "a SRC alone, -a" nowhere -a ../a/
run_argv "a SRC alone, no -r: one level" nowhere ../c/
run_argv "a SRC alone, the directory itself" nowhere ../c
run_argv "a SRC alone, -r without a slash" nowhere -r ../c
run_argv "a SRC alone, -rlD --no-h" nowhere -rlD --no-h ../c/
run_argv "a SRC alone, -hh" nowhere -a -hh ../big/
run_argv "a SRC alone, excluded names" nowhere -a --exclude='*.c' ../c/
run_argv "--list-only with several SRCs and a DEST" nowhere/ --list-only ../a ../file nowhere/
[ ! -e "$W/s/nowhere" ] || die "--list-only made DEST"
OUT_FILTER='s/^sent .* bytes\/sec$/sent/; s/  speedup is .*$//'
run_argv "a SRC alone, -v" nowhere -rv ../a/
OUT_FILTER=
run_argv "a SRC that is missing" nowhere -a ../no-such/

finish
