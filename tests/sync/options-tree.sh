#!/bin/bash
# SPDX-License-Identifier: MIT
# rsync's options that shape the destination tree (issue 28): --mkpath,
# each beside rsync on the same trees: same exit status, same lines in the
# same order and the same tree.
. "$TESTS_DIR/sync/lib.sh"

S=$W/src
mkdir -p "$S/sub"
printf 'text\n' >"$S/text"
printf 'extra\n' >"$S/sub/extra"
touch -d '2001-01-01' "$S/text" "$S/sub/extra" "$S/sub" "$S"

# ---- --mkpath ----
run_args "without --mkpath a missing parent is an error" ../src/text to/a/b/new -ai
[ ! -e "$W/s/to" ] || die "without --mkpath something was made"
run_args "--mkpath, a file to a new name" ../src/text to/a/b/new -ai --mkpath
run_args "--mkpath, a file into DEST/" ../src/text to/c/d/ -ai --mkpath
run_args "--mkpath, a tree into DEST" ../src/ to/e/f -ai --mkpath
run_args "--mkpath, a tree into DEST/, one level missing" ../src/ to/e/g/ -ai --mkpath
run_args "--mkpath, nothing missing" ../src/ to/e/f -ai --mkpath
run_args "--mkpath, a name with no directory" ../src/text to_text -ai --mkpath
run_args "--mkpath -n, a file" ../src/text to/n/m/new -ai --mkpath -n
run_args "--mkpath -n, a tree" ../src/ to/n/m -ai --mkpath -n
[ ! -e "$W/s/to/n" ] || die "--mkpath -n made something"
OUT_FILTER='s/^sent .* bytes\/sec$/sent/; s/  speedup is .*$//'
run_args "--mkpath -v" ../src/ to/v/w -rtv --mkpath
OUT_FILTER=
run_args "--mkpath --no-mkpath" ../src/text to/x/y/new -ai --mkpath --no-mkpath
# a file on the way: rsync's mkdir error, exit 11, nothing made
for side in r s; do mkdir -p "$W/$side/nd" && : >"$W/$side/nd/file"; done
rc=0; (cd "$W/s" && "$SYNC" -ai --mkpath ../src/ nd/file/x/y) >/dev/null 2>"$W/s.err" || rc=$?
[ "$rc" = 11 ] && grep -q "mkdir .*nd/file/x/y.* failed" "$W/s.err" || die "--mkpath through a file: exit $rc: $(cat "$W/s.err")"
ok "--mkpath through a file: mkdir failed, exit 11"
# a symlink on the way that an untrusted user owns is not followed (as DEST's own are not)
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	mkdir -p "$W/s/elsewhere"
	ln -s "$W/s/elsewhere" "$W/s/trap" && chown -h nobody "$W/s/trap"
	rc=0; (cd "$W/s" && "$SYNC" -a --mkpath ../src/ trap/x/y) >/dev/null 2>"$W/s.err" || rc=$?
	[ "$rc" != 0 ] && [ -z "$(ls -A "$W/s/elsewhere")" ] || die "--mkpath followed an untrusted symlink: exit $rc"
	grep -q "untrusted user" "$W/s.err" || die "--mkpath untrusted symlink: $(cat "$W/s.err")"
	ok "--mkpath does not follow a symlink an untrusted user owns: exit $rc"
else
	skip_part "not root: the untrusted symlink case"
fi

finish
