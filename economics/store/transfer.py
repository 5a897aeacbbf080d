"""A store's contents as one JSON document, and back: what ``store export`` writes and ``store import`` reads, to
move scenarios, curves and studies between a laptop's SQLite store and a team's server.

An import never replaces anything: a version already there with the same fields is skipped, one there with other
fields is refused naming it, and the versions after a scenario's newest are added (their number, author and time
kept, so the history reads the same in both stores).
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
from typing import Any

import sqlalchemy as sa

from economics.schema.values import shown
from economics.store import records
from economics.store.errors import Conflict, NotFound, StoreError
from economics.store.models import Scenario, ScenarioVersion
from economics.store.repository import Store
from economics.version import __version__

FORMAT = "token-economics-store"
FORMAT_VERSION = 1
MAX_DOCUMENT_BYTES = records.MAX_DOCUMENT_BYTES


def export_document(store: Store, names: list[str] | None = None) -> dict[str, Any]:
    """The scenarios ``names`` (default: all) with every version, the curve files they name (all curves when no
    names are given) and, without names, every study: one JSON-ready document.
    """
    summaries = store.list_scenarios(limit=records.MAX_VERSIONS_LISTED) if names is None else None
    wanted = names if names is not None else [s.name for s in summaries or []]
    scenarios, shas = [], set()
    for name in wanted:
        versions = [store.scenario(name, v.version) for v in reversed(store.history(name))]
        scenarios.append({"name": name, "project": versions[-1].project,
                          "versions": [{k: v for k, v in version.as_json().items() if k not in ("name", "project")}
                                       for version in versions]})
        shas |= {str(v.fields.get("curves_sha256")).lower() for v in versions if v.fields and
                 v.fields.get("curves_sha256")}
    if names is None:
        shas |= {c.sha256 for c in store.list_curves()}
    curves = [{**store.curve(sha).as_json(), "data_base64": base64.b64encode(store.curve_file(sha).data).decode()}
              for sha in sorted(shas)]
    studies = [] if names is not None else [store.study(s.name).as_json() for s in store.list_studies(
        limit=records.MAX_VERSIONS_LISTED)]
    return {"format": FORMAT, "format_version": FORMAT_VERSION, "engine_version": __version__,
            "scenarios": scenarios, "curves": curves, "studies": studies}


def import_document(store: Store, doc: Any) -> dict[str, int]:
    """Add a document of :func:`export_document`'s shape to ``store`` (curves first, then scenarios, then studies);
    returns how many versions, curves and studies were added and skipped. Refuses (:class:`StoreError`) a document
    of another shape, naming the key, and a version that differs from the stored one of the same number.
    """
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise StoreError(f"not a store export: its 'format' must be '{FORMAT}'", "format")
    if doc.get("format_version") != FORMAT_VERSION:
        raise StoreError(f"format_version: {shown(doc.get('format_version'))}; this version reads "
                         f"{FORMAT_VERSION}", "format_version")
    counts = dict.fromkeys(("versions", "versions_skipped", "curves", "studies", "studies_skipped"), 0)
    for curve in _list(doc, "curves"):
        try:
            data = base64.b64decode(str(curve.get("data_base64", "")), validate=True)
        except (binascii.Error, ValueError):
            raise StoreError(f"curves: {shown(curve.get('sha256'))}: data_base64 is not base64", "curves") from None
        store.save_curve(data, str(curve.get("name") or "curves.csv"), str(curve.get("saved_by") or "import"),
                         str(curve.get("project") or ""))
        counts["curves"] += 1
    for scenario in _list(doc, "scenarios"):
        added, skipped = _import_scenario(store, scenario)
        counts["versions"] += added
        counts["versions_skipped"] += skipped
    for study in _list(doc, "studies"):
        try:
            store.study(str(study.get("name")))
            counts["studies_skipped"] += 1  # a study is never replaced; the stored one stays
            continue
        except NotFound:
            pass
        source = (f"{study['scenario_name']}@{study['scenario_version']}" if study.get("scenario_version")
                  else str(study.get("scenario_name") or ""))
        store.save_study(str(study.get("name")), str(study.get("kind")), study.get("inputs") or {},
                         study.get("results"), source, str(study.get("note") or ""),
                         str(study.get("saved_by") or "import"), str(study.get("project") or ""))
        counts["studies"] += 1
    return counts


def _list(doc: dict[str, Any], key: str) -> list[dict[str, Any]]:
    items = doc.get(key, [])
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise StoreError(f"{key}: must be a list of objects", key)
    return items


def _import_scenario(store: Store, scenario: dict[str, Any]) -> tuple[int, int]:
    """Add one exported scenario's versions that the store lacks; (added, skipped)."""
    name = records.checked_name(scenario.get("name"))
    versions = scenario.get("versions")
    if not isinstance(versions, list) or not versions:
        raise StoreError(f"scenario '{shown(name)}': versions: must be a non-empty list", "versions")
    stored: dict[int, Any] = {v.version: v for v in store.history(name)} if _exists(store, name) else {}
    added = skipped = 0
    for v in versions:
        number = v.get("version") if isinstance(v, dict) else None
        if not isinstance(number, int) or isinstance(number, bool) or number < 1:
            raise StoreError(f"scenario '{shown(name)}': a version without a whole version number", "version")
        where = f"scenario '{shown(name)}' version {number}"
        fields = records.checked_fields(v.get("fields"), where)
        if number in stored:
            if store.scenario(name, number).fields != fields:
                raise Conflict(f"{where}: the store has another version {number}; nothing of it was imported "
                               "(rename the scenario in the file to keep both)", "version", number)
            skipped += 1
            continue
        _insert_version(store, name, str(scenario.get("project") or ""), number, fields, v)
        stored[number] = v
        added += 1
    return added, skipped


def _exists(store: Store, name: str) -> bool:
    with store.session() as session:
        return session.scalar(sa.select(Scenario.id).where(Scenario.name == name)) is not None


def _insert_version(store: Store, name: str, project: str, number: int, fields: dict[str, Any],
                    v: dict[str, Any]) -> None:
    """Add version ``number`` as exported (author, time, note), the next after the stored newest."""
    when = dt.datetime.fromisoformat(str(v.get("saved_at"))) if v.get("saved_at") else dt.datetime.now(dt.UTC)
    who = records.checked_who(str(v.get("saved_by") or "import"))
    with store.session() as session:
        row = session.scalars(sa.select(Scenario).where(Scenario.name == name)).one_or_none()
        newest = 0 if row is None else row.latest_version
        if number != newest + 1:
            raise Conflict(f"scenario '{shown(name)}' version {number}: the store's newest is {newest}; versions are "
                           f"imported in order", "version", number)
        before = {} if row is None else store.scenario(name, newest).fields or {}
        if row is None:
            row = Scenario(name=name, project=records.checked_project(project), latest_version=0, created_at=when,
                           created_by=who)
            session.add(row)
            session.flush()
        row.latest_version = number
        session.add(ScenarioVersion(
            scenario_id=row.id, version=number, fields=records.dumps(fields, "fields", records.MAX_SCENARIO_BYTES),
            changes=records.dumps(records.changes(before, fields), "changes", records.MAX_SCENARIO_BYTES),
            note=records.checked_note(str(v.get("note") or "")), saved_by=who, saved_at=when,
            engine_version=str(v.get("engine_version") or __version__)[:40]))
