"""Where the store lives and how it is opened: the database URL, its engine, and its schema brought up to date by
the Alembic migrations shipped in this package.

``TOKEN_ECONOMICS_DATABASE_URL`` names the database (any SQLAlchemy URL: ``postgresql+psycopg://user@host/db`` for a
team's server); without it, a SQLite file in the user's data directory (:func:`default_url`). A store is created,
and migrated, the first time something is saved; reading a store that does not exist finds nothing rather than
creating one, so the tool without a store behaves exactly as it did before there was one.
"""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, SQLAlchemyError

from economics.schema.values import shown
from economics.store.errors import StoreUnavailable
from economics.store.location import APP_DIR as APP_DIR
from economics.store.location import URL_VARIABLE as URL_VARIABLE
from economics.store.location import data_dir as data_dir
from economics.store.location import database_url as database_url
from economics.store.location import default_url as default_url

MIGRATIONS = Path(__file__).parent / "migrations"
SQLITE_BUSY_TIMEOUT_S = 30
"""How long a SQLite writer waits for another's transaction to end before the save is refused (busy)."""
POSTGRES_MIGRATION_LOCK = 0x7E57_0001
"""The advisory lock that lets one process at a time migrate a PostgreSQL store (two servers starting together)."""


def shown_url(url: str) -> str:
    """The URL as a message shows it: its password hidden.

    >>> shown_url("postgresql+psycopg://ana:secret@db/te")
    'postgresql+psycopg://ana:***@db/te'
    """
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return shown(url, 200)


def sqlite_path(url: str) -> Path | None:
    """The file of a SQLite URL (None for another database, or SQLite in memory)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database)


def exists(url: str) -> bool:
    """Whether there may be a store at ``url`` to read: a SQLite file that exists, or any server database."""
    try:
        path = sqlite_path(url)
    except ArgumentError:
        return False
    return path is None or path.exists()


def _sqlite_pragmas(dbapi_connection: object, _record: object) -> None:
    cursor = dbapi_connection.cursor()  # type: ignore[attr-defined]
    cursor.execute("PRAGMA foreign_keys=ON")  # a version never outlives its scenario
    cursor.close()


def create_engine(url: str) -> Engine:
    """An engine for ``url``; a SQLite file's directory is created. :class:`StoreUnavailable` names a URL that is
    not one, or a database driver that is not installed (``pip install 'token-economics[postgres]'``).
    """
    try:
        parsed = make_url(url)
        path = sqlite_path(url)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            engine = sa.create_engine(parsed, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S})
            sa.event.listen(engine, "connect", _sqlite_pragmas)
            return engine
        return sa.create_engine(parsed, pool_pre_ping=True)
    except ArgumentError:
        raise StoreUnavailable(f"{URL_VARIABLE}: {shown(url, 200)} is not a database URL (e.g. "
                               "sqlite:///store.sqlite or postgresql+psycopg://user@host/db)") from None
    except (NoSuchModuleError, ModuleNotFoundError) as exc:
        raise StoreUnavailable(f"{URL_VARIABLE}: no driver for {shown_url(url)} ({exc}); for PostgreSQL install "
                               "token-economics[postgres] (psycopg)") from None
    except OSError as exc:
        raise StoreUnavailable(f"{URL_VARIABLE}: cannot create the store's directory for {shown_url(url)}: "
                               f"{exc.strerror or type(exc).__name__}") from None


def _config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS).replace("%", "%%"))
    return config


def head_revision() -> str:
    """The newest migration's revision: the schema this version of the package reads and writes."""
    return str(ScriptDirectory.from_config(_config()).get_current_head())


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at (None: never migrated, an empty database)."""
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def migrate(engine: Engine) -> str:
    """Bring the database's schema up to :func:`head_revision` (from empty, or from any earlier revision), in one
    transaction; returns the revision. Another process migrating at the same time is waited for (PostgreSQL) or
    found to have done it. A database newer than this package is refused, naming both revisions.
    """
    head = head_revision()
    try:
        current = current_revision(engine)
        if current == head:
            return head
        known = {s.revision for s in ScriptDirectory.from_config(_config()).walk_revisions()}
        if current is not None and current not in known:
            raise StoreUnavailable(f"the store at {shown_url(str(engine.url))} is at schema revision {current}, "
                                   f"newer than this version of token-economics knows (head {head}): upgrade it")
        config = _config()
        with engine.begin() as connection:
            if engine.dialect.name == "postgresql":
                connection.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": POSTGRES_MIGRATION_LOCK})
            config.attributes["connection"] = connection
            command.upgrade(config, "head")
    except SQLAlchemyError as exc:
        if _at_head(engine, head):  # another process migrated it between our look and our upgrade
            return head
        raise StoreUnavailable(f"cannot migrate the store at {shown_url(str(engine.url))}: "
                               f"{failure(exc)}") from None
    return head


def failure(exc: SQLAlchemyError) -> str:
    """A database error in one line: the driver's error's type and message (SQLAlchemy's wrapper left out)."""
    cause = getattr(exc, "orig", None) or exc
    return f"{type(cause).__name__}: {shown(str(cause).strip(), 300)}"


def _at_head(engine: Engine, head: str) -> bool:
    try:
        return current_revision(engine) == head
    except SQLAlchemyError:
        return False
