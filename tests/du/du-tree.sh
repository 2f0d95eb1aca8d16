#!/bin/bash
# SPDX-License-Identifier: MIT
# sweep-du against GNU du, line for line, on a generated tree with every kind
# of entry (tests/du/mktree.sh), for every option and their combinations,
# several operands, both I/O backends and every walk order.
set -u
. "$TESTS_DIR/du/lib.sh"

"$TESTS_DIR/du/mktree.sh" "$DU_TMP/t" big
cd "$DU_TMP/t" || die "cd"

du_matrix .
du_matrix a
# operands: overlapping, repeated, files, fifo, missing, trailing slashes
du_same -a sub a sub/f1.txt
du_same a a
du_same -c a/b a
du_same -a sub/fifo sub/to-a sub/dangling nope
du_same -L sub/dangling sub/to-a
du_same -H sub/to-a sub/dangling
du_same -D -a sub/to-a
du_same -s ./a/ a// /dev/null
du_same -sc a "with space" $'new\nline' $'bad\xffutf8' "it's"
du_same -a ""
du_same --exclude=a a
du_same --exclude='*' -c .
du_same --exclude='[ab]' --exclude='e' -a .
du_same -s -d 0 a
du_same -s -d 1 a
du_same -a -s a
du_same -d x a
du_same --bogus a
du_same -B 0 a
du_same -B xyz a
du_same --block-size=5X a
du_same "-B'1" -a a
du_same "--block-size='human" a
du_same -B 99999999999999999999 a
du_same -t 5Q a
printf 'b\n*.txt\n\n' >"$DU_TMP/patterns"
du_same -X "$DU_TMP/patterns" -a .
du_same -X "$DU_TMP/no-such-file" a
# --time (relatime moves a directory's atime on its first read: read once first)
du -s . >/dev/null
du_same --time -a .
du_same --time=ctime --time-style=full-iso .
du_same --time=atime -S -d 2 .
du_same --time=use --time-style=iso -c a sub
du_same --time --time-style=+%s.%N -a a
du_same --time --time-style=l -s a
TIME_STYLE=posix-long-iso du_same --time a
TIME_STYLE=+%Y du_same --time a
TZ=Asia/Tokyo du_same --time --time-style=full-iso -a sub
du_same --time=bogus a
du_same --time=a a
du_same --time --time-style=bogus a
# --files0-from: operands from a NUL-separated list
printf 'a\0sub\0\0nope\0a\0with space\0' >"$DU_TMP/list0"
printf 'a' >"$DU_TMP/list1"
: >"$DU_TMP/list2"
du_same --files0-from="$DU_TMP/list0"
du_same -a --files0-from="$DU_TMP/list1"
du_same --files0-from="$DU_TMP/list2"
du_same --files0-from="$DU_TMP/list1" a
du_same --files0-from="$DU_TMP/no-such-list"
printf 'a\0-\0' >"$DU_TMP/list3"
du --files0-from=- <"$DU_TMP/list3" >"$DU_TMP/stdin.exp" 2>&1
echo $? >>"$DU_TMP/stdin.exp"
sed -i 's/^du: /sweep-du: /' "$DU_TMP/stdin.exp"
"$SWEEP_DU" --files0-from=- <"$DU_TMP/list3" >"$DU_TMP/stdin.got" 2>&1
echo $? >>"$DU_TMP/stdin.got"
check "--files0-from=-: as du" cmp -s "$DU_TMP/stdin.exp" "$DU_TMP/stdin.got"
# no operand: the current directory
cd a || die "cd"
du_same -a
cd .. || die "cd"
DU_BLOCK_SIZE=1M du_same -a a
BLOCK_SIZE=human-readable du_same a
POSIXLY_CORRECT=1 du_same a

# the walk order and the I/O backend must not change a byte
for order in none inode physical name; do
	"$SWEEP_DU" -a --order=$order . >"$DU_TMP/o-$order"
	check "--order=$order exits 0" [ $? = 0 ]
	check "--order=$order: the same lines as --order=none" cmp -s "$DU_TMP/o-none" "$DU_TMP/o-$order"
done
du -a . >"$DU_TMP/o-du"
check "--order=none: the same lines as du" cmp -s "$DU_TMP/o-du" "$DU_TMP/o-none"
backends=syscall
have_uring && backends="uring syscall" || skip_part "SWEEP_BACKEND=uring: io_uring is not available here"
for be in $backends; do
	SWEEP_BACKEND=$be du_same -a .
done
finish
