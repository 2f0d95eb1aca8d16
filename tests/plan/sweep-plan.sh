#!/bin/bash
# SPDX-License-Identifier: MIT
# sweep-plan against find, stat, sort, cat and filefrag on a generated tree.
. "$TESTS_DIR/common/lib.sh"
set -u
PLAN=${BUILD_ROOT:?}/utils/sweep-plan
scratch work plan-tool

# A tree with files of mixed sizes, created in scrambled order, some empty, a few nested deep.
tree=$work/tree
mkdir -p "$tree"
for i in $(seq 1 300 | shuf --random-source=<(yes)); do
	d=$tree/d$((i % 7))/e$((i % 3))
	mkdir -p "$d"
	head -c $(((i * 7919) % 70000)) /dev/urandom >"$d/f$i"
done
: >"$tree/empty"
mkdir -p "$tree/sp ace"
echo hello >"$tree/sp ace/file with spaces"
ln -s d1 "$tree/link-to-dir"         # not followed: its files appear once
ln -s ../empty "$tree/d1/link-to-file"
mkfifo "$tree/fifo"                  # not a regular file: not listed
nfiles=$(find "$tree" -type f | wc -l)
sync # delayed allocation: give every file its blocks, so locations do not change between runs

# path of each output line: everything after the second space
paths() { cut -d' ' -f3-; }

case_end
case_begin "every order lists every regular file exactly once, with its inode"
for order in physical inode name none auto; do
	"$PLAN" --order=$order --no-compare "$tree" >"$work/$order.out" 2>"$work/$order.err" ||
		fail "--order=$order exited $?: $(cat "$work/$order.err")"
	diff <(paths <"$work/$order.out" | sort) <(find "$tree" -type f | sort) >/dev/null ||
		fail "--order=$order does not list exactly the regular files"
	while read -r off ino path; do
		[ "$(stat -c %i "$path")" = "$ino" ] || { fail "--order=$order: wrong inode for $path"; break; }
	done <"$work/$order.out"
	grep -q "summary: files=$nfiles " "$work/$order.err" || fail "--order=$order: summary does not count $nfiles files"
done

case_end
case_begin "every order prints the same offset for a file (the tool locates files whatever the order)"
for order in inode name none; do
	diff <(awk '{ o = $1; $1 = ""; print $0, o }' "$work/physical.out" | sort) \
		<(awk '{ o = $1; $1 = ""; print $0, o }' "$work/$order.out" | sort) >/dev/null ||
		fail "--order=$order prints other offsets than --order=physical"
done

case_end
case_begin "inode order: ascending inode numbers"
cut -d' ' -f2 "$work/inode.out" | sort -n -c 2>/dev/null || fail "--order=inode is not in ascending inode order"
case_end
case_begin "name order: C-locale sort of the paths"
diff <(paths <"$work/name.out") <(paths <"$work/name.out" | LC_ALL=C sort) >/dev/null || fail "--order=name is not sorted by path"
case_end
case_begin "physical order: located files ascending, then the unlocated ('-') ones by inode"
awk '$1 != "-" { if (seen_dash) bad = 1; if (NR > 1 && $1 + 0 < prev) bad = 1; prev = $1 + 0 }
     $1 == "-" { seen_dash = 1; if (pino != "" && $2 + 0 < pino) bad = 1; pino = $2 + 0 }
     END { exit bad }' "$work/physical.out" || fail "--order=physical is not ascending by offset, unlocated last by inode"

case_end
case_begin "physical offsets agree with filefrag (FIEMAP) where the filesystem gives them"
if command -v filefrag >/dev/null && filefrag -v "$tree/sp ace/file with spaces" >/dev/null 2>&1; then
	bs=$(stat -f -c %S "$tree")
	checked=0
	while read -r off ino path; do
		# filefrag -v: first extent line "0: logical.. physical_start.. physical_end: length: ..."
		want=$(filefrag -v "$path" 2>/dev/null | awk -F'[: .]+' '/^ *0:/ { print $5; exit }')
		if [ "$off" = "-" ]; then
			[ -z "$want" ] || [ "$(stat -c %s "$path")" = 0 ] || fail "$path: no offset, filefrag says block $want"
		else
			[ "$off" = "$((want * bs))" ] || fail "$path: offset $off, filefrag says $((want * bs))"
			checked=$((checked + 1))
		fi
	done < <(head -40 "$work/physical.out")
	echo "checked $checked offsets against filefrag"
fi

case_end
case_begin "--read: exact byte totals, and the data stream equals cat of the listed files, on both backends"
total=$(find "$tree" -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')
backends=syscall
have_uring && backends="syscall uring" || skip_part "--read --backend=uring: io_uring is not available here"
for backend in $backends; do
	"$PLAN" --order=physical --read --backend=$backend --dump="$work/dump" --no-compare \
		--buffer-size=16K --queue-depth=32 "$tree" >"$work/read.out" 2>"$work/read.err" ||
		fail "--read ($backend) exited $?: $(cat "$work/read.err")"
	grep -q "read $nfiles files, $total bytes in .* (backend $backend, " "$work/read.err" ||
		fail "--read ($backend): totals wrong: $(grep read "$work/read.err")"
	paths <"$work/read.out" | tr '\n' '\0' | xargs -0 cat >"$work/cat"
	cmp -s "$work/dump" "$work/cat" || fail "--read ($backend): data differs from cat in plan order"
done
# SWEEP_BACKEND=syscall selects the fallback without an option
SWEEP_BACKEND=syscall "$PLAN" --read --no-compare "$tree" >/dev/null 2>"$work/env.err"
grep -q "(backend syscall" "$work/env.err" || fail "SWEEP_BACKEND=syscall not honoured: $(cat "$work/env.err")"

case_end
case_begin "memory limit: many small sorted batches, still every file once, in batch order"
"$PLAN" --order=inode --memory-limit=2K --no-compare "$tree" >"$work/small.out" 2>"$work/small.err" || fail "--memory-limit exited $?"
diff <(paths <"$work/small.out" | sort) <(find "$tree" -type f | sort) >/dev/null || fail "--memory-limit loses or repeats files"
if cut -d' ' -f2 "$work/small.out" | sort -n -c 2>/dev/null; then
	fail "--memory-limit=2K gave one sorted batch (expected several)"
fi
grep -Eq "plan_bytes_per_entry=[0-9]+ plan_peak_bytes=[0-9]+" "$work/small.err" || fail "no bytes per entry in summary"
peak=$(sed -n 's/.*plan_peak_bytes=\([0-9]*\).*/\1/p' "$work/small.err")
[ "$peak" -lt 4096 ] || fail "--memory-limit=2K but a batch used $peak bytes"

case_end
case_begin "the jump summary: readdir order of a plain walk against plan order"
"$PLAN" --order=physical "$tree" >/dev/null 2>"$work/cmp.err" || fail "summary run exited $?"
grep -Eq "readdir_jumps=[0-9]+ readdir_seeks=[0-9]+ .* plan_jumps=[0-9]+" "$work/cmp.err" || fail "summary lacks jump counts: $(cat "$work/cmp.err")"
# --order=none is the readdir order itself: the two counts must agree
"$PLAN" --order=none "$tree" >/dev/null 2>"$work/none.err"
r=$(sed -n 's/.*readdir_jumps=\([0-9]*\).*/\1/p' "$work/none.err")
p=$(sed -n 's/.* plan_jumps=\([0-9]*\).*/\1/p' "$work/none.err")
[ -n "$r" ] && [ "$r" = "$p" ] || fail "--order=none: readdir jumps $r != plan jumps $p"

case_end
case_begin "trace: header, then every extent of each file in plan order (filefrag's extents), unlocated as comments"
"$PLAN" --order=physical --trace="$work/trace" --no-compare "$tree" >"$work/t.out" 2>/dev/null
head -1 "$work/trace" | grep -qx "# sweep-trace 1" || fail "trace has no header"
grep -v '^#' "$work/trace" | grep -qvE '^R [0-9]+ [0-9]+ [0-9]+$' && fail "trace has malformed request lines"
# the inodes of the trace, in order of first appearance, are the plan's inodes in plan order
diff <(awk '$1 == "R" { i = $4 } $2 == "nophys" { i = $4 } i != "" && !seen[i]++ { print i } { i = "" }' "$work/trace") \
	<(cut -d' ' -f2 "$work/t.out") >/dev/null || fail "trace is not in plan order or misses files"
# each located file's first request starts at its listed offset, and its requests cover its size
awk 'NR == FNR { if ($1 != "-") { off[$2] = $1; size[$2] = 0 } next }
     $1 == "R" { if (!($4 in first)) { first[$4] = $2; if (off[$4] != $2) { print "inode " $4 ": first request " $2 " != " off[$4]; bad = 1 } } cover[$4] += $3 }
     END { exit bad }' "$work/t.out" "$work/trace" || fail "trace requests do not start at the listed offsets"
while read -r off ino path; do
	[ "$off" = "-" ] && continue
	c=$(awk -v i="$ino" '$1 == "R" && $4 == i { s += $3 } END { print s + 0 }' "$work/trace")
	[ "$c" -ge "$(stat -c %s "$path")" ] || fail "trace covers $c bytes of $path, smaller than the file"
done < <(head -50 "$work/t.out")

case_end
case_begin "errors: a missing root is reported, the others are still listed, exit 1"
"$PLAN" --no-compare "$work/nope" "$tree" >"$work/err.out" 2>"$work/err.err"
rc=$?
[ $rc = 1 ] || fail "missing root: exit $rc, want 1"
grep -q "sweep-plan: .*nope.*: No such file or directory" "$work/err.err" || fail "missing root message: $(cat "$work/err.err")"
[ "$(wc -l <"$work/err.out")" = "$nfiles" ] || fail "missing root stopped the listing"
# unreadable file under --read (not as root: root reads everything)
if [ "$(id -u)" != 0 ]; then
	chmod 000 "$tree/d1/e1/f1" 2>/dev/null && {
		"$PLAN" --read --no-compare "$tree" >/dev/null 2>"$work/perm.err"
		[ $? = 1 ] || fail "unreadable file: exit status not 1"
		grep -q "f1: Permission denied" "$work/perm.err" || fail "unreadable file not reported"
		chmod 644 "$tree/d1/e1/f1"
	}
fi

case_end
case_begin "tmpfs: no FIEMAP, the policy is not physical; everything still listed and read"
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] && shm=$(mktemp -d /dev/shm/sweep-plan.XXXXXX); then
	cp -r "$tree/d1" "$tree/d2" "$shm/"
	n=$(find "$shm" -type f | wc -l)
	"$PLAN" --read --dump="$work/shm.dump" "$shm" >"$work/shm.out" 2>"$work/shm.err" || fail "tmpfs: exit $?: $(cat "$work/shm.err")"
	[ "$(grep -c '^- ' "$work/shm.out")" = "$n" ] || fail "tmpfs: files with a physical offset on tmpfs?"
	grep -q "order=physical" "$work/shm.err" && fail "tmpfs: auto resolved to physical order"
	grep -q "read $n files" "$work/shm.err" || fail "tmpfs: not every file read"
	paths <"$work/shm.out" | tr '\n' '\0' | xargs -0 cat | cmp -s - "$work/shm.dump" || fail "tmpfs: data differs from cat"
	rm -rf "$shm"
fi

case_end
case_begin "names with control bytes: one line each, GNU tar's escapes, printf %b gives the bytes back"
mkdir -p "$work/esc"
for n in $'nl\nname' $'esc\033[31m' 'back\slash' $'tab\tcr\r' 'trail ' $'\xe9lat1' $'utf8-\xc3\xa9' $'del\x7f'; do
	echo x > "$work/esc/$n"
done
(cd "$work" && "$PLAN" --order=name --no-compare esc) > "$work/esc.out" 2> /dev/null || fail "escapes: exit $?"
[ "$(wc -l < "$work/esc.out")" = 8 ] || fail "escapes: not one line per file: $(cat -A "$work/esc.out")"
LC_ALL=C grep -q $'[\x01-\x1f\x7f]' "$work/esc.out" && fail "escapes: raw control bytes in the listing: $(cat -A "$work/esc.out")"
# GNU tar -v escapes names the same way, in the C locale and in a UTF-8 one.
for loc in C C.UTF-8; do
	(cd "$work" && LC_ALL=$loc "$PLAN" --order=name --no-compare esc) 2> /dev/null | paths | sort > "$work/esc.$loc"
	(cd "$work" && LC_ALL=$loc tar -cvf /dev/null esc) | grep -v '/$' | sort > "$work/esc.gnu.$loc"
	diff "$work/esc.gnu.$loc" "$work/esc.$loc" >&2 || fail "escapes ($loc): not GNU tar's"
done
grep -qF 'esc/esc\033[31m' "$work/esc.C" && grep -qF 'esc/back\\slash' "$work/esc.C" &&
	grep -qF 'esc/\351lat1' "$work/esc.C" && grep -qF 'esc/utf8-\303\251' "$work/esc.C" ||
	fail "escapes: unexpected forms: $(cat "$work/esc.C")"
grep -qF 'esc/utf8-'$'\xc3\xa9' "$work/esc.C.UTF-8" || fail "escapes: a printable UTF-8 name escaped in a UTF-8 locale"
# Read back as sweep-plan(1) says: the bytes of every name, trailing space included.
while IFS= read -r line; do
	rest=${line#* }
	printf -v name '%b' "${rest#* }"
	printf '%s\0' "$work/$name"
done < "$work/esc.out" | sort -z > "$work/esc.decoded"
find "$work/esc" -type f -print0 | sort -z | cmp -s - "$work/esc.decoded" || fail "escapes: printf %b does not give the names back"

case_end
case_begin "usage"
"$PLAN" --help | grep -q "^Usage: sweep-plan" || fail "--help"
"$PLAN" --version | grep -q "sweep-plan (sweep)" || fail "--version"
"$PLAN" --order=bogus "$tree" >/dev/null 2>&1; [ $? = 2 ] || fail "bad --order not exit 2"
"$PLAN" >/dev/null 2>&1; [ $? = 2 ] || fail "no operand not exit 2"

case_end
finish
