# SPDX-License-Identifier: MIT
"""`pip install ./python` into a venv, offline and without build isolation (the setuptools already there),
then the installed package, not the source tree, imports and works against this build's library."""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import SOURCE_ROOT, child_python_env


BUILD_TOOLS = ("pip", "setuptools", "wheel")  # Debian: python3-pip, python3-setuptools, python3-wheel


def offline_env():
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    env["PIP_NO_INDEX"] = "1"  # offline: nothing may come from the network
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def interpreter_with_build_tools():
    """This interpreter if it has pip, setuptools and wheel, else the system's (the Debian packages'), else
    None. The package is pure Python: any python3 runs it."""
    for py in dict.fromkeys([sys.executable, "/usr/bin/python3"]):
        # one at a time: Debian's setuptools refuses to load after pip has imported distutils
        if os.access(py, os.X_OK) and all(subprocess.run([py, "-c", "import " + m], env=offline_env(),
                                                         capture_output=True).returncode == 0
                                          for m in BUILD_TOOLS + ("venv",)):
            return py
    return None


def test_pip_install_into_a_venv(tmp_path):
    base = interpreter_with_build_tools()
    if base is None:
        pytest.skip("no python3 with pip, setuptools, wheel and venv (Debian: python3-pip python3-setuptools "
                    "python3-wheel python3-venv)")
    venv = tmp_path / "venv"
    # the venv sees the base's site-packages: setuptools and wheel from there, no download
    subprocess.run([base, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    env = offline_env()
    # a copy: a build writes its egg-info next to pyproject.toml, and the source tree stays clean
    src = tmp_path / "python"
    shutil.copytree(os.path.join(SOURCE_ROOT, "python"), src)
    r = subprocess.run([py, "-m", "pip", "install", "--no-build-isolation", str(src)], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    probe = ("import sweep, sys; print(sweep.__file__); "
             "print(sweep.order([sys.argv[1]]) == [sys.argv[1]], sweep.library_version())")
    out = subprocess.run([py, "-c", probe, str(src / "pyproject.toml")], env=child_python_env(env), cwd=str(tmp_path),
                         capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0].startswith(str(venv) + "/lib/") and out[0].endswith("/site-packages/sweep/__init__.py")
    assert out[1].startswith("True ")
    # and the venv's pip knows it
    show = subprocess.run([py, "-m", "pip", "show", "sweep"], env=env, capture_output=True, text=True)
    assert show.returncode == 0 and "Name: sweep" in show.stdout
