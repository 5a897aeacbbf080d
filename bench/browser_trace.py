"""What happens between an edit's Enter key and its new KPI, traced in a real headless browser (Chromium via
Playwright), on one page of the app or on the one-widget floor page of bench/app_latency.py.

For each edit (the values bench/app_latency.py types) it prints, in the page's own clock from the Enter key:

* when ``new_session`` arrived (the run started) and when the KPI's ``st.metric`` delta arrived, both in the page
  (the websocket ``message`` event) and on the wire (CDP ``Network.webSocketFrameReceived``, the browser process):
  equal figures mean the page's main thread did not hold the message up;
* when the KPI showed its new value (polled every animation frame), so "shown - arrived" is the browser's drawing;
* the CPU the browser's renderer process and the Streamlit server took from just before the fill to the KPI
  (the kernel's user and system time of each process, in 10 ms ticks: the machine's load inflates these far less
  than wall time);
* Chromium's own counters over the same span (``Performance.getMetrics``: script, style and layout time);
* React commits in the span (a ``__REACT_DEVTOOLS_GLOBAL_HOOK__`` stand-in that only counts them), the page's DOM
  element count and the messages a run sends;
* from just before the fill: when the text went in, Enter and the KPI in the page's clock, against the wall time
  until Playwright answered (its answer waits while the page draws what came after the KPI).

With ``--verbose``, every message of each edit (its kind, the element and, for a heading or KPI, its first words);
with ``--profile DIR``, a CPU profile (CDP ``Profiler``, 100 us sampling) of each edit's span as JSON. It prints
figures and asserts nothing; the server and the browser only talk over 127.0.0.1. docs/speed.md says what it found.

Usage: python bench/browser_trace.py [--page WORD [--field N] | --floor [--captions N [--kind K]]] [--edits 8]
       [--verbose] [--profile DIR]
"""

from __future__ import annotations

import argparse
import base64
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil
from playwright.sync_api import Page, sync_playwright
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.app_latency import (  # noqa: E402
    CHROMIUM_ARGS,
    ENTER_JS,
    FLOOR_APP,
    HOST,
    IDLE_JS,
    PAGES,
    cpu_ms,
    free_port,
    kpi_text,
    renderer_pids,
    settle,
    start_server,
    stop,
    wait_kpi,
)

# Before the page's own scripts: each websocket message's arrival (page clock) and bytes, and a stand-in for React's
# devtools hook that records the time of every commit.
INIT_JS = r"""
(() => {
  window.__msgs = []; window.__commits = []; window.__input = {};
  for (const kind of ['focusin', 'input', 'keydown']) {
    document.addEventListener(kind, () => {
      if (!(kind in window.__input)) window.__input[kind] = performance.now();
    }, true);
  }
  const Native = window.WebSocket;
  window.WebSocket = function (...args) {
    const ws = new Native(...args);
    ws.addEventListener('message', (e) => {
      const bytes = new Uint8Array(e.data); let text = '';
      for (let i = 0; i < bytes.length; i++) text += String.fromCharCode(bytes[i]);
      window.__msgs.push([performance.now(), btoa(text)]);
    });
    return ws;
  };
  window.WebSocket.prototype = Native.prototype; Object.assign(window.WebSocket, Native);
  window.__REACT_DEVTOOLS_GLOBAL_HOOK__ = { supportsFiber: true, renderers: new Map(), isDisabled: false,
    inject() { return 1; }, onCommitFiberRoot() { window.__commits.push(performance.now()); },
    onCommitFiberUnmount() {}, onPostCommitFiberRoot() {}, checkDCE() {} };
})();
"""
METRICS = ("ScriptDuration", "RecalcStyleDuration", "LayoutDuration")


def describe(payload: str) -> str:
    """One ForwardMsg (base64) in a few words: its kind; for a delta, the element and a heading's or KPI's words."""
    msg = ForwardMsg()
    msg.ParseFromString(base64.b64decode(payload))
    kind = msg.WhichOneof("type")
    if kind != "delta":
        return f"[{kind}]"
    delta = msg.delta
    if delta.WhichOneof("type") != "new_element":
        return str(delta.WhichOneof("type"))
    element = delta.new_element.WhichOneof("type")
    words = {"metric": delta.new_element.metric.label, "heading": delta.new_element.heading.body}.get(element, "")
    return f"{element}:{words[:14]}" if words else str(element)


def _metrics(cdp: Any) -> dict[str, float]:
    return {m["name"]: float(m["value"]) for m in cdp.send("Performance.getMetrics")["metrics"]}


def trace_edit(page: Page, cdp: Any, frames: list[tuple[float, str]], target: tuple[str, str, str],
               value: float, pids: tuple[list[int], list[int]], profile: Path | None) -> dict[str, Any]:
    """One edit from a settled page: fill ``value``, press Enter, wait for the new KPI; what happened meanwhile."""
    field, label, name = target
    settle(page)
    page.evaluate(IDLE_JS)
    page.wait_for_timeout(300)  # the previous run's tail drawn, outside the span
    before = kpi_text(page, label)
    page.evaluate("() => { window.__msgs = []; window.__commits = []; window.__input = {}; }")
    t0 = time.perf_counter()
    start = float(page.evaluate("() => performance.now()"))
    frames.clear()
    if profile is not None:
        cdp.send("Profiler.enable")
        cdp.send("Profiler.setSamplingInterval", {"interval": 100})
        cdp.send("Profiler.start")
    renderer0, server0, m0 = cpu_ms(pids[0]), cpu_ms(pids[1]), _metrics(cdp)
    box = page.locator(f".st-key-{field} input")
    box.fill(f"{value:g}")
    box.press("Enter")
    _, shown = wait_kpi(page, label, pattern=r"\d", before=before)
    wall = (time.perf_counter() - t0) * 1000
    events = page.evaluate("() => window.__input")
    renderer1, server1, m1 = cpu_ms(pids[0]), cpu_ms(pids[1]), _metrics(cdp)
    if profile is not None:
        (profile / f"{name}-{value:g}.json").write_text(json.dumps(cdp.send("Profiler.stop")["profile"]))
    settle(page)
    enter = float(page.evaluate("() => window.__benchEnter"))
    msgs = [(t - enter, describe(b)) for t, b in page.evaluate("() => window.__msgs")]
    wire = [(t * 1000, describe(b)) for t, b in frames]
    kpi = "metric:" + label[:14]

    def first(items: list[tuple[float, str]], prefix: str) -> float:
        return next((t for t, d in items if d.startswith(prefix)), float("nan"))

    started, arrived = first(msgs, "[new_session]"), first(msgs, kpi)
    return {"new_session": started, "to_kpi_msg": arrived - started,
            "wire": first(wire, kpi) - first(wire, "[new_session]"), "drawn": shown - enter - arrived,
            "kpi": shown - enter, "renderer_cpu": renderer1 - renderer0, "server_cpu": server1 - server0,
            "script": (m1["ScriptDuration"] - m0["ScriptDuration"]) * 1000,
            "style_layout": sum(m1[k] - m0[k] for k in METRICS[1:]) * 1000,
            "commits": sum(1 for t in page.evaluate("() => window.__commits") if 0 <= t - enter <= shown - enter),
            "before_kpi": sum(1 for t, _ in msgs if t <= arrived), "messages": msgs, "wall": wall,
            "to_input": events.get("input", float("nan")) - start, "to_enter": enter - start,
            "in_page": shown - start}


TABLE = ("<table class='static-table'><thead><tr><th>Option</th><th class='figure'>NPV</th></tr></thead><tbody>"
         + "".join(f"<tr><td>option {{i}} {r}</td><td class='figure'>${r}.0 M</td></tr>" for r in range(6))
         + "</tbody></table>")
FLOOR_ELEMENTS = {
    "caption": "st.caption(f'caption {i} of a few words')",
    "pair": "st.subheader(f'heading {i}'); st.caption(f'caption {i} of a few words')",
    "subheader": "st.subheader(f'heading {i}')",
    "mdheading": "st.markdown(f'### heading {i}')",
    "headed": "st.markdown(f'### heading {i}\\n\\n:small[:gray[caption {i} of a few words]]')",
    "html": f"st.html(f\"{TABLE}\")",
    "mdtable": f"st.markdown(f\"{TABLE}\", unsafe_allow_html=True)",
    "header": "st.header(f'heading {i}')",
    "mdheader": "st.markdown(f'## heading {i}')",
    "text_input": "st.text_input(f'input {i} [unit]', '1,000', key=f'k{i}', help=f'help {i} of a few words')",
    "text_input_bare": "st.text_input(f'input {i} [unit]', '1,000', key=f'k{i}')",
    "sidebar_text_input": "st.sidebar.text_input(f'input {i} [unit]', '1,000', key=f'k{i}', help=f'help {i} words')",
    "number_input": "st.number_input(f'input {i} [unit]', value=1000.0, key=f'k{i}', help=f'help {i} of a few words')",
    "selectbox": "st.selectbox(f'input {i}', ['a', 'b', 'c'], key=f'k{i}', help=f'help {i} of a few words')",
    "selectbox_bare": "st.selectbox(f'input {i}', ['a', 'b', 'c'], key=f'k{i}')",
    "checkbox": "st.checkbox(f'input {i}', key=f'k{i}', help=f'help {i} of a few words')",
    "pills": "st.pills(f'section {i}', ['Hardware', 'Finance', 'Demand', 'Prices'], key=f'k{i}', "
             "label_visibility='collapsed', help=f'help {i} of a few words')",
}
"""What ``--captions N`` repeats N times after the floor's KPI, by ``--kind`` (a line of the page's code)."""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--page", default="Decode", help="a word of the page's title (bench/app_latency.py's PAGES)")
    ap.add_argument("--field", type=int, default=0, help="which of the page's edits (0: the first it lists)")
    ap.add_argument("--floor", action="store_true", help="the one-widget floor page instead")
    ap.add_argument("--captions", type=int, default=0, help="with --floor: the floor page with this many elements "
                    "of --kind after its KPI (what one more element on a page costs an edit)")
    ap.add_argument("--kind", choices=sorted(FLOOR_ELEMENTS), default="caption",
                    help="with --floor --captions N: what each of the N is (a caption, a subheader and its caption as "
                    "two elements or as one markdown, a small static table as st.html or inside a markdown, a "
                    "header, an input of a kind with or without help, in the main area or the sidebar)")
    ap.add_argument("--edits", type=int, default=8)
    ap.add_argument("--verbose", action="store_true", help="every message of each edit")
    ap.add_argument("--profile", type=Path, help="write each edit's CPU profile (JSON) to this folder")
    args = ap.parse_args()
    if args.floor:
        title, path, field, label, step = "floor", "", "x", "Floor KPI", lambda i: 3.0 + i
    else:
        title, path, field, label, step = [p for p in PAGES if args.page.lower() in p[0].lower()][args.field]
    if args.profile is not None:
        args.profile.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p, tempfile.TemporaryFile() as log, tempfile.TemporaryDirectory() as tmp:
        browser = p.chromium.launch(executable_path=shutil.which("chromium") or "/usr/bin/chromium",
                                    args=CHROMIUM_ARGS)
        script = "app.py"
        if args.floor:
            script = str(Path(tmp) / "floor.py")
            extra = f"for i in range({args.captions}):\n    {FLOOR_ELEMENTS[args.kind]}\n"
            Path(script).write_text(FLOOR_APP + (extra if args.captions else ""), encoding="utf-8")
        port, proc = free_port(), None
        try:
            proc = start_server(script, port, log)
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.add_init_script(INIT_JS)
            cdp = page.context.new_cdp_session(page)
            cdp.send("Performance.enable")
            cdp.send("Network.enable")
            frames: list[tuple[float, str]] = []
            cdp.on("Network.webSocketFrameReceived",
                   lambda ev: frames.append((ev["timestamp"], ev["response"]["payloadData"])))
            page.goto(f"http://{HOST}:{port}/{path}")
            wait_kpi(page, label, pattern=r"\d")
            settle(page)
            page.evaluate(ENTER_JS)
            elements = page.evaluate("() => document.getElementsByTagName('*').length")
            pids = (renderer_pids(), [proc.pid])
            rows = []
            for i in range(args.edits):
                row = trace_edit(page, cdp, frames, (field, label, title.split()[0].lower()), round(step(i), 6),
                                 pids, args.profile)
                rows.append(row)
                print(f"edit {i}: KPI {row['kpi']:.0f} ms after Enter: new_session {row['new_session']:.0f}, KPI "
                      f"message +{row['to_kpi_msg']:.0f} (wire +{row['wire']:.0f}), shown +{row['drawn']:.0f}; CPU "
                      f"renderer {row['renderer_cpu']:.0f} ms, server {row['server_cpu']:.0f} ms; script "
                      f"{row['script']:.0f} ms, style+layout {row['style_layout']:.0f} ms; {row['commits']} commits; "
                      f"from before the fill, wall {row['wall']:.0f} ms; in the page: the text in at "
                      f"{row['to_input']:.0f} ms, Enter {row['to_enter']:.0f} ms, the KPI {row['in_page']:.0f} ms")
                if args.verbose:
                    print("  " + "; ".join(f"{t:.0f} {d}" for t, d in row["messages"]))
            med = {k: statistics.median(float(r[k]) for r in rows) for k in rows[0] if k != "messages"}
            print(f"{title} ({field}), median of {args.edits}: KPI {med['kpi']:.0f} ms after Enter (new_session "
                  f"{med['new_session']:.0f}, KPI message +{med['to_kpi_msg']:.0f}, wire +{med['wire']:.0f}, "
                  f"shown +{med['drawn']:.0f}); CPU from the fill to the KPI: renderer {med['renderer_cpu']:.0f} ms, "
                  f"server {med['server_cpu']:.0f} ms; script {med['script']:.0f} ms, style+layout "
                  f"{med['style_layout']:.0f} ms; React commits {med['commits']:.0f}; messages before the KPI "
                  f"{med['before_kpi']:.0f}; DOM elements {elements}; load average {psutil.getloadavg()[0]:.2f}")
        finally:
            stop(proc)
            browser.close()


if __name__ == "__main__":
    main()
