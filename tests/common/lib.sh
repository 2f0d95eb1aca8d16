# SPDX-License-Identifier: MIT
# The shell test library: source it first, before anything that sets a trap.
# One meaning for every exit status, in every folder that uses it:
#
#   0    every check ran and passed (at least one check ran, and the test
#        reached `finish`)
#   1    a check failed, or the test stopped before `finish`
#   77   the whole case could not run here (`skip` before any check)
#
#   ok MSG              a check passed
#   fail MSG            a check failed: counted, the test goes on, the exit is 1
#   check DESC CMD...   run CMD; ok DESC when it succeeds, fail DESC otherwise
#   die MSG             a failure the test cannot go on from: fail and exit now
#   skip MSG            the case cannot run here (no root, no loop devices...):
#                       exit 77. Only before the first check: once part of the
#                       case has run, a skip would hide what ran; it is then a
#                       failure (use skip_part for an optional part).
#   skip_part MSG       say that an optional part of the case did not run
#   note MSG            a line of information
#   case_begin NAME     start a named group of `cond || fail MSG` lines;
#   case_end            ok NAME if none of them failed since case_begin
#   case_ok             true while nothing failed since case_begin (to stop a loop early)
#   on_exit CMD         run the shell command CMD at exit (pass, fail, skip or
#                       signal), the last registered first. Never `trap ... EXIT`
#                       in a test: register here.
#   scratch VAR [NAME]  make a temporary directory (mode 755), removed at exit
#                       even when read-only parts are left in it; its path in VAR
#   finish              print the tally and exit (0, or 1 if a check failed)
#   is_root, require_root, require_cmd CMD..., have_uring
#
# Counters live in this shell: call ok/fail/check in the test's shell, not in
# $(...) or a pipeline's subshell (their counts would be lost there).

LIB_CHECKS=0
LIB_FAILS=0
LIB_FINISHED=
LIB_SKIPPED=
LIB_CLEANUPS=()
LIB_CASE=
LIB_CASE_FAILS=0

ok() {
	LIB_CHECKS=$((LIB_CHECKS + 1))
	echo "ok: $*"
}

fail() {
	LIB_CHECKS=$((LIB_CHECKS + 1))
	LIB_FAILS=$((LIB_FAILS + 1))
	echo "FAIL: $*" >&2
}

check() { # check DESCRIPTION COMMAND...
	local what=$1
	shift
	if "$@"; then ok "$what"; else fail "$what"; fi
}

die() {
	fail "$*"
	exit 1
}

skip() {
	echo "SKIP: $*" >&2
	LIB_SKIPPED=1
	exit 77
}

skip_part() { echo "SKIP (part): $*"; }
note() { echo "== $*"; }

case_begin() {
	LIB_CASE=$1
	LIB_CASE_FAILS=$LIB_FAILS
}
case_ok() { [ "$LIB_FAILS" = "$LIB_CASE_FAILS" ]; }
case_end() {
	if [ -n "$LIB_CASE" ] && [ "$LIB_FAILS" = "$LIB_CASE_FAILS" ]; then ok "$LIB_CASE"; fi
	LIB_CASE=
}

on_exit() { LIB_CLEANUPS+=("$1"); }

scratch() { # scratch VAR [NAME]
	local d
	d=$(mktemp -d "${TMPDIR:-/tmp}/sweep-${2:-test}.XXXXXX") || die "mktemp"
	chmod 755 "$d"
	on_exit "chmod -R u+rwx '$d' 2>/dev/null; rm -rf '$d'"
	printf -v "$1" %s "$d"
}

finish() {
	echo "$LIB_CHECKS checks, $LIB_FAILS failed"
	LIB_FINISHED=1
	exit 0 # lib_exit decides the status
}

is_root() { [ "$(id -u)" = 0 ]; }
require_root() { is_root || skip "needs root"; }
require_cmd() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null || skip "no $c"
	done
}

# have_uring: libsweep resolves its io_uring backend here (the kernel allows
# io_uring and the library was built with it). A -uring variant that cannot
# have it would only run the syscall case again: it skips instead.
have_uring() {
	"${BUILD_ROOT:?}/tests/uring-probe"
}

lib_exit() {
	local rc=$? i
	set +eu
	trap - EXIT
	for ((i = ${#LIB_CLEANUPS[@]} - 1; i >= 0; i--)); do
		eval "${LIB_CLEANUPS[$i]}"
	done
	if [ "$LIB_FAILS" -gt 0 ]; then
		exit 1
	elif [ "$rc" = 77 ] && [ -n "$LIB_SKIPPED" ]; then
		if [ "$LIB_CHECKS" -gt 0 ]; then
			echo "FAIL: skipped after $LIB_CHECKS checks had run: a partial run is not a skip" >&2
			exit 1
		fi
		exit 77
	elif [ "$rc" != 0 ]; then
		[ "$rc" = 77 ] && rc=1 # a 77 that skip did not give is a failure
		echo "FAIL: stopped with status $rc before the end" >&2
		exit "$rc"
	elif [ -z "$LIB_FINISHED" ]; then
		echo "FAIL: the test exited before finish: its case did not run to the end" >&2
		exit 1
	elif [ "$LIB_CHECKS" = 0 ]; then
		echo "FAIL: no check ran" >&2
		exit 1
	fi
	exit 0
}
trap lib_exit EXIT
trap 'exit 130' INT TERM HUP
