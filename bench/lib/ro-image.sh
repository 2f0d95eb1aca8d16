# SPDX-License-Identifier: MIT
# Sourced by the A/B scripts that remount an image before every run
# (remount-cold-ab.sh, partly-warm-ab.sh):
#
#   ro_image_open IMAGE NAME   attach IMAGE read-only to a loop device of
#                              its own (direct I/O: nothing of it stays in
#                              the page cache of the file beneath) and
#                              mount it read-only at a new directory $M
#                              (ext4: noload; xfs: norecovery, nouuid);
#                              the EXIT trap unmounts, detaches, and
#                              removes $M and the files in RO_IMAGE_FILES
#   ro_image_remount           unmount and mount again: its page, inode
#                              and dentry caches are dropped
# Never touches the image.

RO_IMAGE_FILES=()
dev=

ro_image_mount() { mount -o ro,noload "$dev" "$M" 2>/dev/null || mount -o ro,norecovery,nouuid "$dev" "$M"; }

ro_image_remount() {
	umount "$M"
	ro_image_mount
}

ro_image_close() {
	mountpoint -q "$M" && umount "$M"
	[ -n "$dev" ] && losetup -d "$dev"
	rmdir "$M"
	rm -f "${RO_IMAGE_FILES[@]}"
}

ro_image_open() {
	M=$(mktemp -d "/tmp/$2.XXXXXX")
	trap ro_image_close EXIT
	dev=$(losetup -r --find --show --direct-io=on "$1")
	ro_image_mount
}
