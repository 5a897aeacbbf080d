"""bench/server_load.py's sessions against a real Streamlit server on 127.0.0.1: two sessions, two rounds of edits
over Streamlit's websocket protocol; every KPI text received is the repo's own figure for the price sent, and no
error is reported. Nothing about time is asserted."""

from __future__ import annotations

import asyncio
import random
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg

from bench import server_load
from bench.app_latency import expected_cost_kpi
from bench.st_protocol import Mirror, string_state, widget_key


@pytest.mark.slow
def test_two_sessions_two_rounds_receive_the_expected_kpi(tmp_path: Path) -> None:
    prices = server_load.Prices(8)
    port = server_load.free_port()
    kpis: list[tuple[float, str]] = []
    with open(tmp_path / "server.log", "w+b") as log:
        proc = server_load.start_server(port, log)
        try:
            server = server_load.psutil.Process(proc.pid)
            step = server_load.run_step(port, 2, server, prices, rounds=2, wall_s=120.0, jitter_s=0.05,
                                        rng=random.Random(1), kpis=kpis)
            # a loop of its own in a thread of its own: a browser test before this one in the same worker can
            # leave an event loop running in this thread
            with ThreadPoolExecutor(1) as pool:
                result = pool.submit(asyncio.run, asyncio.wait_for(step, timeout=300)).result(timeout=330)
        finally:
            server_load.stop_server(proc)
    assert result.errors == [], result.errors
    assert (result.opened, result.rounds, result.planned, len(result.latencies_ms)) == (2, 2, 4, 4)
    assert len(kpis) == 4
    for price, text in kpis:
        assert text == expected_cost_kpi(price), (price, text)


def test_the_edit_carries_every_widget_state_and_the_typed_text() -> None:
    """The rerun request holds the page's hash, its query and each widget's state, the edited one as typed."""
    mirror = Mirror(url="http://127.0.0.1:1/", page_script_hash="abc", query_string="v=1")
    other = "$$ID-0123-pue"
    mirror.widgets[other] = string_state(other, "")
    box = "$$ID-4567-electricity_usd_per_kwh"
    mirror.widgets[box] = string_state(box, "0.0806")
    sent = BackMsg()
    sent.ParseFromString(mirror.rerun({box: string_state(box, "0.25000")}))
    state = sent.rerun_script
    assert (state.page_script_hash, state.query_string) == ("abc", "v=1")
    assert {widget_key(w.id): w.string_value for w in state.widget_states.widgets} == {
        "pue": "", "electricity_usd_per_kwh": "0.25000"}
    assert mirror.widget_id("electricity_usd_per_kwh") == box
