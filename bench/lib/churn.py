#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""One step of create/delete churn on a mounted image, reproducible from a seed.
Usage: churn.py MOUNT TREE STEP SEED BUDGET_BYTES

  * deletes a share of the churn files made by earlier steps (holes in free space
    that the next checkout fills, so new files land scattered);
  * deletes a few percent of the checked-out tree (the next checkout restores them
    elsewhere);
  * creates small files in fresh directories;
  * runs several appenders that write to their files in turn, each append opened,
    written, fsync'ed and closed, as log writers and downloads do.  The fsync makes
    the allocator place each chunk while the other writers' chunks are being placed
    too, and the close drops the per-file preallocation, so the files themselves
    fragment.  The turns are taken in a fixed order from the seed rather than by
    racing threads, so the same seed builds the same image."""
import os
import random
import sys

CHUNK_POOL = 1 << 20


def files_under(top):
    out = []
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames.sort()
        for f in sorted(filenames):
            out.append(os.path.join(dirpath, f))
    return out


def main():
    mnt, tree, step, seed, budget = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    rng = random.Random(seed * 7919 + step)
    pool = rng.randbytes(CHUNK_POOL)
    churn = os.path.join(mnt, "churn")
    os.makedirs(churn, exist_ok=True)

    def data(n):
        off = rng.randrange(0, CHUNK_POOL)
        b = (pool[off:] + pool)[:n] if n <= CHUNK_POOL else (pool * (n // CHUNK_POOL + 1))[:n]
        return b

    # 1. forget about 40% of what earlier churn steps left behind
    old = files_under(churn)
    gone = rng.sample(old, int(len(old) * 0.4)) if old else []
    for p in gone:
        os.unlink(p)
    # 2. delete 3% of the checked-out tree
    treefiles = files_under(os.path.join(mnt, tree))
    for p in rng.sample(treefiles, int(len(treefiles) * 0.03)) if treefiles else []:
        os.unlink(p)
    # 3. small files (0.5-64 KiB, log-uniform) in new directories, half the budget
    made = 0
    ndirs = 0
    d = None
    while made < budget // 2:
        if d is None or rng.random() < 0.02:
            d = os.path.join(churn, f"s{step}-{ndirs}")
            os.makedirs(d, exist_ok=True)
            ndirs += 1
        n = int(2 ** rng.uniform(9, 16))
        with open(os.path.join(d, f"f{made}"), "wb") as f:
            f.write(data(n))
        made += n
    # 4. appenders: 6 writers, each growing a few files in turn.  Half write under
    # churn/, half into directories of the tree, where the next checkout deletes
    # them and leaves holes between the tree's files.
    writers = 6
    logdir = os.path.join(churn, f"log{step}")
    os.makedirs(logdir, exist_ok=True)
    treedirs = sorted({os.path.dirname(p) for p in treefiles if os.path.exists(os.path.dirname(p))})
    cur = [None] * writers
    cursize = [0] * writers
    target = [0] * writers
    nfile = 0
    appended = 0
    while appended < budget // 2:
        for w in range(writers):
            if cur[w] is None or cursize[w] >= target[w]:
                where = logdir if w % 2 == 0 or not treedirs else rng.choice(treedirs)
                cur[w] = os.path.join(where, f".churn-w{w}-{nfile}.log")
                nfile += 1
                cursize[w] = 0
                target[w] = int(2 ** rng.uniform(17, 24))  # 128 KiB - 16 MiB
            n = int(2 ** rng.uniform(12, 17))  # 4-128 KiB per append
            fd = os.open(cur[w], os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
            try:
                os.write(fd, data(n))
                os.fsync(fd)
            finally:
                os.close(fd)
            cursize[w] += n
            appended += n
    print(f"churn step {step}: deleted {len(gone)} old churn files, "
          f"{int(len(treefiles) * 0.03)} tree files; created {made} bytes of small files "
          f"in {ndirs} dirs, appended {appended} bytes to {nfile} files by {writers} writers",
          file=sys.stderr)


if __name__ == "__main__":
    main()
