#!/bin/bash
# SPDX-License-Identifier: MIT
# -b, --backup-dir and --suffix beside rsync: replaced and deleted files
# kept beside the file or under the backup directory, the backups
# protected from --delete, the same lines and trees as rsync's.
. "$TESTS_DIR/sync/lib.sh"

S=$W/src
mkdir -p "$S/sub" "$W/r" "$W/s"
printf 'a\n' >"$S/a"
printf 'b\n' >"$S/sub/b"
ln -s a "$S/lnk"
rsync -a "$S/" "$W/r/d/"
printf 'gone\n' >"$W/r/d/x"
mkdir -p "$W/r/d/olddir" && printf 'o\n' >"$W/r/d/olddir/o"
printf 'stale backup\n' >"$W/r/d/a~"
for t in d1 d2 d3 d4 d5 d7 d8; do cp -a "$W/r/d" "$W/r/$t"; cp -a "$W/r/d" "$W/s/$t"; done
printf 'A2\n' >"$S/a"
printf 'bb\n' >"$S/sub/b"
rm "$S/lnk" && ln -s sub "$S/lnk"

COMPARE_OPTS="--no-root-time --no-dir-times" run_args "-b" ../src/ d1 -a -i -b
[ "$(cat "$W/s/d1/a~")" = a ] || die "-b: the replaced file was not kept as a~"
# rsync -b without --backup-dir implies -O (directory times are left as the
# backups leave them); sweep-sync sets them: directory times are not compared there
COMPARE_OPTS="--no-root-time --no-dir-times" run_args "-b --delete-after (backups protected)" ../src/ d2 -a -i -b --delete-after
[ -e "$W/s/d2/x~" ] && [ -e "$W/s/d2/olddir/o~" ] || die "-b --delete: deleted files were not kept"
COMPARE_OPTS="--no-root-time --no-dir-times" run_args "-b --suffix=.old" ../src/ d3 -a -i -b --suffix=.old --delete-after
run_args "--backup-dir (relative to DEST)" ../src/ d4 -a -i --backup-dir=../bak4 --delete-after
compare_trees "$W/r/bak4" "$W/s/bak4" --no-root-time --no-dir-times # made at this run's times
run_args "--backup-dir, absolute, with --suffix" ../src/ d5 -a -i --backup-dir="$W/BAK5" --suffix=.1 --delete-after
[ "$(cat "$W/BAK5/a.1")" = a ] || die "--backup-dir absolute: a.1"
run_args "--suffix=x/y is refused" ../src/ d6 -a -b --suffix=x/y
COMPARE_OPTS="--no-root-time --no-dir-times" run_args "-n -b changes nothing" ../src/ d1 -a -i -n -b
# --debug=backup: rsync's make_backup lines (its receiver prints a file's when the file is done: compared as sets)
OUT_ORDER=sort run_args "--debug=backup, --backup-dir" ../src/ d7 -a --debug=backup --backup-dir=../bak7 --delete-after
grep -qx 'make_backup: RENAME x successful.' "$W/s.out" && grep -qx 'make_backup: HLINK a successful.' "$W/s.out" ||
	die "--debug=backup: $(cat "$W/s.out")"
# a backup directory on another filesystem (/dev/shm, a tmpfs): copied, and rsync's COPY/SYMLINK words
if [ -d /dev/shm ] && [ -w /dev/shm ] && [ "$(stat -c %d /dev/shm)" != "$(stat -c %d "$W")" ]; then
	X=$(mktemp -d /dev/shm/sweep-sync-bak.XXXXXX)
	on_exit "rm -rf '$X'"
	mkdir -p "$X/s" # (both tools back up there in turn: the output and the last tree are compared)
	OUT_ORDER=sort run_args "--debug=backup, --backup-dir on another filesystem" ../src/ d8 -a --debug=backup \
		--backup-dir="$X/s" --delete-after
	grep -qx 'make_backup: COPY a successful.' "$W/s.out" && [ "$(cat "$X/s/a")" = a ] && [ -L "$X/s/lnk" ] ||
		die "--debug=backup across filesystems: $(cat "$W/s.out")"
else
	skip_part "no /dev/shm on another filesystem: a backup across filesystems"
fi
rc=0; "$SYNC" -a --debug=deltasum "$S/" "$W/never" 2>"$W/s.err" || rc=$?
[ "$rc" = 1 ] && grep -q 'does not support --debug=deltasum' "$W/s.err" && [ ! -e "$W/never" ] ||
	die "--debug=deltasum: exit $rc: $(cat "$W/s.err")"
ok "--debug items other than backup are refused, exit 1"

finish
