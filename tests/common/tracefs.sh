# SPDX-License-Identifier: MIT
# Finding tracefs for block tracing, mounting it when nobody has. Source it.
#
#   tracefs_find      sets TRACEFS to a tracefs that has instances/. Where
#                     none is mounted (a fresh machine), mounts one on a
#                     private directory of its own. Returns 1 when there
#                     is none. Call it in the test's own shell, not in $(...).
#   tracefs_release   unmounts what tracefs_find mounted, nothing else; call
#                     it from the EXIT trap, after removing your instance.
#
# A private mount point, not /sys/kernel/tracing: two tests running at once
# would otherwise share one mount, and the first to finish would unmount it
# under the other (its instance's files vanish mid-trace). Every mount of
# tracefs shows the same instances, so nothing else differs.

TRACEFS=
TRACEFS_MOUNTED=

tracefs_find() {
	local t
	for t in /sys/kernel/tracing /sys/kernel/debug/tracing; do
		[ -d "$t/instances" ] && { TRACEFS=$t; return 0; }
	done
	[ "$(id -u)" = 0 ] || return 1
	mountpoint -q /sys/kernel/tracing && return 1 # mounted, but no instances: an old kernel
	grep -qw tracefs /proc/filesystems || return 1
	t=$(mktemp -d "${TMPDIR:-/tmp}/sweep-tracefs.XXXXXX") || return 1
	if ! mount -t tracefs nodev "$t" 2>/dev/null; then
		rmdir "$t"
		return 1
	fi
	TRACEFS_MOUNTED=$t
	[ -d "$t/instances" ] || { tracefs_release; return 1; }
	TRACEFS=$t
}

tracefs_release() {
	[ -n "$TRACEFS_MOUNTED" ] || return 0
	umount "$TRACEFS_MOUNTED" 2>/dev/null && rmdir "$TRACEFS_MOUNTED"
	TRACEFS_MOUNTED=
}
