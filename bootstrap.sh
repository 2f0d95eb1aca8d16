#!/bin/bash
# One entry point for a fresh Debian machine (see README):
#   ./bootstrap.sh demo   install what is missing, build, run the headline demo
#   ./bootstrap.sh test   install what is missing, build with -Werror, run every test,
#                         then build again with ASan+UBSan and run every test again
# Other verbs: deps, build.
set -euo pipefail
cd "$(dirname "$0")"

PACKAGES=(build-essential pkg-config meson ninja-build
	liburing-dev libcmocka-dev libarchive-dev libacl1-dev libattr1-dev
	libarchive-tools tar rsync acl attr xfsprogs e2fsprogs btrfs-progs util-linux clang libclang-rt-14-dev
	gzip bzip2 xz-utils zstd man-db groff-base python3 python3-matplotlib file restic borgbackup dmsetup
	xfslibs-dev linux-perf strace ncdu python3-pytest python3-setuptools python3-wheel python3-pip python3-venv
	fuse3 libfuse3-dev fpart openssh-server openssh-client)

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

deps() {
	local missing=()
	for p in "${PACKAGES[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		echo "bootstrap: installing ${missing[*]}"
		as_root apt-get update -qq
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
	fi
}

build() { # build DIR [meson options...]
	local dir=$1; shift
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" "$@" >/dev/null
	else
		meson configure "$dir" "$@" >/dev/null
	fi
	meson compile -C "$dir" >/dev/null || meson compile -C "$dir"
}

# Count what meson ran and print one closing line: "N passed, N failed, N skipped".
run_suite() { # run_suite DIR LABEL
	local dir=$1 label=$2 rc=0
	meson test -C "$dir" --print-errorlogs --num-processes 2 || rc=$?
	python3 - "$dir/meson-logs/testlog.json" "$label" <<'PY'
import json, sys
c = {"OK": 0, "FAIL": 0, "SKIP": 0, "TIMEOUT": 0, "ERROR": 0, "EXPECTEDFAIL": 0, "UNEXPECTEDPASS": 0}
for line in open(sys.argv[1]):
    r = json.loads(line)["result"]
    c[r] = c.get(r, 0) + 1
failed = c["FAIL"] + c["TIMEOUT"] + c["ERROR"] + c["UNEXPECTEDPASS"]
print(f"{sys.argv[2]}: {c['OK'] + c['EXPECTEDFAIL']} passed, {failed} failed, {c['SKIP']} skipped")
PY
	return $rc
}

demo() {
	deps
	build build
	bench/demo.sh
}

test_all() {
	deps
	# Each build runs the suite in one device class: every fidelity test is
	# checked in both, whatever the probe says of this machine's disk. The
	# copy engine's writer thread makes every copy in the sanitizer pass,
	# and only those the engine gives it in the plain pass.
	build build -Dwerror=true -Dtest_hooks=true -Dtest_device=ssd -Dtest_copy=auto
	local rc=0
	run_suite build tests || rc=1
	build build-asan -Dwerror=true -Dtest_hooks=true -Dtest_device=hdd -Dtest_copy=thread -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		run_suite build-asan asan-ubsan || rc=1
	return $rc
}

case ${1:-} in
deps) deps ;;
build) deps; build build ;;
demo) demo ;;
test) test_all ;;
*) echo "usage: $0 demo|test|deps|build" >&2; exit 2 ;;
esac
