"""The store tests' own PostgreSQL (tests/store_fixtures.py's ``postgresql_proc``): it survives another pytest
session starting on the machine, and a server that stops before the session ends fails the run with its log."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from pytest_postgresql.executors import PostgreSQLExecutor

pytest_plugins = ["pytester"]

STOPS_ITS_SERVER = """
import subprocess

from tests import store_fixtures


def test_stops_the_server(postgresql_proc):
    subprocess.run([store_fixtures.PG_CTL, "stop", "-D", postgresql_proc.datadir, "-m", "immediate"],
                   check=True, capture_output=True)
"""


def test_a_server_that_stops_mid_session_fails_the_run_with_its_log(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("from tests.store_fixtures import postgresql_proc  # noqa: F401\n")
    pytester.makepyfile(STOPS_ITS_SERVER)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*the tests' PostgreSQL (port *) stopped before the end of the session; its log*",
                                 "*LOG:  received immediate shutdown request*"])


def test_the_server_listens_on_tcp_only(postgresql_proc: PostgreSQLExecutor) -> None:
    # no socket (nor its lock file) in the /tmp that every session on the machine shares
    log = Path(postgresql_proc.logfile).read_text()
    assert f'listening on IPv4 address "127.0.0.1", port {postgresql_proc.port}' in log
    assert "Unix socket" not in log


def test_the_server_survives_another_session_closing_pytests_temporary_root(
        postgresql_proc: PostgreSQLExecutor, tmp_path_factory: pytest.TempPathFactory) -> None:
    # every pytest session that starts resets /tmp/pytest-of-<user> to 0700 (TempPathFactory.getbasetemp); a server
    # whose data directory lay below it lost its checkpointer at the next checkpoint (PANIC opening global/pg_control:
    # Permission denied) and did not come back ("could not stat data directory"): the flaky teardown error
    base = tmp_path_factory.getbasetemp()
    root = next((p for p in [base, *base.parents] if p.name.startswith("pytest-of-")), base)
    root.chmod(0o700)
    with psycopg.connect(host=postgresql_proc.host, port=postgresql_proc.port, user=postgresql_proc.user,
                         dbname="postgres", autocommit=True) as conn:
        conn.execute("CHECKPOINT")
        assert conn.execute("SELECT 1").fetchone() == (1,)
    assert postgresql_proc.running()
