"""The sourced catalogs in data/: accelerators, models, measured throughput, defaults and presets.

Every figure in data/ carries its source, date and a confidence tag (listed / vendor claim / secondary / estimate).
This package only reads them; it never invents a number. Tables are read once and cached (read-only use). The
reader is this module; :mod:`economics.catalog.sources` lists the sources the tables cite. The catalog is the bottom
layer: it imports nothing of the package, and :mod:`economics.schema` reads its defaults and ids.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Hashable
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pandas as pd


def data_dir() -> Path:
    """Where the catalogs are: ``$TOKEN_ECONOMICS_DATA_DIR`` if set (an organisation's own copy, same formats), else
    the ``economics/data`` package data of an installed wheel, else ``data/`` at the root of a source checkout.

    >>> (data_dir() / "defaults.csv").is_file()
    True
    """
    override = os.environ.get("TOKEN_ECONOMICS_DATA_DIR")
    if override:
        return Path(override)
    packaged = Path(str(resources.files("economics") / "data"))
    if (packaged / "defaults.csv").is_file():
        return packaged
    return Path(__file__).resolve().parents[2] / "data"


DATA_DIR = data_dir()
"""The catalogs' folder, resolved once at import (see :func:`data_dir`)."""
CONFIDENCE_TAGS = ("listed", "vendor claim", "secondary", "estimate")
ACCELERATOR_TEXT_FIELDS = frozenset({"name", "vendor", "kind", "system_name", "system_form", "cooling", "roofline",
                                     "family", "interconnect", "weight_compute_pairs"})


class CatalogError(ValueError):
    """A catalog id that does not exist; the message suggests the closest id."""


def _read(name: str) -> pd.DataFrame:
    return pd.read_csv(DATA_DIR / name, dtype=str, keep_default_na=False)


YES, NO = "yes", "no"
"""How the catalogs write a true/false column (``data_parallel_attention``, ``disaggregated``): read as ``bool``
by :func:`is_yes` here and nowhere else; written with :func:`yes_no`."""
YES_NO_COLUMNS = ("data_parallel_attention", "disaggregated")
"""The true/false columns of data/serving_stacks.csv and data/throughput_curves.csv, ``bool`` once read."""


def is_yes(word: str) -> bool:
    """A catalog cell of a true/false column as ``bool``: ``yes`` is true; ``no`` and empty (not stated) false.

    >>> is_yes("yes"), is_yes("no"), is_yes("")
    (True, False, False)
    """
    if word not in (YES, NO, ""):
        raise CatalogError(f"'{word}' is not yes or no (or empty)")
    return word == YES


def yes_no(flag: bool) -> str:
    """A true/false value as the catalogs write it (the inverse of :func:`is_yes`).

    >>> yes_no(True), yes_no(False)
    ('yes', 'no')
    """
    return YES if flag else NO


def _booleans(table: pd.DataFrame, name: str) -> pd.DataFrame:
    """``table`` (data/``name``) with its :data:`YES_NO_COLUMNS` as ``bool``; a word other than yes, no or empty is
    an error naming the file, the row and the column.
    """
    for col in YES_NO_COLUMNS:
        for row, word in enumerate(table[col], start=2):  # row 1 is the header
            if word not in (YES, NO, ""):
                raise CatalogError(f"data/{name}, line {row}: {col} is '{word}', not yes or no (or empty)")
        table[col] = table[col].map(is_yes).astype(bool)
    return table


@cache
def accelerator_figures() -> pd.DataFrame:
    """data/accelerators.csv as stored: one figure per row with unit, source, date, confidence, note."""
    return _read("accelerators.csv")


@cache
def accelerators() -> pd.DataFrame:
    """One row per accelerator id, one column per field (numbers as float, text as str, ``roofline`` as bool)."""
    long = accelerator_figures()
    wide = long.pivot(index="accelerator", columns="field", values="value")
    for col in wide.columns:
        if col not in ACCELERATOR_TEXT_FIELDS:
            wide[col] = pd.to_numeric(wide[col].replace("", None), errors="raise")
    if "roofline" in wide.columns:  # "no" for a dataflow/SRAM system; not stated: the roofline describes it
        wide["roofline"] = wide["roofline"].fillna(YES).map(is_yes).astype(bool)
    order = list(dict.fromkeys(long["accelerator"]))
    return wide.loc[order]


def accelerator_ids() -> list[str]:
    """Catalog ids in file order."""
    return list(accelerators().index)


def accelerator_record(accelerator: str) -> dict[str, Any]:
    """One accelerator's catalog figures as plain values (NaN where not published)."""
    return {str(k): v for k, v in accelerators().loc[accelerator].items()}


def accelerator_source(accelerator: str, field: str) -> dict[str, str] | None:
    """Where one catalog figure comes from: value, unit, source, source_date, confidence, note (None if absent)."""
    long = accelerator_figures()
    hit = long[(long["accelerator"] == accelerator) & (long["field"] == field)]
    if hit.empty:
        return None
    return {str(k): str(v) for k, v in hit.iloc[0].items()}


MODEL_NUMERIC_COLUMNS = (
    "total_params_b", "active_params_b", "layers", "hidden_size", "q_heads", "kv_heads", "head_dim", "kv_lora_rank",
    "qk_rope_head_dim", "experts", "experts_per_token", "shared_experts", "full_attention_layers",
    "sliding_window_tokens", "vocab_size", "max_context_tokens",
)


@cache
def models() -> pd.DataFrame:
    """data/models.csv indexed by model id, numbers as float. Sizes derived from the architecture (the KV cache per
    token) are computed by the engine (:func:`economics.engine.resolve.kv_bytes_per_token`), never typed in.
    """
    table = _read("models.csv").set_index("model")
    for col in MODEL_NUMERIC_COLUMNS:
        table[col] = pd.to_numeric(table[col].replace("", None), errors="raise")
    return table


@cache
def throughput_claims() -> pd.DataFrame:
    """data/throughput_claims.csv: measured speeds with their conditions."""
    return _read("throughput_claims.csv").set_index("claim_id")


@cache
def throughput_curves() -> pd.DataFrame:
    """data/throughput_curves.csv: measured throughput per accelerator vs per-user speed, one point per row (the
    true/false columns as ``bool``).
    """
    return _booleans(_read("throughput_curves.csv"), "throughput_curves.csv")


def curve_sources() -> pd.DataFrame:
    """data/throughput_curves.csv by source (its ``holdout_group``): curves, points, accelerators, models, the
    oldest and newest date and the confidence tags, newest first, so a reader sees how old each front is.

    >>> "inferencex-2026" in set(curve_sources()["source"])
    True
    """
    t = throughput_curves()
    rows = []
    for source, g in t.groupby("holdout_group", sort=False):
        dates = sorted(d for d in g["source_date"] if d)
        rows.append({"source": source, "curves": g["curve_id"].nunique(), "points": len(g),
                     "accelerators": ", ".join(sorted(set(g["accelerator"]))),
                     "models": ", ".join(sorted(set(g["model"]))), "oldest": dates[0] if dates else "",
                     "newest": dates[-1] if dates else "", "confidence": ", ".join(sorted(set(g["confidence"])))})
    return pd.DataFrame(rows).sort_values("newest", ascending=False, kind="stable").reset_index(drop=True)


@cache
def serving_stacks() -> pd.DataFrame:
    """data/serving_stacks.csv indexed by stack id: framework and version, TP/EP, DP attention, speculative method,
    draft tokens, acceptance and draft cost, disaggregation, nodes, precision, source, date, confidence (the
    true/false columns as ``bool``).
    """
    return _booleans(_read("serving_stacks.csv"), "serving_stacks.csv").set_index("stack_id")


def serving_stack_ids() -> list[str]:
    """Stack ids a scenario's ``serving_stack`` may name, besides ``best``."""
    return list(serving_stacks().index)


@cache
def api_prices() -> pd.DataFrame:
    """data/api_prices.csv: published API list prices per million tokens."""
    return _read("api_prices.csv")


@cache
def calibration() -> pd.DataFrame:
    """data/calibration.csv: fitted roofline efficiency factors per accelerator family (and global)."""
    return _read("calibration.csv").set_index("scope")


@cache
def estimate_ranges() -> pd.DataFrame:
    """data/estimate_ranges.csv: the spread of the roofline's error (measured / estimated at P10, P50, P90) per
    fitted accelerator family and for families with no measured point (:mod:`economics.engine.estimate_range`).
    """
    path = DATA_DIR / "estimate_ranges.csv"
    if not path.exists():  # before the first ``calibrate --ranges --write``
        return pd.DataFrame(columns=["basis", "points", "ratio_p10", "ratio_p50", "ratio_p90"]).rename_axis("scope")
    return _read("estimate_ranges.csv").set_index("scope")


@cache
def leave_out_errors() -> pd.DataFrame:
    """data/leave_out_errors.csv: the leave-one-family-out and leave-one-model-out error per group, as stored by
    ``calibrate --ranges --write``.
    """
    path = DATA_DIR / "leave_out_errors.csv"
    return _read("leave_out_errors.csv") if path.exists() else pd.DataFrame(columns=["kind", "left_out"])


@cache
def defaults() -> pd.DataFrame:
    """data/defaults.csv indexed by parameter."""
    return _read("defaults.csv").set_index("parameter")


def default_value(parameter: str) -> float:
    """A sourced default from data/defaults.csv as a float (the table's values read once per table object)."""
    table = defaults()
    known: dict[str, float] = derived(("defaults",), (table,), dict)
    if parameter not in known:
        known[parameter] = float(str(table.loc[parameter, "value"]))
    return known[parameter]


def default_source(parameter: str) -> dict[str, str]:
    """The row of data/defaults.csv for ``parameter`` as text: value, unit, confidence, source, source_date, note."""
    row = defaults().loc[parameter]
    return {str(k): str(v) for k, v in row.items()}


@cache
def presets() -> pd.DataFrame:
    """data/presets.csv: ready-made scenarios (scenario columns plus `note`); the first row is the default."""
    return _read("presets.csv")


def _wide(name: str, key: str) -> pd.DataFrame:
    """A long catalog (``key, field, value, unit, confidence, source, source_date, note``) as one row per id."""
    long = _read(name)
    return long.pivot(index=key, columns="field", values="value").loc[list(dict.fromkeys(long[key]))]


@cache
def electricity_tariffs() -> pd.DataFrame:
    """data/electricity_tariffs.csv, one row per tariff id: ``name``, ``usd_per_kwh_by_hour`` (24 prices, hour 0
    first) and the figures they were derived from (see each row's source and note).
    """
    return _wide("electricity_tariffs.csv", "tariff")


@cache
def grid_regions() -> pd.DataFrame:
    """data/grid_carbon.csv, one row per region id: ``name``, ``g_per_kwh`` (annual average) and, where published,
    ``g_per_kwh_by_hour`` (24 values, hour 0 first).
    """
    wide = _wide("grid_carbon.csv", "region")
    if "g_per_kwh_by_hour" not in wide.columns:
        wide["g_per_kwh_by_hour"] = ""
    return wide.fillna("")


def closest(value: str, choices: list[str] | tuple[str, ...]) -> str | None:
    """The most similar choice, for 'did you mean' messages."""
    needle = str(value).strip().lower()
    # an id that starts with what was typed ('H200' -> 'h200-sxm') beats a merely similar one ('b200')
    prefixed = [c for c in choices if needle and c.lower().startswith(needle)]
    if prefixed:
        return min(prefixed, key=len)
    hits = difflib.get_close_matches(needle, [c.lower() for c in choices], n=1, cutoff=0.4)
    if not hits:
        return None
    return next(c for c in choices if c.lower() == hits[0])


def unknown_id_message(field: str, value: Any, choices: list[str]) -> str:
    """Message for an id that is not in a catalog, naming the field, the value and the closest id."""
    guess = closest(str(value), choices)
    hint = f"; did you mean '{guess}'?" if guess else ""
    return f"{field}: unknown id '{value}'{hint} (known: {', '.join(choices)})"


def accelerator_column(ids: Any, field: str, missing: Any) -> Any:
    """An accelerators.csv figure for each id in ``ids`` (``missing`` where the id or the figure is absent).

    >>> accelerator_column(np.array(["h100-sxm", ""], dtype=object), "accelerators_per_system", np.nan).tolist()
    [8.0, nan]
    """
    table = accelerators()
    codes = positions(table, "accelerators", ids)
    if field not in table.columns:
        return np.full(len(codes), missing)
    numeric = isinstance(missing, float)
    values = derived(("column", field, numeric, repr(missing)), (table,), lambda: np.append(
        table[field].to_numpy(dtype=float, na_value=np.nan) if numeric
        else table[field].fillna(missing).to_numpy(dtype=object), missing))
    return values[codes]


T = TypeVar("T")
_DERIVED: dict[Hashable, tuple[tuple[object, ...], Any]] = {}
"""What is derived from catalog tables (positions of ids, a column as an array, a lookup), per set of table objects:
the tables are cached, and a re-read one (as after ``calibrate --write``) is a new object, so it is derived again."""
FEW_IDS = 64
"""Up to this many ids are looked up in a dict; more through the table's index (the same positions)."""


def derived(key: Hashable, tables: tuple[object, ...], build: Callable[[], T]) -> T:
    """``build()`` once per ``key`` and set of table objects (read-only use of what it returns)."""
    entry = _DERIVED.get(key)
    if entry is None or len(entry[0]) != len(tables) or any(a is not b for a, b in zip(entry[0], tables, strict=True)):
        entry = (tables, build())
        _DERIVED[key] = entry
    return entry[1]


def positions(table: pd.DataFrame, name: str, ids: Any) -> Any:
    """Row position of each id in the catalog table ``name``, -1 where absent, empty or not an id (as
    ``Index.get_indexer``): a dict lookup per id for a few ids, per distinct id for many (a million rows name a
    handful of accelerators; the index's own lookup converted every row's text first).

    >>> positions(accelerators(), "accelerators", np.array(["h100-sxm", "nope"], dtype=object)).tolist()
    [3, -1]
    >>> positions(models(), "models", np.array(["llama-3.1-8b", "", "nope"], dtype=object)).tolist()
    [1, -1, -1]
    """
    keys = np.asarray(ids, dtype=object)
    where = derived(("positions", name), (table,), lambda: {k: i for i, k in enumerate(table.index)})
    if keys.size > FEW_IDS:
        codes, distinct = pd.factorize(keys.ravel(), use_na_sentinel=True)  # a missing id: code -1, the -1 appended
        found = [where.get(k, -1) if isinstance(k, str) else -1 for k in distinct]
        return np.array([*found, -1], dtype=np.intp)[codes].reshape(keys.shape)
    return np.array([where.get(k, -1) if isinstance(k, str) else -1 for k in keys.ravel()],
                    dtype=np.intp).reshape(keys.shape)


def model_column(model_ids: Any, field: str) -> Any:
    """A models.csv figure for each model id (NaN where the id is empty or unknown).

    >>> model_column(np.array(["llama-3.1-8b", ""], dtype=object), "total_params_b").tolist()
    [8.03, nan]
    """
    table = models()
    return _model_figures(table, field)[positions(table, "models", model_ids)]


def model_columns(model_ids: Any, fields: tuple[str, ...]) -> list[Any]:
    """models.csv columns for each model id, the ids looked up once: a figure (:data:`MODEL_NUMERIC_COLUMNS`) as
    floats, NaN where the id is empty or unknown; any other column as text, ``""`` there or where the cell is empty.

    >>> ids = np.array(["deepseek-v3", "", "nope"], dtype=object)
    >>> [c.tolist() for c in model_columns(ids, ("layers", "attention"))]
    [[61.0, nan, nan], ['mla', '', '']]
    """
    table = models()
    at = positions(table, "models", model_ids)
    return [(_model_figures(table, f) if f in MODEL_NUMERIC_COLUMNS else _model_texts(table, f))[at] for f in fields]


def _model_texts(table: pd.DataFrame, field: str) -> Any:
    """A models.csv column as text with ``""`` appended (the value of position -1) and for an empty cell, once per
    table object.
    """
    return derived(("model text", field), (table,),
                   lambda: np.append(table[field].fillna("").to_numpy(dtype=object), ""))


def _model_figures(table: pd.DataFrame, field: str) -> Any:
    """A models.csv column as floats with NaN appended (the value of position -1), once per table object."""
    return derived(("model", field), (table,), lambda: np.append(table[field].to_numpy(dtype=float), np.nan))


MOE_GRANULARITY = 8.0
"""Experts per routed expert slot (E / k) from which a mixture-of-experts model counts as class ``moe``: many small
experts (DeepSeek-V3 256/8, Qwen3 128/8, gpt-oss 128/4) run many small grouped GEMMs and behave unlike a dense
model, while a few large experts (Mixtral 8/2) run dense-sized GEMMs and share the dense class."""


def model_class(model_ids: Any) -> Any:
    """``moe`` for a fine-grained mixture-of-experts model (E / k >= :data:`MOE_GRANULARITY`), ``dense`` otherwise
    (``""`` for an unknown id).

    >>> [str(x) for x in model_class(np.array(["deepseek-v3", "mixtral-8x7b", "llama-3.1-8b", "nope"]))]
    ['moe', 'dense', 'dense', '']
    """
    table = models()
    ids = np.asarray(model_ids, dtype=object)
    if ids.size <= FEW_IDS:  # a page's few rows: a dict lookup, not a pandas map (per-call overhead)
        classes = derived("model classes", (table,), lambda: dict(zip(
            table.index, _classes(pd.Series(np.asarray(table.index, dtype=object)), table), strict=True)))
        return np.array([classes.get(m, "") if isinstance(m, str) else "" for m in ids.ravel()],
                        dtype=object).reshape(ids.shape)
    return _classes(pd.Series(ids), table)


def _classes(series: pd.Series, table: pd.DataFrame) -> Any:
    """:func:`model_class` of every id in ``series``, vectorised over the models ``table``."""
    experts = series.map(table["experts"])
    k = series.map(table["experts_per_token"]).fillna(1.0).clip(lower=1.0)
    fine = (experts.fillna(0) > 0) & (experts.fillna(0) / k >= MOE_GRANULARITY)
    return np.where(experts.isna(), "", np.where(fine, "moe", "dense")).astype(object)
