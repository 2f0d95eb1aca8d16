#!/bin/bash
# SPDX-License-Identifier: MIT
# The include graph of lib/ follows its layers: a file of one layer folder
# includes headers of its own folder or of a layer below it, never one
# above (the order is the one lib/meson.build's opening comment lists:
# common, device, metascan, walk, plan, read, copy; sim rests on common).
# A folder's own workings (walk_impl.h, reader_impl.h, copy_internal.h...)
# are included by nothing outside it in lib/. And the device class is read
# in one place: lib/device/devclass.c (every other part reads the profile).
# Every library thread starts with the caller's signals blocked.
. "$TESTS_DIR/common/lib.sh"
set -u
lib=${SOURCE_ROOT:?}/lib
[ -d "$lib" ] || die "no $lib"

# The layers, lowest first, as lib/meson.build lists them.
mapfile -t order < <(sed -n 's|^#   \([a-z]*\)/ .*|\1|p' "$lib/meson.build")
[ "${#order[@]}" -ge 7 ] || die "cannot read the layers from lib/meson.build (got: ${order[*]})"
rank() { local i; for i in "${!order[@]}"; do [ "${order[$i]}" = "$1" ] && { echo "$i"; return; }; done; echo -1; }
# The folder a quoted header lives in (its layer), empty when none holds it.
home() { local d; for d in "${order[@]}"; do [ -f "$lib/$d/$1" ] && { echo "$d"; return; }; done; }

case_begin "every #include in lib/ reaches its own layer or one below"
for f in "$lib"/*/*.[ch]; do
	layer=$(basename "$(dirname "$f")")
	r=$(rank "$layer")
	[ "$r" -ge 0 ] || { fail "$f: folder $layer is not a layer of lib/meson.build"; continue; }
	while read -r h; do
		[ "$h" = config.h ] && continue
		at=$(home "$h")
		[ -n "$at" ] || { fail "${f#$lib/}: includes \"$h\", which no layer folder holds"; continue; }
		[ "$at" = "$layer" ] && continue
		if [ "$layer" = sim ]; then
			[ "$at" = common ] || fail "${f#$lib/}: the model includes $at/$h (it rests on common alone)"
			continue
		fi
		[ "$(rank "$at")" -lt "$r" ] || fail "${f#$lib/}: $layer includes $at/$h, a layer above it"
		# a folder's own workings stay in it: only each layer's interface is included from outside
		case $h in
		internal.h | device.h | metascan.h | walk.h | plan.h | read.h) ;;
		*) fail "${f#$lib/}: includes $at/$h, the private header of another layer" ;;
		esac
	done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
done
case_end

case_begin "the device class is read in lib/device/devclass.c alone, and in no tool"
while IFS= read -r hit; do
	fail "the class read outside devclass.c: $hit"
done < <(grep -rnE 'device_class *(==|!=)|SWEEP_DEVICE_(HDD|SSD)' "$lib" "$SOURCE_ROOT/utils" --include='*.[ch]' |
	grep -v "^$lib/device/devclass.c:" | grep -v "^$lib/sim/")
case_end

case_begin "the library starts its threads through sweep__thread_start alone (signals stay the caller's)"
while IFS= read -r hit; do
	fail "a thread started without sweep__thread_start: $hit"
done < <(grep -rnE '(^|[^_a-z])pthread_create *\(' "$lib" --include='*.[ch]' | grep -v "^$lib/common/thread_start.c:")
case_end
finish
