"""Stores for the tests, on both engines: a SQLite file in a temporary folder, and a database on a real PostgreSQL
the suite starts itself (pytest-postgresql's ``postgresql_proc``, Debian's binaries through tests/pg_ctl.sh, on
127.0.0.1; one server for the session, a fresh database per test). Never a mock.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import psycopg
import pytest
from pytest_postgresql import factories

import economics
from economics.schema import user_curves

PG_CTL = str(Path(__file__).parent / "pg_ctl.sh")
postgresql_proc = factories.postgresql_proc(executable=PG_CTL, host="127.0.0.1", port=None, user="postgres")
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "benchmarks" / "sglang_bench_serving.jsonl"


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
    """An empty store's URL on the engine ``request.param`` names (a test module's ``store_url`` fixture, with
    ``postgresql_proc = store_fixtures.postgresql_proc`` beside it).
    """
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.sqlite'}"
    return new_postgres_database(request.getfixturevalue("postgresql_proc"))


def forget_curves() -> None:
    """Empty this process's curves held in memory, as a restarted server has none."""
    with user_curves._lock:
        user_curves._store.clear()
