# mesh_utils.create_device_mesh with a shape that does not use every device raises
# JAX's ValueError (jax/_src/mesh_utils.py), as on a machine with that many devices.
import jax
from jax.experimental import mesh_utils

devices = mesh_utils.create_device_mesh((jax.device_count() + 1,))
mesh = jax.sharding.Mesh(devices, ('x',))
