# SPDX-License-Identifier: MIT
"""Checking keyword arguments: a wrong type is a TypeError, a wrong value a ValueError, before any work."""

from . import _lib


def need_bool(value, name):
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, not {type(value).__name__}")
    return value


def need_int(value, name, lo, hi=None):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < lo or (hi is not None and value > hi):
        raise ValueError(f"{name} must be at least {lo}" + (f" and at most {hi}" if hi is not None else "")
                         + f", not {value}")
    return value


def choice(value, name, table):
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    try:
        return table[value]
    except KeyError:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, table))}, not {value!r}") from None


def order_value(value, name, allow_name=True):
    table = _lib.ORDER if allow_name else {k: v for k, v in _lib.ORDER.items() if k != "name"}
    return choice(value, name, table)


def backend_value(value):
    return choice(value, "backend", _lib.BACKEND)
