#!/bin/bash
# pipeline-table.sh OUTDIR IMAGE...: the path-list pipelines of sweep-order(1),
# each fed find's order and then sweep-order's, one cold block-traced run
# each (bench/lib/trace-run.sh), replayed through the hdd7200 model against
# the sequential bound (bench/lib/model.sh). sweep-order runs with
# SWEEP_DEVICE=hdd: a loop device on fast storage probes as SSD class, where
# sweep-order keeps the list's order.
#   BUILD_DIR=build bench/pipeline-table.sh /tmp/pt /work/bench-images/dev/linux-lite-3G-s1-frag-90/ext4/step5.img
# restic and borg write their repositories to a tmpfs (not traced); rows for
# a tool that is not installed are left out.
set -euo pipefail
out=$1; shift
here=$(cd "$(dirname "$0")" && pwd)
B=$(cd "${BUILD_DIR:-$here/../build}" && pwd)/utils
MODEL_SIM=$B/sweep-sim
. "$here/lib/model.sh"
MODEL_RATE=$(model_rate)
repo=$(mktemp -d /dev/shm/sweep-pipeline.XXXXXX)
trap 'rm -rf "$repo"' EXIT
export SWEEP_DEVICE=hdd RESTIC_PASSWORD=bench RESTIC_CACHE_DIR=$repo/restic-cache
export BORG_PASSPHRASE= BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK=yes BORG_BASE_DIR=$repo/borg-home
echo "model media rate: $MODEL_RATE B/s"
echo "| fs | pipeline | wall s | seeks | requests | MB read | HDD model s | bound s | model/bound |"
echo "|---|---|---|---|---|---|---|---|---|"
for img in "$@"; do
	fs=$(blkid -o value -s TYPE "$img")
	for sink in tar cat restic borg; do
		case $sink in
		tar) list='find . -print0'; run='tar --null --no-recursion -T - -cf -' ;;
		cat) list='find . -type f -print0'; run='xargs -0 cat' ;;
		restic) command -v restic >/dev/null || continue
			list='find . -type f -print0'
			run="restic -q -r $repo/r backup --files-from-raw /dev/stdin >/dev/null" ;;
		borg) command -v borg >/dev/null || continue
			list='find . -type f -print0'
			run="borg create --paths-from-stdin --paths-delimiter '\\0' $repo/b::a" ;;
		esac
		for order in find sweep-order; do
			rm -rf "$repo/r" "$repo/b"
			[ $sink = restic ] && restic -q init --repo "$repo/r" >/dev/null
			[ $sink = borg ] && borg init -e none "$repo/b" >/dev/null 2>&1
			pipe="$list | $run"
			[ $order = sweep-order ] && pipe="$list | $B/sweep-order -0 | $run"
			name=$sink-$order
			for try in 1 2 3; do
				line=$("$here/lib/trace-run.sh" "$img" "$out/$fs" "$name" sh -c "$pipe")
				grep -q "drops 0 " <<<"$line" && break
				echo "disturbed by a drop_caches, again: $line" >&2
			done
			[ -s "$out/$fs/$name.err" ] && sed 's/^/  /' "$out/$fs/$name.err" | head -3 >&2
			model_row "$fs" "$sink ($order order)" "$out/$fs/$name.trace" "$line"
		done
	done
done
