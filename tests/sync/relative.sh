#!/bin/bash
# SPDX-License-Identifier: MIT
# -R, --files-from and --from0 beside rsync, and fpsync's rsync-mode
# command line (-lptgoD -v --numeric-ids -d --files-from=LIST --from0).
. "$TESTS_DIR/sync/lib.sh"

S=$W/src
mkdir -p "$S/a/b/c" "$S/x/y" "$S/e"
printf '1\n' >"$S/a/b/c/f"
printf '2\n' >"$S/a/g"
printf '3\n' >"$S/x/h"
printf '4\n' >"$S/x/y/i"
touch -d '2012-02-02' "$S/a/b" "$S/a"
printf 'a/b/c/f\nx\n\n/x/y/i\n../../e\n' >"$W/list"
printf 'a/b/c/f\0x\0e\0' >"$W/list0"

run_args "--files-from (implies -R, -d)" ../src/ d1 -a -i --files-from="$W/list"
[ -f "$W/s/d1/a/b/c/f" ] && [ -d "$W/s/d1/x" ] && [ ! -e "$W/s/d1/x/h" ] && [ ! -e "$W/s/d1/a/g" ] ||
	die "--files-from: not what was listed: $(cd "$W/s/d1" && find . | sort)"
run_args "--files-from with -r" ../src/ d2 -a -r -i --files-from="$W/list"
run_args "--files-from --no-R" ../src/ d3 -a -i --no-R --files-from="$W/list"
OUT_FILTER='s/^sent .* bytes\/sec$/sent/; s/  speedup is .*$//'
run_args "fpsync's rsync mode" ../src/ d4 -lptgoD -v --numeric-ids -d --files-from="$W/list0" --from0
run_args "fpsync's rsync mode again" ../src/ d4 -lptgoD -v --numeric-ids -d --files-from="$W/list0" --from0
OUT_FILTER=
run_args "-R with /./" ../src/./a/b d5 -a -i -R
run_args "-R with a path" ../src/./a/b/c/f d6 -a -i -R
run_argv "-R, two operands sharing directories" d7 -a -i -R ../src/./a/b/c ../src/./a/g d7/
run_args "-R with a '..' in the kept part: refused" ../src/a/b d12 -a -i -R
grep -q 'found ".." dir in relative path' "$W/s.err" || die "$(cat "$W/s.err")"
(cd "$W" && rsync -a -i -R src/a/b/c src/x "$W/r/d13/" >"$W/r.out" && "$SYNC" -a -i -R src/a/b/c src/x "$W/s/d13/" >"$W/s.out") ||
	die "-R with plain relative paths"
diff <(sed 1d "$W/r.out") <(sed 1d "$W/s.out") && compare_trees "$W/r/d13" "$W/s/d13" --no-root-time || die "-R with plain relative paths differs from rsync"
ok "-R with plain relative paths: the same lines and tree as rsync"
(cd "$W" && rsync -a -i -R ./src/a/b "$W/r/d14/" >"$W/r.out" && "$SYNC" -a -i -R ./src/a/b "$W/s/d14/" >"$W/s.out") ||
	die "-R ./path"
diff <(sed 1d "$W/r.out") <(sed 1d "$W/s.out") && compare_trees "$W/r/d14" "$W/s/d14" ||
	die "-R with a leading ./ (which sends . too) differs from rsync"
ok "-R with a leading ./: DEST gets .'s metadata, as rsync"
ln -s a "$S/alink"
run_args "-R through a symlinked implied directory (sent as a real one)" ../src/./alink/b/c/f d15 -a -i -R
[ -d "$W/s/d15/alink" ] && [ ! -L "$W/s/d15/alink" ] || die "the implied symlink was not made a directory"
rm "$S/alink"
printf '# comment\n; another\nx/h\n' >"$W/list4"
run_args "--files-from skips comments" ../src/ d16 -a -i --files-from="$W/list4"
run_args "--files-from=- (standard input)" ../src/ d8 -a -i --files-from=- </dev/null
run_args "--files-from a missing file" ../src/ d9 -a -i --files-from="$W/nonexistent"
printf 'a/nothere\nx/h\n' >"$W/list2"
run_args "--files-from naming a missing file" ../src/ d10 -a -i --files-from="$W/list2"
printf 'x/h\n' >"$W/list3"
mkdir -p "$W/r/d11/x" "$W/s"
printf 'old\n' >"$W/r/d11/x/stale"
cp -a "$W/r/d11" "$W/s/"
run_args "--files-from --delete: nothing beside what is listed is deleted" ../src/ d11 -a -i --delete --files-from="$W/list3"
[ -e "$W/s/d11/x/stale" ] || die "--delete removed a file beside a listed one"

finish
