"""How wrong the roofline is where nothing was measured: leave-one-family-out and leave-one-model-out validation.

The held-out split of :mod:`economics.calibration` holds points out *inside* the accelerator families the fit saw.
A user relies on the estimate most where the catalog has no measured point at all: an accelerator family or a model
without one. This module measures exactly that. For each accelerator family (or each model), every fittable point of
it is removed, the calibration is fitted again on what is left (:func:`economics.calibration.fitted_scopes`, the
same fit), and the removed points are predicted with the factors they would then get (their family's scope is gone,
so the global or the model class's): the error of an estimate on a family, or a model, the fit never saw.

Points of the blind split (sources added after the stored fit) take no part, so they stay a test on new data.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
import pandas as pd

from . import calibration

Kind = Literal["family", "model"]


def leave_out(kind: Kind, groups: Sequence[str] | None = None,
              progress: Callable[[str], None] | None = None) -> pd.DataFrame:
    """Every fittable point of each group (an accelerator ``family`` or a ``model``; all of them unless ``groups``)
    predicted by the calibration refitted without that group: one row per point with ``left_out`` (the group),
    ``measured``, ``predicted`` and ``error_pct`` = (predicted / measured - 1) x 100. One refit per group with
    training points (about 25 s each here); groups without any share the whole fit."""
    pts = calibration.points()
    usable = pts[(pts["fitted"] == "yes") & (pts["split"] != "blind")].reset_index(drop=True)
    chosen = sorted(set(usable[kind])) if groups is None else list(groups)
    out = []
    whole: dict[str, dict[str, float]] | None = None
    for group in chosen:
        mine = usable[usable[kind] == group].reset_index(drop=True)
        if mine.empty:
            continue
        if progress:
            progress(group)
        if (mine["split"] == "train").any():
            fitted = calibration.fitted_scopes(usable[usable[kind] != group].reset_index(drop=True))
        else:  # a group the fit never trained on (a held-out model): the fit without it is the whole fit
            whole = whole or calibration.fitted_scopes(usable)
            fitted = whole
        res = calibration.point_errors(mine, calibration.applied_factors(mine, fitted))
        res["left_out"] = group
        res["scopes_fitted"] = " ".join(sorted(fitted))
        out.append(res)
    columns = ["left_out", "point", "accelerator", "model", "family", "split", "measured", "predicted", "error_pct",
               "scopes_fitted"]
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
