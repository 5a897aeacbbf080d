"""What goes into the store and what comes out: names and text checked, JSON written and read strictly, sizes
bounded, and every scenario checked by the scenario schema on the way in and again on the way out.

A scenario is kept as the fields it gives (a JSON object of field -> value, the same keys as a CSV's columns and a
link's parameters); reading it back runs the same parser and checks as a CSV row (:func:`checked_fields`), so a row
edited in the database by hand is refused naming the field, never evaluated half-read.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import pandas as pd

from economics.io.scenario_files import read_scenarios_json
from economics.schema import values
from economics.schema.scenario import FIELDS
from economics.schema.validation import InputError, Problem, validate
from economics.schema.validation_hours import HOUR_LIST_FIELDS
from economics.schema.values import LONE_SURROGATE, escape_controls, shown
from economics.store.errors import InvalidStored, StoreError, TooLarge
from economics.store.limits import NAME_CHARS, PROJECT_CHARS, WHO_CHARS

MAX_DOCUMENT_BYTES = 500_000_000
"""The largest file ``store import`` or ``store save --study`` reads [bytes] (a store export)."""
MAX_SCENARIO_BYTES = 200_000
"""The largest scenario (its fields as JSON) [bytes]: a scenario is about 130 fields, a few kB."""
MAX_NOTE_CHARS = 2_000
"""The longest note saved with a version or a study."""
MAX_STUDY_BYTES = 20_000_000
"""The largest study (its inputs and results as JSON, each) [bytes]: a plan with its frontiers is under a MB."""
MAX_VERSIONS_LISTED = 10_000
"""The most rows one list or history answers (a page of them; ``offset`` reads on)."""
MAX_PROBLEMS_SHOWN = 10
_VERSION = re.compile(r"(.*)@([0-9]{1,9})")


class StudyKind(StrEnum):
    """The kinds of study the store keeps (each one's inputs and results are the JSON its command writes)."""

    PLAN = "plan"
    RETROFIT = "retrofit"
    UNCERTAINTY = "uncertainty"
    COMPARE = "compare"
    KV_MEMORY = "kv-memory"
    SWEEP = "sweep"
    DECODE = "decode"
    OTHER = "other"


def checked_text(what: str, value: Any, limit: int, empty: bool = False) -> str:
    """``value`` as text of at most ``limit`` characters, without control characters or spaces around it (a name,
    a person, a project); :class:`StoreError` naming ``what`` otherwise.

    >>> checked_text("name", "budget q3", 200)
    'budget q3'
    """
    if not isinstance(value, str):
        raise StoreError(f"{what}: must be text, got {shown(value)}", what, value)
    if not value and not empty:
        raise StoreError(f"{what}: empty; give one", what, value)
    if len(value) > limit:
        raise TooLarge(f"{what}: {len(value):,} characters, more than the {limit:,} allowed", what, shown(value))
    if value != value.strip() or escape_controls(value) != value or LONE_SURROGATE.search(value):
        raise StoreError(f"{what}: {shown(value)} has spaces around it or control characters; give plain text",
                         what, value)
    return value


def checked_name(value: Any, what: str = "name") -> str:
    """A scenario's, study's or curve's name: plain text of 1 to :data:`NAME_CHARS` characters."""
    return checked_text(what, value, NAME_CHARS)


def checked_who(value: Any) -> str:
    """Who saves: plain text of 1 to :data:`WHO_CHARS` characters."""
    return checked_text("saved_by", value, WHO_CHARS)


def checked_project(value: Any) -> str:
    """A project tag ('' for none): plain text of at most :data:`PROJECT_CHARS` characters."""
    return checked_text("project", value, PROJECT_CHARS, empty=True)


def checked_note(value: Any) -> str:
    """A note: text of at most :data:`MAX_NOTE_CHARS` characters (line breaks allowed, kept as plain text)."""
    if not isinstance(value, str):
        raise StoreError(f"note: must be text, got {shown(value)}", "note", value)
    if len(value) > MAX_NOTE_CHARS:
        raise TooLarge(f"note: {len(value):,} characters, more than the {MAX_NOTE_CHARS:,} allowed", "note")
    if "\x00" in value or LONE_SURROGATE.search(value):
        raise StoreError("note: holds a NUL character or a lone surrogate; give plain text", "note")
    return value


def reference(text: str) -> tuple[str, int | None]:
    """``NAME[@VERSION]`` split: the name and the version number (None: the newest).

    >>> reference("budget@3"), reference("budget"), reference("a@b")
    (('budget', 3), ('budget', None), ('a@b', None))
    """
    match = _VERSION.fullmatch(text)
    if match and match.group(1):
        return match.group(1), int(match.group(2))
    return text, None


def dumps(value: Any, what: str, limit: int) -> str:
    """Strict JSON text of ``value`` (no NaN or Infinity: :class:`StoreError` naming ``what``), at most ``limit``
    bytes (:class:`TooLarge`).
    """
    try:
        text = json.dumps(value, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
    except ValueError as exc:
        raise StoreError(f"{what}: {exc}: not finite JSON (NaN and Infinity have no JSON spelling)", what) from None
    except TypeError as exc:
        raise StoreError(f"{what}: not JSON: {exc}", what) from None
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > limit:
        raise TooLarge(f"{what}: {size:,} bytes of JSON, more than the {limit:,} allowed", what)
    if "\\u0000" in text or LONE_SURROGATE.search(text):
        raise StoreError(f"{what}: holds a NUL character or a lone surrogate", what)
    return text


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def loads(text: Any, where: str, column: str) -> Any:
    """JSON read back from a column, strictly; :class:`InvalidStored` naming the object and the column otherwise."""
    if not isinstance(text, str):
        raise InvalidStored(f"{where}: {column}: not text in the database", column)
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as exc:
        raise InvalidStored(f"{where}: {column}: not valid JSON in the database ({shown(str(exc), 120)})",
                            column) from None


def scenario_frame(rows: Sequence[Mapping[str, Any]], where: list[str]) -> pd.DataFrame:
    """The scenarios (one fields object each, ``where[i]`` naming the i-th) as the CSV reader gives them, every
    value parsed and every combination checked by the scenario schema in one pass; :class:`InvalidStored`
    naming the scenario, its version and each field otherwise.
    """
    for i, fields in enumerate(rows):
        if not isinstance(fields, Mapping) or not all(isinstance(k, str) for k in fields):
            raise InvalidStored(f"{where[i]}: fields: not a JSON object of field names and values", "fields")
        unknown = [k for k in fields if k not in FIELDS]
        if unknown:
            raise InvalidStored(f"{where[i]}: {shown(unknown[0])}: not a scenario field", unknown[0])
    try:
        frame = read_scenarios_json(json.dumps(list(rows), allow_nan=False))
    except (InputError, ValueError) as exc:
        raise InvalidStored(f"{where[0] if len(where) == 1 else 'scenarios'}: {exc}") from None
    _, problems = validate(frame)
    if problems:
        raise _invalid(problems, where)
    return frame


def named(name: str, fields: Any, where: str) -> dict[str, Any]:
    """Stored fields with the scenario's ``name``; :class:`InvalidStored` when they are not a JSON object."""
    if not isinstance(fields, Mapping):
        raise InvalidStored(f"{where}: fields: not a JSON object of field names and values", "fields")
    return {**fields, "name": name}


def _invalid(problems: list[Problem], where: list[str]) -> InvalidStored:
    records = [{"row": p.row + 1, "name": where[p.row], "field": p.field, "value": p.value,
                "message": f"{where[p.row]}: {p.message}"} for p in problems]
    more = f"; … and {len(problems) - MAX_PROBLEMS_SHOWN:,} more" if len(problems) > MAX_PROBLEMS_SHOWN else ""
    first = problems[0]
    return InvalidStored("; ".join(r["message"] for r in records[:MAX_PROBLEMS_SHOWN]) + more, first.field,
                         first.value, records)


def checked_fields(fields: Any, where: str) -> dict[str, Any]:
    """One scenario's fields checked (:func:`scenario_frame`), without ``name`` (the store's name is its name),
    each value as the schema reads it (:func:`typed`).
    """
    scenario_frame([fields], [where])
    return typed({k: v for k, v in fields.items() if k != "name"})


def typed(fields: Mapping[str, Any]) -> dict[str, Any]:
    """Checked fields with each value as its field's parser reads it (``"8"`` from a CSV cell is 8, ``"H100-SXM"``
    is ``h100-sxm``), empty ones left out and hourly lists kept as given: one spelling per value, so versions
    compare field by field.

    >>> typed({"accelerator_count": "8", "accelerator": "H100-SXM", "pue": ""})
    {'accelerator_count': 8, 'accelerator': 'h100-sxm'}
    """
    out = {}
    for name, value in fields.items():
        parsed = value if name in HOUR_LIST_FIELDS else values.parse(FIELDS[name], value)
        if parsed is not values.EMPTY:
            out[name] = parsed
    return out


def changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[dict[str, Any]]:
    """What changed from one version's fields to the next: ``{"field", "before", "after"}`` for each field whose
    value differs (None: not given), in the schema's order.

    >>> changes({"pue": 1.2}, {"pue": 1.3, "accelerator": "b200"})
    [{'field': 'accelerator', 'before': None, 'after': 'b200'}, {'field': 'pue', 'before': 1.2, 'after': 1.3}]
    """
    return [{"field": f, "before": before.get(f), "after": after.get(f)} for f in FIELDS
            if before.get(f) != after.get(f)]


def utc(moment: dt.datetime) -> dt.datetime:
    """A time read back as UTC (SQLite returns it without its zone)."""
    return moment.replace(tzinfo=dt.UTC) if moment.tzinfo is None else moment.astimezone(dt.UTC)


def finite(value: Any) -> bool:
    """Whether every number in a JSON-like value is finite."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, Mapping):
        return all(finite(v) for v in value.values())
    if isinstance(value, list | tuple):
        return all(finite(v) for v in value)
    return True


@dataclass(frozen=True)
class VersionInfo:
    """One saved version of a scenario: its number, who saved it and when, what changed, the note and the engine's
    version; ``fields`` its fields (checked by the scenario schema) when read whole.
    """

    name: str
    version: int
    saved_by: str
    saved_at: dt.datetime
    engine_version: str
    note: str
    changes: list[dict[str, Any]]
    project: str = ""
    fields: dict[str, Any] | None = None

    @property
    def reference(self) -> str:
        """``name@version``: how the CLI's ``--scenario`` and a link name it."""
        return f"{self.name}@{self.version}"

    def scenario(self) -> dict[str, Any]:
        """The scenario as a dict of fields, ``name`` set to the stored name (what the engine and a CSV row take)."""
        return {"name": self.name, **(self.fields or {})}

    def as_json(self) -> dict[str, Any]:
        """The version as JSON (what ``store show`` and the HTTP API answer)."""
        doc = {"name": self.name, "version": self.version, "project": self.project, "saved_by": self.saved_by,
               "saved_at": self.saved_at.isoformat(), "engine_version": self.engine_version, "note": self.note,
               "changes": self.changes}
        if self.fields is not None:
            doc["fields"] = self.fields
        return doc


@dataclass(frozen=True)
class ScenarioSummary:
    """A scenario in a list: its name, project, newest version and who saved it when."""

    name: str
    project: str
    latest_version: int
    saved_by: str
    saved_at: dt.datetime

    def as_json(self) -> dict[str, Any]:
        """The summary as JSON."""
        return {"name": self.name, "project": self.project, "latest_version": self.latest_version,
                "saved_by": self.saved_by, "saved_at": self.saved_at.isoformat()}


@dataclass(frozen=True)
class CurveInfo:
    """A stored curve file: its hash, name, points, provenance (tool, version, source file, run date...)."""

    sha256: str
    name: str
    points: int
    provenance: dict[str, Any]
    project: str
    saved_by: str
    saved_at: dt.datetime

    def as_json(self) -> dict[str, Any]:
        """The curve's record as JSON (not its bytes)."""
        return {"sha256": self.sha256, "name": self.name, "points": self.points, "provenance": self.provenance,
                "project": self.project, "saved_by": self.saved_by, "saved_at": self.saved_at.isoformat()}


@dataclass(frozen=True)
class StudyInfo:
    """A stored study: its name, kind, the scenario version it was computed from, inputs and results (JSON)."""

    name: str
    kind: StudyKind
    project: str
    scenario_name: str
    scenario_version: int | None
    saved_by: str
    saved_at: dt.datetime
    engine_version: str
    note: str
    inputs: Any = None
    results: Any = None

    def as_json(self, whole: bool = True) -> dict[str, Any]:
        """The study as JSON (with its inputs and results when ``whole``)."""
        doc = {"name": self.name, "kind": self.kind.value, "project": self.project,
               "scenario_name": self.scenario_name, "scenario_version": self.scenario_version,
               "saved_by": self.saved_by, "saved_at": self.saved_at.isoformat(),
               "engine_version": self.engine_version, "note": self.note}
        if whole:
            doc.update(inputs=self.inputs, results=self.results)
        return doc
