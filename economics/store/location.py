"""Where the store lives: the database URL from the environment, else a SQLite file in the user's data directory.

Kept apart from :mod:`economics.store.database`, which opens the store with SQLAlchemy and Alembic (about half a
second to import), so that a process which only names the store (the CLI's ``--database`` help, the app's start-up)
imports no database library (issue #43). :mod:`economics.store.database` re-exports these names.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

URL_VARIABLE = "TOKEN_ECONOMICS_DATABASE_URL"
APP_DIR = "token-economics"


def data_dir(env: Mapping[str, str] | None = None, platform: str = sys.platform, home: Path | None = None) -> Path:
    r"""The user's data directory for this tool: ``$XDG_DATA_HOME/token-economics`` (default
    ``~/.local/share/token-economics``) on Linux, ``~/Library/Application Support/token-economics`` on macOS,
    ``%LOCALAPPDATA%\\token-economics`` on Windows (the places platformdirs gives, without the dependency).

    >>> data_dir({"XDG_DATA_HOME": "/data"}, "linux").as_posix()
    '/data/token-economics'
    >>> data_dir({}, "linux", Path("/home/a")).as_posix()
    '/home/a/.local/share/token-economics'
    """
    env = os.environ if env is None else env
    home = home or Path.home()
    if platform == "darwin":
        return home / "Library" / "Application Support" / APP_DIR
    if platform.startswith("win"):
        return Path(env.get("LOCALAPPDATA") or home / "AppData" / "Local") / APP_DIR
    return Path(env.get("XDG_DATA_HOME") or home / ".local" / "share") / APP_DIR


def default_url(env: Mapping[str, str] | None = None) -> str:
    """The SQLite file in :func:`data_dir`: ``sqlite:///<data dir>/store.sqlite``."""
    return f"sqlite:///{data_dir(env) / 'store.sqlite'}"


def database_url(env: Mapping[str, str] | None = None) -> str:
    """The store's URL: :data:`URL_VARIABLE` when set (and not empty), else :func:`default_url`.

    >>> database_url({URL_VARIABLE: "sqlite:///x.sqlite"})
    'sqlite:///x.sqlite'
    """
    env = os.environ if env is None else env
    return env.get(URL_VARIABLE) or default_url(env)
