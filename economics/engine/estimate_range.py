r"""How far an estimated throughput can be from a measurement: each estimate's range and the words that say why.

The roofline's error depends on where the estimate stands. On an accelerator family the calibration fitted, it is
the error on that family's points of each published table predicted by the fit without that table (a configuration
the fit never saw, as a user's own is; :func:`economics.studies.leave_out.range_table`); on a family with no
measured point, it is the error of the leave-one-family-out validation (:func:`economics.studies.leave_out.leave_out`):
every other family's points predicted by the calibration refitted without them. data/estimate_ranges.csv stores
both as ratios r = measured / predicted, with their 10th, 50th and 90th percentile, so that

.. math:: T_{low} = T_{est}\,r_{10}, \qquad T_{high} = T_{est}\,r_{90}

bound the throughput as the errors on unseen points did 80 % of the time. ``python -m economics calibrate --ranges
--write`` rebuilds the table. A measured figure has no such range (its source states none).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from economics import catalog
from economics.outputs import RANGED_INPUTS, ratio_column

Array = NDArray[Any]

OTHER_CLASS_SHARE = 0.75
"""Share of a scope's training points of the other model class (dense vs MoE) from which its factors are said to
be fitted on another class."""
GIVEN_FACTORS = ("bandwidth_utilization", "compute_utilization", "prefill_compute_utilization",
                 "step_overhead_us_per_layer")
"""Scenario fields that replace the calibrated factors: an estimate made with them is not the calibrated one."""


def percent(ratio: float) -> str:
    """A ratio as a signed percent deviation, as the labels write it.

    >>> percent(0.62), percent(1.3), percent(1.0)
    ('-38 %', '+30 %', '+0 %')
    """
    return f"{(ratio - 1.0) * 100:+.0f} %"


def _ranges() -> pd.DataFrame:
    return catalog.estimate_ranges()


def _label(family: str, cls: str, given: bool) -> tuple[float, float, str, bool, bool]:
    """ratio_p10, ratio_p90, the label, whether the family is unseen, whether its factors come from the other
    class.
    """
    ranges, cal = _ranges(), catalog.calibration()
    fitted = bool(family) and family in cal.index and family in ranges.index
    if given or not fitted:
        scope = next((s for s in (f"unseen:{cls}", "unseen") if s in ranges.index), "")
        if not scope:
            return np.nan, np.nan, "estimated; no range stored (data/estimate_ranges.csv)", not fitted, False
        r: dict[Any, Any] = ranges.loc[scope].to_dict()
        spread = f"expect {percent(float(r['ratio_p10']))} to {percent(float(r['ratio_p90']))}"
        basis = (f"P10-P90 of {int(r['points'])} points predicted with their own family left out of the fit, every "
                 f"family weighing the same; median error {float(r['median_abs_error_pct']):.0f} %")
        where = "the efficiency factors you gave" if given and fitted else (
            f"no measured point on {family or 'this accelerator'}")
        return float(r["ratio_p10"]), float(r["ratio_p90"]), f"estimated; {where}: {spread} ({basis})", True, False
    r = ranges.loc[family].to_dict()
    train = int(r["train_points"])
    other = int(r["train_moe_points"] if cls == "dense" else r["train_dense_points"]) if cls else 0
    own_class = f"{family}:{cls}" in cal.index
    mismatch = bool(cls) and not own_class and train > 0 and other / train >= OTHER_CLASS_SHARE
    pooled = "" if r["basis"] == "left-out source" else " of every fitted family"
    label = (f"estimated; calibrated on {train} points of {family} (held-out median "
             f"{float(r['median_abs_error_pct']):.0f} % over {int(r['points'])} points{pooled} predicted with their "
             f"published table left out of the fit; P10-P90 "
             f"{percent(float(r['ratio_p10']))} to {percent(float(r['ratio_p90']))})")
    if mismatch:
        label += (f"; fitted mostly on {'MoE' if cls == 'dense' else 'dense'} models ({other} of {train} points), "
                  f"this model is {'dense' if cls == 'dense' else 'MoE'}")
    return float(r["ratio_p10"]), float(r["ratio_p90"]), label, False, mismatch


def estimate_basis(accelerators: Array, models: Array, given_factors: Array | None = None) -> dict[str, Array]:
    """Per row: ``ratio_low`` and ``ratio_high`` (measured / estimated at P10 and P90), ``throughput_basis`` (the
    label), ``unseen`` (no measured point on the family, or factors given) and ``class_mismatch`` (factors fitted
    mostly on the other model class). One lookup per distinct (accelerator, model, given) triple.
    """
    acc = np.asarray(accelerators, dtype=object)
    mod = np.asarray(models, dtype=object)
    given = np.zeros(len(acc), dtype=bool) if given_factors is None else np.asarray(given_factors, dtype=bool)
    families = catalog.accelerators()["family"]
    if acc.size <= catalog.FEW_IDS:  # a page's few rows: a dict lookup (a pandas map costs more than the rest)
        by_id = catalog.derived("families", (families,), lambda: {k: str(v) for k, v in families.items()
                                                                  if isinstance(v, str)})
        family = np.array([by_id.get(a, "") if isinstance(a, str) else "" for a in acc], dtype=object)
    else:
        family = pd.Series(acc).map(families).fillna("").to_numpy(dtype=object)
    cls = np.asarray(catalog.model_class(mod), dtype=object)
    keys = [f"{f}\x00{c}\x00{g}" for f, c, g in zip(family, cls, given, strict=True)]
    if acc.size <= catalog.FEW_IDS:  # the same codes, in order of first appearance, without a pandas call
        seen: dict[str, int] = {}
        codes = np.array([seen.setdefault(k, len(seen)) for k in keys], dtype=np.intp)
        uniq: Any = list(seen)
    else:
        codes, uniq = pd.factorize(pd.Series(keys, dtype=object))
    memo: dict[str, tuple[float, float, str, bool, bool]] = catalog.derived(
        "estimate labels", (catalog.estimate_ranges(), catalog.calibration(), catalog.accelerators()), dict)
    found = []
    for k in uniq:
        if k not in memo:
            fam, cls_, given_ = k.split("\x00")
            memo[k] = _label(fam, cls_, given_ == "True")
        found.append(memo[k])
    pick = (lambda i: np.array([f[i] for f in found], dtype=object)[codes]) if found else (
        lambda i: np.array([], dtype=object))
    return {"ratio_low": pick(0).astype(float), "ratio_high": pick(1).astype(float), "throughput_basis": pick(2),
            "unseen": pick(3).astype(bool), "class_mismatch": pick(4).astype(bool)}


def _basis_where(rows: Array, accelerators: Array, models: Array, given_factors: Array | None = None
                 ) -> dict[str, Array]:
    """:func:`estimate_basis` on ``rows`` only (the estimated rows: :func:`attach` reads the basis nowhere else);
    other rows hold no range (NaN ratios, no label, neither flag). A table of measured throughputs looks nothing up.
    """
    rows = np.asarray(rows, dtype=bool)
    if rows.all():
        return estimate_basis(accelerators, models, given_factors)
    n = rows.size
    out = {"ratio_low": np.full(n, np.nan), "ratio_high": np.full(n, np.nan),
           "throughput_basis": np.full(n, "", dtype=object), "unseen": np.zeros(n, dtype=bool),
           "class_mismatch": np.zeros(n, dtype=bool)}
    if not rows.any():
        return out
    at = np.flatnonzero(rows)
    given = None if given_factors is None else np.asarray(given_factors, dtype=bool)[at]
    found = estimate_basis(np.asarray(accelerators, dtype=object)[at], np.asarray(models, dtype=object)[at], given)
    for name, column in out.items():
        column[at] = found[name]
    return out


def given_factor_rows(c: dict[str, Array]) -> Array:
    """Rows whose scenario gives any efficiency factor of its own."""
    n = len(c["accelerator"])
    out = np.zeros(n, dtype=bool)
    for f in GIVEN_FACTORS:
        if f in c:
            out |= ~np.isnan(np.asarray(c[f], dtype=float))
    return out


RANGE_COLUMNS = {name: (ratio_column("low", name), ratio_column("high", name)) for name in RANGED_INPUTS}


def attach(c: dict[str, Array], thr: dict[str, Array], estimated: Array) -> None:
    """The range of each estimated row, in place: ``thr`` gains ``throughput_basis`` and
    ``output_tokens_per_s_per_accelerator_p10`` / ``_p90`` (of the decode pool where disaggregated); ``c`` gains the
    ratio columns of :data:`RANGE_COLUMNS` (1 where a column was not estimated), ``_ranged`` and the flags
    ``_throughput_unseen`` and ``_class_mismatch``. ``estimated``: rows whose throughput the roofline gave.
    """
    n = len(estimated)
    dis = np.asarray(c["decode_accelerator"] != "", dtype=bool) if "decode_accelerator" in c else np.zeros(n, bool)
    main = _basis_where(estimated, c["accelerator"], c["model"], given_factor_rows(c))
    dec_acc = np.where(dis, c["decode_accelerator"], c["accelerator"]) if dis.any() else c["accelerator"]
    dec = _basis_where(estimated, dec_acc, c["model"]) if dis.any() else main
    input_est = np.asarray(thr.get("_input_estimated", np.zeros(n, bool)), dtype=bool) & estimated
    decode_est = np.asarray(thr.get("_decode_estimated", np.zeros(n, bool)), dtype=bool) & estimated
    pools = {"output_tokens_per_s_per_accelerator": (estimated & ~dis, main),
             "input_tokens_per_s_per_accelerator": (input_est, main),
             "decode_output_tokens_per_s_per_accelerator": (decode_est, dec)}
    ranged = np.zeros(n, dtype=bool)
    for name, (rows, basis) in pools.items():
        rows = rows & np.isfinite(basis["ratio_low"])
        ranged |= rows
        low, high = RANGE_COLUMNS[name]
        c[low] = np.where(rows, basis["ratio_low"], 1.0)
        c[high] = np.where(rows, basis["ratio_high"], 1.0)
    feasible = np.asarray(thr["feasible"], dtype=bool)
    label = np.where(estimated & feasible, main["throughput_basis"], "").astype(object)
    if dis.any():
        both = dis & estimated & (dec["throughput_basis"] != main["throughput_basis"])
        label = np.where(both, "prefill pool: " + label.astype(str) + "; decode pool: "
                         + dec["throughput_basis"].astype(str), label).astype(object)
    thr["throughput_basis"] = label
    out_col = np.where(dis, c.get("decode_output_tokens_per_s_per_accelerator", np.full(n, np.nan)),
                       c["output_tokens_per_s_per_accelerator"])
    out_low = np.where(dis, c[RANGE_COLUMNS["decode_output_tokens_per_s_per_accelerator"][0]],
                       c[RANGE_COLUMNS["output_tokens_per_s_per_accelerator"][0]])
    out_high = np.where(dis, c[RANGE_COLUMNS["decode_output_tokens_per_s_per_accelerator"][1]],
                        c[RANGE_COLUMNS["output_tokens_per_s_per_accelerator"][1]])
    thr["output_tokens_per_s_per_accelerator_p10"] = np.where(ranged, out_col * out_low, np.nan)
    thr["output_tokens_per_s_per_accelerator_p90"] = np.where(ranged, out_col * out_high, np.nan)
    c["_ranged"] = ranged & feasible
    c["_throughput_unseen"] = estimated & (main["unseen"] | (dis & dec["unseen"]))
    c["_class_mismatch"] = estimated & (main["class_mismatch"] | (dis & dec["class_mismatch"]))
