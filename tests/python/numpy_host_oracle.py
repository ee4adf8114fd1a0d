#!/usr/bin/env python3
"""Runs the NumPy part of a kernel file under NumPy: the lines between `# numpy: begin`
and `# numpy: end` (host code that uses only `np`), with `import numpy as np`. Their
asserts state NumPy's values; the same file through dkv (its `# expect:` verdict) states
dkv's, so both must hold.

  numpy_host_oracle.py FILE

Exit status 1 when an assert fails under NumPy or the file has no such block.
"""
import sys

import numpy as np


def main():
  path = sys.argv[1]
  lines = open(path, encoding='utf-8').read().split('\n')
  try:
    begin = lines.index('# numpy: begin')
    end = lines.index('# numpy: end')
  except ValueError:
    print(f'{path}: no `# numpy: begin` / `# numpy: end` block')
    return 1
  code = '\n' * (begin + 1) + '\n'.join(lines[begin + 1:end])
  print(f'numpy {np.__version__}')
  exec(compile(code, path, 'exec'), {'np': np, '__name__': '__numpy_oracle__'})
  print(f'ok: {end - begin - 1} lines of {path} hold under NumPy')
  return 0


if __name__ == '__main__':
  sys.exit(main())
