# SPDX-License-Identifier: MIT
"""The package's contract with the library: its version, the ImportError when no usable libsweep is there,
and the loader honouring SWEEP_LIBRARY."""
import os
import re
import shutil
import subprocess
import sys

import pytest

import sweep
from conftest import BUILD_ROOT, SOURCE_ROOT, child_python_env


def header_version():
    with open(os.path.join(BUILD_ROOT, "include", "sweep", "version.h")) as f:
        return re.search(r'#define SWEEP_VERSION_STRING "([^"]+)"', f.read()).group(1)


def test_versions_agree():
    v = header_version()
    assert sweep.library_version() == v
    assert sweep.__version__ == v
    with open(os.path.join(SOURCE_ROOT, "python", "pyproject.toml")) as f:
        assert re.search(r'^version = "([^"]+)"', f.read(), re.M).group(1) == v


def import_with(library):
    """`import sweep` in a fresh interpreter with SWEEP_LIBRARY=library: (exit status, last stderr line)."""
    env = child_python_env(dict(os.environ, SWEEP_LIBRARY=library, PYTHONPATH=os.path.join(SOURCE_ROOT, "python")))
    r = subprocess.run([sys.executable, "-c", "import sweep; print(sweep.library_version())"], env=env,
                       capture_output=True, text=True)
    return r.returncode, (r.stderr.strip().splitlines() or [""])[-1], r.stdout.strip()


def test_import_loads_what_sweep_library_names():
    rc, _, out = import_with(os.environ["SWEEP_LIBRARY"])
    assert rc == 0 and out == header_version()


@pytest.mark.parametrize("library,words", [
    ("/nonexistent/libsweep.so.0", "cannot load libsweep (/nonexistent/libsweep.so.0)"),
    ("libc.so.6", "libc.so.6 is not a libsweep this package can use"),
])
def test_import_error_without_a_usable_library(library, words):
    rc, err, _ = import_with(library)
    assert rc == 1 and err.startswith("ImportError: sweep: " + words)


@pytest.mark.parametrize("version,ok", [("0.1.0", True), ("0.9.3", True), ("1.0.0", False), ("0.0.9", False),
                                        ("x.y", False)])
def test_import_checks_the_abi_version(tmp_path, version, ok):
    """A library that has every symbol but reports another version: refused unless it is 0.x, x >= 1."""
    cc = shutil.which("cc")
    if not cc:
        pytest.skip("no C compiler")
    names = re.findall(r'\("(sweep_\w+)"', open(os.path.join(SOURCE_ROOT, "python", "sweep", "_lib.py")).read())
    src = tmp_path / "fake.c"
    src.write_text("".join(f"int {n}(void) {{ return -38; }}\n" for n in names if n != "sweep_version")
                   + f'const char *sweep_version(void) {{ return "{version}"; }}\n')
    so = tmp_path / "libsweep.so.0"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(so), str(src)], check=True)
    rc, err, out = import_with(str(so))
    if ok:
        assert rc == 0 and out == version
    else:
        assert rc == 1 and err.startswith("ImportError: sweep: ") and version in err


def test_public_names():
    for n in sweep.__all__:
        assert hasattr(sweep, n), n
    assert issubclass(sweep.ReadError, OSError) and issubclass(sweep.CopyError, OSError)
