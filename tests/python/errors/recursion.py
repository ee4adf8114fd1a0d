# Error (robustness): unbounded recursion is a diagnostic, never a crash.
def f(n):
  return f(n + 1)


f(0)
