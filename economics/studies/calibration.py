"""Calibrate the roofline's efficiency factors on measured points, and report its error on points it never saw.

Four factors scale the roofline (:class:`economics.engine.roofline.Roofline`): the share of peak memory bandwidth a
decode
step achieves (``bandwidth_utilization``), the share of peak FLOPS of decode (``compute_utilization``) and of prefill
(``prefill_compute_utilization``), and a fixed time per layer per step (``step_overhead_us_per_layer``). They are
fitted per scope -- an accelerator family, and within it the model class (dense or mixture-of-experts) where the
family has enough points of that class -- minimising the mean squared log error of output tokens/s per accelerator
(prefill included, as measured) and of the time to first token where one was measured.

Honest error: the points are split **by model family**, and one source whole, before anything is fitted. The
held-out families (:data:`HOLDOUT_MODELS`: three dense models, among them one with full multi-head attention and the
largest, and four mixture-of-experts models) and the held-out source (:data:`HOLDOUT_SOURCES`: an
online-serving table with the time to first token) are never used by the fit; data/calibration.csv stores factors
fitted on the training split only, with the training and the held-out error of each scope side by side.
``python -m economics calibrate --holdout`` prints them; ``--write`` refits and stores.

Three more factors are calibrated only (no scenario field): a time per token per layer outside the GEMMs and attention
(``token_overhead_ns_per_layer``), the share of peak bandwidth the decode attention reaches on the paged KV cache
(``kv_bandwidth_utilization``: small scattered blocks, one set per sequence, read at their own rate rather than the
weights' long streams; without it a model whose decode step is mostly KV reads -- Qwen3-30B-A3B on one B200 at long
outputs -- was predicted 1.4-2x too fast), and a fixed time per request in the time to first token
(``ttft_overhead_ms``: the server, tokenization, scheduling), fitted last and once for all scopes on the measured TTFT
(it moves no throughput). Each scope's Nelder-Mead search is restarted once from its optimum (a fresh simplex: in seven
dimensions the first one collapses early).

Points from dataflow/SRAM systems, points without input/output lengths or precision, and points on accelerators
absent from the catalog are listed but not fitted (the reason is given).
"""

from __future__ import annotations

import datetime as dt
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from economics import catalog
from economics.catalog import model_class
from economics.domain import capacity as cap
from economics.domain.precision import BYTES_PER_VALUE, split_precision
from economics.engine.estimate import fill_throughput
from economics.engine.roofline import FACTORS, KV_FACTOR, TOKEN_FACTOR, TTFT_FACTOR, stored_factors
from economics.schema.scenario import FIELDS, FORMAT_FIELDS
from economics.schema.validation import validate
from economics.studies.calibration_points import (  # noqa: F401  (re-exported: the split is part of the calibration's interface)
    BLIND_SOURCES,
    HOLDOUT_MODELS,
    HOLDOUT_SOURCES,
    KV_FREE_FRACTION,
    NEVER_FITTED,
    OFFLINE_MAX_BATCH,
    RANGE_BASIS_SETS,
    RANGE_BASIS_SOURCES,
    VALIDATION_SETS,
    VALIDATION_SOURCES,
    is_fitted,
    number_or_nan,
    points,
)

MIN_POINTS = 8
"""Training points a scope needs to get its own factors; fewer fall back to the enclosing scope."""
START = {"bandwidth_utilization": 0.6, "compute_utilization": 0.5, "prefill_compute_utilization": 0.4,
         "step_overhead_us_per_layer": 50.0, TOKEN_FACTOR: 20.0, TTFT_FACTOR: 20.0, KV_FACTOR: 0.6}
FITTED = (*FACTORS, TOKEN_FACTOR, TTFT_FACTOR, KV_FACTOR)
LIMITS = {"bandwidth_utilization": (0.05, 0.95), "compute_utilization": (0.05, 0.95),
          "prefill_compute_utilization": (0.02, 0.95), "step_overhead_us_per_layer": (0.0, 500.0),
          TOKEN_FACTOR: (0.1, 2000.0), TTFT_FACTOR: (0.1, 500.0), KV_FACTOR: (0.05, 0.95)}
"""No kernel reaches its peak: utilizations stay at or below 0.95."""
PRIOR_WEIGHT = 1e-3
"""A weak pull of each utilization towards its start value: it only decides between settings the data cannot tell
apart (decode compute is rarely the bottleneck at the measured points), never against the data."""
TTFT_WEIGHT = 0.25
REPORTED = ("predicted", "predicted_ttft", "error_pct", "ttft_error_pct", "predicted_per_user", "per_user_error_pct")
"""Per-point columns of :func:`report`: predicted output tokens/s per accelerator, TTFT [s] and per-user speed
[token/s] (at a published concurrency only), and their errors [%]."""
ERROR_COLUMNS = ("median_abs_error_pct", "worst_abs_error_pct", "holdout_points", "holdout_median_abs_error_pct",
                 "holdout_worst_abs_error_pct", "ttft_points", "ttft_median_abs_error_pct", "ttft_worst_abs_error_pct")


def _columns(pts: pd.DataFrame) -> dict[str, np.ndarray]:
    """Validated scenario columns for the points (validated once; the fit reuses them)."""
    frame = pd.DataFrame({
        "accelerator": pts["accelerator"], "model": pts["model"], "precision": pts["precision"],
        **{f: pts.get(f, "") for f in FORMAT_FIELDS},  # a point's formats: a scenario's fields
        "input_tokens_per_request": pts["input_tokens"], "output_tokens_per_request": pts["output_tokens"],
        "target_output_tokens_per_s_per_user": pts["per_user"], "accelerators_per_replica": pts["replica"],
        "max_batch_size": pts["max_batch"], "accelerator_count": 1.0, "ownership": "rent",
        "rent_usd_per_accelerator_hour": 1.0,
    }).reset_index(drop=True)
    cols, _ = validate(frame[[c for c in frame.columns if c in FIELDS]])
    # a point that publishes the concurrency it ran at is predicted at that concurrency, not at its per-user speed:
    # near the batch-1 limit a few per cent of speed (TensorRT-LLM 0.14 publishes the inter-token latency in whole
    # ms: 8 ms is anything from 117.6 to 133.3 tokens/s) moves the largest batch that meets the speed from 7 to 1;
    # the per-user speed is compared on its own (``per_user_error_pct``)
    target = cols["target_output_tokens_per_s_per_user"]
    cols["target_output_tokens_per_s_per_user"] = np.where(_at_concurrency(pts), np.nan, target)
    # an engine that gives the KV cache a share f of the memory left after the weights W uses
    # W + f (n M - W) of n M: memory_utilization = f + (1 - f) W / (n M)
    free = pts["kv_free_fraction"].to_numpy(dtype=float) if "kv_free_fraction" in pts else np.full(len(frame), np.nan)
    weights = _weight_bytes(pts.reset_index(drop=True))
    total = cols["accelerators_per_replica"] * cols["accelerator_memory_gb"] * 1e9
    with np.errstate(invalid="ignore", divide="ignore"):
        engine = free + (1.0 - free) * weights / total
    cols["memory_utilization"] = np.where(np.isfinite(engine), np.minimum(engine, 1.0), cols["memory_utilization"])
    return cols


def _at_concurrency(pts: pd.DataFrame) -> np.ndarray:
    """Whether each point publishes the concurrency it ran at (then its ``max_batch``)."""
    return pts["at_concurrency"].fillna(False).to_numpy(dtype=bool)


def _weight_bytes(pts: pd.DataFrame) -> np.ndarray:
    """Weight bytes of each point's model at its weights' precision [byte] (NaN where unknown)."""
    params = pts["model"].map(catalog.models()["total_params_b"]).to_numpy(dtype=float)
    weights = split_precision(pts["precision"], pts.get("weight_precision"))[0]
    per = pd.Series(weights).map(BYTES_PER_VALUE).to_numpy(dtype=float)
    return params * 1e9 * per


def predict_columns(cols: dict[str, np.ndarray], factors: dict[str, Any]) -> dict[str, np.ndarray]:
    """Output tokens/s per accelerator (prefill included, as a benchmark measures it) and time to first token [s]
    for validated point columns under the given factors.
    """
    n = len(cols["accelerator"])
    cal = {f: np.broadcast_to(np.asarray(factors.get(f, 0.0), dtype=float), (n,)).copy() for f in FITTED}
    c, out = _fill(cols, cal)
    # a measured per-user speed the model cannot reach: predict the fastest setting (batch 1) and say so
    slow = ~out["feasible"] & np.char.startswith(out["infeasible_reason"].astype(str), "interactivity")
    if slow.any():
        fast = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in cols.items()}
        target = fast["target_output_tokens_per_s_per_user"]
        fast["target_output_tokens_per_s_per_user"] = np.where(slow, np.nan, target)
        fast["max_batch_size"] = np.where(slow, 1.0, fast["max_batch_size"])
        c2, out2 = _fill(fast, cal)
        for key in ("output_tokens_per_s_per_accelerator", "input_tokens_per_s_per_accelerator"):
            c[key] = np.where(slow, c2[key], c[key])
        out["time_to_first_token_s"] = np.where(slow, out2["time_to_first_token_s"], out["time_to_first_token_s"])
        out["feasible"] = out["feasible"] | (slow & out2["feasible"])
    d, p = c["output_tokens_per_s_per_accelerator"], c["input_tokens_per_s_per_accelerator"]
    o, i = c["output_tokens_per_request"], c["input_tokens_per_request"]
    with np.errstate(invalid="ignore", divide="ignore"):
        effective = o * cap.requests_per_s_per_accelerator(i, o, 0.0, p, d)
    return {"effective": np.where(out["feasible"], effective, np.nan),
            "ttft": np.where(out["feasible"], out["time_to_first_token_s"], np.nan), "target_unreachable": slow,
            "per_user": np.where(out["feasible"], out["output_tokens_per_s_per_user"], np.nan)}


def _fill(cols: dict[str, np.ndarray], cal: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    c = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in cols.items()}
    return c, fill_throughput(c, cal, use_curves=False)


def predict(pts: pd.DataFrame, factors: dict[str, Any]) -> np.ndarray:
    """Predicted output tokens/s per accelerator (prefill included, as measured) for each point."""
    return predict_columns(_columns(pts), factors)["effective"]


@dataclass(frozen=True)
class _Measured:
    """The measured figures a fit compares with, read from the points once (the objective runs thousands of
    times): where throughput and TTFT were measured and their values there.
    """

    has: np.ndarray
    tokens: np.ndarray
    has_ttft: np.ndarray
    ttft: np.ndarray

    @classmethod
    def of(cls, pts: pd.DataFrame) -> _Measured:
        measured = pts["measured"].to_numpy()
        has = ~np.isnan(measured)
        has_ttft = pts["measured_ttft"].notna().to_numpy()
        return cls(has, measured[has], has_ttft, pts["measured_ttft"].to_numpy()[has_ttft])


def _loss(pred: dict[str, np.ndarray], measured: _Measured) -> float:
    err = np.log(pred["effective"][measured.has] / measured.tokens)
    terms = [np.where(np.isfinite(err), err, 3.0) ** 2]
    if measured.has_ttft.any():
        e = np.log(pred["ttft"][measured.has_ttft] / measured.ttft)
        terms.append(TTFT_WEIGHT * np.where(np.isfinite(e), e, 3.0) ** 2)
    return float(np.mean(np.concatenate(terms)))


def batch_one_overhead_bound_us(pts: pd.DataFrame) -> float:
    r"""The largest per-layer step overhead the measured batch-1 points allow [us].

    At batch 1 a decode step takes 1 / v_1 (v_1 the measured per-user speed), of which the overhead is a part, so

    .. math:: t_0 \le \min_{points} \frac{1}{v_1 L}

    over the points measured at concurrency 1 (L the model's layers); infinite where none is. The bound keeps the
    fit physical: an overhead fitted on other points can never make a batch-1 step slower than one was measured.

    >>> import pandas as pd
    >>> pts = pd.DataFrame({"model": ["llama-3.1-70b"], "per_user": [118.82], "max_batch": [1.0],
    ...                     "at_concurrency": [True]})
    >>> round(batch_one_overhead_bound_us(pts), 1)   # 1 / (118.82 token/s x 80 layers)
    105.2
    """
    one = pts[pts["at_concurrency"].fillna(False).astype(bool) & (pts["max_batch"] <= 1.0) & pts["per_user"].notna()]
    if one.empty:
        return float("inf")
    layers = one["model"].map(catalog.models()["layers"]).astype(float)
    return float((1e6 / (one["per_user"].astype(float) * layers)).min())


def _fit(pts: pd.DataFrame, fixed: dict[str, float] | None = None,
         limits: dict[str, tuple[float, float]] | None = None) -> dict[str, float]:
    """Nelder-Mead on the logs of the factors (bounded by clipping), minimising the mean squared log error;
    ``fixed`` factors are held at the given values, ``limits`` replace :data:`LIMITS` where given.
    """
    # scipy.optimize on first use: the app's first page reads this module's report, never a fit, and importing it
    # cost that page's first KPI about 0.16 s of CPU in a cold start (issue #43)
    from scipy.optimize import minimize

    cols, measured = _columns(pts), _Measured.of(pts)
    fixed = fixed or {}
    bounds = {**LIMITS, **(limits or {})}
    free = [f for f in FITTED if f not in fixed]
    lo = np.log([max(bounds[f][0], 1e-3) for f in free])
    hi = np.log([bounds[f][1] for f in free])

    def factors_of(x: np.ndarray) -> dict[str, float]:
        v = np.exp(np.clip(x, lo, hi))
        return {**fixed, **{f: float(val) for f, val in zip(free, v, strict=True)}}

    def objective(x: np.ndarray) -> float:
        f = factors_of(x)
        prior = sum(np.log(f[k] / START[k]) ** 2 for k in FITTED if "utilization" in k)
        return _loss(predict_columns(cols, f), measured) + PRIOR_WEIGHT * prior

    x0 = np.log([max(START[f], 1e-3) for f in free])
    res = minimize(objective, x0, method="Nelder-Mead", options={"xatol": 1e-3, "fatol": 1e-5, "maxiter": 800})
    # one restart from the optimum with a fresh simplex: Nelder-Mead's simplex collapses early in 7 dimensions
    res = minimize(objective, np.clip(res.x, lo, hi), method="Nelder-Mead",
                   options={"xatol": 1e-3, "fatol": 1e-5, "maxiter": 800})
    return {f: round(v, 4) if "utilization" in f else round(v, 1) for f, v in factors_of(res.x).items()}


FITS_REMEMBERED = 64
"""Scope fits a process remembers (:func:`_remembered_fit`; each holds its points, a few hundred rows)."""

_fits: OrderedDict[tuple[bytes, tuple[Any, ...], tuple[Any, ...]], tuple[pd.DataFrame, dict[str, float]]] = (
    OrderedDict())
_FITS_LOCK = threading.Lock()  # the API and the app's threads may refit at once; the search itself runs unlocked


def _remembered_fit(pts: pd.DataFrame, fixed: dict[str, float],
                    limits: dict[str, tuple[float, float]]) -> dict[str, float]:
    """:func:`_fit`, looked up when the same points, held factors and limits were fitted before in this process.

    A refit without a group (:mod:`economics.studies.leave_out`: one per family, model or published table) fits
    every scope again, and a scope without that group's points, not held to a factor of a scope that has them, sees
    what it saw before: Nelder-Mead from the same start on the same points gives the same factors, so the search is
    not repeated. The points are kept and compared whole (``DataFrame.equals``), so a lookup never answers for other
    points whatever their hash.
    """
    key = (pd.util.hash_pandas_object(pts, index=True).to_numpy().tobytes(), tuple(sorted(fixed.items())),
           tuple(sorted(limits.items())))
    with _FITS_LOCK:
        seen = _fits.get(key)
        if seen is not None and seen[0].equals(pts) and list(seen[0].columns) == list(pts.columns):
            _fits.move_to_end(key)
            return dict(seen[1])
    factors = _fit(pts, fixed, limits)
    with _FITS_LOCK:
        _fits[key] = (pts.copy(), dict(factors))
        while len(_fits) > FITS_REMEMBERED:
            _fits.popitem(last=False)
    return factors


def _scopes(usable: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """``global``, each family with enough training points, and each family's model class with enough."""
    train = usable[usable["split"] == "train"]
    scopes = [("global", train)]
    for fam, g in train.groupby("family"):
        if len(g) >= MIN_POINTS:
            scopes.append((str(fam), g))
        for cls, h in g.groupby("model_class"):
            if len(h) >= MIN_POINTS and len(h) < len(g):
                scopes.append((f"{fam}:{cls}", h))
    return scopes


def point_errors(pts: pd.DataFrame, factors: dict[str, np.ndarray]) -> pd.DataFrame:
    """The points with their prediction under ``factors`` (one value per point) and its error [%]."""
    pred = predict_columns(_columns(pts), factors)
    out = pts.copy()
    out["predicted"] = pred["effective"]
    out["predicted_ttft"] = pred["ttft"]
    out["target_unreachable"] = pred["target_unreachable"]
    out["error_pct"] = (out["predicted"] / out["measured"] - 1.0) * 100
    out["ttft_error_pct"] = (out["predicted_ttft"] / out["measured_ttft"] - 1.0) * 100
    # the per-user speed is compared where the point was predicted at its published concurrency
    out["predicted_per_user"] = np.where(_at_concurrency(pts), pred["per_user"], np.nan)
    out["per_user_error_pct"] = (out["predicted_per_user"] / out["per_user"] - 1.0) * 100
    return out


def _stats(err: pd.Series) -> tuple[int, float, float]:
    e = err.dropna().abs()
    return len(e), round(float(e.median()), 1) if len(e) else np.nan, round(float(e.max()), 1) if len(e) else np.nan


def fit() -> pd.DataFrame:
    """Fitted factors per scope on the training split, with the training and held-out error of each scope."""
    pts = points()
    usable = pts[is_fitted(pts)].reset_index(drop=True)
    fitted = fitted_scopes(usable)
    seen = ~usable["split"].isin(NEVER_FITTED)
    return _fit_table(usable[seen].reset_index(drop=True), fitted)  # the blind and validation splits: on their own


def fitted_scopes(usable: pd.DataFrame) -> dict[str, dict[str, float]]:
    """The factors of every scope (``global``, each family, each family's model class with enough points) fitted on
    the training split of ``usable`` (fittable points): the fit of :func:`fit`, on any subset of the points.
    """
    fitted: dict[str, dict[str, float]] = {}
    for scope, g in _scopes(usable):
        # the per-step overhead shows only where the batch is small: without a measured per-user speed (offline
        # points only) it is not identified and stays at the enclosing scope's value
        parent = fitted.get(scope.partition(":")[0], fitted.get("global", {})) if ":" in scope else fitted.get(
            "global", {})
        fixed = {}
        # never slower at batch 1 than a batch-1 point of the scope was measured
        bound = min(LIMITS["step_overhead_us_per_layer"][1], batch_one_overhead_bound_us(g))
        if scope != "global" and not g["per_user"].notna().any():
            fixed["step_overhead_us_per_layer"] = min(parent["step_overhead_us_per_layer"], bound)
        # the per-token overhead shows only at high token rates (small models, short requests), which a model class's
        # points may never reach (the MoE training points are models of 120-671 B parameters): it is a cost of the
        # accelerator family's kernels and engine, fitted per family, and each class keeps its family's value
        if ":" in scope:
            fixed[TOKEN_FACTOR] = parent[TOKEN_FACTOR]
        # the fixed time per request moves only the TTFT: fitted last, once for all scopes (too few TTFT points per
        # family), on top of the factors each point actually gets
        fixed[TTFT_FACTOR] = 0.0
        limits = {"step_overhead_us_per_layer": (LIMITS["step_overhead_us_per_layer"][0], bound)}
        fitted[scope] = _remembered_fit(g.reset_index(drop=True), fixed, limits)
    request_ms = _fit_request_overhead(usable[usable["split"] == "train"].reset_index(drop=True), fitted)
    for factors in fitted.values():
        factors[TTFT_FACTOR] = request_ms
    return fitted


def _fit_table(usable: pd.DataFrame, fitted: dict[str, dict[str, float]]) -> pd.DataFrame:
    """data/calibration.csv's rows: each scope's factors with its training and held-out error."""
    rows = []
    for scope, factors in fitted.items():
        members = _members(usable, scope)
        res = point_errors(members, {f: np.full(len(members), v) for f, v in factors.items()})
        n_tr, med_tr, worst_tr = _stats(res.loc[res["split"] == "train", "error_pct"])
        n_ho, med_ho, worst_ho = _stats(res.loc[res["split"] == "holdout", "error_pct"])
        n_tt, med_tt, worst_tt = _stats(res["ttft_error_pct"])
        rows.append({
            "scope": scope, "accelerators": " ".join(sorted(set(members["accelerator"]))), **factors,
            "points": n_tr, "median_abs_error_pct": med_tr, "worst_abs_error_pct": worst_tr,
            "holdout_points": n_ho, "holdout_median_abs_error_pct": med_ho, "holdout_worst_abs_error_pct": worst_ho,
            "ttft_points": n_tt, "ttft_median_abs_error_pct": med_tt, "ttft_worst_abs_error_pct": worst_tt,
            "method": "Nelder-Mead on log factors minimising the mean squared log error of output tokens/s per "
                      "accelerator (prefill included) and of TTFT, on the training split (held-out model families: "
                      + ", ".join(HOLDOUT_MODELS) + "; held-out source: " + ", ".join(HOLDOUT_SOURCES) + ")",
            "confidence": "estimate",
            "source": "python -m economics calibrate --write on data/throughput_curves.csv and "
                      "data/throughput_claims.csv",
            "source_date": dt.date.today().isoformat(),
        })
    return pd.DataFrame(rows)


def applied_factors(pts: pd.DataFrame, fitted: dict[str, dict[str, float]]) -> dict[str, np.ndarray]:
    """The factors each point gets from the fitted scopes: the most specific of ``<family>:<class>``, ``<family>``,
    ``global:<class>``, ``global`` (the order of :func:`economics.engine.roofline.stored_factors`).
    """
    names = [f"{f}:{c}" for f, c in zip(pts["family"], pts["model_class"], strict=True)]
    chosen = []
    for fam, cls, both in zip(pts["family"], pts["model_class"], names, strict=True):
        chosen.append(next(s for s in (both, fam, f"global:{cls}", "global") if s in fitted))
    return {f: np.array([fitted[s].get(f, 0.0) for s in chosen]) for f in FITTED}


def _fit_request_overhead(pts: pd.DataFrame, fitted: dict[str, dict[str, float]]) -> float:
    r"""The fixed time per request [ms] that best matches the measured TTFT (squared log error), given the factors
    each point gets; it changes no throughput.

    Each measured configuration (a curve: one deployment and workload swept over concurrency) weighs as much as any
    other, whatever its number of points, so that one sweep does not set the constant for every engine:

    .. math:: \min_{t_{req}} \sum_i w_i \ln^2\frac{\hat{T}_i + t_{req}}{T_i}, \quad w_i = 1 / n_{curve(i)}
    """
    has = pts["measured_ttft"].notna().to_numpy()
    if not has.any():
        return 0.0
    sub = pts[has].reset_index(drop=True)
    base = predict_columns(_columns(sub), {**applied_factors(sub, fitted), TTFT_FACTOR: 0.0})["ttft"]
    measured = sub["measured_ttft"].to_numpy()
    curve = sub["point"].str.partition(" @ ")[0]
    weight = 1.0 / curve.map(curve.value_counts()).to_numpy(dtype=float)

    def loss(ms: float) -> float:
        e = np.log((base + ms * 1e-3) / measured)
        return float(np.sum(weight * np.where(np.isfinite(e), e, 3.0) ** 2) / weight.sum())

    from scipy.optimize import minimize_scalar  # on first use, as in _fit

    best = minimize_scalar(loss, bounds=LIMITS[TTFT_FACTOR], method="bounded")
    return round(float(best.x), 1)


def _members(pts: pd.DataFrame, scope: str) -> pd.DataFrame:
    """The points (both splits) a scope's factors apply to."""
    if scope == "global":
        return pts.reset_index(drop=True)
    fam, _, cls = scope.partition(":")
    keep = pts["family"] == fam
    if cls:
        keep &= pts["model_class"] == cls
    return pts[keep].reset_index(drop=True)


def report() -> tuple[pd.DataFrame, dict[str, float]]:
    """Predicted vs measured for every point with the factors in data/calibration.csv; summary over fitted points
    (train and held-out splits), the held-out split on its own, the time to first token, and the blind split (sources
    added after the fit, :data:`BLIND_SOURCES`) on its own.
    """
    pts = points()
    factors = stored_factors(pts["accelerator"].to_numpy(), pts["model"].to_numpy())
    for f, v in factors.items():
        pts[f] = v
    ok = is_fitted(pts).to_numpy()
    res = pts.copy()
    for col in REPORTED:
        res[col] = np.nan
    if ok.any():
        sub = point_errors(pts[ok].reset_index(drop=True), {f: v[ok] for f, v in factors.items()})
        for col in REPORTED:
            res.loc[ok, col] = sub[col].to_numpy()
    # an arrival-limited point's throughput is not compared: no throughput prediction is shown for it
    res.loc[ok & res["measured"].isna().to_numpy(), "predicted"] = np.nan
    fitted = res[ok & ~res["split"].isin(NEVER_FITTED).to_numpy()]  # those are summarised on their own
    blind = res.loc[ok & (res["split"] == "blind").to_numpy(), "error_pct"].abs().dropna()
    abs_err = fitted["error_pct"].abs()
    held = fitted.loc[fitted["split"] == "holdout", "error_pct"].abs()
    ttft = fitted["ttft_error_pct"].abs().dropna()
    summary = {"points": float(len(res)), "fitted_points": float(len(fitted)),
               "median_abs_error_pct": float(abs_err.median()) if len(fitted) else float("nan"),
               "worst_abs_error_pct": float(abs_err.max()) if len(fitted) else float("nan"),
               "holdout_points": float(len(held)),
               "holdout_median_abs_error_pct": float(held.median()) if len(held) else float("nan"),
               "holdout_worst_abs_error_pct": float(held.max()) if len(held) else float("nan"),
               "ttft_points": float(len(ttft)),
               "ttft_median_abs_error_pct": float(ttft.median()) if len(ttft) else float("nan"),
               "ttft_worst_abs_error_pct": float(ttft.max()) if len(ttft) else float("nan"),
               "blind_points": float(len(blind)),
               "blind_median_abs_error_pct": float(blind.median()) if len(blind) else float("nan"),
               "blind_worst_abs_error_pct": float(blind.max()) if len(blind) else float("nan")}
    return res, summary


def holdout_table() -> pd.DataFrame:
    """Per accelerator family (and overall): training and held-out median and worst absolute error of output
    tokens/s per accelerator, and of the time to first token (``ttft_*`` over both splits, ``train_ttft_*`` and
    ``holdout_ttft_*`` per split), with the stored factors (fitted on the training split only).
    """
    res, _ = report()
    fitted = res[is_fitted(res)]
    rows = []
    for scope, g in [("all", fitted), *((str(f), h) for f, h in fitted.groupby("family"))]:
        train, held, blind = g["split"] == "train", g["split"] == "holdout", g["split"] == "blind"
        row: dict[str, Any] = {"scope": scope, "accelerators": " ".join(sorted(set(g["accelerator"])))}
        for prefix, errors in (("train", g.loc[train, "error_pct"]), ("holdout", g.loc[held, "error_pct"]),
                               ("ttft", g.loc[~blind, "ttft_error_pct"]),
                               ("train_ttft", g.loc[train, "ttft_error_pct"]),
                               ("holdout_ttft", g.loc[held, "ttft_error_pct"]), ("blind", g.loc[blind, "error_pct"]),
                               ("blind_ttft", g.loc[blind, "ttft_error_pct"])):
            n, med, worst = _stats(errors)
            row.update({f"{prefix}_points": n, f"{prefix}_median_pct": med, f"{prefix}_worst_pct": worst})
        rows.append(row)
    return pd.DataFrame(rows)


def factors_for(accelerators: np.ndarray, models: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """The stored factors for each accelerator (and model): see :func:`economics.engine.roofline.stored_factors`."""
    return stored_factors(accelerators, models)


def scope_for(accelerator: str, model: str | None = None) -> dict[str, Any]:
    """The calibration row that applies to an accelerator (and model) as plain values."""
    cal = catalog.calibration()
    fam = str(catalog.accelerator_record(accelerator).get("family", ""))
    cls = str(model_class(np.array([model]))[0]) if model else ""
    scope = "global"
    for candidate in (f"global:{cls}", fam, f"{fam}:{cls}"):
        if candidate in cal.index:
            scope = candidate
    row = {str(k): str(v) for k, v in cal.loc[scope].items()}
    out: dict[str, Any] = {"scope": scope, "accelerators": row["accelerators"], "points": int(float(row["points"]))}
    for f in (*FACTORS, *(e for e in ERROR_COLUMNS if e in row and e != "holdout_points" and e != "ttft_points")):
        out[f] = number_or_nan(row[f])
    return out


def holdout_text() -> str:
    """The held-out report as printed by ``python -m economics calibrate --holdout``: per scope the training and
    held-out median and worst absolute error of output tokens/s per accelerator, and of TTFT.
    """
    table = holdout_table()
    res, summary = report()

    def pct(x: float) -> str:
        return "      -" if x != x else f"{x:6.1f}%"

    lines = ["held-out model families (never fitted): " + ", ".join(HOLDOUT_MODELS),
             "held-out sources (never fitted, any model): " + ", ".join(HOLDOUT_SOURCES),
             "factors: data/calibration.csv (fitted on the training split only)", "",
             f"{'':18} {'output tokens/s per accelerator (prefill included)':<55}time to first token",
             f"{'scope':18} {'train n':>7} {'median':>7} {'worst':>7}   {'held-out n':>10} {'median':>7} {'worst':>7}"
             f"   {'train n':>7} {'median':>7} {'worst':>7}   {'held-out n':>10} {'median':>7} {'worst':>7}"]
    for r in table.to_dict("records"):
        f = {k: float(v) for k, v in r.items() if k != "scope" and k != "accelerators"}
        cells = [f"{r['scope']:18}"]
        for prefix, width in (("train", 7), ("holdout", 10), ("train_ttft", 7), ("holdout_ttft", 10)):
            cells.append(f"{int(f[prefix + '_points']):{width}d} {pct(f[prefix + '_median_pct'])} "
                         f"{pct(f[prefix + '_worst_pct'])}" + ("  " if prefix != "holdout_ttft" else ""))
        lines.append(" ".join(cells).rstrip())
    lines += ["", f"output tokens/s per accelerator, prefill included; TTFT over {int(summary['ttft_points'])} "
                  "measured points (saturated points excluded)", "",
              "blind: sources added after the fit, never fitted (" + ", ".join(BLIND_SOURCES) + ")",
              f"{'scope':18} {'points':>7} {'median':>7} {'worst':>7}   {'TTFT n':>7} {'median':>7} {'worst':>7}"]
    for r in table.to_dict("records"):
        if int(r["blind_points"]):
            lines.append(f"{r['scope']:18} {int(r['blind_points']):7d} {pct(float(r['blind_median_pct']))} "
                         f"{pct(float(r['blind_worst_pct']))}   {int(r['blind_ttft_points']):7d} "
                         f"{pct(float(r['blind_ttft_median_pct']))} {pct(float(r['blind_ttft_worst_pct']))}")
    for split, g in res[is_fitted(res)].groupby("split", sort=False):
        n, med, worst = _stats(g["per_user_error_pct"])
        if n:
            lines.append(f"per-user speed at the published concurrency, {split}: {n} points, median {med:.1f}%, "
                         f"worst {worst:.1f}%")
    check = stack_check()
    err = check["error_pct"].abs()
    lines += ["", f"serving-stack terms (speculative decoding, expert parallelism, disaggregation) on the "
                  f"{len(check)} points of those stacks, never fitted: median {err.median():.1f}%, worst "
                  f"{err.max():.1f}%"]
    for stack, g in check.groupby("serving_stack", sort=True):
        e = g["error_pct"].abs()
        lines.append(f"  {stack:46} {len(g):3d} points  median {e.median():5.1f}%  worst {e.max():5.1f}%")
    return "\n".join(lines) + "\n"


def stack_check(factors: dict[str, Any] | None = None) -> pd.DataFrame:
    """The roofline with each serving stack's terms (speculative decoding, expert parallelism, disaggregation)
    against the measured points of those stacks, which the fit never sees: one row per point with the measured and
    predicted output tokens/s per accelerator (prefill included) and the error [%].

    Each point is predicted at its published concurrency (at its measured per-user speed where it publishes none)
    with its stack pinned and no measured curve; a
    disaggregated deployment spreads its concurrency over all its accelerators, so a decode replica of n holds at
    most concurrency x n / accelerators sequences. Saturated points (requests queued before decoding) are left out,
    and so are the validation split's (:data:`VALIDATION_SOURCES`): ``calibrate --holdout`` reports those on their
    own, as refused where the split does not estimate their stack, so that a validation set is measured once.
    """
    t = catalog.throughput_curves()
    ep = pd.to_numeric(t["expert_parallel"], errors="coerce").fillna(1.0)
    t = t[((t["speculative_decoding"] != "none") | t["disaggregated"] | (ep > 1))
          & ~t["note"].str.contains("saturated") & ~t["holdout_group"].isin(VALIDATION_SOURCES)].reset_index(drop=True)
    stacks = catalog.serving_stacks()
    replica = pd.to_numeric(t["serving_stack"].map(stacks["tensor_parallel"]), errors="coerce").to_numpy(dtype=float)
    conc = t["concurrency"].astype(float).to_numpy()
    share = np.where(t["disaggregated"].to_numpy(dtype=bool),
                     replica / t["accelerator_count"].astype(float).to_numpy(), 1.0)
    frame = pd.DataFrame({
        "accelerator": t["accelerator"], "model": t["model"], "precision": t["precision"],
        **{f: t[f] for f in FORMAT_FIELDS},
        "input_tokens_per_request": t["input_tokens"], "output_tokens_per_request": t["output_tokens"],
        # predicted at the published concurrency where there is one, as the fitted points are (see _columns)
        "target_output_tokens_per_s_per_user": np.where(np.isfinite(conc), np.nan,
                                                        t["output_tokens_per_s_per_user"].astype(float)),
        "serving_stack": t["serving_stack"],
        "max_batch_size": np.maximum(np.floor(conc * share), 1.0), "accelerator_count": 1.0, "ownership": "rent",
        "rent_usd_per_accelerator_hour": 1.0})
    cols, _ = validate(frame)
    n = len(frame)
    cal = None if factors is None else {f: np.full(n, float(factors.get(f, 0.0))) for f in FITTED}
    fill_throughput(cols, cal, use_curves=False)
    o = cols["output_tokens_per_request"]
    predicted = o * cap.requests_per_s_per_accelerator(cols["input_tokens_per_request"], o, 0.0,
                                                       cols["input_tokens_per_s_per_accelerator"],
                                                       cols["output_tokens_per_s_per_accelerator"])
    measured = t["output_tokens_per_s_per_accelerator"].astype(float).to_numpy()
    return pd.DataFrame({"point": t["curve_id"] + " @ " + t["output_tokens_per_s_per_user"],
                         "serving_stack": t["serving_stack"], "measured": measured, "predicted": predicted,
                         "error_pct": (predicted / measured - 1.0) * 100.0})
