#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A hostile peer for sweep-sync's wire (utils/sweep-sync/wire.h), used as
the "remote shell" (-e 'python3 fakepeer.py SCENARIO'): it ignores the
host and command it is given and speaks the protocol on stdin/stdout
itself, breaking it as SCENARIO says. Run as a client instead
(--client SCENARIO -- sweep-sync --server ...) it starts the server and
feeds it. --corpus DIR writes the wire fuzz target's seed streams. tests/remote/hostile.sh runs every scenario and checks that
sweep-sync stops with a clear error and touches nothing outside DEST."""
import os
import struct
import subprocess
import sys

MAGIC = b"SWPSYNC\n"
VERSION = 1
(W_OUT, W_ERR, W_EXIT, W_ARGS, W_PATHS, W_LISTFILE, W_GO, W_ROOTS, W_FLIST, W_IDS, W_FLIST_END, W_FILE_BEGIN,
 W_DATA, W_FILE_END, W_FILE_FAIL, W_ROUND_END, W_DIGESTS, W_CSUM_END, W_REMOVED, W_SENDER_DONE, W_REQ, W_ROUND,
 W_CSUM_REQ, W_CSUM_ROUND, W_REMOVE, W_DONE) = range(1, 27)
WE_ENTRY, WE_SKIP = 1, 2
WRR_FOLLOW, WRR_IMPLIED, WRR_LONE = 1, 2, 4
S_IFREG, S_IFDIR, S_IFLNK, S_IFCHR = 0o100000, 0o040000, 0o120000, 0o020000


def u32(v):
    return struct.pack("<I", v & 0xffffffff)


def u64(v):
    return struct.pack("<Q", v & 0xffffffffffffffff)


def sstr(s):
    b = s.encode() if isinstance(s, str) else s
    return u32(len(b)) + b


def stat(mode, size=0, nlink=1, mtime=1000000000):
    return (u32(mode) + u32(0) + u32(0) + u32(nlink) + u64(size) + u64((size + 511) // 512) + u64(0) + u64(1) +
            u64(1) + u64(mtime) + u32(0) + u64(mtime) + u32(0) + u64(mtime) + u32(0))


def entry(root, rel, mode, size=0, link="", xattrs=()):
    b = bytes([WE_ENTRY]) + u32(root) + sstr(rel) + stat(mode, size) + sstr(link) + u32(len(xattrs))
    for name, value in xattrs:
        b += sstr(name) + u32(len(value)) + value
    return b


def roots(rs, nsrc=1, flags=0, missing=0):
    b = u32(nsrc) + u32(flags) + u32(missing) + u32(len(rs))
    for src, rel0, f in rs:
        b += sstr(src) + sstr(rel0) + u32(f)
    return b


class Wire:
    def __init__(self, rfd, wfd):
        self.r, self.w = rfd, wfd

    def raw(self, b):
        os.write(self.w, b)

    def send(self, t, payload=b""):
        self.raw(bytes([t]) + u32(len(payload)) + payload)

    def read(self, n):
        b = b""
        while len(b) < n:
            c = os.read(self.r, n - len(b))
            if not c:
                raise EOFError
            b += c
        return b

    def hello(self, version=VERSION, magic=MAGIC):
        self.raw(magic + u32(version) + u32(0))
        theirs = self.read(16)
        assert theirs[:8] == MAGIC, theirs

    def recv(self):
        h = self.read(5)
        t, n = h[0], struct.unpack("<I", h[1:])[0]
        return t, self.read(n)

    def expect(self, *types):
        while True:
            t, p = self.recv()
            if t in (W_OUT, W_ERR):
                sys.stderr.buffer.write(p)
                continue
            if t not in types:
                raise SystemExit("fakepeer: got message %d, wanted %s" % (t, types))
            return t, p

    def setup_from_client(self):
        """The server's side of the setup: ARGS, LISTFILE..., PATHS, GO."""
        while True:
            t, _ = self.expect(W_ARGS, W_LISTFILE, W_PATHS, W_GO)
            if t == W_GO:
                return

    def end_as_sender(self):
        """After the hostile part, whatever comes: end rounds empty and answer DONE, so that a
        receiver that refused (or found nothing to ask) ends cleanly."""
        try:
            while True:
                t, _ = self.recv()
                if t == W_ROUND:
                    self.send(W_ROUND_END)
                elif t == W_CSUM_ROUND:
                    self.send(W_CSUM_END)
                elif t == W_DONE:
                    self.send(W_SENDER_DONE)
                    return
        except (EOFError, BrokenPipeError):
            return


def flist(w, rs, entries, flags=0):
    w.send(W_ROOTS, roots(rs, flags=flags))
    w.send(W_FLIST, b"".join(entries))
    w.send(W_FLIST_END, u64(0) + u64(0) + u64(0) + u32(0))


# ---- a sender that lies (the client pulls: HOST:SRC DEST) ----

DOT = [("src", ".", WRR_FOLLOW)]
ROOTDIR = entry(0, ".", S_IFDIR | 0o755)


def sender(w, name):
    if name == "banner":
        w.raw(b"Welcome to the machine! Last login: yesterday\n")
        return
    if name == "version":
        w.raw(MAGIC + u32(99) + u32(0))
        return
    if name == "short-hello":
        w.raw(MAGIC + u32(VERSION)[:2])
        return
    w.hello()
    w.setup_from_client()
    if name == "dotdot-root":
        flist(w, [("src", "..", 0)], [entry(0, "..", S_IFDIR | 0o755)])
    elif name == "dotdot-entry":
        flist(w, DOT, [ROOTDIR, entry(0, "../escaped", S_IFREG | 0o644, 4)])
    elif name == "absolute":
        flist(w, DOT, [ROOTDIR, entry(0, "/tmp/escaped", S_IFREG | 0o644, 4)])
    elif name == "empty-component":
        flist(w, DOT, [ROOTDIR, entry(0, "a//b", S_IFREG | 0o644, 4)])
    elif name == "dot-component":
        flist(w, DOT, [ROOTDIR, entry(0, "a/./b", S_IFREG | 0o644, 4)])
    elif name == "slash-in-rel0":
        flist(w, [("src", "a/b", 0)], [entry(0, "a/b", S_IFREG | 0o644, 4)])
    elif name == "outside-root":
        flist(w, [("src", "a", 0)], [entry(0, "a", S_IFDIR | 0o755), entry(0, "other", S_IFREG | 0o644, 4)])
    elif name == "symlink-then-file":
        flist(w, DOT, [ROOTDIR, entry(0, "l", S_IFLNK | 0o777, 10, "../outside"), entry(0, "l/f", S_IFREG | 0o644, 4)])
        # and should it ask anyway, the data goes through the symlink if anything is unsafe
        serve_evil(w, b"evil")
        return
    elif name == "file-under-file":
        flist(w, DOT, [ROOTDIR, entry(0, "f", S_IFREG | 0o644, 4), entry(0, "f/g", S_IFREG | 0o644, 4)])
    elif name == "missing-parent":
        flist(w, DOT, [ROOTDIR, entry(0, "d/f", S_IFREG | 0o644, 4)])
    elif name == "dir-over-symlink":
        # DEST holds l -> ../outside: the files of a directory l must not go through it
        flist(w, DOT, [ROOTDIR, entry(0, "l", S_IFDIR | 0o755), entry(0, "l/f", S_IFREG | 0o644, 4)])
        serve_evil(w, b"evil")
        return
    elif name == "short-hello":
        pass
    elif name == "dot-not-dir":
        flist(w, DOT, [entry(0, ".", S_IFREG | 0o644, 4)])
    elif name == "huge-roots":
        w.send(W_ROOTS, u32(1) + u32(0) + u32(0) + u32(0xffffffff) + sstr("src"))
    elif name == "huge-xattrs":
        w.send(W_ROOTS, roots(DOT))
        w.send(W_FLIST, ROOTDIR[:-4] + u32(0x7fffffff) + sstr("user.x"))
    elif name == "huge-frame":
        w.raw(bytes([W_FLIST]) + u32(0x7fffffff) + b"x" * 64)
    elif name == "bad-length":
        w.send(W_ROOTS, roots(DOT))
        w.send(W_FLIST, bytes([WE_ENTRY]) + u32(0) + u32(1000) + b".")
    elif name == "truncated":
        w.send(W_ROOTS, roots(DOT))
        w.raw(bytes([W_FLIST]) + u32(4096) + ROOTDIR)
        return
    elif name == "short-header":
        w.send(W_ROOTS, roots(DOT))
        w.raw(bytes([W_FLIST]) + u32(len(ROOTDIR))[:2])
        return
    elif name == "frame-overrun":
        # a frame longer than its header says: the rest is read as the next frame's header
        w.send(W_ROOTS, roots(DOT))
        w.raw(bytes([W_FLIST]) + u32(len(ROOTDIR) - 8) + ROOTDIR)
    elif name == "compressed-unasked":
        # a zstd frame (type | 0x80) though the client never asked for compression (-z)
        w.send(W_ROOTS, roots(DOT))
        w.send(W_FLIST | 0x80, b"\x28\xb5\x2f\xfd" + b"\0" * 16)
    elif name == "unknown-type":
        w.send(W_ROOTS, roots(DOT))
        w.send(99, b"")
    elif name == "exit-code":
        w.send(W_EXIT, u32(300))
        return
    elif name == "escape-text":
        w.send(W_ERR, b"sweep-sync: \x1b[2J\x1b]0;owned\x07 cleared your screen\n")
        flist(w, DOT, [ROOTDIR])
    elif name in ("unasked-file", "data-backwards", "data-after-end", "bad-status", "two-files-open", "no-answer",
                  "more-than-announced", "fail-then-data"):
        flist(w, DOT, [ROOTDIR, entry(0, "a", S_IFREG | 0o644, 4), entry(0, "b", S_IFREG | 0o644, 4)])
        serve_evil(w, name)
        return
    else:
        raise SystemExit("fakepeer: no scenario " + name)
    w.end_as_sender()


def serve_evil(w, how):
    """Answer the receiver's first round wrongly (index 1 is "a", 2 is "b")."""
    asked = []
    while True:
        t, p = w.expect(W_REQ, W_ROUND, W_DONE, W_CSUM_REQ, W_CSUM_ROUND)
        if t == W_DONE:
            w.send(W_SENDER_DONE)
            return
        if t == W_REQ:
            asked += [struct.unpack("<I", p[i:i + 4])[0] for i in range(0, len(p), 4)]
        if t == W_ROUND:
            break
    first = asked[0] if asked else 1
    if how == "unasked-file":
        w.send(W_FILE_BEGIN, u32(0) + stat(S_IFREG | 0o644, 4))  # index 0 is ".", never asked for
    elif how == "more-than-announced":
        # 8 bytes of data for a file whose end says 4
        w.send(W_FILE_BEGIN, u32(first) + stat(S_IFREG | 0o644, 4))
        w.send(W_DATA, u64(0) + b"abcdefgh")
        w.send(W_FILE_END, u32(0) + u64(4))
    elif how == "fail-then-data":
        w.send(W_FILE_FAIL, u32(first) + u32(-5))
        w.send(W_DATA, u64(0) + b"abcd")
    elif how == "data-backwards":
        w.send(W_FILE_BEGIN, u32(first) + stat(S_IFREG | 0o644, 4))
        w.send(W_DATA, u64(100) + b"abcd")
        w.send(W_DATA, u64(0) + b"abcd")
    elif how == "data-after-end":
        w.send(W_FILE_BEGIN, u32(first) + stat(S_IFREG | 0o644, 4))
        w.send(W_FILE_END, u32(0) + u64(4))
        w.send(W_DATA, u64(4) + b"more")
    elif how == "bad-status":
        w.send(W_FILE_BEGIN, u32(first) + stat(S_IFREG | 0o644, 4))
        w.send(W_FILE_END, u32(12345) + u64(0))
    elif how == "two-files-open":
        w.send(W_FILE_BEGIN, u32(first) + stat(S_IFREG | 0o644, 4))
        w.send(W_FILE_BEGIN, u32(first) + stat(S_IFREG | 0o644, 4))
    elif how == "no-answer":
        pass
    else:  # symlink-then-file: data for whatever was asked
        for k in asked:
            w.send(W_FILE_BEGIN, u32(k) + stat(S_IFREG | 0o644, 4))
            w.send(W_DATA, u64(0) + how)
            w.send(W_FILE_END, u32(0) + u64(4))
    w.send(W_ROUND_END)
    w.end_as_sender()


# ---- a receiver that lies (the client pushes: SRC HOST:DEST) ----

def receiver(w, name):
    w.hello()
    w.setup_from_client()
    n = 0
    while True:
        t, p = w.expect(W_ROOTS, W_FLIST, W_IDS, W_FLIST_END)
        if t == W_FLIST:
            n += p.count(bytes([WE_ENTRY]))  # enough for a count of at least the entries
        if t == W_FLIST_END:
            break
    if name == "req-out-of-range":
        w.send(W_REQ, u32(0x7fffff00))
    elif name == "req-directory":
        w.send(W_REQ, u32(0))  # "." is a directory
    elif name == "req-bad-length":
        w.send(W_REQ, b"\x01\x02\x03")
    elif name == "remove-directory":
        w.send(W_REMOVE, u32(0))
        w.send(W_REMOVE)
    elif name == "escape-text":
        w.send(W_OUT, b"\x1b[31mred\x1b[0m and a bell\x07\n")
        w.send(W_DONE)
        w.expect(W_SENDER_DONE)
        w.send(W_EXIT, u32(0))
        return
    elif name == "exit-code":
        w.send(W_EXIT, u32(300))
        return
    else:
        raise SystemExit("fakepeer: no scenario " + name)
    w.send(W_ROUND)
    try:
        while True:
            w.recv()
    except EOFError:
        pass


class BufWire(Wire):
    """A Wire that only records what it would send (the fuzz target's seeds)."""
    def __init__(self):
        super().__init__(-1, -1)
        self.out = b""

    def raw(self, b):
        self.out += b


def write_corpus(d):
    """Seed streams for tests/remote/fuzz/fuzz_wire.c: a sender's hello and file list."""
    lists = {
        "tree": (DOT, [ROOTDIR, entry(0, "d", S_IFDIR | 0o755), entry(0, "d/f", S_IFREG | 0o644, 4),
                       entry(0, "l", S_IFLNK | 0o777, 1, "d"), entry(0, "x", S_IFREG | 0o644, 0, "",
                                                                      [("user.a", b"1")])]),
        "lone": ([("src/f", "f", WRR_LONE)], [entry(0, "f", S_IFREG | 0o644, 4)]),
        "dotdot": (DOT, [ROOTDIR, entry(0, "../escaped", S_IFREG | 0o644, 4)]),
    }
    os.makedirs(d, exist_ok=True)
    for name, (rs, es) in lists.items():
        w = BufWire()
        w.raw(MAGIC + u32(VERSION) + u32(1))
        flist(w, rs, es)
        w.send(W_FILE_BEGIN, u32(1) + stat(S_IFREG | 0o644, 4))
        w.send(W_DATA, u64(0) + b"abcd")
        w.send(W_FILE_END, u32(0) + u64(4))
        with open(os.path.join(d, name), "wb") as f:
            f.write(w.out)


def main():
    args = sys.argv[1:]
    if args[0] == "--corpus":
        write_corpus(args[1])
        return
    if args[0] == "--client":
        # drive "sweep-sync --server ...": args = --client SCENARIO -- argv...
        name, cmd = args[1], args[args.index("--") + 1:]
        p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        w = Wire(p.stdout.fileno(), p.stdin.fileno())
        w.raw(MAGIC + u32(VERSION) + u32(0))
        w.read(16)
        w.send(W_ARGS, u32(2) + sstr("-a") + sstr("-i"))
        w.send(W_GO)
        try:
            if name == "sender-dotdot":
                flist(w, DOT, [ROOTDIR, entry(0, "../escaped", S_IFREG | 0o644, 4)])
            elif name == "receiver-req-out-of-range":
                while w.expect(W_ROOTS, W_FLIST, W_IDS, W_FLIST_END)[0] != W_FLIST_END:
                    pass
                w.send(W_REQ, u32(0x7fffff00))
                w.send(W_ROUND)
            while True:
                w.recv()
        except (EOFError, BrokenPipeError):
            pass
        p.stdin.close()
        sys.exit(p.wait())
    name = args[0]
    w = Wire(0, 1)
    try:
        if "--sender" in args:
            sender(w, name)
        else:
            receiver(w, name)
    except (EOFError, BrokenPipeError):
        pass


if __name__ == "__main__":
    main()
