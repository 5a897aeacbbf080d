"""The Streamlit server a load bench measures: started on 127.0.0.1 with the app, stopped whatever happens, and its
CPU seconds and resident memory read with psutil (the process and any children)."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from pathlib import Path
from typing import IO

import psutil  # type: ignore[import-untyped]  # no stubs in the dev environment

from bench.app_latency import HOST, wait_healthy

ROOT = Path(__file__).resolve().parent.parent
CLOSE_TIMEOUT_S = 10.0



def start_server(port: int, log: IO[bytes]) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port", str(port),
           "--server.address", HOST, "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_healthy(port, proc, log)
    except BaseException:
        stop_server(proc)
        raise
    return proc


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=CLOSE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=CLOSE_TIMEOUT_S)


def _tree(server: psutil.Process) -> list[psutil.Process]:
    try:
        return [server, *server.children(recursive=True)]
    except psutil.Error:
        return [server]


def cpu_s(server: psutil.Process) -> float:
    """User + system CPU seconds of the server and its children so far."""
    total = 0.0
    for p in _tree(server):
        with contextlib.suppress(psutil.Error):
            times = p.cpu_times()
            total += times.user + times.system
    return total


def rss(server: psutil.Process) -> int:
    """Resident memory of the server and its children [bytes]."""
    total = 0
    for p in _tree(server):
        with contextlib.suppress(psutil.Error):
            total += p.memory_info().rss
    return total
