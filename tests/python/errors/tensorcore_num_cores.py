# A TensorCore mesh without num_cores: its size is the chip's core count, which dkv does
# not know (its devices are TPUs of no particular generation).
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

tc_mesh = pltpu.create_tensorcore_mesh('core')
