# Error: an import of a name that the file mapped in sys.modules to something other than
# a module (CPython would bind that object; dkv imports modules only).
import sys

sys.modules["twin_config"] = {"rows": 8}
import twin_config  # noqa: E402
