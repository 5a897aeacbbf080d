"""Measured throughput and which measured record answers for a scenario: your curves, catalog claims, curves.

A measured figure belongs to the configuration it was measured for. For each row that needs a throughput the records
are tried in order, each only for its own accelerator, model, precision and request shape (lengths within
:data:`LENGTH_TOLERANCE`): a curve file of yours (``curves_sha256``: it outranks the catalog; an empty target reads
its point of most throughput), a catalog claim the row names (``throughput_claim``), then the catalog's curves
(:func:`curves`, interpolated at the target with a monotone PCHIP, never extrapolated; ``serving_stack=best`` takes
the upper envelope, :func:`best_at`). A record that does not apply says why in ``throughput_note``, and a figure
given for another configuration (``throughput_measured_for``) is kept and said. :mod:`economics.engine.estimate` runs
this
before the roofline.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from functools import cache, cached_property, lru_cache
from typing import Any

import numpy as np
import pandas as pd

from economics import catalog
from economics.domain.explain import format_number as fmt
from economics.domain.precision import record_precision
from economics.schema import user_curves as user_curves_store
from economics.schema.scenario import FORMAT_FIELDS

Array = np.ndarray

LENGTH_TOLERANCE = user_curves_store.LENGTH_TOLERANCE
"""A measured curve applies to workloads whose input and output lengths are within this factor of its own (the
one tolerance: a curve file's points lie within it of their curve's first point)."""

SOURCE_GIVEN, SOURCE_CURVE, SOURCE_ESTIMATE = "measured", "measured curve", "estimated"
SOURCE_USER, SOURCE_CLAIM = "your measured curve", "measured claim"
@dataclass(frozen=True)
class Curve:
    """A measured curve of one (accelerator, model, precision) at one input/output length: output tokens/s per
    accelerator against the per-user speed [token/s], sorted by that speed, with its serving stack and source.
    """

    curve_id: str
    accelerator: str
    model: str
    precision: str
    input_tokens: float
    output_tokens: float
    per_user: np.ndarray
    per_accelerator: np.ndarray
    stack: str = ""
    source: str = "measured curve"
    date: str = ""

    def most(self) -> float:
        """The highest measured throughput per accelerator (what an empty per-user target reads on a curve)."""
        return float(self.per_accelerator.max())

    def speed_of_most(self) -> float:
        """The per-user speed of the point with the most throughput per accelerator."""
        return float(self.per_user[int(np.argmax(self.per_accelerator))])

    def at(self, per_user: Array) -> Array:
        """Per-accelerator throughput at these per-user speeds (NaN outside the measured range)."""
        x = np.asarray(per_user, dtype=float)
        inside = (x >= self.per_user[0]) & (x <= self.per_user[-1])
        if self.per_user.size == 1:
            return np.where(inside, self.per_accelerator[0], np.nan)
        return np.where(inside, self._interpolant(np.where(inside, x, self.per_user[0])), np.nan)

    @cached_property
    def _interpolant(self) -> Pchip:
        """The monotone interpolant through the measured points, built once per curve."""
        return Pchip.through(self.per_user, self.per_accelerator)


@dataclass(frozen=True)
class Pchip:
    """The monotone piecewise cubic (PCHIP, Fritsch and Carlson's) through points ``x`` (strictly increasing) and
    ``y``, NaN outside ``[x[0], x[-1]]``: the steps of ``scipy.interpolate.PchipInterpolator(x, y,
    extrapolate=False)`` on one-dimensional float data, its derivatives (a weighted harmonic mean of the neighbouring
    slopes, zero at a local extremum, Moler's one-sided estimate at each end), the cubic's coefficients on each
    interval and their evaluation in the same IEEE operations in the same order, so the same bits
    (tests/test_startup.py: every catalog curve and random ones, against scipy).

    Why not scipy's (issue #43): importing ``scipy.interpolate`` imports ``scipy.optimize``, ``scipy.special``,
    ``scipy.linalg`` and ``scipy.sparse`` (about 420 modules, 0.3 s of CPU at load 14), and the default scenario's
    measured curve is the first page's only use of any of them, before its first KPI.

    ``c`` holds the coefficients of ``(x - x[i])**3``, ``**2``, ``**1`` and ``**0`` on interval ``i``, by row.
    """

    x: np.ndarray
    c: np.ndarray

    @classmethod
    def through(cls, x: Array, y: Array) -> Pchip:
        """The interpolant through ``(x, y)`` (at least two points, ``x`` strictly increasing, all finite)."""
        x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
        dydx = _pchip_slopes(x, y)
        dx = np.diff(x)
        slope = np.diff(y) / dx
        t = (dydx[:-1] + dydx[1:] - 2 * slope) / dx
        return cls(x, np.stack((t / dx, (slope - dydx[:-1]) / dx - t, dydx[:-1], y[:-1])))

    def __call__(self, at: Array) -> Array:
        """Values at ``at``: on interval ``i`` where ``x[i] <= at < x[i + 1]`` (the last one closed), NaN outside."""
        at = np.asarray(at, dtype=np.float64)
        i = np.clip(np.searchsorted(self.x, at, side="right") - 1, 0, self.x.size - 2)
        s = at - self.x[i]
        z = s
        value = 0.0 + self.c[3, i]  # scipy's loop from 0.0: value += c[k] * z, z *= s, from the constant term up
        value = value + self.c[2, i] * z
        z = z * s
        value = value + self.c[1, i] * z
        z = z * s
        value = value + self.c[0, i] * z
        return np.where((at >= self.x[0]) & (at <= self.x[-1]), value, np.nan)


def _pchip_slopes(x: Array, y: Array) -> Array:
    """The interpolant's derivative at each point (:class:`Pchip`; scipy's ``PchipInterpolator._find_derivatives``)."""
    hk = np.diff(x)
    mk = np.diff(y) / hk
    if y.size == 2:  # two points: the straight line
        return np.array([mk[0], mk[0]])
    smk = np.sign(mk)
    flat = (smk[1:] != smk[:-1]) | (mk[1:] == 0) | (mk[:-1] == 0)  # an extremum or a flat side: zero
    w1 = 2 * hk[1:] + hk[:-1]
    w2 = hk[1:] + 2 * hk[:-1]
    # the divisions by zero are the flat points, set to zero; an overflow (a slope below ~1e-302, or a mean whose
    # inverse overflows) is worked out again, scaled (:func:`_scaled_harmonic_mean`)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        whmean = (w1 / mk[:-1] + w2 / mk[1:]) / (w1 + w2)
        inner = 1.0 / whmean
    overflowed = ~flat & ~(np.isfinite(whmean) & np.isfinite(inner))
    inner[overflowed] = _scaled_harmonic_mean(w1[overflowed], w2[overflowed], mk[:-1][overflowed], mk[1:][overflowed])
    dk = np.zeros_like(y)
    dk[1:-1][~flat] = inner[~flat]
    dk[0] = _pchip_end(hk[0], hk[1], mk[0], mk[1])
    dk[-1] = _pchip_end(hk[-1], hk[-2], mk[-1], mk[-2])
    return dk


def _scaled_harmonic_mean(w1: Array, w2: Array, m0: Array, m1: Array) -> Array:
    """The weighted harmonic mean ``(w1 + w2) / (w1 / m0 + w2 / m1)`` of slopes of one sign, none zero, written so
    that nothing overflows: both slopes over the larger's size ``s``, ``s (w1 + w2) a b / (w1 b + w2 a)`` with
    ``|a|, |b| <= 1`` and one of them 1 (the mean lies between the slopes, so it cannot exceed ``s``; a ratio that
    underflows gives the mean's own tiny value, or 0).

    >>> float(_scaled_harmonic_mean(np.array([3.0]), np.array([3.0]), np.array([1e-310]), np.array([2e-310]))[0])
    1.3333333333333e-310
    """
    s = np.maximum(np.abs(m0), np.abs(m1))
    a, b = m0 / s, m1 / s
    return s * ((w1 + w2) * a * b / (w1 * b + w2 * a))


def _pchip_end(h0: float, h1: float, m0: float, m1: float) -> float:
    """The derivative at an end: the one-sided three-point estimate, zero if its sign is not the first slope's,
    three times that slope if the slopes change sign and the estimate exceeds it threefold (Moler, *Numerical
    Computing with MATLAB*, 3.6).
    """
    d = ((2 * h0 + h1) * m0 - h0 * m1) / (h0 + h1)
    if np.sign(d) != np.sign(m0):
        return 0.0
    if np.sign(m0) != np.sign(m1) and abs(d) > 3.0 * abs(m0):
        return 3.0 * m0
    return float(d)


@cache
def curves() -> tuple[Curve, ...]:
    """Measured curves with at least two points that have a per-user speed and known input/output lengths."""
    return _curves_of(catalog.throughput_curves(), minimum_points=2)


def user_curves(sha256: str) -> tuple[Curve, ...]:
    """The curves of the user's curve file kept under this hash (:mod:`economics.schema.user_curves`); one point is a
    curve too (a single measured run applies at its own per-user speed, or to an empty target). Empty when no such
    file is loaded (validation refuses a scenario naming it); that is not remembered, so a file loaded later is used.
    """
    curve_file = user_curves_store.loaded(sha256)
    return () if curve_file is None else _file_curves(curve_file)


@lru_cache(maxsize=user_curves_store.MAX_FILES)
def _file_curves(curve_file: user_curves_store.CurveFile) -> tuple[Curve, ...]:
    # remembered per file (its hash, name and table): the curve ids carry the file's label
    tag = f"{curve_file.label} "
    return tuple(replace(cv, curve_id=tag + cv.curve_id, source=SOURCE_USER, stack=cv.stack or USER_STACK)
                 for cv in _curves_of(curve_file.table, minimum_points=1))


FRONT = "published front"
"""How ``throughput_curve`` names the front of every stack's measured points for one configuration."""


@dataclass(frozen=True)
class Front(Curve):
    """The published Pareto front of one configuration (accelerator, model, precision, input and output lengths):
    every catalog curve's points pooled, keeping each point no other beats at both per-user speed and throughput
    (what InferenceX's dashboard draws across its configurations). ``origins`` holds each point's curve id and stack.
    It answers ``serving_stack=best`` only where the target falls between points of two different runs (a gap no
    single curve measured); elsewhere a curve of its own answers as before.
    """

    origins: tuple[tuple[str, str, str], ...] = ()

    def bracket(self, per_user: float) -> tuple[int, int]:
        """The indices of the measured points on either side of a per-user speed inside the front's range."""
        k = int(np.clip(np.searchsorted(self.per_user, per_user), 1, self.per_user.size - 1))
        return k - 1, k

    def between_runs(self, per_user: Array) -> Array:
        """Where the two points bracketing each speed come from different curves (runs)."""
        x = np.asarray(per_user, dtype=float)
        k = np.clip(np.searchsorted(self.per_user, np.nan_to_num(x, nan=self.per_user[0])), 1,
                    self.per_user.size - 1)
        ids = np.array([o[0] for o in self.origins], dtype=object)
        return ids[k - 1] != ids[k]


@cache
def fronts() -> tuple[Front, ...]:
    """One :class:`Front` per catalog configuration measured by two curves or more whose pooled front takes points
    from more than one of them.

    >>> f = next(f for f in fronts() if f.curve_id == "published front b200/deepseek-v3/fp8 1024/1024")
    >>> [round(v) for v in f.at(np.array([66.3389, 76.2285]))]
    [810, 284]
    """
    groups: dict[tuple[str, str, str, float, float], list[Curve]] = {}
    for cv in curves():
        groups.setdefault((cv.accelerator, cv.model, cv.precision, cv.input_tokens, cv.output_tokens), []).append(cv)
    out = []
    for (acc, model, prec, i, o), members in groups.items():
        if len(members) < 2:
            continue
        pts = sorted(((float(x), float(y), cv.curve_id, cv.stack, cv.date) for cv in members
                      for x, y in zip(cv.per_user, cv.per_accelerator, strict=True)), key=lambda p: (-p[0], -p[1]))
        kept: list[tuple[float, float, str, str, str]] = []
        most = -np.inf
        for p in pts:  # fastest first: a point stays while it has more throughput than every faster one
            if p[1] > most and (not kept or p[0] < kept[-1][0]):
                kept.append(p)
                most = p[1]
        kept.reverse()
        if len(kept) < 2 or len({p[2] for p in kept}) < 2:
            continue
        out.append(Front(f"{FRONT} {acc}/{model}/{prec} {i:g}/{o:g}", acc, model, prec, i, o,
                         np.array([p[0] for p in kept]), np.array([p[1] for p in kept]), "",
                         source=SOURCE_CURVE, date=min(p[4] for p in kept if p[4]) if any(p[4] for p in kept) else "",
                         origins=tuple((p[2], p[3], p[4]) for p in kept)))
    return tuple(out)


USER_STACK = "yours"
"""``serving_stack_used`` of a curve of yours that names no catalog stack."""


def _curves_of(table: pd.DataFrame, minimum_points: int) -> tuple[Curve, ...]:
    """The curves of a table of points (text cells in the columns of data/throughput_curves.csv): per ``curve_id``,
    the points with a per-user speed and both lengths, sorted by per-user speed. A curve file of yours is one
    configuration per curve with one point per speed (:func:`economics.schema.user_curves.curve_problems` refuses
    others);
    in the catalog a repeated speed keeps its first point.
    """
    usable = ((table["output_tokens_per_s_per_user"] != "") & (table["input_tokens"] != "")
              & (table["output_tokens"] != "")).to_numpy(dtype=bool)
    codes = pd.factorize(table["curve_id"], sort=False)[0][usable]  # curves in order of first appearance
    pts = table[usable]
    xs = pts["output_tokens_per_s_per_user"].astype(float).to_numpy()  # the whole column cast once, not per curve
    ys = pts["output_tokens_per_s_per_accelerator"].astype(float).to_numpy()
    cell = {name: pts[name].to_numpy(dtype=object) for name in ("curve_id", "accelerator", "model", "precision",
                                                                "input_tokens", "output_tokens", "source_date")}
    cell["precision"] = filed_precision(pts)
    stacks = pts["serving_stack"].to_numpy(dtype=object) if "serving_stack" in pts.columns else None
    runs = pts["run_date"].to_numpy(dtype=object) if "run_date" in pts.columns else cell["source_date"]
    by_curve = np.argsort(codes, kind="stable")  # each curve's points together, in table order
    starts = np.flatnonzero(np.r_[True, np.diff(codes[by_curve]) != 0]) if codes.size else np.zeros(0, dtype=int)
    out = []
    for rows in np.split(by_curve, starts[1:]) if codes.size else ():
        if codes[rows[0]] < 0 or rows.size < minimum_points:  # no curve id (groupby drops it), or too few points
            continue
        order = np.argsort(xs[rows], kind="stable")
        x, y = xs[rows][order], ys[rows][order]
        keep = np.concatenate([[True], np.diff(x) > 0])
        i = rows[0]
        dates = [d for d in runs[rows] if d] or [d for d in cell["source_date"][rows] if d]
        out.append(Curve(str(cell["curve_id"][i]), str(cell["accelerator"][i]), str(cell["model"][i]),
                         str(cell["precision"][i]), float(cell["input_tokens"][i]), float(cell["output_tokens"][i]),
                         x[keep], y[keep], str(stacks[i]) if stacks is not None else "",
                         date=max(dates) if dates else ""))
    return tuple(out)


def filed_precision(points: pd.DataFrame) -> Array:
    """The format each point of a table in the columns of data/throughput_curves.csv is filed under: ``precision``,
    or with its weights', compute's and KV cache's formats where given apart
    (:func:`economics.domain.precision.record_precision`, the key a scenario is matched on: all three formats).
    """
    formats = [points[c].to_numpy(dtype=object) if c in points.columns else None for c in FORMAT_FIELDS]
    if all(f is None or not np.any(f != "") for f in formats):
        return points["precision"].to_numpy(dtype=object)  # every catalog row but a few: the shorthand as it is
    return record_precision(points["precision"].to_numpy(dtype=object), *formats)


def stack_curves(accelerator: str, model: str, precision: str, input_tokens: float,
                 output_tokens: float) -> list[Curve]:
    """Every stack's measured curve for the pair whose lengths are within :data:`LENGTH_TOLERANCE` of these."""
    tol = np.log(LENGTH_TOLERANCE)
    return [cv for cv in curves() if (cv.accelerator, cv.model, cv.precision) == (accelerator, model, precision)
            and abs(np.log(max(input_tokens, 1.0) / cv.input_tokens)) <= tol
            and abs(np.log(max(output_tokens, 1e-9) / cv.output_tokens)) <= tol]


def best_at(candidates: list[Curve], per_user: float) -> tuple[Curve | None, float]:
    """The curve with the most output tokens/s per accelerator at a per-user speed, among those whose measured
    range holds it (the upper envelope of the stacks' fronts; never extrapolated), and that throughput; (None, NaN)
    when no curve covers the speed. Ties keep the first. The rule of ``serving_stack=best`` in
    :func:`fill_throughput`.

    >>> a = Curve("a", "x", "m", "fp8", 1.0, 1.0, np.array([10.0, 30.0]), np.array([100.0, 40.0]), "A")
    >>> b = Curve("b", "x", "m", "fp8", 1.0, 1.0, np.array([20.0, 40.0]), np.array([80.0, 20.0]), "B")
    >>> [(cv.stack if cv else None, round(v, 3)) for cv, v in (best_at([a, b], t) for t in (15.0, 25.0, 35.0))]
    [('A', 85.0), ('B', 65.0), ('B', 35.0)]
    """
    best, value = None, float("nan")
    for cv in candidates:
        d = float(cv.at(np.array([per_user]))[0])
        if not np.isnan(d) and (best is None or d > value):
            best, value = cv, d
    return best, value


def configuration_of(accelerator: str, model: str, precision: str) -> str:
    """How ``throughput_measured_for`` writes a configuration.

    >>> configuration_of("h100-sxm", "llama-3.1-70b", "fp8")
    'h100-sxm/llama-3.1-70b/fp8'
    """
    return f"{accelerator}/{model}/{precision}"


def scenario_configuration(scenario: Mapping[str, Any]) -> str:
    """How ``throughput_measured_for`` writes one scenario's configuration (a mapping of its fields): accelerator,
    model and its formats as :func:`configuration_precision` files them, so a figure typed in for it is not later
    said to belong to another configuration.

    >>> scenario_configuration({"accelerator": "h100-sxm", "model": "llama-3.1-8b", "precision": "bf16",
    ...                         "kv_cache_precision": "fp8"})
    'h100-sxm/llama-3.1-8b/bf16 kv fp8'
    """
    formats = {f: np.array([str(scenario.get(f) or "")], dtype=object) for f in FORMAT_FIELDS}
    key = configuration_precision({"precision": np.array([str(scenario.get("precision") or "bf16")], dtype=object),
                                   **formats})
    return configuration_of(str(scenario.get("accelerator") or ""), str(scenario.get("model") or ""), str(key[0]))


def given_elsewhere(c: dict[str, Array], out: dict[str, Array], given: Array) -> None:
    """A given figure measured for another configuration (``throughput_measured_for``) is kept, and said."""
    if "throughput_measured_for" not in c:
        return
    measured = c["throughput_measured_for"]  # an object array, or a categorical where no row gives it (no copy)
    rows = given & np.asarray(measured != "", dtype=bool)
    precision = configuration_precision(c) if rows.any() else c["precision"]
    for i in np.flatnonzero(rows):
        now = configuration_of(str(c["accelerator"][i]), str(c["model"][i]), str(precision[i]))
        if measured[i] != now:
            out["throughput_note"][i] = (f"output_tokens_per_s_per_accelerator was measured for {measured[i]}; this "
                                         f"scenario runs {now}: the figure is kept as given (empty it to look one "
                                         "up for this configuration)")


def configuration_precision(c: dict[str, Array]) -> Array:
    """Each row's precision as measured records are filed (:func:`economics.domain.precision.record_precision`):
    ``precision``, or with the weights', compute's and KV cache's formats where they are given apart (a curve is
    read only for a scenario of the same three formats).
    """
    formats = [c.get(f) for f in FORMAT_FIELDS]
    if all(x is None or not np.any(x != "") for x in formats):
        return c["precision"]  # the shorthand alone, as nearly every row gives it: compared as it is (categorical)
    return record_precision(c["precision"], *formats)


def configuration(c: dict[str, Array], cv: Curve) -> Array:
    """Rows whose accelerator, model and precision are the curve's and whose input and output lengths are within
    :data:`LENGTH_TOLERANCE` of its own: the configuration a measured curve applies to.
    """
    tol = np.log(LENGTH_TOLERANCE)
    return ((c["accelerator"] == cv.accelerator) & (c["model"] == cv.model)
            & (configuration_precision(c) == cv.precision)
            & (np.abs(np.log(np.maximum(c["input_tokens_per_request"], 1.0) / cv.input_tokens)) <= tol)
            & (np.abs(np.log(np.maximum(c["output_tokens_per_request"], 1e-9) / cv.output_tokens)) <= tol))


def take_curve(c: dict[str, Array], out: dict[str, Array], cv: Curve, match: Array, target: Array,
                best_d: Array, open_target: bool = False) -> Array:
    """Where ``match`` and the curve covers the row's target with more throughput than taken so far (``best_d``,
    updated), the curve's throughput becomes the row's, with its source, id and stack; returns those rows. With
    ``open_target`` an empty target reads the curve's point of most throughput.
    """
    d = cv.at(np.where(match, target, np.nan))
    speed = target
    if open_target:
        empty = match & np.isnan(target)
        d = np.where(empty, cv.most(), d)
        speed = np.where(empty, cv.speed_of_most(), target)
    hit = match & ~np.isnan(d) & (np.nan_to_num(d, nan=-np.inf) > best_d)
    out["outside_measured_range"] |= match & np.isnan(d)  # no extrapolation: another figure answers instead
    best_d[:] = np.where(hit, d, best_d)
    c["output_tokens_per_s_per_accelerator"] = np.where(hit, d, c["output_tokens_per_s_per_accelerator"])
    out["throughput_source"] = np.where(hit, cv.source, out["throughput_source"])
    out["throughput_curve"] = np.where(hit, cv.curve_id, out["throughput_curve"])
    out["serving_stack_used"] = np.where(hit, cv.stack, out["serving_stack_used"])
    out["throughput_date"] = np.where(hit, cv.date, out["throughput_date"])
    out["output_tokens_per_s_per_user"] = np.where(hit, speed, out["output_tokens_per_s_per_user"])
    return hit


def take_front(c: dict[str, Array], out: dict[str, Array], front: Front, match: Array, target: Array,
               best_d: Array) -> Array:
    """:func:`take_curve` on a published front, for rows whose target falls between points of two different runs
    (no single curve measured that speed; each curve alone reads only its own, often far-apart, points). The
    figure is bracketed: ``throughput_note`` names both neighbours, their stacks and curves, and
    ``serving_stack_used`` the two stacks; the date is the older neighbour's.
    """
    hit = take_curve(c, out, front, match & front.between_runs(target), target, best_d)
    for r in np.flatnonzero(hit):
        i, j = front.bracket(float(target[r]))
        (id0, st0, d0), (id1, st1, d1) = front.origins[i], front.origins[j]
        out["serving_stack_used"][r] = st0 if st0 == st1 else f"{st0} / {st1}"
        out["throughput_date"][r] = min(d for d in (d0, d1) if d) if (d0 or d1) else ""
        out["throughput_note"][r] = (
            f"bracketed on the published front of every stack's measured points (no run measured this speed): "
            f"{fmt(front.per_accelerator[i])} output tokens/s per accelerator at {fmt(front.per_user[i])} "
            f"tokens/s per user ({id0}, stack {st0 or 'not stated'}) and {fmt(front.per_accelerator[j])} at "
            f"{fmt(front.per_user[j])} ({id1}, stack {st1 or 'not stated'}); read between them with a monotone "
            "PCHIP on the front")
    return hit


def take_user_curves(c: dict[str, Array], out: dict[str, Array], need: Array, target: Array,
                      best_d: Array) -> Array:
    """Step 0 of :func:`economics.engine.estimate.fill_throughput`: rows naming a curve file (``curves_sha256``) take
    the
    best of its curves for their configuration at the target; the others of those rows say why the file did not
    answer.
    """
    taken = np.zeros(len(need), dtype=bool)
    for sha, mine in _rows_naming(c, "curves_sha256", need):
        for cv in user_curves(sha):
            taken |= take_curve(c, out, cv, mine & configuration(c, cv), target, best_d, open_target=True)
        label = cv_label(sha)
        note = (f"your curve file {label} has no curve for this accelerator, model, precision and request shape "
                "that covers the per-user target; looked up elsewhere (throughput_source says where)")
        out["throughput_note"] = np.where(mine & ~taken, note, out["throughput_note"])
    return taken


def _rows_naming(c: dict[str, Array], field: str, need: Array) -> Iterator[tuple[str, Array]]:
    """Each record the rows that need a throughput name in ``field`` (a curve file's hash, a claim id), with the
    rows that name it.
    """
    if field not in c:
        return
    names = np.asarray(c[field], dtype=object)
    rows = need & (names != "")
    for name in dict.fromkeys(names[rows]):
        yield str(name), rows & (names == name)


def cv_label(sha256: str) -> str:
    """How results name a loaded curve file: its name and the head of its hash."""
    curve_file = user_curves_store.loaded(sha256)
    return curve_file.label if curve_file is not None else f"sha256 {sha256[:12]}"


def take_claims(c: dict[str, Array], out: dict[str, Array], need: Array) -> Array:
    """Rows naming a claim (``throughput_claim``) take its figure while their accelerator, model, precision and
    output length are those it was measured for (lengths only where the claim states them); the others say that
    the claim belongs to another configuration and was looked up again.
    """
    taken = np.zeros(len(need), dtype=bool)
    for claim_id, mine in _rows_naming(c, "throughput_claim", need):
        k = claim_record(claim_id)
        same = ((c["accelerator"] == k["accelerator"]) & (c["model"] == k["model"])
                & ((configuration_precision(c) == k["precision"]) | (k["precision"] == "")))
        if k["output_tokens"] != "":
            same &= np.abs(np.log(np.maximum(c["output_tokens_per_request"], 1e-9) / float(k["output_tokens"]))
                           ) <= np.log(LENGTH_TOLERANCE)
        hit = mine & same
        value = float(k["value"])
        c["output_tokens_per_s_per_accelerator"] = np.where(hit, value, c["output_tokens_per_s_per_accelerator"])
        out["throughput_source"] = np.where(hit, SOURCE_CLAIM, out["throughput_source"])
        out["throughput_curve"] = np.where(hit, str(claim_id), out["throughput_curve"])
        out["throughput_date"] = np.where(hit, k["source_date"], out["throughput_date"])
        out["output_tokens_per_s_per_user"] = np.where(hit, c["target_output_tokens_per_s_per_user"],
                                                       out["output_tokens_per_s_per_user"])
        out["throughput_note"] = np.where(mine & ~same, f"claim {claim_id} ({fmt(value)} output tokens/s per "
                                          f"accelerator) was measured on {k['accelerator']} running {k['model']} "
                                          f"{k['precision'] or ''}{_claim_length(k)}, not this configuration: "
                                          "looked up again", out["throughput_note"])
        taken |= hit
    return taken


def claim_record(claim_id: str) -> dict[str, str]:
    """One row of data/throughput_claims.csv as text cells, with its id."""
    row = catalog.throughput_claims().loc[claim_id]
    return {"claim_id": claim_id, **{str(key): str(v) for key, v in row.items()}}


def _claim_length(k: dict[str, str]) -> str:
    return f" at {fmt(float(k['output_tokens']))} output tokens per request" if k["output_tokens"] != "" else ""
