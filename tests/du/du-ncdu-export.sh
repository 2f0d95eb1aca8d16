#!/bin/bash
# SPDX-License-Identifier: MIT
# sweep-du --export (-o): ncdu's JSON export format (issue 28). On a tree
# with names holding quotes, backslashes, a newline, a tab and bytes that are
# not UTF-8, hard links across directories, a symlink, a FIFO, empty files,
# entries left out by --exclude and (as root) a tmpfs mounted inside and a
# directory uid 65534 cannot read:
#   - the export lists what ncdu's own export lists (ncdu -o -), field by
#     field: sizes, dev, ino/hlnkc/nlink, notreg, excluded, read_error;
#   - ncdu reads it back (ncdu -f FILE -o -) to the same entries;
#   - its totals, each hard-linked inode once, are du -B1 -s and
#     du -B1 -s --apparent-size;
#   - with a FILE, du's lines are still du's; with -, only the export is
#     on stdout; -o - with an option that shapes du's lines, and two
#     operands, are refused (exit 1).
set -u
. "$TESTS_DIR/du/lib.sh"
require_cmd ncdu python3
J="python3 $TESTS_DIR/du/ncdu_json.py"

t=$DU_TMP/t
mkdir -p "$t/sub/deep" "$t/other" "$t/skipdir" "$t/closed/in"
printf 'abc' > "$t/a"
ln "$t/a" "$t/sub/deep/hard"
head -c 70000 /dev/zero > "$t/sub/big"
: > "$t/empty"
printf 'q' > "$t/q\"uote\\back"
printf 'n' > "$t/$(printf 'new\nline\ttab')"
printf 'x' > "$t/$(printf 'bad\xff\xfe\x01')"
ln -s a "$t/sym"
mkfifo "$t/fifo"
echo x > "$t/skip.tmp"
echo x > "$t/skipdir/f"
echo x > "$t/closed/in/f"

MOUNTED=
if is_root && mount -t tmpfs -o size=1m sweep-du-ncdu "$t/other" 2>/dev/null; then
	MOUNTED=1
	on_exit "umount $t/other"
	printf 'on tmpfs' > "$t/other/f"
else
	printf 'not mounted' > "$t/other/f"
	skip_part "a filesystem mounted inside: needs root and tmpfs"
fi

# As root, uid 65534 (who cannot read closed/) where it can reach the files.
AS=
chmod 755 "$DU_TMP"
if is_root && command -v setpriv >/dev/null &&
	setpriv --reuid=65534 --regid=65534 --clear-groups "$SWEEP_DU" --version >/dev/null 2>&1; then
	AS="setpriv --reuid=65534 --regid=65534 --clear-groups"
	chmod -R a+rX "$t" && chmod 000 "$t/closed"
	touch "$DU_TMP/s.json" "$DU_TMP/n.json" && chmod 666 "$DU_TMP/s.json" "$DU_TMP/n.json"
elif ! is_root; then
	chmod 000 "$t/closed"
else
	skip_part "an unreadable directory: cannot drop privileges to uid 65534"
fi

for x in "" -x; do
	ex=(--exclude='*.tmp' --exclude=skipdir)
	rc=0; $AS "$SWEEP_DU" $x "${ex[@]}" --export="$DU_TMP/s.json" "$t" > "$DU_TMP/s.out" 2> "$DU_TMP/s.err" || rc=$?
	rc_du=0; $AS du $x "${ex[@]}" "$t" > "$DU_TMP/d.out" 2> /dev/null || rc_du=$?
	check "sweep-du $x --export=FILE: exit $rc as du's $rc_du" [ $rc = $rc_du ]
	check "sweep-du $x --export=FILE: du's lines on stdout" cmp -s "$DU_TMP/d.out" "$DU_TMP/s.out"
	$AS ncdu --ignore-config -0 $x "${ex[@]}" -o - "$t" > "$DU_TMP/n.json" 2> /dev/null || die "ncdu $x -o - failed"
	if ! $J entries "$DU_TMP/s.json" > "$DU_TMP/s.entries"; then
		fail "sweep-du $x: the export does not parse"
		continue
	fi
	$J entries "$DU_TMP/n.json" > "$DU_TMP/n.entries" || die "ncdu's export does not parse"
	if diff "$DU_TMP/n.entries" "$DU_TMP/s.entries" >&2; then
		ok "sweep-du $x: the entries of ncdu's own export ($(wc -l < "$DU_TMP/s.entries"))"
	else
		fail "sweep-du $x: entries differ from ncdu's export (< ncdu, > sweep-du)"
	fi
	ncdu --ignore-config -0 -f "$DU_TMP/s.json" -o - > "$DU_TMP/r.json" 2> "$DU_TMP/r.err" || fail "ncdu -f: $(head -2 "$DU_TMP/r.err")"
	$J entries "$DU_TMP/r.json" > "$DU_TMP/r.entries" && cmp -s "$DU_TMP/s.entries" "$DU_TMP/r.entries" ||
		fail "sweep-du $x: ncdu -f reads back other entries"
	want="$($AS du -B1 -s $x "${ex[@]}" "$t" 2>/dev/null | cut -f1) $($AS du -B1 -s --apparent-size $x "${ex[@]}" "$t" 2>/dev/null | cut -f1)"
	have=$($J totals "$DU_TMP/s.json")
	check "sweep-du $x: totals (disk, apparent) $have are du -B1's $want" [ "$have" = "$want" ]
done
grep -q '"excluded":"pattern"' "$DU_TMP/s.json" || fail "no entry marked excluded by a pattern"
[ -z "$MOUNTED" ] || grep -q '"excluded":"otherfs"' "$DU_TMP/s.json" || fail "-x: the tmpfs is not marked otherfs"
[ -z "$AS" ] || grep -q '"read_error":true' "$DU_TMP/s.json" || fail "the closed directory has no read_error"

rc=0; "$SWEEP_DU" -o - "${ex[@]}" "$t" > "$DU_TMP/o.json" 2> /dev/null || rc=$?
$J entries "$DU_TMP/o.json" > /dev/null && [ "$(head -c 5 "$DU_TMP/o.json")" = "[1,2," ] ||
	fail "-o -: standard output is not the export alone"
for bad in "-o - -s" "-o - --apparent-size" "-o - -h" "--export=$DU_TMP/x.json $t/sub"; do
	rc=0; "$SWEEP_DU" $bad "$t" > /dev/null 2> "$DU_TMP/bad.err" || rc=$?
	check "sweep-du $bad refused (exit $rc): $(head -1 "$DU_TMP/bad.err")" [ $rc = 1 ]
done
[ ! -e "$DU_TMP/x.json" ] || fail "refused, yet $DU_TMP/x.json was written"
chmod -R u+rwX "$t" 2>/dev/null
finish
