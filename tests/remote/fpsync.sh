#!/bin/bash
# SPDX-License-Identifier: MIT
# fpsync (fpart's parallel driver) with two SSH workers runs sweep's tools as
# it runs its own: in tar mode (TOOL cf - ... | TOOL xpf -, -T sweep-tar) and
# in rsync mode (-T sweep-sync, given -lptgoD -v --numeric-ids -d
# --files-from=PART --from0 SRC/ DST/). Both workers are this machine through
# the throwaway sshd under two names, so each job really runs in an ssh
# session; the result of each mode is compared with plain fpsync (GNU tar,
# rsync; its jobs run here) on the same tree, and with the source. Skips (77) without fpsync or sshd.
. "$TESTS_DIR/remote/lib.sh"

require_cmd fpsync fpart tar
start_sshd

# fpsync runs "ssh HOST CMD" from PATH with no options: a wrapper gives it the
# test's key and port, and sends both worker names (w1, w2) to 127.0.0.1.
mkdir -p "$W/bin"
SSH_BIN=$(command -v ssh)
printf '#!/bin/sh\nexec %s %s -o HostName=127.0.0.1 "$@"\n' "$SSH_BIN" "${RSH#ssh }" >"$W/bin/ssh"
chmod +x "$W/bin/ssh"
export PATH=$W/bin:$PATH
WORKERS="root@w1 root@w2"

# The tools as the workers run them (-T wants one absolute path): the test's
# environment, which sshd does not pass, and a note of each call, with the ssh
# session it came through.
TAR=${BUILD_ROOT}/utils/sweep-tar
[ -x "$TAR" ] || die "$TAR not built"
for t in sweep-tar:$TAR sweep-sync:$SYNC; do
	cat >"$W/bin/${t%%:*}" <<EOF
#!/bin/sh
echo "\${SSH_CONNECTION:+ssh} ${t%%:*} \$*" >>"$W/calls"
exec ${RSYNC_PATH% *} ${t#*:} "\$@"
EOF
	chmod +x "$W/bin/${t%%:*}"
done

# A tree of several partitions (-f 8: at most 8 entries a job): nested
# directories, an empty one, a symlink, names with spaces and quotes, another
# owner, odd modes and times.
S=$W/src
mkdir -p "$S/a/b/c" "$S/empty" "$S/sp ace" "$S/q'uote"
for i in $(seq 1 12); do
	head -c $((i * 3000)) /dev/urandom >"$S/a/f$i"
	echo "$i" >"$S/a/b/g$i"
done
echo deep >"$S/a/b/c/deep"
echo s >"$S/sp ace/file with spaces"
echo q >"$S/q'uote/it's"
ln -s f1 "$S/a/link"
ln -s ../nowhere "$S/a/b/dangling"
chown -R 1234:5678 "$S/a/b"
chmod 0640 "$S/a/f3"
chmod 0750 "$S/a/b/c"
touch -h -d '2001-02-03 04:05:06.789' "$S/a/link" "$S/a/f2" "$S/empty"
touch -d '2002-03-04 05:06:07' "$S/a/b/c"

# run_fpsync LABEL DST MODE [-T TOOL]: fpsync with both workers (LOCAL=1: none,
# for the references, whose result does not depend on where the jobs run).
run_fpsync() {
	local label=$1 dst=$2 rc=0 workers=(-w "$WORKERS")
	shift 2
	[ "${LOCAL:-0}" = 1 ] && workers=()
	mkdir -p "$W/$label.tmp" "$W/$label.shared"
	fpsync -n 2 -f 8 "${workers[@]}" -t "$W/$label.tmp" -d "$W/$label.shared" "$@" "$S/" "$dst/" \
		>"$W/$label.out" 2>"$W/$label.err" || rc=$?
	# every job's own stderr (fpsync's job control notice aside)
	find "$W/$label.shared/log" -name '*.stderr' -exec cat {} + 2>/dev/null | grep -v "can't access tty" >"$W/$label.jobs.err"
	if [ "$rc" != 0 ] || [ -s "$W/$label.jobs.err" ]; then
		cat "$W/$label.err" "$W/$label.jobs.err" >&2
		fail "$label: fpsync exit $rc"
	fi
	if grep -q 'runtime error:\|AddressSanitizer\|LeakSanitizer' "$W/$label.jobs.err"; then
		fail "$label: sanitizer report"
	fi
}

# What the two modes keep: rsync's -lptgoD (no hard links, ACLs or xattrs).
# Not directories' times: fpsync's jobs run in parallel, and one that writes
# into a directory after another job set its time moves it, whatever the tool
# (plain fpsync with rsync or GNU tar too). GNU tar's archive keeps whole
# seconds, so against its result file times are left out (against the source
# they are compared to the nanosecond).
FIELDS=(--fields=mode,owner,size,mtime,data,link --no-dir-times)
TAR_FIELDS=(--fields=mode,owner,size,data,link --no-dir-times)

# ---- tar mode: sweep-tar cf - | sweep-tar xpf - against GNU tar's ----
LOCAL=1 run_fpsync tar-ref "$W/dtar-ref" -m tar
: >"$W/calls"
run_fpsync tar-sweep "$W/dtar" -m tar -T "$W/bin/sweep-tar"
grep -q '^ssh sweep-tar cf - .*--no-recursion --null -T ' "$W/calls" &&
	grep -q '^ssh sweep-tar xpf - .*-C ' "$W/calls" ||
	{ cat "$W/calls" >&2; fail "fpsync's tar mode did not run sweep-tar cf/xpf through ssh"; }
[ "$(grep -c '^ssh sweep-tar cf -' "$W/calls")" -ge 3 ] || fail "tar mode: fewer than 3 jobs"
compare_trees "$W/dtar-ref" "$W/dtar" "${TAR_FIELDS[@]}" && ok "fpsync -m tar -T sweep-tar over two ssh workers = fpsync -m tar (GNU tar)"
compare_trees "$S" "$W/dtar" "${FIELDS[@]}" && ok "fpsync -m tar -T sweep-tar: the destination is the source"

# ---- rsync mode: sweep-sync with fpsync's rsync options against rsync's ----
LOCAL=1 run_fpsync rsync-ref "$W/drsync-ref" -m rsync
: >"$W/calls"
run_fpsync rsync-sweep "$W/drsync" -m rsync -T "$W/bin/sweep-sync"
grep -q -- '^ssh sweep-sync -lptgoD -v --numeric-ids -d --files-from=.* --from0 ' "$W/calls" ||
	{ cat "$W/calls" >&2; fail "fpsync's rsync mode did not run sweep-sync with its options through ssh"; }
[ "$(grep -c '^ssh sweep-sync ' "$W/calls")" -ge 3 ] || fail "rsync mode: fewer than 3 jobs"
compare_trees "$W/drsync-ref" "$W/drsync" "${FIELDS[@]}" && ok "fpsync -m rsync -T sweep-sync over two ssh workers = fpsync -m rsync (rsync)"
compare_trees "$S" "$W/drsync" "${FIELDS[@]}" && ok "fpsync -m rsync -T sweep-sync: the destination is the source"

# A second run changes only what changed (sweep-sync's -v names just that file).
echo changed >"$S/a/b/g7"
touch -d '2003-01-01' "$S/a/b/g7"
: >"$W/calls"
run_fpsync rsync-again "$W/drsync" -m rsync -T "$W/bin/sweep-sync"
compare_trees "$S" "$W/drsync" "${FIELDS[@]}" && ok "fpsync -m rsync -T sweep-sync: a re-run brings the change"
grep -rq 'a/b/g7' "$W/rsync-again.shared/log" && ! grep -rqE 'a/f[0-9]' "$W/rsync-again.shared/log" ||
	fail "a re-run names only the changed file"

finish
