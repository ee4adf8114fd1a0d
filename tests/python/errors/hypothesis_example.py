# `@hp.example(...)` (an explicit example, not modelled) over a @given test: the test is
# neither dropped nor run without it; dkv refuses the decorator (docs/python.md
# "Hypothesis").
from absl.testing import absltest
import hypothesis as hp
import hypothesis.strategies as hps


class ExampleTest(absltest.TestCase):

  @hp.example(3)
  @hp.given(hps.integers(0, 4))
  def test_small(self, n):
    self.assertLess(n, 5)
