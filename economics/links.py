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

from .batch import ScenarioError, as_scenario
from .scenario import FIELDS, Scenario, show_value

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


def query_string(query: Mapping[str, str]) -> str:
    """``a=1&b=x`` with URL escaping."""
    return urlencode(query)


BASELINE_PREFIX = "baseline."


def split_baseline(params: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(the scenario's parameters, the pinned baseline's parameters or None) from one query."""
    own = {k: v for k, v in params.items() if not str(k).startswith(BASELINE_PREFIX)}
    pinned = {str(k)[len(BASELINE_PREFIX):]: v for k, v in params.items() if str(k).startswith(BASELINE_PREFIX)}
    return own, (pinned or None)


def decode_query(params: Mapping[str, Any], base: Scenario | None = None) -> tuple[dict[str, Any], list[str]]:
    """Field values from query parameters, and warnings for what was ignored. Never raises.

    ``params`` maps names to a string or a list of strings (repeated parameters: the last one is used, and a
    warning says so). Each value is checked on its own against the field's type and bounds; a bad one is dropped
    with a warning naming it, so the rest of the link still applies.
    """
    base = base or Scenario()
    values: dict[str, Any] = {}
    warnings: list[str] = []
    for raw_name, raw in params.items():
        name = str(raw_name)
        items = [str(x) for x in raw] if isinstance(raw, (list, tuple)) else [str(raw)]
        if name in RESERVED:
            if items[-1] != VERSION:
                warnings.append(f"link version {items[-1][:20]!r} is not {VERSION}; reading it as version {VERSION}")
            continue
        if name not in FIELDS:
            warnings.append(f"unknown parameter '{name[:60]}' ignored")
            continue
        if len(items) > 1:
            warnings.append(f"{name}: given {len(items)} times; the last value is used")
        text = items[-1].strip()
        if len(text) > MAX_VALUE_CHARS:
            warnings.append(f"{name}: value longer than {MAX_VALUE_CHARS} characters ignored")
            continue
        try:
            value = _parse(name, text)
            as_scenario({**base.model_dump(), name: value})  # bounds and type, as for any scenario
        except ScenarioError as exc:  # its message already starts with the field name
            warnings.append(f"{exc}; the default is used")
            continue
        except ValueError as exc:
            warnings.append(f"{name}: {exc}; the default is used")
            continue
        values[name] = value
    return values, warnings


def _parse(name: str, text: str) -> Any:
    spec = FIELDS[name]
    if text == "":
        if spec.optional:
            return None
        raise ValueError("empty value")
    if spec.kind in ("float", "int"):
        try:
            number = float(text)
        except ValueError:
            raise ValueError(f"'{text[:40]}' is not a number") from None
        if number != number or number in (float("inf"), float("-inf")):
            raise ValueError(f"{text[:40]} is not a finite number")
        if spec.kind == "int":
            if not number.is_integer():
                raise ValueError(f"must be a whole number, got {show_value(number)}")
            return int(number)
        return number
    if spec.kind == "bool":
        low = text.lower()
        if low in ("true", "1", "yes"):
            return True
        if low in ("false", "0", "no"):
            return False
        raise ValueError(f"'{text[:40]}' is not true or false")
    if name in ("accelerator", "decode_accelerator", "new_accelerator", "model"):
        from . import catalog

        ids = list(catalog.models().index) if name == "model" else catalog.accelerator_ids()
        if text.lower() not in ids:
            raise ValueError(catalog.unknown_id_message(name, text[:40], ids).split(": ", 1)[1])
        return text.lower()
    if spec.kind == "choice":
        low = text.lower()
        if low not in spec.choices:
            raise ValueError(f"'{text[:40]}' is not one of {', '.join(spec.choices)}")
        return low
    return text
