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
from tests.test_covering import hours

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


def _relaxation_per_role(h: covering.Hour, lo: np.ndarray,
                         hi: np.ndarray) -> tuple[float, np.ndarray, np.ndarray] | None:
    """The relaxation as docs/planner.md states it, each role's cost curve of its own length and every array made
    anew (the covering search's form before its rows of one width): the reference the search must equal bit for bit.
    """
    roles = covering._Roles(h)  # the slices' order and costs per share: what the search reads, not what it computes
    share = np.minimum(np.concatenate([lo, np.minimum(hi - lo, roles.most)]) * roles.per_slice, roles.cap)
    cost = np.concatenate([roles.unit, roles.unit + np.where(roles.per_system > 0, h.usd_per_system / np.where(
        roles.per_system > 0, roles.per_system, 1.0), 0.0)])
    slices = [share[o] for o in roles.order]
    curves = [(np.concatenate([[0.0], s.cumsum()]), np.concatenate([[0.0], (s * cost[o]).cumsum()]))
              for s, o in zip(slices, roles.order, strict=True)]
    (xa, ya), (xp, yp), (xd, yd) = curves
    g_min = max(0.0, h.need_input - min(xp[-1], h.prefill_max), h.need_output - xd[-1])
    g_max = min(xa[-1], roles.cap)
    if g_min > g_max + covering.TOL:
        return None
    g = np.clip(np.concatenate([xa, h.need_input - xp, h.need_output - xd, [h.need_input, h.need_output, g_min]]),
                g_min, max(g_min, g_max))
    total = np.interp(g, xa, ya) + np.interp(h.need_input - g, xp, yp, left=0.0) + np.interp(
        h.need_output - g, xd, yd, left=0.0)
    best = int(total.argmin())
    g_star = float(g[best])
    used = np.empty(len(share))
    for o, s, (x, _), q in zip(roles.order, slices, curves, (g_star, h.need_input - g_star, h.need_output - g_star),
                               strict=True):
        used[o] = np.clip(q - x[:-1], 0.0, s)
    n = len(h.role)
    return (float(total[best] + np.dot(h.usd_per_system, lo)), lo + used[n:] * roles.systems_per_share,
            (used[:n] + used[n:]) * roles.per_share)


@settings(max_examples=300, deadline=None)
@given(hours(), st.data())
def test_relaxation_in_rows_of_one_width_is_each_roles_own_curve_bit_for_bit(h: covering.Hour,
                                                                            data: st.DataObject) -> None:
    # the search's rows pad a role with fewer slices with copies of its curve's last point (issue #43: 6 cumsums a
    # node became 2); at the hour's bounds and at bounds a branch sets, every figure must be the per-role form's
    n = len(h.role)
    lo = np.array([data.draw(st.integers(int(h.lo[j]), int(h.lo[j]) + 3)) if h.lo[j] < h.hi[j] else h.lo[j]
                   for j in range(n)], dtype=float)
    hi = np.array([h.hi[j] if data.draw(st.booleans()) else lo[j] + data.draw(st.integers(0, 3)) for j in range(n)])
    hi = np.minimum(hi, h.hi)
    lo = np.minimum(lo, hi)
    for bounds in ((h.lo.astype(float), h.hi.astype(float)), (lo, hi)):
        got, expected = covering._Roles(h).relax(*bounds), _relaxation_per_role(h, *bounds)
        assert (got is None) == (expected is None)
        if got is not None and expected is not None:
            assert got[0] == expected[0]
            assert got[1].tobytes() == expected[1].tobytes() and got[2].tobytes() == expected[2].tobytes()
