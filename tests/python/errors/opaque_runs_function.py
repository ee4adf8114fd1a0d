# A module-level call that gives a Python function to an unmodelled JAX API that may run
# it (a primitive's implementation rule runs on arrays, so it could run a kernel): still
# refused, unlike a registration of a type or of an abstract evaluation rule, which runs
# on no array (docs/python.md "Opaque values").
from jax._src import hijax


class Pair:
  pass


hijax.register_hitype(Pair, lambda p: p)  # a type: accepted
pair_p = hijax.HiPrimitive('pair')
pair_p.def_abstract_eval(lambda x: x)  # shapes only: accepted
pair_p.def_impl(lambda x: x)  # runs on arrays: refused
