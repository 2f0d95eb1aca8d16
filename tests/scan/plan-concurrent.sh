#!/bin/bash
# SPDX-License-Identifier: MIT
# sweep-cp and sweep-tar on the metadata engine (SWEEP_METASCAN=on, HDD
# class: directory prefetch, raw inode hints as the plan's keys) while
# writers rewrite, tear, create, delete and rename files, on ext4 and xfs
# loop images. Raw hints may be stale; output may not be wrong:
#  - a subtree nobody writes to is copied and archived exactly;
#  - every written file carries its own length and checksum, and every way
#    but two of writing it (replace by rename, delete, rename over; not a
#    rewrite in place, nor a truncate-and-write of an existing name) keeps it
#    valid at every moment; a copy or an archive member that does
#    not verify must be one the tool reported (changed, shrank, grew,
#    vanished, replaced) or one that had a name the writers rewrote in place,
#    under that name or a later one, which passes through torn states that
#    a reader may legitimately catch whole (GNU tar would too: no change
#    happens while it is read).
# Then, on the quiet tree, sweep-tar as uid 65534 (no device access: the
# FIEMAP fallback) writes the members in the same order, with the same
# contents, as root with hints.
# Needs root and loop devices; skips (77) without them.
set -u
. "${TESTS_DIR:?}/common/lib.sh"
. "$TESTS_DIR/common/loopfs.sh"
loopfs_require ext4 xfs
CP=${BUILD_ROOT:?}/utils/sweep-cp
TAR=$BUILD_ROOT/utils/sweep-tar
[ -x "$CP" ] && [ -x "$TAR" ] || skip "tools not built"
require_cmd tar
SECS=${PLAN_CONCURRENT_SECONDS:-4}
W=$LOOPFS_WORK
chmod 755 "$W"
export SWEEP_DEVICE=hdd SWEEP_METASCAN=on

# sv.py make ROOT | churn ROOT SECONDS | check ROOT: self-verifying files ("SV <len> <sha256>\n" + body)
SV=$W/sv.py
cat >"$SV" <<'PY'
import hashlib, os, random, sys, time
def content(r, n):
    body = r.randbytes(n)
    return b"SV %d %s\n" % (n, hashlib.sha256(body).hexdigest().encode()) + body
def ok(data):
    head, _, body = data.partition(b"\n")
    f = head.split()
    return len(f) == 3 and f[0] == b"SV" and int(f[1]) == len(body) and hashlib.sha256(body).hexdigest().encode() == f[2]
mode, root = sys.argv[1], sys.argv[2]
r = random.Random(5)
names = [f"{root}/churn/d{d}/f{k}" for d in range(8) for k in range(60)]
if mode == "make":
    for d in range(8):
        os.makedirs(f"{root}/churn/d{d}", exist_ok=True)
        os.makedirs(f"{root}/stable/s{d}", exist_ok=True)
        for k in range(60):
            with open(f"{root}/stable/s{d}/g{k}", "wb") as f:
                f.write(content(r, r.randrange(30000)))
    for p in names:
        with open(p, "wb") as f:
            f.write(content(r, r.randrange(30000)))
elif mode == "churn":
    # inplace.log: every name a file written in place has had, logged before
    # it is written (and each later name as it gets it). A tool may open a
    # file under one name, see it renamed, then written in place under the
    # new one, and catch it torn between two writes, under the name it
    # opened: the reader's open is an io_uring request, and the fstat it
    # compares the end of the read with comes when the open is reaped, which
    # may be after the rename and the first write (seen in CI: xfs, sweep-cp,
    # churn/d1/f36 opened, renamed to d4/f28 31 ms later, truncated and
    # rewritten there; the copy held the new header and 20,115 of its 29,556
    # bytes, and nothing moved from that fstat to the end of the copy). The
    # reader now reports a file whose change time moved between its open
    # and that fstat; a change stamped from the clock that lags by a tick,
    # right after the open, can still pass unseen.
    names_of, torn = {}, set()
    def ino(p):
        try:
            return os.stat(p).st_ino
        except OSError:
            return None
    def log(paths):
        with open(f"{root}/../inplace.log", "a") as f:
            f.writelines(os.path.relpath(q, root) + "\n" for q in paths)
    def in_place(p):  # p is about to be written in place (or created): its inode's names, logged
        i = ino(p)
        log(names_of.get(i, set()) | {p} if i is not None else {p})
        return i
    def own(p, old):  # after p was opened for writing: the inode now at p, torn from now on
        i = ino(p)
        if i is not None:
            if i != old:
                names_of[i] = set()  # a new file (a freed inode number may come back)
            names_of[i].add(p)
            torn.add(i)
    end = time.monotonic() + float(sys.argv[3])
    while time.monotonic() < end:
        p, op = r.choice(names), r.random()
        try:
            if op < 0.3:  # rewrite in place without truncating first: readers may see it torn
                old = in_place(p)
                fd = os.open(p, os.O_WRONLY | os.O_CREAT, 0o644)
                own(p, old)
                data = content(r, r.randrange(60000))
                for i in range(0, len(data), 8192):
                    os.pwrite(fd, data[i:i + 8192], i)
                os.ftruncate(fd, len(data))
                os.close(fd)
            elif op < 0.5:  # replace by a new inode
                with open(p + ".new", "wb") as f:
                    f.write(content(r, r.randrange(30000)))
                names_of[ino(p + ".new")] = {p}
                os.rename(p + ".new", p)
            elif op < 0.65:
                os.unlink(p)
            elif op < 0.85:
                q, i = r.choice(names), ino(p)
                if i is not None:
                    names_of.setdefault(i, set()).update({p, q})
                    if i in torn:
                        log({q})
                os.rename(p, q)
            else:  # open with O_TRUNC: in place too when p exists (truncated, then written)
                old = in_place(p)
                with open(p, "wb") as f:
                    own(p, old)
                    f.write(content(r, r.randrange(30000)))
        except OSError:
            pass
elif mode == "check":  # print every file under root that does not verify
    for dp, _, fs in os.walk(root):
        for n in fs:
            if not n.endswith(".new") and not ok(open(os.path.join(dp, n), "rb").read()):
                print(os.path.relpath(os.path.join(dp, n), root))
PY

# reported LOG PATH: the tool named the file (by its path below the source) on stderr
reported() { grep -qF -- "$2" "$1"; }

check_output() { # check_output LABEL TREE LOG: stable exact, every bad churn file reported
	local label=$1 tree=$2 log=$3 p
	diff -r "$SRC/stable" "$tree/stable" >/dev/null || fail "$label: the untouched subtree differs"
	while read -r p; do
		reported "$log" "$p" || grep -qxF -- "${p#src/}" "$SRC/../inplace.log" 2>/dev/null ||
			fail "$label: $p does not verify, was not reported, and no file rewritten in place ever had its name"
	done < <(python3 "$SV" check "$tree")
	note "$label: $(python3 "$SV" check "$tree" | wc -l) files torn or changed, $(grep -c . "$log") lines reported"
}

run_fs() { # run_fs LABEL FSTYPE
	local label=$1 mnt i
	mnt=$(loopfs_new "$2" 320M) || { fail "$label: cannot make the filesystem"; return; }
	case_begin "$label: copies and archives made while writers run are exact or reported; uid 65534's archive is root's"
	SRC=$mnt/src
	python3 "$SV" make "$SRC" || { fail "$label: make failed"; return; }
	sync
	python3 "$SV" churn "$SRC" "$SECS" &
	local churn=$!
	on_exit "kill $churn 2>/dev/null"
	sleep 1 # the writers under way before the tools start
	# the tools again and again while the writers run (at least once, at most 4 times)
	for i in 1 2 3 4; do
		[ $i = 1 ] || kill -0 $churn 2>/dev/null || break
		"$CP" -a "$SRC" "$mnt/cp$i" 2>"$W/$label.cp$i.log"
		[ $? -le 1 ] || fail "$label: sweep-cp failed: $(tail -2 "$W/$label.cp$i.log")"
		check_output "$label cp$i" "$mnt/cp$i" "$W/$label.cp$i.log"
		"$TAR" -cf "$W/$label.$i.tar" -C "$mnt" src 2>"$W/$label.tar$i.log"
		[ $? -le 1 ] || fail "$label: sweep-tar failed: $(tail -2 "$W/$label.tar$i.log")"
		mkdir -p "$W/$label.x$i" && tar -xf "$W/$label.$i.tar" -C "$W/$label.x$i" ||
			fail "$label: GNU tar cannot extract sweep-tar's archive"
		check_output "$label tar$i" "$W/$label.x$i/src" "$W/$label.tar$i.log"
		rm -rf "$W/$label.x$i" "$W/$label.$i.tar" "$mnt/cp$i"
	done
	wait $churn
	sync
	[ "$2" = xfs ] && { xfs_freeze -f "$mnt" && xfs_freeze -u "$mnt"; }
	# quiet now: root with hints and uid 65534 without give the same archive members in the same order
	find "$SRC" -name '*.new' -delete
	"$TAR" -cf "$W/$label.root.tar" -C "$mnt" src 2>"$W/$label.root.log" || fail "$label: sweep-tar (root) failed"
	[ -n "${PLAN_CONCURRENT_DEBUG:-}" ] && { "$TAR" -cf /dev/null --plan-trace="$PLAN_CONCURRENT_DEBUG.$label.root" -C "$mnt" src; SWEEP_METASCAN=off "$TAR" -cf /dev/null --plan-trace="$PLAN_CONCURRENT_DEBUG.$label.off" -C "$mnt" src; cp -r "$mnt/src" "$PLAN_CONCURRENT_DEBUG.$label.tree"; }
	setpriv --reuid=65534 --regid=65534 --clear-groups "$TAR" -cf - -C "$mnt" src >"$W/$label.nobody.tar" 2>"$W/$label.nobody.log" ||
		fail "$label: sweep-tar as uid 65534 failed: $(tail -2 "$W/$label.nobody.log")"
	tar -tf "$W/$label.root.tar" >"$W/$label.root.list" && tar -tf "$W/$label.nobody.tar" >"$W/$label.nobody.list" &&
		cmp -s "$W/$label.root.list" "$W/$label.nobody.list" ||
		fail "$label: member order as uid 65534 differs from root's: $(diff "$W/$label.root.list" "$W/$label.nobody.list" | head -8)"
	[ -n "${PLAN_CONCURRENT_DEBUG:-}" ] && cp "$W/$label.root.list" "$W/$label.nobody.list" "$W/$label.root.tar" "${PLAN_CONCURRENT_DEBUG%/*}/"
	mkdir -p "$W/$label.xr" "$W/$label.xn"
	tar -xf "$W/$label.root.tar" -C "$W/$label.xr" && tar -xf "$W/$label.nobody.tar" -C "$W/$label.xn" &&
		diff -r "$W/$label.xr" "$W/$label.xn" >/dev/null && diff -r "$SRC" "$W/$label.xr/src" >/dev/null ||
		fail "$label: archive contents differ (root, uid 65534, the tree)"
	case_end
}

run_fs ext4 ext4
run_fs xfs xfs
finish
