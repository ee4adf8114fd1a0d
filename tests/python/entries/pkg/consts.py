# Constants of the package, imported by absolute and relative imports.
ROWS = 8
COLS = 128
