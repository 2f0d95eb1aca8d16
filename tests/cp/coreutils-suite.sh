#!/bin/bash
# SPDX-License-Identifier: MIT
# coreutils' own tests/cp and tests/du run against sweep-cp and sweep-du
# (issue 28). Not part of the meson suites: it needs a coreutils source
# tree (apt-get source coreutils, or a release tarball), which is never
# committed here.
#
#   tests/cp/coreutils-suite.sh COREUTILS_SRC gnu|sweep OUTDIR [TEST...]
#
# TEST: tests/cp/abuse.sh ... (default: every tests/cp/*.sh and tests/du/*
# .sh/.pl). SWEEP_BUILD: the build directory (default: build). Run as root:
# the tests that must run as non-root (skip_if_root_) run again as nobody
# and their result is that run's. cp and du in the source tree's src/ are
# a wrapper that runs the chosen tool as "cp"/"du" and keeps each run's
# stderr in OUTDIR/calls/TEST.err, so a test that calls an option the tool
# lacks can be told apart (OUTDIR/unsupported). Results: OUTDIR/results
# (TEST PASS|FAIL|SKIP|ERROR), logs in OUTDIR/logs; a summary is printed.
set -u
top=$(cd "${1:?coreutils source}" && pwd) mode=${2:?gnu or sweep} out=${3:?outdir}
shift 3
build=$(cd "${SWEEP_BUILD:-build}" && pwd)
ver=$(cat "$top/.tarball-version" 2>/dev/null || echo 9.1)
case $mode in
gnu) cp_bin=$(command -v cp) du_bin=$(command -v du) ;;
sweep) cp_bin=$build/utils/sweep-cp du_bin=$build/utils/sweep-du ;;
*) echo "gnu or sweep" >&2; exit 2 ;;
esac
mkdir -p "$out/logs" "$out/calls" "$out/bin"
out=$(cd "$out" && pwd)
chmod 755 "$out" "$out/calls" "$out/bin"

# the wrapper: the tool under the name cp/du, its stderr kept for the classification
for t in cp du; do
	bin=$cp_bin
	[ $t = du ] && bin=$du_bin
	cat >"$out/bin/$t" <<W
#!/bin/bash
# (a test that runs cp with a PATH of its own, preserve-gid.sh: no mktemp, no classification)
command -v mktemp >/dev/null 2>&1 && command -v cat >/dev/null 2>&1 || exec -a $t "$bin" "\$@"
e=\$(mktemp) || exit 1
(exec -a $t "$bin" "\$@") 2>"\$e"
rc=\$?
cat "\$e" >&2
[ -n "\${SUITE_CALLS:-}" ] && cat "\$e" >>"\$SUITE_CALLS" 2>/dev/null
rm -f "\$e"
exit \$rc
W
	chmod 755 "$out/bin/$t"
done
cat >"$out/config.h" <<'H'
#define USE_ACL 1
#define USE_XATTR 1
#define HAVE_LINKAT 1
#undef LINKAT_SYMLINK_NOTSUP
#define HAVE_UTIMENSAT 1
#define HAVE_LUTIMES 1
H

run_tests() { # run_tests RESULTS AS_NOBODY TEST...
	local results=$1 nobody=$2 t name log rc st
	shift 2
	: >"$results"
	for t in "$@"; do
		name=${t#tests/}
		log="$out/logs/${name//\//-}${nobody:+.nobody}.log"
		calls="$out/calls/${name//\//-}.err"
		: >"$calls" && chmod 666 "$calls"
		(
			cd "$top" || exit 99
			# shellcheck disable=SC1091
			. tests/lang-default
			export TMPDIR=/tmp VERSION=$ver abs_top_builddir=$top abs_top_srcdir=$top abs_srcdir=$top \
				built_programs="$(dpkg -L coreutils | grep 'bin/' | xargs -n1 basename | tr '\n' ' ') ginstall" \
				fail=0 host_os=linux-gnu srcdir=. top_srcdir=. CONFIG_HEADER=$out/config.h \
				CU_TEST_NAME="tests,${name//\//-}" CC=cc AWK=awk EGREP="grep -E" EXEEXT= MAKE=make \
				PACKAGE_VERSION=$ver PERL=perl SHELL=/bin/bash SUITE_CALLS=$calls
			export PATH="$top/src:$PATH" RUN_EXPENSIVE_TESTS=yes RUN_VERY_EXPENSIVE_TESTS=no
			run=()
			[ -n "$nobody" ] && run=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
			case $t in
			*.pl) timeout 300 "${run[@]}" perl -w -Itests -MCuSkip -MCoreutils -M"CuTmpdir qw($t)" "$t" ;;
			*) timeout 300 "${run[@]}" /bin/bash "$t" ;;
			esac
		) >"$log" 2>&1 </dev/null 9>&2
		rc=$?
		case $rc in 0) st=PASS ;; 77) st=SKIP ;; 99) st=ERROR ;; *) st=FAIL ;; esac
		echo "$name $st" >>"$results"
	done
}

cd "$top" || exit 1
tests=("$@")
[ ${#tests[@]} = 0 ] && tests=(tests/cp/*.sh tests/du/*.sh tests/du/*.pl)
ln -sfn "$out/bin/cp" src/cp
ln -sfn "$out/bin/du" src/du
trap 'rm -f "$top/src/cp" "$top/src/du"' EXIT
run_tests "$out/results.root" "" "${tests[@]}"
mapfile -t nonroot < <(grep -l "skip_if_root_\|must be run as non-root" "${tests[@]}" 2>/dev/null)
[ ${#nonroot[@]} -gt 0 ] && run_tests "$out/results.nobody" 1 "${nonroot[@]}"
touch "$out/results.nobody"
awk 'NR==FNR {r[$1]=$2; next} { if ($1 in r) $2=r[$1]; print }' "$out/results.nobody" "$out/results.root" \
	>"$out/results"
# a test that made the tool say an option is unknown or refused calls an option it lacks
: >"$out/unsupported"
for f in "$out"/calls/*.err; do
	grep -qE "(unrecognized|invalid) option|option '[^']*' is ambiguous" "$f" &&
		basename "$f" .err | sed 's/-/\//' >>"$out/unsupported"
done
awk '{n[$2]++} END {for (k in n) printf "%s %d  ", k, n[k]; print ""}' "$out/results"
