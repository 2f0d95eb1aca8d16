# SPDX-License-Identifier: MIT
# Shared by the sweep-tar tests: source it first.
#   T          the sweep-tar under test
#   WORK       a scratch directory removed at exit (tar_cleanup from your own trap)
#   fail MSG   print and exit 1 (after the EXIT trap); with keep_on_fail, keep WORK first
#   keep_on_fail          on failure, copy WORK (archives, trees) to a kept directory and say where
#   manifest DIR          tests/tar/manifest.py
#   same_tree WANT DIR    DIR's manifest equals the file WANT, or fail with the diff
#   gnu_x ARCHIVE DIR [MEMBER...]   extract with GNU tar, everything restored
#   bsd_x ARCHIVE DIR [MEMBER...]   extract with bsdtar, everything restored
set -u

T=${BUILD_ROOT:?}/utils/sweep-tar
HERE=${TESTS_DIR:?}/tar
[ -x "$T" ] || { echo "SKIP: no sweep-tar" >&2; exit 77; }
command -v bsdtar >/dev/null || { echo "SKIP: no bsdtar" >&2; exit 77; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sweep-tar-test.XXXXXX")
chmod 755 "$WORK"
tar_cleanup() {
	# Read-only directories from the test tree would stop rm.
	[ -n "$WORK" ] && chmod -R u+rwx "$WORK" 2>/dev/null
	[ -n "$WORK" ] && rm -rf "$WORK"
}
trap tar_cleanup EXIT

KEEP_ON_FAIL=
keep_on_fail() { KEEP_ON_FAIL=1; }

# The scratch directory is removed at exit; a failure that shows only now
# and then is kept for study: $SWEEP_TEST_KEEP, or kept/ in the build dir.
keep_work() {
	local base=${SWEEP_TEST_KEEP:-$BUILD_ROOT/kept} dir
	mkdir -p "$base" && dir=$(mktemp -d "$base/$(basename "$0" .sh).XXXXXX") || return
	# cp cannot reach what lies deeper than PATH_MAX: that part is left out.
	cp -a "$WORK/." "$dir/" 2>/dev/null
	echo "kept: the archives and trees of this run are in $dir" >&2
}

fail() {
	echo "FAIL: $*" >&2
	[ -n "$KEEP_ON_FAIL" ] && keep_work
	exit 1
}

manifest() {
	python3 "$HERE/manifest.py" "$1"
}

same_tree() { # same_tree WANT DIR [LINE-PATTERN-TO-IGNORE]
	local ignore=${3:-^$} have="$WORK/have.$$"
	manifest "$2" > "$have" || fail "manifest of $2"
	if ! diff <(grep -v -- "$ignore" "$1") <(grep -v -- "$ignore" "$have") > "$have.diff"; then
		cut -c1-300 "$have.diff" >&2
		fail "$2 differs from the source"
	fi
}

gnu_x() { # gnu_x ARCHIVE DIR [MEMBER...]
	local a=$1 d=$2
	shift 2
	mkdir -p "$d"
	tar -x -f "$a" -C "$d" --xattrs --xattrs-include='*' --acls -p --numeric-owner \
		--warning=no-timestamp "$@" 2>"$WORK/gnu.err" ||
		{ cat "$WORK/gnu.err" >&2; fail "GNU tar could not extract $a"; }
}

bsd_x() { # bsd_x ARCHIVE DIR [MEMBER...]
	local a=$1 d=$2
	shift 2
	mkdir -p "$d"
	# A UTF-8 locale: in C, bsdtar refuses UTF-8 names from any pax archive.
	LC_ALL=C.UTF-8 bsdtar -x -f "$a" -C "$d" -p --numeric-owner "$@" 2>"$WORK/bsd.err" ||
		{ cat "$WORK/bsd.err" >&2; fail "bsdtar could not extract $a"; }
}
