"""``token-economics serve``: the HTTP API on uvicorn (``--host 127.0.0.1 --port 8000`` by default).

Its options are the settings of :mod:`economics.api.settings` (each with its bounds); they are written to the
environment so that every uvicorn worker process (``--workers``) builds the same application. FastAPI and uvicorn
are imported only when the server starts, so the rest of the CLI runs without the ``[api]`` extra.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from dataclasses import fields, replace
from typing import Any

from economics.api import settings as api_settings
from economics.api.settings import ENV_PREFIX, LIMITS, Settings
from economics.schema.validation import InputError

MISSING_EXTRA = "the HTTP API needs FastAPI and uvicorn: pip install 'token-economics[api]'"


def add_serve_command(sub: Any) -> argparse.ArgumentParser:
    """The ``serve`` subcommand and its options (one per setting)."""
    cmd: argparse.ArgumentParser = sub.add_parser("serve", help="the HTTP API (FastAPI on uvicorn): evaluate, "
                                                  "explain, compare, retrofit, uncertainty, plan, import-benchmark")
    cmd.add_argument("--host", default="127.0.0.1", help="address to listen on (default %(default)s: this machine "
                     "only; put a reverse proxy in front to serve others)")
    cmd.add_argument("--port", type=int, default=8000, help="port (default %(default)s)")
    cmd.add_argument("--workers", type=int, default=1, help="uvicorn worker processes, each with its own pools "
                     "(default %(default)s)")
    add_limit_options(cmd)
    cmd.add_argument("--cors-origin", action="append", default=[], metavar="ORIGIN", help="a browser origin allowed "
                     f"to call the API (repeat for several; added to ${ENV_PREFIX}CORS_ORIGINS; default: none)")
    cmd.set_defaults(func=run)
    return cmd


def add_limit_options(cmd: argparse.ArgumentParser) -> None:
    """One option per limit of :data:`~economics.api.settings.LIMITS` (``serve`` and ``mcp`` take them all)."""
    defaults = Settings()
    for f in fields(Settings):
        if f.name in LIMITS:
            kind = int if isinstance(getattr(defaults, f.name), int) else float
            env = ENV_PREFIX + f.name.upper()
            cmd.add_argument("--" + f.name.replace("_", "-"), type=kind, default=None, help=LIMITS[f.name].help +
                             f" (default: ${env}, else {getattr(defaults, f.name):g})")


def settings_from_args(args: argparse.Namespace) -> Settings:
    """The settings the environment gives (``$TOKEN_ECONOMICS_API_*``, the bearer token only there), each option
    given overriding its variable; InputError names a bad one (its option or its variable).
    """
    try:
        base = api_settings.from_environment()
    except ValueError as exc:
        raise InputError(str(exc)) from None
    given = {f.name: getattr(args, f.name) for f in fields(Settings)
             if f.name in LIMITS and getattr(args, f.name) is not None}
    try:
        return replace(base, **given, cors_origins=(*base.cors_origins, *getattr(args, "cors_origin", [])))
    except ValueError as exc:  # "max_rows: must be ..." names the setting: name its option or its variable
        name = str(exc).split(":", 1)[0]
        where = "--" + name.replace("_", "-") if name in given else ENV_PREFIX + name.upper()
        raise InputError(where + ":" + str(exc).split(":", 1)[1]) from None


def run(args: argparse.Namespace) -> int:
    """Start the server and serve until interrupted; the exit code."""
    config = settings_from_args(args)
    if not 1 <= args.port <= 65535:
        raise InputError(f"--port: must be between 1 and 65535, got {args.port}")
    if not 1 <= args.workers <= 64:
        raise InputError(f"--workers: must be between 1 and 64, got {args.workers}")
    if not all(importlib.util.find_spec(name) for name in ("fastapi", "uvicorn", "python_multipart")):
        raise InputError(MISSING_EXTRA)
    import uvicorn

    warning = api_settings.token_warning(config)
    if warning:
        sys.stderr.write(warning + "\n")
    os.environ.update(api_settings.to_environment(config))
    uvicorn.run("economics.api.app:application", factory=True, http="economics.api.protocol:NoDelayH11Protocol",
                host=args.host, port=args.port,
                workers=args.workers, access_log=False, log_level="warning", timeout_graceful_shutdown=5)
    return 0

