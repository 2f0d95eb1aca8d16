#!/bin/bash
# SPDX-License-Identifier: MIT
# The probe runs once per medium: a second look in the same process or in
# a later one (the cache across runs) does not time the device again and
# gives the same numbers; another device, or another medium under the same
# MAJ:MIN, is probed anew. The cache is believed only when root owns it and
# nobody else can write it; a user who may not read the device still gets
# the class root measured. Skips without root or loop devices.
. "$TESTS_DIR/dev/lib.sh"
dev_setup
C=$T/cache

L=$(dev_loop 1G) || die "cannot attach a loop device"
mm=$(dev_majmin "$L")
f=$C/device-$mm

# In one process: once.
out=$("$P" --cache= "bdev:$L" "bdev:$L") || die "devclass-probe"
dev_expect "$(sed -n 1p <<<"$out")" probes=1 cached=0
dev_expect "$(sed -n 2p <<<"$out")" probes=1 cached=0
out=$("$P" --cache= --forget "bdev:$L" "bdev:$L") || die "devclass-probe --forget"
dev_expect "$(sed -n 2p <<<"$out")" probes=2

# Across runs: the first run probes and stores, the next one reads what it stored.
first=$("$P" --cache="$C" "bdev:$L") || die "devclass-probe"
dev_expect "$first" probes=1 cached=0 reason=probe
[ -f "$f" ] || die "no $f"
[ "$(stat -c %u:%a "$f")" = 0:644 ] || die "$f is $(stat -c %u:%a "$f"), want 0:644"
second=$("$P" --cache="$C" "bdev:$L") || die "devclass-probe"
echo "first:  $first"
echo "second: $second"
dev_expect "$second" probes=0 cached=1 reason=probe class="$(dev_field "$first" class)" \
	reads="$(dev_field "$first" reads)" random_ns="$(dev_field "$first" random_ns)" \
	seq_ns="$(dev_field "$first" seq_ns)"

# Another device: probed, while the first still comes from the cache.
L2=$(dev_loop 1G) || die "cannot attach a second loop device"
out=$("$P" --cache="$C" "bdev:$L" "bdev:$L2") || die "devclass-probe"
dev_expect "$(sed -n 1p <<<"$out")" probes=0 cached=1
dev_expect "$(sed -n 2p <<<"$out")" probes=1 cached=0

# Not believed: a cache directory others may write, a file root does not own, a symlink.
chmod 777 "$C"
dev_expect "$("$P" --cache="$C" "bdev:$L")" probes=1 cached=0
chmod 755 "$C"
chown 65534 "$f"
dev_expect "$("$P" --cache="$C" "bdev:$L")" probes=1 cached=0
[ "$(stat -c %u "$f")" = 0 ] || die "the probe did not replace the foreign cache file"
mv "$f" "$C/elsewhere"
ln -s elsewhere "$f"
dev_expect "$("$P" --cache="$C" "bdev:$L")" probes=1 cached=0
[ -L "$f" ] && die "the symlink is still there"
dev_expect "$("$P" --cache="$C" "bdev:$L")" probes=0 cached=1

# A user who may not open the device: the class root measured, from the cache;
# without it, the flag or the safe guess, and the reason why there was no probe.
if setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
	user=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$P" --cache="$C" "bdev:$L") || die "as nobody"
	dev_expect "$user" probes=0 cached=1 reason=probe class="$(dev_field "$first" class)"
	user=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$P" --cache= "bdev:$L") || die "as nobody"
	echo "nobody:  $user"
	dev_expect "$user" probes=0 reads=0 error=13 # EACCES
	case $(dev_field "$user" reason) in sysfs | default) ;; *) die "as nobody: $user" ;; esac
fi

# Another medium under the same MAJ:MIN (detached, attached to another file): probed anew.
old_key=$(grep '^key ' "$f")
img=$(mktemp "$T/mem/img.XXXXXX")
truncate -s 1G "$img"
dev_detach "$L"
losetup "$L" "$img" 2>/dev/null || skip "$L was taken by someone else meanwhile"
third=$("$P" --cache="$C" "bdev:$L") || die "devclass-probe"
dev_expect "$third" probes=1 cached=0
[ "$(grep '^key ' "$f")" != "$old_key" ] || die "the key did not change with the medium"
ok "probed once per medium, cache trusted only when root's"
finish
