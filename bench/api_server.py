"""The HTTP API server a test or bench talks to: ``python -m economics serve`` on 127.0.0.1 in its own process, with
the settings given as environment variables, waited for on ``/v1/health`` and stopped whatever happens."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO

import httpx

from bench.server_proc import stop_server

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"
START_TIMEOUT_S = 300.0
"""Longest wait for a started server's ``/v1/health`` [s]: a bound on a hang, never a measure. A start takes 8 s idle
and 25-58 s at a load of 16 (tests/conftest.py's ``api``); at 90 s, servers the API tests started beside two busy
loops and other helpers' work (load 17-20) failed to answer in time (2 of 6 in one run of three API tests)."""


def free_port() -> int:
    """A port nothing listens on now (the operating system's pick)."""
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def start_api(port: int, log: IO[bytes], env: Mapping[str, str] | None = None,
              args: tuple[str, ...] = ()) -> subprocess.Popen[bytes]:
    """The server started with ``env`` added to this environment and ``args`` after ``serve``; it answers
    ``/v1/health`` when this returns (RuntimeError with its log's end if it never does)."""
    cmd = [sys.executable, "-m", "economics", "serve", "--host", HOST, "--port", str(port), *args]
    full = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    proc = subprocess.Popen(cmd, cwd=ROOT, env=full, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the API server exited with {proc.returncode} before it answered")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"http://{HOST}:{port}/v1/health", timeout=2).status_code == 200:
                return proc
        time.sleep(0.2)
    stop_server(proc)
    raise RuntimeError(f"the API server did not answer /v1/health within {START_TIMEOUT_S:g} s")


@contextlib.contextmanager
def running_api(log: IO[bytes], env: Mapping[str, str] | None = None,
                args: tuple[str, ...] = ()) -> Iterator[str]:
    """The base URL of a server running for the block."""
    port = free_port()
    proc = start_api(port, log, env, args)
    try:
        yield f"http://{HOST}:{port}"
    finally:
        stop_server(proc)
