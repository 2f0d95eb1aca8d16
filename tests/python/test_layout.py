# SPDX-License-Identifier: MIT
"""Every structure the package mirrors has the C layout: a C program built against include/sweep/*.h
prints each one's size and each field's offset and size, compared with ctypes'."""
import ctypes
import os
import shutil
import subprocess

import pytest

from conftest import BUILD_ROOT, SOURCE_ROOT
from sweep import _lib


def c_program():
    lines = ["#include <stddef.h>", "#include <stdio.h>", "#include <sweep.h>", "#include <sweep/batch.h>",
             "#include <sweep/copy.h>", "#include <sweep/order.h>", "int main(void) {"]
    for name, cls in _lib.STRUCTS.items():
        lines.append(f'printf("{name} %zu\\n", sizeof(struct {name}));')
        for field, _ in cls._fields_:
            lines.append(f'printf("{name}.{field} %zu %zu\\n", offsetof(struct {name}, {field}), '
                         f'sizeof(((struct {name} *)0)->{field}));')
    return "\n".join(lines + ["return 0; }"])


def python_layout():
    out = []
    for name, cls in _lib.STRUCTS.items():
        out.append(f"{name} {ctypes.sizeof(cls)}")
        for field, _ in cls._fields_:
            d = getattr(cls, field)
            out.append(f"{name}.{field} {d.offset} {d.size}")
    return out


def test_layouts_match_the_headers(tmp_path):
    cc = shutil.which("cc")
    if not cc:
        pytest.skip("no C compiler")
    src, exe = tmp_path / "layout.c", tmp_path / "layout"
    src.write_text(c_program())
    subprocess.run([cc, "-Wall", "-Werror", "-I", os.path.join(SOURCE_ROOT, "include"),
                    "-I", os.path.join(BUILD_ROOT, "include"), "-o", str(exe), str(src)], check=True)
    got = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.splitlines()
    assert python_layout() == got
    assert len(got) > 100  # every structure, every field
