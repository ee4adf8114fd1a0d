#!/usr/bin/env python3
"""The example kernels and their annotations, as `dkv` itself reads them.

The one reader of `// expect:` (also `// expect: ... with OPTIONS`), `// devices:`,
`// mesh:` and `// options:` for the test scripts written in Python or shell: it runs
`dkv parse FILE --annotations` (docs/examples.md; a malformed annotation is an error
here too) and lists the examples under a directory in a stable order.

As a module:
    examples(directory, recursive=True) -> sorted paths of the *.dk files
    read(dkv, path) -> Annotations(expect, devices, meshes, options, cases)
    instance_sets(annotations) -> [(devices, meshes, options, expect)]: the default
        verdict's, then each case's (its counts or meshes, else the file's; the file's
        options followed by the case's)
As a command, for shell scripts, one line per instance set (the default verdict's, then
one per `// expect: ... with` comment, in file order):
    annotations.py DKV EXAMPLES_DIR
    -> PATH-UNDER-EXAMPLES_DIR US DEVICE COUNTS US OPTIONS US EXPECTED VERDICTS
with US the ASCII unit separator 0x1f (not white space, so that bash's
`IFS=$'\x1f' read -r ...` keeps empty fields) and each field's words separated by
single spaces.
"""
import os
import subprocess
import sys
from typing import List, NamedTuple, Optional, Tuple


class Case(NamedTuple):
    """`// expect: VERDICT [at LINE] with OPTIONS...` (an `expect-with` line)."""
    expect: Tuple[str, Optional[int]]  # (verdict, line or None)
    devices: List[int]  # its --devices counts; empty: the file's
    meshes: List[str]  # its --mesh values; empty: the file's
    options: List[str]  # its other option words


class Annotations(NamedTuple):
    expect: List[Tuple[str, Optional[int]]]  # (verdict, line or None), in file order
    devices: List[int]  # the `// devices:` counts, a range expanded; empty: none given
    meshes: List[str]  # the `// mesh:` values (each a --mesh argument)
    options: List[str]  # the `// options:` words
    cases: List[Case] = []  # the `// expect: ... with` comments, in file order


def examples(directory, recursive=True):
    """The *.dk files under `directory` (in its subdirectories too when `recursive`),
    sorted by path."""
    if not recursive:
        names = [os.path.join(directory, n) for n in os.listdir(directory)]
        return sorted(p for p in names if p.endswith(".dk") and os.path.isfile(p))
    found = []
    for root, _, files in os.walk(directory):
        found.extend(os.path.join(root, f) for f in files if f.endswith(".dk"))
    return sorted(found)


def read(dkv, path):
    """The annotations of `path` as `dkv parse --annotations` prints them; raises
    RuntimeError when dkv refuses them (a malformed annotation, exit 2)."""
    run = subprocess.run([dkv, "parse", path, "--annotations"], capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"{path}: dkv parse --annotations exited {run.returncode}: "
                           f"{run.stderr.strip()}")
    expect, devices, meshes, options, cases = [], [], [], [], []
    for line in run.stdout.splitlines():
        words = line.split()
        if not words:
            continue
        if words[0] == "expect":
            expect.append((words[1], int(words[2]) if len(words) > 2 else None))
        elif words[0] == "expect-with":
            # expect-with VERDICT LINE|- DEVICES|- OPTION...
            where = words[3]
            cases.append(Case((words[1], None if words[2] == "-" else int(words[2])),
                              [int(n) for n in where.split(",")]
                              if where != "-" and not where.startswith("mesh:") else [],
                              where[5:].split("/") if where.startswith("mesh:") else [],
                              words[4:]))
        elif words[0] == "devices":
            devices = [int(w) for w in words[1:]]
        elif words[0] == "mesh":
            meshes = words[1:]
        elif words[0] == "options":
            options = words[1:]
    return Annotations(expect, devices, meshes, options, cases)


def instance_sets(a):
    """The instance sets the annotations name: (devices, meshes, options, expect) for the
    default verdict, then for each case (docs/examples.md "Verdicts under options")."""
    sets = [(a.devices, a.meshes, a.options, a.expect)]
    for c in a.cases:
        own = bool(c.devices or c.meshes)
        sets.append((c.devices if own else a.devices, c.meshes if own else a.meshes,
                     a.options + c.options, [c.expect]))
    return sets


def main():
    dkv, directory = sys.argv[1], sys.argv[2]
    for path in examples(directory):
        for devices, _, options, expect in instance_sets(read(dkv, path)):
            print("\x1f".join([os.path.relpath(path, directory), " ".join(map(str, devices)),
                             " ".join(options), " ".join(v for v, _ in expect)]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
