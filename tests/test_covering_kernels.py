"""The covering search's relaxation calls numpy's clip ufunc and compiled interp directly (issue #43: the Python
layers of ``np.clip`` and ``np.interp`` were most of the time of a search's thousands of tiny relaxations). These are
the functions ``np.clip`` and ``np.interp`` end in, so every figure is the same bit for bit; these tests hold that
on the values a relaxation meets (signed zeros, NaN, infinite bounds, points outside the curve) so that a numpy
upgrade that changed either path would fail here before it moved a plan.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from economics.domain import covering

FLOATS = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.0, -0.0, 1.0, -1.0]))


@settings(max_examples=400, deadline=None)
@given(arrays(np.float64, st.integers(0, 12), elements=FLOATS), st.floats(-10, 10), st.floats(-10, 10))
def test_clip_with_scalar_bounds_is_np_clip_bit_for_bit(a: np.ndarray, lo: float, hi: float) -> None:
    lo, hi = min(lo, hi), max(lo, hi)  # the relaxation's bounds: g_min <= max(g_min, g_max)
    assert covering._clip(a, lo, hi).tobytes() == np.clip(a, lo, hi).tobytes()
    assert covering._clip(a, 0.0, hi).tobytes() == np.clip(a, 0.0, hi).tobytes()


@settings(max_examples=400, deadline=None)
@given(st.integers(0, 12).flatmap(lambda n: st.tuples(arrays(np.float64, n, elements=FLOATS),
                                                      arrays(np.float64, n, elements=FLOATS))))
def test_clip_with_array_bounds_is_np_clip_bit_for_bit(pair: tuple[np.ndarray, np.ndarray]) -> None:
    a, hi = pair  # a pool's slice used, clipped to [0, its share]
    assert covering._clip(a, 0.0, hi).tobytes() == np.clip(a, 0.0, hi).tobytes()


@settings(max_examples=400, deadline=None)
@given(arrays(np.float64, st.integers(1, 12), elements=st.floats(-1e3, 1e3)), st.integers(1, 10), st.data())
def test_interp_is_np_interp_bit_for_bit(x: np.ndarray, n: int, data: st.DataObject) -> None:
    # a role's cost curve: cumulative shares from 0 (nondecreasing) against cumulative costs
    steps = data.draw(arrays(np.float64, n, elements=st.floats(0.0, 10.0)))
    costs = data.draw(arrays(np.float64, n, elements=st.floats(0.0, 100.0)))
    xp, fp = np.zeros(n + 1), np.zeros(n + 1)
    steps.cumsum(out=xp[1:])
    (steps * costs).cumsum(out=fp[1:])
    assert covering._interp(x, xp, fp, None, None).tobytes() == np.interp(x, xp, fp).tobytes()
    assert covering._interp(x, xp, fp, 0.0, None).tobytes() == np.interp(x, xp, fp, left=0.0).tobytes()


def test_the_relaxation_hand_worked() -> None:
    # an aggregated pool covering 25 % of the hour per system at 10 USD and a decode pool covering 40 % of the
    # output per system at 3 USD, no energy: the output needs 4 aggregated systems' worth (40 USD) or, beside the
    # aggregated pool's input share, decode for the rest of the output; the input needs 4 aggregated systems either
    # way (1 / 0.25), and they cover the output too: 40 USD, 4 aggregated systems, no decode
    h = covering.Hour(np.array([covering.AGGREGATED, covering.DECODE]), np.array([0.25, 0.4]), np.ones(2),
                      np.array([10.0, 3.0]), np.zeros(2), np.zeros(2), np.array([np.inf, np.inf]))
    cost, systems, flow = covering.relax(h, h.lo, h.hi)
    assert cost == 40.0 and systems.tolist() == [4.0, 0.0] and flow.tolist() == [4.0, 0.0]
