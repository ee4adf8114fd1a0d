# A bytes value (here a kernel's name encoded for a log line): dkv has no bytes values,
# so making one is a located refusal, never a NameError CPython would not raise.
import jax

tag = bytes('ring', 'ascii')
