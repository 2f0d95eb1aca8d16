#!/bin/bash
# SPDX-License-Identifier: MIT
# What DEST may be, beside rsync's behaviour for the same command (issue 27,
# items 4, 9 and 15): rsync's daemon syntax refused, a remote shell that
# fails ends as rsync's does (a local name with a colon still works); symlinks in DEST and in an --exclude-from path
# followed only when root or the user running owns them (rsync's
# symlink-race-dest, symlink-race-relative-dest and excludefrom-symlink);
# DEST that is a file (exit 3); --delete of a read-only directory as
# uid 65534 (made writable, deleted, exit 0).
. "$TESTS_DIR/sync/lib.sh"

mkdir -p "$W/src/sub" "$W/r" "$W/s"
printf 'one\n' >"$W/src/sub/f1"
printf 'two\n' >"$W/src/f2"

# run_rc LABEL WANT ARGS...: sweep-sync and rsync give the same exit status WANT.
run_rc() {
	local label=$1 want=$2 sr=0 rr=0; shift 2
	(cd "$W/s" && "$SYNC" "$@") >"$W/s.out" 2>"$W/s.err" || sr=$?
	(cd "$W/r" && rsync "$@") >"$W/r.out" 2>"$W/r.err" || rr=$?
	[ "$rr" = "$want" ] || die "$label: rsync exit $rr, the test expected $want: $(cat "$W/r.err")"
	[ "$sr" = "$want" ] || die "$label: sweep-sync exit $sr, rsync $rr: $(cat "$W/s.err")"
	ok "$label: exit $sr, as rsync"
}

# ---- item 4: the daemon's operands are refused, nothing is made locally ----
for args in "rsync://host/mod/ d" "host::mod/x d"; do
	rc=0
	# shellcheck disable=SC2086
	(cd "$W/s" && "$SYNC" -a $args) >"$W/s.out" 2>"$W/s.err" || rc=$?
	[ "$rc" = 4 ] || die "'$args': exit $rc, want 4 (rsync's 'requested action not supported')"
	grep -q 'requested action not supported (code 4)' "$W/s.err" || die "'$args': $(cat "$W/s.err")"
	[ -z "$(ls -A "$W/s")" ] || die "'$args' made something locally: $(ls -A "$W/s")"
done
ok "host::mod and rsync:// refused with exit 4, nothing made"
# a remote shell's operands go to the remote shell (tests/remote); one that fails: rsync's exit 12, nothing made
for args in "../src/ user@host:dir/" "../src/ host:/abs/" "host:dir/ d" "../src/ [::1]:d"; do
	# shellcheck disable=SC2086
	run_rc "'$args' through a remote shell that fails" 12 -a -e false $args
	grep -q 'connection unexpectedly closed (0 bytes received so far)' "$W/s.err" || die "'$args': $(cat "$W/s.err")"
	[ -z "$(ls -A "$W/s")" ] || die "'$args' made something locally: $(ls -A "$W/s")"
done
rc=0; (cd "$W/s" && "$SYNC" -a a:x b:y) 2>"$W/s.err" || rc=$?
[ "$rc" = 1 ] && grep -q 'The source and destination cannot both be remote.' "$W/s.err" ||
	die "both remote: exit $rc: $(cat "$W/s.err")"
ok "both remote: rsync's message, exit 1"
# a colon after a slash is a local name, with and without the ./
mkdir -p "$W/a:b"
printf 'colon\n' >"$W/a:b/c"
run_args "./a:b is local" "../a:b/" "./x:y" -a -i
[ "$(cat "$W/s/x:y/c")" = colon ] || die "./x:y was not made locally"
(cd "$W" && "$SYNC" -a ./a:b/ ./p:q/) || die "./a:b/ to ./p:q/"
[ "$(cat "$W/p:q/c")" = colon ] || die "./p:q/c"
ok "names with a colon after a slash are local"

# ---- item 15: DEST is a file: rsync's messages and exit 3 ----
printf 'file\n' >"$W/s/dfile"
cp "$W/s/dfile" "$W/r/dfile"
run_rc "SRC/ into a file" 3 -a ../src/ dfile
grep -q 'destination must be a directory when copying more than 1 file' "$W/s.err" || die "$(cat "$W/s.err")"
run_rc "SRC into a file" 3 -a ../src dfile
run_rc "two files into a file" 3 -a ../src/f2 ../src/sub/f1 dfile
run_rc "a file into file/" 3 -a ../src/f2 dfile/
grep -q 'cannot stat destination.*Not a directory' "$W/s.err" || die "$(cat "$W/s.err")"
run_rc "SRC/ into file/x/" 3 -a ../src/ dfile/x/
mkdir -p "$W/emptydir"
run_rc "an empty directory over a file" 3 -a ../emptydir dfile
grep -q 'cannot overwrite non-directory with a directory' "$W/s.err" || die "$(cat "$W/s.err")"
[ "$(cat "$W/s/dfile")" = file ] || die "the file DEST changed"
run_rc "one file over a file" 0 -a ../src/f2 dfile
cmp "$W/src/f2" "$W/s/dfile" || die "one file over a file: not replaced"

# ---- item 9: symlinks in DEST owned by another user (root only) ----
if ! is_root || ! id nobody >/dev/null 2>&1; then
	skip_part "symlinks of another user: needs root and a 'nobody' user"
else
	nob=$(id -u nobody)
	for side in r s; do
		B=$W/$side
		mkdir -p "$B/dest" "$B/outside" "$B/real" "$B/outside2"
		ln -s "$B/outside" "$B/dest/sub" && chown -h "$nob" "$B/dest/sub"       # absolute, planted
		ln -s ../outside2 "$B/dest/rel" && chown -h "$nob" "$B/dest/rel"        # relative, planted
		ln -s "$B/outside" "$B/plink" && chown -h "$nob" "$B/plink"             # a planted parent
		ln -s "$B/real" "$B/dest/mine"                                          # root's own
	done
	run_rc "DEST/ a symlink of another user" 3 -a ../src/sub/ dest/sub/
	grep -q 'refusing to follow a symlink owned by an untrusted user' "$W/s.err" || die "$(cat "$W/s.err")"
	run_rc "DEST a symlink of another user" 3 -a ../src/sub/ dest/sub
	run_rc "a relative DEST symlink of another user" 3 -a ../src/sub/ dest/rel/
	run_rc "a file into a symlinked directory of another user" 3 -a ../src/f2 dest/sub
	run_rc "DEST below a parent symlink of another user" 3 -a ../src/sub/ plink/x/
	run_rc "a new name below a parent symlink of another user" 3 -a ../src/f2 plink/newname
	[ -z "$(find "$W/s/outside" "$W/s/outside2" -mindepth 1)" ] || die "sweep-sync wrote through another user's symlink"
	ok "nothing written through another user's symlink (rsync: $(ls -A "$W/r/outside" | wc -l) entries made there)"
	run_rc "DEST a symlink of root's own" 0 -a ../src/sub/ dest/mine/
	[ -f "$W/s/real/f1" ] || die "root's own symlinked DEST was not followed"
	# the same link owned by the user running (not root) is followed too
	if setpriv --reuid nobody --regid "$(id -g nobody)" --clear-groups true 2>/dev/null; then
		U=$W/u && mkdir -p "$U/real" "$U/outside" && ln -s "$U/real" "$U/mine" && ln -s "$U/outside" "$U/root-owned"
		chown -h "$nob" "$U/mine" && chown "$nob" "$U/real" "$U/outside" && chmod 755 "$W" "$W/src" "$W/src/sub"
		setpriv --reuid nobody --regid "$(id -g nobody)" --clear-groups "$SYNC" -a "$W/src/sub/" "$U/mine/" ||
			die "the user's own symlinked DEST"
		[ -f "$U/real/f1" ] || die "the user's own symlinked DEST was not followed"
		setpriv --reuid nobody --regid "$(id -g nobody)" --clear-groups "$SYNC" -a "$W/src/sub/" "$U/root-owned/" ||
			die "root's symlinked DEST, run by another user"
		[ -f "$U/outside/f1" ] || die "root's symlinked DEST was not followed by another user"
		ok "symlinks of the user running and of root are followed"
	fi
	# --exclude-from through another user's symlink, leaf and parent: refused, exit 11
	printf 'canary\n' >"$W/src/canary"
	mkdir -p "$W/out" "$W/plants/real"
	printf 'canary\n' >"$W/out/list" && cp "$W/out/list" "$W/plants/real/list"
	ln -s "$W/out/list" "$W/plants/leaf" && chown -h "$nob" "$W/plants/leaf"
	ln -s "$W/plants/real" "$W/plants/parent" && chown -h "$nob" "$W/plants/parent"
	run_rc "--exclude-from a symlink of another user" 11 -a --exclude-from="$W/plants/leaf" ../src/ ex1/
	grep -q 'refusing to follow a symlink owned by an untrusted user' "$W/s.err" || die "$(cat "$W/s.err")"
	grep -q 'failed to open exclude file' "$W/s.err" || die "$(cat "$W/s.err")"
	run_rc "--exclude-from below a parent symlink of another user" 11 -a --exclude-from="$W/plants/parent/list" ../src/ ex2/
	ln -s "$W/out/list" "$W/plants/mine"
	run_rc "--exclude-from root's own symlink" 0 -a --exclude-from="$W/plants/mine" ../src/ ex3/
	[ ! -e "$W/s/ex3/canary" ] || die "root's own symlinked rules were not read"
	rm "$W/src/canary"
fi

# ---- item 15: --delete of read-only directories as uid 65534 ----
if ! is_root || ! setpriv --reuid 65534 --regid 65534 --clear-groups true 2>/dev/null; then
	skip_part "--delete as uid 65534: needs root to switch users"
else
	as_65534() { setpriv --reuid 65534 --regid 65534 --clear-groups "$@"; }
	for side in r s; do
		B=$W/ro-$side
		mkdir -p "$B/src/keep" "$B/dst/gone/sub" "$B/dst/typ" "$B/dst/keep/old"
		printf 'k\n' >"$B/src/keep/k" && printf 't\n' >"$B/src/typ"
		printf 'x\n' >"$B/dst/gone/sub/f" && printf 'y\n' >"$B/dst/gone/g" && printf 'z\n' >"$B/dst/typ/q"
		printf 'o\n' >"$B/dst/keep/old/o"
		chown -R 65534:65534 "$B"
		chmod 555 "$B/dst/gone/sub" "$B/dst/gone" "$B/dst/typ" "$B/dst/keep/old"
	done
	chmod 755 "$W"
	rr=0; (cd "$W/ro-r" && as_65534 rsync -ai --delete src/ dst/) >"$W/r.out" 2>"$W/r.err" || rr=$?
	sr=0; (cd "$W/ro-s" && as_65534 "$SYNC" -ai --delete src/ dst/) >"$W/s.out" 2>"$W/s.err" || sr=$?
	[ "$rr" = 0 ] || die "rsync: $rr $(cat "$W/r.err")"
	[ "$sr" = 0 ] || die "read-only directories under --delete, as uid 65534: exit $sr: $(cat "$W/s.err")"
	diff <(sort "$W/r.out") <(sort "$W/s.out") || die "itemized lines differ from rsync's"
	compare_trees "$W/ro-r/src" "$W/ro-r/dst" && compare_trees "$W/ro-s/src" "$W/ro-s/dst"
	chmod 700 "$W"
	ok "--delete of read-only directories as uid 65534: made writable, deleted, exit 0 as rsync"
fi

finish
