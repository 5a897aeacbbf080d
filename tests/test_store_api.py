"""The store over HTTP (/v1/store) on a real ``token-economics serve`` process, with SQLite and with a real
PostgreSQL: a curve imported through the API, the server restarted, and a scenario naming that curve evaluated to
the same figures; a stale save answered 409 naming the newer version; the token guards the store's routes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bench.api_server import running_api
from economics.store.database import URL_VARIABLE
from tests import store_fixtures
from tests.store_fixtures import curve_bytes, forget_curves

TOKEN = "a-long-enough-secret-token-for-tests"
AUTH = {"authorization": f"Bearer {TOKEN}"}


@pytest.fixture(params=store_fixtures.ENGINES)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield store_fixtures.url_for(request, tmp_path)
    forget_curves()


def test_a_curve_imported_through_the_api_resolves_after_a_restart(store_url: str, tmp_path: Path) -> None:
    env = {URL_VARIABLE: store_url, "TOKEN_ECONOMICS_API_TOKEN": TOKEN}
    link = {"name": "measured", "accelerator": "h200-sxm", "model": "deepseek-v3", "precision": "fp8",
            "accelerator_count": 8, "input_tokens_per_request": 1024, "output_tokens_per_request": 1024,
            "target_output_tokens_per_s_per_user": 1000 / 16.4839}
    with (tmp_path / "log1").open("wb") as log, running_api(log, env) as url:
        assert httpx.post(f"{url}/v1/store/curves?name=mine.csv", content=curve_bytes(),
                          headers={"content-type": "text/csv"}, timeout=120).status_code == 401  # writes need the token
        r = httpx.post(f"{url}/v1/store/curves?name=mine.csv&saved_by=eng", content=curve_bytes(),
                       headers={**AUTH, "content-type": "text/csv"}, timeout=60)
        assert r.status_code == 201, r.text
        sha = r.json()["curve"]["sha256"]
        link["curves_sha256"] = sha
        first = httpx.post(f"{url}/v1/evaluate", json=[link], headers=AUTH, timeout=120)
        assert first.status_code == 200, first.text
        saved = httpx.post(f"{url}/v1/store/scenarios", headers=AUTH, timeout=60,
                           json={"name": "measured", "fields": link, "saved_by": "eng"})
        assert saved.status_code == 201 and saved.json()["scenario"]["version"] == 1
    with (tmp_path / "log2").open("wb") as log, running_api(log, env) as url:  # restarted: nothing in memory
        again = httpx.post(f"{url}/v1/evaluate", json=[link], headers=AUTH, timeout=120)
        assert again.status_code == 200, again.text
        assert again.json()[0]["cost_usd_per_m_tokens"] == first.json()[0]["cost_usd_per_m_tokens"]
        # the curve's measured point: 939.218 output tokens/s over 8 GPUs = 117.4 per GPU
        assert again.json()[0]["output_tokens_per_s_per_accelerator"] == pytest.approx(939.218 / 8, rel=1e-3)
        stored = httpx.get(f"{url}/v1/store/scenarios/measured", headers=AUTH, timeout=120).json()["scenario"]
        assert stored["fields"]["curves_sha256"] == sha and stored["saved_by"] == "eng"
        assert httpx.get(f"{url}/v1/store/curves/{sha}", headers=AUTH, timeout=120).content == curve_bytes()


def test_versions_conflicts_and_errors_over_http(store_url: str, tmp_path: Path) -> None:
    fields = {"accelerator": "h100-sxm", "ownership": "rent", "accelerator_count": 8,
              "rent_usd_per_accelerator_hour": 2, "output_tokens_per_s_per_accelerator": 1000}
    with (tmp_path / "log").open("wb") as log, running_api(log, {URL_VARIABLE: store_url}) as url:
        def save(body: dict[str, object]) -> httpx.Response:
            return httpx.post(f"{url}/v1/store/scenarios", json=body, timeout=60)
        assert save({"name": "q3", "fields": fields, "saved_by": "ana"}).status_code == 201
        assert save({"name": "q3", "fields": {**fields, "accelerator_count": 16}, "base_version": 1,
                     "saved_by": "li"}).status_code == 201
        stale = save({"name": "q3", "fields": {**fields, "accelerator_count": 4}, "base_version": 1})
        assert stale.status_code == 409 and stale.json()["error"]["code"] == "conflict"
        assert "version 2 (saved by li" in stale.json()["error"]["message"]
        bad = save({"name": "bad", "fields": {**fields, "pue": 0.5}})
        assert bad.status_code == 422 and bad.json()["error"]["problems"][0]["field"] == "pue"
        compared = httpx.get(f"{url}/v1/store/scenarios/q3/compare?a=1&b=2", timeout=120).json()
        hourly = next(k for k in compared["kpis"] if k["output"] == "cost_usd_per_hour")
        assert (hourly["a"], hourly["b"]) == (16.0, 32.0)  # 8 x 2 USD/h, then 16 x 2 USD/h
        assert httpx.get(f"{url}/v1/store/scenarios/nope", timeout=120).status_code == 404
        # an unknown parameter is named
        assert httpx.get(f"{url}/v1/store/scenarios?serch=q", timeout=120).status_code == 422
        listed = httpx.get(f"{url}/v1/store/scenarios?search=Q", timeout=120).json()
        assert listed["total"] == 1 and listed["scenarios"][0]["latest_version"] == 2
        assert json.loads(httpx.delete(f"{url}/v1/store/scenarios/q3", timeout=120).text)["versions"] == 2
