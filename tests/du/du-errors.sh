#!/bin/bash
# SPDX-License-Identifier: MIT
# Failures: an unreadable directory (at the top and deep inside), a
# directory that can be listed but not entered, a file operand that does not
# exist. sweep-du must print GNU du's messages, carry on, print the same
# sizes and exit 1 as du does. Run as an unprivileged user (root reads
# anything): as root the check drops to uid 65534 with setpriv.
set -u
. "$TESTS_DIR/du/lib.sh"

if [ "$(id -u)" = 0 ]; then
	command -v setpriv >/dev/null || skip "root without setpriv"
	AS="setpriv --reuid=65534 --regid=65534 --clear-groups"
	chmod 755 "$DU_TMP"
	# uid 65534 may not reach the build (a checkout under /root): then stay
	# root but without the capabilities that bypass permissions
	if ! $AS "$SWEEP_DU" --version >/dev/null 2>&1; then
		AS="setpriv --bounding-set=-dac_override,-dac_read_search"
		$AS "$SWEEP_DU" --version >/dev/null 2>&1 || skip "cannot drop privileges"
	fi
	echo "unprivileged runs: $AS"
fi

t=$DU_TMP/t
mkdir -p "$t/ok/deep/er" "$t/closed" "$t/listonly/inner" "$t/noexec" "$t/ok/deep/er/locked/x"
echo data >"$t/ok/file"
echo data >"$t/closed/hidden"
echo data >"$t/listonly/inner/f"
echo data >"$t/ok/deep/er/locked/x/f"
# names that coreutils quotes in every way it knows ('', "", $'\n', $'\377', '\'')
mkdir -p "$t/names"
for n in "a b" "it's" $'n\nl' $'bad\xffutf8' $'\xff' $'x\n' 'a"b' 'a$b' "it's \$x" 'back\slash' \
	$'tab\there' "it's"$'\n' '~home' 'a*b' 'é' '{' 'x#y' $'\x01ctl' $'del\x7f' "'" \
	"it's é" 'é$x' $'\xc3' $'a\xe2\x80' $'\xe2\x80\x8b'; do
	mkdir -p "$t/names/$n/sub"
	chmod 000 "$t/names/$n"
done
chmod 000 "$t/closed" "$t/ok/deep/er/locked"
chmod 644 "$t/listonly"   # readable, not searchable
chmod 311 "$t/noexec"     # searchable, not readable
chmod -R a+rX "$t/ok/file" "$t/ok/deep/er/locked/x" 2>/dev/null

cd "$t" || die "cd"
du_same .
du_same -a .
du_same -s closed ok nope
du_same -c closed
du_same -a closed/hidden ok closed/nothing-here
du_same -a listonly
du_same -sh noexec
du_same -a --exclude=locked ok
du_same -x -a .
du_same -L -a .
du_same -a names
du_same ok/ ok// ./ok/deep/
# in a UTF-8 locale printable characters stay as they are, and option errors get curved quotes
if locale -a 2>/dev/null | grep -qix 'c\.utf-\?8'; then
	LC_ALL=C.UTF-8 du_same -a names
	LC_ALL=C.UTF-8 du_same -d x .
	LC_ALL=C.UTF-8 du_same --time=bogus .
	LC_ALL=C.UTF-8 du_same -B xyz .
	LC_ALL=C.UTF-8 du_same -h -a --time --time-style=+%b ok
fi
cd names || die "cd"
du_same -- *
du_same '~home' '{'
cd .. || die "cd"

# write errors: stdout on a full device, and closed
for how in full closed; do
	for prog in du "$SWEEP_DU"; do
		rc=0
		if [ $how = full ]; then
			"$prog" -a ok >/dev/full 2>"$DU_TMP/$how.$(basename "$prog")" || rc=$?
		else
			"$prog" -a ok >&- 2>"$DU_TMP/$how.$(basename "$prog")" || rc=$?
		fi
		echo "exit $rc" >>"$DU_TMP/$how.$(basename "$prog")"
	done
	sed -i 's/^du: /sweep-du: /' "$DU_TMP/$how.du"
	check "stdout $how: same messages and exit status as du" cmp -s "$DU_TMP/$how.du" "$DU_TMP/$how.sweep-du" ||
		diff "$DU_TMP/$how.du" "$DU_TMP/$how.sweep-du"
done

# the messages must really be there (a du that printed none would pass the comparisons above only if both failed)
rc=0
$AS "$SWEEP_DU" . >/dev/null 2>"$DU_TMP/err" || rc=$?
check "exit 1 with unreadable directories" [ "$rc" = 1 ]
check "a 'cannot read directory' message" \
	grep -q "^sweep-du: cannot read directory './closed': Permission denied$" "$DU_TMP/err" || cat "$DU_TMP/err"
finish
