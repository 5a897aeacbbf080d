"""Capacity of the Streamlit server: N sessions editing the Cost page at once, spoken over Streamlit's own websocket
protocol instead of through browsers, so that the figures are the server's alone.

bench/load.py drives headless Chromium, whose pages run on the same cores as the server. Here each simulated
session is one websocket to ``/_stcore/stream`` that behaves as the page's code does (bench/st_protocol.py says
how, read from the installed Streamlit): it asks for a run of the default page (Cost), keeps every widget state
the server's elements seed, and an edit is the ``rerun_script`` message the page sends when someone types a new
electricity price into the sidebar box and presses Enter: the box's id with the typed text as ``string_value``
(the box is a ``text_input``, so the text goes as typed, not as a number) plus every other widget's current state,
the page's script hash, the URL's query as the app last wrote it and the cached message hashes. No page assets are
fetched and nothing is drawn: only the websocket traffic of a session is replayed.

Prices come from a pool of ``--prices`` distinct values (default 2000, spread over 0.02..0.42 USD/kWh, each with its
expected KPI text computed before the server starts), taken in turn by all sessions: no two edits of a pass ask the
same scenario, so the app's per-scenario caches miss as they would for different users; ``--prices 8`` measures
the cached case instead. A session skips a price whose KPI text is the one its page already shows, so that the
update it waits for is unambiguous.

The bench starts the app itself (``python -m streamlit run app.py`` on a free port of 127.0.0.1, headless, usage
stats off and, as the other app benches, no file watcher) and waits for ``/_stcore/health``. One session opens and
closes first (the first run imports the app's modules); the idle server's resident memory is read after it.

Capacity sweep: for each N in ``--sessions``, N sessions open at once (each waits for its page's first run to
finish), then rounds: every session edits its price at once, each after a random delay of 0..``--jitter`` ms
(default 50, drawn anew every round from a seeded generator, so the N requests arrive spread over a few tens of
milliseconds, as from N people editing at the same moment, not in the same instant), waits for its KPI and for its
run to finish (as a user reads the result before the next edit), and the round ends when all have. Latency runs from
just before the message is written to the socket until the first ``delta`` drawing the metric "Cost per M tokens"
with exactly the text ``expected_cost_kpi(price)`` of bench/app_latency.py (the repo's own figure, computed before
the server starts). Errors: an ``exception`` element or an error alert drawn during an edit, a KPI not showing the
expected text within 15 s, a run not finished within those 15 s, a dropped connection (the session is then dropped).
At most ``--rounds`` rounds and ``--wall`` seconds of rounds per N (a round under way finishes). Per N it prints the
updates, errors, median / p95 / max latency, the server's CPU (psutil, the process and any children: CPU seconds
over wall seconds, 100 % = one core) and this process's, the server's RSS after the N sessions opened, and that
minus the idle RSS, per session. Then the largest N whose p95 is under 1 s with no errors, every smaller N passing
too.

Soak (``--soak MINUTES``): ``--soak-sessions`` sessions (default half the capacity a sweep run first finds; given,
no sweep is run) edit continuously for MINUTES, each in its own loop: edit, wait for the KPI, read what the server
still sends for ``--think`` seconds (drawn, 0.5..1.5 times it, first edits spread over one think time, as in the
paced sweep), edit again. The server's RSS is sampled every 10 s; it prints the series per
minute (total, and per session: above the RSS before the soak's sessions opened, divided by their number), the
least-squares slope over the last half of the run in MB/min, and "flat" when the growth the slope gives over the
last 10 minutes (the last half, when that is shorter) is under 20 MB or 2 % of the RSS, whichever is larger. The
sessions close cleanly at the end.

Every wait has a timeout; the server is always stopped (also on Ctrl-C); only 127.0.0.1 is contacted. The bench
prints figures and asserts nothing about time. Disconnected sessions are kept by Streamlit for 120 s
(server.disconnectedSessionTTL) and freed memory seldom returns to the system, so the RSS of a step can include what
an earlier step left behind; and the garbage of the warm-up session is only collected once the next session runs
(about 6 MB here), so a per-session figure means something only where N times it is well above that.

Paced sweep (``--paced THINK_S``): the same N, but each session edits on its own, THINK_S seconds (a uniform
draw of 0.5..1.5 times it) after its KPI arrived, first edits spread over one think time, for ``--wall`` seconds
per N: people reading a result before the next edit, rather than all pressing Enter in the same instant. The
same figures and the same capacity rule. A sweep stops at an N twice the largest that held, once one fails.

Usage: python bench/server_load.py [--sessions 1,2,4,8,16,32,48,64] [--rounds 10] [--wall 60] [--jitter 50]
       [--prices 2000] [--paced THINK_S] [--soak MINUTES [--soak-sessions N] [--think 1.0]]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import psutil  # type: ignore[import-untyped]  # no stubs in the dev environment
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake
from websockets.typing import Origin, Subprotocol

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import economics  # noqa: E402
from bench.app_latency import COST_KPI, HOST, expected_cost_kpi, free_port, percentile, tail  # noqa: E402
from bench.load import parse_counts  # noqa: E402
from bench.server_proc import cpu_s, rss, start_server, stop_server  # noqa: E402
from bench.st_protocol import STREAM_PATH, SUBPROTOCOLS, Mirror, Seen, string_state  # noqa: E402

FIELD = "electricity_usd_per_kwh"
UPDATE_TIMEOUT_S = 15.0
OPEN_TIMEOUT_S = 60.0
CLOSE_TIMEOUT_S = 10.0
P95_TARGET_MS = 1000.0
RSS_EVERY_S = 10.0
FLAT_MB, FLAT_SHARE = 20.0, 0.02
MAX_FRAME = 64 * 2**20
MB = 2**20


class SessionError(Exception):
    """An edit or an opening that went wrong, with what went wrong."""


@dataclass
class Session:
    """One simulated browser tab: its websocket and what its page keeps."""

    index: int
    ws: ClientConnection
    mirror: Mirror
    widget: str = ""  # the electricity box's widget id
    shown: str = ""  # the latest KPI text the server sent
    alive: bool = True
    errors: list[str] = field(default_factory=list)  # error elements drawn since the last look


@dataclass
class StepResult:
    sessions: int
    opened: int = 0
    rounds: int = 0
    planned: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    server_cpu_s: float = 0.0
    client_cpu_s: float = 0.0
    rss_open: int = 0

    def p95(self) -> float | None:
        return percentile(self.latencies_ms, 95) if self.latencies_ms else None

    def holds(self) -> bool:
        p95 = self.p95()
        return not self.errors and p95 is not None and p95 < P95_TARGET_MS


class Prices:
    """Distinct electricity prices [USD/kWh] with the KPI text each gives, taken in turn by every session: spread
    over 0.02..0.42 (golden-ratio steps, five decimals), so no two edits of a pass ask the same scenario and the
    app's caches miss as they would for different users (a pass longer than the caches' entries evicts them)."""

    def __init__(self, count: int) -> None:
        prices = dict.fromkeys(round(0.02 + 0.4 * ((k * 0.6180339887) % 1), 5) for k in range(count))
        self.table = [(price, expected_cost_kpi(price)) for price in prices]
        self.cursor = 0
        if len({text for _, text in self.table}) < 2:
            raise RuntimeError(f"the {len(self.table)} prices give fewer than two KPI texts")

    def take(self, shown: str) -> tuple[float, str]:
        """The next price whose KPI text differs from ``shown`` (what the session's page shows now)."""
        for _ in range(len(self.table)):
            price, text = self.table[self.cursor % len(self.table)]
            self.cursor += 1
            if text != shown:
                return price, text
        raise RuntimeError(f"no price changes the KPI from {shown!r}")


# ---------------------------------------------------------------- one session


async def pump(session: Session, until: Callable[[Seen], bool], timeout_s: float) -> Seen:
    """Read the server's messages until one passes ``until``; raises TimeoutError after ``timeout_s``."""
    async with asyncio.timeout(timeout_s):
        while True:
            data = await session.ws.recv(decode=False)
            seen = session.mirror.read(data)
            if COST_KPI in seen.metrics:
                session.shown = seen.metrics[COST_KPI]
            if seen.error:
                session.errors.append(seen.error)
            if until(seen):
                return seen


async def drain(session: Session, seconds: float) -> str | None:
    """Read (and keep) whatever the server sends for ``seconds``, as an open page does while its user reads; what
    went wrong meanwhile (an error element drawn, the connection dropped), if anything."""
    try:
        await pump(session, lambda _: False, seconds)
    except TimeoutError:
        pass
    except ConnectionClosed as exc:
        session.alive = False
        return f"connection dropped: {exc}"
    error = f"the run drew {session.errors[0]} after the KPI" if session.errors else None
    session.errors.clear()
    return error


async def open_session(port: int, index: int) -> Session:
    """Connect as the page does, ask for the default page and wait for its first run to finish."""
    ws = await connect(f"ws://{HOST}:{port}{STREAM_PATH}", subprotocols=[Subprotocol(p) for p in SUBPROTOCOLS],
                       origin=Origin(f"http://{HOST}:{port}"), proxy=None, open_timeout=OPEN_TIMEOUT_S,
                       close_timeout=CLOSE_TIMEOUT_S, ping_interval=None, max_size=MAX_FRAME)
    session = Session(index=index, ws=ws, mirror=Mirror(url=f"http://{HOST}:{port}/"))
    try:
        await ws.send(session.mirror.rerun())
        await pump(session, lambda s: s.finished, OPEN_TIMEOUT_S)
        widget = session.mirror.widget_id(FIELD)
        if widget is None or not session.shown:
            raise SessionError(f"the first run drew no {FIELD} box or no {COST_KPI!r} KPI")
        if session.errors:
            raise SessionError(f"the first run drew {session.errors[0]}")
        session.widget = widget
    except BaseException:
        await close(session)
        raise
    return session


async def close(session: Session) -> None:
    """Close the websocket as a closing tab does (bounded by the connection's close timeout)."""
    with contextlib.suppress(ConnectionClosed, OSError, TimeoutError):
        await session.ws.close()


async def edit(session: Session, price: float, expected: str, finish: bool) -> float:
    """Type ``price`` into the box and press Enter, as the page reports it; the seconds until the KPI shows
    ``expected``. With ``finish``, also wait (off the clock) for the run to end. Raises SessionError."""
    session.errors.clear()
    message = session.mirror.rerun({session.widget: string_state(session.widget, f"{price:.5f}")})
    t0 = time.perf_counter()
    try:
        await session.ws.send(message)
        await pump(session, lambda s: s.metrics.get(COST_KPI) == expected, UPDATE_TIMEOUT_S)
        latency = time.perf_counter() - t0
        if finish:
            await pump(session, lambda s: s.finished, max(0.1, UPDATE_TIMEOUT_S - (time.perf_counter() - t0)))
    except TimeoutError:
        what = "run not finished" if session.shown == expected else f"KPI {session.shown!r}, not {expected!r},"
        raise SessionError(f"{what} {UPDATE_TIMEOUT_S:.0f} s after the edit to {price:.5f}") from None
    except ConnectionClosed as exc:
        session.alive = False
        raise SessionError(f"connection dropped: {exc}") from None
    if session.errors:
        raise SessionError(f"the run drew {session.errors[0]}")
    return latency


async def timed_edit(session: Session, prices: Prices, delay_s: float, finish: bool,
                     latencies_ms: list[float], errors: list[str], kpis: list[tuple[float, str]] | None) -> None:
    """One edit after ``delay_s``, its latency or its error recorded; ``kpis`` collects (price, KPI text seen)."""
    await asyncio.sleep(delay_s)
    price, expected = prices.take(session.shown)
    try:
        latencies_ms.append(await edit(session, price, expected, finish) * 1000)
    except SessionError as exc:
        errors.append(f"session {session.index}: {exc}")
    if kpis is not None:
        kpis.append((price, session.shown))


# ---------------------------------------------------------------- the sweep


async def open_all(port: int, n: int, errors: list[str]) -> list[Session]:
    opened = await asyncio.gather(*(open_session(port, i) for i in range(n)), return_exceptions=True)
    for outcome in opened:
        if isinstance(outcome, asyncio.CancelledError):
            raise outcome
        if isinstance(outcome, BaseException):
            errors.append(f"opening a session: {type(outcome).__name__}: {str(outcome)[:200]}")
    return [s for s in opened if isinstance(s, Session)]


async def close_all(sessions: list[Session]) -> None:
    await asyncio.gather(*(close(s) for s in sessions))


async def run_rounds(sessions: list[Session], result: StepResult, prices: Prices, rounds: int,
                     wall_s: float, jitter_s: float, rng: random.Random,
                     kpis: list[tuple[float, str]] | None = None) -> None:
    """Rounds in which every live session edits at once (after its jitter), until ``rounds`` or ``wall_s``."""
    t_start = time.perf_counter()
    while result.rounds < rounds and time.perf_counter() - t_start < wall_s:
        alive = [s for s in sessions if s.alive]
        if not alive:
            break
        result.planned += len(alive)
        await asyncio.gather(*(timed_edit(s, prices, rng.uniform(0, jitter_s), True, result.latencies_ms,
                                          result.errors, kpis) for s in alive))
        result.rounds += 1
    result.wall_s = time.perf_counter() - t_start


async def run_step(port: int, n: int, server: psutil.Process, prices: Prices, rounds: int,
                   wall_s: float, jitter_s: float, rng: random.Random,
                   kpis: list[tuple[float, str]] | None = None) -> StepResult:
    """Open N sessions, run the rounds, close them; the figures of this N."""
    result = StepResult(sessions=n)
    sessions = await open_all(port, n, result.errors)
    result.opened = len(sessions)
    try:
        result.rss_open = rss(server)
        cpu0, client0 = cpu_s(server), time.process_time()
        await run_rounds(sessions, result, prices, rounds, wall_s, jitter_s, rng, kpis)
        result.server_cpu_s, result.client_cpu_s = cpu_s(server) - cpu0, time.process_time() - client0
    finally:
        await close_all(sessions)
    return result


def report(r: StepResult, idle_rss: int) -> None:
    ms = r.latencies_ms
    stats = (f"median {percentile(ms, 50):.0f} ms, p95 {percentile(ms, 95):.0f} ms, max {max(ms):.0f} ms"
             if ms else "no completed updates")
    wall = max(r.wall_s, 1e-9)
    print(f"sessions {r.sessions} ({r.opened} opened): {len(ms)}/{r.planned} updates in {r.rounds} rounds "
          f"({r.wall_s:.1f} s), errors {len(r.errors)}; latency {stats}; "
          f"server CPU {100 * r.server_cpu_s / wall:.0f} % "
          f"(bench {100 * r.client_cpu_s / wall:.0f} %); server RSS {r.rss_open / MB:.0f} MB, "
          f"{(r.rss_open - idle_rss) / MB / max(r.opened, 1):.1f} MB per session above idle", flush=True)
    for error in r.errors[:5]:
        print(f"  error: {error}")
    if len(r.errors) > 5:
        print(f"  ... and {len(r.errors) - 5} more errors")


def summary(results: list[StepResult], idle_rss: int) -> int:
    """Print the table; the largest N that held (p95 < 1 s, no errors, and so did every smaller N)."""
    print(f"\n{'sessions':>8} {'updates':>8} {'errors':>6} {'median ms':>9} {'p95 ms':>7} {'max ms':>7} "
          f"{'CPU %':>6} {'RSS MB':>7} {'MB/sess':>7}")
    for r in results:
        ms = r.latencies_ms
        cells = [f"{percentile(ms, q):.0f}" for q in (50, 95, 100)] if ms else ["-", "-", "-"]
        print(f"{r.sessions:>8} {len(ms):>8} {len(r.errors):>6} {cells[0]:>9} {cells[1]:>7} {cells[2]:>7} "
              f"{100 * r.server_cpu_s / max(r.wall_s, 1e-9):>6.0f} {r.rss_open / MB:>7.0f} "
              f"{(r.rss_open - idle_rss) / MB / max(r.opened, 1):>7.1f}")
    held = 0
    for r in results:  # ascending N: the first that fails ends it, so every smaller N held too
        if not r.holds():
            break
        held = r.sessions
    print(f"capacity: {held or 'no tested'} session(s) with p95 < {P95_TARGET_MS / 1000:.0f} s and no errors "
          f"(largest tested N that held, every smaller N holding too; {os.cpu_count()} cores, shared machine)")
    return held


async def sweep(port: int, server: psutil.Process, counts: list[int], prices: Prices,
                args: argparse.Namespace, idle_rss: int) -> int:
    rng = random.Random(20240601)
    results = []
    for n in counts:
        if args.paced:
            result = await run_paced_step(port, n, server, prices, args.wall, args.paced, rng)
        else:
            result = await run_step(port, n, server, prices, args.rounds, args.wall, args.jitter / 1000, rng)
        report(result, idle_rss)
        results.append(result)
        if not result.holds() and n >= 2 * max((r.sessions for r in results if r.holds()), default=1):
            break  # far past what held: larger N only take longer to fail
    return summary(results, idle_rss)


# ---------------------------------------------------------------- the soak


async def soak_loop(session: Session, prices: Prices, stop_at: float, think_s: float,
                    latencies_ms: list[float], errors: list[str], rng: random.Random | None = None) -> None:
    """Edit, wait for the KPI, read for ``think_s`` (with ``rng``: a uniform draw of 0.5..1.5 times it, so that
    sessions drift apart as people do) and again, until ``stop_at``."""
    while session.alive and time.perf_counter() < stop_at:
        await timed_edit(session, prices, 0.0, False, latencies_ms, errors, None)
        think = think_s * (rng.uniform(0.5, 1.5) if rng else 1.0)
        if session.alive and (error := await drain(session, min(think, max(0.0, stop_at - time.perf_counter())))):
            errors.append(f"session {session.index}: {error}")


async def run_paced_step(port: int, n: int, server: psutil.Process, prices: Prices, wall_s: float,
                         think_s: float, rng: random.Random) -> StepResult:
    """Open N sessions, each editing on its own after a think time (first edits spread over one think time),
    for ``wall_s`` seconds; the figures of this N."""
    result = StepResult(sessions=n)
    sessions = await open_all(port, n, result.errors)
    result.opened = len(sessions)
    try:
        result.rss_open = rss(server)
        cpu0, client0, t0 = cpu_s(server), time.process_time(), time.perf_counter()
        starts = [rng.uniform(0, think_s) for _ in sessions]

        async def one(s: Session, start: float) -> None:
            await asyncio.sleep(start)
            await soak_loop(s, prices, t0 + wall_s, think_s, result.latencies_ms, result.errors,
                            random.Random(rng.random()))

        await asyncio.gather(*(one(s, start) for s, start in zip(sessions, starts, strict=True)))
        result.wall_s = time.perf_counter() - t0
        result.planned = len(result.latencies_ms) + len(result.errors)
        result.server_cpu_s, result.client_cpu_s = cpu_s(server) - cpu0, time.process_time() - client0
    finally:
        await close_all(sessions)
    return result


async def sample_rss(server: psutil.Process, samples: list[tuple[float, int]], t0: float) -> None:
    while True:
        samples.append((time.perf_counter() - t0, rss(server)))
        await asyncio.sleep(RSS_EVERY_S)


def slope_mb_per_min(samples: list[tuple[float, int]]) -> float:
    """Least-squares slope of RSS against time [MB/min] (0 with fewer than two samples)."""
    if len(samples) < 2:
        return 0.0
    ts = [t / 60 for t, _ in samples]
    ys = [v / MB for _, v in samples]
    mt, my = sum(ts) / len(ts), sum(ys) / len(ys)
    den = sum((t - mt) ** 2 for t in ts)
    return sum((t - mt) * (y - my) for t, y in zip(ts, ys, strict=True)) / den if den else 0.0


def soak_report(samples: list[tuple[float, int]], n: int, base_rss: int, idle_rss: int, minutes: float) -> None:
    print(f"RSS (sampled every {RSS_EVERY_S:.0f} s; the last sample of each minute; per session = above the "
          f"{base_rss / MB:.0f} MB before the soak's sessions opened, / {n}; idle server {idle_rss / MB:.0f} MB):")
    for minute in range(int(minutes) + 1):
        inside = [v for t, v in samples if minute * 60 <= t < (minute + 1) * 60]
        if inside:
            print(f"  minute {minute:>3}: {inside[-1] / MB:7.1f} MB, {(inside[-1] - base_rss) / MB / n:6.2f} MB per "
                  f"session")
    run_s = samples[-1][0] if samples else 0.0
    half = [(t, v) for t, v in samples if t >= run_s / 2]
    slope = slope_mb_per_min(half)
    window_min = min(10.0, run_s / 2 / 60)
    growth = slope * window_min
    rss_now = samples[-1][1] / MB if samples else 0.0
    limit = max(FLAT_MB, FLAT_SHARE * rss_now)
    verdict = "flat" if growth < limit else "growing"
    measured = (half[-1][1] - half[0][1]) / MB if half else 0.0
    print(f"slope over the last half ({len(half)} samples): {slope:+.2f} MB/min; growth it gives over the last "
          f"{window_min:.1f} min: {growth:+.1f} MB (first to last sample of the half: {measured:+.1f} MB); "
          f"verdict: {verdict} (flat = under {limit:.1f} MB: the larger of {FLAT_MB:.0f} MB and "
          f"{100 * FLAT_SHARE:.0f} % of the RSS)")


async def soak(port: int, server: psutil.Process, n: int, minutes: float, think_s: float,
               prices: Prices, idle_rss: int) -> None:
    errors: list[str] = []
    latencies: list[float] = []
    base_rss = rss(server)
    sessions = await open_all(port, n, errors)
    samples: list[tuple[float, int]] = []
    t0 = time.perf_counter()
    sampler = asyncio.create_task(sample_rss(server, samples, t0))
    try:
        cpu0 = cpu_s(server)
        rng = random.Random(20240602)  # think times drawn and first edits spread, as in the paced sweep: sessions
        # that all think exactly think_s from the same start edit in lockstep, a burst of N every cycle

        async def one(s: Session, start: float) -> None:
            await asyncio.sleep(start)
            await soak_loop(s, prices, t0 + minutes * 60, think_s, latencies, errors, random.Random(rng.random()))

        await asyncio.gather(*(one(s, rng.uniform(0, think_s)) for s in sessions))
        wall = time.perf_counter() - t0
        samples.append((wall, rss(server)))
        cpu = cpu_s(server) - cpu0
    finally:
        sampler.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sampler
        await close_all(sessions)
    closed = sum(s.ws.close_code == 1000 for s in sessions)  # 1000: a normal closure, both ways
    stats = (f"median {percentile(latencies, 50):.0f} ms, p95 {percentile(latencies, 95):.0f} ms, max "
             f"{max(latencies):.0f} ms" if latencies else "no completed updates")
    print(f"soak: {n} sessions ({len(sessions)} opened) for {wall / 60:.1f} min, think time {think_s:.1f} s: "
          f"{len(latencies)} updates, errors {len(errors)}; latency {stats}; server CPU {100 * cpu / wall:.0f} %; "
          f"{closed}/{len(sessions)} sessions closed cleanly at the end")
    for error in errors[:5]:
        print(f"  error: {error}")
    soak_report(samples, max(len(sessions), 1), base_rss, idle_rss, minutes)


# ---------------------------------------------------------------- main


async def warm_up(port: int) -> str:
    """One session opened and closed: the first run imports the app's modules. What its page holds, in words."""
    session = await open_session(port, 0)
    await close(session)
    mirror = session.mirror
    return (f"{len(mirror.widgets)} widget states sent with each edit; widget kinds not modelled: "
            f"{', '.join(sorted(mirror.unmodelled)) or 'none'}")


async def run(port: int, server: psutil.Process, args: argparse.Namespace, prices: Prices) -> None:
    cold = rss(server)
    t0 = time.perf_counter()
    held = await warm_up(port)
    await asyncio.sleep(1.0)
    idle = rss(server)
    print(f"warm-up session: {time.perf_counter() - t0:.1f} s ({held}); server RSS {cold / MB:.0f} MB when "
          f"healthy, idle {idle / MB:.0f} MB after it (the idle figure below)", flush=True)
    capacity = 0
    if args.soak is None or args.soak_sessions is None:
        capacity = await sweep(port, server, args.sessions, prices, args, idle)
    if args.soak is not None:
        n = args.soak_sessions or max(1, capacity // 2)
        print(f"\nsoak at {n} session(s) for {args.soak:g} min", flush=True)
        await soak(port, server, n, args.soak, args.think, prices, idle)


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--sessions", type=parse_counts, default=[1, 2, 4, 8, 16, 32, 48, 64],
                    help="comma-separated numbers of concurrent sessions (default 1,2,4,8,16,32,48,64)")
    ap.add_argument("--rounds", type=int, default=10, help="rounds of edits per number of sessions (default 10)")
    ap.add_argument("--wall", type=float, default=60.0, help="seconds of rounds per number of sessions (default 60)")
    ap.add_argument("--jitter", type=float, default=50.0, help="each edit of a round waits a random 0..J ms "
                    "(default 50)")
    ap.add_argument("--soak", type=float, metavar="MINUTES", help="after the sweep, edit continuously for MINUTES")
    ap.add_argument("--soak-sessions", type=int, help="sessions of the soak (default half the capacity found; "
                    "given, the sweep is skipped)")
    ap.add_argument("--prices", type=int, default=2000, help="distinct prices to take in turn (default 2000, more "
                    "than the app's cache entries; 8 gives the cached case)")
    ap.add_argument("--paced", type=float, metavar="THINK_S", help="sweep with each session editing on its own, "
                    "THINK_S seconds (0.5..1.5 times, drawn) after its last KPI, for --wall seconds per N, instead of "
                    "all sessions at once")
    ap.add_argument("--think", type=float, default=1.0, help="soak: seconds between a KPI and the next edit (1)")
    args = ap.parse_args()
    if not 1 <= args.rounds <= 1000 or not 1 <= args.wall <= 600 or not 0 <= args.jitter <= 5000:
        ap.error("--rounds 1..1000, --wall 1..600 s and --jitter 0..5000 ms")
    if args.soak is not None and not 0 < args.soak <= 24 * 60:
        ap.error("--soak must be between 0 and 1440 minutes")
    if args.soak_sessions is not None and not 1 <= args.soak_sessions <= 256 or not 0 <= args.think <= 60:
        ap.error("--soak-sessions 1..256 and --think 0..60 s")
    if not 2 <= args.prices <= 100_000:
        ap.error("--prices 2..100000")
    return args


def main() -> None:
    args = parse_args()
    t_prices = time.perf_counter()
    prices = Prices(args.prices)  # before the server starts, so it costs the app nothing
    print(f"{len(prices.table)} distinct prices and their KPI texts computed in {time.perf_counter() - t_prices:.1f} s "
          f"({len({t for _, t in prices.table})} different texts)", flush=True)
    port = free_port()
    t_begin = time.perf_counter()
    with tempfile.TemporaryFile() as log:
        proc = start_server(port, log)
        try:
            server = psutil.Process(proc.pid)
            default = expected_cost_kpi(economics.default_scenario().electricity_usd_per_kwh)
            print(f"server healthy at http://{HOST}:{port} (pid {proc.pid}); default "
                  f"KPI {default!r}; update timeout {UPDATE_TIMEOUT_S:.0f} s", flush=True)
            asyncio.run(run(port, server, args, prices))
        except (OSError, InvalidHandshake, ConnectionClosed, TimeoutError, SessionError) as exc:
            sys.exit(f"server_load: {type(exc).__name__}: {exc}\n--- server log (tail) ---\n{tail(log)}")
        except KeyboardInterrupt:
            sys.exit("server_load: interrupted; the server is stopped")
        finally:
            stop_server(proc)
    print(f"total {time.perf_counter() - t_begin:.0f} s; load average {os.getloadavg()[0]:.2f}; Python "
          f"{sys.version.split()[0]}")


if __name__ == "__main__":
    main()
