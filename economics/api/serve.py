"""``token-economics serve``: the HTTP API on uvicorn (``--host 127.0.0.1 --port 8000`` by default).

Its options are the settings of :mod:`economics.api.settings` (each with its bounds); they are written to the
environment so that every uvicorn worker process (``--workers``) builds the same application. FastAPI and uvicorn
are imported only when the server starts, so the rest of the CLI runs without the ``[api]`` extra.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import fields
from typing import Any

from economics.api import settings as api_settings
from economics.api.settings import LIMITS, TOKEN_VARIABLE, Settings

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
    defaults = Settings()
    for f in fields(Settings):
        if f.name in LIMITS:
            kind = int if isinstance(getattr(defaults, f.name), int) else float
            cmd.add_argument("--" + f.name.replace("_", "-"), type=kind, default=getattr(defaults, f.name),
                             help=LIMITS[f.name].help + " (default %(default)s)")
    cmd.add_argument("--cors-origin", action="append", default=[], metavar="ORIGIN", help="a browser origin allowed "
                     "to call the API (repeat for several; default: none)")
    cmd.set_defaults(func=run)
    return cmd


def settings_from_args(args: argparse.Namespace) -> Settings:
    """The settings the options give, the bearer token from ``$TOKEN_ECONOMICS_API_TOKEN``; ValueError names a bad
    one.
    """
    given = {f.name: getattr(args, f.name) for f in fields(Settings) if f.name in LIMITS}
    return Settings(**given, token=os.environ.get(TOKEN_VARIABLE, ""), cors_origins=tuple(args.cors_origin))


def run(args: argparse.Namespace) -> int:
    """Start the server and serve until interrupted; the exit code."""
    from economics.validation import InputError

    try:
        config = settings_from_args(args)
    except ValueError as exc:
        raise InputError(f"--{str(exc).replace('_', '-')}") from None
    if not 1 <= args.port <= 65535:
        raise InputError(f"--port: must be between 1 and 65535, got {args.port}")
    if not 1 <= args.workers <= 64:
        raise InputError(f"--workers: must be between 1 and 64, got {args.workers}")
    try:
        import uvicorn

        from economics.api.app import configure_access_log
    except ImportError:
        raise InputError(MISSING_EXTRA) from None
    os.environ.update(api_settings.to_environment(config))
    configure_access_log()
    uvicorn.run("economics.api.serve:application", factory=True, host=args.host, port=args.port,
                workers=args.workers, access_log=False, log_level="warning", timeout_graceful_shutdown=5)
    return 0


def application() -> Any:
    """The application a uvicorn worker process serves, its settings from the environment ``serve`` wrote."""
    from economics.api.app import configure_access_log, create_app

    configure_access_log()
    return create_app(api_settings.from_environment())
