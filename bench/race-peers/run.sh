#!/bin/bash
# SPDX-License-Identifier: MIT
# The races of tests/race, run against GNU cp, rsync and GNU tar beside
# sweep-cp, sweep-sync and sweep-tar, printed as one markdown table: exit
# status, whether a byte of the root-only secret reached the copy or archive,
# whether anything outside the destination changed, and the first message.
#
#   bench/race-peers/run.sh BUILD_DIR      # BUILD_DIR configured with -Dtest_hooks=true
#
# The sweep tools stop at their own pause point (after planning). The peers
# have none, so pause-open.so (LD_PRELOAD) stops them at their first open of
# the file named g, which is after they have stat'ed it: the same window.
# Run as root (the attacker is uid 65534). Nothing here is asserted: the
# assertions about sweep's tools are in tests/race.
set -u
BUILD=$(cd "${1:?usage: run.sh BUILD_DIR}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
export TESTS_DIR=$HERE/../../tests SWEEP_TEST_HOOKS=1
. "$TESTS_DIR/race/lib.sh"
SHIM=$RACE_TMP/pause-open.so
cc -shared -fPIC -O2 -o "$SHIM" "$HERE/pause-open.c" -ldl || exit 1

# peer_paused SWAP CMD...: run CMD (in $W) until it opens g, swap as the attacker, let it go on.
peer_paused() {
	local swap=$1 flag=$RACE_TMP/paused i; shift
	rm -f "$flag"
	(cd "$W" && RACE_PAUSE_NAME=g RACE_PAUSE_FLAG=$flag LD_PRELOAD=$SHIM "$@" >"$W/out/stdout" 2>"$W/out/stderr") &
	local pid=$!
	for ((i = 0; i < 500; i++)); do [ -e "$flag" ] && break; sleep 0.02; done
	[ -e "$flag" ] && as_attacker "$swap" && rm -f "$flag" || SWAPPED=no
	wait $pid
	RC=$?
}
row() { # row TOOL CASE
	local leaked=no changed=no msg
	secret_nowhere || leaked=YES
	[ "$(victim_sum)" = "$VICTIM_BEFORE" ] || changed=YES
	msg=$(grep -v '^$' "$W/out/stderr" | head -1 | sed "s|$W/||g; s/|/\\\\|/g" | cut -c1-110)
	[ "${SWAPPED:-yes}" = no ] && msg="(no pause: the swap did not happen) $msg"
	printf '| %s | %s | %s | %s | %s | %s |\n' "$1" "$2" "$RC" "$leaked" "$changed" "$msg"
}

S_FILE='rm src/d/g && ln -s ../../secret/shadow src/d/g'
S_DIR='mv src/d src/d.gone && mkdir src/d2 && ln -s ../secret src/d'
S_OTHER='printf evil >src/d/g.new && mv -f src/d/g.new src/d/g'
D_DIR='mv pub/dst/src/d pub/dst/src/d.old && ln -s ../../../victim pub/dst/src/d'

# run_case TOOL CASE SWAP [prepare]: one row
run_case() {
	local tool=$1 case=$2 swap=$3 prep=${4:-}
	world
	chmod 755 "$W/secret"
	ln "$W/secret/shadow" "$W/secret/g" 2>/dev/null # a g inside the secret directory too
	if [ -n "$prep" ]; then
		cmd_for "$tool" >/dev/null
		(cd "$W" && "${CMD[@]}" >/dev/null 2>&1)
		chown -R 65534:65534 "$W/pub/dst"
		printf 'g-data, changed\n' >"$W/src/d/g" # so that every tool writes g again
		VICTIM_BEFORE=$(victim_sum)
	fi
	cmd_for "$tool"
	SWAPPED=yes
	case $tool in
	sweep-*)
		cd "$W" || exit 1
		if pause_at plan "${CMD[@]}" >"$W/out/stdout" 2>"$W/out/stderr"; then
			as_attacker "$swap"
			resume
			RC=$?
		else
			RC=$? SWAPPED=no
		fi
		cd - >/dev/null || exit 1
		;;
	*) peer_paused "$swap" "${CMD[@]}" ;;
	esac
	row "$tool" "$case"
}

cmd_for() {
	case $1 in
	cp) CMD=(cp -a src pub/dst/) ;;
	rsync) CMD=(rsync -a src pub/dst/) ;;
	tar) CMD=(tar -cf out/a.tar src) ;;
	sweep-cp) CMD=("$BUILD/utils/sweep-cp" -a src pub/dst/) ;;
	sweep-sync) CMD=("$BUILD/utils/sweep-sync" -a src pub/dst/) ;;
	sweep-tar) CMD=("$BUILD/utils/sweep-tar" -cf out/a.tar src) ;;
	esac
}

echo "| tool | race | exit | secret in the output | outside changed | first message |"
echo "|---|---|---|---|---|---|"
for tool in cp sweep-cp rsync sweep-sync tar sweep-tar; do
	run_case $tool "source file -> symlink to a 0600 secret" "$S_FILE"
	run_case $tool "source directory -> symlink to the secret's directory" "$S_DIR"
	run_case $tool "source file -> another file" "$S_OTHER"
	case $tool in *tar) continue ;; esac
	run_case $tool "destination directory -> symlink outside" "$D_DIR" prep
done
