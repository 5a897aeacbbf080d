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
from economics.engine.roofline import calibration_scopes, figure_by_position
from economics.engine.stages import column_or_nans
from economics.schema.outputs import RANGED_INPUTS, ratio_column
from economics.schema.scenario import CATALOG_FIELDS

Array = NDArray[Any]

OTHER_CLASS_SHARE = 0.75
"""Share of a scope's training points of the other model class (dense vs MoE) from which its factors are said to
be fitted on another class."""
CLASS_WORDS = {"moe": "MoE-model", "dense": "dense-model"}
"""How a label names the model class of a range kept per class (:func:`fitted_scope`)."""
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


TYPED_SPECS = ("accelerator_memory_gb", "accelerator_bandwidth_tb_per_s", "accelerator_bf16_tflops",
               "accelerator_fp8_tflops", "accelerator_fp4_tflops")
"""Scenario fields of the hardware the roofline reads: a row that gives one of them unlike its catalog figure
describes a chip the calibration never saw (a typed accelerator)."""


def _unseen_range(cls: str) -> dict[str, Any] | None:
    """The leave-one-family-out row of data/estimate_ranges.csv for a model class (``unseen:<class>``, else
    ``unseen``), or None where none is stored.
    """
    ranges = _ranges()
    scope = next((s for s in (f"unseen:{cls}", "unseen") if s in ranges.index), "")
    return {"scope": scope, **{str(k): v for k, v in ranges.loc[scope].to_dict().items()}} if scope else None


def _spread(r: dict[str, Any]) -> str:
    """``-40 % to +25 %, median -7 %``: the P10, P90 and median of measured / estimated as deviations."""
    return (f"{percent(float(r['ratio_p10']))} to {percent(float(r['ratio_p90']))}, median "
            f"{percent(float(r['ratio_p50']))}")


def range_step(r: dict[str, Any]) -> str:
    """How a stored range is made, with its numbers (``explain``'s note): the median of the sources' medians, the
    sources' spread around it and the points' around their source's median, and the two combined (P10-P90);
    ``""`` for a row stored without the parts.
    """
    try:
        n, centre = int(float(r["sources"])), float(r["source_median"])
        between = float(r["between_source_p10"]), float(r["between_source_p90"])
        within = float(r["within_source_p10"]), float(r["within_source_p90"])
    except (KeyError, TypeError, ValueError):
        return ""
    unit = "families" if str(r.get("basis", "")) == "leave-one-family-out" else "sources"
    one = unit[:-3] + "y" if unit == "families" else unit[:-1]
    pooled = " (the pool of every fitted family)" if "every fitted family" in str(r.get("basis", "")) else ""
    return (f"{r['scope']}{pooled}: measured / estimated on {n} {unit} the fit never saw: their medians' median "
            f"x{centre:.3g} (the bias), the {unit}' medians x{between[0]:.3g} to x{between[1]:.3g} of it and a "
            f"{one}'s points x{within[0]:.3g} to x{within[1]:.3g} of its median (P10-P90); every pair of the two: "
            f"P10 x{float(r['ratio_p10']):.3g}, P90 x{float(r['ratio_p90']):.3g}")


def fitted_scope(scopes: Any, family: str, cls: str) -> str:
    """The row of data/estimate_ranges.csv an estimate on the fitted ``family`` takes for a model of class ``cls``:
    ``<family>:<class>`` where one is stored (the spread of that model class's points on sources the fit never
    saw, :func:`economics.studies.leave_out.range_scopes`), else ``<family>`` (every class). ``scopes``: the
    table's index. The one lookup both the estimate and the leave-one-source-out coverage of the ranges use.

    >>> fitted_scope(["nvidia-hopper", "nvidia-hopper:moe"], "nvidia-hopper", "moe")
    'nvidia-hopper:moe'
    >>> fitted_scope(["nvidia-hopper", "nvidia-hopper:moe"], "nvidia-hopper", "dense")
    'nvidia-hopper'
    """
    own = f"{family}:{cls}"
    return own if cls and own in scopes else family


def _label(family: str, cls: str, given: bool, typed: str = "",
           scope: str = "") -> tuple[float, float, float, str, bool, bool, str]:
    """ratio_p10, ratio_p50, ratio_p90, the label, whether the range is the unseen-family one, whether the factors
    come from the other class, and how the range is made (:func:`range_step`). ``typed``: the hardware fields given
    unlike the catalog (``acc: f1, f2``), ``scope``: the calibration scope whose factors the estimate borrowed.
    """
    ranges, cal = _ranges(), catalog.calibration()
    fitted = bool(family) and family in cal.index and family in ranges.index
    if given or typed or not fitted:
        r = _unseen_range(cls)
        if r is None:
            return np.nan, np.nan, np.nan, "estimated; no range stored (data/estimate_ranges.csv)", True, False, ""
        basis = (f"P10-P90 of {int(r['points'])} points predicted with their own family left out of the fit, every "
                 f"family weighing the same; median error {float(r['median_abs_error_pct']):.0f} %")
        factors = "the efficiency factors you gave" if given else f"{scope or 'global'}'s factors borrowed"
        if typed:
            acc, _, fields = typed.partition(": ")
            where = f"typed accelerator ({fields} typed over {acc}'s catalog figures): {factors}"
        elif given and fitted:
            where = "the efficiency factors you gave"
        else:
            where = f"no measured point on {family or 'this accelerator'}: {factors}"
        return (float(r["ratio_p10"]), float(r["ratio_p50"]), float(r["ratio_p90"]),
                f"estimated; {where}, unseen-family range: expect {_spread(r)} ({basis})", True, False, range_step(r))
    scope_ = fitted_scope(ranges.index, family, cls)
    own = {str(k): v for k, v in ranges.loc[scope_].to_dict().items()}
    train = int(own["train_points"])
    other = int(own["train_moe_points"] if cls == "dense" else own["train_dense_points"]) if cls else 0
    own_class = f"{family}:{cls}" in cal.index
    mismatch = bool(cls) and not own_class and train > 0 and other / train >= OTHER_CLASS_SHARE
    pooled = " of every fitted family" if "every fitted family" in str(own["basis"]) else ""
    of_class = f"{CLASS_WORDS.get(cls, cls)} " if scope_ != family else ""
    label = (f"estimated; calibrated on {train} points of {family} (held-out median "
             f"{float(own['median_abs_error_pct']):.0f} % over {int(own['points'])} {of_class}points{pooled} of "
             "sources the fit "
             f"never saw; P10-P90 {percent(float(own['ratio_p10']))} to {percent(float(own['ratio_p90']))}, median "
             f"{percent(float(own['ratio_p50']))})")
    if mismatch:
        label += (f"; fitted mostly on {'MoE' if cls == 'dense' else 'dense'} models ({other} of {train} points), "
                  f"this model is {'dense' if cls == 'dense' else 'MoE'}")
    return (float(own["ratio_p10"]), float(own["ratio_p50"]), float(own["ratio_p90"]), label, False, mismatch,
            range_step({"scope": scope_, **own}))


def typed_specs(c: dict[str, Array]) -> Array:
    """Per row, ``<accelerator>: <fields>`` where the row gives a hardware figure of :data:`TYPED_SPECS` unlike its
    catalog accelerator's (relative difference above 1e-9, or none in the catalog), else ``""``.
    """
    acc = np.asarray(c["accelerator"], dtype=object)
    mask = np.zeros(len(acc), dtype=np.int64)  # bit k: TYPED_SPECS[k] differs (vectorised: sweeps hold 1e6 rows)
    table = catalog.accelerators()
    at = catalog.positions(table, "accelerators", acc)  # each id's position, found once for the five figures
    for k, field in enumerate(TYPED_SPECS):
        if field not in c:
            continue
        given = np.asarray(c[field], dtype=float)
        listed = figure_by_position(table, CATALOG_FIELDS[field], np.nan)[at].astype(float)
        with np.errstate(invalid="ignore"):
            differs = np.isfinite(given) & ~(np.abs(given - listed) <= 1e-9 * np.abs(listed))
        mask |= differs.astype(np.int64) << k
    out = np.full(len(acc), "", dtype=object)
    rows = np.flatnonzero(mask)
    if rows.size:
        codes, uniq = pd.factorize(pd.Series(acc[rows].astype(str)) + "\x00" + pd.Series(mask[rows]).astype(str))
        labels = []
        for key in uniq:
            name, _, bits = str(key).partition("\x00")
            labels.append(f"{name}: " + ", ".join(f for k, f in enumerate(TYPED_SPECS) if int(bits) >> k & 1))
        out[rows] = np.array(labels, dtype=object)[codes]
    return out


def estimate_basis(accelerators: Array, models: Array, given_factors: Array | None = None,
                   typed: Array | None = None) -> dict[str, Array]:
    """Per row: ``ratio_low``, ``ratio_mid`` and ``ratio_high`` (measured / estimated at P10, the median and P90),
    ``throughput_basis`` (the label), ``unseen`` (the unseen-family range: no measured point on the family, factors
    given or a typed accelerator, :func:`typed_specs`) and ``class_mismatch`` (factors fitted mostly on the other
    model class). One lookup per distinct (family, class, given, typed, scope).
    """
    acc = np.asarray(accelerators, dtype=object)
    mod = np.asarray(models, dtype=object)
    given = np.zeros(len(acc), dtype=bool) if given_factors is None else np.asarray(given_factors, dtype=bool)
    typed_ = np.full(len(acc), "", dtype=object) if typed is None else np.asarray(typed, dtype=object)
    table = catalog.accelerators()
    cls = np.asarray(catalog.model_class(mod), dtype=object)
    if acc.size <= catalog.FEW_IDS:  # a page's few rows: dicts and lists (pandas' calls cost more than the rest)
        by_id = catalog.derived("families", (table,), lambda: {k: str(v) for k, v in table["family"].items()
                                                                 if isinstance(v, str)})
        family = np.array([by_id.get(a, "") if isinstance(a, str) else "" for a in acc], dtype=object)
        scope = np.array(calibration_scopes(acc, mod), dtype=object)  # a scope is each row's own (roofline._scopes)
        keys = [_basis_key(*k) for k in zip(family, cls, given, typed_, scope, strict=True)]
        index = {k: i for i, k in enumerate(dict.fromkeys(keys))}
        codes, uniq = np.array([index[k] for k in keys], dtype=np.intp), list(index)
    else:
        family = pd.Series(acc).map(table["family"]).fillna("").to_numpy(dtype=object)
        code_a, uniq_a = pd.factorize(acc)
        code_m, uniq_m = pd.factorize(mod)
        width = max(len(uniq_m), 1)
        pairs, inverse = np.unique(code_a * width + code_m, return_inverse=True)
        scope = np.array(calibration_scopes(np.asarray(uniq_a, dtype=object)[pairs // width],
                                            np.asarray(uniq_m, dtype=object)[pairs % width]),
                         dtype=object)[inverse.ravel()] if len(pairs) else np.array([], dtype=object)
        codes, distinct = pd.factorize(pd.Series([_basis_key(*k) for k in zip(family, cls, given, typed_, scope,
                                                                              strict=True)], dtype=object))
        uniq = list(distinct)
    memo: dict[str, tuple[float, float, float, str, bool, bool, str]] = catalog.derived(
        "estimate labels", (catalog.estimate_ranges(), catalog.calibration(), catalog.accelerators()), dict)
    found = []
    for k in uniq:
        if k not in memo:
            fam, cls_, given_, typed__, scope_ = k.split("\x00")
            memo[k] = _label(fam, cls_, given_ == "True", typed__, scope_)
        found.append(memo[k])
    pick = (lambda i: np.array([f[i] for f in found], dtype=object)[codes]) if found else (
        lambda i: np.array([], dtype=object))
    return {"ratio_low": pick(0).astype(float), "ratio_mid": pick(1).astype(float),
            "ratio_high": pick(2).astype(float), "throughput_basis": pick(3), "unseen": pick(4).astype(bool),
            "class_mismatch": pick(5).astype(bool), "range_step": pick(6)}


def _basis_key(family: str, cls: str, given: bool, typed: str, scope: str) -> str:
    """The memo key of one row's basis (:func:`estimate_basis`): the scope counts only where it chooses the
    range (factors given, a typed accelerator, no family).
    """
    return f"{family}\x00{cls}\x00{given}\x00{typed}\x00{scope if (given or typed or not family) else ''}"


def _basis_where(rows: Array, accelerators: Array, models: Array, given_factors: Array | None = None,
                 typed: Array | None = None) -> dict[str, Array]:
    """:func:`estimate_basis` on ``rows`` only (the estimated rows: :func:`attach` reads the basis nowhere else);
    other rows hold no range (NaN ratios, no label, neither flag). A table of measured throughputs looks nothing up.
    """
    rows = np.asarray(rows, dtype=bool)
    if rows.all():
        return estimate_basis(accelerators, models, given_factors, typed)
    n = rows.size
    out = {"ratio_low": np.full(n, np.nan), "ratio_mid": np.full(n, np.nan), "ratio_high": np.full(n, np.nan),
           "throughput_basis": np.full(n, "", dtype=object), "unseen": np.zeros(n, dtype=bool),
           "class_mismatch": np.zeros(n, dtype=bool), "range_step": np.full(n, "", dtype=object)}
    if not rows.any():
        return out
    at = np.flatnonzero(rows)
    given = None if given_factors is None else np.asarray(given_factors, dtype=bool)[at]
    typed_at = None if typed is None else np.asarray(typed, dtype=object)[at]
    found = estimate_basis(np.asarray(accelerators, dtype=object)[at], np.asarray(models, dtype=object)[at], given,
                           typed_at)
    for name, column in out.items():
        column[at] = found[name]
    return out


def _typed_where(c: dict[str, Array], rows: Array) -> Array:
    """:func:`typed_specs` on ``rows`` only (the estimated rows: the basis reads it nowhere else), ``""`` elsewhere:
    a table of measured throughputs compares no figure with its catalog's.
    """
    rows = np.asarray(rows, dtype=bool)
    if rows.all():
        return typed_specs(c)
    out = np.full(rows.size, "", dtype=object)
    if rows.any():
        at = np.flatnonzero(rows)
        out[at] = typed_specs({f: np.asarray(c[f])[at] for f in ("accelerator", *TYPED_SPECS) if f in c})
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
    if not np.any(estimated):
        _attach_none(c, thr, n)
        return
    dis = np.asarray(c["decode_accelerator"] != "", dtype=bool) if "decode_accelerator" in c else np.zeros(n, bool)
    main = _basis_where(estimated, c["accelerator"], c["model"], given_factor_rows(c), _typed_where(c, estimated))
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
    out_col = np.where(dis, column_or_nans(c, "decode_output_tokens_per_s_per_accelerator", n),
                       c["output_tokens_per_s_per_accelerator"])
    out_low = np.where(dis, c[RANGE_COLUMNS["decode_output_tokens_per_s_per_accelerator"][0]],
                       c[RANGE_COLUMNS["output_tokens_per_s_per_accelerator"][0]])
    out_high = np.where(dis, c[RANGE_COLUMNS["decode_output_tokens_per_s_per_accelerator"][1]],
                        c[RANGE_COLUMNS["output_tokens_per_s_per_accelerator"][1]])
    # the held-out median of measured / estimated (the bias the range is shifted by), for explain
    c["_range_median"] = np.where(ranged, np.where(dis, dec["ratio_mid"], main["ratio_mid"]), np.nan)
    c["_range_step"] = np.where(ranged, np.where(dis, dec["range_step"], main["range_step"]), "").astype(object)
    thr["output_tokens_per_s_per_accelerator_p10"] = np.where(ranged, out_col * out_low, np.nan)
    thr["output_tokens_per_s_per_accelerator_p90"] = np.where(ranged, out_col * out_high, np.nan)
    c["_ranged"] = ranged & feasible
    c["_throughput_unseen"] = estimated & (main["unseen"] | (dis & dec["unseen"]))
    c["_class_mismatch"] = estimated & (main["class_mismatch"] | (dis & dec["class_mismatch"]))


def _attach_none(c: dict[str, Array], thr: dict[str, Array], n: int) -> None:
    """:func:`attach` where no row is estimated (every throughput measured: the usual table): no range anywhere, so
    the same columns without a lookup or a pass over the rows. The ratios (1) and the median (NaN) are read-only
    views of one number, as an absent field's default column is (a million measured rows then cost no memory).
    """
    one, nan = np.broadcast_to(np.float64(1.0), (n,)), np.broadcast_to(np.float64(np.nan), (n,))
    for low, high in RANGE_COLUMNS.values():
        c[low], c[high] = one, one
    thr["throughput_basis"] = np.full(n, "", dtype=object)
    c["_range_median"] = nan
    c["_range_step"] = np.full(n, "", dtype=object)
    thr["output_tokens_per_s_per_accelerator_p10"] = nan
    thr["output_tokens_per_s_per_accelerator_p90"] = nan
    c["_ranged"] = np.zeros(n, dtype=bool)
    c["_throughput_unseen"] = np.zeros(n, dtype=bool)
    c["_class_mismatch"] = np.zeros(n, dtype=bool)
