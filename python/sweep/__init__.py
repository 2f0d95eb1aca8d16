# SPDX-License-Identifier: MIT
"""sweep: read and copy file trees in physical disk order, through libsweep (ctypes, no compiled code).

    sweep.order(paths)      -> the paths in read order (a list; .failed: those that could not be stat'ed)
    sweep.read(paths)       -> iterator of (path, file) in plan order; iterate file for its bytes
    sweep.copy(src, dst)    -> CopyStats; CopyError with every problem, worded as cp words them

The library is libsweep.so.0 as the dynamic loader finds it, or the file named
by the environment variable SWEEP_LIBRARY (a build tree's lib/libsweep.so).
It is loaded at import: ImportError when it is missing, or is not a libsweep
of this ABI (soname major 0, version 0.1.0 or later).
Errors the library returns as -errno are OSError with that errno.
"""

from ._copy import CopyError, CopyProblem, CopyStats, copy
from ._errors import FileChangedError, FileReplacedError, NotRegularFileError, ReadError
from ._lib import lib as _load
from ._order import Ordered, order
from ._read import File, Reader, Stat, read

__version__ = "0.1.0"

_load()  # here, so that `try: import sweep / except ImportError` is how a program asks for it

__all__ = ["order", "read", "copy", "library_version", "Ordered", "Reader", "File", "Stat", "ReadError",
           "FileReplacedError", "FileChangedError", "NotRegularFileError", "CopyError", "CopyProblem",
           "CopyStats", "__version__"]


def library_version():
    """The version of the libsweep in use (sweep_version(3)), e.g. "0.1.0"."""
    return _load().sweep_version().decode()
