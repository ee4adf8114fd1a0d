# jax.make_mesh orders its devices by the TPU's topology (on a TPU v3 of 8 devices,
# ids 0, 1, 2, 3, 6, 7, 4, 5): the id of one of them is no fact of the file, and dkv
# refuses it at the line that needs it (Mesh(np.array(jax.devices()).reshape(...), ...)
# states the order).
import jax

mesh = jax.make_mesh((jax.device_count(),), ('x',))
ids = [d.id for d in mesh.devices.flat]
if ids[0] == 0:
  print(ids)
