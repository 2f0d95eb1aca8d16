# SPDX-License-Identifier: MIT
# Shared by the sweep-cp tests: the binary, a scratch directory removed at
# exit, a source tree with every kind of entry, and tree comparison.
# Checks, skips, cleanup and the exit status: tests/common/lib.sh.
. "$TESTS_DIR/common/lib.sh"

SWEEP_CP=${SWEEP_CP:-$BUILD_ROOT/utils/sweep-cp}
[ -x "$SWEEP_CP" ] || die "no sweep-cp at $SWEEP_CP"
cp --version 2>/dev/null | grep -q GNU || skip "cp is not GNU cp"
MANIFEST="$TESTS_DIR/common/manifest.py"
TMP_PREFIX=.sweep-tmp.
scratch CP_TMP cp-test

# same_tree DESC FIELDS A B: manifests of A and B are equal in FIELDS (all when empty).
same_tree() {
	local what=$1 fields=$2 a=$3 b=$4
	local fa="$CP_TMP/manifest.a" fb="$CP_TMP/manifest.b"
	python3 "$MANIFEST" ${fields:+--fields=$fields} "$a" >"$fa" || { fail "$what: manifest of $a"; return; }
	python3 "$MANIFEST" ${fields:+--fields=$fields} "$b" >"$fb" || { fail "$what: manifest of $b"; return; }
	if cmp -s "$fa" "$fb"; then
		ok "$what ($(wc -l <"$fa") entries)"
	else
		fail "$what"
		diff "$fa" "$fb" | head -20
	fi
}

# no_temps DIR: no temporary names were left behind.
no_temps() {
	local left
	left=$(find "$1" -name "$TMP_PREFIX*" | head -5)
	[ -z "$left" ] || { echo "left behind: $left"; return 1; }
}

# make_tree DIR: one of everything cp -a must keep.
make_tree() {
	local s=$1
	mkdir -p "$s/d1/d2/d3" "$s/empty" "$s/ro" "$s/acl-dir/sub" "$s/sticky"
	printf 'hello\n' >"$s/small"
	: >"$s/zero"
	head -c 4095 /dev/urandom >"$s/d1/odd"
	head -c 4096 /dev/urandom >"$s/d1/block"
	head -c $((3 * 1024 * 1024 + 17)) /dev/urandom >"$s/d1/d2/big"
	head -c 70000 /dev/urandom >"$s/name with spaces"
	printf 'nl\n' >"$s/$(printf 'new\nline')"
	printf 'utf\n' >"$s/ünïcødé"
	printf 'long\n' >"$s/$(printf 'L%.0s' $(seq 1 255))"
	# deep nesting
	local deep="$s/deep"
	for i in $(seq 1 30); do deep="$deep/n$i"; done
	mkdir -p "$deep" && printf 'deep\n' >"$deep/leaf"
	# sparse: leading hole, data in the middle, trailing hole
	truncate -s 8M "$s/sparse"
	printf 'middle' | dd of="$s/sparse" bs=1 seek=$((3 * 1024 * 1024)) conv=notrunc status=none
	# a hole at the end only, and zeros written as data (for --sparse=always)
	head -c 100000 /dev/urandom >"$s/tailhole" && truncate -s 5M "$s/tailhole"
	head -c 1000 /dev/urandom >"$s/zeros" && head -c $((2 * 1024 * 1024)) /dev/zero >>"$s/zeros" &&
		printf 'end' >>"$s/zeros"
	# links
	ln "$s/small" "$s/d1/hard1"
	ln "$s/small" "$s/d1/d2/hard2"
	ln "$s/d1/block" "$s/block-link"
	ln -s small "$s/sym-rel"
	ln -s /nonexistent/target "$s/sym-dangling"
	ln -s d1 "$s/sym-dir"
	ln -s "$(printf 'T%.0s' $(seq 1 300))" "$s/sym-long"
	ln "$s/sym-rel" "$s/sym-hard" # a hard link to a symlink
	mkfifo "$s/fifo"
	python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$s/sock"
	# modes
	is_root && chmod 0000 "$s/zero" # (an ordinary user could not read it back)
	chmod 4755 "$s/d1/odd"
	chmod 2710 "$s/d1/block"
	chmod 1777 "$s/sticky"
	printf 'inside ro\n' >"$s/ro/file"
	chmod 0555 "$s/ro"
	# xattrs and ACLs (where the filesystem has them)
	setfattr -n user.color -v blue "$s/small" 2>/dev/null
	setfattr -n user.bin -v 0x00ff10 "$s/d1/d2/big" 2>/dev/null
	setfattr -n user.dir -v yes "$s/d1" 2>/dev/null
	setfacl -m u:12345:rwx,g:54321:r "$s/name with spaces" 2>/dev/null
	setfacl -m u:12345:rx "$s/acl-dir" 2>/dev/null
	setfacl -d -m u:12345:rwx,o::- "$s/acl-dir" 2>/dev/null
	printf 'acl child\n' >"$s/acl-dir/sub/child"
	# times with nanoseconds, owners, devices
	touch -h -d '2001-02-03 04:05:06.123456789' "$s/sym-rel"
	touch -d '1999-12-31 23:59:59.987654321' "$s/small"
	touch -a -d '2002-01-01 00:00:00.5' "$s/d1/d2/big"
	if is_root; then
		mknod "$s/chr" c 1 3
		mknod "$s/blk" b 7 200
		chown 1234:5678 "$s/d1/d2/big"
		chown -h 4321:8765 "$s/sym-rel"
		chown 777:888 "$s/d1/d2"
		chown 0:999 "$s/fifo"
	fi
	touch -d '2010-10-10 10:10:10.101010101' "$s/d1/d2" "$s/empty" "$s/ro"
}

# case_stdin CMD...: CMD with the stdin case_as_cp gives it.
case_stdin() {
	if [ "${CASE_STDIN-}" = closed ]; then
		"$@" <&-
	elif [ -n "${CASE_STDIN+set}" ]; then
		printf '%s' "$CASE_STDIN" | "$@"
	else
		"$@" </dev/null
	fi
}

# The tree under the current directory, the scratch files left aside.
tree_of() {
	find . -path ./.out -prune -o -printf '%p %y %m %s %n %l\n' | sort
	find . -path ./.out -prune -o -type f -exec md5sum {} + | sort -k2
}

# case_as_cp SETUP ARGS...: SETUP is run in an empty directory (twice: one
# for each tool), then the tool with ARGS there. The tool's stdin is
# CASE_STDIN's text where set, closed where CASE_STDIN=closed, else /dev/null.
# @PWD@ in ARGS is the directory it runs in (an absolute path), and that
# directory is @PWD@ again in what is compared (both directories are
# named with five letters: symlinks to them have one size).
case_as_cp() {
	local setup=$1 t bad= a
	shift
	for t in gnucp sweep; do
		local args=()
		for a in "$@"; do args+=("${a//@PWD@/$CP_TMP/$t}"); done
		rm -rf "${CP_TMP:?}/$t"
		mkdir -p "$CP_TMP/$t/.out"
		(cd "$CP_TMP/$t" && eval "$setup") || die "setup: $setup"
		if [ $t = gnucp ]; then
			(cd "$CP_TMP/$t" && case_stdin cp "${args[@]}" >.out/out 2>.out/err; echo $? >.out/rc)
		else
			(cd "$CP_TMP/$t" && case_stdin "$SWEEP_CP" "${args[@]}" >.out/out 2>.out/err; echo $? >.out/rc)
		fi
		sed -i "s/^cp: /sweep-cp: /; s/? cp: /? sweep-cp: /g; s/^Try 'cp --help'/Try 'sweep-cp --help'/" "$CP_TMP/$t/.out/err"
		sed -i "s|$CP_TMP/$t|@PWD@|g" "$CP_TMP/$t/.out/err" "$CP_TMP/$t/.out/out"
		(cd "$CP_TMP/$t" && tree_of | sed "s|$CP_TMP/$t|@PWD@|g") >"$CP_TMP/$t.tree"
	done
	local g="$CP_TMP/gnucp" s="$CP_TMP/sweep"
	cmp -s "$g.tree" "$s.tree" || bad="$bad tree"
	cmp -s "$g/.out/out" "$s/.out/out" || bad="$bad stdout"
	cmp -s "$g/.out/err" "$s/.out/err" || bad="$bad stderr"
	cmp -s "$g/.out/rc" "$s/.out/rc" || bad="$bad exit($(cat "$g/.out/rc") vs $(cat "$s/.out/rc"))"
	if [ -z "$bad" ]; then
		ok "cp $* [$setup] (exit $(cat "$g/.out/rc"))"
	else
		fail "cp $* [$setup]:$bad"
		diff "$g.tree" "$s.tree" | head -10
		diff "$g/.out/out" "$s/.out/out" | head -5
		diff "$g/.out/err" "$s/.out/err" | head -5
	fi
}
