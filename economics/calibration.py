"""Calibrate the roofline's efficiency factors on the measured points in data/, and report its error honestly.

Two factors scale the roofline (:mod:`economics.throughput`): the share of peak memory bandwidth a decode step
achieves (``bandwidth_utilization``) and the share of peak FLOPS (``compute_utilization``, also used for prefill).
They are fitted by grid search, minimising the mean squared log error between predicted and measured output
throughput per accelerator, per accelerator family where it has at least ``MIN_POINTS`` measured points, else on
all points (``global``). Points from dataflow/SRAM systems are listed but not fitted: a single-bandwidth roofline
does not describe them. ``python -m economics calibrate`` prints predicted vs measured for every point;
``--write`` stores the factors in data/calibration.csv with how they were obtained.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np
import pandas as pd

from . import catalog

MIN_POINTS = 5
FACTORS = ("bandwidth_utilization", "compute_utilization", "prefill_compute_utilization",
           "step_overhead_us_per_layer")
COARSE: dict[str, np.ndarray] = {
    "bandwidth_utilization": np.round(np.arange(0.1, 1.0001, 0.1), 2),
    "compute_utilization": np.array([0.2, 0.35, 0.5, 0.65, 0.8]),
    "prefill_compute_utilization": np.array([0.05, 0.1, 0.2, 0.3, 0.45, 0.6]),
    "step_overhead_us_per_layer": np.arange(0.0, 301.0, 25.0),
}
FINE_STEP = {"bandwidth_utilization": 0.02, "compute_utilization": 0.05, "prefill_compute_utilization": 0.02,
             "step_overhead_us_per_layer": 5.0}
LIMITS = {"bandwidth_utilization": (0.02, 1.0), "compute_utilization": (0.02, 1.0),
          "prefill_compute_utilization": (0.02, 1.0), "step_overhead_us_per_layer": (0.0, 1000.0)}
PRIOR_UTILIZATION, PRIOR_WEIGHT = 0.5, 1e-3
"""A weak pull of each utilization towards 0.5 in the loss: it only decides between settings the data cannot tell
apart (decode compute is rarely the bottleneck in the measured points), never against the data."""


def factors_for(accelerators: np.ndarray) -> dict[str, np.ndarray]:
    """Calibrated factors for each accelerator id: its family's row of data/calibration.csv, else global."""
    cal = catalog.calibration()
    fam = catalog.accelerators()["family"] if "family" in catalog.accelerators().columns else pd.Series(dtype=object)
    ids = pd.Series(np.asarray(accelerators, dtype=object))
    scope = ids.map(fam).where(lambda s: s.isin(cal.index), "global").fillna("global")
    return {f: scope.map(cal[f].astype(float)).to_numpy(dtype=float) for f in FACTORS}


def scope_for(accelerator: str) -> dict[str, Any]:
    """The calibration row that applies to an accelerator (its family's, else global) as plain values."""
    cal = catalog.calibration()
    fam = catalog.accelerator_record(accelerator).get("family", "")
    scope = fam if fam in cal.index else "global"
    row = {str(k): str(v) for k, v in cal.loc[scope].items()}
    out: dict[str, Any] = {"scope": scope, "accelerators": row["accelerators"], "points": int(float(row["points"]))}
    for f in (*FACTORS, "median_abs_error_pct", "worst_abs_error_pct"):
        out[f] = float(row[f])
    return out


def points() -> pd.DataFrame:
    """Every measured point in data/ with what is needed to predict it, and whether it can be fitted."""
    rows: list[dict[str, Any]] = []
    acc = catalog.accelerators()
    for _, p in catalog.throughput_curves().iterrows():
        rows.append({
            "point": f"{p['curve_id']} @ {p['output_tokens_per_s_per_user'] or 'offline'}",
            "accelerator": p["accelerator"], "model": p["model"], "precision": p["precision"],
            "replica": float(p["accelerator_count"]) if p["point_kind"] == "measured" else np.nan,
            "input_tokens": float(p["input_tokens"]) if p["input_tokens"] else np.nan,
            "output_tokens": float(p["output_tokens"]) if p["output_tokens"] else np.nan,
            "per_user": float(p["output_tokens_per_s_per_user"]) if p["output_tokens_per_s_per_user"] else np.nan,
            "metric": "output_tokens_per_s_per_accelerator",
            "measured": float(p["output_tokens_per_s_per_accelerator"]), "kind": p["point_kind"],
        })
    for cid, p in catalog.throughput_claims().iterrows():
        if p["decode_accelerator"]:
            continue  # disaggregated systems are modelled by the disaggregation capability, not this roofline
        rows.append({
            "point": str(cid), "accelerator": p["accelerator"], "model": p["model"],
            "precision": p["precision"] if p["precision"] in ("bf16", "fp8", "fp4") else "",
            "replica": float(p["accelerator_count"]) if p["accelerator_count"] else np.nan,
            "input_tokens": float(p["input_tokens"]) if p["input_tokens"] else np.nan,
            "output_tokens": float(p["output_tokens"]) if p["output_tokens"] else np.nan,
            "per_user": np.nan, "metric": p["metric"], "measured": float(p["value"]), "kind": "claim",
        })
    df = pd.DataFrame(rows)
    roof = df["accelerator"].map(acc["roofline"] if "roofline" in acc.columns else {}).fillna("")
    df["family"] = df["accelerator"].map(acc["family"]).fillna("")
    df["fitted"] = "yes"
    df.loc[df["input_tokens"].isna() | df["output_tokens"].isna(), "fitted"] = "no: input/output length unknown"
    df.loc[df["precision"] == "", "fitted"] = "no: precision unknown"
    df.loc[df["metric"] != "output_tokens_per_s_per_accelerator", "fitted"] = "no: per-user speed, batch unknown"
    df.loc[roof == "no", "fitted"] = "no: dataflow/SRAM system, not roofline-describable"
    return df


def predict(pts: pd.DataFrame, factors: dict[str, Any]) -> np.ndarray:
    """Predicted output tokens/s per accelerator (prefill included, as measured) for each point."""
    from .estimate import fill_throughput
    from .scenario import FIELDS
    from .validation import validate

    frame = pd.DataFrame({
        "accelerator": pts["accelerator"], "model": pts["model"], "precision": pts["precision"],
        "input_tokens_per_request": pts["input_tokens"], "output_tokens_per_request": pts["output_tokens"],
        "target_output_tokens_per_s_per_user": pts["per_user"], "accelerators_per_replica": pts["replica"],
        "accelerator_count": 1.0, "ownership": "rent", "rent_usd_per_accelerator_hour": 1.0,
    })
    cols, _ = validate(frame[[c for c in frame.columns if c in FIELDS]])
    n = len(pts)
    cal = {f: np.broadcast_to(np.asarray(factors[f], dtype=float), (n,)) for f in FACTORS}
    fill_throughput(cols, cal, use_curves=False)
    d, p = cols["output_tokens_per_s_per_accelerator"], cols["input_tokens_per_s_per_accelerator"]
    o, i = cols["output_tokens_per_request"], cols["input_tokens_per_request"]
    with np.errstate(invalid="ignore", divide="ignore"):
        return o / (i / p + o / d)


def _fit(pts: pd.DataFrame) -> dict[str, float]:
    """Grid search (coarse, then a fine grid around the best), minimising mean squared log error."""
    def best_on(grids: dict[str, np.ndarray]) -> dict[str, float]:
        mesh = [g.ravel() for g in np.meshgrid(*(grids[f] for f in FACTORS), indexing="ij")]
        combos = len(mesh[0])
        big = pts.loc[pts.index.repeat(combos)].reset_index(drop=True)
        pred = predict(big, {f: np.tile(m, len(pts)) for f, m in zip(FACTORS, mesh, strict=True)})
        err = np.log(pred.reshape(len(pts), combos) / pts["measured"].to_numpy()[:, None])
        loss = np.mean(np.where(np.isfinite(err), err, 10.0) ** 2, axis=0) + PRIOR_WEIGHT * sum(
            np.log(m / PRIOR_UTILIZATION) ** 2 for f, m in zip(FACTORS, mesh, strict=True) if "utilization" in f)
        k = int(np.argmin(loss))
        return {f: round(float(m[k]), 4) for f, m in zip(FACTORS, mesh, strict=True)}

    best = best_on(COARSE)
    fine = {f: np.unique(np.clip(best[f] + FINE_STEP[f] * np.arange(-3, 4), *LIMITS[f])) for f in FACTORS}
    return best_on(fine)


def fit() -> pd.DataFrame:
    """Fitted factors: one row per family with enough points, and ``global`` over all fitted points."""
    pts = points()
    usable = pts[pts["fitted"] == "yes"].reset_index(drop=True)
    rows = []
    scopes = [("global", usable)] + [(fam, g) for fam, g in usable.groupby("family") if len(g) >= MIN_POINTS]
    for scope, g in scopes:
        g = g.reset_index(drop=True)
        factors = _fit(g)
        err = predict(g, factors) / g["measured"].to_numpy() - 1.0
        rows.append({
            "scope": scope, "accelerators": " ".join(sorted(set(g["accelerator"]))), **factors, "points": len(g),
            "median_abs_error_pct": round(float(np.median(np.abs(err))) * 100, 1),
            "worst_abs_error_pct": round(float(np.max(np.abs(err))) * 100, 1),
            "method": "grid search (coarse, then fine around the best) minimising the mean squared log error of "
                      "output tokens/s per accelerator (prefill included) at the measured per-user speed",
            "confidence": "estimate", "source": "python -m economics calibrate --write on data/throughput_curves.csv "
                                                "and data/throughput_claims.csv",
            "source_date": dt.date.today().isoformat(),
        })
    return pd.DataFrame(rows)


def report() -> tuple[pd.DataFrame, dict[str, float]]:
    """Predicted vs measured for every point with the factors in data/calibration.csv; summary over fitted points."""
    pts = points()
    factors = factors_for(pts["accelerator"].to_numpy())
    for f, v in factors.items():
        pts[f] = v
    pts["predicted"] = predict(pts, factors)
    # a prediction needs the point's workload and precision; dataflow systems have none
    pts.loc[pts["fitted"] != "yes", "predicted"] = np.nan
    pts["error_pct"] = (pts["predicted"] / pts["measured"] - 1.0) * 100
    fitted = pts[(pts["fitted"] == "yes") & pts["error_pct"].notna()]
    abs_err = fitted["error_pct"].abs()
    summary = {"points": float(len(pts)), "fitted_points": float(len(fitted)),
               "median_abs_error_pct": float(abs_err.median()) if len(fitted) else float("nan"),
               "worst_abs_error_pct": float(abs_err.max()) if len(fitted) else float("nan")}
    return pts, summary
