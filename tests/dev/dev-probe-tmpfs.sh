#!/bin/bash
# SPDX-License-Identifier: MIT
# The probe on a fast device: a loop device over a file in tmpfs is timed
# (not taken from the flag or a guess) and gets the SSD class, whether asked
# about the block device or through a filesystem on it; the tools' verbose
# switches say so, and sweep-du's output stays what it was.
. "$TESTS_DIR/dev/lib.sh"
dev_setup

L=$(dev_loop 1G) || die "cannot attach a loop device"
name=$(basename "$L")
line=$("$P" --cache= "bdev:$L") || die "devclass-probe bdev:$L"
echo "$line"
dev_expect "$line" class=ssd reason=probe probes=1 cached=0 error=0 device="$name"
reads=$(dev_field "$line" reads)
[ "$reads" -ge 8 ] && [ "$reads" -le 32 ] || die "reads=$reads, want 8..32"
[ "$(dev_field "$line" random_ns)" -gt 0 ] && [ "$(dev_field "$line" seq_ns)" -gt 0 ] || die "no timings: $line"

# Through a filesystem: the device under it is the loop device (tmpfs below has no disk: no flag).
mnt=$(dev_mount_ext4 "$L") || die "cannot make ext4 on $L"
line=$("$P" --cache= "$mnt") || die "devclass-probe $mnt"
echo "$line"
dev_expect "$line" class=ssd reason=probe probes=1 device="$name"
"$P" --cache= --explain "$mnt" | grep -Eq "^ssd \(probe of $name: 3 in 4 random 4 KiB reads took [0-9.]+ ms or more, sequential [0-9.]+ ms per 4 KiB, [0-9]+ reads(, device busy)?\)$" ||
	die "explain: $("$P" --cache= --explain "$mnt")"

# The tools say which class and why, on stderr, only when asked.
mkdir -p "$mnt/d/e" && echo hello >"$mnt/d/e/f" && echo x >"$mnt/d/g"
PLAN=$BUILD_ROOT/utils/sweep-plan DU=$BUILD_ROOT/utils/sweep-du
if [ -x "$PLAN" ]; then
	"$PLAN" -v --no-compare "$mnt/d" >"$T/out" 2>"$T/err" || die "sweep-plan -v"
	grep -q "^sweep-plan: $mnt/d: ext4 on $name: device class ssd (probe of $name: " "$T/err" ||
		{ cat "$T/err"; die "sweep-plan -v does not say the class"; }
	"$PLAN" --no-compare "$mnt/d" 2>"$T/err2" >/dev/null
	grep -q "device class" "$T/err2" && die "sweep-plan says the class without -v"
fi
if [ -x "$DU" ]; then
	"$DU" -a "$mnt/d" >"$T/du-plain" 2>"$T/du-plain.err" || die "sweep-du"
	"$DU" -a --verbose "$mnt/d" >"$T/du-v" 2>"$T/du-v.err" || die "sweep-du --verbose"
	cmp -s "$T/du-plain" "$T/du-v" || die "sweep-du --verbose changed the output"
	[ -s "$T/du-plain.err" ] && die "sweep-du printed on stderr: $(cat "$T/du-plain.err")"
	grep -q "^sweep-du: $mnt/d: ext4 on $name: device class ssd (probe of $name: " "$T/du-v.err" ||
		{ cat "$T/du-v.err"; die "sweep-du --verbose does not say the class"; }
	if command -v du >/dev/null; then
		du -a "$mnt/d" >"$T/gnu-du"
		cmp -s "$T/gnu-du" "$T/du-plain" || die "sweep-du differs from du"
	fi
fi
ok "$L in tmpfs -> ssd by probe"
finish
