#!/usr/bin/env python3
"""The entries of a large test file run one after the other without keeping each other in
memory: `dkv list` of a generated test file (a module of many classes and functions, one
parameterized test of many cases, each an entry that runs the module anew) stays under a
memory bound that does not grow with the number of entries.

    many_entries_memory.py DKV

Each run of the module makes classes (each in its own MRO), functions (in their module's
globals) and enum members (in their class): reference cycles, which CPython's collector
frees and dkv's interpreter cuts when an entry ends (pytrace Interp::~Interp). Without
that, every entry's module stayed alive (18 GB for the 8645 entries of a large public
test file). The test compares the peak memory of 20 and 400 entries.
"""
import os
import resource
import subprocess
import sys
import tempfile

CLASSES = 150


def module(cases):
    out = ["import enum", "import functools", "from absl.testing import absltest",
           "from absl.testing import parameterized", ""]
    for i in range(CLASSES):
        out += [f"class Color{i}(enum.Enum):", "  RED = 1", "  GREEN = 2", "",
                f"class Node{i}:", "  def __init__(self, parent=None):",
                "    self.parent = parent", "    self.me = self",
                f"    self.colors = [Color{i}.RED, Color{i}.GREEN]",
                "  def walk(self):", "    return self.me.parent", "",
                f"def helper{i}(x):", f"  def inner(y):", f"    return inner if y else helper{i}",
                "  return inner(x)", "",
                f"NODE{i} = Node{i}(Node{i}())", f"TABLE{i} = {{k: k * {i} for k in range(20)}}",
                ""]
    out += ["class ManyTest(parameterized.TestCase):", "",
            f"  @parameterized.parameters(*range({cases}))",
            "  def test_case(self, n):", "    self.skipTest(f'case {n}')", "",
            "if __name__ == '__main__':", "  absltest.main()", ""]
    return "\n".join(out)


def peak_kb(dkv, cases, tmp):
    path = os.path.join(tmp, f"many_{cases}_test.py")
    with open(path, "w") as f:
        f.write(module(cases))
    # The peak of each run alone: a fresh process per measurement.
    probe = ("import resource, subprocess, sys\n"
             "r = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)\n"
             "print(r.returncode, r.stdout.count(b'\\n'),"
             " resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    out = subprocess.run([sys.executable, "-c", probe, dkv, "list", path, "--devices", "2"],
                         stdout=subprocess.PIPE, check=True, text=True).stdout.split()
    code, lines, kb = int(out[0]), int(out[1]), int(out[2])
    if code != 0 or lines != cases:
        sys.exit(f"FAIL: dkv list of {cases} cases: exit {code}, {lines} lines")
    return kb


def main():
    dkv = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        small = peak_kb(dkv, 20, tmp)
        large = peak_kb(dkv, 400, tmp)
    print(f"peak memory: 20 entries {small} KB, 400 entries {large} KB")
    # A leak of the module per entry grows the peak by 380 modules' worth (hundreds of
    # MB); kept, it grows by the list of entries alone.
    if large > small + 64 * 1024:
        sys.exit(f"FAIL: the peak grows by {large - small} KB from 20 to 400 entries")
    print("ok")


if __name__ == "__main__":
    main()
