#!/bin/bash
# SPDX-License-Identifier: MIT
# mktree.sh DIR [big]: a tree with every kind of entry du has rules for:
# nested and empty directories, hard links (same directory, across
# directories, to a file outside a -d limit), sparse files, symlinks to
# files, to directories and dangling, names with spaces, newlines, quotes
# and invalid UTF-8, and (with "big") a directory of more than 10,000 entries
# so that fts sorts it by inode.
set -e
d=$1
mkdir -p "$d"
cd "$d"
mkdir -p a/b/c/d/e empty sub/empty2 "with space" $'new\nline' $'bad\xffutf8' "it's"
printf 'hello\n' > a/small
head -c 5000 /dev/urandom > a/b/five-k
head -c 70000 /dev/urandom > a/b/c/seventy-k
head -c 1300000 /dev/urandom > a/b/c/d/e/big
: > a/zero
# sparse: a hole then data, and all hole
truncate -s 10M sub/sparse
printf 'tail' | dd of=sub/sparse bs=1 seek=$((8 * 1024 * 1024)) conv=notrunc status=none
truncate -s 3G sub/hole-only
# hard links: same dir, other dir, deeper dir
ln a/b/five-k a/b/five-k.link
ln a/b/five-k sub/five-k.link2
ln a/b/c/seventy-k "with space/seventy link"
ln a/small a/b/c/d/e/small.deep
# symlinks
ln -s ../a/small sub/to-small
ln -s ../a sub/to-a
ln -s nowhere sub/dangling
ln -s "$PWD/sub" a/b/abs-to-sub
printf 'x%.0s' {1..3000} > "with space/file one"
printf 'nl' > $'new\nline/name\nwith newline'
printf 'ff' > $'bad\xffutf8/\xfe\xfd'
printf 'q' > "it's/a \"quoted\" name"
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
	head -c $((i * 1500)) /dev/zero > "sub/f$i.txt"
done
mkfifo sub/fifo
if [ "${2:-}" = big ]; then
	mkdir many
	# 10,500 entries, a few of them directories with content, so both the
	# inode sort and the subdirectory totals inside it are exercised
	(cd many && seq -f 'n%05g' 1 10480 | xargs touch)
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		mkdir "many/dir$i"
		head -c $((i * 4096)) /dev/zero > "many/dir$i/data"
	done
	ln many/n00001 many/n00001.hl
fi
