# Error (robustness): unrolling never ends in reasonable time; the tracer stops at a
# budget of Python statements.
x = 0
for i in range(100000):
  for j in range(100000):
    x += 1
