#!/bin/bash
# SPDX-License-Identifier: MIT
# sweep-sync over ssh against rsync over the same ssh (a throwaway sshd on
# 127.0.0.1): SRC/ HOST:DST/ (push) and HOST:SRC/ DST/ (pull), over a
# series of edits, with and without --delete, -c, -H, -AX, -z, filters and
# -n. After each step both destinations must be identical trees (contents,
# modes, owners, times, symlinks, hard links, xattrs and ACLs), the exit
# status the same, and the itemized lines the same; a re-run over an
# unchanged tree transfers nothing and itemizes nothing.
. "$TESTS_DIR/remote/lib.sh"
start_sshd

ax=1
touch "$W/probe"
{ setfattr -n user.probe -v 1 "$W/probe" && setfacl -m u:1:r "$W/probe"; } 2>/dev/null || ax=0
rm -f "$W/probe"

S=$W/src
mkdir -p "$S"/{a/b/c,empty,docs,"sp ace",ünï,-dash}
printf 'hello\n' >"$S/f1"
printf '' >"$S/zero"
head -c 300000 /dev/urandom >"$S/a/big"
for i in $(seq 1 20); do printf 'file %s\n' "$i" >"$S/a/b/n$i"; done
printf 'deep\n' >"$S/a/b/c/deep"
printf 'x\n' >"$S/sp ace/with space"
printf 'q\n' >"$S/sp ace/it's \"quoted\" \$HOME;&|"
printf 'u\n' >"$S/ünï/ü"
printf 'd\n' >"$S/-dash/-f"
truncate -s 1M "$S/sparse" && printf 'tail' >>"$S/sparse"
ln -s f1 "$S/lnk"
ln -s missing "$S/dangling"
ln -s a/b "$S/dirlink"
ln "$S/f1" "$S/hl1"
ln "$S/a/b/n1" "$S/docs/n1-link"
mkfifo "$S/fifo"
mknod "$S/null" c 1 3
chmod 0640 "$S/zero"
chmod 0750 "$S/docs"
chmod 4755 "$S/a/b/n20"
chown 1:2 "$S/a/b/n2"
touch -d '2001-02-03 04:05:06.123456789' "$S/a/b/n3"
if [ $ax = 1 ]; then
	setfattr -n user.color -v blue "$S/f1"
	setfattr -n user.dir -v yes "$S/a"
	setfacl -m u:1:rw "$S/a/b/n4"
	setfacl -d -m u:2:rx "$S/docs"
fi

# step LABEL FLAGS...: both tools, both directions, the same flags; then compare
step() {
	local label=$1 dir
	shift
	for dir in push pull; do
		local r=$W/r/$dir s=$W/s/$dir
		mkdir -p "$W/r" "$W/s"
		if [ $dir = push ]; then
			rsync_remote rsync "$@" "$S/" "$HOST:$r/"
			sync_remote sweep "$@" "$S/" "$HOST:$s/"
		else
			rsync_remote rsync "$@" "$HOST:$S/" "$r/"
			sync_remote sweep "$@" "$HOST:$S/" "$s/"
		fi
		if [ "$(cat "$W/rsync.rc")" != "$(cat "$W/sweep.rc")" ]; then
			cat "$W/rsync.err" "$W/sweep.err" >&2
			fail "$label ($dir): exit $(cat "$W/rsync.rc") (rsync) vs $(cat "$W/sweep.rc") (sweep-sync)"
			continue
		fi
		# the same lines (DEST's name aside); rsync's summary counts bytes of its own protocol: not compared
		if ! diff <(grep -v '^sent \|^total size\|^$' "$W/rsync.out" | sed "s|$W/r/|DEST/|") \
			<(grep -v '^sent \|^total size\|^$' "$W/sweep.out" | sed "s|$W/s/|DEST/|") >"$W/out.diff"; then
			cat "$W/out.diff" >&2
			fail "$label ($dir): the itemized lines differ"
			continue
		fi
		compare_trees "$r" "$s" && ok "$label ($dir)"
	done
}

FLAGS=(-a -i)
[ $ax = 1 ] && FLAGS+=(-AX)
step "first copy" "${FLAGS[@]}"

# a re-run over an unchanged tree: nothing itemized, nothing transferred, nothing replaced
inodes() { find "$W/s" -type f -printf '%i %p\n' | sort; }
inodes >"$W/ino.before"
step "no change" "${FLAGS[@]}"
[ -s "$W/sweep.out" ] && fail "no change: sweep-sync itemized: $(head -3 "$W/sweep.out")"
sync_remote stats -a --stats "$S/" "$HOST:$W/s/push/"
grep -q '^Number of regular files transferred: 0$' "$W/stats.out" && grep -q '^Literal data: 0 bytes$' "$W/stats.out" ||
	fail "no change: sweep-sync --stats says something was transferred: $(grep -i transferred "$W/stats.out")"
inodes >"$W/ino.after"
diff -q "$W/ino.before" "$W/ino.after" >/dev/null || fail "no change: files were replaced"

# edits: new, changed, gone, a file <-> a directory, symlinks retargeted, attributes
mkdir -p "$S/new/dir"
printf 'n\n' >"$S/new/dir/f"
printf 'longer now\n' >>"$S/f1"
touch -d '2010-01-01 00:00:00.5' "$S/a/b/n6"
rm -rf "$S/a/b/c" "$S/a/b/n9"
rm "$S/a/b/n10" && mkdir "$S/a/b/n10" && printf 'in\n' >"$S/a/b/n10/inside"
ln -sfn a "$S/dirlink"
chmod 0600 "$S/a/b/n13"
chown 3:4 "$S/a/b/n14"
[ $ax = 1 ] && setfattr -n user.color -v red "$S/f1"
step "edits without --delete" "${FLAGS[@]}"
step "edits with --delete" "${FLAGS[@]}" --delete

# the quick check misses same size and time; -c compares digests on both sides
ref=$(stat -c %y "$S/a/b/n8")
printf 'FILE 8\n' >"$S/a/b/n8"
touch -d "$ref" "$S/a/b/n8"
step "same size and time, no -c" "${FLAGS[@]}" --delete
cmp -s "$S/a/b/n8" "$W/s/pull/a/b/n8" && fail "the quick check should have missed n8"
step "same size and time, -c" "${FLAGS[@]}" --delete -c
cmp -s "$S/a/b/n8" "$W/s/pull/a/b/n8" || fail "-c did not transfer n8"

# hard links kept (-H), a dry run changes nothing, filters, compression
ln "$S/a/b/n11" "$S/a/b/n11-link"
ln -f "$S/f1" "$S/a/b/n12"
# (without -AX: sweep-sync itemizes an 'x' on a hard link whose old file had other xattrs, locally too)
step "-H" -a -i --delete -H
printf 'dry\n' >"$S/dry-new"
step "dry run" "${FLAGS[@]}" --delete -n
[ -e "$W/s/push/dry-new" ] && fail "-n made a file"
printf 'o\n' >"$S/a/x.o"
# one time for all four (a plain touch gives each its own nanoseconds)
touch -d "$ref" "$W/r/push/keep.o" "$W/s/push/keep.o" "$W/r/pull/keep.o" "$W/s/pull/keep.o"
step "--exclude with --delete" "${FLAGS[@]}" --delete --exclude='*.o'
step "-z" "${FLAGS[@]}" --delete -z --exclude='*.o'

# remote paths as rsync quotes them: spaces and the shell's characters stay, a wildcard expands there
rm -rf "$W/r/q" "$W/s/q"
rsync_remote rsync -a "$HOST:$S/sp ace/" "$W/r/q/"
sync_remote sweep -a "$HOST:$S/sp ace/" "$W/s/q/"
[ "$(cat "$W/sweep.rc")" = 0 ] && compare_trees "$W/r/q" "$W/s/q" && ok "a remote path with spaces and quotes" ||
	fail "a remote path with spaces: $(cat "$W/sweep.err")"
rm -rf "$W/r/g" "$W/s/g"
rsync_remote rsync -a "$HOST:$S/a/b/n1*" "$W/r/g/"
sync_remote sweep -a "$HOST:$S/a/b/n1*" "$W/s/g/"
[ "$(cat "$W/sweep.rc")" = 0 ] && [ "$(ls "$W/s/g" | wc -l)" -gt 5 ] && compare_trees "$W/r/g" "$W/s/g" --no-root-time &&
	ok "a remote wildcard expands on the remote side" || fail "a remote wildcard: $(cat "$W/sweep.err")"
# more sources from the same host, as ":PATH"; a pushed operand that starts with '-'
rm -rf "$W/r/m" "$W/s/m"
rsync_remote rsync -a "$HOST:$S/f1" ":$S/zero" "$W/r/m/"
sync_remote sweep -a "$HOST:$S/f1" ":$S/zero" "$W/s/m/"
compare_trees "$W/r/m" "$W/s/m" --no-root-time && ok "HOST:A :B" || fail "HOST:A :B"
rsync_remote rsync -a ./ "$HOST:$W/r/-dest/" 2>/dev/null
(cd "$S/-dash" && "$SYNC" -a -e "$RSH" --rsync-path="$RSYNC_PATH" ./ "$HOST:$W/s/-dest/") >/dev/null 2>&1
[ -f "$W/s/-dest/-f" ] && ok "a remote DEST that starts with '-'" || fail "a remote DEST that starts with '-'"
# RSYNC_RSH as rsync takes it, and USER@HOST with -l
rm -rf "$W/s/e"
RSYNC_RSH="$RSH" "$SYNC" -a --rsync-path="$RSYNC_PATH" "$S/docs" "$HOST:$W/s/e/" >"$W/e.out" 2>&1 &&
	[ -f "$W/s/e/docs/n1-link" ] && ok "RSYNC_RSH" || fail "RSYNC_RSH: $(cat "$W/e.out")"
finish
