# SPDX-License-Identifier: MIT
# The race suite's world and its checks. Source it from a race test.
#
# Each case builds a fresh world under $W:
#   secret/shadow     root 0600, a random token: no byte of it may reach a copy or an archive
#   victim/           root's files outside every tree handed to a tool: must never change
#   src/              the tree being read; src/ and src/d belong to the attacker (uid 65534)
#   pub/dst/          the destination; pub/ and (when a case says) dst/d belong to the attacker
# The tool runs as root and is paused at a known point (tests/common/hooks.sh);
# the attacker then swaps something as uid 65534; the tool goes on.
#
#   world                 build it
#   as_attacker CMD       run a shell command as uid 65534 in $W
#   victim_sum            a checksum of victim/ (names, types, modes, owners, contents)
#   check_outside         victim unchanged, secret not copied anywhere under pub/ or in $W/out*
#   expect NAME COND...   count a check
#   race_backends         the reader backends to run the cases on (uring only where usable)
#   finish                (tests/common/lib.sh) print the tally, exit 1 on any failure

. "$TESTS_DIR/common/lib.sh"
set -u
. "$TESTS_DIR/common/hooks.sh"

is_root || skip "the race suite runs as root (the attacker is uid 65534)"
have_hooks || skip "the tools were built without -Dtest_hooks=true"
require_cmd setpriv

scratch RACE_TMP race
ITERATIONS=${RACE_ITERATIONS:-1}

race_backends() {
	if have_uring; then
		echo uring syscall
	else
		skip_part "the io_uring reader: not available here" >&2
		echo syscall
	fi
}

world() {
	W=$RACE_TMP/w
	rm -rf "$W"
	mkdir -p "$W/secret" "$W/victim/sub" "$W/src/d" "$W/src/e" "$W/pub/dst" "$W/out"
	TOKEN=ROOTSECRET-$RANDOM$RANDOM$RANDOM
	printf '%s\n' "$TOKEN" >"$W/secret/shadow"
	chmod 600 "$W/secret/shadow"
	chmod 700 "$W/secret"
	printf 'precious\n' >"$W/victim/important.db"
	printf 'also precious\n' >"$W/victim/sub/notes"
	printf 'attacker-visible victim file\n' >"$W/victim/g" # same name as a source file
	for i in 1 2 3 4 5 6; do head -c $((i * 3000)) /dev/urandom >"$W/src/e/f$i"; done
	printf 'g-data\n' >"$W/src/d/g"
	printf 'h-data\n' >"$W/src/d/h"
	head -c 70000 /dev/urandom >"$W/src/d/big"
	chown -R 65534:65534 "$W/src/d"
	chown 65534:65534 "$W/src" "$W/pub"
	chmod 755 "$W" "$W/src" "$W/pub"
	VICTIM_BEFORE=$(victim_sum)
}

as_attacker() {
	(cd "$W" && setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "$1")
}

victim_sum() {
	(cd "$W/victim" && find . -printf '%p %y %m %u %g %s\n' | sort && find . -type f -print0 | sort -z |
		xargs -0 sha256sum) | sha256sum
}

expect() { # expect NAME COMMAND...
	local what=$1; shift
	if "$@"; then
		if [ "$ITERATIONS" = 1 ]; then ok "$CASE: $what"; else LIB_CHECKS=$((LIB_CHECKS + 1)); fi
	else
		fail "$CASE: $what"
	fi
}

secret_nowhere() {
	! grep -rqs --binary-files=text "$TOKEN" "$W/pub" "$W/out" 2>/dev/null
}

check_outside() {
	expect "nothing outside the destination changed" [ "$(victim_sum)" = "$VICTIM_BEFORE" ]
	expect "the secret shows up in no copy or archive" secret_nowhere
	expect "the secret is untouched" [ "$(cat "$W/secret/shadow")" = "$TOKEN" ]
	expect "no temporary left behind" [ -z "$(find "$W" -name '.sweep-tmp.*' 2>/dev/null)" ]
}

# run_paused POINT ATTACK CMD...: run CMD (as root, in $W) paused at POINT, let the
# attacker run ATTACK, resume; RC, OUT and ERR hold the outcome.
run_paused() {
	local point=$1 attack=$2 here=$PWD; shift 2
	RC=0
	cd "$W" || die "cd $W"
	if ! pause_at "$point" "$@" >"$RACE_TMP/out" 2>"$RACE_TMP/err"; then
		cd "$here" || die "cd $here"
		fail "$CASE: never paused at $point: $(cat "$RACE_TMP/err")"
		RC=255
		return
	fi
	as_attacker "$attack"
	resume || RC=$?
	cd "$here" || die "cd $here"
	OUT=$(cat "$RACE_TMP/out")
	ERR=$(cat "$RACE_TMP/err")
}

# have MESSAGE-REGEX: the tool's stderr says it
said() { grep -Eq -- "$1" <<<"$ERR"; }
same_file() { cmp -s "$1" "$2"; }
