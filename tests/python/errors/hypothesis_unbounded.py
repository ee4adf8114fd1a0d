# A @given test whose strategy has no bounds (`hps.integers()`): dkv draws from finite
# ranges only, and says so at the strategy (docs/python.md "Hypothesis").
from absl.testing import absltest
import hypothesis as hp
import hypothesis.strategies as hps


class UnboundedTest(absltest.TestCase):

  @hp.given(hps.integers(min_value=1))
  def test_any_size(self, n):
    self.assertGreater(n, 0)
