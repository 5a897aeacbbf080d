"""The CLI's ``store`` commands (``save``, ``list``, ``show``, ``export``, ``import``, ``delete``, ``migrate``) and the
``--scenario NAME[@VERSION]`` option of the commands that read scenarios: parsers and what each does, on
:mod:`economics.store`. Output is JSON (or CSV for a scenario's fields); messages go to stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

import pandas as pd

import economics.store as stored
from economics.io.one_row import chosen_row
from economics.io.output_paths import RecordFormat, write_text
from economics.io.scenario_files import read_input_bytes, to_csv_text
from economics.schema import user_curves
from economics.schema.validation import InputError
from economics.schema.values import choice_words, shown
from economics.store import location, records
from economics.store.errors import StoreError

TYPE_CHECKING = False  # the repository, comparison, export and database (SQLAlchemy, Alembic) are read through the
if TYPE_CHECKING:  # package on first use (``stored.Store`` ...), so the CLI's parser and other commands load none
    from economics.store.repository import Store

MAX_FILE_BYTES = records.MAX_DOCUMENT_BYTES
"""The largest file ``store import`` or ``store save --study`` reads [bytes]."""


def add_scenario_argument(cmd: argparse.ArgumentParser) -> None:
    """``--scenario NAME[@VERSION]``: a stored scenario instead of a file (its newest version by default)."""
    cmd.add_argument("--scenario", metavar="NAME[@VERSION]", default=None,
                     help="a scenario from the store (economics.store) instead of an input file: its newest "
                     "version, or @VERSION; the row is named NAME@VERSION")


def stored_input(args: argparse.Namespace, store: Callable[[], Store | None], say: Callable[[str], None]) -> None:
    """Put the stored scenario of ``args.scenario`` (and a stored ``--baseline``) in place of the input file, as a
    JSON table whose rows are named ``NAME@VERSION``; or require the input file (and ``--row``) it replaces.
    """
    ref = getattr(args, "scenario", None)
    if ref is None:
        if getattr(args, "input", None) is None:
            raise InputError("give an input file, or --scenario NAME[@VERSION] for a stored scenario")
        if hasattr(args, "row") and args.row is None:
            raise InputError("--row: required with an input file (the row's name, or its 1-based number)")
        return
    if getattr(args, "input", None) is not None:
        raise InputError(f"--scenario {shown(ref)} and the input file {shown(args.input)}: give one of them")
    if getattr(args, "row", None) is not None:
        raise InputError("--row: not with --scenario (the stored scenario is the one row)")
    opened = store()
    refs = [ref] + ([args.baseline] if getattr(args, "baseline", "") else [])
    rows = []
    for text in refs:
        name, version = records.reference(text)
        if opened is None:
            raise StoreError(f"--scenario {shown(text)}: there is no store yet at "
                             f"{stored.database.shown_url(location.database_url())}", "scenario", text)
        found = opened.scenario(name, version)
        rows.append({**found.scenario(), "name": found.reference})
        say(f"{found.reference}: saved by {found.saved_by} at {found.saved_at:%Y-%m-%d %H:%M} UTC "
            f"(engine {found.engine_version})")
    args.input = json.dumps(rows, allow_nan=False).encode("utf-8")
    if hasattr(args, "row"):
        args.row = f"name:{rows[0]['name']}"
    if getattr(args, "baseline", ""):
        args.baseline = f"name:{rows[1]['name']}"


def add_store_command(sub: Any, run: Callable[[argparse.Namespace], int]) -> None:
    """The ``store`` command and its subcommands (each calls ``run`` with its arguments)."""
    cmd = sub.add_parser("store", help="the store of scenarios (every version), curves and studies: save, list, "
                         "show, export, import, delete, migrate (TOKEN_ECONOMICS_DATABASE_URL; default SQLite in "
                         "your data directory)")
    cmd.add_argument("--database", default=None, metavar="URL", help="the database (default: "
                     f"${location.URL_VARIABLE}, else {location.default_url()})")
    ops = cmd.add_subparsers(dest="store_command", required=True)
    save = ops.add_parser("save", help="a row of a scenario file as the next version of a stored scenario (or "
                          "--curves FILE, or --study FILE)")
    save.add_argument("input", nargs="?", default=None, help="CSV, Parquet or JSON file of scenarios, or -")
    save.add_argument("--row", default=None, help="the row's name or 1-based number (default: the only row)")
    save.add_argument("--name", default=None, help="the stored scenario's name (default: the row's name)")
    save.add_argument("--base-version", type=int, default=None, help="the version your change was made from "
                      "(required once the scenario exists; a newer stored version refuses the save, naming it)")
    save.add_argument("--curves", metavar="FILE", default=None, help="store this curve file (and use it for rows "
                      "naming none)")
    save.add_argument("--study", metavar="FILE", default=None, help="store this study's results (the JSON a command "
                      "wrote) under --name, of --kind, computed from --from NAME@VERSION")
    save.add_argument("--kind", default="other", choices=[k.value for k in records.StudyKind])
    save.add_argument("--from", dest="source", default="", metavar="NAME@VERSION",
                      help="the stored scenario version a study was computed from")
    for flag, text in (("--note", "what this version changes, or why"), ("--project", "a project tag"),
                       ("--by", "who saves (default: $TOKEN_ECONOMICS_USER, else your login)")):
        save.add_argument(flag, default=None, help=text)
    lst = ops.add_parser("list", help="stored scenarios (or --curves, --studies) as JSON")
    lst.add_argument("--search", default="", help="part of a name or project, any case")
    lst.add_argument("--project", default=None)
    lst.add_argument("--curves", action="store_true")
    lst.add_argument("--studies", action="store_true")
    lst.add_argument("--limit", type=int, default=1000)
    show = ops.add_parser("show", help="a stored scenario version (NAME[@VERSION]), its --history, or "
                          "--compare VERSION (fields and KPIs side by side); --study NAME; --curve SHA256")
    show.add_argument("name", nargs="?", default=None, metavar="NAME[@VERSION]")
    show.add_argument("--history", action="store_true", help="every version: who, when, what changed")
    show.add_argument("--compare", type=int, default=None, metavar="VERSION", help="compare with this version")
    show.add_argument("--study", default=None, metavar="NAME")
    show.add_argument("--curve", default=None, metavar="SHA256", help="write the curve file's CSV")
    show.add_argument("--format", choices=choice_words(RecordFormat), default=RecordFormat.JSON.value,
                      help="csv: the version as a scenario row, for a file (json: with who, when and what changed)")
    show.add_argument("-o", "--output", default="-")
    exp = ops.add_parser("export", help="scenarios (every version), their curves and studies as one JSON file")
    exp.add_argument("names", nargs="*", help="scenario names (default: everything)")
    exp.add_argument("-o", "--output", default="-")
    imp = ops.add_parser("import", help="a file of store export into this store (nothing is replaced)")
    imp.add_argument("file")
    dele = ops.add_parser("delete", help="a stored scenario with every version (or --study NAME)")
    dele.add_argument("name", nargs="?", default=None)
    dele.add_argument("--study", default=None)
    dele.add_argument("--yes", action="store_true", help="confirm: the versions are gone for good")
    ops.add_parser("migrate", help="create or upgrade the store's tables (done automatically on first use)")
    cmd.set_defaults(func=run)


def _json(doc: Any) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def run_store(args: argparse.Namespace, say: Callable[[str], None]) -> int:
    """Run a ``store`` subcommand; the exit code (refusals raise :class:`StoreError`, an ``InputError``)."""
    url = args.database or location.database_url()
    if args.store_command == "migrate":
        revision = stored.database.migrate(stored.database.create_engine(url))
        sys.stdout.write(f"{stored.database.shown_url(url)}: schema at revision {revision}\n")
        return 0
    store = stored.Store(url)
    handler = {"save": _save, "list": _list, "show": _show, "export": _export, "import": _import,
               "delete": _delete}[args.store_command]
    return handler(store, args, say)


def _save(store: Store, args: argparse.Namespace, say: Callable[[str], None]) -> int:
    curves = ""
    if args.curves:
        data = read_input_bytes("-", user_curves.MAX_BYTES) if args.curves == "-" else user_curves.read_bounded(
            args.curves)
        curve = store.save_curve(data, args.curves.rsplit("/", 1)[-1], args.by, args.project or "")
        curves = curve.sha256
        say(f"curve {curve.sha256} ({curve.points:,} points) stored")
    if args.study:
        results = _read_json(args.study)
        inputs = {"scenario": store.scenario(*records.reference(args.source)).fields} if args.source else {}
        if not args.name:
            raise InputError("--name: required with --study")
        study = store.save_study(args.name, args.kind, inputs, results, args.source, args.note or "", args.by,
                                 args.project or "")
        sys.stdout.write(_json(study.as_json(whole=False)))
        return 0
    if args.input is None:
        if args.curves:
            return 0
        raise InputError("give a scenario file (and --row), --curves FILE or --study FILE")
    source = sys.stdin.buffer if args.input == "-" else args.input
    chosen = chosen_row(source, args.row or "1", curves)
    name = args.name or str(chosen.cells.get("name") or "")
    version = store.save_scenario(name, chosen.fields, args.base_version, args.note or "", args.by, args.project)
    sys.stdout.write(_json({k: v for k, v in version.as_json().items() if k != "fields"}))
    say(f"saved {version.reference}")
    return 0


def _read_json(path: str) -> Any:
    data = read_input_bytes(path, MAX_FILE_BYTES)
    try:
        return json.loads(data.decode("utf-8-sig"), parse_constant=lambda c: _refuse(path, c))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{shown(path)}: not JSON ({shown(str(exc), 120)})") from None


def _refuse(path: str, constant: str) -> Any:
    raise InputError(f"{shown(path)}: {constant} is not a JSON number (the store keeps finite numbers only)")


def _list(store: Store, args: argparse.Namespace, *_: Any) -> int:
    if args.curves:
        doc: Any = [c.as_json() for c in store.list_curves(args.limit)]
    elif args.studies:
        doc = [s.as_json(whole=False) for s in store.list_studies(args.search, None, args.project, args.limit)]
    else:
        doc = {"total": store.count_scenarios(args.search, args.project),
               "scenarios": [s.as_json() for s in store.list_scenarios(args.search, args.project, args.limit)]}
    sys.stdout.write(_json(doc))
    return 0


def _show(store: Store, args: argparse.Namespace, *_: Any) -> int:
    if args.curve:
        write_text(args.output, store.curve_file(args.curve).data.decode("utf-8-sig"))
        return 0
    if args.study:
        write_text(args.output, _json(store.study(args.study).as_json()))
        return 0
    if not args.name:
        raise InputError("give a scenario NAME[@VERSION], --study NAME or --curve SHA256")
    name, number = records.reference(args.name)
    if args.history:
        write_text(args.output, _json([v.as_json() for v in store.history(name)]))
        return 0
    version = store.scenario(name, number)
    if args.compare is not None:
        write_text(args.output, _json(stored.compare(store.scenario(name, args.compare), version).as_json()))
        return 0
    as_csv = args.format == RecordFormat.CSV
    write_text(args.output, to_csv_text(_frame(version)) if as_csv else _json(version.as_json()))
    return 0


def _export(store: Store, args: argparse.Namespace, *_: Any) -> int:
    write_text(args.output, _json(stored.export_document(store, args.names or None)))
    return 0


def _import(store: Store, args: argparse.Namespace, say: Callable[[str], None]) -> int:
    counts = stored.import_document(store, _read_json(args.file))
    say(", ".join(f"{n:,} {k.replace('_', ' ')}" for k, n in counts.items()))
    return 0


def _delete(store: Store, args: argparse.Namespace, say: Callable[[str], None]) -> int:
    what = f"study '{shown(args.study)}'" if args.study else f"scenario '{shown(args.name or '')}'"
    if not args.study and not args.name:
        raise InputError("give a scenario NAME, or --study NAME")
    if not args.yes:
        raise InputError(f"{what}: add --yes to delete it for good (every version)")
    if args.study:
        store.delete_study(args.study)
        say(f"deleted {what}")
    else:
        say(f"deleted {what} ({store.delete_scenario(args.name):,} versions)")
    return 0


def _frame(version: records.VersionInfo) -> pd.DataFrame:
    """A stored version as a one-row scenario table named ``NAME@VERSION`` (what ``--scenario`` evaluates)."""
    return pd.DataFrame([{**version.scenario(), "name": version.reference}])
