# SPDX-License-Identifier: MIT
# Shared by the sweep-du tests: run GNU du and sweep-du with the same
# arguments and require the same stdout bytes, the same stderr (with the
# program name swapped) and the same exit status.
# Checks, skips, cleanup and the exit status: tests/common/lib.sh.
. "$TESTS_DIR/common/lib.sh"

SWEEP_DU=${SWEEP_DU:-$BUILD_ROOT/utils/sweep-du}
[ -x "$SWEEP_DU" ] || die "no sweep-du at $SWEEP_DU"
require_cmd du
du --version 2>/dev/null | grep -q GNU || skip "du is not GNU du"

scratch DU_TMP du-test
# run as: AS="setpriv ..." du_same ARGS...
AS=${AS:-}

du_same() {
	local rc_e=0 rc_g=0
	$AS du "$@" >"$DU_TMP/exp.out" 2>"$DU_TMP/exp.err" || rc_e=$?
	$AS "$SWEEP_DU" "$@" >"$DU_TMP/got.out" 2>"$DU_TMP/got.err" || rc_g=$?
	sed -i "s/^du: /sweep-du: /; s/^Try 'du --help'/Try 'sweep-du --help'/" "$DU_TMP/exp.err"
	if ! cmp -s "$DU_TMP/exp.out" "$DU_TMP/got.out" || ! cmp -s "$DU_TMP/exp.err" "$DU_TMP/got.err" ||
		[ "$rc_e" != "$rc_g" ]; then
		fail "du $* (exit du=$rc_e sweep-du=$rc_g)"
		diff "$DU_TMP/exp.out" "$DU_TMP/got.out" | head -20
		diff "$DU_TMP/exp.err" "$DU_TMP/got.err" | head -10
		return 1
	fi
	ok "du $* ($(wc -l <"$DU_TMP/exp.out") lines, exit $rc_e)"
}

# The option sets every tree is checked with (one word list per line).
DU_OPTION_SETS=(
	""
	"-a"
	"-s"
	"-sh"
	"-ab"
	"-d1 -c"
	"--apparent-size --si"
	"-h"
	"--si -a"
	"-k -a"
	"-m"
	"-b"
	"-c -a --apparent-size"
	"-d 0"
	"--max-depth=2 -a"
	"-BK"
	"-B1M -a"
	"--block-size=KB"
	"-BKiB -a"
	"-S"
	"-l -a"
	"-L"
	"-L -a -h"
	"-P -a"
	"-x -a"
	"--exclude=*.txt -a"
	"--exclude=b -a"
	"--exclude=sub/f1* -c"
	"--inodes -a"
	"-t 9K -a"
	"-0 -a"
)

du_matrix() { # du_matrix OPERAND...
	local set
	for set in "${DU_OPTION_SETS[@]}"; do
		# shellcheck disable=SC2086
		du_same $set "$@"
	done
}
