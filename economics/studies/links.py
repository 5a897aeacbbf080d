"""Shareable scenario links: a scenario as URL query parameters, and back, with a clear word for every bad value.

The query holds only the fields that differ from a base scenario (the app's default), under the scenario's own
field names, with human-readable values (``accelerator=b200&electricity_usd_per_kwh=0.12``) and a version
``v=1``. Decoding never raises: an unknown, repeated, over-long or out-of-range parameter comes back as a warning
naming the parameter and the value, and that field keeps its default.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

import pandas as pd

from economics import catalog
from economics.engine.batch import ScenarioError, as_scenario
from economics.schema import user_curves, validation_hours, values
from economics.schema.presets import default_scenario
from economics.schema.scenario import FIELDS, Scenario, with_changes
from economics.schema.validation import known_ids, validate
from economics.schema.values import capped, shown

VERSION = "1"
MAX_VALUE_CHARS = 200
RESERVED = frozenset({"v"})


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    return str(value)


def encode_query(scenario: Scenario | dict[str, Any], base: Scenario | None = None) -> dict[str, str]:
    """Query parameters for the fields of ``scenario`` that differ from ``base`` (empty fields as ``""``).

    >>> from economics import default_scenario
    >>> s = default_scenario().model_copy(update={"electricity_usd_per_kwh": 0.12})
    >>> encode_query(s, default_scenario())
    {'v': '1', 'electricity_usd_per_kwh': '0.12'}
    """
    s = as_scenario(scenario).model_dump()
    b = (base or Scenario()).model_dump()
    query = {"v": VERSION}
    for name in FIELDS:
        if s[name] != b[name]:
            query[name] = "" if s[name] is None else _text(s[name])
    return query


def setting_text(value: Any) -> str:
    """A page setting as a link writes it (``settings.<name>=<text>``): lists comma-separated, whole numbers
    without a decimal point, booleans as ``true``/``false``, nothing for None.

    >>> setting_text(("b200", "h200-sxm")), setting_text(2.0), setting_text(0.25), setting_text(True)
    ('b200,h200-sxm', '2', '0.25', 'true')
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (tuple, list)):
        return ",".join(str(v) for v in value)
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value) if isinstance(value, float) else str(value)


def query_string(query: Mapping[str, str]) -> str:
    """``a=1&b=x`` with URL escaping."""
    return urlencode(query)


BASELINE_PREFIX = "baseline."


def split_baseline(params: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(the scenario's parameters, the pinned baseline's parameters or None) from one query."""
    own = {k: v for k, v in params.items() if not str(k).startswith(BASELINE_PREFIX)}
    pinned = {str(k)[len(BASELINE_PREFIX):]: v for k, v in params.items() if str(k).startswith(BASELINE_PREFIX)}
    return own, (pinned or None)


MAX_UNKNOWN_LISTED = 20


def decode_query(params: Mapping[str, Any], base: Scenario | None = None) -> tuple[dict[str, Any], list[str]]:
    """Field values from query parameters, and warnings for what was ignored. Never raises.

    ``params`` maps names to a string or a list of strings (repeated parameters: the last one is used, and a
    warning says so). Each value is read by the one value parser (:mod:`economics.schema.values`, as for CSV cells) and
    checked against the field's bounds; a bad one is dropped with a warning naming the parameter and the value, so
    the rest of the link still applies. Unknown parameters are named in one warning (the first
    ``MAX_UNKNOWN_LISTED``, then a count).

    >>> decode_query({"pue": [], "accelerator_count": "1_000", "rent_includes_energy": "n"})
    ({'rent_includes_energy': False}, ['pue: no value given; the default is used', "accelerator_count: '1_000' is \
not a number; the default is used"])
    """
    base = base if isinstance(base, Scenario) else Scenario()
    found: dict[str, Any] = {}
    warnings: list[str] = []
    unknown: list[str] = []
    try:
        pairs = list(params.items())
    except Exception:  # not a mapping at all: nothing to read, and a word saying so
        return {}, [f"the link's parameters could not be read ({type(params).__name__}); the defaults are used"]
    # peak_to_average first: a demand profile is checked against the link's own peak, not the base scenario's
    pairs.sort(key=lambda pair: pair[0] != "peak_to_average")
    for raw_name, raw in pairs:
        name = raw_name if isinstance(raw_name, str) else str(raw_name)
        try:
            outcome = _one(name, raw, base, warnings, found.get("peak_to_average", base.peak_to_average))
        except Exception as exc:  # never fatal: the parameter is named and ignored
            warnings.append(f"{shown(name)}: could not be read ({type(exc).__name__}); the default is used")
            continue
        if outcome is _UNKNOWN:
            unknown.append(f"'{shown(name)}'")
        elif outcome is not _SKIP:
            found[name] = outcome
    if unknown:
        noun = "parameter" if len(unknown) == 1 else "parameters"
        warnings.append(f"unknown {noun} {capped(unknown, 'unknown parameters', MAX_UNKNOWN_LISTED)} ignored")
    return found, warnings


_UNKNOWN = object()
_SKIP = object()


def _one(name: str, raw: Any, base: Scenario, warnings: list[str], peak_to_average: float) -> Any:
    """The value of one parameter, or _UNKNOWN / _SKIP (a warning already given); a demand profile is checked
    against ``peak_to_average`` (the link's own when it gives one).
    """
    items = list(raw) if isinstance(raw, (list, tuple)) else [raw]
    if name in RESERVED:
        version = "" if not items else items[-1] if isinstance(items[-1], str) else str(items[-1])
        if version != VERSION:
            warnings.append(f"link version '{shown(version, 20)}' is not {VERSION}; reading it as version {VERSION}")
        return _SKIP
    if name not in FIELDS:
        return _UNKNOWN
    if not items:
        warnings.append(f"{name}: no value given; the default is used")
        return _SKIP
    if len(items) > 1:
        warnings.append(f"{name}: given {len(items)} times; the last value is used")
    item = items[-1]
    if isinstance(item, str) and len(item.strip()) > MAX_VALUE_CHARS:
        warnings.append(f"{name}: value longer than {MAX_VALUE_CHARS} characters ignored")
        return _SKIP
    try:
        value = _parse(name, item)
        as_scenario({**base.model_dump(), name: value})  # bounds and type, as for any scenario
        if name in validation_hours.HOURLY_FIELDS and value is not None:  # 24 hours or a catalog id
            value, problem = validation_hours.value_problem(name, str(value), peak_to_average)
            if problem is not None:
                raise ValueError(problem.split(": ", 1)[1])
    except ScenarioError as exc:  # its message already starts with the field name
        warnings.append(f"{exc}; the default is used")
        return _SKIP
    except (values.ValueProblem, values.CellTypeError, ValueError) as exc:
        warnings.append(f"{name}: {exc}; the default is used")
        return _SKIP
    return value


def _parse(name: str, raw: Any) -> Any:
    spec = FIELDS[name]
    value = values.parse(spec, raw)
    if value is values.EMPTY:  # as an empty CSV cell: the field's default (None for an optional field)
        return None if spec.optional else spec.default
    if name in values.ID_FIELDS:
        ids = known_ids(name)
        if value not in ids:
            raise ValueError(catalog.unknown_id_message(name, shown(raw.strip() if isinstance(raw, str) else value, 40),
                                                        ids).split(": ", 1)[1])
    if name == "curves_sha256" and not user_curves.SHA256.fullmatch(str(value)):
        # a well-formed hash is kept though the file is not loaded here: the page then asks for that file
        raise ValueError(user_curves.missing_message(str(value)).split(": ", 1)[1])
    return value


def decode_checked(params: Mapping[str, Any], base: Scenario | None = None) -> tuple[dict[str, Any], list[str]]:
    """:func:`decode_query`, then the link's values checked together with ``base`` (default: the app's default
    scenario) as one scenario. Never raises.

    When the combination is invalid (an accelerator whose catalog entry lacks a price the ownership needs, say),
    each new problem is a warning and the link's values it names (or whose catalog entry it concerns) are dropped;
    if the scenario still has new problems, every value of the link is dropped, naming them. Problems ``base``
    has on its own are not the link's doing and are left alone.
    """
    base = base if isinstance(base, Scenario) else default_scenario()
    found, warnings = decode_query(params, base)
    try:
        own = {p.message for p in _problems(base.model_dump())}
        for _attempt in range(2):
            problems = [p for p in _problems(with_changes(base, **found)) if p.message not in own]
            if not problems:
                return found, warnings
            named = ({p.field for p in problems} | {FIELDS[p.field].catalog_id or "" for p in problems
                                                     if p.field in FIELDS}) & set(found)
            for message in dict.fromkeys(p.message for p in problems):
                warnings.append(f"{message}; the link's values that lead to it are not used")
            if not named:  # the problem names none of the link's values: every one is dropped, each named
                warnings.append(f"the link's values ({', '.join(sorted(found))}) do not make a valid scenario "
                                "together; the defaults are used")
                return {}, warnings
            found = {k: v for k, v in found.items() if k not in named}
        if found and [p for p in _problems(with_changes(base, **found)) if p.message not in own]:
            warnings.append(f"the link's values ({', '.join(sorted(found))}) do not make a valid scenario together; "
                            "the defaults are used")
            found = {}
    except Exception as exc:  # never fatal
        warnings.append(f"the link could not be checked ({type(exc).__name__}); the defaults are used")
        found = {}
    return found, warnings


def _problems(scenario: dict[str, Any]) -> list[Any]:
    frame = pd.DataFrame([scenario], columns=list(FIELDS))
    return validate(frame)[1]
