#!/bin/bash
# SPDX-License-Identifier: MIT
# The probe on a slow device this kernel can make without device-mapper: a
# loop device over a file of a FUSE filesystem (tests/dev/slowfuse.py) whose
# server answers one read at a time, 5 ms late. Random reads pay the wait
# every time, a sequential stream once per read-ahead request, as on a disk:
# HDD class. (The fast side is dev-probe-tmpfs: this server, in Python on a
# loaded machine, takes about 1 ms a request even without the wait.) Skips
# without root, loop devices or FUSE.
. "$TESTS_DIR/dev/lib.sh"
dev_setup
[ -c /dev/fuse ] || skip "no /dev/fuse"
grep -qw fuse /proc/filesystems || skip "no fuse in this kernel"

# slow_loop NAME DELAY_MS: serve a 1 GiB file DELAY_MS late, put a loop device on it; prints the device
slow_loop() {
	local mnt=$T/$1 pid i
	mkdir "$mnt"
	/usr/bin/python3 "$TESTS_DIR/dev/slowfuse.py" "$mnt" $((1 << 30)) "$2" </dev/null >/dev/null 2>"$T/$1.err" &
	pid=$!
	echo "$pid" >>"$T/pids"
	for i in $(seq 100); do
		mountpoint -q "$mnt" && break
		kill -0 "$pid" 2>/dev/null || { cat "$T/$1.err" >&2; return 1; }
		sleep 0.05
	done
	mountpoint -q "$mnt" || return 1
	echo "$mnt" >>"$T/mounts"
	losetup -r --find --show "$mnt/img" >"$T/$1.dev" || return 1
	cat "$T/$1.dev" >>"$T/loops"
	cat "$T/$1.dev"
}
# Loop devices off first (they hold the FUSE file), then the servers by their
# numbers (each also ends when its mount goes), then the rest.
on_exit fuse_cleanup
fuse_cleanup() {
	local x
	[ -n "$T" ] || return 0
	while read -r x; do dev_detach "$x"; done <"$T/loops"
	[ -f "$T/pids" ] && while read -r x; do kill "$x" 2>/dev/null; done <"$T/pids"
	dev_cleanup
}

slow=$(slow_loop slow 5) || skip "cannot serve a FUSE file here"
s=$("$P" --cache= "bdev:$slow") || die "devclass-probe bdev:$slow"
echo "5 ms a read: $s"
dev_expect "$s" class=hdd reason=probe probes=1 device="$(basename "$slow")"
[ "$(dev_field "$s" random_ns)" -ge 5000000 ] || die "random reads faster than the server answers: $s"
reads=$(dev_field "$s" reads)
[ "$reads" -ge 8 ] && [ "$reads" -le 32 ] || die "reads=$reads, want 8..32"
ok "FUSE file 5 ms a read -> hdd"
finish
