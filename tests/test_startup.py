"""Start-up (issue #43): what a fresh process imports before its first answer, and the lean paths that spare the
heavy imports giving exactly what the heavy ones give (no timed tests: imports are listed, numbers compared bit for
bit).

- the app's first page (app.py's imports and ui/cost.py's) imports no database library (SQLAlchemy, Alembic), no
  chart library (altair, imported where a chart is built, after the KPIs), no Excel writer (openpyxl) and no
  ``scipy.stats``; nor the planner beyond its settings (the MILP, its rows and the plan's entry points), which the
  first run imports once its page is drawn (:func:`ui.memory.freeze_once`); the server's preload of that page (its
  imports and the default scenario) imports no scipy at all;
- every public name of :mod:`economics.studies.planner`, imported on first use, is its module's object, and its
  submodules still import by name;
- ``python -m economics plan`` imports neither ``scipy.stats``, the database library nor openpyxl (an Excel writer),
  nor any other command's modules (the parser is built for the command run alone, with the same arguments and help),
  nor ``scipy.optimize`` (the planner loads SciPy's HiGHS binding alone); ``scipy.optimize`` imported after it runs
  on that same binding;
- :func:`economics.domain.availability.binomial_cdf` is ``scipy.stats.binom.cdf``, bit for bit, and
  :class:`economics.engine.measured.Pchip` is ``scipy.interpolate.PchipInterpolator``, bit for bit;
- :func:`economics.domain.queueing.max_utilization`, remembered per arguments, is the bisection it remembers;
- every public name of :mod:`economics.store`, imported on first use, resolves;
- the app's first run under a runtime (a server, or ``streamlit.testing``) skips Streamlit's check for a Python
  prompt (``inspect.stack()`` over every frame and module loaded, about 70 ms of CPU before the first KPI);
- the favicon is the SVG Streamlit draws for the emoji, given as an ASCII URL, so the first run never loads
  Streamlit's emoji table;
- Streamlit's page, as the server answers it, names the code of the first page's elements for the browser to fetch
  before the first run's KPIs arrive (:mod:`ui.assets`), and is otherwise Streamlit's own;
- the page's static files are answered from memory with Streamlit's own headers and bytes, and any request with a
  range, a condition or Streamlit's session cookie is Streamlit's to answer.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import gzip
import math
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.interpolate import PchipInterpolator
from scipy.stats import binom
from streamlit.web.server.starlette.starlette_server_config import SESSION_COOKIE_NAME

from economics import store
from economics.cli import COMMANDS, build_parser
from economics.domain import queueing
from economics.domain.availability import binomial_cdf
from economics.engine import measured
from economics.store import location
from ui import assets

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("sqlalchemy", "alembic", "altair", "scipy.stats", "openpyxl")


PLANNER = ("economics.studies.planner.milp", "economics.studies.planner.run", "economics.studies.planner.build",
           "economics.studies.planner.hourly", "economics.studies.planner.frontiers")
"""The planner's modules the Cost page's first KPI does not need: the page reads the planner's settings only."""
FIRST_PAGE = ("from economics import store; store.use_stored_curves(); from ui import state; "
              "from economics.report import charts, kpis; "
              "from ui import common, day, editor, report, saving, state, studies")
"""app.py's imports and the Cost page's (ui/cost.py); the store's curve lookup set as app.py sets it."""


def _loaded_after(code: str, modules: tuple[str, ...] = HEAVY) -> set[str]:
    """The ``modules`` loaded in a fresh interpreter after ``code`` ran (from the repository root)."""
    probe = f"{code}\nimport sys\nprint(sorted(m for m in {modules!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return set(ast.literal_eval(done.stdout.strip().splitlines()[-1]))


def test_the_first_page_imports_no_database_chart_or_statistics_library() -> None:
    assert _loaded_after(FIRST_PAGE) == set()


def test_the_first_page_imports_the_planner_s_settings_but_not_its_milp() -> None:
    assert _loaded_after(FIRST_PAGE, (*PLANNER, "economics.studies.planner.inputs")) == {
        "economics.studies.planner.inputs"}
    # the first run imports them once its page is drawn, before the freeze (ui.memory): the Plan page's first visit
    # pays no import
    assert _loaded_after(FIRST_PAGE + "; from ui import memory; memory.freeze_once()", PLANNER) == set(PLANNER)
    # a name of the package brings its module
    assert _loaded_after(FIRST_PAGE + "; from economics.studies import planner; planner.plan", PLANNER) == set(
        PLANNER) - {"economics.studies.planner.frontiers"}


def test_every_public_name_of_the_planner_is_its_module_s_object() -> None:
    code = ("import importlib; from economics.studies import planner as p; "
            "bad = [n for n in p.__all__ if getattr(p, n) is not getattr(importlib.import_module(p._LAZY[n]), n)]; "
            "assert bad == [] and sorted(p.__all__) == sorted(p._LAZY), bad; "
            "from economics.studies.planner import build, milp, PlanSettings; "
            "assert build.__name__ == 'economics.studies.planner.build' and PlanSettings is p.inputs.PlanSettings")
    assert _loaded_after(code, ("economics.studies.planner.build",)) == {"economics.studies.planner.build"}


def test_the_plan_command_imports_no_scipy_stats_nor_the_database() -> None:
    code = ("import os, tempfile; from economics.cli import main; "
            "out = os.path.join(tempfile.mkdtemp(), 'plan.json'); "
            "assert main(['plan', 'docs/plan-example.csv', '--row', 'worked-plan-peaks', '--candidates', "
            "'docs/plan-candidates.csv', '-o', out]) == 0")
    # one fresh interpreter for both lists (the plan runs once): neither the heavy modules nor scipy.optimize's
    assert _loaded_after(code, (*HEAVY, "scipy.optimize", "scipy.linalg")) == set()


def test_scipy_optimize_imported_after_the_planner_runs_on_the_planner_s_highs() -> None:
    # the planner's milp module loads SciPy's HiGHS binding without scipy.optimize; scipy.optimize imported later
    # takes that same module (not a second copy of it), and its milp and linprog run
    code = ("from economics.studies.planner import milp; import sys; assert 'scipy.optimize' not in sys.modules; "
            "import numpy as np, scipy.optimize as o; from scipy.optimize._highspy import _core, _highs_wrapper; "
            "assert _core is milp.highs and _highs_wrapper._h is milp.highs; "
            "assert o.milp(np.array([1.0]), integrality=[1], bounds=o.Bounds([1.5], [9.0])).fun == 2.0; "
            "assert o.linprog(np.array([1.0]), A_ub=[[-1.0]], b_ub=[-3.0]).ineqlin.marginals[0] == -1.0")
    assert _loaded_after(code, ("scipy.optimize",)) == {"scipy.optimize"}


OTHER_COMMANDS = ("economics.report.files", "economics.studies.retrofit", "economics.studies.retrofit_odds",
                  "economics.studies.uncertainty", "economics.studies.compare", "economics.studies.calibration",
                  "economics.studies.leave_out", "economics.studies.kv_memory", "economics.studies.sweep",
                  "economics.io.benchmarks", "economics.io.session_traces", "economics.api.serve",
                  "economics.mcp.command", "economics.studies.plan_odds", "pyarrow.parquet")
"""Modules of other commands (and of ``plan --uncertainty``, and of Parquet files) that ``plan`` never uses."""


def test_the_plan_command_imports_no_other_command_s_modules() -> None:
    code = ("import os, tempfile; from economics.cli import main; "
            "out = os.path.join(tempfile.mkdtemp(), 'plan.json'); "
            "assert main(['plan', 'docs/plan-example.csv', '--row', 'worked-plan-peaks', '--candidates', "
            "'docs/plan-candidates.csv', '-o', out]) == 0")
    assert _loaded_after(code, OTHER_COMMANDS) == set()


def test_a_command_s_own_parser_is_its_part_of_the_whole_parser() -> None:
    whole = next(a for a in build_parser()._actions if a.dest == "command").choices
    assert list(whole) == list(COMMANDS)
    for name in COMMANDS:
        alone = next(a for a in build_parser(name)._actions if a.dest == "command").choices
        assert list(alone) == [name]
        assert alone[name].format_help() == whole[name].format_help()


@settings(max_examples=400, deadline=None)
@given(n=st.integers(0, 5000), k=st.integers(-3, 5003),
       p=st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.0, 1.0, 1e-300, 0.5, 1.0 - 1e-16])))
def test_binomial_cdf_is_scipy_stats_binom_cdf(n: int, k: int, p: float) -> None:
    ours, theirs = binomial_cdf(k, n, p), float(binom.cdf(k, n, p))
    assert ours == theirs or (math.isnan(ours) and math.isnan(theirs)), (k, n, p, ours, theirs)


def _same_bits(ours: np.ndarray, theirs: np.ndarray) -> bool:
    """Equal bit for bit, but for the payload of a NaN."""
    return bool(np.all((ours.view(np.int64) == theirs.view(np.int64)) | (np.isnan(ours) & np.isnan(theirs))))


def test_every_catalog_curve_is_interpolated_as_scipy_s_pchip_does() -> None:
    # economics.engine.measured.Pchip takes scipy.interpolate.PchipInterpolator's steps (extrapolate=False): the same
    # bits at every measured point, 400 points across each curve and beyond its ends
    rng = np.random.default_rng(0)
    for curve in (c for c in measured.curves() if c.per_user.size > 1):
        x, y = curve.per_user, curve.per_accelerator
        at = np.concatenate([x, np.linspace(x[0], x[-1], 200), rng.uniform(x[0] - 1.0, x[-1] + 1.0, 200), [np.nan]])
        assert _same_bits(measured.Pchip.through(x, y)(at), PchipInterpolator(x, y, extrapolate=False)(at)), curve


@settings(max_examples=300, deadline=None)
@given(steps=st.lists(st.floats(1e-3, 1e3), min_size=1, max_size=12), scale=st.sampled_from([1e-3, 1.0, 1e3]),
       data=st.data())
def test_pchip_is_scipy_s_pchip(steps: list[float], scale: float, data: st.DataObject) -> None:
    # any strictly increasing points and any values (signs, zeros, flats, extrema, two points), anywhere around them
    x = np.cumsum([0.5, *steps]) * scale
    y = np.array(data.draw(st.lists(st.one_of(st.floats(-1e6, 1e6), st.sampled_from([0.0, -0.0, 1.0])),
                                    min_size=x.size, max_size=x.size)))
    at = np.array([*x, *data.draw(st.lists(st.floats(x[0] - scale, x[-1] + scale), max_size=20))])
    with warnings.catch_warnings(record=True) as said:  # SciPy's own overflow warning, silenced around its call alone
        warnings.simplefilter("always")
        theirs = PchipInterpolator(x, y, extrapolate=False)(at)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # ours warns of nothing: its harmonic mean cannot overflow
        ours = measured.Pchip.through(x, y)(at)
    if not any("overflow" in str(w.message) for w in said):  # SciPy's mean finite: the same bits
        assert _same_bits(ours, theirs), (x, y, at)
    else:  # a slope below ~1e-302 overflowed SciPy's mean to a derivative of 0 where ours is the (tiny) mean itself
        assert np.array_equal(np.isnan(ours), np.isnan(theirs)), (x, y, at)
        assert np.nanmax(np.abs(ours - theirs), initial=0.0) < 1e-290, (x, y, at)


def test_pchip_s_harmonic_mean_of_subnormal_slopes_does_not_overflow() -> None:
    # points 1 apart, so the slopes are the rises: 1e-310, 2e-310 and 1 - 3e-310 (= 1.0); interior weights
    # w1 = 2 h + h = 3 and w2 = h + 2 h = 3. At x = 1.5: 6 / (3 / 1e-310 + 3 / 2e-310) = 6 / 4.5e310 = 1.333e-310
    # (3 / 1e-310 = 3e310 overflows: SciPy's derivative there is 0); at x = 2.5: 6 / (3 / 2e-310 + 3 / 1) = 4e-310
    x, y = np.array([0.5, 1.5, 2.5, 3.5]), np.array([0.0, 1e-310, 3e-310, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        slopes = measured._pchip_slopes(x, y)
    assert slopes[1:3].tolist() == pytest.approx([4 / 3 * 1e-310, 4e-310], rel=1e-12, abs=0.0)
    assert measured.Pchip.through(x, y)(x).tolist() == y.tolist()  # through its points still


def test_binomial_cdf_at_the_planner_s_spares() -> None:
    # 103 H100 servers of which 100 must be up, each up 0.996226 of the time (availability's own doctest): the
    # probability that at most 3 are down, as scipy.stats gives it
    assert binomial_cdf(3, 103, 1.0 - 0.996226) == float(binom.cdf(3, 103, 1.0 - 0.996226))
    assert round(binomial_cdf(3, 103, 1.0 - 0.996226), 4) == 0.9993


@settings(max_examples=60, deadline=None)
@given(servers=st.integers(1, 64), service_s=st.floats(0.01, 3.0), target_s=st.floats(0.05, 10.0),
       percentile=st.sampled_from([0.5, 0.9, 0.99]), cv2=st.floats(0.0, 4.0))
def test_max_utilization_remembered_is_the_bisection(servers: int, service_s: float, target_s: float,
                                                     percentile: float, cv2: float) -> None:
    args = (servers, service_s, target_s, percentile, cv2)
    first, again = queueing.max_utilization(*args), queueing.max_utilization(*args)
    assert first == again == queueing.max_utilization.__wrapped__(*args)


def test_every_public_name_of_the_store_resolves() -> None:
    missing = [name for name in store.__all__ if getattr(store, name, None) is None]
    assert missing == []
    assert store.database.database_url is location.database_url



def test_no_page_relies_on_streamlit_magic_which_is_off() -> None:
    # .streamlit/config.toml turns magic off (each page's first compile skips Streamlit's rewrite of its syntax
    # tree): a bare expression in app.py or a page script (not a call, not a docstring), which magic would have
    # drawn with st.write, would now draw nothing; there is none
    config = (ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8")
    assert "\nmagicEnabled = false\n" in config
    router = (ROOT / "app.py").read_text(encoding="utf-8")
    pages = [ROOT / "app.py", *(ROOT / p for p in re.findall(r'st\.Page\("([^"]+)"', router))]
    assert len(pages) >= 10
    for path in pages:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(n.body[0]) for n in ast.walk(tree) if isinstance(
            n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.body}
        bare = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Expr) and id(n) not in docstrings
                and not isinstance(n.value, (ast.Call, ast.Await, ast.Yield, ast.YieldFrom))]
        assert not bare, (path.name, bare)


def _last_line(probe: str, timeout: float = 600) -> str:
    """The last line a fresh ``python -c probe app.py`` prints (run at the repository's root; its exit code checked)."""
    done = subprocess.run([sys.executable, "-c", probe, str(ROOT / "app.py")], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1]


def test_the_first_run_skips_streamlit_s_prompt_check_under_a_runtime() -> None:
    # a fresh process (the check runs once per process): the default page's first run draws its KPI without
    # streamlit.env_util.is_repl being called (counted by wrapping Streamlit's own function, not ours)
    probe = (
        "import sys; from streamlit import env_util\n"
        "calls = []\n"
        "real = env_util.is_repl\n"
        "env_util.is_repl = lambda: calls.append(1) or real()\n"
        "from streamlit.testing.v1 import AppTest\n"
        "at = AppTest.from_file(sys.argv[1], default_timeout=300); at.run()\n"
        "assert not at.exception, at.exception\n"
        "print(len(calls), at.metric[0].label)\n")
    assert _last_line(probe) == "0 Cost per M tokens"


def test_the_favicon_is_streamlit_s_emoji_svg_without_its_emoji_table() -> None:
    # app.py gives the SVG Streamlit's frontend draws for the icon "emoji:🧮" (static/js: data:image/svg+xml,<svg
    # xmlns='http://www.w3.org/2000/svg' viewBox='0 0 100 100'><text y='.9em' font-size='90'>${emoji}</text></svg>),
    # percent-encoded: Streamlit passes it to the page as it is, and a fresh process's first run to its KPI never
    # loads streamlit.emojis (the table and the regular expression an emoji icon is checked against)
    probe = (
        "import sys; from urllib.parse import unquote; from streamlit.commands import page_config\n"
        "sent = []\n"
        "real = page_config._get_favicon_string\n"
        "page_config._get_favicon_string = lambda icon: sent.append(real(icon)) or sent[-1]\n"
        "from streamlit.testing.v1 import AppTest\n"
        "at = AppTest.from_file(sys.argv[1], default_timeout=300); at.run()\n"
        "assert not at.exception, at.exception\n"
        "print(repr(unquote(sent[0])), sent[0].isascii(), 'streamlit.emojis' in sys.modules, at.metric[0].label)\n")
    line = _last_line(probe)
    svg = ("data:image/svg+xml,<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 100 100'><text y='.9em' "
           "font-size='90'>\N{ABACUS}</text></svg>")
    assert line == f"{svg!r} True False Cost per M tokens"


def test_streamlit_run_serves_app_py_through_its_app_whose_import_is_light() -> None:
    # `streamlit run app.py` reads app.py's syntax, finds `app = st.App(...)` and serves it (uvicorn), importing app.py
    # once as a module at the server's start: that import must not hold up the server (none of the first page's
    # libraries; they load on the lifespan's thread), and the sessions still run app.py itself as their script
    probe = ("import sys; from pathlib import Path; import app\n"
             "from streamlit.web.server.app_discovery import discover_asgi_app\n"
             "found = discover_asgi_app(Path(sys.argv[1]))\n"
             "heavy = [m for m in ('pandas', 'scipy', 'pydantic', 'economics', 'ui.state') if m in sys.modules]\n"
             "print(found.import_string, type(app.app).__name__, app.app.script_path, heavy)\n")
    assert _last_line(probe, timeout=300) == "app:app App app.py []"


def _first_run_imports() -> set[str]:
    """The project's modules that app.py's run and the Cost page (ui/cost.py, the default page) import, read from
    their syntax."""
    names = set()
    for path in (ROOT / "app.py", ROOT / "ui" / "cost.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                names |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    return {n for n in names if n.split(".")[0] in ("economics", "ui") and (
        (ROOT / n.replace(".", "/")).with_suffix(".py").exists() or (ROOT / n.replace(".", "/")).is_dir())}


LIFESPAN = ("import asyncio, sys, threading\n"
            "from ui import memory\n"
            "async def serve():\n"
            "    async with memory.preload(None):\n"
            "        pass\n"
            "asyncio.run(serve())\n")
"""A probe's start: the server's lifespan (ui.memory.preload) entered and left as the server does at its start,
its threads left running."""


def test_the_server_s_lifespan_loads_the_first_page_and_nothing_more() -> None:
    # ui.memory.preload, as the server runs it at its start: its thread imports every module of the project that
    # app.py's run and the Cost page import, and evaluates the default scenario; never the planner's MILP (imported
    # after the first page is drawn) nor a database, chart or statistics library, nor any of scipy (the measured
    # curve's PCHIP is the engine's own, economics.engine.measured.Pchip)
    wanted = sorted(_first_run_imports())
    assert {"economics.store", "ui.state", "ui.common", "ui.studies", "economics.report.kpis"} <= set(wanted)
    # (after app.py's import as a module, which the server makes first: ui.memory and ui.assets)
    probe = ("import app\n" + LIFESPAN +
             "[t.join() for t in threading.enumerate() if t.name == 'first-page-preload']\n"
             f"wanted = {wanted!r}\n"
             f"unwanted = {(*HEAVY, *PLANNER, 'scipy')!r}\n"
             "print([m for m in wanted if m not in sys.modules], [m for m in unwanted if m in sys.modules])\n")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[] []"


def test_a_first_run_waits_for_the_preload_rather_than_evaluating_alongside_it() -> None:
    # app.py calls ui.memory.until_first_page before the page runs: without a preload (streamlit.testing) it returns at
    # once and imports nothing; under the server's lifespan it returns once the preload's thread has ended, the default
    # scenario's catalog tables read and kept, so the run's own evaluation reads them from there rather than reading
    # them a second time alongside the preload (functools.cache does not make a second caller wait)
    # The preload pauses Python's automatic collection for its imports (no full collection walks the 190,000 objects
    # they leave alive before the first KPI) and resumes it when done.
    probe = ("import gc, sys\nfrom ui import memory\nmemory.until_first_page()\nbare = 'economics' in sys.modules\n"
             "full = gc.get_stats()[2]['collections']\n" +
             LIFESPAN + "memory.until_first_page()\nfrom economics import catalog\n"
             "alive = [t.name for t in threading.enumerate() if t.name == memory.FIRST_PAGE_THREAD and t.is_alive()]\n"
             "print(bare, alive, catalog.throughput_curves.cache_info().currsize, "
             "gc.get_stats()[2]['collections'] - full, gc.isenabled())\n")
    assert _last_line(probe, timeout=300) == "False [] 1 0 True"


def _get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """An answer of the server (never through a proxy): status, headers (lower-case names) and body as sent."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(urllib.request.Request(url, headers=headers or {}), timeout=30) as answer:
        return answer.status, {k.lower(): v for k, v in answer.headers.items()}, answer.read()


def _served() -> Iterator[str]:
    """``streamlit run app.py`` on a free loopback port, its URL once healthy; stopped afterwards."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                               "--server.port", str(port), "--server.address", "127.0.0.1",
                               "--server.fileWatcherType", "none", "--browser.gatherUsageStats", "false"],
                              cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(1200):
            with contextlib.suppress(OSError):
                if _get(f"{url}/_stcore/health")[2] == b"ok":
                    break
            assert server.poll() is None, "streamlit exited before it was healthy"
            time.sleep(0.1)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_streamlit_s_page_names_the_first_page_s_element_code() -> None:
    # issue #43: the code of the elements the Cost page draws with its KPIs (ui.assets) is named in Streamlit's page by
    # a script that adds modulepreload links once the page has loaded, so the browser fetches it while the first run is
    # under way; the page is otherwise Streamlit's own, on every page's path, and the files are served untouched
    own = assets.STREAMLIT_PAGE.read_bytes()
    files = assets.element_files()
    assert [f.split(".")[0] for f in files[:len(assets.FIRST_ELEMENTS)]] == list(assets.FIRST_ELEMENTS)
    assert not [f for f in files if f.encode() in own]  # none the page names already
    script = assets.preload_script(files, assets.later_files()) + assets.STILL_STYLE
    main_file = re.search(rb'src="./static/js/([^"]+)"', own)
    assert main_file is not None
    with contextmanager(_served)() as url:
        for path in ("/", "/fleet"):
            status, headers, page = _get(url + path)
            assert status == 200 and int(headers["content-length"]) == len(page)
            assert page == own.replace(b"</head>", script + b"</head>", 1)
            # as a browser asks for it: Streamlit gzips the page at a page's path, and the middleware's addition was
            # lost there (only / had it) until ui.assets opened the compressed page
            status, headers, packed = _get(url + path, {"Accept-Encoding": "gzip"})
            assert status == 200 and int(headers["content-length"]) == len(packed)
            opened = gzip.decompress(packed) if headers.get("content-encoding") == "gzip" else packed
            assert opened == own.replace(b"</head>", script + b"</head>", 1)
        for name in (files[0], files[-1], main_file[1].decode()):
            assert _get(f"{url}/static/js/{name}")[2] == (assets.STATIC_JS / name).read_bytes()
        # the page's files, answered from memory (ui.assets.HeldPageFiles), carry Streamlit's own headers and bytes: a
        # request with a condition passes through to Streamlit's handler, which answers the whole file when the
        # condition holds for none, and 304 to the file's entity tag
        for name in [*assets.page_files()[:2], f"static/js/{files[0]}", f"static/js/{main_file[1].decode()}"]:
            status, headers, body = _get(f"{url}/{name}")
            streamlit_s = _get(f"{url}/{name}", {"If-Modified-Since": "Thu, 01 Jan 1970 00:00:00 GMT"})
            assert status == streamlit_s[0] == 200
            assert body == streamlit_s[2] == (assets.STREAMLIT_PAGE.parent / name).read_bytes()
            assert {**headers, "date": ""} == {**streamlit_s[1], "date": ""}
            with pytest.raises(urllib.error.HTTPError, match="304"):
                _get(f"{url}/{name}", {"If-None-Match": headers["etag"]})


def test_the_page_s_files_are_answered_from_memory_and_nothing_else() -> None:
    # ui.assets.HeldPageFiles in front of a server that answers 404 to everything: a plain GET of a page's file gets
    # the held answer (the file's bytes, Starlette's file headers, Streamlit's Cache-Control) without reaching it; a
    # range, a condition, Streamlit's session cookie, a HEAD or another path reach it
    reached: list[str] = []

    async def server(scope: dict[str, Any], receive: Any, send: Any) -> None:
        reached.append(scope["path"])
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    def ask(path: str, method: str = "GET", headers: tuple[tuple[bytes, bytes], ...] = ()) -> list[dict[str, Any]]:
        sent: list[dict[str, Any]] = []

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        scope = {"type": "http", "method": method, "path": path, "headers": list(headers)}
        asyncio.run(held(scope, None, send))
        return sent

    held = assets.HeldPageFiles(server)
    name = assets.page_files()[-1]
    start, body = ask(f"/{name}")
    head, data = assets.held_answer(assets.STREAMLIT_PAGE.parent / name)
    assert (start["status"], start["headers"], body["body"]) == (200, head, data) and reached == []
    assert (b"cache-control", assets.IMMUTABLE.encode()) in head
    assert data == (assets.STREAMLIT_PAGE.parent / name).read_bytes()
    for other in (("range", "bytes=0-9"), ("if-none-match", '"x"'), ("if-modified-since", "x"), ("if-range", "x"),
                  ("cookie", f"a=1; {SESSION_COOKIE_NAME}=x")):
        assert ask(f"/{name}", headers=((other[0].encode(), other[1].encode()),))[0]["status"] == 404
    assert ask(f"/{name}", method="HEAD")[0]["status"] == ask(f"/{name}.map")[0]["status"] == 404
    assert ask(f"/{name}", headers=((b"cookie", b"a=1"),))[0]["status"] == 200
    assert len(reached) == 7


def test_the_element_files_are_every_static_import_of_the_elements_code() -> None:
    # the closure, read again here file by file: every file the named elements' code imports statically (as the
    # browser would follow it), but those Streamlit's page names itself, is in the list, once
    named = set(re.findall(rb'\./static/js/([^"]+\.js)"', assets.STREAMLIT_PAGE.read_bytes()))
    files = assets.element_files()
    assert len(files) == len(set(files))
    for name in files:
        text = (assets.STATIC_JS / name).read_bytes()
        for imported in re.findall(rb'(?:from|import)"\./([^"]+\.js)"', text):
            assert imported in named or imported.decode() in files, (name, imported)
