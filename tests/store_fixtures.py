"""Stores for the tests, on both engines: a SQLite file in a temporary folder, and a database on a real PostgreSQL
the suite starts itself (pytest-postgresql's executor, Debian's binaries through tests/pg_ctl.sh, on 127.0.0.1; one
server per pytest process, a fresh database per test). Never a mock.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import port_for
import psycopg
import pytest
from pytest_postgresql.executors import PostgreSQLExecutor

import economics
from economics.schema import user_curves

PG_CTL = str(Path(__file__).parent / "pg_ctl.sh")
START_TIMEOUT_S = 120
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "benchmarks" / "sglang_bench_serving.jsonl"


@pytest.fixture(scope="session")
def postgresql_proc() -> Iterator[PostgreSQLExecutor]:
    """The pytest process's PostgreSQL server, in a folder of its own under the system's temporary folder, removed at
    the end; then, a failure carrying the server's log if the server stopped before.

    Not under pytest's temporary folder: its root, /tmp/pytest-of-<user>, is reset to mode 0700 by every pytest
    session that starts on the machine, which takes from the postgres user the way through it that tests/pg_ctl.sh
    gave; the running server keeps working from inside its data directory until its checkpointer opens
    ``global/pg_control`` by its full path (DROP DATABASE forces a checkpoint): PANIC "Permission denied", a crash, and
    "could not stat data directory" on the restart, so the server was gone. /tmp itself stays open to every user.
    tests/conftest.py defines the fixture once (a fixture assigned in two test modules is two fixtures: two servers a
    worker). It listens on TCP only (``unix_socket_directories=''``), and keeps its log (pytest-postgresql's factory
    deleted it on the way out).
    """
    folder = Path(tempfile.mkdtemp(prefix="pytest-economics-postgresql-"))
    server = PostgreSQLExecutor(executable=PG_CTL, host="127.0.0.1", port=port_for.select_random(), user="postgres",
                                dbname="postgres", datadir=str(folder / "data"), unixsocketdir="",
                                logfile=str(folder / "server.log"), startparams="-w")
    try:
        server.start()  # returns once the port answers, which is before the server accepts sessions
        assert server.process is not None
        if server.process.wait(timeout=START_TIMEOUT_S) != 0:  # pg_ctl start -w: 0 once it accepts them
            pytest.fail(f"the tests' PostgreSQL did not start; its log:\n{server_log(server)}", pytrace=False)
        yield server
        running = server.running()
        log = server_log(server)
    finally:
        if server.running():  # pg_ctl alone: the executor's own stop also signals the launcher's group, long gone
            subprocess.run([PG_CTL, "stop", "-D", server.datadir, "-m", "fast"], check=True, capture_output=True)
        server._clear_process()
        shutil.rmtree(folder)
    if not running:
        pytest.fail(f"the tests' PostgreSQL (port {server.port}) stopped before the end of the session; its log:\n"
                    f"{log}", pytrace=False)


def server_log(server: PostgreSQLExecutor) -> str:
    """The server's own log (pg_ctl's ``-l`` file), or what says there is none."""
    path = Path(server.logfile)
    return path.read_text(errors="replace") if path.is_file() else "(no log file)"


def curve_bytes() -> bytes:
    """A real curve file: SGLang's bench_serving run on 8 H200 at FP8 (tests/fixtures), as import-benchmark writes."""
    table = economics.import_benchmark([FIXTURE], accelerator="h200-sxm", accelerators=8, precision="fp8")
    return economics.curves_csv(table).encode()


def new_postgres_database(proc: object) -> str:
    """A fresh, empty database on the session's server; its SQLAlchemy URL."""
    name = f"store_{uuid.uuid4().hex[:12]}"
    host, port, user = proc.host, proc.port, proc.user  # type: ignore[attr-defined]
    with psycopg.connect(host=host, port=port, user=user, dbname="postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"postgresql+psycopg://{user}@{host}:{port}/{name}"


ENGINES = ["sqlite", "postgresql"]


def url_for(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty store's URL on the engine ``request.param`` names (a test module's ``store_url`` fixture; the server
    is tests/conftest.py's ``postgresql_proc``).
    """
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.sqlite'}"
    return new_postgres_database(request.getfixturevalue("postgresql_proc"))


def forget_curves() -> None:
    """Empty this process's curves held in memory, as a restarted server has none."""
    with user_curves._lock:
        user_curves._store.clear()
