"""A bounded slice of ``bench/fuzz.py`` in CI.

The values stage: generated hostile values through the CSV reader, the JSON reader, the DataFrame API, the link
decoder, Scenario and the CLI; no traceback, no parser mismatch, no non-finite output, no exit code at odds with
the rows, no escape leak. The command stages (plan, sweep, outputs, escapes, curves, links, api, signals): a few
dozen derandomised cases each (six for signals: each a process start)
(a fixed seed, the cases that take seconds left out), and zero of every failure outcome. Bugs the bench found are
tests of their own below (each an ``xfail(strict=True)`` test until it was fixed). (The full run is
``python bench/fuzz.py``.)
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import signal
import stat
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench" / "fuzz.py"
DOCS = ROOT / "docs"


def load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fuzz_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


BENCH_MODULE = load_bench()
import fuzz_common  # noqa: E402 - importable once the bench has put its folder on the path

FAILURES = fuzz_common.FAILURES


@pytest.mark.parametrize("seed", [1, 2])
def test_fuzz_slice_finds_no_traceback_and_no_mismatch(seed: int) -> None:
    report = BENCH_MODULE.run(inputs=1500, seed=seed, batch=500)
    assert report.inputs + report.file_inputs == 1500 and report.cli_runs >= 9
    assert report.tracebacks == []
    assert report.mismatches == []
    assert report.nonfinite == []
    assert report.exit_mismatches == []
    assert report.leaks == []


def test_the_fuzz_counts_a_mismatch_when_paths_disagree() -> None:
    # the bench's own comparison must be able to fail: a link read by another parser would be caught
    assert BENCH_MODULE.reference("accelerator_count", "1_000") == ("bad", None)
    assert BENCH_MODULE.reference("rent_includes_energy", "t") == ("ok", True)
    assert BENCH_MODULE.reference("electricity_usd_per_kwh", "") == ("ok", 0.0806)
    assert BENCH_MODULE.normal(float("nan")) == ("ok", None)


def test_the_fuzz_counts_an_output_its_result_emptied_where_the_derivation_computed_one() -> None:
    # the result empties an output that is not finite, so "present cells are finite" held whatever the engine
    # computed: the check reads the row's derivation. Here the result of two fuzz-base rows, and the same result
    # with one computed cell emptied as the result empties an infinite one
    rows = [{**fuzz_common.BASE_ROW, "name": f"r{i}"} for i in range(2)]
    df = BENCH_MODULE.read_table(BENCH_MODULE.csv_bytes(rows), fmt="csv")
    result, _ = BENCH_MODULE.evaluate_with_report(df)
    clean = BENCH_MODULE.Report()
    BENCH_MODULE.check_outputs(df, result, clean, "t")
    assert clean.nonfinite == []
    emptied = result.copy()
    emptied.loc[1, "facility_power_kw"] = None
    caught = BENCH_MODULE.Report()
    BENCH_MODULE.check_outputs(df, emptied, caught, "t")
    assert [line.split(" (")[0] for line in caught.nonfinite] == ["[t] row 2: facility_power_kw computed"]


# --- the command stages -------------------------------------------------------------------------------------------

SLICE_CASES = {"plan": 30, "sweep": 40, "outputs": 30, "escapes": 60, "curves": 60, "links": 30, "api": 60,
               "signals": 6}
"""Cases per stage in CI: the fixed edge cases first (all of them for sweep and outputs), then generated ones."""
_STAGES: dict[str, Any] = {}


def stage_slice(name: str) -> Any:
    """The stage's slice, run once per session (seed 1, quick)."""
    if name not in _STAGES:
        _STAGES[name] = BENCH_MODULE.run_stages([name], 0, SLICE_CASES[name], seed=1, quick=True)[0]
    return _STAGES[name]


OPEN_FINDINGS: dict[tuple[str, str], str] = {}
"""Slices that reach a bug the bench found and that is not fixed yet: expected to fail until it is."""


def _slice_param(stage: str, outcome: str) -> Any:
    reason = OPEN_FINDINGS.get((stage, outcome))
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(stage, outcome, marks=marks, id=f"{stage}-{outcome.replace(' ', '_')}")


UNTIMED = tuple(o for o in FAILURES if o != "slow >10 s")
"""The outcomes a slice is tested for: all but the clock's. A case over 10 s is counted by the bench (bench/fuzz.py),
never asserted by a test: on a loaded machine the signals slice's process starts crossed it with nothing wrong."""


@pytest.mark.parametrize(("stage", "outcome"), [_slice_param(s, o) for s in SLICE_CASES for o in UNTIMED])
def test_a_command_stage_slice_has_no_failure(stage: str, outcome: str) -> None:
    # the seed-1 slices reach none of the bugs below (each is a test of its own); a new failure shows here
    result = stage_slice(stage)
    assert result.cases == SLICE_CASES[stage]
    found = [f.text(stage) for f in result.failures if f.outcome == outcome]
    assert result.counts[outcome] == 0, "\n".join(found)


REACHED = {"links": ("links read", "combination checked"), "api": ("status 200", "status 422"),
           "signals": ("exit 130", "exit 143")}
"""What each stage without the CLI's exit codes must reach in its slice (the others: exit 0 and exit 2)."""


def test_each_command_stage_reaches_every_exit_code() -> None:
    # a slice that only ever refused its input would check little: each stage runs some commands to the end
    for name in SLICE_CASES:
        counts = stage_slice(name).counts
        assert all(counts[o] > 0 for o in REACHED.get(name, ("exit 0", "exit 2"))), (name, counts)


def test_the_command_checks_can_fail(tmp_path: Path) -> None:
    # the checks themselves: a raw escape on stderr, exit 3, a report's raw escape on a pipe, a replaced FIFO
    run = fuzz_common.Run(["explain", "x.csv", "--row", "1"], 3, "name \x1b[31m\n", "oops\n", 0.1)
    assert fuzz_common.outcomes(run) == ["exit 3", "escape leak"]
    data = fuzz_common.Run(["evaluate", "x.csv"], 0, "name\x1b[31m,1\n", "", 0.1)
    assert fuzz_common.outcomes(data) == ["exit 0"]  # data on a pipe stays exact
    data.terminal = True
    assert fuzz_common.outcomes(data) == ["exit 0", "escape leak"]
    assert fuzz_common.outcomes(fuzz_common.Run(["plan"], 1, "", "", 11.0), (0,)) == ["exit 1", "slow >10 s",
                                                                                   "mismatch"]
    outputs = sys.modules["fuzz_outputs"]
    os.mkfifo(tmp_path / "out")
    before = outputs.snapshot(tmp_path)
    (tmp_path / "out").unlink()
    (tmp_path / "out").write_text("x")
    (tmp_path / ".out.abc.partial").write_text("x")
    found = outputs.changes(before, outputs.snapshot(tmp_path), False, outputs._null_identity())
    assert [f for f, _ in found] == ["output replaced", "partial left"], found
    assert stat.S_ISREG(os.lstat(tmp_path / "out").st_mode)


def test_the_new_stages_checks_can_fail(tmp_path: Path) -> None:
    # links: a setting read as another value, or refused without a word; api: a 500, a body not in the error shape,
    # a raw escape in a text answer, a 200 for what must be refused; signals: two stderr lines, a partial file, a
    # cut output, a child left
    links, api, signals = (sys.modules[m] for m in ("fuzz_links", "fuzz_api", "fuzz_signals"))
    settings = links.ui_links.default_settings()
    assert links.check_settings({"pue_low": "1,5"}, {**settings, "pue_low": 1.5}, []) != []
    assert links.check_settings({"pue_low": "1.5"}, settings, ["settings.pue_low: no; the default is used"]) != []
    assert links.check_scenario({"pue": "1.5"}, links.BASE, {}, []) != []
    assert links.check_scenario({"pue": "x"}, links.BASE, {}, []) != []  # refused, but no warning names it
    assert links.check_scenario({"pue": "x"}, links.BASE, {}, ["pue: 'x' is not a number"]) == []
    refuse = api.Request("/v1/evaluate", refuse=True)
    assert [o for o, _ in api.check_answer(500, "application/json", b'{"x": 1}', refuse)] == ["status 500",
                                                                                              "bad body"]
    assert [o for o, _ in api.check_answer(200, "text/plain", b"a\x1b[31m", refuse)] == ["escape leak", "mismatch"]
    assert api.check_answer(200, "text/plain", "a\\x1b[31m \u4e2d".encode(), api.Request("/")) == []
    run = fuzz_common.Run(["evaluate"], 130, "", "Interrupted.\nagain\n", 0.5)
    (tmp_path / ".out.csv.x.partial").write_text("x")
    (tmp_path / "out.csv").write_text("name,")
    found = signals.checks(run, tmp_path, tmp_path / "out.csv", {"evaluate": b"name,cost\n"}, [4242])
    assert [o for o, _ in found] == ["mismatch", "partial left", "output incomplete", "child left"]
    assert signals.session_members(os.getsid(0)) != []  # this session holds this process


def test_a_signal_in_pythons_own_start_up_is_counted_apart_and_nothing_else_is() -> None:
    # a Ctrl-C in the interpreter's own imports (before any line of the package: exit 1, Python's traceback) was
    # counted as a mismatch on a loaded machine (the flaky slice): it is counted under its own name, exit 1 allowed
    # for it alone; the same exit 1 with a frame of ours is still a traceback and a mismatch
    signals = sys.modules["fuzz_signals"]
    theirs = 'Traceback (most recent call last):\n  File "<frozen runpy>", line 189\nKeyboardInterrupt\n'
    stage = fuzz_common.Stage("signals")
    run = fuzz_common.Run(["evaluate"], 1, "", theirs, 0.1)
    allowed, extra = signals.startup_counted(run, signal.SIGINT, [("mismatch", "3 lines")])
    assert stage.record(run, allowed, {}, extra) == ["exit 1", "signal in Python's start-up"]
    ours = theirs.replace("<frozen runpy>", str(Path(__file__).parents[1] / "economics" / "cli.py"))
    run = fuzz_common.Run(["evaluate"], 1, "", ours, 0.1)
    allowed, extra = signals.startup_counted(run, signal.SIGTERM, [("mismatch", "3 lines")])
    assert allowed == (0, 143)
    assert set(stage.record(run, allowed, {}, extra)) >= {"traceback", "mismatch"}


def test_a_generated_sweep_is_cut_down_before_it_runs() -> None:
    # the sizes the project would accept are cut to a few hundred scenarios; the ones it refuses are left to refuse
    commands = sys.modules["fuzz_commands"]
    grid, options, capped = commands.bounded(["pue=1:2:100000"], {"--samples": "0"}, False)
    size, partitions = commands._size(grid, 0, int(options["--partition-rows"]))
    assert capped and size <= commands.SAFE_SCENARIOS and partitions <= commands.SAFE_PARTITIONS, grid
    grid, options, capped = commands.bounded([], {"--samples": "59000000"}, False)
    assert capped and int(options["--samples"]) <= 5
    huge = ["pue=1:2:100000", "headroom=0:1:100000"]
    assert commands.bounded(huge, {}, False) == (huge, {}, False)  # refused by the project at once: left as it is


# --- bugs found by the bench, not fixed yet: each passes while the bug is there ---------------------------------


def _plan_changed(tmp_path: Path, candidate: tuple[str, str], row: tuple[str, str] = ("", "")) -> tuple[int, str]:
    """``plan`` of docs/plan-example.csv row 1 with one text replaced in docs/plan-candidates.csv and one in the
    plan file: (exit code, stderr).
    """
    for name, (old, new) in (("plan-candidates.csv", candidate), ("plan-example.csv", row)):
        text = (DOCS / name).read_text()
        assert old in text
        (tmp_path / name).write_text(text.replace(old, new, 1))
    run = fuzz_common.run_in_process(["plan", str(tmp_path / "plan-example.csv"), "--row", "1", "--candidates",
                                      str(tmp_path / "plan-candidates.csv")])
    assert run.code is not None
    return run.code, run.err


def _plan_with_candidate_rate(tmp_path: Path, rate: str) -> tuple[int, str]:
    """``plan`` of docs/plan-example.csv row 1 with asic-own's measured output rate set to ``rate``."""
    return _plan_changed(tmp_path, ("asic-own,own,16,0.5,10000,,250,200,", f"asic-own,own,16,0.5,10000,,250,{rate},"))


def test_a_candidate_with_a_vanishing_rate_is_no_internal_error(tmp_path: Path) -> None:
    # 1e-308 token/s (> 0, once accepted) underflowed a derived rate to 0 and the planner divided by it (exit 3):
    # a rate under a thousandth of a token per second is refused by name
    code, err = _plan_with_candidate_rate(tmp_path, "1e-308")
    assert code == 2 and "output_tokens_per_s_per_accelerator: must be >= 0.001 and <= 1e12, got 1e-308" in err, err


def test_a_vanishing_prefill_rate_is_no_internal_error(tmp_path: Path) -> None:
    code, err = _plan_changed(tmp_path, ("gpu-own,own,8,1.25,25000,,2500,", "gpu-own,own,8,1.25,25000,,1e-308,"),
                              ("worked-plan,2000,", "worked-plan,1.5,"))
    assert code == 2 and "input_tokens_per_s_per_accelerator: must be >= 0.001" in err, err
    # the least rate allowed plans (a pool's bound on systems is the fleet's, not 1e16: no false infeasibility)
    code, err = _plan_changed(tmp_path, ("gpu-own,own,8,1.25,25000,,2500,", "gpu-own,own,8,1.25,25000,,0.001,"),
                              ("worked-plan,2000,", "worked-plan,1.5,"))
    assert code == 0, err


def test_a_useless_candidate_leaves_a_feasible_plan_feasible(tmp_path: Path) -> None:
    # at 1e-15 token/s (now refused) the pool's bound on systems was 1e16 and the MILP came out infeasible; at the
    # least rate allowed the useless candidate is left out and the plan is the one without it
    code, err = _plan_with_candidate_rate(tmp_path, "0.001")
    assert code == 0, err


@pytest.mark.parametrize("value", ["1_000", "\u0663"])
def test_sweep_options_are_read_as_every_number(value: str) -> None:
    run = fuzz_common.run_in_process(["sweep", str(DOCS / "uncertainty-example.csv"), "--row", "1", "--samples",
                                      value, "--local"])
    assert run.code == 2, run.err


def test_an_empty_errors_path_is_refused_as_an_empty_output_is(tmp_path: Path) -> None:
    run = fuzz_common.run_in_process(["evaluate", str(DOCS / "example.csv"), "-o", str(tmp_path / "out.csv"),
                                      "--errors", ""])
    assert run.code == 2, run.err


def test_a_grid_value_that_is_not_whole_is_named_once() -> None:
    run = fuzz_common.run_in_process(["sweep", str(DOCS / "example.csv"), "--row", "1", "--grid",
                                      "accelerator_count=1:2:3", "--local"])
    assert run.code == 2 and run.err.count("got") == 1, run.err


@pytest.mark.slow
def test_an_unreachable_scheduler_is_refused_within_10_s() -> None:
    run = fuzz_common.run_subprocess(["sweep", str(DOCS / "example.csv"), "--row", "1", "--grid", "pue=1.1:1.5:3",
                                      "--scheduler", "tcp://127.0.0.1:1"], timeout=120)
    # refused once the scheduler's own timeout has passed (economics.studies.sweep.SCHEDULER_TIMEOUT_S, not
    # distributed's 30 s): the message says which
    assert run.code == 2 and "after 5 s" in run.err, run.err


HEAVY_HANG_S = 600.0
"""A heavy case still running after this is stopped and counted a hang. The bench's bounds (90 s for a Dask case,
120 s in-process, 60 s for the SIGTERM case's temporary file) are a few times each case's time on an idle machine
(5-12 s; the late refusal's 17 s of CPU when its first block held 930,000 rows) and were crossed with nothing wrong
at a load of 20 on 2 cores (the CI failures of this test); a hang is still caught, and the test still never asserts a
time."""


@pytest.mark.slow
def test_the_heavy_cases_have_no_failure(tmp_path: Path) -> None:
    # what the quick slice leaves out: a sweep on a Dask cluster, a run refused after its first 8 MB block (of 9 MB)
    # and one stopped by SIGTERM over an existing file (a million rows); each case runs once (the bench runs a slow
    # case again to count slowness, which this test does not count) and is a hang only after HEAVY_HANG_S
    commands, outputs = sys.modules["fuzz_commands"], sys.modules["fuzz_outputs"]
    stage = fuzz_common.Stage("heavy")
    cluster = [dataclasses.replace(c, timeout=HEAVY_HANG_S) for c in commands.fixed_sweep_cases()
               if c.subprocess and "--scheduler" not in c.argv]
    for case in cluster:
        found, _ = commands.run_case(stage, case, tmp_path, again_if_slow=False)
        assert "exit 0" in found, stage.failures
    with outputs.case_folder(tmp_path, "late") as d:
        late = outputs.Command(("evaluate", str(outputs._midway_file(tmp_path))), 2, errors=True)
        outputs.run_output_case(stage, late, ("regular", "regular"), d, large=True, timeout=HEAVY_HANG_S)
    with outputs.case_folder(tmp_path, "term") as d:
        outputs.run_terminated(stage, tmp_path, d, wait_s=HEAVY_HANG_S)
    # a cluster's start takes 4 s on an idle 2-core machine and over 10 s on a busy one: timed by the bench only
    failed = {o: n for o, n in stage.failed().items() if o != "slow >10 s"}
    assert failed == {}, "\n".join(f.text("heavy") for f in stage.failures)
    assert stage.counts["exit 143"] == 1


def test_a_long_setting_is_refused_whole() -> None:
    # found by the links stage: read_settings cut a value at 2,000 characters and read what was left (ui/links.py)
    # '5', 2,100 spaces and 'x' is not a number: the link names it and keeps the default, as a scenario field does
    settings, warnings = sys.modules["fuzz_links"].ui_links.read_settings({"pue_high": "5" + " " * 2100 + "x"})
    assert settings["pue_high"] is None and any(w.startswith("settings.pue_high:") for w in warnings), warnings


def test_a_link_value_dropped_for_a_combination_is_named() -> None:
    # found by the links stage: decode_checked dropped every value of the link when a new problem's field was not
    # one of them, naming none
    # the per-user decode speed makes a problem of decode_concurrent_users_per_replica (not in the link): every
    # value is dropped, and grid_carbon_g_per_kwh, valid and unrelated, is named nowhere
    from economics.studies.links import decode_checked

    found, warnings = decode_checked({"grid_carbon_g_per_kwh": "2",
                                      "decode_measured_output_tokens_per_s_per_user": "1000000"})
    assert "grid_carbon_g_per_kwh" in found or any("grid_carbon_g_per_kwh" in w for w in warnings), warnings


def test_a_reproducer_shows_what_a_compressed_input_holds() -> None:
    import gzip

    assert fuzz_common.excerpt(gzip.compress(b"name\r\na\x1b[31m\r\n")) == "gzip of: name\\na\\x1b[31m\\n"
    assert fuzz_common.command_line(["explain", "f.csv", "--row", "a\x1b]0;t\x07"]) == (
        "python -m economics explain f.csv --row 'a\\x1b]0;t\\x07'")
