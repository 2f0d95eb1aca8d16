#!/bin/bash
# SPDX-License-Identifier: MIT
# Faults: an unreadable source file and directory (as an unprivileged uid),
# a source file that vanishes between the walk and the read, and SIGKILL or SIGTERM in
# the middle of a copy (no final name may hold a partial file; a second run
# completes the copy). The full-disk case is in cp-loopfs.sh.
. "$TESTS_DIR/cp/lib.sh"

# ---- unreadable: the same messages, exit status and tree as GNU cp ----
if is_root && command -v setpriv >/dev/null; then
	u="$CP_TMP/unreadable"
	mkdir -p "$u/src/open" "$u/src/private" "$u/out-gnu" "$u/out-sweep"
	printf 'public\n' >"$u/src/open/file"
	printf 'secret\n' >"$u/src/secret"
	printf 'hidden\n' >"$u/src/private/file"
	printf 'visible\n' >"$u/src/zz-after"
	chmod 600 "$u/src/secret"
	chmod 700 "$u/src/private"
	chown 65534:65534 "$u/out-gnu" "$u/out-sweep"
	as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
	(cd "$u" && as_nobody cp -r src out-gnu/copy) 2>"$u/gnu.err"
	rc_g=$?
	(cd "$u" && as_nobody "$SWEEP_CP" -r src out-sweep/copy) 2>"$u/sweep.err"
	rc_s=$?
	sed -i 's/^cp: /sweep-cp: /' "$u/gnu.err"
	sort -o "$u/gnu.err" "$u/gnu.err"
	sort -o "$u/sweep.err" "$u/sweep.err"
	check "unreadable: exit status $rc_g like cp" test "$rc_g" = "$rc_s" -a "$rc_s" = 1
	check "unreadable: same messages as cp" cmp -s "$u/gnu.err" "$u/sweep.err" ||
		diff "$u/gnu.err" "$u/sweep.err"
	same_tree "unreadable: the rest copied like cp" type,mode,owner,size,data "$u/out-gnu" "$u/out-sweep"
	check "unreadable: no temporaries left" no_temps "$u/out-sweep"

	# -a by an ordinary user: owners cannot be given away; cp says nothing, keeps going.
	o="$CP_TMP/owners"
	mkdir -p "$o/src/d" "$o/src/sticky" "$o/out-gnu" "$o/out-sweep"
	printf 'mine\n' >"$o/src/d/f"
	printf 'setgid\n' >"$o/src/g"
	ln -s f "$o/src/d/link"
	mkfifo "$o/src/fifo"
	chown -hR 4242:4343 "$o/src"
	chmod 2755 "$o/src/g"
	chmod 1777 "$o/src/sticky"
	touch -d '2003-03-03 03:03:03.333333333' "$o/src/d/f" "$o/src/d"
	chown 65534:65534 "$o/out-gnu" "$o/out-sweep"
	(cd "$o" && as_nobody cp -a src out-gnu/copy) 2>"$o/gnu.err"
	rc_g=$?
	(cd "$o" && as_nobody "$SWEEP_CP" -a src out-sweep/copy) 2>"$o/sweep.err"
	rc_s=$?
	sed -i 's/^cp: /sweep-cp: /' "$o/gnu.err"
	check "-a as a user: exit status $rc_g like cp" test "$rc_g" = "$rc_s"
	check "-a as a user: same messages as cp" cmp -s "$o/gnu.err" "$o/sweep.err" ||
		diff "$o/gnu.err" "$o/sweep.err"
	same_tree "-a as a user: same tree as cp" type,mode,owner,size,mtime,data,link "$o/out-gnu/copy" \
		"$o/out-sweep/copy"
else
	skip_part "unreadable-file case needs root and setpriv"
fi

# ---- vanished or shrunk between the walk and the read (paused at "plan": every file walked, none read) ----
. "$TESTS_DIR/common/hooks.sh"
if ! have_hooks; then
	skip_part "vanish/shrink cases need the pause points (-Dtest_hooks=true)"
else
	v="$CP_TMP/vanish"
	mkdir -p "$v/src/d"
	for i in 1 2 3 4 5; do head -c $((i * 5000)) /dev/urandom >"$v/src/d/f$i"; done
	printf 'gone soon\n' >"$v/src/d/victim"
	rc=0
	(cd "$v" && pause_at plan "$SWEEP_CP" -a src dst 2>"$v/err" && rm src/d/victim && resume) || rc=$?
	check "vanished: exit 1" [ "$rc" = 1 ]
	check "vanished: cp's message" grep -qx \
		"sweep-cp: cannot open 'src/d/victim' for reading: No such file or directory" "$v/err"
	check "vanished: no copy under its name" [ ! -e "$v/dst/d/victim" ]
	check "vanished: nothing else reported" [ "$(wc -l <"$v/err")" = 1 ]
	same_tree "vanished: everything else copied" type,mode,owner,size,data,link,xattr,hl "$v/src" "$v/dst"
	check "vanished: no temporaries left" no_temps "$v/dst"

	# Shrunk between the walk and the read: the copy is what the file holds then.
	head -c 50000 /dev/urandom >"$v/src/d/shrinks"
	rc=0
	(cd "$v" && pause_at plan "$SWEEP_CP" -a src dst2 2>"$v/err2" && truncate -s 1000 src/d/shrinks && resume) || rc=$?
	check "shrunk: exit 0, nothing reported" test $rc = 0 -a ! -s "$v/err2"
	check "shrunk: the source was cut" test "$(stat -c %s "$v/src/d/shrinks")" = 1000
	check "shrunk: the copy equals it" cmp -s "$v/src/d/shrinks" "$v/dst2/d/shrinks"
fi

# ---- SIGKILL / SIGTERM mid-copy ----
# kill_mid_copy NAME SIGNAL ARGS...: start a copy of $k/src to $k/NAME, send SIGNAL
# once some files are in place, then require every final name to equal its
# source. SIGKILL may leave temporaries; SIGTERM removes them and dies of it.
k="$CP_TMP/kill"
mkdir -p "$k/src"
for d in 1 2 3 4; do
	mkdir "$k/src/d$d"
	for i in $(seq 1 60); do head -c $(((i % 7 + 1) * 65536 + i)) /dev/urandom >"$k/src/d$d/f$i"; done
done
kill_mid_copy() {
	local name=$1 sig=$2; shift 2
	local dst="$k/$name" n=0
	"$SWEEP_CP" -a "$@" "$k/src" "$dst" &
	local pid=$!
	# Wait until part of the copy is in place (or the copy is over).
	while kill -0 "$pid" 2>/dev/null; do
		n=$(find "$dst" -type f ! -name "$TMP_PREFIX*" 2>/dev/null | wc -l)
		[ "$n" -ge 20 ] && break
		sleep 0.02
	done
	local running=0 rc=0
	kill -0 "$pid" 2>/dev/null && running=1
	kill -s "$sig" "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null || rc=$?
	local bad=0 final=0 temps=0 f rel
	while IFS= read -r -d '' f; do
		rel=${f#"$dst"/}
		case ${f##*/} in
		"$TMP_PREFIX"*) temps=$((temps + 1)) ;;
		*)
			final=$((final + 1))
			cmp -s "$f" "$k/src/$rel" || { echo "partial or wrong: $rel"; bad=$((bad + 1)); }
			;;
		esac
	done < <(find "$dst" -type f -print0)
	echo "$sig $name: $final complete files, $temps temporaries left, exit $rc"
	check "SIG$sig ($name): every final name holds its whole source" [ "$bad" = 0 ]
	if [ "$sig" = TERM ] && [ "$running" = 1 ]; then
		check "SIGTERM ($name): temporaries removed" [ "$temps" = 0 ]
		check "SIGTERM ($name): died of the signal" [ "$rc" = 143 ]
	fi
	# Leftovers are recognisable by name; a second run completes the copy.
	find "$dst" -name "$TMP_PREFIX*" -delete
	"$SWEEP_CP" -a "$@" "$k/src/." "$dst"
	check "SIG$sig ($name): a second run exits 0" [ $? = 0 ]
	same_tree "SIG$sig ($name): after the second run the copy is whole" type,mode,size,mtime,data "$k/src" "$dst"
}
kill_mid_copy read-fsync KILL --reflink=never --fsync
kill_mid_copy range-fsync KILL --fsync
kill_mid_copy read-term TERM --reflink=never --fsync

finish
