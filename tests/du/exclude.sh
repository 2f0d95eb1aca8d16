#!/bin/bash
# SPDX-License-Identifier: MIT
# The shared --exclude matcher (utils/common/exclude.c) against the tools
# whose rules it copies: the entries it lets through must be exactly those
# GNU tar archives and rsync transfers for the same patterns. (GNU du's own
# rules are checked through sweep-du in du-tree.sh.)
set -u
. "$TESTS_DIR/common/lib.sh"
LIST=$BUILD_ROOT/tests/du/exclude-list
require_cmd tar rsync
scratch T exclude

# a tree without names that tar or rsync would escape in their listings
mkdir -p "$T/tree/a/b/c/d/e" "$T/tree/sub/empty" "$T/tree/with space" "$T/tree/x.txt.d"
for f in a/small a/b/five a/b/c/seventy a/b/c/d/e/big sub/f1.txt sub/f10.txt sub/f2.txt \
	"with space/file one" x.txt.d/inner b B .hidden sub/.dot; do
	echo data >"$T/tree/$f"
done
ln -s a/small "$T/tree/sub/link.txt"
cd "$T" || die "cd $T"

same_list() { # same_list NAME EXPECTED-FILE GOT-FILE
	if cmp -s "$2" "$3"; then
		ok "$1"
	else
		fail "$1"
		diff "$2" "$3" | head -10
	fi
}

tar_case() { # tar_case PATTERN...
	local args=() rules=() p
	for p in "$@"; do args+=("--exclude=$p"); rules+=("-$p"); done
	tar -cf - "${args[@]}" tree | tar -tf - | sort >exp
	"$LIST" tar tree "${rules[@]}" | sort >got
	same_list "tar ${args[*]}" exp got
}

rsync_case() { # rsync_case RULE... (-PATTERN or +PATTERN)
	local args=() r
	for r in "$@"; do
		case $r in
		+*) args+=("--include=${r#+}") ;;
		*) args+=("--exclude=${r#-}") ;;
		esac
	done
	rsync -rlnD --out-format='%n' "${args[@]}" tree/ "$T/nowhere/" | grep -v '^\./$' | sort >exp
	"$LIST" rsync tree "$@" | sort >got
	same_list "rsync ${args[*]}" exp got
}

tar_case 'f1*'
tar_case b
tar_case a/b
tar_case '*.txt'
tar_case tree/sub
tar_case 'e/big'
tar_case '[ab]'
tar_case '*/c'
tar_case 'sub/f1?.txt' 'with space'
tar_case '.*'
tar_case tree
tar_case '*'
tar_case 'a\/b' 'B'

rsync_case '-f1*'
rsync_case '-/a/b/'
rsync_case '-b'
rsync_case '-*.txt'
rsync_case '-a/**/big'
rsync_case '-c/***'
rsync_case '-**/e'
rsync_case '-sub/'
rsync_case '-[ab]'
rsync_case '-with space'
rsync_case '+sub/f1.txt' '-*.txt'
rsync_case '-*/empty/'
rsync_case '-/x.txt.d'
rsync_case '-.*'
rsync_case '-b/c'
rsync_case '-a/*/c'
rsync_case '-*.TXT'
rsync_case '+*/' '+*.txt' '-*'
rsync_case '-/sub/***'
rsync_case '-d/'

finish
