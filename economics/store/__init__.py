"""The store: scenarios with every saved version, curve files by SHA-256, studies and plans, in SQLite (default: a
file in the user's data directory) or PostgreSQL (``TOKEN_ECONOMICS_DATABASE_URL=postgresql+psycopg://...``).

Nothing else needs it: the calculator, its CLI, API and app work as before without a store; a store is created (and
migrated, :mod:`economics.store.database`) the first time something is saved.

>>> import tempfile, os
>>> store = open_store(f"sqlite:///{tempfile.mkdtemp()}/doctest.sqlite")
>>> v1 = store.save_scenario("budget", {"accelerator": "h100-sxm", "accelerator_count": 8,
...                                      "output_tokens_per_s_per_accelerator": 1000}, saved_by="ana")
>>> v2 = store.save_scenario("budget", {**v1.fields, "accelerator_count": 16}, base_version=1, saved_by="li")
>>> v2.version, v2.changes
(2, [{'field': 'accelerator_count', 'before': 8, 'after': 16}])
>>> store.save_scenario("budget", v1.fields, base_version=1, saved_by="ana")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
economics.store.errors.StaleVersion: scenario 'budget': this save was based on version 1, but version 2 (saved by li ...
"""

from __future__ import annotations

import importlib
import threading
from typing import Any

from economics.schema import user_curves
from economics.store.errors import (
    Conflict,
    InvalidStored,
    NotFound,
    StaleVersion,
    StoreError,
    StoreUnavailable,
    TooLarge,
)
from economics.store.location import URL_VARIABLE, database_url

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing's extras; the names as mypy sees them
if TYPE_CHECKING:  # at run time each is imported on first use (below)
    from economics.store import database
    from economics.store.comparison import Comparison, compare
    from economics.store.records import CurveInfo, ScenarioSummary, StudyInfo, StudyKind, VersionInfo, reference
    from economics.store.repository import Store, current_user
    from economics.store.transfer import export_document, import_document

_LAZY = {
    "database": "economics.store.database",
    **dict.fromkeys(("Comparison", "compare"), "economics.store.comparison"),
    **dict.fromkeys(("CurveInfo", "ScenarioSummary", "StudyInfo", "StudyKind", "VersionInfo", "reference"),
                    "economics.store.records"),
    **dict.fromkeys(("Store", "current_user"), "economics.store.repository"),
    **dict.fromkeys(("export_document", "import_document"), "economics.store.transfer"),
}
"""Public name -> the module that defines it, imported on first use (issue #43): the database layer brings
SQLAlchemy and Alembic (about half a second), and the comparison the engine, which a process that opens no store
(the CLI's other commands, the app's first page) never needs. The package itself imports only the errors, the
store's location and the curve lookup's hook, so ``use_stored_curves()`` at start-up costs nothing."""


def __getattr__(name: str) -> Any:
    """A public name of the store, imported from its module on first use (then kept as an attribute)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'economics.store' has no attribute {name!r}")
    value = importlib.import_module(module)
    value = value if module.endswith("." + name) else getattr(value, name)
    globals()[name] = value
    return value


def _name(name: str) -> Any:
    """One of :data:`_LAZY`'s names for this module's own functions (a global lookup skips ``__getattr__``)."""
    return globals()[name] if name in globals() else __getattr__(name)


__all__ = ["URL_VARIABLE", "Comparison", "Conflict", "CurveInfo", "InvalidStored", "NotFound", "ScenarioSummary",
           "StaleVersion", "Store", "StoreError", "StoreUnavailable", "StudyInfo", "StudyKind", "TooLarge",
           "VersionInfo", "compare", "compare_versions", "current_user", "database", "database_url",
           "export_document", "import_document", "open_store", "reference", "resolve", "use_stored_curves"]

_lock = threading.Lock()
_open: dict[str, Store] = {}


def open_store(url: str | None = None) -> Store:
    """The store at ``url`` (default :func:`~economics.store.database.database_url`), created and migrated on first
    use; one :class:`Store` per URL per process.
    """
    url = url or database_url()
    with _lock:
        if url not in _open:
            _open[url] = _name("Store")(url)
        return _open[url]


def existing_store(url: str | None = None) -> Store | None:
    """The store at ``url`` if there is one to read (a SQLite file that exists, or a server), else None: reading
    never creates a store.
    """
    url = url or database_url()
    return open_store(url) if _name("database").exists(url) else None


def resolve(text: str, url: str | None = None) -> VersionInfo:
    """The stored scenario ``NAME[@VERSION]`` (default: its newest version), checked by the scenario schema: what
    the CLI's ``--scenario`` reads.
    """
    name, version = _name("reference")(text)
    store = existing_store(url)
    if store is None:
        where = _name("database").shown_url(url or database_url())
        raise NotFound(f"--scenario {text}: there is no store yet at {where} "
                       "(save a scenario first: python -m economics store save)", "scenario", text)
    return store.scenario(name, version)


def compare_versions(name: str, a: int, b: int, url: str | None = None) -> Comparison:
    """Versions ``a`` and ``b`` of the stored scenario ``name``: the fields that differ and the KPIs of each."""
    store = open_store(url)
    return _name("compare")(store.scenario(name, a), store.scenario(name, b))


def _stored_curve(sha256: str) -> user_curves.CurveFile | None:
    """A curve file from the store, if there is a store and it holds one by this hash (the lookup of
    :func:`use_stored_curves`; a store that cannot be read finds nothing: the scenario is then told the curve is
    not loaded, as without a store).
    """
    try:
        store = existing_store()
        return None if store is None else store.curve_file(sha256)
    except StoreError:
        return None


def use_stored_curves(enabled: bool = True) -> None:
    """Let a scenario naming a curve file (``curves_sha256``) not held in memory find it in the store: a link opened
    after a restart resolves (the CLI, the HTTP API's workers and the app call this when they start).
    """
    user_curves.set_lookup(_stored_curve if enabled else None)


def scenario_json(version: VersionInfo) -> dict[str, Any]:
    """A stored version as JSON, its fields included."""
    return version.as_json()
