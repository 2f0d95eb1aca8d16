#!/bin/bash
# SPDX-License-Identifier: MIT
# What the caller and the environment ask for beats the probe, without
# timing the device: SWEEP_DEVICE=hdd|ssd in the library, sweep_device_force
# (a tool's --device) over that; auto and unknown words leave it to the
# probe. The tools' output does not change with the class.
. "$TESTS_DIR/dev/lib.sh"
dev_setup

L=$(dev_loop 1G) || die "cannot attach a loop device"
unset SWEEP_DEVICE
dev_expect "$("$P" --cache= "bdev:$L")" class=ssd reason=probe probes=1
dev_expect "$(SWEEP_DEVICE=hdd "$P" --cache= "bdev:$L")" class=hdd reason=environment probes=0 reads=0
dev_expect "$(SWEEP_DEVICE=ssd "$P" --cache= "bdev:$L")" class=ssd reason=environment probes=0
dev_expect "$(SWEEP_DEVICE=hdd "$P" --cache= --force=ssd "bdev:$L")" class=ssd reason=caller probes=0
dev_expect "$("$P" --cache= --force=hdd "bdev:$L")" class=hdd reason=caller probes=0
dev_expect "$(SWEEP_DEVICE=auto "$P" --cache= "bdev:$L")" class=ssd reason=probe probes=1
dev_expect "$(SWEEP_DEVICE=HDD "$P" --cache= "bdev:$L")" class=ssd reason=probe probes=1
dev_expect "$(SWEEP_DEVICE=hdd "$P" --cache= --force=auto "bdev:$L")" class=hdd reason=environment

mnt=$(dev_mount_ext4 "$L") || die "cannot make ext4 on $L"
name=$(basename "$L")
dev_expect "$(SWEEP_DEVICE=hdd "$P" --cache= "$mnt")" class=hdd reason=environment probes=0 device="$name"
mkdir -p "$mnt/t/a/b" && for i in 1 2 3; do head -c $((i * 5000)) /dev/zero >"$mnt/t/a/f$i"; done
ln "$mnt/t/a/f1" "$mnt/t/a/b/h" && ln -s f2 "$mnt/t/a/s"

PLAN=$BUILD_ROOT/utils/sweep-plan DU=$BUILD_ROOT/utils/sweep-du
if [ -x "$PLAN" ]; then
	"$PLAN" -v --device=hdd --no-compare "$mnt/t" >"$T/p-hdd" 2>"$T/err" || die "sweep-plan --device=hdd"
	grep -q "^sweep-plan: $mnt/t: ext4 on $name: device class hdd (forced by the caller)$" "$T/err" ||
		{ cat "$T/err"; die "sweep-plan --device=hdd -v"; }
	SWEEP_DEVICE=hdd "$PLAN" -v --device=ssd --no-compare "$mnt/t" >"$T/p-ssd" 2>"$T/err" || die "sweep-plan --device=ssd"
	grep -q "device class ssd (forced by the caller)$" "$T/err" || { cat "$T/err"; die "--device beats SWEEP_DEVICE"; }
	SWEEP_DEVICE=ssd "$PLAN" -v --no-compare "$mnt/t" >/dev/null 2>"$T/err" || die "sweep-plan"
	grep -q "device class ssd (forced by SWEEP_DEVICE)$" "$T/err" || { cat "$T/err"; die "SWEEP_DEVICE in sweep-plan"; }
	"$PLAN" --device=fast "$mnt/t" >/dev/null 2>"$T/err" && die "sweep-plan --device=fast accepted"
	[ $? = 2 ] || die "sweep-plan --device=fast: status $?, want 2"
	grep -q "^sweep-plan: invalid --device argument 'fast' (hdd, ssd or auto)$" "$T/err" || { cat "$T/err"; die "message"; }
fi
if [ -x "$DU" ]; then
	"$DU" -a "$mnt/t" >"$T/du" || die "sweep-du"
	for d in hdd ssd auto; do
		"$DU" -a --device=$d "$mnt/t" >"$T/du-$d" 2>"$T/err" || die "sweep-du --device=$d"
		cmp -s "$T/du" "$T/du-$d" || die "sweep-du --device=$d changed the output"
		[ -s "$T/err" ] && die "sweep-du --device=$d: $(cat "$T/err")"
	done
	SWEEP_DEVICE=hdd "$DU" -a --verbose "$mnt/t" >"$T/du-v" 2>"$T/err" || die "sweep-du --verbose"
	cmp -s "$T/du" "$T/du-v" || die "sweep-du --verbose changed the output"
	grep -q "^sweep-du: $mnt/t: ext4 on $name: device class hdd (forced by SWEEP_DEVICE)$" "$T/err" ||
		{ cat "$T/err"; die "sweep-du --verbose with SWEEP_DEVICE"; }
	SWEEP_DEVICE=fast "$DU" -s --verbose "$mnt/t" >/dev/null 2>"$T/err" || die "sweep-du"
	grep -q "^sweep-du: ignoring SWEEP_DEVICE='fast' (hdd, ssd or auto)$" "$T/err" || { cat "$T/err"; die "no warning"; }
	"$DU" --device=fast "$mnt/t" >/dev/null 2>"$T/err" && die "sweep-du --device=fast accepted"
	grep -q "^sweep-du: invalid --device argument 'fast' (hdd, ssd or auto)$" "$T/err" || { cat "$T/err"; die "message"; }
fi
# the copy tools: the class changes how they read and write, never what they copy
CP=$BUILD_ROOT/utils/sweep-cp SYNC=$BUILD_ROOT/utils/sweep-sync
for d in hdd ssd auto; do
	SWEEP_DEVICE=ssd "$CP" -a --stats --device=$d "$mnt/t" "$T/cp-$d" 2>"$T/err" || die "sweep-cp --device=$d"
	diff -r --no-dereference "$mnt/t" "$T/cp-$d" >/dev/null || die "sweep-cp --device=$d: the copy differs"
	want="device class $d (forced by the caller)"
	[ $d = auto ] && want="device class ssd (forced by SWEEP_DEVICE)"
	grep -q "^sweep-cp: $mnt/t: ext4 on $name: $want$" "$T/err" || { cat "$T/err"; die "sweep-cp --stats --device=$d"; }
	"$SYNC" -a --device=$d "$mnt/t/" "$T/sync-$d/" 2>"$T/err" || die "sweep-sync --device=$d: $(cat "$T/err")"
	diff -r --no-dereference "$mnt/t" "$T/sync-$d" >/dev/null || die "sweep-sync --device=$d: the copy differs"
done
"$CP" --device=fast "$mnt/t" "$T/cp-x" 2>"$T/err"; [ $? = 2 ] || die "sweep-cp --device=fast: status, want 2"
grep -q "^sweep-cp: invalid --device argument 'fast' (hdd, ssd or auto)$" "$T/err" || { cat "$T/err"; die "cp message"; }
[ -e "$T/cp-x" ] && die "sweep-cp --device=fast copied anyway"
"$SYNC" -a --device=fast "$mnt/t/" "$T/sync-x/" 2>"$T/err"; [ $? = 1 ] || die "sweep-sync --device=fast: status, want 1 (rsync's usage error)"
grep -q "^sweep-sync: invalid --device argument 'fast' (hdd, ssd or auto)$" "$T/err" || { cat "$T/err"; die "sync message"; }
ok "caller > SWEEP_DEVICE > probe"
# sweep-tar: the same members with the same contents in every class; --totals says which and why
TAR=$BUILD_ROOT/utils/sweep-tar
for d in hdd ssd; do
	"$TAR" --totals --device=$d -C "$mnt" -cf "$T/t-$d.tar" t 2>"$T/err" || die "sweep-tar --device=$d: $(cat "$T/err")"
	grep -q "^sweep-tar: $mnt/t: ext4 on $name: device class $d (forced by the caller)$" "$T/err" ||
		{ cat "$T/err"; die "sweep-tar --totals --device=$d"; }
	mkdir "$T/x-$d" && tar -xf "$T/t-$d.tar" -C "$T/x-$d" && diff -r --no-dereference "$mnt/t" "$T/x-$d/t" >/dev/null ||
		die "sweep-tar --device=$d: the archive does not restore the tree"
done
cmp -s <(tar -tf "$T/t-hdd.tar" | sort) <(tar -tf "$T/t-ssd.tar" | sort) || die "sweep-tar: members differ between classes"
"$TAR" --device=fast -cf "$T/t-x.tar" "$mnt/t" 2>"$T/err"; [ $? = 2 ] || die "sweep-tar --device=fast: status, want 2"
[ -e "$T/t-x.tar" ] && die "sweep-tar --device=fast wrote an archive"
ok "sweep-tar: --device in every class"
finish
