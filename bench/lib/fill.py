#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Fragment a filesystem's free space and its files, reproducibly from a seed.

  fill.py fill MOUNT STEP SEED PERCENT
      Concurrent appenders fill the filesystem to PERCENT of its blocks: WRITERS
      files grow side by side in appends of 64-256 KiB, each opened, written
      with O_DIRECT and closed, the writers taking turns.
  fill.py punch MOUNT SEED [SHARE]
      Delete the files of SHARE (default half) of the writers: the free space
      is now holes the size of single appends, spread over the whole disk,
      between the kept writers' extents.
  fill.py rewrite MOUNT TREE STEP SEED SHARE MIN_KIB MAX_KIB
      Concurrent appenders rewrite SHARE of the files of MOUNT/TREE (TREE "."
      for all but the filler; files of more than one block), as a parallel unpacker or a set of writers
      updating files at once would: WRITERS files are written side by side in
      appends of MIN_KIB..MAX_KIB (log-uniform), each into a temporary name
      that then replaces the file (mode, owner and times kept), so every file
      of more than one append is a string of extents interleaved with the
      other writers' and scattered through the holes.
  fill.py clear MOUNT
      Delete what is left of the filler.

Why the appends make extents: O_DIRECT allocates at write time (no delayed
allocation gathering a file's appends), the close after each append drops
ext4's per-file preallocation, and xfs gives direct writes no speculative
preallocation; so consecutive appends of different files land next to each
other. The turns follow the seed rather than racing threads, so the same seed
makes the same image. The filler lives in MOUNT/.fill; it is never part of a
measured image."""
import math
import mmap
import os
import random
import shutil
import sys

WRITERS = 8
BLOCK = 4096


def used_share(mount):
    st = os.statvfs(mount)
    return 1 - st.f_bfree / st.f_blocks


def aligned(size):
    buf = mmap.mmap(-1, max(size, BLOCK))  # page-aligned, as O_DIRECT wants
    return buf


def append(path, view, direct):
    """One append: open, write, close (the close is what drops ext4's preallocation)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC | (os.O_DIRECT if direct else 0)
    fd = os.open(path, flags, 0o644)
    try:
        os.write(fd, view)
        if not direct:
            os.fdatasync(fd)  # a buffered tail is placed now, beside the others' appends
    finally:
        os.close(fd)


def fill(mount, step, seed, percent):
    rng = random.Random(seed * 104729 + step)
    top = os.path.join(mount, ".fill")
    os.makedirs(top, exist_ok=True)
    most = 256 << 10
    buf = aligned(most)
    buf.write(rng.randbytes(most))
    goal = percent / 100
    files = [None] * WRITERS
    left = [0] * WRITERS
    written = appends = made = 0
    try:
        while used_share(mount) < goal:  # statvfs every 16 rounds is plenty
            for _ in range(16):
                for w in range(WRITERS):
                    if files[w] is None or left[w] <= 0:
                        files[w] = os.path.join(top, f"s{step}-w{w}-{made}")
                        made += 1
                        left[w] = int(2 ** rng.uniform(22, 26))  # 4-64 MiB a file
                    n = int(2 ** rng.uniform(16, 18)) // BLOCK * BLOCK  # 64-256 KiB
                    append(files[w], memoryview(buf)[:n], True)
                    left[w] -= n
                    written += n
                    appends += 1
    except OSError as e:
        if e.errno != 28:  # ENOSPC: full enough
            raise
    print(f"fill step {step}: {appends} appends, {written >> 20} MiB in {made} files by {WRITERS} writers; "
          f"{100 * used_share(mount):.1f}% used", file=sys.stderr)


def tree_files(top):
    out = []
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if d != ".fill")
        for f in sorted(filenames):
            p = os.path.join(dirpath, f)
            st = os.lstat(p)
            # one block cannot be split; a hard link would be broken by the rename
            if os.path.isfile(p) and not os.path.islink(p) and st.st_size > BLOCK and st.st_nlink == 1:
                out.append(p)
    return out


def rewrite(mount, tree, step, seed, share, min_kib, max_kib):
    rng = random.Random(seed * 15485863 + step)
    files = tree_files(os.path.join(mount, tree))
    chosen = rng.sample(files, int(len(files) * share))
    queue = iter(chosen)
    buf = aligned(max_kib * 1024)
    cur = [None] * WRITERS  # (path, tmp, data, offset)
    appends = nbytes = done = 0
    while True:
        busy = False
        for w in range(WRITERS):
            if cur[w] is None:
                path = next(queue, None)
                if path is None:
                    continue
                with open(path, "rb") as f:
                    data = f.read()
                tmp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.rw{w}")
                cur[w] = [path, tmp, data, 0]
            busy = True
            path, tmp, data, off = cur[w]
            n = int(2 ** rng.uniform(math.log2(min_kib), math.log2(max_kib)) * 1024) // BLOCK * BLOCK
            n = max(BLOCK, min(n, len(data) - off))
            chunk = data[off:off + n]
            direct = len(chunk) % BLOCK == 0
            if direct:
                buf[:len(chunk)] = chunk
                append(tmp, memoryview(buf)[:len(chunk)], True)
            else:
                append(tmp, chunk, False)
            appends += 1
            nbytes += len(chunk)
            cur[w][3] = off + len(chunk)
            if cur[w][3] >= len(data):
                st = os.lstat(path)
                os.chown(tmp, st.st_uid, st.st_gid)
                os.chmod(tmp, st.st_mode & 0o7777)
                os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
                os.rename(tmp, path)
                cur[w] = None
                done += 1
        if not busy:
            break
    print(f"rewrite step {step}: {done} of {len(files)} files ({nbytes >> 20} MiB) in {appends} appends "
          f"of {min_kib}-{max_kib} KiB by {WRITERS} writers", file=sys.stderr)


def punch(mount, seed, share=0.5):
    top = os.path.join(mount, ".fill")
    if not os.path.isdir(top):
        return
    rng = random.Random(seed)
    gone = set(rng.sample(range(WRITERS), max(1, round(WRITERS * share))))
    n = 0
    for f in sorted(os.listdir(top)):
        w = int(f.split("-")[1][1:])
        if w in gone:
            os.unlink(os.path.join(top, f))
            n += 1
    print(f"punch: deleted {n} filler files of writers {sorted(gone)}; {100 * used_share(mount):.1f}% used",
          file=sys.stderr)


def clear(mount):
    shutil.rmtree(os.path.join(mount, ".fill"), ignore_errors=True)


def main():
    a = sys.argv[1:]
    if a[:1] == ["fill"] and len(a) == 5:
        fill(a[1], int(a[2]), int(a[3]), float(a[4]))
    elif a[:1] == ["punch"] and len(a) in (3, 4):
        punch(a[1], int(a[2]), float(a[3]) if len(a) == 4 else 0.5)
    elif a[:1] == ["rewrite"] and len(a) == 8:
        rewrite(a[1], a[2], int(a[3]), int(a[4]), float(a[5]), int(a[6]), int(a[7]))
    elif a[:1] == ["clear"] and len(a) == 2:
        clear(a[1])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
