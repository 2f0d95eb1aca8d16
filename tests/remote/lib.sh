# SPDX-License-Identifier: MIT
# The remote tests' helpers. Source it; on top of tests/sync/lib.sh (SYNC,
# W, compare_trees, checks and exit statuses) it starts a throwaway sshd:
#
#   start_sshd          an sshd of its own on 127.0.0.1 at a free port, with a
#                       host key and a user key made for the test, for root;
#                       killed at exit whatever happens. Exit 77 (skip) where
#                       sshd cannot run (no openssh-server, not root).
#   RSH                 the remote shell command for -e (ssh with that key and
#                       port, no user configuration, no known_hosts)
#   RSYNC_PATH          the sweep-sync the far side runs (this build, with the
#                       test's sanitizer and device settings: sshd gives the
#                       remote command a clean environment)
#   HOST                root@127.0.0.1
#
# Root's password is locked on the machines this runs on: sshd then needs
# UsePAM for a key login; StrictModes is off for keys under /tmp.

. "$TESTS_DIR/sync/lib.sh"

HOST=root@127.0.0.1
SSHD=${SSHD:-/usr/sbin/sshd}

start_sshd() {
	local d=$W/ssh port pid tries
	is_root || skip "the throwaway sshd logs in as root"
	[ -x "$SSHD" ] || skip "no sshd ($SSHD; Debian: openssh-server)"
	require_cmd ssh ssh-keygen
	# the privilege separation directory sshd insists on (the package makes it at boot)
	[ -d /run/sshd ] || mkdir -p -m 0755 /run/sshd 2>/dev/null || skip "cannot make /run/sshd"
	mkdir -p "$d" && chmod 700 "$d"
	ssh-keygen -q -t ed25519 -N '' -C sweep-test-host -f "$d/host" || skip "ssh-keygen"
	ssh-keygen -q -t ed25519 -N '' -C sweep-test-user -f "$d/user" || skip "ssh-keygen"
	cp "$d/user.pub" "$d/authorized_keys"
	for tries in 1 2 3 4 5; do
		port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
		cat >"$d/sshd_config" <<EOF
Port $port
ListenAddress 127.0.0.1
HostKey $d/host
PidFile none
AuthorizedKeysFile $d/authorized_keys
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM yes
StrictModes no
PrintMotd no
AcceptEnv none
EOF
		"$SSHD" -D -e -f "$d/sshd_config" 2>"$d/log" &
		pid=$!
		on_exit "kill $pid 2>/dev/null; wait $pid 2>/dev/null"
		# one connection shared by every session (ControlMaster): a test makes dozens
		RSH="ssh -F /dev/null -p $port -i $d/user -o IdentitiesOnly=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR -o ControlMaster=auto -o ControlPath=$d/cm-%p -o ControlPersist=600"
		on_exit "$RSH -O exit $HOST 2>/dev/null"
		# ready when a login works (a wait for it, not a time limit on anything under test)
		local n
		for n in $(seq 1 100); do
			kill -0 "$pid" 2>/dev/null || break
			$RSH "$HOST" true 2>/dev/null && break 2
			sleep 0.1
		done
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		grep -q "Address already in use" "$d/log" || { cat "$d/log" >&2; skip "sshd does not run here"; }
	done
	kill -0 "$pid" 2>/dev/null || skip "no free port for sshd"
	SSHD_PORT=$port
	local envs=(SWEEP_DEVICE SWEEP_TEST_COPY ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS SWEEP_TEST_HOOKS)
	local e prefix=env
	for e in "${envs[@]}"; do
		[ -n "${!e:-}" ] && prefix+=" $e=${!e}"
	done
	RSYNC_PATH="$prefix $SYNC"
}

# The same command line for rsync and sweep-sync over the throwaway sshd, run
# from the same directory: rsync_remote LABEL ARGS..., sync_remote LABEL ARGS...
# (stdout in $W/LABEL.out, stderr in .err, the status in $W/LABEL.rc).
rsync_remote() {
	local label=$1 rc=0
	shift
	rsync -e "$RSH" "$@" >"$W/$label.out" 2>"$W/$label.err" || rc=$?
	echo "$rc" >"$W/$label.rc"
}
sync_remote() {
	local label=$1 rc=0
	shift
	"$SYNC" -e "$RSH" --rsync-path="$RSYNC_PATH" "$@" >"$W/$label.out" 2>"$W/$label.err" || rc=$?
	echo "$rc" >"$W/$label.rc"
	if grep -q 'runtime error:\|AddressSanitizer\|LeakSanitizer' "$W/$label.err"; then
		cat "$W/$label.err" >&2
		fail "$label: sanitizer report"
	fi
}
