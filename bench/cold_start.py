"""The server's side of the app's cold start, in CPU seconds (which a loaded machine inflates far less than wall time):
``streamlit run app.py`` launched, then one session opened over Streamlit's own websocket (bench/st_protocol.py, no
browser) asking for the default page, as the browser does once it has loaded Streamlit's page.

Prints, per start, the server's CPU (user + system, psutil) when it answers its health check, when the default
page's first KPI (``Cost per M tokens``, exactly the engine's figure) leaves it and when the run has finished, and
the wall time of each step; then the median of each over the starts. ``--watcher`` sets the server's file watcher
(``server.fileWatcherType``: ``none`` as bench/app_latency.py runs it, or ``auto``, Streamlit's default, which
watches every module of the app); ``--bytecode`` lets the server write and read Python's compiled modules
(``__pycache__``) even where the environment turns that off (``PYTHONDONTWRITEBYTECODE``), as a deployment does
after its first start (the first such start writes them and is not timed apart: run it once first).

Usage: python bench/cold_start.py [--starts 3] [--watcher none|auto] [--bytecode] [--page-load 0.7]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO

import psutil  # type: ignore[import-untyped]  # no stubs in the dev environment
from websockets.asyncio.client import connect
from websockets.typing import Origin, Subprotocol

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import economics  # noqa: E402
from bench.app_latency import COST_KPI, HOST, expected_cost_kpi, free_port, wait_healthy  # noqa: E402
from bench.server_proc import cpu_s, stop_server  # noqa: E402
from bench.st_protocol import STREAM_PATH, SUBPROTOCOLS, Mirror  # noqa: E402

RUN_TIMEOUT_S = 120.0
MAX_FRAME = 64 * 2**20


def start(port: int, log: IO[bytes], watcher: str, bytecode: bool) -> subprocess.Popen[bytes]:
    """``python -m streamlit run app.py`` as bench/app_latency.py starts it, with this file watcher."""
    env = dict(os.environ)
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port",
           str(port), "--server.address", HOST, "--browser.gatherUsageStats", "false", "--server.fileWatcherType",
           watcher]
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)


async def first_run(port: int, server: psutil.Process, expected: str) -> tuple[float, float, float, float]:
    """(CPU and wall seconds from now to the first KPI, then to the run's end) of a session on the default page."""
    mirror = Mirror(url=f"http://{HOST}:{port}/")
    t0 = time.perf_counter()
    kpi_cpu = kpi_wall = None
    async with connect(f"ws://{HOST}:{port}{STREAM_PATH}", subprotocols=[Subprotocol(p) for p in SUBPROTOCOLS],
                       origin=Origin(f"http://{HOST}:{port}"), proxy=None, open_timeout=RUN_TIMEOUT_S,
                       ping_interval=None, max_size=MAX_FRAME) as ws:
        await ws.send(mirror.rerun())
        while True:
            seen = mirror.read(await asyncio.wait_for(ws.recv(), RUN_TIMEOUT_S))  # type: ignore[arg-type]
            if seen.error:
                raise RuntimeError(f"the first run drew {seen.error}")
            if kpi_cpu is None and COST_KPI in seen.metrics:
                if seen.metrics[COST_KPI] != expected:
                    raise RuntimeError(f"first KPI {seen.metrics[COST_KPI]!r}, expected {expected!r}")
                kpi_cpu, kpi_wall = cpu_s(server), time.perf_counter() - t0
            if seen.finished:
                if kpi_cpu is None or kpi_wall is None:
                    raise RuntimeError("the first run drew no cost KPI")
                return kpi_cpu, kpi_wall, cpu_s(server), time.perf_counter() - t0


def one_start(watcher: str, bytecode: bool, expected: str, page_load: float) -> dict[str, float]:
    """Launch a server, time its health and its first session's run (opened ``page_load`` seconds after the health
    check answers, as a browser loading Streamlit's page would), stop it."""
    port = free_port()
    with tempfile.TemporaryFile() as log:
        t0 = time.perf_counter()
        proc = start(port, log, watcher, bytecode)
        try:
            wait_healthy(port, proc, log, say=False)  # its wall time is reported below, with the run's
            healthy_wall = time.perf_counter() - t0
            server = psutil.Process(proc.pid)
            healthy_cpu = cpu_s(server)
            time.sleep(page_load)
            connect_wall, connect_cpu = time.perf_counter() - t0, cpu_s(server)
            kpi_cpu, kpi_wall, end_cpu, end_wall = asyncio.run(first_run(port, server, expected))
        finally:
            stop_server(proc)
    return {"healthy_cpu": healthy_cpu, "connect_cpu": connect_cpu, "kpi_cpu": kpi_cpu, "end_cpu": end_cpu,
            "healthy_wall": healthy_wall, "connect_wall": connect_wall, "kpi_wall": connect_wall + kpi_wall,
            "end_wall": connect_wall + end_wall}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--starts", type=int, default=3, help="server starts to time (default 3)")
    ap.add_argument("--watcher", choices=["none", "auto"], default="none",
                    help="server.fileWatcherType (default none, as bench/app_latency.py)")
    ap.add_argument("--bytecode", action="store_true", help="let the server write and read __pycache__")
    ap.add_argument("--page-load", type=float, default=0.0, metavar="S",
                    help="seconds between the health check and the session, as a browser loading Streamlit's page "
                         "spends (0.6-0.8 s quiet; default 0)")
    args = ap.parse_args()
    if args.starts < 1 or not 0 <= args.page_load <= 30:
        ap.error("--starts must be at least 1 and --page-load 0-30 s")
    expected = expected_cost_kpi(economics.default_scenario().electricity_usd_per_kwh)
    load_before = os.getloadavg()[0]
    runs = []
    for i in range(args.starts):
        r = one_start(args.watcher, args.bytecode, expected, args.page_load)
        runs.append(r)
        print(f"start {i + 1}: server CPU {r['healthy_cpu']:.2f} s when healthy, {r['connect_cpu']:.2f} s when the "
              f"session opened, {r['kpi_cpu']:.2f} s when the first KPI left it ({r['kpi_cpu'] - r['connect_cpu']:.2f} "
              f"s after the session opened), {r['end_cpu']:.2f} s at the run's end; wall {r['healthy_wall']:.2f} / "
              f"{r['connect_wall']:.2f} / {r['kpi_wall']:.2f} / {r['end_wall']:.2f} s (no browser: the page's own "
              f"load is not in these)")
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    bytecode = "written and read" if args.bytecode else "as the environment says"
    print(f"median of {len(runs)} (watcher {args.watcher}, bytecode {bytecode}): server CPU "
          f"{med['healthy_cpu']:.2f} s healthy, {med['kpi_cpu']:.2f} s at the "
          f"first KPI ({med['kpi_cpu'] - med['connect_cpu']:.2f} s of it after the session opened {args.page_load:g} s "
          f"after the health check), {med['end_cpu']:.2f} s at the run's end; wall {med['healthy_wall']:.2f} / "
          f"{med['kpi_wall']:.2f} / {med['end_wall']:.2f} s; "
          f"load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after")


if __name__ == "__main__":
    main()
