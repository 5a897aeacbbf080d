"""Ready-made scenarios from data/presets.csv; the first one is the built-in default the app starts on."""

from __future__ import annotations

from functools import cache
from typing import Any

from economics import catalog
from economics.schema.scenario import Scenario


def _scenario(row: dict[str, Any]) -> Scenario:
    fields = {k: v for k, v in row.items() if k in Scenario.model_fields and v != ""}
    return Scenario.model_validate(fields)


def preset_scenarios() -> dict[str, tuple[Scenario, str]]:
    """Preset name -> (scenario, note with the sources of its figures), in file order."""
    out: dict[str, tuple[Scenario, str]] = {}
    for row in catalog.presets().to_dict(orient="records"):
        s = _scenario({str(k): v for k, v in row.items()})
        out[s.name] = (s, str(row.get("note", "")))
    return out


def default_scenario() -> Scenario:
    """The built-in default scenario (first row of data/presets.csv): an owned fleet, so power and cooling show.
    A fresh copy each call (parsed once, as the catalog's presets are read once).
    """
    return _default().model_copy(deep=True)


@cache
def _default() -> Scenario:
    return next(iter(preset_scenarios().values()))[0]
