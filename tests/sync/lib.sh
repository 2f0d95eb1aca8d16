# SPDX-License-Identifier: MIT
# Shared helpers for the sweep-sync tests. Source it; it sets:
#   SYNC   the sweep-sync binary
#   W      a fresh work directory, removed at exit (unless KEEP=1)
# and defines run_both/compare_trees for side-by-side runs against rsync.
# Checks, skips, cleanup and the exit status: tests/common/lib.sh.

. "$TESTS_DIR/common/lib.sh"
set -u
SYNC=${BUILD_ROOT:?BUILD_ROOT not set}/utils/sweep-sync
# What rsync -a keeps (no atimes, block counts or holes), times as rsync compares them.
MANIFEST=("$TESTS_DIR/common/manifest.py" --fields=mode,owner,size,mtime,data,link,rdev,xattr,hl --mtime=file-ns)
export LC_ALL=C

require_cmd rsync python3
[ -x "$SYNC" ] || die "$SYNC not built"

W=$(mktemp -d "${TMPDIR:-/tmp}/sweep-sync-test.XXXXXX")
sync_cleanup() {
	chmod -R u+rwX "$W" 2>/dev/null
	[ "${KEEP:-0}" = 1 ] || rm -rf "$W"
}
on_exit sync_cleanup

# compare_trees A B [manifest options]: identical entries, contents, stat fields, links, xattrs, ACLs.
compare_trees() {
	local a=$1 b=$2; shift 2
	if [ ! -e "$a" ] && [ ! -L "$a" ] && [ ! -e "$b" ] && [ ! -L "$b" ]; then
		return 0 # neither tool made it
	fi
	python3 "${MANIFEST[@]}" "$@" "$a" >"$W/manifest.a" || { fail "manifest of $a"; return 1; }
	python3 "${MANIFEST[@]}" "$@" "$b" >"$W/manifest.b" || { fail "manifest of $b"; return 1; }
	if ! diff -u "$W/manifest.a" "$W/manifest.b" >"$W/manifest.diff"; then
		head -40 "$W/manifest.diff" >&2
		fail "trees $a and $b differ"
		return 1
	fi
}

# run_argv LABEL DSTARG ARGS...: run rsync ARGS in $W/r and sweep-sync ARGS
# in $W/s (relative paths, so messages match), then require the same exit
# status, the same stdout lines in the same order (as sets with rsync's
# --delete: see below; both outputs go through the sed script $OUT_FILTER
# first, when set) and
# identical trees at DSTARG under $W/r and $W/s (compared with the manifest
# options in $COMPARE_OPTS, default --no-root-time: DEST's own time is only
# rsync's when SRC ends in '/').
run_argv() {
	local label=$1 dstarg=$2; shift 2
	local rr=0 sr=0
	mkdir -p "$W/r" "$W/s"
	(cd "$W/r" && rsync "$@") >"$W/r.out" 2>"$W/r.err" || rr=$?
	(cd "$W/s" && "$SYNC" "$@") >"$W/s.out" 2>"$W/s.err" || sr=$?
	if grep -q 'runtime error:' "$W/s.err"; then
		cat "$W/s.err" >&2
		fail "$label: sanitizer report"
		return 1
	fi
	if [ "$rr" != "$sr" ]; then
		cat "$W/r.err" "$W/s.err" >&2
		fail "$label: rsync exit $rr, sweep-sync exit $sr"
		return 1
	fi
	# The lines in rsync's order. Only rsync's --delete (--delete-during,
	# also what --delete-excluded alone turns on) interleaves its
	# generator's deletions with its sender's lines as timing has it;
	# sweep-sync deletes after the transfer and prints as --delete-after
	# does, so there the lines are compared as sets.
	local order=${OUT_ORDER:-cat} a during=0 excl=0 when=0
	for a in "$@"; do
		case $a in
		--delete | --del | --delete-during) during=1 ;;
		--delete-excluded) excl=1 ;;
		--delete-after | --delete-before | --delete-delay) when=1 ;;
		esac
	done
	{ [ "$during" = 1 ] || { [ "$excl" = 1 ] && [ "$when" = 0 ]; }; } && order=sort
	sed -e "${OUT_FILTER:-}" "$W/r.out" | $order >"$W/r.sorted"
	sed -e "${OUT_FILTER:-}" "$W/s.out" | $order >"$W/s.sorted"
	if ! diff -u "$W/r.sorted" "$W/s.sorted" >"$W/out.diff"; then
		cat "$W/out.diff" >&2
		fail "$label: output differs from rsync's ($([ $order = sort ] && echo sorted || echo in order))"
		return 1
	fi
	# shellcheck disable=SC2086
	compare_trees "$W/r/$dstarg" "$W/s/$dstarg" ${COMPARE_OPTS---no-root-time} || return 1
	ok "$label: exit $sr, $(wc -l <"$W/s.out") output lines, same tree and output as rsync"
}

# run_args LABEL SRCARG DSTARG FLAGS...: run_argv for one SRC.
run_args() {
	local label=$1 srcarg=$2 dstarg=$3; shift 3
	run_argv "$label" "$dstarg" "$@" "$srcarg" "$dstarg"
}

# run_both LABEL FLAGS...: sync $W/src/ into dst/ with both tools.
run_both() {
	local label=$1; shift
	COMPARE_OPTS= run_args "$label" "$W/src/" dst/ "$@"
}

# Wait until process $1 is stopped (state T), at most ~60 s.
wait_stopped() {
	local pid=$1 i
	for ((i = 0; i < 6000; i++)); do
		local st
		st=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) || return 1
		[ "$st" = T ] && return 0
		sleep 0.01
	done
	return 1
}
