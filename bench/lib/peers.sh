# SPDX-License-Identifier: MIT
# The parallel peers (xcp, fcp, diskus): pinned versions, installed with cargo
# into PEERS_DIR/bin, and looked up there (then on PATH) by bench/run.

# crate version binary: bump a version here and setup-peers rebuilds that peer.
PEER_PINS=(
	"xcp 0.24.9 xcp"
	"fcp 0.2.2 fcp"
	"diskus 0.9.0 diskus"
)

# The version a peer binary reports ("xcp 0.24.9" -> 0.24.9), or nothing.
peer_version() {
	"$1" --version 2>&1 | head -1 | grep -o '[0-9][0-9.]*[0-9]' | head -1
}

# peers_install DIR: cargo install every pinned peer that DIR/bin lacks at its version.
peers_install() {
	local dir=$1 pin crate ver bin have cargo
	mkdir -p "$dir/bin"
	cargo=$(command -v cargo || true)
	[ -n "$cargo" ] || [ ! -x "$HOME/.cargo/bin/cargo" ] || cargo=$HOME/.cargo/bin/cargo
	for pin in "${PEER_PINS[@]}"; do
		read -r crate ver bin <<< "$pin"
		have=$(peer_version "$dir/bin/$bin")
		if [ "$have" = "$ver" ]; then
			say "$bin $ver: installed"
			continue
		fi
		if [ -z "$cargo" ]; then
			say "$bin: not installed (no cargo here); bench/run will skip it"
			continue
		fi
		say "$bin: cargo install $crate $ver (a few minutes)"
		# --locked: the crate's own Cargo.lock, so the build is the same every time
		if ! "$cargo" install --quiet --locked --force --root "$dir" --version "=$ver" "$crate" \
			> "$dir/$crate.log" 2>&1; then
			say "$bin: cargo install failed (offline?), see $dir/$crate.log; bench/run will skip it"
			continue
		fi
		say "$bin: $(peer_version "$dir/bin/$bin") installed"
	done
}

# peer_path DIR BIN: the pinned peer in DIR/bin, else one on PATH, else nothing.
peer_path() {
	if [ -x "$1/bin/$2" ]; then
		echo "$1/bin/$2"
	else
		command -v "$2" || true
	fi
}
