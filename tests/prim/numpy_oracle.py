#!/usr/bin/env python3
"""NumPy as the oracle of the compute catalogue: run a kernel once with `dkv run` and
check every output that carries a `// numpy: EXPR` comment against EXPR evaluated by
NumPy on the run's inputs (docs/executor.md "Compute").

    numpy_oracle.py DKV KERNEL.dk|KERNEL.py DEVICES

A Python kernel carries `# numpy: EXPR` comments and its declarations are read from
`dkv translate`. The kernel's names in EXPR are its landing buffers, each `la` / `li`
the first / second input of the device on the left (the catalogue example's right permute: device d
receives from device d - 1). Floats are compared to 1e-6 relative (NumPy computes in
float64 where JAX, and the executor, compute in float32); integers exactly.
"""
import math
import re
import subprocess
import sys

import numpy as np

DTYPES = {"f32": np.float32, "bf16": np.float32, "f16": np.float32, "i32": np.int32,
          "i16": np.int16, "i8": np.int8, "u8": np.uint8, "u32": np.uint32}


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-np.asarray(x, dtype=np.float64)))


def silu(x):
    return np.asarray(x, dtype=np.float64) * sigmoid(x)


def gelu(x):
    x = np.asarray(x, dtype=np.float64)
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def gelu_erf(x):
    x = np.asarray(x, dtype=np.float64)
    return 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))


def bf16(x):
    """Round to bfloat16 (nearest even), as a float32 array."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32)


def parse_list(text):
    return [float(v) for v in text.strip("[]").split(",") if v.strip()]


def main():
    dkv, kernel, devices = sys.argv[1], sys.argv[2], int(sys.argv[3])
    source = open(kernel).read()
    python = kernel.endswith(".py")
    header = source
    if python:
        translated = subprocess.run([dkv, "translate", kernel, "--devices", str(devices)],
                                    capture_output=True, text=True)
        if translated.returncode != 0:
            sys.exit("numpy_oracle: dkv translate failed:\n%s" % translated.stderr)
        header = translated.stdout
    decls = {m.group(2): (m.group(1), m.group(3), [int(d) for d in m.group(4).split(",")])
             for m in re.finditer(r"\b(in|out)\s+(\w+):\s*\w+\s+(\w+)\[([0-9, ]+)\]", header)}
    inputs = [name for name, (role, _, _) in decls.items() if role == "in"]
    comment = "#" if python else "//"
    oracle = {m.group(1): m.group(2).strip()
              for m in re.finditer(r"^\s*(\w+)\[\.\.\.\]\s*=.*%s\s*numpy:\s*(.*)$" % comment,
                                   source, re.M)}
    if not oracle:
        sys.exit("numpy_oracle: no `%s numpy:` comment in %s" % (comment, kernel))
    run = subprocess.run([dkv, "run", kernel, "--devices", str(devices)], capture_output=True,
                         text=True)
    if run.returncode != 0:
        sys.exit("numpy_oracle: dkv run failed (%d):\n%s%s" % (run.returncode, run.stdout, run.stderr))
    values = {}
    for m in re.finditer(r"^\s+device (\d+) (\w+) = (\[.*\])$", run.stdout, re.M):
        values[(int(m.group(1)), m.group(2))] = parse_list(m.group(3))
    failures = 0
    checked = 0
    for d in range(devices):
        left = (d - 1) % devices
        env = {"np": np, "sigmoid": sigmoid, "silu": silu, "gelu": gelu, "gelu_erf": gelu_erf,
               "bf16": bf16}
        for name, landing in zip(inputs, ("la", "li")):
            role, dtype, shape = decls[name]
            env[landing] = np.array(values[(left, name)], dtype=DTYPES[dtype]).reshape(shape)
        for out, expr in sorted(oracle.items()):
            role, dtype, shape = decls[out]
            expected = np.broadcast_to(np.asarray(eval(expr, env)), shape)
            if dtype == "bf16":
                expected = bf16(expected)
            expected = expected.astype(np.float64).reshape(-1)
            got = np.array(values[(d, out)], dtype=np.float64)
            checked += 1
            if DTYPES[dtype] == np.float32:
                ok = np.allclose(got, expected, rtol=1e-6, atol=0)
            else:
                ok = np.array_equal(got, expected)
            if not ok:
                failures += 1
                print("device %d %s: dkv %s, numpy (%s) %s" % (d, out, got.tolist(), expr,
                                                               expected.tolist()))
    print("numpy_oracle: %d outputs on %d devices, %d disagree" % (checked, devices, failures))
    sys.exit(1 if failures else 0)


main()
