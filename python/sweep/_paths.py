# SPDX-License-Identifier: MIT
"""Paths between Python and C: str, bytes or os.PathLike in, NUL-free bytes to the library.

A str path is encoded as os.fsencode() does (surrogateescape), so a name that
came from os.listdir() as str with undecodable bytes reaches the library as
the original bytes, and a name the library reports goes back with
os.fsdecode(). Callers get back the very objects they passed where there is
one, else the type they used.
"""

import os


def to_bytes(path, what="path"):
    """path as bytes for the library; TypeError for a non-path, ValueError for an embedded NUL."""
    try:
        p = os.fspath(path)
    except TypeError:
        raise TypeError(f"{what} must be str, bytes or os.PathLike, not {type(path).__name__}") from None
    b = os.fsencode(p) if isinstance(p, str) else p
    if b"\0" in b:
        raise ValueError(f"embedded null byte in {what}")
    return b


def kind(path):
    """str or bytes: the type a path given as path comes back as."""
    return bytes if isinstance(os.fspath(path), bytes) else str


def from_bytes(b, as_type):
    """A name the library gave, as the caller's type (None stays None)."""
    if b is None:
        return None
    return b if as_type is bytes else os.fsdecode(b)


def path_list(paths, what="paths"):
    """A list of paths, all str-like or all bytes: (originals, bytes for C). A lone str/bytes is refused."""
    if isinstance(paths, (str, bytes, os.PathLike)):
        raise TypeError(f"{what} must be an iterable of paths, not a single path")
    try:
        items = list(paths)
    except TypeError:
        raise TypeError(f"{what} must be an iterable of paths, not {type(paths).__name__}") from None
    encoded = [to_bytes(p, "each path") for p in items]
    check_same_kind(items)
    return items, encoded


def check_same_kind(items):
    """str and bytes paths are not mixed in one call (as os.path.join refuses)."""
    kinds = {kind(p) for p in items}
    if len(kinds) > 1:
        raise TypeError("cannot mix str and bytes paths")


def quote(name):
    """A name as cp shows it in a message: in single quotes, undecodable bytes escaped."""
    s = os.fsdecode(name) if isinstance(name, bytes) else name
    return "'" + s.encode("utf-8", "backslashreplace").decode("utf-8") + "'"
