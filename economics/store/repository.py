"""The store's operations on one database: scenarios and their versions, curves, studies, export and import.

Every write is one transaction. A scenario's versions are numbered 1, 2, ...; a save names the version it was based
on (``base_version``) and is refused, naming the newer version, when another save came first (optimistic
concurrency: a conditional update of the scenario's newest version, and a unique version number as a second guard),
so no save is ever lost. Every scenario read back is checked by the scenario schema (:mod:`economics.store.records`).
"""

from __future__ import annotations

import datetime as dt
import getpass
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from economics.schema import user_curves
from economics.schema.values import shown
from economics.store import database, records
from economics.store.errors import Conflict, NotFound, StaleVersion, StoreError, StoreUnavailable
from economics.store.models import Curve, Scenario, ScenarioVersion, Study
from economics.store.records import VersionInfo
from economics.version import __version__

USER_VARIABLE = "TOKEN_ECONOMICS_USER"


def current_user(env: Mapping[str, str] | None = None) -> str:
    """Who saves when no one is named: :data:`USER_VARIABLE`, else the login name, else ``unknown``."""
    env = os.environ if env is None else env
    if env.get(USER_VARIABLE):
        return env[USER_VARIABLE]
    try:
        return getpass.getuser() or "unknown"
    except (OSError, KeyError):
        return "unknown"


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _study_inputs(inputs: Any, where: str) -> Any:
    """A study's inputs: a JSON object; its ``scenario`` (when it has one) checked by the scenario schema."""
    if not isinstance(inputs, Mapping):
        raise StoreError(f"{where}: inputs: must be a JSON object (the scenario and the study's options)", "inputs")
    if isinstance(inputs.get("scenario"), Mapping):
        records.checked_fields(inputs["scenario"], f"{where} inputs")
    return inputs


class _Studies:
    """The studies' operations (mixed into :class:`Store`)."""

    session: Any

    def save_study(self, name: str, kind: str, inputs: Mapping[str, Any], results: Any, scenario: str = "",
                   note: str = "", saved_by: str | None = None, project: str = "") -> records.StudyInfo:
        """Keep a study or plan: its ``kind`` (:class:`~economics.store.records.StudyKind`), its inputs (a JSON
        object; a ``scenario`` in it is checked by the scenario schema), its results (any finite JSON) and the
        scenario version it was computed from (``NAME@VERSION``). A name already used is refused, never replaced.
        """
        name, who = records.checked_name(name), records.checked_who(saved_by or current_user())
        try:
            study_kind = records.StudyKind(kind)
        except ValueError:
            raise StoreError(f"kind: {shown(kind)} is not one of {', '.join(k.value for k in records.StudyKind)}",
                             "kind", kind) from None
        where = f"study '{shown(name)}'"
        inputs_text = records.dumps(_study_inputs(inputs, where), "inputs", records.MAX_STUDY_BYTES)
        results_text = records.dumps(results, "results", records.MAX_STUDY_BYTES)
        scenario_name, scenario_version = records.reference(scenario) if scenario else ("", None)
        row = Study(name=name, kind=study_kind.value, project=records.checked_project(project),
                    scenario_name=scenario_name, scenario_version=scenario_version, inputs=inputs_text,
                    results=results_text, note=records.checked_note(note), saved_by=who, saved_at=_now(),
                    engine_version=__version__)
        try:
            with self.session() as session:
                session.add(row)
        except IntegrityError:
            raise Conflict(f"{where}: a study of that name is in the store already; give another name, or "
                                   "delete it first", "name", name) from None
        return self.study(name)

    def study(self, name: str) -> records.StudyInfo:
        """The stored study ``name`` with its inputs (a scenario in them checked by the scenario schema) and
        results.
        """
        where = f"study '{shown(name)}'"
        with self.session() as session:
            row = session.scalars(sa.select(Study).where(Study.name == name)).one_or_none()
            if row is None:
                raise NotFound(f"{where}: not in the store", "name", name)
            info = _study_info(row, whole=True)
        _study_inputs(info.inputs, where)
        if not records.finite(info.results):
            raise records.InvalidStored(f"{where}: results: holds a number that is not finite", "results")
        return info

    def list_studies(self, search: str = "", kind: str | None = None, project: str | None = None,
                     limit: int = 100, offset: int = 0) -> list[records.StudyInfo]:
        """The studies whose name holds ``search``, of ``kind`` and ``project`` when given, by name (without their
        inputs and results).
        """
        query = sa.select(Study)
        if search:
            query = query.where(sa.func.lower(Study.name).contains(search.lower(), autoescape=True))
        if kind:
            query = query.where(Study.kind == kind)
        if project is not None:
            query = query.where(Study.project == project)
        query = query.order_by(Study.name).limit(max(0, min(limit, records.MAX_VERSIONS_LISTED))).offset(offset)
        with self.session() as session:
            return [_study_info(r, whole=False) for r in session.scalars(query)]

    def delete_study(self, name: str) -> None:
        """Delete the study ``name``."""
        with self.session() as session:
            done = session.execute(sa.delete(Study).where(Study.name == name))
            if done.rowcount == 0:
                raise NotFound(f"study '{shown(name)}': not in the store", "name", name)


def _study_info(row: Study, whole: bool) -> records.StudyInfo:
    where = f"study '{shown(row.name)}'"
    try:
        kind = records.StudyKind(row.kind)
    except ValueError:
        raise records.InvalidStored(f"{where}: kind: {shown(row.kind)} is not a kind of study", "kind",
                                    row.kind) from None
    inputs = records.loads(row.inputs, where, "inputs") if whole else None
    results = records.loads(row.results, where, "results") if whole else None
    return records.StudyInfo(row.name, kind, row.project, row.scenario_name, row.scenario_version, row.saved_by,
                             records.utc(row.saved_at), row.engine_version, row.note, inputs, results)


class Store(_Studies):
    """A store at one database URL (see :mod:`economics.store.database`); its schema is migrated on opening.

    Parameters
    ----------
    url : str, optional -- a SQLAlchemy URL; default :func:`~economics.store.database.database_url`
    migrate : bool -- bring the schema up to date on opening (default), else refuse a database that is not
    """

    def __init__(self, url: str | None = None, migrate: bool = True) -> None:
        self.url = url or database.database_url()
        self.engine = database.create_engine(self.url)
        if migrate:
            database.migrate(self.engine)
        elif database.current_revision(self.engine) != database.head_revision():
            raise StoreUnavailable(f"the store at {database.shown_url(self.url)} is not migrated: run "
                                   "`python -m economics store migrate`")
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A transaction: committed when the block ends, rolled back if it raises; a database failure becomes
        :class:`StoreUnavailable` naming the URL (never its password).
        """
        try:
            with self._sessions.begin() as session:
                yield session
        except StoreError:
            raise
        except IntegrityError:
            raise
        except SQLAlchemyError as exc:
            raise StoreUnavailable(f"the store at {database.shown_url(self.url)}: {database.failure(exc)}") from None

    # ------------------------------------------------------------------ scenarios
    def save_scenario(self, name: str, fields: Mapping[str, Any], base_version: int | None = None, note: str = "",
                      saved_by: str | None = None, project: str | None = None) -> VersionInfo:
        """Save ``fields`` as the next version of the scenario ``name`` (version 1 of a new one) and return it.

        ``base_version`` is the version the change was made from: None or 0 for a new scenario; a save whose base
        is not the newest version is refused (:class:`StaleVersion`, naming the newer version and who saved it),
        and so is a new scenario whose name is taken. The fields are checked by the scenario schema first (a curve
        file they name is stored with them, from memory, so it resolves after a restart).
        """
        name, who = records.checked_name(name), records.checked_who(saved_by or current_user())
        note, tag = records.checked_note(note), None if project is None else records.checked_project(project)
        if not isinstance(fields, Mapping):
            raise StoreError("fields: must be a JSON object of scenario fields and values", "fields")
        self._keep_curve_of(fields, who, tag or "")
        clean = records.checked_fields(dict(fields), f"scenario '{shown(name)}'")
        text = records.dumps(clean, "fields", records.MAX_SCENARIO_BYTES)
        try:
            with self.session() as session:
                return self._add_version(session, name, clean, text, base_version, note, who, tag)
        except IntegrityError:  # another save took this version number, or this name, between our read and write
            raise self._stale(name, base_version) from None

    def _add_version(self, session: Session, name: str, clean: dict[str, Any], text: str, base: int | None,
                     note: str, who: str, tag: str | None) -> VersionInfo:
        row = session.scalars(sa.select(Scenario).where(Scenario.name == name)).one_or_none()
        now = _now()
        if row is None:
            if base:
                raise NotFound(f"scenario '{shown(name)}': not in the store, so there is no version {base} to "
                               "save from; save it without a base version", "name", name)
            row = Scenario(name=name, project=tag or "", latest_version=1, created_at=now, created_by=who)
            session.add(row)
            session.flush()
            before: dict[str, Any] = {}
            number = 1
        else:
            if base != row.latest_version:
                raise self._stale(name, base, session)
            done = session.execute(sa.update(Scenario).where(Scenario.id == row.id,
                                                             Scenario.latest_version == base)
                                   .values(latest_version=base + 1, **({} if tag is None else {"project": tag})))
            if done.rowcount != 1:  # type: ignore[attr-defined]
                raise self._stale(name, base, session)
            previous = session.scalars(sa.select(ScenarioVersion.fields).where(
                ScenarioVersion.scenario_id == row.id, ScenarioVersion.version == base)).one()
            before = records.loads(previous, f"scenario '{shown(name)}' version {base}", "fields")
            number = base + 1
        diff = records.changes(before, clean)
        session.add(ScenarioVersion(scenario_id=row.id, version=number, fields=text,
                                    changes=records.dumps(diff, "changes", records.MAX_SCENARIO_BYTES), note=note,
                                    saved_by=who, saved_at=now, engine_version=__version__))
        session.flush()
        return VersionInfo(name, number, who, now, __version__, note, diff, tag if tag is not None else row.project,
                           clean)

    def _stale(self, name: str, base: int | None, session: Session | None = None) -> StoreError:
        """The refusal of a save based on ``base`` when a newer version exists (read afresh, naming it)."""
        newest = self._newest(session, name)
        if newest is None:
            return StoreError(f"scenario '{shown(name)}': the save was refused by the database; try again", "name")
        number, who, when = newest
        by = f"version {number} (saved by {shown(who)} at {when:%Y-%m-%d %H:%M:%S} UTC)"
        if not base:
            return StaleVersion(f"scenario '{shown(name)}': in the store already, its newest is {by}; to add "
                                f"version {number + 1}, save with base version {number} (nothing was saved)", number)
        return StaleVersion(f"scenario '{shown(name)}': this save was based on version {base}, but {by} is newer; "
                            f"open version {number}, apply your change to it and save again (nothing was saved)",
                            number)

    def _newest(self, session: Session | None, name: str) -> tuple[int, str, dt.datetime] | None:
        query = (sa.select(ScenarioVersion.version, ScenarioVersion.saved_by, ScenarioVersion.saved_at)
                 .join(Scenario).where(Scenario.name == name).order_by(ScenarioVersion.version.desc()).limit(1))
        if session is None:
            with self.session() as own:
                found = own.execute(query).first()
        else:
            found = session.execute(query).first()
        return None if found is None else (found[0], found[1], records.utc(found[2]))

    def _keep_curve_of(self, fields: Mapping[str, Any], who: str, project: str) -> None:
        """Store the curve file a scenario names (from memory) unless the store has it already."""
        sha = fields.get("curves_sha256")
        if not isinstance(sha, str) or not user_curves.SHA256.fullmatch(sha.lower()):
            return
        sha = sha.lower()
        with self.session() as session:
            if session.get(Curve, sha) is not None:
                self.curve_file(sha)  # into memory, so the schema's check finds it
                return
        held = user_curves.loaded(sha)
        if held is not None and held.data:
            self.save_curve(held.data, held.name, who, project)

    def scenario(self, name: str, version: int | None = None) -> VersionInfo:
        """The scenario ``name`` at ``version`` (default: its newest), its fields checked by the scenario schema
        (:class:`~economics.store.errors.InvalidStored` names a field edited into something the schema refuses).
        """
        where = f"scenario '{shown(name)}'"
        with self.session() as session:
            row = session.scalars(sa.select(Scenario).where(Scenario.name == name)).one_or_none()
            if row is None:
                raise NotFound(f"{where}: not in the store{self._guess(session, name)}", "name", name)
            number = row.latest_version if version is None else version
            found = session.scalars(sa.select(ScenarioVersion).where(
                ScenarioVersion.scenario_id == row.id, ScenarioVersion.version == number)).one_or_none()
            if found is None:
                raise NotFound(f"{where}: no version {number} (versions 1 to {row.latest_version})", "version",
                               number)
            info = self._info(row, found, whole=True)
        assert info.fields is not None
        self._curve_into_memory(info.fields)
        checked = records.checked_fields(info.fields, f"{where} version {number}")
        return VersionInfo(**{**info.__dict__, "fields": checked})

    def _guess(self, session: Session, name: str) -> str:
        names = list(session.scalars(sa.select(Scenario.name).where(
            sa.func.lower(Scenario.name).contains(name[:20].lower(), autoescape=True)).limit(5)))
        return f" (did you mean {', '.join(repr(n) for n in names)}?)" if names else " (store list shows them)"

    def _info(self, row: Scenario, version: ScenarioVersion, whole: bool) -> VersionInfo:
        where = f"scenario '{shown(row.name)}' version {version.version}"
        fields = records.loads(version.fields, where, "fields") if whole else None
        diff = records.loads(version.changes, where, "changes")
        return VersionInfo(row.name, version.version, version.saved_by, records.utc(version.saved_at),
                           version.engine_version, version.note, diff if isinstance(diff, list) else [],
                           row.project, fields)

    def _curve_into_memory(self, fields: Any) -> None:
        sha = fields.get("curves_sha256") if isinstance(fields, Mapping) else None
        if isinstance(sha, str) and user_curves.SHA256.fullmatch(sha.lower()):
            try:
                self.curve_file(sha.lower())
            except NotFound:  # the schema's check then names the curve as not loaded
                return

    def history(self, name: str, limit: int = records.MAX_VERSIONS_LISTED) -> list[VersionInfo]:
        """The versions of the scenario ``name``, newest first, ``limit`` of them (at most
        :data:`~economics.store.records.MAX_VERSIONS_LISTED`): who, when, what changed, note; not the fields.
        """
        with self.session() as session:
            row = session.scalars(sa.select(Scenario).where(Scenario.name == name)).one_or_none()
            if row is None:
                raise NotFound(f"scenario '{shown(name)}': not in the store{self._guess(session, name)}", "name",
                               name)
            versions = session.scalars(sa.select(ScenarioVersion).where(ScenarioVersion.scenario_id == row.id)
                                       .order_by(ScenarioVersion.version.desc())
                                       .limit(max(0, min(limit, records.MAX_VERSIONS_LISTED))))
            return [self._info(row, v, whole=False) for v in versions]

    def list_scenarios(self, search: str = "", project: str | None = None, limit: int = 100,
                       offset: int = 0) -> list[records.ScenarioSummary]:
        """The scenarios whose name or project holds ``search`` (any case), of ``project`` when given, by name:
        ``limit`` of them (at most :data:`~economics.store.records.MAX_VERSIONS_LISTED`) from ``offset``.
        """
        query = (sa.select(Scenario.name, Scenario.project, Scenario.latest_version, ScenarioVersion.saved_by,
                           ScenarioVersion.saved_at)
                 .join(ScenarioVersion, sa.and_(ScenarioVersion.scenario_id == Scenario.id,
                                                ScenarioVersion.version == Scenario.latest_version)))
        query = self._filtered(query, search, project).order_by(Scenario.name)
        query = query.limit(max(0, min(limit, records.MAX_VERSIONS_LISTED))).offset(max(0, offset))
        with self.session() as session:
            return [records.ScenarioSummary(n, p, v, who, records.utc(at))
                    for n, p, v, who, at in session.execute(query)]

    def count_scenarios(self, search: str = "", project: str | None = None) -> int:
        """How many scenarios :meth:`list_scenarios` would list without a limit."""
        with self.session() as session:
            return int(session.scalar(self._filtered(sa.select(sa.func.count(Scenario.id)), search, project)) or 0)

    @staticmethod
    def _filtered(query: Any, search: str, project: str | None) -> Any:
        if search:
            text = search.lower()
            query = query.where(sa.or_(sa.func.lower(Scenario.name).contains(text, autoescape=True),
                                       sa.func.lower(Scenario.project).contains(text, autoescape=True)))
        return query if project is None else query.where(Scenario.project == project)

    def delete_scenario(self, name: str) -> int:
        """Delete the scenario ``name`` and every version of it; returns how many versions were deleted."""
        with self.session() as session:
            row = session.scalars(sa.select(Scenario).where(Scenario.name == name)).one_or_none()
            if row is None:
                raise NotFound(f"scenario '{shown(name)}': not in the store", "name", name)
            count = row.latest_version
            session.execute(sa.delete(ScenarioVersion).where(ScenarioVersion.scenario_id == row.id))
            session.delete(row)
            return count

    def save_versions(self, items: list[tuple[str, Mapping[str, Any]]], saved_by: str | None = None,
                      note: str = "", project: str = "") -> int:
        """Save many scenario versions at once (each item: a name and its fields, added as that scenario's next
        version, in order), checked by the scenario schema in one pass and written in one transaction (an import,
        a benchmark); returns how many were saved. A concurrent save of one of them refuses the whole batch.
        """
        who, note, tag = records.checked_who(saved_by or current_user()), records.checked_note(note), \
            records.checked_project(project)
        names = [records.checked_name(n) for n, _ in items]
        fields = [{k: v for k, v in dict(f).items() if k != "name"} for _, f in items]
        records.scenario_frame(fields, [f"scenario '{shown(n)}'" for n in names])
        texts = [records.dumps(f, "fields", records.MAX_SCENARIO_BYTES) for f in fields]
        now = _now()
        try:
            with self.session() as session:
                rows = {r.name: r for r in session.scalars(sa.select(Scenario).where(Scenario.name.in_(set(names))))}
                last: dict[str, dict[str, Any]] = {}
                for name, clean, text in zip(names, fields, texts, strict=True):
                    row = rows.get(name)
                    if row is None:
                        row = rows[name] = Scenario(name=name, project=tag, latest_version=0, created_at=now,
                                                    created_by=who)
                        session.add(row)
                        session.flush()
                    row.latest_version += 1
                    diff = records.changes(last.get(name, {}), clean)
                    last[name] = clean
                    session.add(ScenarioVersion(scenario_id=row.id, version=row.latest_version, fields=text,
                                                changes=records.dumps(diff, "changes", records.MAX_SCENARIO_BYTES),
                                                note=note, saved_by=who, saved_at=now, engine_version=__version__))
        except IntegrityError:
            raise StoreError("another save of these scenarios came first; nothing was saved: try again") from None
        return len(items)

    def scenario_table(self, search: str = "", project: str | None = None,
                       all_versions: bool = False) -> tuple[list[tuple[str, int]], Any]:
        """Every scenario's newest version (or every version) as one table of fields, checked by the scenario
        schema in one pass as a CSV file's rows are: ``(name, version)`` of each row, and the frame.
        """
        query = sa.select(Scenario.name, ScenarioVersion.version, ScenarioVersion.fields).join(ScenarioVersion)
        if not all_versions:
            query = query.where(ScenarioVersion.version == Scenario.latest_version)
        query = self._filtered(query, search, project).order_by(Scenario.name, ScenarioVersion.version)
        with self.session() as session:
            rows = list(session.execute(query))
        where = [f"scenario '{shown(n)}' version {v}" for n, v, _ in rows]
        fields = [records.named(n, records.loads(t, w, "fields"), w) for (n, _, t), w in zip(rows, where, strict=True)]
        for f in fields:
            self._curve_into_memory(f)
        return [(n, v) for n, v, _ in rows], records.scenario_frame(fields, where) if fields else None

    # ------------------------------------------------------------------ curves
    def save_curve(self, data: bytes, name: str = "curves.csv", saved_by: str | None = None,
                   project: str = "") -> records.CurveInfo:
        """Check a curve file (``import-benchmark`` output) and keep it under the SHA-256 of its bytes, with its
        provenance; returns its record. The same bytes saved again keep their first record: a hash names one file,
        so nothing is ever replaced. It is loaded into memory too, ready for ``curves_sha256``.
        """
        who, tag = records.checked_who(saved_by or current_user()), records.checked_project(project)
        name = records.checked_name(name[-records.NAME_CHARS:] if isinstance(name, str) else name, "curve name")
        try:
            curve = user_curves.load(data, name)
        except user_curves.CurveFileError as exc:
            raise StoreError(f"curves: {exc}", "curves") from None
        with self.session() as session:
            found = session.get(Curve, curve.sha256)
            if found is not None:
                return self._curve_info(found)
        row = Curve(sha256=curve.sha256, name=name, data=data, points=len(curve.table),
                    provenance=records.dumps(provenance(curve), "provenance", records.MAX_SCENARIO_BYTES),
                    project=tag, saved_by=who, saved_at=_now())
        try:
            with self.session() as session:
                session.add(row)
        except IntegrityError:  # saved by another process a moment ago: the same bytes
            pass
        return self.curve(curve.sha256)

    def curve(self, sha256: str) -> records.CurveInfo:
        """The record of the stored curve file with this SHA-256 (not its bytes: :meth:`curve_file`)."""
        with self.session() as session:
            found = session.get(Curve, sha256.lower())
            if found is None:
                raise NotFound(f"curve {shown(sha256)}: not in the store", "sha256", sha256)
            return self._curve_info(found)

    @staticmethod
    def _curve_info(row: Curve) -> records.CurveInfo:
        where = f"curve {row.sha256[:12]}"
        doc = records.loads(row.provenance, where, "provenance")
        return records.CurveInfo(row.sha256, row.name, row.points, doc if isinstance(doc, dict) else {},
                                 row.project, row.saved_by, records.utc(row.saved_at))

    def curve_file(self, sha256: str) -> user_curves.CurveFile:
        """The stored curve file with this SHA-256, checked again (its bytes must still hash to it, and every cell
        pass the curve file's checks) and loaded into memory; :class:`NotFound` or
        :class:`~economics.store.errors.InvalidStored`.
        """
        sha = sha256.lower()
        held = user_curves.loaded_here(sha)
        if held is not None:
            return held
        with self.session() as session:
            found = session.get(Curve, sha)
            if found is None:
                raise NotFound(f"curve {shown(sha256)}: not in the store", "curves_sha256", sha256)
            data, name = bytes(found.data), found.name
        if user_curves.sha256_of(data) != sha:
            raise records.InvalidStored(f"curve {sha[:12]}: its stored bytes no longer hash to its SHA-256 (edited "
                                        "in the database?); import the file again", "data")
        try:
            return user_curves.load(data, name)
        except user_curves.CurveFileError as exc:
            raise records.InvalidStored(f"curve {sha[:12]}: {exc}", "data") from None

    def list_curves(self, limit: int = 1000) -> list[records.CurveInfo]:
        """The stored curve files, newest first (their records)."""
        with self.session() as session:
            rows = session.scalars(sa.select(Curve).order_by(Curve.saved_at.desc()).limit(limit))
            return [self._curve_info(r) for r in rows]


def provenance(curve: user_curves.CurveFile) -> dict[str, Any]:
    """Where a curve file's points came from: its file name and, per column of provenance, the distinct values."""
    table = curve.table
    columns = ("curve_id", "accelerator", "model", "precision", "tool", "tool_version", "source_file",
               "source_sha256", "run_date", "source", "confidence")
    return {"file": curve.name, **{c: sorted({str(v) for v in table[c] if str(v)})[:50] for c in columns}}

