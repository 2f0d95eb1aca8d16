#!/bin/bash
# tar-table.sh OUTDIR IMAGE...: one cold, block-traced run of each tar (and of
# sweep-plan --read, the library's floor) on each aged image, side by side,
# with the trace replayed through the hdd7200 model against the sequential
# bound (bytes / the model's media rate). A run during which anything else
# dropped the page cache is repeated (up to 3 tries).
#   BUILD_DIR=build bench/tar-table.sh /tmp/tt /work/bench-images/full/ext4/step6.img
# TOOLS="sweep-plan-read sweep-tar" runs those only; the -noprefetch variants
# (SWEEP_PREFETCH=off) show what the disk-class prefetch in physical order gains.
# The copies (cp-a sweep-cp rsync sweep-sync) go to an empty COPY_DEST/copy
# (default a directory under /dev/shm: its writes are not on the traced device),
# removed after each run. SRC: the path read inside the mount (default ., the
# whole filesystem; e.g. SRC=tree for a subtree).
set -euo pipefail
out=$1; shift
here=$(cd "$(dirname "$0")" && pwd)
B=${BUILD_DIR:-$here/../build}/utils
MODEL_SIM=$B/sweep-sim
. "$here/lib/model.sh"
MODEL_RATE=$(model_rate)
rate=$MODEL_RATE
src=${SRC:-.}
if [ -n "${COPY_DEST:-}" ]; then
	dst=$COPY_DEST
	trap 'rm -rf "$dst/copy"' EXIT
else
	dst=$(mktemp -d /dev/shm/tar-table.XXXXXX)
	trap 'rm -rf "$dst"' EXIT
fi
echo "model media rate: $rate B/s"
echo "| fs | tool | wall s | seeks | requests | MB read | HDD model s | bound s | model/bound |"
echo "|---|---|---|---|---|---|---|---|---|"
for img in "$@"; do
	fs=$(blkid -o value -s TYPE "$img")
	for tool in ${TOOLS:-sweep-plan-read sweep-tar gnu-tar gnu-tar-inode bsdtar}; do
		case $tool in
		sweep-plan-read) cmd=("$B/sweep-plan" --no-compare -r "$src") ;;
		sweep-tar) cmd=("$B/sweep-tar" -c -f - "$src") ;;
		sweep-plan-read-noprefetch) cmd=(env SWEEP_PREFETCH=off "$B/sweep-plan" --no-compare -r "$src") ;;
		sweep-tar-noprefetch) cmd=(env SWEEP_PREFETCH=off "$B/sweep-tar" -c -f - "$src") ;;
		gnu-tar) cmd=(tar -cf - "$src") ;;
		gnu-tar-inode) cmd=(tar --sort=inode -cf - "$src") ;;
		bsdtar) cmd=(bsdtar -cf - "$src") ;;
		cp-a) cmd=(cp -a "$src" "$dst/copy") ;;
		sweep-cp) cmd=("$B/sweep-cp" -a "$src" "$dst/copy") ;;
		rsync) cmd=(rsync -a "$src/" "$dst/copy/") ;;
		sweep-sync) cmd=("$B/sweep-sync" -a "$src/" "$dst/copy/") ;;
		*) echo "unknown tool $tool" >&2; exit 2 ;;
		esac
		for try in 1 2 3; do
			rm -rf "$dst/copy"
			line=$("$here/lib/trace-run.sh" "$img" "$out/$fs" "$tool" "${cmd[@]}")
			rm -rf "$dst/copy"
			grep -q "drops 0 " <<<"$line" && break
			echo "disturbed by a drop_caches, again: $line" >&2
		done
		model_row "$fs" "$tool" "$out/$fs/$tool.trace" "$line"
	done
done
