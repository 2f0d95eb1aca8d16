#!/bin/bash
# SPDX-License-Identifier: MIT
# The ABI as a user meets it: install the build (meson install --destdir),
# build tests/abi/consumer.c against the installed copy through pkg-config
# only (no path into the source or build tree), run it on a tree, and check
# what it reports against find and diff. Also: every installed header
# compiles on its own, and the library exports exactly the symbols of its
# version script.
. "$TESTS_DIR/common/lib.sh"
set -u
require_cmd pkg-config cc
scratch T abi

meson install -C "$BUILD_ROOT" --destdir "$T/root" --no-rebuild >"$T/install.log" 2>&1 ||
	{ tail -20 "$T/install.log"; die "meson install"; }
pc=$(find "$T/root" -name libsweep.pc | head -1)
[ -n "$pc" ] || die "no libsweep.pc installed"
export PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR=$T/root
cflags=$(pkg-config --cflags libsweep) && libs=$(pkg-config --libs libsweep) || die "pkg-config libsweep"
libdir=$(dirname "$(find "$T/root" -name 'libsweep.so' | head -1)")

# every installed header on its own, as C and as C++ when there is a C++ compiler
for h in $(cd "$T/root" && find . -path '*/include/*' -name '*.h' | sed 's|.*/include/||'); do
	printf '#include <%s>\nint main(void) { return 0; }\n' "$h" >"$T/h.c"
	cc -Wall -Wextra -Werror $cflags -c "$T/h.c" -o "$T/h.o" 2>"$T/h.err" || { cat "$T/h.err"; die "<$h> does not compile alone"; }
	if command -v c++ >/dev/null; then
		cp "$T/h.c" "$T/h.cc"
		c++ -Wall -Werror $cflags -c "$T/h.cc" -o "$T/h.o" 2>"$T/h.err" || { cat "$T/h.err"; die "<$h> does not compile as C++"; }
	fi
done
ok "every installed header compiles alone"

# In the sanitizer build the installed library needs its runtime first: link it into the consumer.
san=${SWEEP_SANITIZE:+-fsanitize=$SWEEP_SANITIZE}
cc -Wall -Wextra -Werror $san $cflags "$TESTS_DIR/abi/consumer.c" -o "$T/consumer" $libs || die "the consumer does not build"
mkdir -p "$T/tree/a/b" "$T/dst"
for i in $(seq 1 30); do head -c $((i * 777)) /dev/urandom >"$T/tree/a/f$i"; done
for i in $(seq 1 9); do printf 'x%s' $i >"$T/tree/a/b/g$i"; done
ln -s f1 "$T/tree/a/link"
out=$(LD_LIBRARY_PATH=$libdir "$T/consumer" "$T/tree" "$T/dst") || die "the consumer failed: $out"
echo "consumer: $out"
ldd "$T/consumer" | grep -q "$libdir/libsweep.so" 2>/dev/null || LD_LIBRARY_PATH=$libdir ldd "$T/consumer" | grep -q "$libdir/libsweep" ||
	die "the consumer did not link the installed library"
[ "$(echo "$out" | sed 's/.*files=\([0-9]*\).*/\1/')" = "$(find "$T/tree" -type f | wc -l)" ] || die "files read != find"
diff -r "$T/tree" "$T/dst/copy" || die "the copy differs"
ok "walk, batch read, order and copy through the installed library"

# exports = the version script
so=$(find "$T/root" -name 'libsweep.so.*.*' | head -1)
nm -D --defined-only "$so" | awk '$2 == "T" { print $3 }' | sed 's/@.*//' | sort -u >"$T/exported"
sed -n 's/^\t\t\(sweep_[a-z0-9_]*\);$/\1/p' "$SOURCE_ROOT/lib/libsweep.map" | sort -u >"$T/listed"
diff -u "$T/listed" "$T/exported" || die "exports differ from lib/libsweep.map"
nm -D --defined-only "$so" | grep -q 'sweep_.*@@SWEEP_0.1' || die "symbols carry no version node"
ok "$(wc -l <"$T/exported") exported symbols, each listed in lib/libsweep.map"
finish
