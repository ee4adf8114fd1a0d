# A package of dkv's tests: a kernel module importing its siblings (docs/python.md "Modules").
