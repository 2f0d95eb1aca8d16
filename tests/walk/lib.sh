# SPDX-License-Identifier: MIT
# Shared by the walk tests: source it, then call walk_setup BACKEND.
# Provides $W (walk-list), $T (a scratch directory removed on exit) and
# set comparison against find(1) on NUL-separated lists.
# Checks, skips, cleanup and the exit status: tests/common/lib.sh.
. "$TESTS_DIR/common/lib.sh"
set -u

walk_setup() { # walk_setup uring|syscall|threads
	# threads: io_uring stats, and the read-ahead threads forced on whatever the device class
	if [ "$1" = threads ]; then
		export SWEEP_BACKEND=uring SWEEP_WALK_THREADS=8
	else
		export SWEEP_BACKEND=$1
		unset SWEEP_WALK_THREADS
	fi
	W=$BUILD_ROOT/tests/walk/walk-list
	[ -x "$W" ] || die "no $W"
	T=$(mktemp -d "${TMPDIR:-/tmp}/sweep-walk.XXXXXX")
	chmod 755 "$T"
	on_exit walk_cleanup
	# A -uring variant where io_uring is refused would only repeat the syscall case: skip it.
	"$W" -0 --order=inode "$T" >/dev/null 2>"$T/.backend"
	walk_check_backend "$T/.backend"
	walk_check_ahead "$T/.backend"
	rm -f "$T/.backend"
}

# How many directories the walk's read-ahead threads loaded in the walk-list run whose stderr is in FILE.
walk_ahead_count() { # walk_ahead_count STDERR_FILE
	sed -n 's/^walk-list: backend=.* ahead=\([0-9]*\)$/\1/p' "$1" | tail -1
}

walk_cleanup() {
	[ -n "${SHM:-}" ] && rm -rf "$SHM"
	[ -n "${T:-}" ] || return 0
	chmod -R u+rwx "$T" 2>/dev/null
	rm -rf "$T"
}

# walk_fast_dir NAME: print a new directory for a big generated tree. Making
# and removing many files on a disk filesystem is most of such a test's time
# on a busy machine, and the walk does not care: use tmpfs when there is one.
# Call it in the test's own shell (not in $(...)): it sets SHM for cleanup.
walk_fast_dir() {
	if [ -z "${SHM:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ] && [ "$(stat -f -c %T /dev/shm)" = tmpfs ]; then
		SHM=$(mktemp -d /dev/shm/sweep-walk.XXXXXX)
	fi
	FAST=${SHM:-$T}/$1
	mkdir "$FAST"
}

# The backend walk-list reports must be the one asked for (uring only when the kernel allows it).
walk_check_backend() { # walk_check_backend STDERR_FILE
	local got
	got=$(sed -n 's/^walk-list: backend=\([a-z]*\) .*/\1/p' "$1" | tail -1)
	if [ "$SWEEP_BACKEND" = syscall ]; then
		[ "$got" = syscall ] || die "asked for syscall, walk used '$got'"
	else
		[ -n "$got" ] || die "no backend line in $1"
		# The -uring variant cannot run its case where io_uring is refused: a skip, not a pass.
		[ "$got" = uring ] || skip "io_uring is not available here"
	fi
}

# With the threads asked for, a C-SCAN walk (not order none or name) must have used them.
walk_check_ahead() { # walk_check_ahead STDERR_FILE
	[ -n "${SWEEP_WALK_THREADS:-}" ] || return 0
	local n
	n=$(walk_ahead_count "$1")
	[ "${n:-0}" -gt 0 ] || die "SWEEP_WALK_THREADS=$SWEEP_WALK_THREADS: no directory was read ahead"
}

# same_set A B: the NUL-separated lists A and B hold the same paths, each once.
same_set() {
	local a=$1 b=$2
	sort -z "$a" >"$a.sorted"
	sort -z "$b" >"$b.sorted"
	if ! cmp -s "$a.sorted" "$b.sorted"; then
		echo "--- $a vs $b (first differences):" >&2
		diff <(tr '\0\n' '\n?' <"$a.sorted") <(tr '\0\n' '\n?' <"$b.sorted") | head -20 >&2
		return 1
	fi
	local dups
	dups=$(sort -z "$b" | uniq -zd | tr '\0' '\n' | head -5)
	[ -z "$dups" ] || { echo "duplicates in $b: $dups" >&2; return 1; }
	return 0
}

# same_seq A B: the two lists are identical, in order.
same_seq() {
	if ! cmp -s "$1" "$2"; then
		echo "--- order differs: $1 vs $2" >&2
		diff <(tr '\0\n' '\n?' <"$1") <(tr '\0\n' '\n?' <"$2") | head -20 >&2
		return 1
	fi
}
