# A library reads the TPU generation out of the device kind (as tpu-inference's block
# tables do) to pick its block sizes. Without --tpu the kind is a fact of the chip known
# only to start with "TPU": `'TPU' not in kind` is false, and the parse stops at a located
# refusal naming --tpu (never at an `AttributeError` of `re.search(...).group()` on a
# kind without digits, which no TPU has).
import re

import jax


def get_tpu_version() -> int:
  kind = jax.devices()[0].device_kind
  if 'TPU' not in kind:
    return -1
  return int(re.search(r'\d+', kind).group())


BLOCKS = {6: 256, 7: 512}
rows = BLOCKS.get(get_tpu_version(), 128)
assert rows % 8 == 0, rows
