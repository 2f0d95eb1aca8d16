#!/bin/bash
# SPDX-License-Identifier: MIT
# --link-dest, --compare-dest and --copy-dest beside rsync: rsnapshot-style
# snapshots (unchanged files share an inode with the previous snapshot),
# the itemized lines (-i, -ii, -v), several DIRs, relative and absolute
# DIRs, a missing DIR.
. "$TESTS_DIR/sync/lib.sh"

S=$W/src
mkdir -p "$S/sub/deep" "$S/empty"
for f in a b sub/c sub/deep/d; do printf '%s\n' "$f" >"$S/$f"; done
ln -s a "$S/lnk"
touch -d '2010-01-01' "$S/a" "$S/b" "$S/sub/c" "$S/sub/deep/d"

# links SIDE DIR: "name nlink" for every entry, the shape of the sharing
links() { (cd "$W/$1/$2" && find . -printf '%p %n %y\n' | sort); }
same_links() {
	diff <(links r "$1") <(links s "$1") >&2 || die "$1: hard-link counts differ from rsync's"
}

run_args "snapshot 1" ../src/ snap1 -a -i
printf 'changed\n' >"$S/b"
chmod 600 "$S/sub/c"
printf 'new\n' >"$S/new"
run_args "snapshot 2 --link-dest=../snap1" ../src/ snap2 -a -i --link-dest=../snap1
same_links snap2
[ "$(stat -c %i "$W/s/snap2/a")" = "$(stat -c %i "$W/s/snap1/a")" ] || die "an unchanged file was not linked"
[ "$(stat -c %i "$W/s/snap2/b")" != "$(stat -c %i "$W/s/snap1/b")" ] || die "a changed file was linked"
[ "$(stat -c %i "$W/s/snap2/sub/c")" != "$(stat -c %i "$W/s/snap1/sub/c")" ] || die "a file whose mode changed was linked"
rm "$S/new"
run_args "snapshot 3, two DIRs, -ii" ../src/ snap3 -a -ii --link-dest=../snap2 --link-dest="$W/s/snap1"
same_links snap3
run_args "snapshot 3 again (nothing to do)" ../src/ snap3 -a -i --link-dest=../snap2
OUT_FILTER='s/^sent .* bytes\/sec$/sent/; s/  speedup is .*$//'
run_args "-v --link-dest" ../src/ snap4 -av --link-dest=../snap2
OUT_FILTER=
same_links snap4
run_args "--delete --link-dest into an older tree" ../src/ snap2 -a -i --delete --link-dest=../snap1
run_args "--compare-dest" ../src/ cmp1 -a -i --compare-dest=../snap1
[ ! -e "$W/s/cmp1/a" ] || die "--compare-dest copied an unchanged file"
run_args "--compare-dest -ii" ../src/ cmp2 -a -ii --compare-dest=../snap1
run_args "--copy-dest" ../src/ cpy1 -a -i --copy-dest=../snap1
same_links cpy1
# a --copy-dest file that passes the quick check is copied from DIR, not read from SRC (rsync's
# copy_altdest_file(); its suite's copy-dest-symlink-readleak relies on it): data that differs
# behind the same size and time shows which was read
mkdir -p "$W/cd-src" "$W/r/cd-basis" "$W/s/cd-basis"
printf 'SRC\n' >"$W/cd-src/f" && printf 'BAS\n' | tee "$W/r/cd-basis/f" >"$W/s/cd-basis/f"
touch -d '2011-01-01' "$W/cd-src/f" "$W/r/cd-basis/f" "$W/s/cd-basis/f"
run_args "--copy-dest: the basis file's data" ../cd-src/ cpy2 -rt -i --copy-dest=../cd-basis
[ "$(cat "$W/s/cpy2/f")" = BAS ] || die "--copy-dest read the source: $(cat "$W/s/cpy2/f")"
run_args "-n --link-dest" ../src/ dry -a -i -n --link-dest=../snap1
run_args "a missing --link-dest DIR" ../src/ miss -a -i --link-dest=../nowhere
grep -q 'nowhere' "$W/s.err" || die "no word on the missing DIR: $(cat "$W/s.err")"
rc=0; "$SYNC" -a --link-dest=x --compare-dest=y "$S/" "$W/never" 2>"$W/mix.err" || rc=$?
[ "$rc" = 1 ] && grep -q 'You may not mix --compare-dest, --copy-dest, and --link-dest.' "$W/mix.err" ||
	die "mixed kinds: exit $rc: $(cat "$W/mix.err")"
ok "--link-dest with --compare-dest: rsync's message, exit 1"

# ---- --link-dest where DEST will not hard-link a symlink (ENOTSUP): copied, said once as new ----
if command -v cc >/dev/null 2>&1; then
	cat >"$W/nolink.c" <<'HOOK'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
int linkat(int od, const char *op, int nd, const char *np, int fl)
{
	static int (*real)(int, const char *, int, const char *, int);
	struct stat st;
	if (!real)
		real = (int (*)(int, const char *, int, const char *, int))dlsym(RTLD_NEXT, "linkat");
	if (op && fstatat(od, op, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
		errno = ENOTSUP;
		return -1;
	}
	return real(od, op, nd, np, fl);
}
HOOK
	cc -shared -fPIC -o "$W/nolink.so" "$W/nolink.c" -ldl || die "cc of the linkat hook"
	L=$W/lsrc
	mkdir -p "$L" && printf 'reg\n' >"$L/reg" && ln -s some-target "$L/sym"
	for side in r s; do mkdir -p "$W/$side" && cp -a "$L" "$W/$side/lbasis"; done
	for opt in -ai -aii; do
		rm -rf "$W/r/ldst" "$W/s/ldst"
		LD_PRELOAD=$W/nolink.so ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 \
			run_args "--link-dest $opt, a symlink DEST will not hard-link" ../lsrc/ ldst $opt --link-dest=../lbasis
	done
	grep -qx 'cL          sym -> some-target' "$W/s.out" || die "-aii: the symlink's line: $(cat "$W/s.out")"
	# -i with -vv shows the unchanged lines too, as -ii does
	rm -rf "$W/r/ldst" "$W/s/ldst"
	OUT_FILTER='s/^sent .* bytes\/sec$/sent/; s/  speedup is .*$//; /^total: matches=/d'
	LD_PRELOAD=$W/nolink.so ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 \
		run_args "--link-dest -ivv, a symlink DEST will not hard-link" ../lsrc/ ldst -ivvplrtH --link-dest=../lbasis
	OUT_FILTER=
	grep -qx 'cL          sym -> some-target' "$W/s.out" || die "-ivv: the symlink's line: $(cat "$W/s.out")"
	[ "$(stat -c %i "$W/s/ldst/reg")" = "$(stat -c %i "$W/s/lbasis/reg")" ] || die "the regular file was not linked"
else
	skip_part "no cc: the linkat hook"
fi

finish
