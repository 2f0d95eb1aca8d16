# SPDX-License-Identifier: MIT
# Shared by the sweep-tar tests: source it first. It builds on the
# project's test dialect (tests/common/lib.sh: ok, fail, die, skip,
# on_exit, finish) and adds:
#   T          the sweep-tar under test
#   WORK       a scratch directory removed at exit
#   keep_on_fail          on failure, copy WORK (archives, trees) to a kept directory and say where
#   manifest DIR          tests/tar/manifest.py
#   same_tree WANT DIR    DIR's manifest equals the file WANT, or die with the diff
#   gnu_x ARCHIVE DIR [MEMBER...]   extract with GNU tar, everything restored
#   bsd_x ARCHIVE DIR [MEMBER...]   extract with bsdtar, everything restored
. "$TESTS_DIR/common/lib.sh"
set -u

T=${BUILD_ROOT:?}/utils/sweep-tar
HERE=${TESTS_DIR:?}/tar
[ -x "$T" ] || skip "no sweep-tar"
require_cmd bsdtar tar

scratch WORK sweep-tar-test

KEEP_ON_FAIL=
keep_on_fail() { KEEP_ON_FAIL=1; }

# The scratch directory is removed at exit; a failure that shows only now
# and then is kept for study: $SWEEP_TEST_KEEP, or kept/ in the build dir.
# (Registered after scratch: on_exit runs the last registered first.)
keep_work() {
	local base=${SWEEP_TEST_KEEP:-$BUILD_ROOT/kept} dir
	[ -n "$KEEP_ON_FAIL" ] && [ "$LIB_FAILS" -gt 0 ] || return 0
	mkdir -p "$base" && dir=$(mktemp -d "$base/$(basename "$0" .sh).XXXXXX") || return
	# cp cannot reach what lies deeper than PATH_MAX: that part is left out.
	cp -a "$WORK/." "$dir/" 2>/dev/null
	echo "kept: the archives and trees of this run are in $dir" >&2
}
on_exit keep_work

manifest() {
	python3 "$HERE/manifest.py" "$1"
}

same_tree() { # same_tree WANT DIR [LINE-PATTERN-TO-IGNORE]
	local ignore=${3:-^$} have="$WORK/have.$$"
	manifest "$2" > "$have" || die "manifest of $2"
	if ! diff <(grep -v -- "$ignore" "$1") <(grep -v -- "$ignore" "$have") > "$have.diff"; then
		cut -c1-300 "$have.diff" >&2
		die "$2 differs from the source"
	fi
}

gnu_x() { # gnu_x ARCHIVE DIR [MEMBER...]
	local a=$1 d=$2
	shift 2
	mkdir -p "$d"
	tar -x -f "$a" -C "$d" --xattrs --xattrs-include='*' --acls -p --numeric-owner \
		--warning=no-timestamp "$@" 2>"$WORK/gnu.err" ||
		{ cat "$WORK/gnu.err" >&2; die "GNU tar could not extract $a"; }
}

bsd_x() { # bsd_x ARCHIVE DIR [MEMBER...]
	local a=$1 d=$2
	shift 2
	mkdir -p "$d"
	# A UTF-8 locale: in C, bsdtar refuses UTF-8 names from any pax archive.
	LC_ALL=C.UTF-8 bsdtar -x -f "$a" -C "$d" -p --numeric-owner "$@" 2>"$WORK/bsd.err" ||
		{ cat "$WORK/bsd.err" >&2; die "bsdtar could not extract $a"; }
}
