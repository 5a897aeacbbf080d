"""The fuzz bench's ``links`` stage (a module of ``bench/fuzz.py``; running it on its own does nothing).

The app's shareable links, read as the app reads them: generated queries of scenario fields, ``baseline.<field>``
and page settings (``settings.<field>_low``/``_high`` range ends, ``settings.samples``, ``settings.seed``, the
planner's numeric, yes/no and choice settings ``settings.plan_*``), with hostile values: a decimal comma (``0,5``),
``1_0000``, Arabic-Indic and full-width digits, ``nan``, ``inf``, ``1e999``, the bounds and just past them,
repeated parameters, values over the links' length limits (a number padded with spaces, then junk), escape
sequences, and the demand pair: ``demand_profile`` (diurnal, a 24-hour day) with ``peak_to_average`` at and past
what a diurnal day can peak at (23.976 x the average), also against a base scenario whose day is diurnal.

Each case goes through ``ui.links.read_link`` (the whole link), and through its parts on their own:
``economics.studies.links.decode_query`` and ``decode_checked`` for the scenario's parameters and
``ui.links.read_settings`` for the page settings. Checks: none raises (``traceback``); every value accepted equals
the reference (``fuzz_common.reference``: the one value parser, the field's bounds, ids, a demand day against the
link's own peak; a setting by the same parser and its own bounds), a value the reference accepts is not refused,
and a value refused is named in a warning; ``decode_checked`` keeps only values ``decode_query`` read, names each
it drops, and leaves no combination validation refuses (``mismatch`` for each).
"""

from __future__ import annotations

import dataclasses
import random
import traceback
from pathlib import Path
from typing import Any

from fuzz_common import (
    ESCAPES,
    Stage,
    _empty_is_default,
    bounds_ok,
    generated_text,
    normal,
    reference,
    stage_rng,
)

import economics
from economics.schema import validation_hours, values
from economics.schema.scenario import FIELDS, with_changes
from economics.schema.validation import validate
from economics.schema.values import FieldKind
from economics.studies import planner
from economics.studies.links import MAX_VALUE_CHARS, decode_checked, decode_query
from ui import links as ui_links

HOSTILE = ["0,5", "1_0000", "1,000", "\u0661\u0662", "\uff11\uff12", "nan", "NaN", "inf", "-inf", "1e999", "-1e999",
           "", " ", "0x10", "1e-320", "+1", ".5", "5.", "1\u00a0", "\u200b1", "true", "no", "2"]
"""Values every field is tried with, besides the shared generator's and each field's bounds."""
PEAKS = ["1", "2", "4", "23.975", "23.9759999", "23.976", "23.98", "24", "30", "100", "100.0001", "0,5", "nan"]
PROFILES = ["diurnal", "DIURNAL ", "flat", "peak", "bogus", " ".join(["1"] * 24), " ".join(["1"] * 23 + ["30"]),
            ";".join(["1"] * 23 + ["0"]), ",".join(["2"] * 24), " ".join(["1"] * 23), " ".join(["1"] * 23 + ["1e999"])]
SCENARIO_FIELDS = [n for n, s in FIELDS.items() if not s.catalog_field]
SETTINGS = [n for n in ui_links.default_settings() if n.endswith(("_low", "_high")) or n in ("samples", "seed")]
PLAN_SETTINGS = [ui_links.PLAN_PREFIX + n for n, s in planner.PLAN_FIELDS.items()
                 if s.kind is not FieldKind.STR and n != "min_rental_hours"]
"""Planner settings read by the value parser (``min_rental_hours`` also takes ``monthly``; text settings have
parsers of their own)."""
WHOLE = {"samples": ui_links.SAMPLES_BOUNDS, "seed": ui_links.SEED_BOUNDS}


def _spec_of_setting(name: str) -> Any:
    """The field spec a page setting is read by (a range end's field, the planner's, or a whole number's bounds)."""
    if name in WHOLE:
        low, high = WHOLE[name]
        return dataclasses.replace(FIELDS["accelerator_count"], name=name, ge=low, le=high, gt=None, lt=None,
                                   optional=False)
    if name.startswith(ui_links.PLAN_PREFIX):
        return planner.PLAN_FIELDS[name[len(ui_links.PLAN_PREFIX):]]
    return FIELDS[name.rsplit("_", 1)[0]]


def edges(spec: Any) -> list[str]:
    """A numeric field's bounds as text, and just past them."""
    out = []
    for bound, step in ((spec.ge, -1), (spec.gt, 0), (spec.le, 1), (spec.lt, 0)):
        if bound is not None:
            out += [repr(float(bound)), repr(bound * (1 + step * 1e-9) + step * 1e-12), f"{bound:g}"]
    return out


def hostile_value(rng: random.Random, spec: Any) -> str:
    """One value for the field of ``spec``: hostile, an edge of its bounds, over-long, escaped, or generated."""
    kind = rng.random()
    if kind < 0.3:
        return rng.choice(HOSTILE)
    if kind < 0.5 and spec.kind.numeric:
        return rng.choice(edges(spec) or HOSTILE)
    if kind < 0.58:  # over the length limits: a number padded with spaces, then junk (or not)
        pad = rng.choice([MAX_VALUE_CHARS - 2, MAX_VALUE_CHARS + 5, 2100, 5000])
        return rng.choice(["5", "1.5", "2"]) + " " * pad + rng.choice(["x", "", "7"])
    if kind < 0.66:
        return rng.choice(["1", "x", ""]) * rng.choice([201, 2001, 100_000])
    if kind < 0.75:
        text = rng.choice(["1.5", "2", "x"])
        cut = rng.randint(0, len(text))
        return text[:cut] + rng.choice(ESCAPES) + text[cut:]
    return generated_text(rng)


def _one_param(rng: random.Random, value: str) -> str | list[str]:
    """The value, or (one in six) the parameter repeated with ``value`` last."""
    if rng.random() < 1 / 6:
        return [generated_text(rng) for _ in range(rng.randint(1, 2))] + [value]
    return value


def generated_query(rng: random.Random) -> dict[str, Any]:
    """A link's parameters: a few scenario fields, perhaps the demand pair, baseline fields and page settings."""
    params: dict[str, Any] = {}
    for name in rng.sample(SCENARIO_FIELDS, rng.randint(0, 3)):
        params[name] = _one_param(rng, hostile_value(rng, FIELDS[name]))
    if rng.random() < 0.35:
        params["demand_profile"] = _one_param(rng, rng.choice(PROFILES))
        if rng.random() < 0.8:
            params["peak_to_average"] = _one_param(rng, rng.choice(PEAKS))
    if rng.random() < 0.15:
        name = rng.choice(SCENARIO_FIELDS)
        params["baseline." + name] = hostile_value(rng, FIELDS[name])
    for name in rng.sample(SETTINGS + PLAN_SETTINGS, rng.randint(1, 3)):
        prefix = rng.choice([ui_links.SETTINGS_PREFIX] * 5 + [ui_links.OLD_PLAN_PREFIX]) if name.startswith(
            ui_links.PLAN_PREFIX) else ui_links.SETTINGS_PREFIX
        key = prefix + (name[len(ui_links.PLAN_PREFIX):] if prefix == ui_links.OLD_PLAN_PREFIX else name)
        params[key] = _one_param(rng, hostile_value(rng, _spec_of_setting(name)))
    if rng.random() < 0.1:
        params[rng.choice(["settings.bogus", "pue_typo", "v", "settings.\x1b[31m"])] = generated_text(rng)
    return params


def last(raw: Any) -> str:
    """The value a link uses: the last of a repeated parameter."""
    return str(raw[-1]) if isinstance(raw, list) else str(raw)


def setting_reference(name: str, text: str) -> tuple[str, Any]:
    """What a page setting's text must give: a range end as a table's range cell (:func:`fuzz_common.reference`),
    samples and seed as whole numbers within their bounds, a planner setting by the value parser and its bounds.
    """
    if name.endswith(("_low", "_high")) and not name.startswith(ui_links.PLAN_PREFIX):
        return reference(name, text, on_a_request_row=False)
    spec = _spec_of_setting(name)
    if not text.strip():
        return ("ok", None) if spec.optional and name not in WHOLE else ("bad", None)
    try:
        value = values.parse(spec, text)
    except (values.ValueProblem, ValueError, TypeError):
        return ("bad", None)
    if value is values.EMPTY:
        return ("bad", None)
    if spec.kind.numeric and not bounds_ok(spec, float(value)):
        return ("bad", None)
    return normal(value)


def scenario_reference(name: str, text: str, peak: float) -> tuple[str, Any]:
    """What a scenario parameter must give: :func:`fuzz_common.reference`, within the links' length limit, and a
    demand day checked against the link's own peak (``peak``)."""
    if len(text.strip()) > MAX_VALUE_CHARS:
        return ("bad", None)
    if name != "demand_profile":
        return reference(name, text, on_a_request_row=False)  # a value alone: the combination is decode_checked's
    try:  # the reference's own hourly check holds a day to the default peak: here the link's own
        value = values.parse(FIELDS[name], text)
    except values.ValueProblem:
        return ("bad", None)
    if value is values.EMPTY:
        return normal(FIELDS[name].default)
    canonical, problem = validation_hours.value_problem(name, str(value), peak)
    return ("bad", None) if problem is not None else normal(canonical)


def _cut(text: str) -> str:
    """A value for a reproducer: whole when short, else its start, its end and its length."""
    return repr(text) if len(text) <= 80 else f"{text[:40]!r} ... {text[-12:]!r} ({len(text):,} characters)"


def _named(key: str, warnings: list[str]) -> bool:
    return any(key in w for w in warnings)


def check_scenario(params: dict[str, Any], base: Any, found: dict[str, Any], warnings: list[str]) -> list[str]:
    """Mismatches between ``decode_query``'s reading of the scenario's parameters and the reference."""
    problems = []
    peak = found.get("peak_to_average", base.peak_to_average)
    for name, raw in params.items():
        if name not in FIELDS:
            continue
        text = last(raw)
        ref = scenario_reference(name, text, peak)
        if name in found:
            got = _empty_is_default(name, normal(found[name]))
            if got != ref:
                problems.append(f"{name}={_cut(text)}: the link read {got}, the reference {ref}")
        elif ref[0] == "ok":
            problems.append(f"{name}={_cut(text)}: refused ({[w for w in warnings if name in w][:1]}), the "
                            f"reference reads {ref}")
        elif not _named(name, warnings):
            problems.append(f"{name}={_cut(text)}: refused without a warning naming it: {warnings[:3]}")
    return problems


def check_settings(params: dict[str, Any], settings: dict[str, Any], warnings: list[str]) -> list[str]:
    """Mismatches between ``read_settings``'s reading of ``settings.*`` and the reference."""
    problems = []
    for name, raw in params.items():
        if name not in settings:
            if not _named(name[:60], warnings):
                problems.append(f"settings.{name[:60]!r}: unknown, and no warning names it")
            continue
        text = last(raw)
        ref = setting_reference(name, text)
        refused = _named(f"{ui_links.SETTINGS_PREFIX}{name}:", [w for w in warnings if "given" not in w])
        if not refused and normal(settings[name]) != ref:
            problems.append(f"settings.{name}={_cut(text)}: read as {normal(settings[name])}, the reference {ref}")
        elif refused and ref[0] == "ok":
            problems.append(f"settings.{name}={_cut(text)}: refused, the reference reads {ref}")
    return problems


def check_combination(params: dict[str, Any], base: Any) -> list[str]:
    """``decode_checked`` keeps only what ``decode_query`` read, names what it drops, and leaves no new problem."""
    read, _ = decode_query(params, base)
    kept, warnings = decode_checked(params, base)
    problems = [f"decode_checked kept {k}={v!r}, decode_query read {read.get(k)!r}" for k, v in kept.items()
                if k not in read or read[k] != v]
    problems += [f"decode_checked dropped {k}={read[k]!r} without a warning naming it: {warnings[-2:]}"
                 for k in read if k not in kept and not _named(k, warnings)]
    own = _own_problems(id(base), base)
    new = [p.message for p in validate(_frame(with_changes(base, **kept)))[1] if p.message not in own]
    if new:
        problems.append(f"decode_checked kept {sorted(kept)}, which validation refuses: {new[0]}")
    return problems


_OWN: dict[int, set[str]] = {}


def _own_problems(key: int, base: Any) -> set[str]:
    """The problems ``base`` has on its own (once per base: a validation takes half a second)."""
    if key not in _OWN:
        _OWN[key] = {p.message for p in validate(_frame(base.model_dump()))[1]}
    return _OWN[key]


def _frame(scenario: dict[str, Any]) -> Any:
    import pandas as pd  # noqa: PLC0415 - as economics.studies.links builds its check

    return pd.DataFrame([scenario], columns=list(FIELDS))


COMBINED_SHARE = 0.2
"""Cases whose scenario parameters are also checked together (``decode_checked``: validations of half a second)."""
BASE = economics.default_scenario()
DIURNAL_BASE = economics.default_scenario().model_copy(update={"demand_profile": "diurnal"})
"""A base whose day is diurnal: a link's ``peak_to_average`` alone must then stay under 23.976."""


def link_case(stage: Stage, rng: random.Random) -> None:
    """One generated link through the app's reader and its parts; its outcomes counted."""
    params = generated_query(rng)
    own = {k: v for k, v in params.items() if not k.startswith(("settings.", "plan.", "baseline."))}
    setting_params = {k[len(ui_links.SETTINGS_PREFIX):]: v for k, v in params.items()
                      if k.startswith(ui_links.SETTINGS_PREFIX)}
    setting_params.update({ui_links.PLAN_PREFIX + k[len(ui_links.OLD_PLAN_PREFIX):]: v for k, v in params.items()
                           if k.startswith(ui_links.OLD_PLAN_PREFIX)})
    base = BASE
    found: list[tuple[str, str]] = []
    try:
        ui_links.read_link(params)
        read, warnings = decode_query(own, base)
        found += [("mismatch", p) for p in check_scenario(own, base, read, warnings)]
        settings, setting_warnings = ui_links.read_settings(setting_params)
        found += [("mismatch", p) for p in check_settings(setting_params, settings, setting_warnings)]
        if rng.random() < COMBINED_SHARE:
            stage.counts["combination checked"] += 1
            found += [("mismatch", p) for p in check_combination(own, DIURNAL_BASE if rng.random() < 0.3 else BASE)]
    except Exception as exc:  # noqa: BLE001 - the readers must never raise: what they raised is the finding
        found.append(("traceback", "".join(traceback.format_exception(exc))[-1500:]))
    stage.cases += 1
    if not found:
        stage.counts["links read"] += 1
    for outcome, detail in found:
        stage.counts[outcome] += 1
        stage.keep(outcome, [], {}, f"{detail}\n      query: {values.shown(repr(params), 600)}")


def link_stage(cases: int, seed: int, tmp: Path, quick: bool = False) -> Stage:
    """The links stage: ``cases`` generated links (``tmp`` and ``quick`` unused: every case is in-process and fast)."""
    rng, stage = stage_rng(seed, "links"), Stage("links")
    while stage.cases < cases:
        link_case(stage, rng)
    return stage
