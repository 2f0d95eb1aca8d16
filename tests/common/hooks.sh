# SPDX-License-Identifier: MIT
# Pausing a tool at a known point (utils/common/testhook.h) to change the
# tree under it, without timing guesses. Source it. The tools have the pause
# points only when built with -Dtest_hooks=true; then meson sets
# SWEEP_TEST_HOOKS=1 in the tests' environment.
#
#   have_hooks                        true when the pause points are compiled in
#   pause_at POINT CMD [ARGS...]      run CMD in the background with
#                                     SWEEP_TEST_PAUSE=POINT and wait (up to 60 s)
#                                     until it stops there; PAUSED_PID is its pid.
#                                     Returns 1 (and reaps it) if it ended first.
#   resume                            SIGCONT it and wait; returns its exit status.
#
# Redirect CMD's output by redirecting pause_at itself.

have_hooks() { [ -n "${SWEEP_TEST_HOOKS:-}" ]; }

pause_at() {
	local point=$1 i st; shift
	SWEEP_TEST_PAUSE=$point "$@" &
	PAUSED_PID=$!
	for ((i = 0; i < 6000; i++)); do
		st=$(awk '{print $3}' "/proc/$PAUSED_PID/stat" 2>/dev/null) || { wait "$PAUSED_PID"; return 1; }
		[ "$st" = T ] && return 0
		[ "$st" = Z ] && { wait "$PAUSED_PID"; return 1; }
		sleep 0.01
	done
	kill -9 "$PAUSED_PID" 2>/dev/null
	wait "$PAUSED_PID" 2>/dev/null
	return 1
}

resume() {
	local rc=0
	kill -CONT "$PAUSED_PID"
	wait "$PAUSED_PID" || rc=$?
	return $rc
}
