#!/usr/bin/env python3
"""CPython's own "Did you mean" (the oracle of tests/support/SuggestTest.cpp).

Reads lines `NAME CANDIDATE...` from standard input and prints, per line, the name
CPython suggests for an AttributeError of NAME on a module whose attributes are the
candidates (plus the five a module always has: __doc__, __loader__, __name__,
__package__, __spec__), or `-` when it suggests none. The suggestion is the one the
interpreter prints (sys.__excepthook__, Python/suggestions.c), read from its text.
"""
import io
import re
import sys
import types


def suggest(name, candidates):
    module = types.ModuleType("m")
    for c in candidates:
        setattr(module, c, 1)
    try:
        getattr(module, name)
    except AttributeError as e:
        text = io.StringIO()
        saved, sys.stderr = sys.stderr, text
        try:
            sys.__excepthook__(type(e), e, None)
        finally:
            sys.stderr = saved
        m = re.search(r"Did you mean: '([^']*)'\?", text.getvalue())
        return m.group(1) if m else None
    return None  # NAME is an attribute: no error, no suggestion


if sys.version_info < (3, 10):
    sys.exit("cpython_suggest.py: python 3.10 or later suggests names")
for line in sys.stdin:
    words = line.split()
    if words:
        print(suggest(words[0], words[1:]) or "-")
