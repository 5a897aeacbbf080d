"""Every decode accelerator of the catalog for the decode study: which has a throughput for the model, and how sure.

The catalog's decode accelerators are those whose throughput the roofline cannot estimate (``roofline`` = no in
data/accelerators.csv: SRAM or dataflow machines such as the SN50, the Groq 3 LPX, the Groq LPU, the Cerebras CS-3):
their speed must be measured. For the study's model, each is listed with the measured per-user output speed
data/throughput_claims.csv holds for it (as the decode pool of a disaggregated system first, else as a whole
system) and the confidence of that figure; one with none says so rather than being given an invented one. Each one
with a decode-pool figure (a per-user speed and the decode accelerators it was measured on) besides the scenario's
own ``decode_accelerator`` is studied as an option of its own, ``add decode (<id>)``, with the scenario's users per
replica (:func:`decode_options`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

import pandas as pd

from economics import catalog
from economics.schema.scenario import Scenario
from economics.schema.validation import CONTEXT_CURVE

DECODE_COLUMNS = ("decode_accelerator", "studied", "output_tokens_per_s_per_user", "measured_on", "claim_id",
                  "confidence", "price_confidence", "note")
"""Columns of the decode accelerators table: the accelerator; whether the study has an option for it; its measured
per-user output speed for the model (empty: none), whether measured as a decode pool or a whole system, the claim
and its confidence; the confidence of its catalog price; why it is or is not studied."""
SPEED = "output_tokens_per_s_per_user"


_MEMO: dict[str, tuple[object, Any]] = {}
"""What the table reads from the catalog, per model, with the catalog table it was read from: an edit of the
scenario re-runs the study (and this table) without filtering the claims again (about 50 ms each time); a catalog
read again (a new table object) is read again here."""


def _memo(key: str, table: object, make: Any) -> Any:
    """``make()``, remembered under ``key`` while ``table`` is the same object."""
    hit = _MEMO.get(key)
    if hit is None or hit[0] is not table:
        hit = _MEMO[key] = (table, make())
    return hit[1]


def decode_ids() -> list[str]:
    """The catalog's decode accelerators (roofline = no), in catalog order (read once per catalog table)."""
    table = catalog.accelerators()
    if "roofline" not in table.columns:
        return []
    return list(_memo("decode_ids", table, lambda: [str(a) for a, r in zip(table.index, table["roofline"],
                                                                             strict=True) if not bool(r)]))


def _claim(model: str, accelerator: str) -> tuple[pd.Series | None, str]:
    """The first claim of the model's per-user output speed on ``accelerator`` as a decode pool, else as a whole
    system, and which it is (``decode pool``, ``whole system``; empty when there is none).
    """
    claims = catalog.throughput_claims()

    def first() -> tuple[pd.Series | None, str]:
        mine = claims[(claims["model"] == model) & (claims["metric"] == SPEED)]
        for column, how in (("decode_accelerator", "decode pool"), ("accelerator", "whole system")):
            found = mine[mine[column] == accelerator]
            if len(found):
                return found.iloc[0], how
        return None, ""

    return _memo(f"claim:{model}:{accelerator}", claims, first)


def _price_confidence(accelerator: str) -> str:
    """The confidence of the accelerator's catalog price ('' when it has none)."""
    figures = catalog.accelerator_figures()
    return _memo(f"price:{accelerator}", figures,
                 lambda: (catalog.accelerator_source(accelerator, "price_usd") or {}).get("confidence", ""))


def decode_table(s: Scenario) -> pd.DataFrame:
    """Every decode accelerator of the catalog for the scenario's model (see the module docstring), columns
    :data:`DECODE_COLUMNS`.
    """
    rows = []
    for acc in decode_ids():
        claim, how = _claim(s.model or "", acc)
        price = _price_confidence(acc)
        row: dict[str, Any] = {"decode_accelerator": acc, "studied": False, SPEED: None, "measured_on": how,
                               "claim_id": "" if claim is None else str(claim.name),
                               "confidence": "" if claim is None else claim["confidence"],
                               "price_confidence": price or "no price in the catalog"}
        if acc == s.decode_accelerator:
            given = s.decode_measured_output_tokens_per_s_per_user
            row.update(studied=True, note="the scenario's decode_accelerator ('add decode')")
            if given is not None and claim is None:
                row.update({SPEED: float(given), "confidence": "given in the scenario"})
            elif given is not None:
                row[SPEED] = float(given)
        elif claim is None:
            row["note"] = (f"no measured throughput for {s.model or 'the model'} in data/throughput_claims.csv: "
                           "not studied (none invented)")
        else:
            row[SPEED] = float(claim["value"])
            if how == "decode pool" and str(claim["decode_accelerator_count"]).strip() and (
                    s.decode_concurrent_users_per_replica is not None):
                row.update(studied=True, note=f"studied as 'add decode ({acc})' with the claim's speed and "
                                              "decode accelerators")
            else:
                row["note"] = ("measured as a whole system, not as a decode pool: not studied" if how ==
                               "whole system" else "the decode accelerators it was measured on or the users per "
                               "replica (decode_concurrent_users_per_replica) not given: not studied")
        rows.append(row)
    return pd.DataFrame(rows, columns=list(DECODE_COLUMNS))


OPTIONS_REMEMBERED = 64
"""How many sets of decode options :func:`decode_options` remembers (the least recently used go)."""
_OPTIONS: OrderedDict[tuple[Any, ...], tuple[object, list[dict[str, Any]]]] = OrderedDict()
_LOCK = threading.Lock()


def decode_options(s: Scenario) -> list[dict[str, Any]]:
    """The ``add decode (<id>)`` options (as :class:`economics.studies.retrofit.Option`'s fields) for each decode
    accelerator of :func:`decode_table` studied besides the scenario's own: the existing GPUs prefill, a decode pool
    of it balanced to them, at the claim's per-user speed on the claim's decode accelerators per replica, with the
    scenario's users per replica. Remembered per the fields they read (an edit of the demand or a price, and the
    break-even price's second study, build no table again), each call handed copies to change.
    """
    key = (s.model, s.decode_accelerator, s.decode_measured_output_tokens_per_s_per_user,
           s.decode_concurrent_users_per_replica, s.existing_accelerators, s.accelerator, tuple(decode_ids()))
    claims = catalog.throughput_claims()
    with _LOCK:  # sessions run in threads of one server
        hit = _OPTIONS.get(key)
    if hit is None or hit[0] is not claims:  # a catalog read again (a new table object) is read again here
        hit = (claims, _decode_options(s))
    with _LOCK:
        _OPTIONS[key] = hit
        _OPTIONS.move_to_end(key)
        while len(_OPTIONS) > OPTIONS_REMEMBERED:
            _OPTIONS.popitem(last=False)
    return [{**spec, "changes": dict(spec["changes"]), "purchases": list(spec["purchases"])} for spec in hit[1]]


def _decode_options(s: Scenario) -> list[dict[str, Any]]:
    """:func:`decode_options`, built from the table."""
    e = s.existing_accelerators
    table = decode_table(s)
    out = []
    for _, row in table[table["studied"] & (table["decode_accelerator"] != (s.decode_accelerator or ""))].iterrows():
        acc = row["decode_accelerator"]
        per_replica = int(float(catalog.throughput_claims().loc[row["claim_id"], "decode_accelerator_count"]))
        changes = {"accelerator_count": e, "decode_accelerator": acc, "decode_accelerator_count": None,
                   "decode_measured_output_tokens_per_s_per_user": row[SPEED],
                   "decode_accelerators_per_replica": per_replica,
                   "decode_output_tokens_per_s_per_accelerator": None, "decode_accelerator_price_usd": None,
                   **dict.fromkeys(CONTEXT_CURVE)}  # the scenario's curve is another pool's: not this claim's
        out.append({"name": f"add decode ({acc})", "changes": changes,
                    "description": f"{e:,} x {s.accelerator} do prefill; a decode pool of {acc} is added "
                                   f"({row['confidence']} figures: claim {row['claim_id']})",
                    "purchases": [("decode_accelerators", "decode_accelerator_price_usd")],
                    "sizing": f"fixed: the existing {e:,} GPUs prefill, a decode pool balanced to their prefill, "
                              "bought in year 0"})
    return out
