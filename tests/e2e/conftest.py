"""Browser-test harness: a real Streamlit server and the system (Debian) Chromium driven by Playwright.

- ``streamlit_url`` (session): starts ``streamlit run app.py`` on a free loopback port with the test interpreter,
  waits for ``/_stcore/health`` to answer ``ok`` and stops the server at the end (:func:`running_streamlit`, which a
  test that restarts the server, or gives it an environment of its own, uses directly).
- ``browser`` (session) / ``page`` (per test, a tab of one shared context: the frontend's files cached) /
  ``fresh_page`` (per test, a context of its own): headless system Chromium. A missing Chromium fails the test with
  the fix (``make browser``); it is never skipped.
- ``screenshot``: saves ``docs/screenshots/<name>.png``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "docs" / "screenshots"
STARTUP_TIMEOUT_S = 300.0
"""Longest wait for streamlit's health [s]: a bound on a hang, never a measure (the API server's, for the same reason:
bench/api_server.py START_TIMEOUT_S)."""
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# An assertion's wait for the page (Playwright's default: 5 s). A rerun's outcome on a loaded 2-core machine (two test
# workers, each with a server and a browser) has been seen to take longer; the page's own figure is still checked.
expect.set_options(timeout=30_000)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test under tests/e2e is a browser test."""
    for item in items:
        if Path(str(item.fspath)).is_relative_to(Path(__file__).parent):
            item.add_marker(pytest.mark.e2e)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _health_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return bool(response.status == 200 and response.read().strip() == b"ok")
    except (urllib.error.URLError, OSError):
        return False


def chromium_path() -> str | None:
    """``$CHROMIUM_PATH`` if set, else ``chromium`` on PATH, else /usr/bin/chromium; None when none is executable."""
    override = os.environ.get("CHROMIUM_PATH")
    if override:
        return override if os.access(override, os.X_OK) else None
    found = shutil.which("chromium")
    if found:
        return found
    return "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None


@contextlib.contextmanager
def running_streamlit(env: Mapping[str, str] | None = None) -> Iterator[str]:
    """``streamlit run app.py`` on a free loopback port (``env`` added to its environment: a store's URL, say),
    its URL once ``/_stcore/health`` answers ``ok``; stopped when the block ends.
    """
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    command = [
        sys.executable, "-m", "streamlit", "run", "app.py",
        "--server.headless", "true",
        "--server.port", str(port),
        "--server.address", "127.0.0.1",
        "--server.fileWatcherType", "none",
        "--browser.gatherUsageStats", "false",
    ]  # fmt: skip
    with tempfile.TemporaryFile(mode="w+") as log:
        server = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, text=True,
                                  env={**os.environ, **(env or {})})

        def server_output() -> str:
            log.flush()
            log.seek(0)
            return log.read()[-8000:]

        try:
            deadline = time.monotonic() + STARTUP_TIMEOUT_S
            while not _health_ok(url):
                if server.poll() is not None:
                    pytest.fail(f"streamlit exited with code {server.returncode} before it was healthy:\n"
                                f"{server_output()}", pytrace=False)
                if time.monotonic() > deadline:
                    pytest.fail(f"streamlit did not answer {url}/_stcore/health within {STARTUP_TIMEOUT_S:.0f} s:\n"
                                f"{server_output()}", pytrace=False)
                time.sleep(0.25)
            yield url
        finally:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(timeout=10)


@pytest.fixture(scope="session")
def streamlit_url() -> Iterator[str]:
    with running_streamlit() as url:
        yield url


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    executable = chromium_path()
    if executable is None:
        where = "in CI" if os.environ.get("CI") else "on this machine"
        pytest.fail(f"Chromium not found {where} (looked at $CHROMIUM_PATH, `chromium` on PATH, /usr/bin/chromium). "
                    "Run `make browser` (Debian: apt-get install -y chromium); browser tests are never skipped.",
                    pytrace=False)
    with sync_playwright() as playwright:
        # Playwright gives each launch a fresh temporary profile; the flags keep Chromium off the (closed) network.
        chromium = playwright.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


def _new_context(browser: Browser) -> BrowserContext:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    context.set_default_timeout(30_000)
    return context


@pytest.fixture(scope="session")
def warm_context(browser: Browser) -> Iterator[BrowserContext]:
    """One browser context for the tests that take :func:`page`: each test's page (a tab) is a Streamlit session of
    its own, and the frontend's files (some 136 requests) come from the context's cache after the first test, not
    from the server again (about 1.5 s less a test's first page at load 12)."""
    context = _new_context(browser)
    try:
        yield context
    finally:
        context.close()


@pytest.fixture
def page(warm_context: BrowserContext, streamlit_url: str) -> Iterator[Page]:
    """A new tab (a new Streamlit session) of :func:`warm_context`, closed after the test."""
    new_page = warm_context.new_page()
    try:
        yield new_page
    finally:
        new_page.close()


@pytest.fixture
def fresh_page(browser: Browser, streamlit_url: str) -> Iterator[Page]:
    """A page in a browser context of its own, as a first visitor's browser: nothing cached, nothing stored, for a
    test about what a first visit fetches or a link opened in another browser."""
    context = _new_context(browser)
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.fixture
def screenshot(page: Page) -> Callable[[str], Path]:
    def save(name: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return save
