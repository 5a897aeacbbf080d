"""How wrong the roofline is where nothing was measured: leave-one-family-out, -model-out and -table-out validation.

The held-out split of :mod:`economics.studies.calibration` holds points out *inside* the accelerator families the fit
saw.
A user relies on the estimate most where the catalog has no measured point at all: an accelerator family or a model
without one. This module measures exactly that. For each accelerator family (or each model), every fittable point of
it is removed, the calibration is fitted again on what is left (:func:`economics.studies.calibration.fitted_scopes`, the
same fit), and the removed points are predicted with the factors they would then get (their family's scope is gone,
so the global or the model class's): the error of an estimate on a family, or a model, the fit never saw. Left out
by published table (``source``), it is the error on a configuration the fit never saw on a family it did: another
engine release or benchmark setup, as a user's own run is; the ranges of fitted families are built from it.

Points of the blind and validation splits (sources added after the stored fit) take no part, so they stay a test on
new data: :func:`validation` reports the validation split's error and how often each estimate's range held it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from economics.engine import estimate_range
from economics.studies import calibration
from economics.studies.calibration_points import is_fitted

Kind = Literal["family", "model", "source"]
COLUMN: dict[str, str] = {"family": "family", "model": "model", "source": "source_group"}
"""The points' column each kind of group is read from (a source is a published table: ``holdout_group``)."""


def leave_out(kind: Kind, groups: Sequence[str] | None = None,
              progress: Callable[[str], None] | None = None) -> pd.DataFrame:
    """Every fittable point of each group (an accelerator ``family``, a ``model`` or a ``source``, the published table
    it comes from; all of them unless ``groups``) predicted by the calibration refitted without that group: one row
    per point with ``left_out`` (the group), ``measured``, ``predicted`` and ``error_pct`` = (predicted / measured -
    1) x 100. One refit per group with training points (about 25 s each here, less after the first: a scope the
    group leaves unchanged is looked up, not searched again, :func:`economics.studies.calibration._remembered_fit`);
    groups without any share the whole fit.
    """
    pts = calibration.points()
    usable = pts[calibration.is_fitted(pts) & ~pts["split"].isin(calibration.NEVER_FITTED)].reset_index(drop=True)
    column = COLUMN[kind]
    chosen = sorted(set(usable[column])) if groups is None else list(groups)
    out = []
    whole: dict[str, dict[str, float]] | None = None
    for group in chosen:
        mine = usable[usable[column] == group].reset_index(drop=True)
        if mine.empty:
            continue
        if progress:
            progress(group)
        if (mine["split"] == "train").any():
            fitted = calibration.fitted_scopes(usable[usable[column] != group].reset_index(drop=True))
        else:  # a group the fit never trained on (a held-out model): the fit without it is the whole fit
            whole = whole or calibration.fitted_scopes(usable)
            fitted = whole
        res = calibration.point_errors(mine, calibration.applied_factors(mine, fitted))
        res["left_out"] = group
        res["scopes_fitted"] = " ".join(sorted(fitted))
        out.append(res)
    columns = ["left_out", "point", "accelerator", "model", "model_class", "family", "source_group", "split",
               "measured", "predicted", "error_pct", "scopes_fitted"]
    return pd.concat(out, ignore_index=True)[columns] if out else pd.DataFrame(columns=columns)


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per left-out group and overall: points compared, median and worst absolute error [%]."""
    rows = []
    for group, g in [*table.groupby("left_out", sort=True), ("all", table)]:
        e = g["error_pct"].dropna().abs()
        rows.append({"left_out": group, "points": len(e),
                     "median_abs_error_pct": round(float(e.median()), 1) if len(e) else np.nan,
                     "worst_abs_error_pct": round(float(e.max()), 1) if len(e) else np.nan})
    return pd.DataFrame(rows)


def summary_text(kind: Kind, table: pd.DataFrame) -> str:
    """``calibrate --leave-out`` as printed: one line per group and the overall figure."""
    lines = [f"leave-one-{kind}-out: each {kind}'s points predicted by the calibration refitted without them "
             "(output tokens/s per accelerator, prefill included)"]
    for r in summary(table).to_dict("records"):
        lines.append(f"  {str(r['left_out']):24} {int(r['points']):5d} points  median "
                     f"{r['median_abs_error_pct']:6.1f}%  worst {r['worst_abs_error_pct']:7.1f}%")
    return "\n".join(lines) + "\n"


RANGE_MIN_POINTS = 10
"""Held-out points a family needs for a range of its own; fewer take the pooled held-out points of every fitted
family."""
RANGE_MIN_SOURCES = 5
"""Sources (published tables, runs of one setup) a family needs for a range of its own: the range is the spread
across sources, and fewer than five medians say little about it; fewer take the pool of every fitted family."""
RANGE_COLUMNS = ("scope", "basis", "points", "sources", "ratio_p10", "ratio_p50", "ratio_p90", "source_median",
                 "between_source_p10", "between_source_p90", "within_source_p10", "within_source_p90",
                 "median_abs_error_pct", "train_points", "train_dense_points", "train_moe_points",
                 "source_out_points", "source_out_inside", "method", "confidence", "source", "source_date")


def _ratios(errors_pct: pd.Series) -> np.ndarray:
    """Ratios measured / predicted from error_pct = (predicted / measured - 1) x 100."""
    e = errors_pct.dropna().to_numpy(dtype=float)
    return 1.0 / (1.0 + e / 100.0)


def weighted_quantiles(values: np.ndarray, weights: np.ndarray, q: Sequence[float]) -> np.ndarray:
    """Quantiles of ``values`` where each carries ``weights`` (the midpoint rule: a value's cumulative weight is
    counted at its centre, linear in between).

    >>> [float(x) for x in weighted_quantiles(np.array([1.0, 2.0, 3.0, 4.0]), np.ones(4), [0.5])]
    [2.5]
    >>> [round(float(x), 3) for x in weighted_quantiles(np.array([1.0, 2.0, 10.0]), np.array([1.0, 1.0, 2.0]), [0.5])]
    [4.667]
    """
    order = np.argsort(values, kind="stable")
    v, w = values[order], weights[order]
    centre = (np.cumsum(w) - 0.5 * w) / w.sum()
    return np.interp(q, centre, v)


def new_source_quantiles(log_ratios: np.ndarray, groups: np.ndarray, q: Sequence[float]) -> dict[str, Any]:
    r"""Quantiles of the log ratio a point of a *new* source would show: the spread across sources plus the spread
    within one (a random-effect split).

    Each source s (a published table, or a family when ``groups`` are families) has its median m_s of
    x = ln(measured / predicted); the centre mu is the median of the m_s, every source one vote (the bias the
    held-out error shows); a source's offset is b_s = m_s - mu and a point's deviation within its source
    d_i = x_i - m_{s(i)}. A new source's point is x = mu + b + d, b one of the S offsets (each 1 / S) and d one of
    the deviations (each 1 / (S n_s), so that every source's deviations weigh the same), so

    .. math:: x_q = \mathrm{Q}_q\{\mu + b_s + d_i\}, \quad w_{s,i} = \frac{1}{S} \cdot \frac{1}{S\, n_{s(i)}}

    over every pair (s, i) (:func:`weighted_quantiles`). A long table is one source: its points set how a source
    scatters, not where a new one sits. Returns ``quantiles`` (of x), ``sources`` (S), ``centre`` (mu), ``between``
    (the offsets' quantiles) and ``within`` (the deviations' quantiles), all in logs.
    """
    x = np.asarray(log_ratios, dtype=float)
    names, which = np.unique(np.asarray(groups, dtype=str), return_inverse=True)
    count = np.bincount(which, minlength=len(names)).astype(float)
    medians = np.array([np.median(x[which == k]) for k in range(len(names))])
    one = np.ones(len(names))
    centre = float(weighted_quantiles(medians, one, [0.5])[0])
    offsets, within = medians - centre, x - medians[which]
    w_within = 1.0 / (len(names) * count[which])
    pairs = centre + offsets[:, None] + within[None, :]
    weights = np.broadcast_to(w_within[None, :] / len(names), pairs.shape)
    return {"quantiles": weighted_quantiles(pairs.ravel(), weights.ravel(), q), "sources": len(names),
            "centre": centre, "between": weighted_quantiles(offsets, one, q),
            "within": weighted_quantiles(within, w_within, q)}


def _range_row(scope: str, basis: str, errors_pct: pd.Series, train: pd.DataFrame, method: str,
               date: str, groups: pd.Series) -> dict[str, object]:
    """One row of the range table: P10, P50 and P90 of a new source's ratio (:func:`new_source_quantiles` over
    ``groups``, the source of each error), with the parts it is made of; the median absolute error weighs every
    source the same (each point 1 / its source's points).
    """
    has = errors_pct.notna()
    r, g = _ratios(errors_pct), groups[has].to_numpy(dtype=str)
    spread = new_source_quantiles(np.log(r), g, [0.1, 0.5, 0.9])
    p10, p50, p90 = np.exp(spread["quantiles"])
    w = 1.0 / pd.Series(g).map(pd.Series(g).value_counts()).to_numpy(dtype=float)

    def ratio(v: float) -> float:
        return round(float(np.exp(v)), 4)

    return {"scope": scope, "basis": basis, "points": len(r), "sources": spread["sources"],
            "ratio_p10": round(float(p10), 4), "ratio_p50": round(float(p50), 4), "ratio_p90": round(float(p90), 4),
            "source_median": ratio(spread["centre"]), "between_source_p10": ratio(spread["between"][0]),
            "between_source_p90": ratio(spread["between"][2]), "within_source_p10": ratio(spread["within"][0]),
            "within_source_p90": ratio(spread["within"][2]),
            "median_abs_error_pct": round(float(weighted_quantiles(np.abs(errors_pct[has].to_numpy(dtype=float)),
                                                                   w, [0.5])[0]), 1),
            "train_points": len(train), "train_dense_points": int((train["model_class"] == "dense").sum()),
            "train_moe_points": int((train["model_class"] == "moe").sum()), "method": method,
            "confidence": "estimate", "source": "python -m economics calibrate --ranges --write on "
            "data/throughput_curves.csv, data/throughput_claims.csv and data/calibration.csv", "source_date": date}


def never_seen_points() -> pd.DataFrame:
    """The points of every source the stored fit never saw, with their error under the stored factors: the blind
    split and the validation sets of :data:`economics.studies.calibration.RANGE_BASIS_SOURCES`.
    """
    res, _ = calibration.report()
    ok = res[is_fitted(res) & res["error_pct"].notna()]
    return ok[(ok["split"] == "blind") | ok["source_group"].isin(calibration.RANGE_BASIS_SOURCES)]


MODEL_CLASSES = ("dense", "moe")
"""The model classes (:func:`economics.catalog.model_class`) a fitted family's range is also kept for."""
EACH = ("this family's points of each table predicted by the fit without that table, and of every source the fit "
        "never saw; a new source's spread: the sources' medians around their median, and the points around their "
        "source's median, every source weighing the same")
POOLED = (f"fewer than {RANGE_MIN_SOURCES} sources or {RANGE_MIN_POINTS} points: those of every fitted family, each "
          "family's part of a table one source")


def _scope(scope: str, family: str, mine: pd.DataFrame, pool: pd.DataFrame, cls: str = "") -> dict[str, Any]:
    """One range scope of :func:`range_scopes`: ``mine`` (its own points) where they hold at least
    :data:`RANGE_MIN_POINTS` points of :data:`RANGE_MIN_SOURCES` sources, else ``pool`` (each family's part of a
    table one source). ``cls``: the model class the scope is kept for (``""``: every class).
    """
    own = len(mine) >= RANGE_MIN_POINTS and mine["source_group"].nunique() >= RANGE_MIN_SOURCES
    of = f" of {cls} models" if cls else ""
    if own:
        return {"scope": scope, "family": family, "basis": "left-out source", "points": mine,
                "groups": mine["source_group"], "method": EACH.replace("points", f"points{of}", 1)}
    return {"scope": scope, "family": family, "basis": "left-out source, every fitted family", "points": pool,
            "groups": pool["family"] + " / " + pool["source_group"],
            "method": POOLED.replace("those of", f"those{of} of", 1)}


def range_scopes(basis: pd.DataFrame, families: Sequence[str]) -> list[dict[str, Any]]:
    """Which points of ``basis`` (the fitted families' errors on sources the fit never saw) make each fitted-family
    row of data/estimate_ranges.csv: the one definition :func:`range_table` and :func:`source_out_coverage` share.

    Per fitted family: ``<family>`` over every model class, and ``<family>:<class>`` for each class of
    :data:`MODEL_CLASSES` whose points over every fitted family come from at least :data:`RANGE_MIN_SOURCES`
    sources (an estimate of a model of that class takes it, :func:`economics.engine.estimate_range.fitted_scope`);
    each from the family's own points where they hold :data:`RANGE_MIN_POINTS` points of
    :data:`RANGE_MIN_SOURCES` sources, else from the pool of every fitted family (of that class); then ``fitted``,
    the pool itself. Why by class: on the sources added after the range rule of 2026-12-05 the dense rows held and
    the MoE ones did not (docs/estimates.md, the seventh rule), so one spread for both is too wide for one and too
    narrow for the other. Each entry: ``scope``, ``family``, ``basis``, ``points`` (rows of ``basis``), ``groups``
    (each point's source) and ``method``.
    """
    pooled = basis[basis["family"].isin(families)]
    out = []
    for fam in sorted(families):
        mine = pooled[pooled["family"] == fam]
        out.append(_scope(fam, fam, mine, pooled))
        for cls in MODEL_CLASSES:
            pool = pooled[pooled["model_class"] == cls]
            if (pool["family"] + " / " + pool["source_group"]).nunique() >= RANGE_MIN_SOURCES:
                out.append(_scope(f"{fam}:{cls}", fam, mine[mine["model_class"] == cls], pool, cls))
    out.append({"scope": "fitted", "family": "", "basis": "left-out source, every fitted family", "points": pooled,
                "groups": pooled["family"] + " / " + pooled["source_group"],
                "method": EACH.replace("this family's", "every fitted family's") + "; each family's part of a "
                "table one source"})
    return out


def range_basis(source_table: pd.DataFrame, never_seen: pd.DataFrame | None = None) -> pd.DataFrame:
    """The fitted families' errors on sources the fit never saw: their points of each published table predicted by
    the fit without that table (``source_table``, :func:`leave_out` by source) and the points of every source the
    stored fit never saw (``never_seen``, default :func:`never_seen_points`), with each point's ``model_class``.
    """
    never = never_seen_points() if never_seen is None else never_seen
    basis = pd.concat([source_table[source_table["error_pct"].notna()], never], ignore_index=True)
    return basis.assign(model_class=calibration.catalog.model_class(basis["model"].to_numpy())
                        if "model" in basis else basis["model_class"])


def range_table(family_table: pd.DataFrame, date: str, source_table: pd.DataFrame,
                never_seen: pd.DataFrame | None = None) -> pd.DataFrame:
    """The spread of the roofline's error on a source it never saw, by where an estimate stands, for
    data/estimate_ranges.csv.

    A ratio is measured / predicted output tokens/s per accelerator; a range is the 10th and 90th percentile a point
    of a *new* source would show (:func:`new_source_quantiles`: the median of the sources' medians, the bias; the
    spread of the sources' medians around it; the spread of points within a source), so that throughput_low =
    predicted x ratio_p10 and throughput_high = predicted x ratio_p90.

    A fitted family's rows ask how wrong an estimate on that family is for a configuration of its own (another
    engine release, another set of settings, another measurer): :func:`range_scopes` over :func:`range_basis` (the
    family's points of each published table predicted by the fit without that table, and of every source the stored
    fit never saw: the blind split and the validation sets of
    :data:`economics.studies.calibration.RANGE_BASIS_SOURCES`, under the stored factors), each table one source,
    per family and per family and model class. Points held out inside a table the fit saw are not used: their error
    (the ``--holdout`` split) leaves out the offset that one engine release or one benchmark setup has against
    another, which a user's own configuration carries. Each fitted row also stores how often its points fall inside
    the range rebuilt without their source (:func:`source_out_coverage`). ``unseen`` rows come from
    ``family_table`` (:func:`leave_out` by family): every family's points predicted by the fit without that family,
    overall and per model class (a class with fewer than :data:`RANGE_MIN_SOURCES` families has no row of its own:
    its estimates take the overall one), each family one source (a new accelerator is one more family).
    """
    res, _ = calibration.report()
    ok = res[calibration.is_fitted(res) & res["error_pct"].notna()]
    train = ok[ok["split"] == "train"]
    basis = range_basis(source_table, never_seen)
    families = _fitted_families()
    coverage = source_out_coverage(basis, families)
    rows = []
    for sc in range_scopes(basis, families):
        row = _range_row(sc["scope"], sc["basis"], sc["points"]["error_pct"],
                         train[train["family"] == sc["family"]] if sc["family"] else train, sc["method"], date,
                         groups=sc["groups"])
        mine = coverage[coverage["scope"] == sc["scope"]]
        rows.append({**row, "source_out_points": len(mine), "source_out_inside": int(mine["inside"].sum())})
    lofo = family_table[family_table["error_pct"].notna()]
    cls = lofo["model_class"]
    for scope, g in (("unseen", lofo), ("unseen:dense", lofo[cls == "dense"]), ("unseen:moe", lofo[cls == "moe"])):
        if len(g) >= RANGE_MIN_POINTS and (scope == "unseen" or g["left_out"].nunique() >= RANGE_MIN_SOURCES):
            rows.append(_range_row(scope, "leave-one-family-out", g["error_pct"], train.iloc[:0],
                                   "each family's points predicted by the calibration refitted without that family; "
                                   "a new family's spread: the families' medians around their median, and the "
                                   "points around their family's median, every family weighing the same (a new "
                                   "accelerator is one more family)", date, groups=g["left_out"]))
    return pd.DataFrame(rows, columns=list(RANGE_COLUMNS))


def _fitted_families() -> list[str]:
    """The accelerator families with fitted factors of their own (data/calibration.csv's scopes without a class)."""
    return sorted(s for s in calibration.catalog.calibration().index if s != "global" and ":" not in s)


def source_out_coverage(basis: pd.DataFrame, families: Sequence[str]) -> pd.DataFrame:
    """The ranges' own out-of-sample test: each source of ``basis`` (:func:`range_basis`) left out in turn, the
    fitted families' ranges rebuilt from the rest (:func:`range_scopes`, the same rule), and the source's points
    checked against the range their estimate would then take (:func:`economics.engine.estimate_range.fitted_scope`).
    One row per point of a fitted family: ``source_group``, ``family``, ``model_class``, ``scope`` (the row its
    estimate takes with every source in), ``ratio`` (measured / predicted), ``low`` and ``high`` (the ratios at
    P10 and P90 without its source) and ``inside``.
    """
    pts = basis[basis["family"].isin(families)].reset_index(drop=True)
    full = {sc["scope"] for sc in range_scopes(basis, families)}
    out = []
    for source, mine in pts.groupby("source_group", sort=True):
        rest = {sc["scope"]: sc for sc in range_scopes(basis[basis["source_group"] != source], families)}
        for (fam, cls), g in mine.groupby(["family", "model_class"], sort=True):
            sc = rest[estimate_range.fitted_scope(rest, str(fam), str(cls))]
            r = _ratios(sc["points"]["error_pct"])
            low, high = np.exp(new_source_quantiles(np.log(r), sc["groups"][sc["points"]["error_pct"].notna()]
                                                    .to_numpy(dtype=str), [0.1, 0.9])["quantiles"])
            ratio = _ratios(g["error_pct"])
            out.append(pd.DataFrame({"source_group": source, "family": fam, "model_class": cls,
                                     "scope": estimate_range.fitted_scope(full, str(fam), str(cls)), "ratio": ratio,
                                     "low": low, "high": high, "inside": (ratio >= low) & (ratio <= high)}))
    columns = ["source_group", "family", "model_class", "scope", "ratio", "low", "high", "inside"]
    return pd.concat(out, ignore_index=True)[columns] if out else pd.DataFrame(columns=columns)


def source_out_text(ranges: pd.DataFrame) -> str:
    """The stored leave-one-source-out coverage of the fitted families' ranges (``source_out_points`` and
    ``source_out_inside`` of data/estimate_ranges.csv, :func:`source_out_coverage`): per scope an estimate takes
    and over all, the share of the basis's points inside the range rebuilt without their source. ``""`` for a
    table stored without them.
    """
    if "source_out_points" not in ranges.columns:
        return ""
    t = ranges.reset_index() if "scope" not in ranges.columns else ranges
    n, k = (pd.to_numeric(t[c], errors="coerce").fillna(0).astype(int) for c in ("source_out_points",
                                                                                  "source_out_inside"))
    lines = ["", "the ranges' basis, each source left out in turn (out of sample for the rule; stored by calibrate "
             "--ranges --write): the points of every source the fit never saw against the range their estimate "
             "takes, rebuilt without their source"]
    for scope, points, inside in zip(t["scope"], n, k, strict=True):
        if points:
            lines.append(f"  {str(scope):24} {points:5d} points  {100 * inside / points:5.1f}% inside ({inside})")
    if int(n.sum()):
        lines.append(f"  {'all':24} {int(n.sum()):5d} points  {100 * int(k.sum()) / int(n.sum()):5.1f}% inside "
                     f"({int(k.sum())})")
    return "\n".join(lines) + "\n"


def validation() -> pd.DataFrame:
    """The validation split (:data:`economics.studies.calibration.VALIDATION_SOURCES`) predicted with the stored
    factors,
    each point with the range its estimate carries (:func:`economics.engine.estimate_range.estimate_basis`): ``low`` and
    ``high`` = predicted x ratio_low, ratio_high, and ``inside`` where the measured figure lies between them.
    """
    res, _ = calibration.report()
    v = res[(res["split"] == "validation") & calibration.is_fitted(res) & res["error_pct"].notna()].reset_index(
        drop=True)
    basis = estimate_range.estimate_basis(v["accelerator"].to_numpy(), v["model"].to_numpy())
    v["low"] = v["predicted"] * basis["ratio_low"]
    v["high"] = v["predicted"] * basis["ratio_high"]
    v["inside"] = (v["measured"] >= v["low"]) & (v["measured"] <= v["high"])
    v["basis"] = basis["throughput_basis"]
    return v[["point", "source_group", "accelerator", "model", "family", "measured", "predicted", "error_pct", "low",
              "high", "inside", "basis"]]


NO_ESTIMATE = "no: no estimate (the roofline gave no throughput for the row's replica, model and lengths)"
"""The reason :func:`validation_refused` gives for a point the split takes whose estimate came out empty."""
ARRIVAL_LIMITED = "no: arrival-limited (Poisson load below saturation): its throughput is not compared"
"""The reason for a point whose throughput measures the arrival rate (:mod:`economics.studies.calibration_points`)."""


def validation_refused() -> pd.DataFrame:
    """The validation points the catalog does not estimate, so not in :func:`validation`'s coverage, each with the
    reason (the point's ``fitted`` cell, or :data:`NO_ESTIMATE`): reported, never dropped silently.
    """
    res, _ = calibration.report()
    v = res[res["split"] == "validation"]
    refused = v[~is_fitted(v) | v["error_pct"].isna()].reset_index(drop=True)
    refused["reason"] = np.where(~is_fitted(refused), refused["fitted"],
                                 np.where(refused["measured"].isna(), ARRIVAL_LIMITED, NO_ESTIMATE))
    return refused[["point", "source_group", "accelerator", "model", "reason"]]


def validation_text(table: pd.DataFrame, refused: pd.DataFrame | None = None) -> str:
    """``calibrate --holdout``'s validation lines: per source and overall, the points, the median and worst absolute
    error and the share of measured figures inside their estimate's P10-P90 range; per family, each set outside the
    ranges' basis on its own; then, per set, how many points the catalog refused to estimate and why (``refused``,
    :func:`validation_refused`).
    """
    basis = calibration.RANGE_BASIS_SETS
    lines = ["", "validation: sources added after the fit, never fitted (" + ", ".join(calibration.VALIDATION_SOURCES)
             + f"); the first {basis} sets are in the ranges' basis (RANGE_BASIS_SOURCES: their coverage is "
             "in-sample), so only a set added after them tests the rules as they stand",
             f"{'source':26} {'points':>6} {'median':>7} {'worst':>8}   inside P10-P90"]
    sets = [(name, table[table["source_group"].isin(groups)]) for name, groups in calibration.VALIDATION_SETS.items()]
    labelled = [(name + (", in the basis" if k < basis else ""), g) for k, (name, g) in enumerate(sets)]
    width = max(26, *(len(name) for name, _ in labelled))
    lines[-1] = f"{'source':{width}}" + lines[-1][26:]
    for group, g in [*table.groupby("source_group", sort=True), ("all", table), *labelled]:
        if g.empty:
            continue
        lines.append(_coverage_line(str(group), g, width))
    for k, (name, g) in enumerate(sets):  # each set no rule or range has seen, per family, on its own
        if k < basis or g.empty:
            continue
        lines += ["", f"per family, {name} alone (no rule or range has seen it):"]
        for family, fg in g.groupby("family", sort=True):
            lines.append(_coverage_line(f"  {family}", fg, width))
    lines += ["per family, every validation point:"]
    for family, g in table.groupby("family", sort=True):
        lines.append(_coverage_line(f"  {family}", g, width))
    return "\n".join(lines + _refused_lines(refused)) + "\n"


def _refused_lines(refused: pd.DataFrame | None) -> list[str]:
    """:func:`validation_text`'s refused points: per set, how many and, per reason, how many of which sources."""
    if refused is None or refused.empty:
        return []
    lines = ["", "refused: validation points the catalog does not estimate (not in any coverage above)"]
    for name, groups in calibration.VALIDATION_SETS.items():
        g = refused[refused["source_group"].isin(groups)]
        if g.empty:
            continue
        lines.append(f"  {name}: {len(g)} points")
        for reason, r in g.groupby("reason", sort=True):
            sources = ", ".join(f"{s} {n}" for s, n in r["source_group"].value_counts().sort_index().items())
            lines.append(f"    {len(r):4d}  {str(reason).removeprefix('no: ')} ({sources})")
    return lines


def _coverage_line(label: str, g: pd.DataFrame, width: int) -> str:
    """One line of :func:`validation_text`: points, median and worst absolute error, median signed error, the share
    inside P10-P90.
    """
    e = g["error_pct"]
    return (f"{label:{width}} {len(g):6d} {e.abs().median():6.1f}% {e.abs().max():7.1f}%   "
            f"{100 * g['inside'].mean():5.1f}% ({int(g['inside'].sum())} of {len(g)}); median signed "
            f"{e.median():+.1f}%, estimate high in {int((e > 0).sum())}")


ERROR_COLUMNS = ("kind", "left_out", "points", "median_abs_error_pct", "worst_abs_error_pct", "method", "confidence",
                 "source", "source_date")


def errors_table(tables: dict[str, pd.DataFrame], date: str) -> pd.DataFrame:
    """data/leave_out_errors.csv: :func:`summary` of each kind's :func:`leave_out` table (one row per left-out group
    and one ``all``), so that ``calibrate --holdout`` prints them without refitting.
    """
    rows = []
    for kind, table in tables.items():
        for r in summary(table).to_dict("records"):
            rows.append({"kind": kind, **r, "method": f"leave-one-{kind}-out: the group's points predicted by the "
                         "calibration refitted without them", "confidence": "estimate",
                         "source": f"python -m economics calibrate --ranges --write (leave-one-{kind}-out) on "
                         "data/throughput_curves.csv and data/throughput_claims.csv", "source_date": date})
    return pd.DataFrame(rows, columns=list(ERROR_COLUMNS))


def stored_errors_text() -> str:
    """``calibrate --holdout``'s leave-one-family-out and leave-one-model-out lines, from data/leave_out_errors.csv
    (written by ``calibrate --ranges --write``).
    """
    table = calibration.catalog.leave_out_errors()
    if table.empty:
        return "\nleave-one-out: not stored yet (python -m economics calibrate --ranges --write)\n"
    lines = []
    for kind, g in table.groupby("kind", sort=False):
        lines += ["", f"leave-one-{kind}-out (stored {g['source_date'].iloc[0]}): each {kind}'s points predicted by "
                  "the calibration refitted without them"]
        for r in g.to_dict("records"):
            lines.append(f"  {str(r['left_out']):24} {int(float(r['points'])):5d} points  median "
                         f"{float(r['median_abs_error_pct']):6.1f}%  worst {float(r['worst_abs_error_pct']):7.1f}%")
    return "\n".join(lines) + "\n"
