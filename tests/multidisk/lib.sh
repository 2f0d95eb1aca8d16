# SPDX-License-Identifier: MIT
# Shell helpers of the multi-disk tests: source after tests/common/lib.sh.
#
#   md_disks_on_tmpfs SIZE   loop images on a private tmpfs (LOOPFS_WORK), so
#                            that each loop device is a disk of its own: a loop
#                            device over a file of a real disk is that disk
#                            (lib/device/devmap.c), and two of them one disk
#   md_chunks_same FILE SIZE DIR...
#                            whether FILE (data a tool wrote out, in any order)
#                            is the files under DIR... cut into SIZE-byte pieces,
#                            as a set (each file's size a multiple of SIZE)
. "$TESTS_DIR/common/loopfs.sh"

md_disks_on_tmpfs() {
	local t
	scratch t tmpfs
	mount -t tmpfs -o "size=$1,mode=755" sweep-multidisk "$t" || skip "cannot mount a tmpfs"
	# Registered before loopfs_require's cleanup, so it runs after it: the images are gone by then.
	on_exit "umount '$t' 2>/dev/null || umount -l '$t'"
	LOOPFS_WORK="$t/work"
	mkdir "$LOOPFS_WORK"
}

md_chunks_same() {
	local file=$1 size=$2
	shift 2
	python3 - "$file" "$size" "$@" <<'PY'
import hashlib, os, sys
file, size, dirs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def pieces(data):
    return [hashlib.sha256(data[i:i + size]).hexdigest() for i in range(0, len(data), size)]
got = sorted(pieces(open(file, "rb").read()))
want = []
for d in dirs:
    for root, _, names in os.walk(d):
        for n in names:
            p = os.path.join(root, n)
            if os.path.isfile(p) and not os.path.islink(p):
                want += pieces(open(p, "rb").read())
sys.exit(0 if got == sorted(want) else 1)
PY
}
