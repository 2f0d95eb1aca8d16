#!/bin/bash
# SPDX-License-Identifier: MIT
# --fake-super against real rsync, both ways: what one writes (placeholder
# files, user.rsync.%stat records, disguised xattr names) the other reads
# back as the same tree, and a rerun of either over the other's copy finds
# nothing to do. Then hostile records on the source: a clear error (rsync's
# message and exit 11) or a placeholder, never a real device or a real
# set-id bit.
. "$TESTS_DIR/sync/lib.sh"

command -v setfattr >/dev/null && command -v getfattr >/dev/null || skip "no setfattr/getfattr (attr)"
S=$W/src
mkdir -p "$S/d"
setfattr -n user.probe -v 1 "$W" 2>/dev/null || skip "no user xattrs on $W"

# a source as rsync --fake-super leaves one: records on files and placeholders
printf 'owned\n' >"$S/owned"
setfattr -n user.rsync.%stat -v "100640 0,0 5000:5002" "$S/owned"
printf 'suid\n' >"$S/suid"
chmod 755 "$S/suid"
setfattr -n user.rsync.%stat -v "104755 0,0 0:0" "$S/suid"
: >"$S/chr"
setfattr -n user.rsync.%stat -v "20644 41,67 0:0" "$S/chr"
: >"$S/blk"
setfattr -n user.rsync.%stat -v "60600 8,1 0:6" "$S/blk"
printf 'the/target' >"$S/plink"
setfattr -n user.rsync.%stat -v "120777 0,0 0:0" "$S/plink"
mkfifo "$S/fifo"
ln -s real-target "$S/link"
printf 'x\n' >"$S/d/x"
setfattr -n user.rsync.%stat -v "40700 0,0 7:7" "$S/d"
printf 'nl\n' >"$S/new
line"
setfattr -n user.rsync.%stat -v "100600 0,0 1:2" "$S/new
line"
setfattr -n user.plain -v value "$S/d/x"
setfattr -n user.rsync.trusted.kept -v disguised "$S/d/x"
ln "$S/owned" "$S/owned-link"

# xattrs as listed, with rsync's own record lines compared too
dump() { (cd "$1" && getfattr -R -d -m - -e hex . 2>/dev/null | grep -v '^$'); }
# what each side's reader lists: rsync's tls test helper is not installed, so list through rsync itself
listing() { rsync -nrlptgoDH --fake-super --numeric-ids --out-format='%i %B %U %G %l %n' "$1/" "$W/none/" | sort; }

case_begin "sweep-sync writes what rsync --fake-super writes"
rsync -aHX --fake-super "$S/" "$W/r/" || fail "rsync --fake-super copy"
"$SYNC" -aHX --fake-super "$S/" "$W/s/" || fail "sweep-sync --fake-super copy"
dump "$W/r" >"$W/r.x"
dump "$W/s" >"$W/s.x"
diff -u "$W/r.x" "$W/s.x" >&2 || fail "xattrs differ"
# rsync leaves a placeholder's time at its making (its reader takes a record's times from the file): not compared
M=("$TESTS_DIR/common/manifest.py" --fields=mode,owner,size,data,link,rdev,hl)
python3 "${M[@]}" "$W/r" >"$W/r.m" && python3 "${M[@]}" "$W/s" >"$W/s.m" || fail "manifests"
diff -u "$W/r.m" "$W/s.m" >&2 || fail "trees differ"
for f in owned suid d/x "new
line"; do
	[ "$(stat -c %y "$W/r/$f")" = "$(stat -c %y "$W/s/$f")" ] || fail "mtime of $f"
done
case_end

case_begin "no real device, FIFO, symlink or set-id bit is made"
for n in chr blk plink fifo link; do
	[ -f "$W/s/$n" ] && [ ! -L "$W/s/$n" ] || fail "$n is not a placeholder file"
done
[ -z "$(find "$W/s" -perm /6000)" ] || fail "a set-id bit reached a real mode: $(find "$W/s" -perm /6000)"
[ "$(cat "$W/s/plink")" = the/target ] && [ "$(cat "$W/s/link")" = real-target ] || fail "symlink placeholders"
[ "$(stat -c %i "$W/s/owned")" = "$(stat -c %i "$W/s/owned-link")" ] || fail "-H"
[ "$(getfattr --only-values -n user.rsync.trusted.kept "$W/s/d/x")" = disguised ] || fail "disguised name"
case_end

case_begin "each reads the other's copy as the source"
rsync -aHX --fake-super "$W/s/" "$W/rs/" || fail "rsync from sweep-sync's copy"
"$SYNC" -aHX --fake-super "$W/r/" "$W/sr/" || fail "sweep-sync from rsync's copy"
dump "$W/rs" >"$W/rs.x"
dump "$W/sr" >"$W/sr.x"
diff -u "$W/r.x" "$W/rs.x" >&2 || fail "rsync reading sweep-sync's copy"
diff -u "$W/r.x" "$W/sr.x" >&2 || fail "sweep-sync reading rsync's copy"
listing "$S" >"$W/l.src"
listing "$W/sr" >"$W/l.sr"
diff -u "$W/l.src" "$W/l.sr" >&2 || fail "the records as rsync lists them"
case_end

case_begin "a rerun over the other's copy finds nothing to change"
out=$("$SYNC" -aHXi --fake-super "$S/" "$W/r/") || fail "sweep-sync rerun"
[ -z "$out" ] || fail "sweep-sync over rsync's copy: $out"
out=$(rsync -aHXi --fake-super "$S/" "$W/s/") || fail "rsync rerun"
[ -z "$out" ] || fail "rsync over sweep-sync's copy: $out"
# a changed record is seen, itemized as rsync does, and rewritten
setfattr -n user.rsync.%stat -v "100600 0,0 5001:5002" "$S/owned"
rout=$(rsync -aHXi --fake-super "$S/" "$W/r/")
sout=$("$SYNC" -aHXi --fake-super "$S/" "$W/s/")
[ "$rout" = "$sout" ] && [ -n "$sout" ] || fail "changed record: rsync '$rout', sweep-sync '$sout'"
[ "$(getfattr --only-values -n user.rsync.%stat "$W/s/owned")" = "100600 0,0 5001:5002" ] || fail "record rewritten"
case_end

# hostile records: rsync's message and exit 11 (or, where rsync takes it, the same placeholder)
case_begin "corrupt records stop the run with exit 11, as rsync"
for rec in garbage "100644 0,0 5000" "100644 1,2 3:4 junk" "100644 0,0 99999999999:1" "100644 0,0 -1:0" \
	"200644 0,0 0:0" "40755 0,0 0:0" "" $'100644 0,0 1:1\n\033[2J'; do
	rm -rf "$W/h" "$W/hd"
	mkdir -p "$W/h"
	printf 'x' >"$W/h/f"
	setfattr -n user.rsync.%stat -v "$rec" "$W/h/f" 2>/dev/null || continue
	rc=0; "$SYNC" -a --fake-super "$W/h/" "$W/hd/" >/dev/null 2>"$W/h.err" || rc=$?
	grep -q 'runtime error:' "$W/h.err" && fail "sanitizer: $(cat "$W/h.err")"
	[ "$rc" = 11 ] && grep -q 'Corrupt user.rsync.%stat xattr attached to ".*h/f"' "$W/h.err" ||
		fail "record '$rec': exit $rc: $(cat "$W/h.err")"
	grep -q $'\033' "$W/h.err" && fail "record '$rec': a control byte reached the terminal"
	[ ! -e "$W/hd/f" ] || fail "record '$rec': copied anyway"
done
case_end

case_begin "a device record on a plain file gives a placeholder, never a device"
rm -rf "$W/h" "$W/hd"
mkdir -p "$W/h"
printf 'data' >"$W/h/f"
setfattr -n user.rsync.%stat -v "26755 1,3 0:0" "$W/h/f" # a set-id /dev/null
"$SYNC" -a --fake-super "$W/h/" "$W/hd/" || fail "device record copy"
[ -f "$W/hd/f" ] && [ ! -s "$W/hd/f" ] || fail "not an empty placeholder"
[ "$(stat -c %a "$W/hd/f")" = 755 ] || fail "real mode $(stat -c %a "$W/hd/f"), wanted 755"
[ "$(getfattr --only-values -n user.rsync.%stat "$W/hd/f")" = "26755 1,3 0:0" ] || fail "the record"
# without -D it is left out, as rsync's "skipping non-regular file"
rm -rf "$W/hd"
out=$("$SYNC" -rv --fake-super "$W/h/" "$W/hd/")
[ ! -e "$W/hd/f" ] && grep -q 'skipping non-regular file "f"' <<<"$out" || fail "without -D: $out"
# without --fake-super the record is only an xattr: a plain copy, no set-id
rm -rf "$W/hd"
"$SYNC" -a "$W/h/" "$W/hd/" || fail "plain copy"
[ "$(cat "$W/hd/f")" = data ] && [ -z "$(find "$W/hd" -perm /6000)" ] || fail "plain copy of a recorded file"
case_end

case_begin "--fake-super -A is refused"
rc=0; "$SYNC" -aA --fake-super "$S/" "$W/never/" 2>"$W/e" || rc=$?
[ "$rc" = 1 ] && grep -q "does not support --fake-super with -A" "$W/e" && [ ! -e "$W/never" ] || fail "-A: exit $rc: $(cat "$W/e")"
case_end

finish
