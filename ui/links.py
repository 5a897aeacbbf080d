"""The full-state link: the working scenario, the page settings and the baseline as one URL query, and back.

Pure functions (no Streamlit) so they can be tested directly. The scenario and the baseline are encoded by
:mod:`economics.studies.links` as their differences from the global default scenario
(:func:`economics.default_scenario`,
the one the app starts on), so a value equal to a default is simply absent and reads back as that same default.
Page settings (compared accelerators, Monte Carlo samples and seed, the Decode page's odds' samples and seed
(``odds_samples``, ``odds_seed``), uncertainty ranges, the planner's settings
``plan_*``) travel as ``settings.<name>`` and the baseline as ``baseline.<field>``; a planner link of the earlier
form ``plan.<setting>`` is read as ``settings.plan_<setting>``. Reading never raises: every bad, empty, unknown or
out-of-range parameter comes back as a warning naming it, and its value stays at the default.

A link may name a stored scenario version, ``scenario=NAME@VERSION`` (:mod:`economics.store`, the Library page):
the link then opens that version, read from the store (so it resolves after a restart), and its scenario fields are
the changes made to it since, encoded as their differences from that version rather than from the default.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import economics
from economics import FIELDS, catalog, store
from economics.schema import values
from economics.schema.validation import range_end
from economics.studies import planner
from economics.studies.links import (
    BASELINE_PREFIX,
    decode_query,
    encode_query,
    query_string,
    setting_text,
    split_baseline,
)
from economics.studies.uncertainty import RANGED_FIELDS as STUDY_RANGED_FIELDS

SETTINGS_PREFIX = "settings."
PLAN_PREFIX = "plan_"
OLD_PLAN_PREFIX = "plan."
"""Planner settings are ``plan_<name of economics.studies.planner.PLAN_FIELDS>``; earlier Plan links said
``plan.<name>``."""
RANGED_FIELDS = STUDY_RANGED_FIELDS
"""Fields the Uncertainty page may put a range on (:data:`economics.studies.uncertainty.RANGED_FIELDS`; the
conditional ones where they apply)."""
COMPARE_DEFAULT = ("h100-sxm", "h200-sxm", "b200", "gb200-nvl72", "mi300x", "mi355x")
PLAN_ACCELERATORS_DEFAULT = ("h100-sxm", "h200-sxm", "b200", "gb200-nvl72", "mi300x", "mi355x", "gaudi3")
PLAN_DEFAULTS: dict[str, Any] = {"demand_profile": "diurnal"}
"""Where the Plan page starts away from :class:`economics.studies.planner.PlanSettings` (a diurnal day rather than
every hour
at the peak); every other planner setting starts at the planner's default (no TTFT target: the default scenario's
measured throughput has no prefill figure to check one with)."""
PLAN_EXAMPLE: dict[str, Any] = {
    "model": "llama-3.1-70b", "precision": "fp8", "target_output_tokens_per_s_per_user": 30.0,
    "demand_output_tokens_per_day": 2e10, "demand_input_tokens_per_day": None, "input_tokens_per_request": 2000.0,
    "output_tokens_per_request": 500.0, "peak_to_average": 2.0, "facility_cooling": "air",
    "allow_liquid_retrofit": False, "site_power_mw": 2.0, "accelerator": "h100-sxm", "existing_accelerators": 64,
    "output_tokens_per_s_per_accelerator": None, "input_tokens_per_s_per_accelerator": None,
    "accelerator_count": None,
}
PLAN_EXAMPLE_SETTINGS: dict[str, Any] = {"plan_ttft_target_s": 2.0}
"""The Plan page's worked planning example (its button, ui/plan.py), offered when the scenario has no model:
:data:`PLAN_EXAMPLE` on the scenario (Llama 3.1 70B in fp8 at 30 tokens/s per user, 20 B output tokens a day, a
2 MW air-cooled site that already owns 64 H100s) and a 2 s time to first token at the 99th percentile; every other
field and setting is kept. Here rather than in the page so that `bench/plan.py` reads it without running the page."""
SAMPLES_BOUNDS = (100, 100_000)
ODDS_SAMPLES = 2_000
"""The Decode page's draws for its odds unless the link says otherwise (``settings.odds_samples``, with
``settings.odds_seed``: the Decode page's own, apart from the Uncertainty page's ``samples`` and ``seed``)."""
SEED_BOUNDS = (0, 2**32 - 1)
MAX_LIST_ITEMS = 40
STORED_PARAM = "scenario"
"""The parameter naming the stored scenario version a link opens: ``scenario=NAME@VERSION``."""
MAX_REFERENCE_CHARS = 220
"""The longest ``NAME@VERSION`` a link may carry (a stored name is at most 200 characters)."""


@cache
def default_scenario() -> dict[str, Any]:
    """The global default scenario as a plain dict (a fresh copy is made by callers that edit it)."""
    return economics.default_scenario().model_dump()


PANELS = ("benchmark", "hours", "save", "plan_hours", "candidates", "share", "calibration", "plan_settings")
"""Panels drawn only while open (:func:`ui.common.panel`); the open ones are the page setting ``open``, so a link
opens them: Throughput's upload of your own benchmark, the Cost page's 24 hours as a table and its save to the
library, the Plan page's hours as a table and its candidates considered, every page's share link, Throughput's
calibration points of the scenario's accelerator, and the Plan page's less used planner settings
(``ui.plan.MORE_SETTINGS``)."""


def default_settings() -> dict[str, Any]:
    """Page settings at their defaults: ranges None mean "the default factors around the base value"."""
    ids = set(catalog.accelerator_ids())
    settings: dict[str, Any] = {"compare": tuple(a for a in COMPARE_DEFAULT if a in ids), "samples": 10_000,
                                "seed": 0, "odds_samples": ODDS_SAMPLES, "odds_seed": 0, "open": ()}
    for field in RANGED_FIELDS:
        settings[f"{field}_low"] = None
        settings[f"{field}_high"] = None
    settings[PLAN_PREFIX + "accelerators"] = tuple(a for a in PLAN_ACCELERATORS_DEFAULT if a in ids)
    plan_defaults = planner.PlanSettings()
    for name in planner.PLAN_FIELDS:
        settings[PLAN_PREFIX + name] = PLAN_DEFAULTS.get(name, getattr(plan_defaults, name))
    return settings


def plan_settings(settings: Mapping[str, Any]) -> planner.PlanSettings:
    """The planner's settings out of the page settings.

    >>> plan_settings(default_settings()).demand_profile
    'diurnal'
    """
    return planner.PlanSettings(**{name: settings[PLAN_PREFIX + name] for name in planner.PLAN_FIELDS})


def _ids(text: str, bounds_name: str) -> tuple[str, ...]:
    items = [t.strip().lower() for t in text.split(",") if t.strip()]
    if len(items) > MAX_LIST_ITEMS:
        raise ValueError(f"more than {MAX_LIST_ITEMS} accelerators")
    ids = catalog.accelerator_ids()
    unknown = [t for t in items if t not in ids]
    if unknown:
        raise ValueError(catalog.unknown_id_message(bounds_name, unknown[0][:40], ids).split(": ", 1)[-1])
    return tuple(dict.fromkeys(items))


def _panels(text: str) -> tuple[str, ...]:
    """The open panels, in :data:`PANELS`' order (one spelling of each state's link)."""
    items = {t.strip().lower() for t in text.split(",") if t.strip()}
    unknown = sorted(items - set(PANELS))
    if unknown:
        raise ValueError(f"{unknown[0][:40]!r} is not one of {', '.join(PANELS)}")
    return tuple(p for p in PANELS if p in items)


def _plan_setting(name: str, text: str) -> Any:
    """One planner setting (``name`` without the ``plan_`` prefix) from its text, by the planner's own parser."""
    spec = planner.PLAN_FIELDS[name]
    if text == "":
        if spec.optional:
            return None
        raise ValueError("needs a value (empty is allowed only where empty means no limit)")
    if name == "demand_profile" and text.lower() in ("peak", "flat", "diurnal"):
        text = text.lower()  # the planner reads a named profile in any case; one spelling keeps links equal
    try:
        return getattr(planner.settings_from_row({name: text}), name)
    except ValueError as exc:
        raise ValueError(str(exc).split(": ", 1)[-1]) from None


def _whole(text: str, bounds: tuple[int, int]) -> int:
    """A whole number read by the one value parser (``1_000``, ``1,000`` and non-ASCII digits refused, as in every
    file and link field), within ``bounds``."""
    try:
        value = values.number(text)
        if value is values.EMPTY:
            raise values.ValueProblem("needs a value")
        whole = values.whole(float(value))  # type: ignore[arg-type]
    except values.ValueProblem as exc:
        raise ValueError(str(exc)) from None
    if not bounds[0] <= whole <= bounds[1]:
        raise ValueError(f"must be a whole number from {bounds[0]:,} to {bounds[1]:,}, got {values.shown(text, 40)}")
    return whole


def _range_end(name: str, text: str) -> float | None:
    """A range end read as a table's ``<field>_low`` / ``<field>_high`` cell is: the one value parser and the
    field's bounds (:func:`economics.schema.validation.range_end`)."""
    try:
        return range_end(name, text)
    except values.ValueProblem as exc:
        raise ValueError(str(exc).split(": ", 1)[-1]) from None


def parse_setting(name: str, text: str) -> Any:
    """One page setting from its link text; ValueError with the reason when it is not valid.

    >>> parse_setting("samples", "5000"), parse_setting("compare", "b200,h100-sxm"), parse_setting("pue_low", "")
    (5000, ('b200', 'h100-sxm'), None)
    >>> parse_setting("plan_objective", "npv"), parse_setting("plan_ttft_target_s", "")
    ('npv', None)
    >>> parse_setting("plan_spares", "false"), parse_setting("open", " benchmark ")
    (False, ('benchmark',))
    """
    text = text.strip()
    if name in ("compare", PLAN_PREFIX + "accelerators"):
        return _ids(text, "accelerator")
    if name.startswith(PLAN_PREFIX) and name[len(PLAN_PREFIX):] in planner.PLAN_FIELDS:
        return _plan_setting(name[len(PLAN_PREFIX):], text)
    if name in ("samples", "odds_samples"):
        return _whole(text, SAMPLES_BOUNDS)
    if name in ("seed", "odds_seed"):
        return _whole(text, SEED_BOUNDS)
    if name == "open":
        return _panels(text)
    if name in default_settings():  # a range end
        return _range_end(name, text)
    raise KeyError(name)


MAX_SETTING_CHARS = 2000
"""The longest page setting a link may carry (a list of every catalog accelerator fits); a longer one is refused
whole, never cut to this length and read."""


def _items(raw: Any) -> list[str]:
    return [str(x) for x in raw] if isinstance(raw, (list, tuple)) else [str(raw)]


def _short(text: str) -> str:
    return text[:60] + ("..." if len(text) > 60 else "")


def read_settings(params: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Page settings from ``settings.*`` parameters (prefix already removed), and a warning for each bad one."""
    settings = default_settings()
    warnings: list[str] = []
    for name, raw in params.items():
        items = _items(raw)
        if name not in settings:
            warnings.append(f"unknown parameter '{SETTINGS_PREFIX}{_short(name)}' ignored")
            continue
        if len(items) > 1:
            warnings.append(f"{SETTINGS_PREFIX}{name}: given {len(items)} times; the last value is used")
        if len(items[-1].strip()) > MAX_SETTING_CHARS:  # refused whole, as a scenario field's value is (never cut)
            warnings.append(f"{SETTINGS_PREFIX}{name}: value longer than {MAX_SETTING_CHARS:,} characters; the "
                            "default is used")
            continue
        try:
            settings[name] = parse_setting(name, items[-1])
        except ValueError as exc:
            warnings.append(f"{SETTINGS_PREFIX}{name}: {exc}; the default is used")
    return settings, warnings


@dataclass(frozen=True)
class Stored:
    """A stored scenario version the working scenario was opened from or saved as: its name, its version and the
    whole scenario it reads as (the default scenario's values where it gives none).
    """

    name: str
    version: int
    scenario: dict[str, Any]

    @property
    def reference(self) -> str:
        """``NAME@VERSION``, as a link and the CLI's ``--scenario`` name it."""
        return f"{self.name}@{self.version}"


def stored_version(reference: str) -> Stored:
    """The stored scenario version ``NAME[@VERSION]`` (no version: the newest), read from the store and checked by
    the scenario schema (:func:`economics.store.resolve`); :class:`~economics.store.StoreError` naming what is
    wrong otherwise.
    """
    found = store.resolve(reference)
    scenario = economics.with_changes(economics.default_scenario(), **(found.fields or {}), name=found.name)
    return Stored(found.name, found.version, economics.Scenario.model_validate(scenario).model_dump())


def read_stored(raw: Any, resolve: Callable[[str], Stored] = stored_version) -> tuple[Stored | None, list[str]]:
    """The stored version a link's ``scenario=`` parameter names, or None with a warning naming the parameter and
    the reason (not in the store, no such version, a value the schema refuses, no store). Never raises.
    """
    items = _items(raw)
    warnings = [f"{STORED_PARAM}: given {len(items)} times; the last value is used"] if len(items) > 1 else []
    text = items[-1].strip()
    if not text or len(text) > MAX_REFERENCE_CHARS:
        why = "empty" if not text else f"longer than {MAX_REFERENCE_CHARS} characters"
        return None, [*warnings, f"{STORED_PARAM}: {why}; the default scenario is used"]
    try:
        return resolve(text), warnings
    except store.StoreError as exc:
        return None, [*warnings, f"{STORED_PARAM}: {exc}; the default scenario is used"]
    except ValueError as exc:  # stored fields valid alone that the scenario model refuses together
        first = (str(exc).splitlines()[1:2] or [str(exc)])[0].strip()
        return None, [*warnings, f"{STORED_PARAM}: {values.shown(text, 60)}: {first}; the default scenario is used"]


def _scenario_from(params: Mapping[str, Any], prefix: str,
                   stored: Stored | None = None) -> tuple[dict[str, Any], list[str]]:
    """A whole valid scenario from a link's parameters: the global default (or the ``stored`` version the link
    opens) with the link's values applied.

    Each value is checked on its own (a bad one is named and left at the default); values that are valid alone are
    kept even when the engine cannot evaluate them together (sn50 owned without a price): the state the link was
    made from is reproduced, a warning names the problem and the page says what to add.
    """
    base = economics.default_scenario() if stored is None else economics.Scenario.model_validate(stored.scenario)
    values, warnings = decode_query(params, base)
    warnings = [f"{prefix}{w}" for w in warnings]
    try:
        scenario = economics.Scenario.model_validate(economics.with_changes(base, **values)).model_dump()
    except ValueError as exc:  # each value was valid alone; together they are not
        first = str(exc).splitlines()[1:2] or [str(exc)]
        fallback = "the default scenario" if stored is None else f"the stored {stored.reference}"
        warnings.append(f"{prefix}the link's values do not fit together ({first[0].strip()}); {fallback} is used")
        return (default_scenario() if stored is None else dict(stored.scenario)), warnings
    try:
        economics.evaluate_scenario(scenario)
    except economics.ScenarioError as exc:
        warnings.append(f"{prefix}the link's scenario cannot be evaluated as it stands: {exc}")
    return scenario, warnings


@dataclass(frozen=True)
class Link:
    """Everything a link holds: the scenario, the page settings, the baseline, the stored version it opens (None:
    none) and a warning for each parameter that could not be used.
    """

    scenario: dict[str, Any]
    settings: dict[str, Any]
    baseline: dict[str, Any] | None
    stored: Stored | None
    warnings: list[str]


def read_whole_link(params: Mapping[str, Any], resolve: Callable[[str], Stored] = stored_version) -> Link:
    """The whole state a URL query holds (:class:`Link`); ``resolve`` reads a ``scenario=NAME@VERSION`` from the
    store. Never raises.

    >>> link = read_whole_link({"pue": "5", "settings.seed": "3", "baseline.pue": "x"})
    >>> link.scenario["pue"], link.settings["seed"], link.baseline is not None, link.stored, link.warnings
    (5.0, 3, True, None, ["baseline.pue: 'x' is not a number; the default is used"])
    """
    params = {(SETTINGS_PREFIX + PLAN_PREFIX + str(k)[len(OLD_PLAN_PREFIX):] if str(k).startswith(OLD_PLAN_PREFIX)
               else k): v for k, v in params.items()}
    own = {str(k): v for k, v in params.items() if not str(k).startswith(SETTINGS_PREFIX)}
    settings_params = {str(k)[len(SETTINGS_PREFIX):]: v for k, v in params.items()
                       if str(k).startswith(SETTINGS_PREFIX)}
    own, pinned = split_baseline(own)
    own = dict(own)
    stored, warnings = read_stored(own.pop(STORED_PARAM), resolve) if STORED_PARAM in own else (None, [])
    scenario, scenario_warnings = _scenario_from(own, "", stored)
    settings, setting_warnings = read_settings(settings_params)
    baseline = None
    if pinned is not None:
        baseline, baseline_warnings = _scenario_from(pinned, BASELINE_PREFIX)
        scenario_warnings += baseline_warnings
    return Link(scenario, settings, baseline, stored, warnings + scenario_warnings + setting_warnings)


def read_link(params: Mapping[str, Any], resolve: Callable[[str], Stored] = stored_version,
              ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any] | None, list[str]]:
    """(scenario, settings, baseline or None, warnings) from a URL query. Never raises (:func:`read_whole_link`
    also gives the stored version a ``scenario=`` parameter opens).

    >>> s, settings, baseline, warnings = read_link({"pue": "5", "settings.seed": "3", "baseline.pue": "x"})
    >>> s["pue"], settings["seed"], baseline is not None, warnings
    (5.0, 3, True, ["baseline.pue: 'x' is not a number; the default is used"])
    """
    link = read_whole_link(params, resolve)
    return link.scenario, link.settings, link.baseline, link.warnings


def link_query(scenario: Mapping[str, Any], settings: Mapping[str, Any], baseline: Mapping[str, Any] | None,
               stored: Stored | None = None) -> dict[str, str]:
    """The URL query for the whole state: the scenario's differences from the global default (with the version),
    or, when it was opened from (or saved as) a ``stored`` version, that version's reference and the scenario's
    differences from it; the settings that differ from their defaults, and the baseline's differences under
    ``baseline.``.

    >>> link_query({**default_scenario(), "pue": 1.3}, {**default_settings(), "seed": 7}, None)
    {'v': '1', 'pue': '1.3', 'settings.seed': '7'}
    >>> link_query({**default_scenario(), "pue": 1.3}, default_settings(), None,
    ...            Stored("q3", 2, {**default_scenario(), "pue": 1.2}))
    {'v': '1', 'scenario': 'q3@2', 'pue': '1.3'}
    """
    base = economics.default_scenario()
    if stored is None:
        query = encode_query(dict(scenario), base)
    else:
        changed = encode_query(dict(scenario), economics.Scenario.model_validate(stored.scenario))
        query = {"v": changed.pop("v"), STORED_PARAM: stored.reference, **changed}
    defaults = default_settings()
    for name, value in settings.items():
        if name in defaults and value != defaults[name]:
            query[SETTINGS_PREFIX + name] = setting_text(value)
    if baseline is not None:
        query.update({BASELINE_PREFIX + k: v for k, v in encode_query(dict(baseline), base).items()})
    return query


def link_text(base_url: str, query: Mapping[str, str]) -> str:
    """The link to copy."""
    return f"{base_url}?{query_string(query)}"


def field_names() -> tuple[str, ...]:
    """Every scenario field (the link's parameter names)."""
    return tuple(FIELDS)
