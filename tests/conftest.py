"""Suite-wide collection rules: which tests are ``slow``.

``pytest -m "not slow"`` (``make quick``) is the fast loop; ``make test`` and CI run everything. A test is slow when
it
- drives a real browser (everything under tests/e2e);
- evaluates a million rows, fuzzes input or sweeps hostile input (names with "million", "fuzz" or "hostile");
- is a hypothesis property of 50 or more examples;
- starts ``python -m economics`` (or another process) per case: its body, or a helper of its module it calls, runs
  ``subprocess``;
- sweeps the whole app under AppTest for every page, accelerator or field (tests/test_app*.py, names with "every").
The rules live here so that no test file has to carry the marker itself.

Hypothesis runs derandomised with no example database (profile ``ci``, the default), so a run repeats exactly and
a failure is the same failure on every machine; ``make test-explore`` (profile ``explore``) runs the property tests
on fresh random examples and keeps any failure in ``.hypothesis/`` to replay.
"""

from __future__ import annotations

import functools
import inspect
import os
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import httpx
import pytest
from hypothesis import settings as hypothesis_settings
from hypothesis.database import DirectoryBasedExampleDatabase

from bench.api_server import running_api
from tests import store_fixtures

if TYPE_CHECKING:
    from streamlit.components.v2.manifest_scanner import ComponentManifest

hypothesis_settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
hypothesis_settings.register_profile("explore", derandomize=False, print_blob=True,
                                     database=DirectoryBasedExampleDatabase(".hypothesis/examples"))
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

TESTS_DIR = Path(__file__).parent
E2E_DIR = TESTS_DIR / "e2e"
SLOW_NAME_PARTS = ("million", "fuzz", "hostile")
SLOW_HYPOTHESIS_EXAMPLES = 50


@functools.cache
def source_of(obj: object) -> str:
    """The source of a test module's function, read once: every item of a module asks for its helpers' sources, and
    every case of a parametrised test for its function's (``inspect.getsource`` re-reads and re-tokenises the file:
    about a tenth of a worker's collection, each of the 3 workers collecting the whole suite; docs/speed.md)."""
    try:
        return inspect.getsource(obj)  # type: ignore[arg-type]
    except (OSError, TypeError):
        return ""


def hypothesis_examples(item: pytest.Item) -> int:
    """The ``max_examples`` a hypothesis test runs with (0 when it is not a hypothesis test)."""
    settings = getattr(getattr(item, "obj", None), "_hypothesis_internal_use_settings", None)
    return int(getattr(settings, "max_examples", 0) or 0) if settings is not None else 0


@functools.cache
def process_helpers(module: ModuleType) -> frozenset[str]:
    """Names of the module's own functions whose body runs ``subprocess``."""
    return frozenset(name for name, obj in vars(module).items() if inspect.isfunction(obj)
                     and obj.__module__ == module.__name__ and "subprocess." in source_of(obj))


def spawns_process(item: pytest.Item) -> bool:
    module = getattr(item, "module", None)
    function: Callable[..., object] | None = getattr(item, "function", None)
    if module is None or function is None or "subprocess" not in vars(module):
        return False
    body = source_of(function)
    return "subprocess." in body or any(re.search(rf"\b{name}\(", body) for name in process_helpers(module))


def is_slow(item: pytest.Item) -> bool:
    """True for the kinds of test listed in the module docstring."""
    path = Path(str(item.fspath))
    name = item.name.lower()
    return (E2E_DIR in path.parents
            or any(part in name for part in SLOW_NAME_PARTS)
            or hypothesis_examples(item) >= SLOW_HYPOTHESIS_EXAMPLES
            or spawns_process(item)
            or (path.name.startswith("test_app") and "every" in name))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if is_slow(item):
            item.add_marker(pytest.mark.slow)


INTERPRETER_MAIN = sys.modules["__main__"]
"""The worker's own ``__main__``. Streamlit's script runner (AppTest included) installs each page it runs as
``sys.modules["__main__"]`` and leaves it there; a later test in the same worker that starts a process with the
"spawn" method (dask's LocalCluster) would then make the child run that page as its main module, and the child dies
before it starts (seen as "Nanny failed to start" in test_sweep.py, in whichever worker ran a page first)."""


@pytest.fixture(autouse=True)
def _interpreter_main() -> Iterator[None]:
    yield
    sys.modules["__main__"] = INTERPRETER_MAIN


@pytest.fixture(scope="session", autouse=True)
def _component_scan_once() -> Iterator[None]:
    """Streamlit's scan of the installed distributions for v2 components made once per test process, as a server
    makes it once at its start. ``AppTest`` makes it at the first run of every instance (a fresh ``BidiComponent
    Manager`` each): it reads the metadata of every installed distribution, 0.5-0.7 s, about 90% of a page's first
    run under ``AppTest`` (a hostile link's case: 0.70 s, 0.07 s with the scan made once; docs/speed.md). Nothing is
    installed during a run, so every scan finds the same components (none in this environment): the first call's
    result, the scan's own, is returned to the later ones. A process that collected no ``AppTest`` module is left
    alone (Streamlit not imported for it)."""
    if "streamlit.testing.v1" not in sys.modules:
        yield
        return
    from streamlit.components.v2 import manifest_scanner

    original = manifest_scanner.scan_component_manifests
    found: list[list[tuple[ComponentManifest, Path]]] = []

    def scan_once(max_workers: int | None = None) -> list[tuple[ComponentManifest, Path]]:
        if not found:
            found.append(original(max_workers))
        return list(found[0])

    manifest_scanner.scan_component_manifests = scan_once
    try:
        yield
    finally:
        manifest_scanner.scan_component_manifests = original


postgresql_proc = store_fixtures.postgresql_proc
"""The store tests' PostgreSQL (tests/store_fixtures.py), defined here once so that each pytest process starts one."""


API_ENV = {"TOKEN_ECONOMICS_API_MAX_BODY_MB": "2", "TOKEN_ECONOMICS_API_MAX_ROWS": "20000",
           "TOKEN_ECONOMICS_API_REQUEST_TIMEOUT_S": "110", "TOKEN_ECONOMICS_API_QUEUE_TIMEOUT_S": "100"}
"""The shared server's settings: a body of 2 MB and 20,000 rows, as tests/test_api.py's own server; a computation
may take 110 s and wait 100 s for a worker (60 and 10 s by default), under the clients' 120 s: on a machine at load
15-18 a kv-memory study in a worker process just started was answered 504 at the default 60 s."""


@pytest.fixture(scope="session")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    """A real ``token-economics serve`` on 127.0.0.1, started once per test process and shared by the modules that
    only send it requests (tests/test_api.py, test_plan_sessions.py, test_hostile.py, test_kv_memory.py,
    test_session_traces.py, test_sessions_everywhere.py): each module started its own, 8 s of a test's set-up idle
    and 25-58 s at a load of 16. The server keeps nothing between requests but its worker processes (no store:
    ``/v1/store`` is not called), so a module sees what a fresh server would answer. A test that needs other settings
    (a token, CORS origins, a 1 s time limit, a small memory limit: in tests/test_api.py) starts its own."""
    with (tmp_path_factory.mktemp("api") / "server.log").open("wb") as log, running_api(log, API_ENV) as url, \
            httpx.Client(base_url=url, timeout=120) as client:
        yield client
