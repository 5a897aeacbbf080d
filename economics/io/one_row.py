"""The row a one-row command works on (explain, compare, retrofit, uncertainty, sweep, plan, report), and the
evaluation of a chunk of rows, as the CLI and the HTTP API both do them: one rule for finding a row, checking it and
filling in ``--curves``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from economics.engine.batch import ScenarioError, evaluate_with_report, session_profile
from economics.io import row_lookup
from economics.io.reading import Source
from economics.lazy import LazyModule
from economics.schema.scenario import FIELDS
from economics.schema.validation import RANGE_COLUMNS, Problem, validate
from economics.schema.values import capped, shown

TYPE_CHECKING = False  # typing.TYPE_CHECKING
if TYPE_CHECKING:
    from economics.studies import uncertainty
else:  # imported when a table is evaluated: with the retrofit and compare studies it brings, no part of a plan's run
    uncertainty = LazyModule("economics.studies.uncertainty")


class InvalidRow(Exception):
    """The row a one-row command works on is invalid: ``lines`` read ``row N (name): message`` and ``problems`` are
    the same problems as (row, name, field, value, message) records, row 1-based.
    """

    def __init__(self, lines: list[str], problems: list[dict[str, Any]] | None = None) -> None:
        super().__init__("; ".join(lines))
        self.lines = lines
        self.problems = problems if problems is not None else [
            {"row": None, "name": "", "field": None, "value": None, "message": line} for line in lines]


@dataclass(frozen=True)
class ChosenRow:
    """A valid row: as a one-row frame, its 0-based position, its non-empty cells and a note about the choice."""

    frame: pd.DataFrame
    position: int
    cells: dict[str, Any]
    note: str = ""

    @property
    def fields(self) -> dict[str, Any]:
        """Its cells that are scenario fields (range columns and others left out)."""
        return {k: v for k, v in self.cells.items() if k in FIELDS}


def is_empty(value: Any) -> bool:
    """Whether a cell holds nothing: None, <NA>, NaN or text of spaces only."""
    return value is None or value is pd.NA or (isinstance(value, float) and value != value) or (
        isinstance(value, str) and value.strip() == "")


def with_curves(df: pd.DataFrame, sha256: str) -> pd.DataFrame:
    """The scenarios with ``curves_sha256`` set to the file loaded by ``--curves`` where a row names none (a row
    naming another file keeps it: the file it needs is then named if it is not loaded).
    """
    if not sha256:
        return df
    out = df.copy()
    given = out["curves_sha256"] if "curves_sha256" in out.columns else pd.Series("", index=out.index)
    out["curves_sha256"] = given.where(given.map(lambda v: not is_empty(v)), sha256)
    return out


def evaluate_chunk(df: pd.DataFrame, curves: str = "") -> tuple[pd.DataFrame, pd.DataFrame]:
    """(results, report) of a chunk of scenarios with ``curves`` (a loaded curve file's hash, or ''), the range
    columns the rows give echoed beside the outputs.
    """
    result, report = evaluate_with_report(with_curves(df, curves))
    return uncertainty.with_range_columns(result, df), report


def problem_records(one: pd.DataFrame, position: int, problems: list[Problem]) -> list[dict[str, Any]]:
    """The problems of the row at ``position`` as (row, name, field, value, message) records, row 1-based."""
    name = str(one["name"].iloc[0]) if "name" in one.columns else ""
    return [{"row": position + 1, "name": name, "field": p.field, "value": p.value, "message": p.message}
            for p in problems]


def row_lines(one: pd.DataFrame, position: int, problems: list[Problem]) -> list[str]:
    """``row N (name): message`` for each problem of the row at ``position``."""
    return [f"row {r['row']} ({shown(r['name'])}): {r['message']}" for r in problem_records(one, position, problems)]


def invalid(one: pd.DataFrame, position: int, problems: list[Problem]) -> InvalidRow:
    """The :class:`InvalidRow` of these problems of the row at ``position``."""
    return InvalidRow(row_lines(one, position, problems), problem_records(one, position, problems))


def chosen_row(source: Source, row: str, curves_sha256: str = "") -> ChosenRow:
    """The row ``row`` names or numbers (read chunk by chunk: memory stays one chunk), with ``curves_sha256`` filled
    in where it names no curve file. An invalid row (ranges included) raises :class:`InvalidRow` listing every
    problem; a row that is not there raises :class:`~economics.schema.validation.InputError`.
    """
    found, position, note = row_lookup.find_row(source, row)
    one = with_curves(found, curves_sha256)
    _, problems = validate(one)
    if problems:
        raise invalid(one, position, problems)
    cells = {str(k): v for k, v in one.iloc[0].to_dict().items() if not is_empty(v)}
    return ChosenRow(one, position, cells, note)


def profile(chosen: ChosenRow) -> pd.DataFrame:
    """The per-turn profile of a chosen session row (:func:`economics.engine.batch.session_profile`: turn, context,
    per-user speed, TTFT), as the ``session-profile`` command and the API's ``/v1/session-profile`` give it; a row
    that does not evaluate, or prices requests, raises :class:`InvalidRow` naming the row and the field.
    """
    try:
        return session_profile(chosen.fields)
    except ScenarioError as exc:
        raise invalid(chosen.frame, chosen.position, exc.problems) from None


def ranges_note(cells: dict[str, Any], command: str) -> str:
    """The note a command that uses base values gives when the row has range columns (uncertainty uses them), or
    ''.
    """
    ranges = [k for k in cells if k in RANGE_COLUMNS]
    if not ranges:
        return ""
    return (f"note: {command} uses the base values; the ranges ({capped(ranges, 'columns')}) are for "
            f"`python -m economics uncertainty`")
