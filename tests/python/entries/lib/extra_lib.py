# A module found only through --python-path (docs/python.md "Modules").
BLOCK = (8, 128)
