# SPDX-License-Identifier: MIT
# Finding tracefs for block tracing, mounting it when nobody has. Source it.
#
#   tracefs_find      sets TRACEFS to a tracefs that has instances/; mounts
#                     tracefs on /sys/kernel/tracing first when it is not
#                     mounted anywhere (a fresh machine). Returns 1 when there
#                     is none. Call it in the test's own shell, not in $(...).
#   tracefs_release   unmounts what tracefs_find mounted, nothing else; call
#                     it from the EXIT trap, after removing your instance.
#
# Another test may have made an instance under our mount meanwhile: the
# unmount then fails with EBUSY and the mount stays, which is harmless.

TRACEFS=
TRACEFS_MOUNTED=

tracefs_find() {
	local t
	for t in /sys/kernel/tracing /sys/kernel/debug/tracing; do
		[ -d "$t/instances" ] && { TRACEFS=$t; return 0; }
	done
	t=/sys/kernel/tracing
	[ -d "$t" ] && [ "$(id -u)" = 0 ] || return 1
	mountpoint -q "$t" && return 1 # mounted, but no instances: an old kernel
	grep -qw tracefs /proc/filesystems || return 1
	mount -t tracefs nodev "$t" 2>/dev/null || return 1
	TRACEFS_MOUNTED=$t
	[ -d "$t/instances" ] || { tracefs_release; return 1; }
	TRACEFS=$t
}

tracefs_release() {
	[ -n "$TRACEFS_MOUNTED" ] || return 0
	umount "$TRACEFS_MOUNTED" 2>/dev/null || true
	TRACEFS_MOUNTED=
}
