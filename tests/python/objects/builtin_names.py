# The built-in names a kernel file may use that dkv had missing (a NameError CPython
# never raises): CPython's whole exception hierarchy (OSError's subclasses and its
# aliases IOError and EnvironmentError, ExceptionGroup, the Unicode errors, every
# warning), hex/oct/bin/ascii, site's exit()/quit() (SystemExit, its `code`), and the
# types dkv has no values of (bytes, bytearray, complex, memoryview: isinstance is false,
# making one is refused). The block between the `numpy:` lines runs under CPython too
# (tests/python/numpy_host_oracle.py). The kernel's row comes from bin().
# expect: ok
# devices: 2..3
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec
n = jax.device_count()

# numpy: begin
try:
  raise FileNotFoundError('missing.json')
except OSError as e:
  assert isinstance(e, FileNotFoundError) and e.args == ('missing.json',)
assert IOError is OSError and EnvironmentError is OSError
assert issubclass(BrokenPipeError, ConnectionError) and issubclass(ConnectionError, OSError)
assert issubclass(TabError, IndentationError) and issubclass(IndentationError, SyntaxError)
assert issubclass(ExceptionGroup, Exception) and issubclass(ExceptionGroup, BaseExceptionGroup)
assert not issubclass(BaseExceptionGroup, Exception)
assert issubclass(UnicodeDecodeError, ValueError) and issubclass(ResourceWarning, Warning)
for cls in (TimeoutError, PermissionError, EOFError, MemoryError, SystemError, BufferError):
  assert issubclass(cls, Exception)
assert hex(255) == '0xff' and hex(-255) == '-0xff' and hex(0) == '0x0' and hex(True) == '0x1'
assert bin(5) == '0b101' and bin(-1) == '-0b1' and oct(8) == '0o10'
assert hex(-9223372036854775807 - 1) == '-0x8000000000000000'
assert ascii('\u00e9') == "'\\xe9'" and ascii('a\u20acb') == "'a\\u20acb'"
assert ascii([1, 'x']) == "[1, 'x']" and ascii('\U0001f600') == "'\\U0001f600'"
try:
  hex(1.5)
  raise AssertionError('no TypeError')
except TypeError as e:
  assert str(e) == "'float' object cannot be interpreted as an integer", str(e)
for stop in (exit, quit):
  try:
    stop(3)
    raise AssertionError('no SystemExit')
  except SystemExit as e:
    assert e.code == 3 and e.args == (3,)
assert SystemExit().code is None and SystemExit(1, 2).code == (1, 2)
assert StopIteration(7).value == 7 and StopIteration().value is None
assert not isinstance(3, complex) and not isinstance('a', bytes)
assert not isinstance([], bytearray) and not isinstance(1.5, memoryview)
row = len(bin(255)) - 2  # 8
# numpy: end


def kernel(x_ref, o_ref, send_sem, recv_sem):
  right = lax.rem(lax.axis_index('x') + 1, lax.axis_size('x'))
  copy = pltpu.make_async_remote_copy(x_ref.at[pl.ds(row, 8)], o_ref.at[pl.ds(row, 8)],
                                      send_sem, recv_sem, device_id=(right,),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  copy.wait()


x = jnp.zeros((16, 128), jnp.float32)
call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                      in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
                      out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
                      scratch_shapes=[pltpu.SemaphoreType.DMA] * 2)
y = jax.shard_map(call, mesh=jax.make_mesh((n,), ('x',)), in_specs=P(), out_specs=P('x'),
                  check_vma=False)(x)
