#!/bin/bash
# SPDX-License-Identifier: MIT
# The walk and the plan on the metadata engine (lib/walk/walk_meta.c), on ext4
# (with inline_data) and xfs loop images holding a file of every size and
# mapping class (populate.py: inline, holes, unwritten extents, fragmented):
#  - the plan built from raw inode hints (SWEEP_METASCAN=on, HDD class) lists
#    the same files in the same order, with the same first bytes, as the
#    plan built with open + FIEMAP (SWEEP_METASCAN=off), with and without
#    SWEEP_WALK_NO_STAT; and it really came from the hints (no file opened);
#  - reading that plan delivers every file with its real size and status 0;
#  - as uid 65534 (no access to the device) the fallback runs (every file
#    opened for FIEMAP) and gives the same plan;
#  - on the SSD class, planning only (SWEEP_WALK_HINT_FILES, as sweep-plan
#    without --read), the files the hints size are not stat'ed, and the plan
#    and its byte count are those of a walk that stats every file; as uid
#    65534 every file is stat'ed, with the same result.
# Needs root and loop devices; skips (77) without them.
set -u
. "${TESTS_DIR:?}/common/lib.sh"
. "$TESTS_DIR/common/loopfs.sh"
loopfs_require ext4 xfs
PH=${BUILD_ROOT:?}/tests/scan/plan-hints
POP=$TESTS_DIR/scan/populate.py
W=$LOOPFS_WORK
chmod 755 "$W" # uid 65534 must reach the mount points
export SWEEP_DEVICE=hdd # the engine's default class; loop devices may probe as SSD

meta() { sed -n 's/.*\b'"$2"'=\([0-9]*\).*/\1/p' "$1"; } # meta FILE KEY: a count from plan-hints' stderr

check_fs() { # check_fs LABEL FSTYPE [mkfs options...]
	local label=$1 fstype=$2 mnt n hinted located
	shift 2
	mnt=$(loopfs_new "$fstype" 320M "$@") || { fail "$label: cannot make the filesystem"; return; }
	case_begin "$label: the hint plan is FIEMAP's (stat, no-stat, copies of entries), read whole; the fallback as uid 65534; the SSD class's plan sized by hints; sweep-plan threaded as uid 65534"
	python3 "$POP" "$mnt/t" 4096 || { fail "$label: populate failed"; return; }
	# some ordinary directories too, written out of name order
	python3 - "$mnt/t/many" <<'PY'
import os, random, sys
r = random.Random(7)
for d in range(12):
    os.makedirs(f"{sys.argv[1]}/d{d}", exist_ok=True)
for k in r.sample(range(600), 600):
    with open(f"{sys.argv[1]}/d{k % 12}/f{k}", "wb") as f:
        f.write(os.urandom(r.randrange(20000)))
PY
	sync
	# xfs writes inodes home lazily: a freeze makes the device current (otherwise hints go FIEMAP's way, also fine)
	[ "$fstype" = xfs ] && { xfs_freeze -f "$mnt" && xfs_freeze -u "$mnt"; }
	n=$(find "$mnt/t" -type f | wc -l)

	SWEEP_METASCAN=off "$PH" "$mnt/t" >"$W/$label.off" 2>"$W/$label.off.err" || fail "$label: plan-hints (off) failed"
	[ "$(meta "$W/$label.off.err" plan_hinted)" = 0 ] || fail "$label: hints used with SWEEP_METASCAN=off"
	[ "$(wc -l <"$W/$label.off")" = "$n" ] || fail "$label: FIEMAP plan has $(wc -l <"$W/$label.off") files, find $n"
	for mode in stat no-stat copy; do
		# --defer: as in a batch, so files whose first extent is in a tree block are located by the plan's raw sweep
		local args=(--defer) out=$W/$label.$mode
		[ $mode = no-stat ] && args+=(--no-stat)
		# a caller that plans a copy of each entry keeps its hints (the entry carries them, sweep_entry.hint)
		[ $mode = copy ] && args+=(--no-stat --copy)
		SWEEP_METASCAN=on "$PH" "${args[@]}" "$mnt/t" >"$out" 2>"$out.err" || fail "$label $mode: plan-hints failed"
		hinted=$(meta "$out.err" plan_hinted)
		located=$(meta "$out.err" plan_located)
		deep=$(meta "$out.err" plan_deep)
		echo "$label $mode: $(tail -1 "$out.err")" >&2
		# every file placed by its hint; only files whose hint was not usable opened
		[ "${hinted:-0}" -gt 0 ] && [ $((hinted + located + deep)) = "$n" ] ||
			fail "$label $mode: $hinted files by hint + $located by FIEMAP + $deep by tree blocks, $n files"
		[ "$fstype" = ext4 ] && [ "$located" != 0 ] && fail "$label $mode: $located files opened on ext4 after sync"
		cmp -s "$W/$label.off" "$out" || { fail "$label $mode: hint plan differs from FIEMAP plan"; diff "$W/$label.off" "$out" | head -5 >&2; }
	done
	for k in plan_hinted plan_located plan_deep; do
		[ "$(meta "$W/$label.copy.err" $k)" = "$(meta "$W/$label.no-stat.err" $k)" ] ||
			fail "$label: entries planned as copies: $k $(meta "$W/$label.copy.err" $k), as given $(meta "$W/$label.no-stat.err" $k)"
	done
	# the library's default: raw hints on ext4; on xfs only for a caller that will not open the files
	"$PH" --no-stat "$mnt/t" >/dev/null 2>"$W/$label.default.err" || fail "$label: plan-hints (default) failed"
	"$PH" --no-stat --plan-only "$mnt/t" >"$W/$label.planonly" 2>"$W/$label.planonly.err" || fail "$label: plan-hints --plan-only failed"
	hinted=$(meta "$W/$label.default.err" plan_hinted)
	if [ "$fstype" = xfs ]; then
		[ "$hinted" = 0 ] || fail "xfs: raw hints used by default ($hinted files)"
	else
		[ "${hinted:-0}" -gt 0 ] || fail "$label: no raw hints by default"
	fi
	[ "$(meta "$W/$label.planonly.err" plan_hinted)" -gt 0 ] || fail "$label: no raw hints with SWEEP_WALK_PLAN_ONLY"
	cmp -s "$W/$label.off" "$W/$label.planonly" || fail "$label: the SWEEP_WALK_PLAN_ONLY plan differs from FIEMAP's"
	# the plan from hints, read: every file, its real size, nothing reported
	SWEEP_METASCAN=on "$PH" --no-stat --read "$mnt/t" 2>/dev/null | sed -n 's/^read //p' | sort -k3 >"$W/$label.read"
	find "$mnt/t" -type f -printf '0 %s %p\n' | sort -k3 >"$W/$label.want"
	cmp -s "$W/$label.want" "$W/$label.read" || { fail "$label: read of the hint plan differs"; diff "$W/$label.want" "$W/$label.read" | head -5 >&2; }
	# without access to the device: the fallback, and the same plan
	setpriv --reuid=65534 --regid=65534 --clear-groups env SWEEP_METASCAN=on "$PH" --no-stat "$mnt/t" >"$W/$label.nobody" 2>"$W/$label.nobody.err" ||
		fail "$label: plan-hints as uid 65534 failed: $(tail -2 "$W/$label.nobody.err")"
	[ "$(meta "$W/$label.nobody.err" plan_hinted)" = 0 ] && [ "$(meta "$W/$label.nobody.err" plan_located)" = "$n" ] ||
		fail "$label: as uid 65534: $(tail -1 "$W/$label.nobody.err")"
	cmp -s "$W/$label.off" "$W/$label.nobody" || fail "$label: the plan as uid 65534 differs"
	# the SSD class, planning only: sized by the hints, not stat'ed; the same plan and bytes as with stats
	local ssd=(env SWEEP_DEVICE=ssd "$PH" --auto --plan-only) sized want_bytes
	want_bytes=$(find "$mnt/t" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
	SWEEP_METASCAN=off "${ssd[@]}" "$mnt/t" >"$W/$label.ssd.off" 2>"$W/$label.ssd.off.err" || fail "$label: SSD plan (off) failed"
	SWEEP_METASCAN=on "${ssd[@]}" --hint-files "$mnt/t" >"$W/$label.ssd" 2>"$W/$label.ssd.err" || fail "$label: SSD plan failed"
	setpriv --reuid=65534 --regid=65534 --clear-groups "${ssd[@]}" --hint-files "$mnt/t" >"$W/$label.ssd.nobody" 2>"$W/$label.ssd.nobody.err" ||
		fail "$label: SSD plan as uid 65534 failed: $(tail -2 "$W/$label.ssd.nobody.err")"
	echo "$label ssd: $(tail -1 "$W/$label.ssd.err")" >&2
	sized=$(meta "$W/$label.ssd.err" plan_sized)
	[ "$(meta "$W/$label.ssd.off.err" plan_sized)" = 0 ] && [ "$(meta "$W/$label.ssd.nobody.err" plan_sized)" = 0 ] ||
		fail "$label: files sized by hints with the engine off or as uid 65534"
	# ext4: every file (its metadata is current in the device's cache); xfs: at least every file with a
	# location (not FIEMAP's '-': a file with no extent looks like a stale inode, walk_meta.c: unplaced_elsewhere)
	if [ "$fstype" = ext4 ]; then [ "$sized" = "$n" ]; else
		[ "${sized:-0}" -ge $((n - $(grep -c '^- ' "$W/$label.off"))) ] && [ "$sized" -le "$n" ]; fi ||
		fail "$label: SSD plan: $sized of $n files sized by their hints ($(grep -c '^- ' "$W/$label.off") without a location)"
	[ "$(meta "$W/$label.ssd.err" plan_located)" = 0 ] || fail "$label: SSD plan opened files"
	for v in ssd ssd.nobody; do
		cmp -s "$W/$label.ssd.off" "$W/$label.$v" || { fail "$label: $v plan differs"; diff "$W/$label.ssd.off" "$W/$label.$v" | head -5 >&2; }
		grep -qx "plan: files=$n bytes=$want_bytes" "$W/$label.$v.err" ||
			fail "$label: $v: $(grep '^plan:' "$W/$label.$v.err"), find: files=$n bytes=$want_bytes"
	done
	grep -qx "plan: files=$n bytes=$want_bytes" "$W/$label.ssd.off.err" || fail "$label: SSD plan (off): $(grep '^plan:' "$W/$label.ssd.off.err")"
	# and the tool, which asks for it: its plan and summary as with the engine off
	local SPT=$BUILD_ROOT/utils/sweep-plan
	SWEEP_DEVICE=ssd "$SPT" --no-compare "$mnt/t" >"$W/$label.ssdtool" 2>"$W/$label.ssdtool.err" || fail "$label: sweep-plan (SSD) failed"
	SWEEP_DEVICE=ssd SWEEP_METASCAN=off "$SPT" --no-compare "$mnt/t" >"$W/$label.ssdtool.off" 2>"$W/$label.ssdtool.off.err" ||
		fail "$label: sweep-plan (SSD, off) failed"
	cmp -s "$W/$label.ssdtool" "$W/$label.ssdtool.off" && grep -q " bytes=$want_bytes " "$W/$label.ssdtool.err" &&
		cmp -s <(grep summary "$W/$label.ssdtool.err") <(grep summary "$W/$label.ssdtool.off.err") ||
		fail "$label: sweep-plan on the SSD class: $(grep summary "$W/$label.ssdtool.err") against $(grep summary "$W/$label.ssdtool.off.err")"
	# sweep-plan plans through sweep_batch, which locates a batch's files
	# when it sorts, on several threads (SWEEP_LOCATE_THREADS): as uid 65534,
	# threaded or not, the same plan as root's from the hints
	local SP=$BUILD_ROOT/utils/sweep-plan t
	SWEEP_METASCAN=on "$SP" -o physical --no-compare "$mnt/t" >"$W/$label.tool" 2>"$W/$label.tool.err" ||
		fail "$label: sweep-plan failed: $(tail -2 "$W/$label.tool.err")"
	# (inline, empty and hole-only files have no location: '-')
	located=$(sed -n 's/.* located=\([0-9]*\) .*/\1/p' "$W/$label.tool.err")
	[ "$(wc -l <"$W/$label.tool")" = "$n" ] && [ "$located" = "$(grep -vc '^- ' "$W/$label.tool")" ] &&
		[ "$located" -gt 500 ] || fail "$label: sweep-plan: $(tail -1 "$W/$label.tool.err")"
	for t in 1 4 8; do
		setpriv --reuid=65534 --regid=65534 --clear-groups env SWEEP_LOCATE_THREADS=$t \
			"$SP" -o physical --no-compare "$mnt/t" >"$W/$label.tool$t" 2>"$W/$label.tool$t.err" ||
			fail "$label: sweep-plan as uid 65534 ($t threads) failed: $(tail -2 "$W/$label.tool$t.err")"
		grep -q " located=$located " "$W/$label.tool$t.err" || fail "$label ($t threads): $(tail -1 "$W/$label.tool$t.err")"
		cmp -s "$W/$label.tool" "$W/$label.tool$t" ||
			{ fail "$label: sweep-plan as uid 65534 ($t threads) differs"; diff "$W/$label.tool" "$W/$label.tool$t" | head -5 >&2; }
	done
	case_end
}

check_fs ext4 ext4 -O inline_data
check_fs xfs xfs
finish
