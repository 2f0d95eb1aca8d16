#!/bin/bash
# SPDX-License-Identifier: MIT
# rsync's metadata options (issue 28): -O/--omit-dir-times and
# -J/--omit-link-times, each beside rsync on the same trees: same exit
# status, same lines in the same order and the same tree.
. "$TESTS_DIR/sync/lib.sh"

S=$W/src
mkdir -p "$S/d1/d2"
printf 'f\n' >"$S/d1/d2/f"
ln -s f "$S/d1/d2/l"
touch -h -d '2001-01-01' "$S/d1/d2/f" "$S/d1/d2/l" "$S/d1/d2" "$S/d1" "$S"
# dir_mtimes DIR: the years of DIR's directories and symlinks, by name
years() { (cd "$1" && find . \( -type d -o -type l \) -printf '%p %TY\n' | sort); }

# ---- -O: files keep the source's time, directories the one they have ----
# what gets "now" differs between the two runs by the clock: those trees are compared without times
COMPARE_OPTS="--no-times" run_args "-O, a new tree" ../src/ o1 -rlti -O
[ "$(find "$W/s/o1/d1/d2/f" -printf '%TY')" = 2001 ] || die "-O did not keep a file's time"
years "$W/s/o1" | grep -q '^./d1 2001$' && die "-O gave a new directory the source's time"
for side in r s; do touch -d '2005-01-01' "$W/$side/o1/d1" "$W/$side/o1/d1/d2"; done
run_args "-O, an existing tree: no .d..t lines" ../src/ o1 -rlti -O
[ "$(years "$W/s/o1" | grep -c ' 2005$')" = 2 ] || die "-O changed a directory's time: $(years "$W/s/o1")"
run_args "--no-O after -O gives the times back" ../src/ o1 -rlti -O --no-O
run_args "--omit-dir-times -n" ../src/ o2 -rlti --omit-dir-times -n
# rsync: -b without --backup-dir implies -O
for side in r s; do rm -rf "$W/$side/b1" && cp -a "$S" "$W/$side/b1" && touch -d '2005-01-01' "$W/$side/b1/d1"; done
printf 'g\n' >"$S/d1/d2/g" && touch -d '2001-01-01' "$S/d1/d2/g" "$S/d1/d2"
COMPARE_OPTS="--no-times" run_args "-b implies -O" ../src/ b1 -rlti -b
[ "$(years "$W/s/b1" | grep -c ' 2005$')" = 1 ] || die "-b set a directory's time: $(years "$W/s/b1")"
rm "$S/d1/d2/g" && touch -d '2001-01-01' "$S/d1/d2"
# ---- -J: symlinks keep the time they get ----
COMPARE_OPTS="--no-times" run_args "-J, a new tree" ../src/ j1 -rlti -J
[ "$(cd "$W/s/j1" && find . -type l -printf '%TY')" != 2001 ] || die "-J gave a symlink the source's time"
run_args "-J --no-J" ../src/ j2 -rlti -J --no-J
[ "$(cd "$W/s/j2" && find . -type l -printf '%TY')" = 2001 ] || die "--no-J did not give the symlink its time"
COMPARE_OPTS="--no-times" run_args "-OJ without -t: nothing to omit" ../src/ j3 -rli -OJ

# ---- -U, --atimes: access times kept (and itemized 'u'); the sources' never moved (--open-noatime) ----
# (rsync reads with --open-noatime here too: else its reading moves the sources' atimes before sweep-sync runs)
A=$W/atsrc
mkdir -p "$A/d"
printf 'u1\n' >"$A/one"
printf 'u2\n' >"$A/d/two"
touch -m -d '2003-03-03' "$A/one" "$A/d/two"
touch -a -d '2001-02-03 17:17:42' "$A/one" "$A/d/two"
atimes() { (cd "$1" && find . -type f -printf '%p %A@\n' | sort); }
before=$(atimes "$A")
# without -t the modification times are the copies' own: compared without times, the atimes apart
COMPARE_OPTS="--no-times" run_args "-U without -t" ../atsrc/ at1 -rUi --open-noatime
[ "$(atimes "$W/s/at1")" = "$before" ] || die "-U without -t: atimes $(atimes "$W/s/at1"), wanted $before"
find "$W/s/at1" -type f -newermt 2004-01-01 | grep -q . || die "-U without -t kept the mtimes too"
run_args "-rtU" ../atsrc/ at2 -rtUi --open-noatime
[ "$(atimes "$W/s/at2")" = "$before" ] || die "-rtU: atimes"
# an access time that changed alone: rsync's '.f......u..' and the new time, nothing else
touch -a -d '2002-02-02' "$A/one"
before=$(atimes "$A")
run_args "-rtU, an atime changed" ../atsrc/ at2 -rtUi --open-noatime
[ "$(atimes "$W/s/at2")" = "$before" ] || die "-rtU: the changed atime"
grep -qxF '.f......u.. one' "$W/s.out" || die "-rtU: no 'u' line: $(cat "$W/s.out")"
# sweep-sync alone: its reading never moves a source's atime, with --open-noatime or without
rm -rf "$W/s/at4"
"$SYNC" -rt --open-noatime "$A/" "$W/s/at4/" && "$SYNC" -rtc "$A/" "$W/s/at5/" || die "copies"
[ "$(atimes "$A")" = "$before" ] || die "reading the sources moved their atimes: $(atimes "$A")"
ok "sweep-sync's reads leave the sources' atimes as they were"

# ---- --usermap, --groupmap, --chown: the owners rsync maps the sender's to ----
if [ "$(id -u)" = 0 ]; then
	M=$W/msrc
	mkdir -p "$M/d"
	printf 'm\n' >"$M/d/f"
	printf 'n\n' >"$M/nameless"
	chown 0:0 "$M" "$M/d" "$M/d/f"
	chown 54321:54321 "$M/nameless" # (no name: only '*', an empty FROM and numbers match it)
	touch -d '2001-01-01' "$M/d/f" "$M/nameless" "$M/d" "$M"
	k=0
	for args in "--groupmap=0:1" "--usermap=0:2,*:3" "--usermap=0-10:4 --groupmap=root:5" "--groupmap=:6" \
		"--numeric-ids --groupmap=:6" "--chown=:7" "--chown=8:9" "--chown=bin" "--groupmap=[r]oot:10,*:11"; do
		k=$((k + 1))
		# shellcheck disable=SC2086
		run_args "$args" ../msrc/ map$k -ai $args
	done
	# rsync's refusals: exit 1 and its messages, nothing made
	for spec in "--chown=a:b --usermap=0:1|--usermap conflicts with prior --chown." "--usermap=0:1 --usermap=0:2|You can only specify --usermap once." \
		"--groupmap=0|No colon found in --groupmap: 0" "--groupmap=0:|No name found after colon --groupmap: 0:" "--usermap=1-x:0|Invalid number in --usermap: 1-x"; do
		args=${spec%%|*} msg=${spec#*|}
		# shellcheck disable=SC2086
		rc=0; "$SYNC" -a $args "$M/" "$W/never" >/dev/null 2>"$W/s.err" || rc=$?
		[ "$rc" = 1 ] && grep -qF -- "$msg" "$W/s.err" && [ ! -e "$W/never" ] || die "$args: exit $rc: $(cat "$W/s.err")"
	done
	ok "--usermap/--groupmap/--chown misuse: rsync's messages, exit 1, nothing made"
	# -g without -o, -o without -g: the other id is the copy's own (root's), not the source's
	COMPARE_OPTS="--no-times" run_args "-rg: groups, not owners" ../msrc/ og1 -rgi
	COMPARE_OPTS="--no-times" run_args "-ro: owners, not groups" ../msrc/ og2 -roi
	[ "$(stat -c %u:%g "$W/s/og1/nameless") $(stat -c %u:%g "$W/s/og2/nameless")" = "0:54321 54321:0" ] ||
		die "-rg/-ro: $(stat -c %u:%g "$W/s/og1/nameless") $(stat -c %u:%g "$W/s/og2/nameless")"
	# --no-super: root copies as another user would (no uid given away, only groups of its own, no 'o'/'g' for others)
	chmod 4755 "$M/d/f"
	run_args "--no-super" ../msrc/ ns1 -ai --no-super
	run_args "--no-super, an existing tree" ../msrc/ ns1 -ai --no-super
	chgrp 0 "$M/nameless" && touch -d '2002-01-01' "$M/nameless"
	run_args "--no-super, a group of ours now" ../msrc/ ns1 -ai --no-super
	run_args "--super after --no-super" ../msrc/ ns1 -ai --no-super --super
	[ "$(stat -c %u:%g "$W/s/ns1/d/f")" = 0:0 ] && [ "$(stat -c %u "$W/s/ns1/nameless")" = 54321 ] ||
		die "--no-super --super: owners $(stat -c %u:%g "$W/s/ns1/d/f") $(stat -c %u "$W/s/ns1/nameless")"
else
	skip_part "not root: --usermap, --groupmap, --chown"
fi

# ---- --chmod: rsync's grammar, applied to the listed mode (with -p, or to new entries) ----
C=$W/csrc
mkdir -p "$C/d/e"
printf 'x\n' >"$C/f" && chmod 644 "$C/f"
printf '#!/bin/sh\n' >"$C/d/run" && chmod 750 "$C/d/run"
printf 'y\n' >"$C/d/e/g" && chmod 600 "$C/d/e/g"
ln -s f "$C/lnk"
chmod 755 "$C/d" && chmod 700 "$C/d/e"
k=0
for spec in a+s g+s D710,F600 u=rwx,go= o+X g=u go=u-w 755 D2770 o=t 'u+x,g-w,o=r,a+X' =r -x a=,u+rw g+s,u-s; do
	k=$((k + 1))
	run_args "--chmod=$spec -a" ../csrc/ c$k -ai --chmod="$spec"
done
run_args "--chmod twice: both apply, in order" ../csrc/ c2x -ai --chmod=o+x --chmod=go-r
COMPARE_OPTS="--no-times" run_args "--chmod without -p: new entries" ../csrc/ cnp -ri --chmod=F700
for side in r s; do chmod 644 "$W/$side/c1/f"; done
run_args "--chmod, an existing file's mode changed back" ../csrc/ c1 -ai --chmod=a+s
run_args "--chmod -n" ../csrc/ c1 -ai --chmod=F600 -n
# ---- -E, --executability: without -p, an existing file's x bits follow the source's ----
E=$W/esrc
mkdir -p "$E/d"
printf '#!/bin/sh\n' >"$E/1" && printf 'x\n' >"$E/2" && printf 'yy\n' >"$E/3"
touch -d '2001-01-01' "$E"/1 "$E"/2 "$E"/3
chmod 1700 "$E/1" && chmod 600 "$E/2" && chmod 640 "$E/3"
run_args "-E, a new tree" ../esrc/ e1 -rtiE
chmod 600 "$E/1" && chmod 601 "$E/2"
for side in r s; do chmod 604 "$W/$side/e1/2"; done
run_args "without -E the modes stay" ../esrc/ e1 -rti
run_args "-E -n" ../esrc/ e1 -rtiE -n
run_args "-E: x taken away, x given to whoever reads" ../esrc/ e1 -rtiE
chmod 755 "$E/3" && printf 'zzzz\n' >"$E/3" && touch -d '2001-01-01' "$E/3"
run_args "-E with a transfer" ../esrc/ e1 -rtiE
run_args "-E -p: -p decides" ../esrc/ e1 -rtiEp
[ "$(stat -c %a "$W/s/e1/2")" = 601 ] && [ "$(stat -c %a "$W/s/e1/3")" = 755 ] || die "-E: $(stat -c '%a %n' "$W/s/e1"/*)"

# ---- --super: as root, what sweep-sync does; another user is refused, not half served ----
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	U=$W/usrc
	mkdir -p "$U" && printf 'u\n' >"$U/f" && chown nobody "$U/f" && mknod "$U/null" c 1 3
	run_args "--super as root: owners and devices" ../usrc/ u1 -ai --super
	chmod 755 "$W" && chmod -R a+rX "$U"
	rc=0; su nobody -s /bin/sh -c "'$SYNC' -a --super '$U/' /tmp/never-$$" >/dev/null 2>"$W/s.err" || rc=$?
	[ "$rc" = 1 ] && grep -q "does not support --super unless run as root" "$W/s.err" ||
		die "--super as nobody: exit $rc: $(cat "$W/s.err")"
	[ ! -e "/tmp/never-$$" ] || { rm -rf "/tmp/never-$$"; die "--super as nobody made something"; }
	ok "--super for a user other than root: refused, exit 1"
else
	skip_part "not root: --super"
fi

# a bad spec: rsync's message, exit 1, nothing made
for spec in '' u u+x, 9 D F77777 u+q DF644 u+xg 'u+x-w' 'a=u+x' 8; do
	rc=0; "$SYNC" -a --chmod="$spec" "$C/" "$W/never" >/dev/null 2>"$W/s.err" || rc=$?
	[ "$rc" = 1 ] && grep -qF "Invalid argument passed to --chmod ($spec)" "$W/s.err" || die "--chmod=$spec: exit $rc: $(cat "$W/s.err")"
	rrc=0; rsync -a --chmod="$spec" "$C/" "$W/never" >/dev/null 2>&1 || rrc=$?
	[ "$rrc" = 1 ] || die "--chmod=$spec: rsync exits $rrc"
	[ ! -e "$W/never" ] || die "--chmod=$spec: something was made"
done
ok "bad --chmod specs: rsync's message, exit 1, nothing made"

finish
