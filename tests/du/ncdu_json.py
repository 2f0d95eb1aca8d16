#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Read an ncdu JSON export (https://dev.yorhel.nl/ncdu/jsonfmt) strictly.

    ncdu_json.py entries FILE   one line per entry: its path below the top
                                (names as bytes, escaped), then its fields but
                                the top's name and the metadata, sorted
    ncdu_json.py totals FILE    "DSIZE ASIZE": the top's disk usage and apparent
                                size as du counts them (each hard-linked
                                inode once, the excluded left out)

Names may be any bytes: the file is decoded with surrogateescape, so that
json keeps them, and encoded back the same way.
"""
import json
import sys


def load(path):
    with open(path, "rb") as f:
        data = json.loads(f.read().decode("utf-8", "surrogateescape"))
    if not (isinstance(data, list) and len(data) == 4 and data[0] == 1 and data[1] in (0, 1, 2)
            and isinstance(data[2], dict) and isinstance(data[3], list)):
        raise SystemExit("not an ncdu export of format 1.x: " + path)
    return data[3]


def walk(directory):
    """(path, info, is_dir, dev) of every entry, the top first; dev is inherited where not written."""
    stack = [((), None, directory)]
    while stack:
        parent, pdev, d = stack.pop()
        info = d[0]
        path = parent + (info["name"],)
        dev = info.get("dev", pdev)
        yield path, info, True, dev
        for child in d[1:]:
            if isinstance(child, list):
                stack.append((path, dev, child))
            else:
                yield path + (child["name"],), child, False, child.get("dev", dev)


def normal(info):
    """What ncdu 1.x writes otherwise for the same thing, as the format document says it."""
    info = dict(info)
    if info.get("excluded") == "othfs":  # ncdu 1.x writes the old spelling (and reads "otherfs")
        info["excluded"] = "otherfs"
    if info.get("excluded") == "pattern" and info.get("dev") == 0:  # ncdu 1.18: a dev of 0, meaningless
        del info["dev"]
    return info


def main():
    mode, path = sys.argv[1], sys.argv[2]
    top = load(path)
    if mode == "entries":
        lines = []
        for p, info, is_dir, dev in walk(top):
            rel = b"/".join(n.encode("utf-8", "surrogateescape") for n in p[1:])
            fields = sorted((k, v) for k, v in normal(info).items() if k != "name")
            lines.append(repr(rel)[2:-1] + ("/" if is_dir else "") + " " + " ".join("%s=%s" % kv for kv in fields))
        print("\n".join(sorted(lines)))
    elif mode == "totals":
        seen = set()
        dsize = asize = 0
        for p, info, is_dir, dev in walk(top):
            if "excluded" in info:
                continue
            if info.get("nlink", 1) > 1 or info.get("hlnkc"):
                key = (dev, info["ino"])
                if key in seen:
                    continue
                seen.add(key)
            dsize += info.get("dsize", 0)
            asize += info.get("asize", 0)
        print(dsize, asize)
    else:
        raise SystemExit("usage: ncdu_json.py entries|totals FILE")


if __name__ == "__main__":
    main()
