# SPDX-License-Identifier: MIT
"""The exceptions of the package.

Everything the library reports with a negative errno becomes an OSError with
that errno (and, where Python has one, its subclass: FileNotFoundError for
ENOENT, PermissionError for EACCES, ...). The per-file problems of read() are
ReadError, which is such an OSError too, so both `except sweep.ReadError`
and `except FileNotFoundError` catch a file that vanished.
"""

import errno as _errno
import os

from . import _lib


class ReadError(OSError):
    """One file of read() was not delivered as planned; filename is the path as the caller gave it."""


class FileReplacedError(ReadError):
    """What stands at the path now is not the file that was planned (another inode, a symlink, a directory on
    the way replaced): nothing of it was delivered. errno is ESTALE."""


class FileChangedError(ReadError):
    """The file changed between planning and reading, or while it was read: its data was delivered (in full up
    to the size seen at open) but is not a consistent snapshot. change is 'shrank', 'grew' or 'changed';
    errno is None."""

    def __init__(self, change, filename):
        super().__init__(None, _CHANGES[change], filename)
        self.change = change

    def __str__(self):
        return f"{self.strerror}: {self.filename!r}"

    def __reduce__(self):
        return (type(self), (self.change, self.filename))


class NotRegularFileError(ReadError):
    """read() was given something that is not a regular file (errno EISDIR for a directory, ELOOP for a
    symlink not followed, EINVAL for a FIFO, socket or device)."""


_CHANGES = {
    "shrank": "file shrank (fewer bytes than planned were delivered)",
    "grew": "file grew (bytes past the size seen at open were not delivered)",
    "changed": "file changed while it was read",
}
_STATUS_CHANGE = {_lib.READ_SHRANK: "shrank", _lib.READ_GREW: "grew", _lib.READ_CHANGED: "changed"}

# ReadError mixed with Python's own subclass for an errno (FileNotFoundError, ...), made once each.
_mixed = {}


def _read_error_class(err):
    if err == _errno.ESTALE:
        return FileReplacedError
    builtin = type(OSError(err, ""))
    if builtin is OSError:
        return ReadError
    cls = _mixed.get(builtin)
    if cls is None:
        cls = type("Read" + builtin.__name__, (ReadError, builtin), {"__module__": __package__})
        _mixed[builtin] = cls
    return cls


def read_error(err, filename):
    """A ReadError for a positive errno."""
    strerror = os.strerror(err)
    if err == _errno.ESTALE:
        strerror = "replaced since it was planned; not read"
    return _read_error_class(err)(err, strerror, filename)


def status_error(status, filename):
    """The exception for a reader end() status, None for 0 (delivered as planned)."""
    if status == 0:
        return None
    if status < 0:
        return read_error(-status, filename)
    change = _STATUS_CHANGE.get(status)
    if change is None:
        return ReadError(None, f"unknown read status {status}", filename)
    return FileChangedError(change, filename)
