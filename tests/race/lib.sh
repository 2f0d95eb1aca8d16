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
#   race_done             print the tally, exit 1 on any failure

set -u
. "$TESTS_DIR/common/hooks.sh"

[ "$(id -u)" = 0 ] || { echo "SKIP: the race suite runs as root (the attacker is uid 65534)"; exit 77; }
have_hooks || { echo "SKIP: the tools were built without -Dtest_hooks=true"; exit 77; }
command -v setpriv >/dev/null || { echo "SKIP: no setpriv"; exit 77; }

RACE_TMP=$(mktemp -d "${TMPDIR:-/tmp}/sweep-race.XXXXXX")
chmod 755 "$RACE_TMP"
trap 'rm -rf "$RACE_TMP"' EXIT
RACE_CHECKS=0
RACE_FAILS=0
ITERATIONS=${RACE_ITERATIONS:-1}

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
	RACE_CHECKS=$((RACE_CHECKS + 1))
	if "$@"; then
		[ "$ITERATIONS" = 1 ] && echo "ok: $CASE: $what"
	else
		echo "FAIL: $CASE: $what"
		RACE_FAILS=$((RACE_FAILS + 1))
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
	cd "$W" || exit 1
	if ! pause_at "$point" "$@" >"$RACE_TMP/out" 2>"$RACE_TMP/err"; then
		cd "$here" || exit 1
		echo "FAIL: $CASE: never paused at $point: $(cat "$RACE_TMP/err")"
		RACE_FAILS=$((RACE_FAILS + 1))
		RC=255
		return
	fi
	as_attacker "$attack"
	resume || RC=$?
	cd "$here" || exit 1
	OUT=$(cat "$RACE_TMP/out")
	ERR=$(cat "$RACE_TMP/err")
}

# have MESSAGE-REGEX: the tool's stderr says it
said() { grep -Eq -- "$1" <<<"$ERR"; }
same_file() { cmp -s "$1" "$2"; }

race_done() {
	echo "$RACE_CHECKS checks, $RACE_FAILS failed ($ITERATIONS iteration(s))"
	[ "$RACE_FAILS" = 0 ]
}
