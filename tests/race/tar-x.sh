#!/bin/bash
# SPDX-License-Identifier: MIT
# sweep-tar -x, run as root into a directory the attacker (uid 65534) can
# write, while the attacker swaps what the archive fills for symlinks to a
# root-owned directory (victim/, tests/race/lib.sh). Nothing outside -C may
# change: victim/'s names, types, modes, owners and contents are checksummed
# before and after, and the archive's directories are owned by the attacker
# with mode 0777, so a directory's final chown/chmod landing in victim/
# changes its checksum.
#
# Every swap point of the extraction, each once at a known point (the
# "extract:N" and "xdirs" pause points) and as a renameat2(RENAME_EXCHANGE)
# loop running through the whole extraction:
#   - the -C root itself, after it was opened;
#   - a directory being filled (d, and d/sub);
#   - the parent of a symlink and of a hard link (d/sub);
#   - a directory whose metadata is set at the end.
# GNU tar 1.34 and bsdtar 3.6 lose the loop cases (members written into the
# symlink's target, and once a root directory chowned to the attacker).
#
# RACE_ITERATIONS=N repeats every case N times (CI runs it once; issue 27
# asks for 100 with nothing outside -C changed).
. "$TESTS_DIR/race/lib.sh"
# RACE_TAR=tar runs the cases against another tar (GNU tar loses the loop cases).
TAR=${RACE_TAR:-$BUILD_ROOT/utils/sweep-tar}
ARCHIVE=$RACE_TMP/x.tar
DST=pub/dst
require_cmd python3
# The attacker's Python must be one uid 65534 can run (not a shim under /root).
ATTACKER_PY=/usr/bin/python3
[ -x "$ATTACKER_PY" ] || skip "no /usr/bin/python3 for the attacker"

# The archive: d/ and d/sub/ (65534, 0777), 120 files in d, 40 in d/sub,
# a symlink, a hard link, a FIFO and a setuid file in d/sub, root-owned.
python3 - "$ARCHIVE" <<'PY'
import io, sys, tarfile
def member(t, name, kind=tarfile.REGTYPE, data=b"", mode=0o644, uid=0, link=""):
    i = tarfile.TarInfo(name)
    i.type, i.mode, i.uid, i.gid, i.uname, i.gname, i.mtime = kind, mode, uid, uid, "", "", 1000000000
    i.linkname, i.size = link, len(data)
    t.addfile(i, io.BytesIO(data) if data else None)
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    member(t, "d", tarfile.DIRTYPE, mode=0o777, uid=65534)
    for i in range(120):
        member(t, "d/f%03d" % i, data=b"payload %d\n" % i)
    member(t, "d/sub", tarfile.DIRTYPE, mode=0o777, uid=65534)
    for i in range(40):
        member(t, "d/sub/g%02d" % i, data=b"sub payload %d\n" % i)
    member(t, "d/sub/l", tarfile.SYMTYPE, link="../f000")
    member(t, "d/sub/hl", tarfile.LNKTYPE, link="d/f001")
    member(t, "d/sub/fifo", tarfile.FIFOTYPE, mode=0o666)
    member(t, "d/sub/suid", data=b"suid\n", mode=0o4755)
    member(t, "d/last", data=b"last\n")
PY
# The member index (1-based, as the "extract" pause point counts) of d/sub/l, and the count.
L_INDEX=$(tar -tf "$ARCHIVE" | grep -nx 'd/sub/l' | cut -d: -f1)
MEMBERS=$(tar -tf "$ARCHIVE" | wc -l)

# The attacker's loop: exchange two names until told to stop (bounded: 60 s).
cat > "$RACE_TMP/exchange.py" <<'PY'
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
a, b, stop = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2]), sys.argv[3]
n, end = 0, time.monotonic() + 60
while not os.path.exists(stop) and time.monotonic() < end:
    libc.renameat2(-100, a, -100, b, 2)  # AT_FDCWD, RENAME_EXCHANGE
    n += 1
    if n == 1:
        open("%s.ready.%d" % (stop, os.getpid()), "w").close()
open(stop + ".count", "a").write("%d\n" % n)
PY
chmod 644 "$RACE_TMP/exchange.py"
# The loops' stop, ready and count files: a directory the attacker can write.
CTL=$RACE_TMP/ctl
mkdir -p "$CTL" && chmod 1777 "$CTL"

# The destination: pub/dst, the attacker's own (so is pub/), holding escape
# symlinks to victim/ and victim/sub, and the archive's d/ and d/sub/ made
# by the attacker beforehand (a directory sweep-tar makes itself stays 0700
# root's until the end, where the attacker cannot swap anything).
xworld() {
	world
	mkdir -p "$W/$DST/d/sub"
	ln -s "$W/victim" "$W/$DST/esc"
	ln -s "$W/victim/sub" "$W/$DST/esc2"
	ln -s "$W/victim" "$W/pub/esc"
	chown -R -h 65534:65534 "$W/pub"
	rm -f "$CTL"/stop*
}

# loops A B [C D]: exchange A and B (and C and D) as the attacker in the background, from $W.
loops() {
	LOOP_PIDS=()
	while [ $# -ge 2 ]; do
		(cd "$W" && exec setpriv --reuid=65534 --regid=65534 --clear-groups \
			"$ATTACKER_PY" "$RACE_TMP/exchange.py" "$1" "$2" "$CTL/stop") &
		LOOP_PIDS+=($!)
		shift 2
	done
	# Started and swapping before the tool runs.
	for ((i = 0; i < 3000; i++)); do
		[ "$(ls "$CTL" | grep -c '^stop.ready')" -ge ${#LOOP_PIDS[@]} ] && return
		sleep 0.01
	done
	die "the attacker's loops did not start"
}
stop_loops() {
	touch "$CTL/stop"
	wait "${LOOP_PIDS[@]}"
	LOOP_PIDS=()
}

# run_looped CMD...: CMD as root in $W while the loops run; RC, ERR.
run_looped() {
	local here=$PWD
	cd "$W" || die "cd $W"
	RC=0
	"$@" >"$RACE_TMP/out" 2>"$RACE_TMP/err" || RC=$?
	cd "$here" || die "cd $here"
	stop_loops
	ERR=$(cat "$RACE_TMP/err")
}

# What a run may end with: 0, or 2 for the members refused (said one by one).
ended_well() { [ "$RC" = 0 ] || { [ "$RC" = 2 ] && said "Cannot"; }; }
# Every file the archive holds that was written is one of the archive's, in a directory of the destination tree.
no_stray_payload() { ! grep -rqs --binary-files=text "payload" "$W/victim" "$W/secret" "$W/src"; }
# With nothing racing, every member is extracted.
complete() { [ -f "$W/$DST/d/last" ] && [ "$(find "$W/$DST/d" -type f | wc -l)" -ge 160 ]; }
neither() { [ ! -e "$1" ] && [ ! -e "$2" ]; }
both_links() { [ -L "$1" ] && [ -L "$2" ]; }
x_outside() {
	check_outside
	expect "no member landed outside -C" no_stray_payload
}

for ((iter = 0; iter < ITERATIONS; iter++)); do
	CASE="tar -x: nothing racing"
	xworld
	RC=0; (cd "$W" && "$TAR" -xf "$ARCHIVE" -C $DST) 2>"$RACE_TMP/err" || RC=$?
	expect "exit 0" [ "$RC" = 0 ]
	expect "every member extracted" complete
	expect "directory metadata set at the end" [ "$(stat -c '%u %a' "$W/$DST/d/sub")" = "65534 777" ]
	x_outside

	CASE="tar -x: the -C root -> symlink to victim/, once it is open"
	xworld
	run_paused extract:1 "mv $DST pub/dst.gone && ln -s ../victim $DST" "$TAR" -xf "$ARCHIVE" -C $DST
	expect "the attack was made" [ -L "$W/$DST" ]
	expect "exit 0: the held directory is filled" [ "$RC" = 0 ]
	expect "every member in the directory -C opened" [ -f "$W/pub/dst.gone/d/last" ]
	x_outside

	CASE="tar -x: a directory being filled -> symlink to victim/"
	xworld
	run_paused extract:20 "mv $DST/d $DST/d.gone && ln -s ../../victim $DST/d" "$TAR" -xf "$ARCHIVE" -C $DST
	expect "the attack was made" [ -L "$W/$DST/d" ]
	expect "ends with 0 or 2" ended_well
	x_outside

	CASE="tar -x: the parent of a symlink and a hard link -> symlink to victim/sub"
	xworld
	run_paused extract:$L_INDEX "mv $DST/d/sub $DST/d/sub.gone && ln -s ../../../victim/sub $DST/d/sub" \
		"$TAR" -xf "$ARCHIVE" -C $DST
	expect "the attack was made" [ -L "$W/$DST/d/sub" ]
	expect "ends with 0 or 2" ended_well
	expect "no link made in victim/sub" neither "$W/victim/sub/l" "$W/victim/sub/hl"
	x_outside

	CASE="tar -x: a directory whose metadata is set at the end -> symlink to victim/"
	xworld
	run_paused xdirs "mv $DST/d $DST/d.gone && ln -s ../../victim $DST/d && mv $DST/d.gone/sub $DST/sub.gone && ln -s ../../../victim/sub $DST/d.gone/sub" \
		"$TAR" -xf "$ARCHIVE" -C $DST
	expect "the attack was made" both_links "$W/$DST/d" "$W/$DST/d.gone/sub"
	expect "exit 0" [ "$RC" = 0 ]
	expect "victim/ keeps its owner and mode" [ "$(stat -c '%u %a' "$W/victim")" = "0 755" ]
	x_outside

	CASE="tar -x: RENAME_EXCHANGE loop, the -C root <-> symlink to victim/"
	xworld
	# -C is opened as the user named it: let the run open it first, then loop.
	cd "$W" || die "cd $W"
	if pause_at extract:1 "$TAR" -xf "$ARCHIVE" -C $DST >"$RACE_TMP/out" 2>"$RACE_TMP/err"; then
		cd - >/dev/null || die "cd back"
		loops $DST pub/esc
		RC=0; resume || RC=$?
		stop_loops
		ERR=$(cat "$RACE_TMP/err")
		expect "ends with 0 or 2" ended_well
		x_outside
	else
		cd - >/dev/null || die "cd back"
		fail "$CASE: never paused at extract:1"
	fi

	CASE="tar -x: RENAME_EXCHANGE loops, d <-> symlink to victim/, d/sub <-> symlink to victim/sub"
	xworld
	loops $DST/d $DST/esc $DST/d/sub $DST/d/esc2
	run_looped "$TAR" -xf "$ARCHIVE" -C $DST
	expect "ends with 0 or 2" ended_well
	expect "the attacker's loops ran" [ "$(awk '{s += $1} END {print s + 0}' "$CTL/stop.count")" -gt 0 ]
	x_outside
done
note "$MEMBERS members per extraction, $ITERATIONS iteration(s)"
finish
