"""The replica and batch search: for each replica size (or the one given), the largest batch that fits memory,
respects the engine's batch limit and still meets the per-user speed target with its share of chunked prefill (in
a session's slowest turn, the last: :meth:`~economics.engine.roofline.Roofline.slowest_user_step`); the
size with the most throughput per accelerator wins. Many rows bisect over the batch; one row evaluates every
(size, batch) pair in a single pass (:data:`GRID_POINTS`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from economics.domain import throughput as th
from economics.engine.roofline import Array, Roofline

REPLICA_SIZES = (1, 2, 4, 8, 16, 32, 64, 72)


GRID_POINTS = 65_536
"""One row's batch search evaluates every (replica size, batch) pair up to this many in a single roofline pass (one
call over a 2-D array instead of a dozen or more calls over a few elements each); beyond it, the bisection calls the
roofline. Measured here: 0.09 ms against 0.8 ms at 1,024 pairs, 0.25 ms against 1.1 ms at 32,768, even at 65,536."""


def _largest_batch(speed_ok: Any, cap: Array) -> Array:
    """Largest B in [1, cap] with speed_ok(B) true, assuming speed falls with B (0 where even B=1 fails)."""
    lo = np.where(speed_ok(np.ones_like(cap)) & (cap >= 1), 1.0, 0.0)
    hi = np.where(lo > 0, np.maximum(cap, 1.0), 0.0)
    for _ in range(int(np.ceil(np.log2(max(2.0, float(np.nanmax(hi, initial=1.0)))))) + 1):
        mid = np.floor((lo + hi + 1) / 2)
        ok = (lo > 0) & (mid <= hi) & speed_ok(np.maximum(mid, 1.0))
        lo = np.where(ok, mid, lo)
        hi = np.where(ok | (lo == 0), hi, mid - 1)
    return lo


def best_replica(c: dict[str, Array], rl: Roofline, need: Array, target: Array) -> dict[str, Array]:
    """For each replica size (or the one given), the largest batch that fits memory and the engine's limit and
    whose per-user speed 1 / t_mix(B) (decode with its chunked prefill) still meets the target; the size with the
    most output tokens/s per accelerator, prefill included, wins.
    """
    n_rows = len(need)
    if n_rows == 1:
        return _best_replica_of_one(c, rl, need, target)
    best = _no_replica(n_rows)
    for size in REPLICA_SIZES:
        n, allowed = _replica_size(c, need, float(size))
        if not allowed.any():
            continue
        bmem, cap_b = _batch_cap(c, rl, n, allowed)
        s1 = 1.0 / rl.slowest_user_step(np.ones(n_rows), n)
        b = _largest_batch(lambda bb, n=n: ~(1.0 / rl.slowest_user_step(bb, n) < target), cap_b)
        _keep_better(best, n, b, bmem, cap_b >= 1, s1, rl.mixed_step(np.maximum(b, 1.0), n))
    return best


def _no_replica(n_rows: int) -> dict[str, Array]:
    """The search's start: no replica size yet (``effective`` -1, below any found)."""
    best = {k: np.full(n_rows, np.nan) for k in ("n", "b", "bmem")}
    best["effective"] = np.full(n_rows, -1.0)
    best["any_fit"] = np.zeros(n_rows, dtype=bool)
    best["speed_at_1"] = np.full(n_rows, np.nan)
    return best


def _replica_size(c: dict[str, Array], need: Array, size: float | Array) -> tuple[Array, Array]:
    """The replica size n tried for ``size`` (the one given, else ``size``) and whether it is tried: sizes up to the
    system (at least 8) when none is given, only once (at the first size) when one is.
    """
    fixed_n = c["accelerators_per_replica"]
    system = np.nan_to_num(c["accelerators_per_system"], nan=8.0)
    n = np.where(np.isnan(fixed_n), size, fixed_n)
    allowed = need & np.where(np.isnan(fixed_n), size <= np.maximum(8.0, system), size == REPLICA_SIZES[0])
    return n, allowed


def _batch_cap(c: dict[str, Array], rl: Roofline, n: Array, allowed: Array) -> tuple[Array, Array]:
    """The batch a replica of n holds in memory, and the search's cap: that and the engine's batch limit (0 where
    the size is not tried).
    """
    bmem = th.max_batch_in_memory(n, rl.mem, c["memory_utilization"], rl.weights, rl.kv_max)
    return bmem, np.nan_to_num(np.where(allowed, np.minimum(bmem, c["max_batch_size"]), 0.0), nan=0.0)


def _keep_better(best: dict[str, Array], n: Array, b: Array, bmem: Array, fits: Array, s1: Array,
                 mixed: Array) -> None:
    """Fold one replica size into the search, in place: whether any size fits, the per-user speed at batch 1 (the
    fastest a fitting size gives, for the reason when none meets the target), and the size with the most output
    tokens/s per accelerator, prefill included, B / (n t_mix(B)) with ``mixed`` = t_mix at the batch found (the first
    of equals; -1 where no batch is found).
    """
    effective = np.where(b >= 1, np.maximum(b, 1.0) / (n * mixed), -1.0)
    best["any_fit"] |= fits
    best["speed_at_1"] = np.where(fits & ~(best["speed_at_1"] >= s1), s1, best["speed_at_1"])
    better = effective > best["effective"]
    best["effective"] = np.where(better, effective, best["effective"])
    for key, val in (("n", n), ("b", b), ("bmem", bmem)):
        best[key] = np.where(better, val, best[key])


def _largest_batch_on_grid(ok: Array, cap: Array) -> Array:
    """:func:`_largest_batch` of each row j of a grid ``ok[j, B - 1]`` (B = 1 .. at least ``cap[j]``). Where a row is
    true up to some batch and false after it within its cap (the speed falling with B, as the bisection assumes),
    the bisection provably ends at that batch (capped at ``cap``; 0 if batch 1 fails or the cap is below 1): read it
    off the grid. Otherwise the bisection walks the grid.

    >>> ok = np.array([[True, True, False, False], [True, True, True, True], [False] * 4, [True, False, True, True]])
    >>> _largest_batch_on_grid(ok, np.array([4.0, 3.0, 4.0, 4.0])).tolist()
    [2.0, 3.0, 0.0, 4.0]
    >>> _largest_batch_on_grid(ok[:3], np.array([4.0, -7.0, 4.0])).tolist()
    [2.0, 0.0, 0.0]
    """
    width = ok.shape[1]
    leading = np.where(ok.all(axis=1), width, ok.argmin(axis=1))  # trues before the first false
    last = np.minimum(leading, np.maximum(cap, 0.0))  # a negative cap: the model does not fit, no batch
    if np.array_equal((ok & (np.arange(1.0, width + 1.0) <= cap[:, None])).sum(axis=1), last):
        return np.where(ok[:, 0] & (cap >= 1), last, 0.0)
    rows = np.arange(len(cap))
    return _largest_batch(lambda bb: ok[rows, np.clip(bb, 1.0, width).astype(np.intp) - 1], cap)


def _best_replica_of_one(c: dict[str, Array], rl: Roofline, need: Array, target: Array) -> dict[str, Array]:
    """:func:`best_replica` of one row, every allowed replica size at once: the row's roofline broadcasts over the
    vector of sizes, and where the (size, batch) grid is small (:data:`GRID_POINTS`) the per-user speed of every
    batch up to the largest cap is worked out in one pass, the bisection then reading it instead of calling the
    roofline a dozen times. The same speeds at the same batches, the same bisection (:func:`_largest_batch`), then
    the sizes compared in order by the rules of the loop over sizes: the same numbers.
    """
    n, allowed = _replica_size(c, need, np.array(REPLICA_SIZES, dtype=float))
    n = n[allowed]
    bmem, cap_b = _batch_cap(c, rl, n, np.ones(n.size, dtype=bool))
    fits = cap_b >= 1
    top = int(cap_b.max(initial=0.0))
    if top < 1:  # fits nowhere: the bisection keeps batch 0 (it needs a cap of 1), no speed at batch 1 counts
        b, s1 = np.zeros(n.size), np.full(n.size, np.nan)
        mixed = np.full(n.size, np.nan)  # no batch: unused
    elif n.size * top <= GRID_POINTS:
        grid_b, grid_n = np.arange(1.0, top + 1.0)[None, :], n[:, None]
        t = rl.step(grid_b, grid_n)
        t_mix = rl.mixed_step(grid_b, grid_n, t, rl.prefill_rate(grid_n))
        speed = 1.0 / rl.slowest_user_step(grid_b, grid_n, rl.user_step(grid_b, grid_n, t, t_mix), t)
        b, s1 = _largest_batch_on_grid(~(speed < target), cap_b), speed[:, 0]
        mixed = t_mix[np.arange(n.size), np.maximum(b, 1.0).astype(np.intp) - 1]
    else:
        s1 = 1.0 / rl.slowest_user_step(np.ones(n.size), n)
        b = _largest_batch(lambda bb: ~(1.0 / rl.slowest_user_step(bb, n) < target), cap_b)
        mixed = rl.mixed_step(np.maximum(b, 1.0), n)
    best = _no_replica(1)
    for j in np.flatnonzero(fits):  # in order, as the loop over sizes; one that does not fit changes nothing
        one = slice(j, j + 1)
        _keep_better(best, n[one], b[one], bmem[one], fits[one], s1[one], mixed[one])
    return best
