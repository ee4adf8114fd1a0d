# A settings module in the style of a package's `envs.py`: its attributes come from a
# module-level `__getattr__` (PEP 562), as CPython asks it for names the module lacks.
import os

_DEFAULTS = {"SHIFT": 1, "ROWS": 8}


def __getattr__(name):
  if name in _DEFAULTS:
    return _DEFAULTS[name]
  raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
