"""Where a scenario's figures come from: its throughput in words (the record: claim, curve, your file; its date and
stack), and each input's origin (given, a catalog figure or a sourced default, with source, date and confidence).

One sentence per evaluated scenario, for pages, reports and the command line alike, built from the evaluation's
own outputs (``throughput_source``, ``throughput_curve``, ``throughput_date``, ``serving_stack_used``) and the
catalog row they name; nothing here computes a figure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from economics import catalog
from economics.catalog.sources import first_url, source_urls
from economics.domain.explain import format_number as fmt
from economics.engine.measured import FRONT, SOURCE_CLAIM, SOURCE_CURVE, SOURCE_ESTIMATE, SOURCE_USER, claim_record
from economics.schema.scenario import FIELDS
from economics.schema.validation import validate


def _curve_source(curve_id: str) -> str:
    """The most specific address of a catalog curve's source (a published run's own, where it names one)."""
    rows = catalog.throughput_curves()
    # one source per curve, built once per catalog table (a boolean filter of the table on every page run was a
    # fifth of the server's CPU with 16 sessions editing)
    sources = catalog.derived("curve sources", (rows,), lambda: dict(
        zip(rows["curve_id"].astype(str), rows["source"].astype(str), strict=True)))
    source = sources.get(curve_id)
    if source is None and curve_id.startswith(FRONT):  # a front: each of its runs has its own source
        return "the runs of every stack measured for this configuration (throughput_note names the two points)"
    if source is None:
        return ""
    urls = source_urls(source)
    return urls[-1] if urls else source[:120]


def throughput_description(result: Mapping[str, Any]) -> str:
    """The throughput of an evaluated scenario (:func:`economics.evaluate_scenario`'s result) and where it comes
    from, as one sentence.

    >>> import economics
    >>> throughput_description(economics.evaluate_scenario(economics.default_scenario()))[:78]
    'Throughput 374.2 output tokens/s per accelerator at 20 tokens/s per user: inte'
    """
    value = result.get("output_tokens_per_s_per_accelerator")
    speed = result.get("output_tokens_per_s_per_user")
    if result.get("decode_accelerator"):
        prefill, decode = (result.get("input_tokens_per_s_per_accelerator"),
                           result.get("decode_output_tokens_per_s_per_accelerator"))
        head = (f"Disaggregated: prefill {_rate(prefill)} input tokens/s per {result.get('accelerator')}, decode "
                f"{_rate(decode)} output tokens/s per {result.get('decode_accelerator')}")
    else:
        head = f"Throughput {_rate(value)} output tokens/s per accelerator"
    if speed is not None:
        head += f" at {fmt(float(speed))} tokens/s per user"
    if result.get("decode_accelerator"):
        return (f"{head}: each pool's rate given, from a measured per-user speed with its concurrency, or estimated "
                "by the roofline (explain shows which).")
    source, record = str(result.get("throughput_source") or ""), str(result.get("throughput_curve") or "")
    date, stack = str(result.get("throughput_date") or ""), str(result.get("serving_stack_used") or "")
    if source == SOURCE_CLAIM:
        k = claim_record(record)
        return (f"{head}: measured claim {record} ({k['system']}; {first_url(k['source']) or k['source']}, "
                f"{k['source_date']}, {k['confidence']}).")
    if source in (SOURCE_CURVE, SOURCE_USER):
        where = "your measured curve" if source == SOURCE_USER else "the measured curve"
        origin = "" if source == SOURCE_USER else f"; {_curve_source(record)}"
        return (f"{head}: interpolated on {where} {record} (serving stack {stack or 'not stated'}, measured "
                f"{date or 'on an unstated date'}{origin}).")
    if source == SOURCE_ESTIMATE:
        basis = str(result.get("throughput_basis") or "").removeprefix("estimated; ")
        low, high = (result.get(f"output_tokens_per_s_per_accelerator_{p}") for p in ("p10", "p90"))
        spread = f" Range P10-P90: {_rate(low)} to {_rate(high)} output tokens/s per accelerator." if (
            low is not None and high is not None) else ""
        return (f"{head}: estimated by the roofline" + (f" ({stack})" if stack else "") + ": no measured figure for "
                "this accelerator, model, precision, request shape and per-user speed" + (f"; {basis}" if basis
                                                                                          else "") + "." + spread)
    given = str(result.get("throughput_measured_for") or "")
    return f"{head}: as given" + (f", measured for {given}." if given else ".")


def _rate(value: Any) -> str:
    return "no" if value is None else fmt(float(value))


def input_origins(raw: dict[str, Any]) -> list[dict[str, str]]:
    """Where each input with a value comes from, one record per field in schema order: ``field``, ``value`` (as
    the derivation writes it), ``unit``, ``origin`` (``given``, ``catalog`` or ``default``) and, for a catalog figure
    or a sourced default, its ``source``, ``source_date``, ``confidence`` and the catalog ``accelerator`` ('' when
    none). :func:`provenance_text` prints them; the board report tabulates them.
    """
    frame = pd.DataFrame([raw])[[c for c in raw if c in FIELDS]]
    cols, _ = validate(frame)
    acc = str(cols["accelerator"][0])
    out = []
    for name, spec in FIELDS.items():
        value = cols[name][0]
        if isinstance(value, float) and np.isnan(value):
            continue
        shown = fmt(float(value)) if spec.kind.numeric else str(value)
        given = raw.get(name) not in (None, "") and not (isinstance(raw.get(name), float) and np.isnan(raw[name]))
        row = {"field": name, "value": shown, "unit": spec.unit if spec.unit != "-" else "", "origin": "given",
               "source": "", "source_date": "", "confidence": "", "accelerator": ""}
        if spec.catalog_field and not given:
            src = catalog.accelerator_source(acc, spec.catalog_field)
            row.update(origin="catalog", accelerator=acc)
            if src:
                row.update(source=src["source"], source_date=src["source_date"], confidence=src["confidence"])
        elif spec.default_source and (not given or raw.get(name) == spec.default):
            src = catalog.default_source(name)
            row.update(origin="default", source=src["source"], source_date=src["source_date"],
                       confidence=src["confidence"])
        elif not given:
            row["origin"] = "default"
        out.append(row)
    return out


def provenance_text(raw: dict[str, Any]) -> str:
    """Where each input comes from: given, catalog (with source, date, confidence) or sourced default."""
    lines = ["inputs:"]
    for r in input_origins(raw):
        origin = r["origin"]
        if r["source"]:
            where = f"catalog {r['accelerator']}" if origin == "catalog" else "default"
            origin = f"{where}: {r['source']}, {r['source_date']}, {r['confidence']}"
        elif origin == "catalog":
            origin = "catalog"
        lines.append(f"  {r['field']} = {r['value']} {r['unit']}".rstrip() + f"   ({origin})")
    return "\n".join(lines)
