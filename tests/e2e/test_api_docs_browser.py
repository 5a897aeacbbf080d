"""The HTTP API's interactive docs in real Chromium: served from the package's own files (no CDN, so they work on a
closed network), every endpoint listed from the OpenAPI document; the page is saved for the gallery."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Page, Route

from bench.api_server import running_api
from economics.api.routes import router
from tests.e2e.conftest import SCREENSHOTS


@pytest.fixture(scope="module")
def api_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with (tmp_path_factory.mktemp("api") / "server.log").open("wb") as log, running_api(log) as url:
        yield url


@pytest.fixture
def docs_page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    context.set_default_timeout(30_000)
    try:
        yield context.new_page()
    finally:
        context.close()


def test_the_interactive_docs_render_every_endpoint_offline(docs_page: Page, api_url: str) -> None:
    elsewhere: list[str] = []

    def only_the_server(route: Route) -> None:
        if urlsplit(route.request.url).hostname == "127.0.0.1":
            route.continue_()
        else:  # a CDN: refused, and noted
            elsewhere.append(route.request.url)
            route.abort()

    docs_page.route("**/*", only_the_server)
    docs_page.goto(api_url + "/docs")
    docs_page.get_by_text("Token economics API").first.wait_for()
    summaries = [r.summary for r in router.routes if getattr(r, "summary", None)]
    assert len(summaries) >= 13
    for summary in summaries:
        docs_page.get_by_text(summary, exact=True).first.wait_for()
    docs_page.get_by_text("ScenarioTable", exact=True).first.wait_for()  # the schemas section, from our components
    assert elsewhere == []
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path: Path = SCREENSHOTS / "api-docs.png"
    docs_page.screenshot(path=str(path), full_page=False)
    assert path.stat().st_size > 10_000
