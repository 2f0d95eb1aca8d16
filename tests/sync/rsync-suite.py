#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run rsync's own testsuite against sweep-sync and classify the results.

(CLASSIFY_ONLY=1 classifies OUT_DIR/runtests.log from an earlier run.)

Not part of the meson suite: it needs rsync's source tree (its Python
testsuite and the helper programs `make check-progs` builds), which the
project never commits. Usage:

    tests/sync/rsync-suite.py RSYNC_SRC BUILD_DIR [OUT_DIR]

RSYNC_SRC is a built rsync source tree (./configure && make check-progs),
BUILD_DIR the meson build with utils/sweep-sync. It writes a shim that
sends -V/-VV/--version to the rsync built there (the suite asks the binary
for its capabilities) and everything else to sweep-sync, runs
runtests.py, then sorts every test into scope:

  out: daemon, remote, protocol, batch, delta   (issue 28: not local, or not
       the whole-file copy sweep-sync does)
  local: the rest; "only-ours" when every option the test passes is one
       sweep-sync has.

and prints the pass counts per class with each failure's test name.
"""
import os
import re
import subprocess
import sys

OUT_PATTERNS = [
    ("daemon", r"rsyncd\.conf|--daemon|daemon_|write_daemon_conf|build_rsyncd_conf|rsync://|::|start_daemon|"
               r"DAEMON|--port|--password-file|chroot"),
    ("remote", r"--rsh|\b-e\b|'-e'|ssh|--server|--rsync-path|localhost:|remote|rsync-ssl|rrsync|--sender|"
               r"--files-from=:|RSYNC_CONNECT_PROG"),
    ("protocol", r"--protocol|protocol_version|protocol"),
    ("batch", r"--write-batch|--read-batch|--only-write-batch|batch"),
    ("delta", r"--no-whole-file|--no-W|--fuzzy|--block-size|-B\b|--inplace|--append|--checksum-seed|"
              r"--partial-dir|--temp-dir|--compress|-z\b|--zc|--bwlimit"),
]


def classify(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    for name, pat in OUT_PATTERNS:
        if re.search(pat, text):
            return name
    return "local"


def options_used(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    return set(re.findall(r"""['"](--?[A-Za-z][-A-Za-z0-9]*)""", text))


def ours(build):
    helptext = subprocess.run([os.path.join(build, "utils", "sweep-sync"), "--help"], capture_output=True,
                              text=True).stdout
    longs = set(re.findall(r"(--[a-z][-a-z0-9]*)", helptext))
    shorts = set()
    for m in re.finditer(r"^\s+(-[A-Za-z0-9@])[, ]", helptext, re.M):
        shorts.add(m.group(1))
    return longs | shorts


def is_ours(opt, have):
    """An option sweep-sync has. A bundle of short options ("-rvvE") is ours
    only when every letter is; a word after one dash that is not a bundle of
    rsync letters (a program's own flag, "-name") does not count against it."""
    if opt in have or opt in ("-V", "-VV"):  # the shim answers these from the rsync built there
        return True
    if opt.startswith("--") or len(opt) <= 2:
        return False
    letters = opt[1:]
    rsync_shorts = set("0468@ABCDEFHIJKLMOPRSTUVWXabcdefghiklmnopqrtuvxyz")
    if not set(letters) <= rsync_shorts:
        return True
    return all("-" + ch in have for ch in letters)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    src, build = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    out = os.path.abspath(sys.argv[3] if len(sys.argv) > 3 else "rsync-suite-run")
    os.makedirs(out, exist_ok=True)
    shim = os.path.join(out, "rsync-shim")
    with open(shim, "w") as f:
        f.write(f"""#!/bin/bash
for a in "$@"; do case "$a" in -V|-VV|--version) exec {src}/rsync "$@";; esac; done
export LD_LIBRARY_PATH={build}/lib
exec {build}/utils/sweep-sync "$@"
""")
    os.chmod(shim, 0o755)
    log = os.path.join(out, "runtests.log")
    if not os.environ.get("CLASSIFY_ONLY"):
        with open(log, "w") as f:
            subprocess.run([sys.executable, "runtests.py", "-j2", "--timeout", "60", "--race-timeout", "2",
                            "--rsync-bin", shim], cwd=src, stdout=f, stderr=subprocess.STDOUT)
    results = {}
    for line in open(log, errors="replace"):
        m = re.match(r"^(PASS|FAIL|SKIP|ERROR)\s+(\S+)", line)
        if m:
            results[m.group(2)] = m.group(1)
    have = ours(build)
    table = {}
    names = sorted(f[:-len("_test.py")] for f in os.listdir(os.path.join(src, "testsuite")) if f.endswith("_test.py"))
    for name in names:
        res = results.get(name, "NOT-RUN")
        path = os.path.join(src, "testsuite", name + "_test.py")
        cls = classify(path) if os.path.exists(path) else "?"
        only = cls == "local" and all(is_ours(o, have) for o in options_used(path))
        key = (cls, only)
        table.setdefault(key, []).append((name, res))
    print(f"{'class':10} {'only-ours':9} {'tests':>5} {'pass':>5} {'skip':>5} {'fail':>5}")
    for (cls, only), tests in sorted(table.items()):
        n = len(tests)
        p = sum(r == "PASS" for _, r in tests)
        s = sum(r == "SKIP" for _, r in tests)
        print(f"{cls:10} {str(only):9} {n:5} {p:5} {s:5} {n - p - s:5}")
    for (cls, only), tests in sorted(table.items()):
        if cls == "local":
            print(f"\n{cls} only-ours={only} failures:")
            for name, r in tests:
                if r not in ("PASS", "SKIP"):
                    print(f"  {r} {name}")


if __name__ == "__main__":
    main()
