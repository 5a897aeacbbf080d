"""``token-economics mcp``: the MCP server over stdio (the default: an assistant starts it as a subprocess) or,
with ``--http [HOST:]PORT``, streamable HTTP at ``http://HOST:PORT/mcp`` (HOST 127.0.0.1 unless given).

Its limits are the HTTP API's settings, with the same options and ``TOKEN_ECONOMICS_API_*`` variables. The SDK is
the ``[mcp]`` extra: imported only when the server starts, so the rest of the CLI runs without it.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import ipaddress
import sys
from typing import Any

from economics.api import settings as api_settings
from economics.api.serve import add_limit_options, settings_from_args
from economics.schema.validation import InputError

MISSING_EXTRA = "the MCP server needs the mcp SDK and the HTTP API's packages: pip install 'token-economics[mcp]'"
NEEDED = ("mcp", "fastapi", "uvicorn", "starlette")
DEFAULT_HOST = "127.0.0.1"


def add_mcp_command(sub: Any) -> argparse.ArgumentParser:
    """The ``mcp`` subcommand and its options."""
    cmd: argparse.ArgumentParser = sub.add_parser("mcp", help="the MCP server for AI assistants (stdio, or "
                                                  "streamable HTTP with --http): evaluate, explain, compare, plan, "
                                                  "retrofit, fields, catalog; the store's list_scenarios, "
                                                  "get_scenario, save_scenario")
    cmd.add_argument("--http", metavar="[HOST:]PORT", default=None, help="serve streamable HTTP at "
                     f"http://HOST:PORT/mcp instead of stdio (HOST {DEFAULT_HOST} unless given: this machine only)")
    add_limit_options(cmd)
    cmd.set_defaults(func=run)
    return cmd


def address(text: str) -> tuple[str, int]:
    """(host, port) of ``--http``: ``PORT``, ``HOST:PORT`` or ``[IPv6]:PORT``; InputError naming the option.

    >>> address("8765"), address("0.0.0.0:80"), address("[::1]:8765")
    (('127.0.0.1', 8765), ('0.0.0.0', 80), ('::1', 8765))
    """
    host, _, port = text.rpartition(":")
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        raise InputError(f"--http: the port must be a whole number between 1 and 65535, got '{text[:100]}'")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise InputError(f"--http: '{host[:100]}' is not an IPv6 address") from None
    elif ":" in host:
        raise InputError(f"--http: write an IPv6 address in brackets, [ADDRESS]:PORT, got '{text[:100]}'")
    return host or DEFAULT_HOST, int(port)


def run(args: argparse.Namespace) -> int:
    """Serve until the client closes standard input (stdio) or until interrupted (HTTP); the exit code."""
    config = settings_from_args(args)
    where = None if args.http is None else address(args.http)
    if not all(importlib.util.find_spec(name) for name in NEEDED):
        raise InputError(MISSING_EXTRA)
    server = importlib.import_module("economics.mcp.server")  # the SDK: an extra, as serve's uvicorn is
    warning = api_settings.token_warning(config)
    if warning:
        sys.stderr.write(warning + "\n")
    if where is None:
        server.serve_stdio(config)
    else:
        server.serve_http(config, *where)
    return 0
