# Error: a regular expression outside the syntax dkv models (a back reference): refused
# with its position, never matched differently from CPython.
import re

import jax

kind = jax.devices()[0].device_kind
version = re.search(r'(\w)\1', kind)
