r"""The fuzz bench's shared machinery (a module of ``bench/fuzz.py``; running it on its own does nothing).

- the hostile-value generator every stage draws from (:func:`generated_text`, :data:`WORDS`, :data:`ESCAPES`);
- one command run, in-process through ``economics.cli.main`` (:func:`run_in_process`, standard output a pipe or a
  terminal, under a deadline) or as ``python -m economics`` in a process of its own with a timeout
  (:func:`run_subprocess`, for what needs isolation: Dask clusters, slow network timeouts);
- the checks every run gets (:func:`outcomes`) and the per-stage tally of outcomes with reproducers (:class:`Stage`).
- an evaluated row against its derivation (:func:`derivation_gaps`): what the result hides of what the engine
  computed (bench/fuzz.py's values stage and tests/test_hostile.py check with it).

The escape rule is the project's own (``economics.io.terminal``): messages on standard error and reports for people
(``explain``, ``uncertainty``, ``sweep``, ``retrofit --explain``) are always escaped; data (CSV, JSON) on standard
output is escaped when standard output is a terminal and kept exact when it is a pipe or a file. So a run counts an
*escape leak* when a raw control character reaches standard error, or standard output when that is a terminal (a
fake one, ``isatty()`` true, in-process) or the command prints a report. Raw means a character of the class
:func:`economics.schema.values.escape_controls` escapes (C0 and C1 controls, DEL, zero-width characters, bidirectional
overrides, U+2028/U+2029, the byte-order mark) other than the line break and the tab; their escaped text
(``\x1b``) is fine. Standard error is never a terminal here: on one the CLI draws its own progress line (a carriage
return and ``ESC [K``), which is not user text.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import math
import os
import random
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the worktree's package, not an installed one

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import economics  # noqa: E402
from economics.cli import main as cli_main  # noqa: E402
from economics.schema import validation_hours, validation_sessions, values  # noqa: E402
from economics.schema.outputs import NUMERIC_OUTPUTS  # noqa: E402
from economics.schema.scenario import FIELDS  # noqa: E402
from economics.schema.validation import RANGE_COLUMNS, names_nothing_held, validate  # noqa: E402
from economics.schema.values import escape_controls  # noqa: E402

TEXT_ALPHABET = ("abcxyzABCXYZ0123456789 .,;:-+_eE'\"#=@\t\r\n\x00\x01\x07\x0b\x0c\x1b\x1c\x7f\x85\xa0"
                 "\u0661\u0662\uff11\uff12\u200b\u202e\u2028é中😀")
WORDS = ["", " ", "true", "FALSE", "y", "n", "t", "f", "yes", "no", "on", "off", "1", "0", "2", "1.0", "nan", "NaN",
         "inf", "-inf", "Infinity", "1e999", "-1e999", "1_000", "1,000", "0x1A", "own", " Rent", "bf16", "FP8", "air",
         "liquid", "hybrid", "server", "rack", "wafer", "llama-3.1-8b", "Llama-3.1-8B ", "deepseek-v3", "gpt-9",
         "h100-sxm", "H100-SXM", "b200", "sn50", "h100-sx", "=1+1", "@SUM(1)", "-1", "+1", ".5", "5.", "1e-320",
         "1e308", "9" * 30, "0." + "0" * 98 + "1", "1" * 101, "\u0661\u0662", "\uff11\uff12", "1\u00a0", "\u200b1",
         "\x1c1\x1c", "\t2\t", "#3", "<script>alert(1)</script>", "x" * 201, "x" * 100_000, "a\x1b[31mb"]
ESCAPES = ["\x1b]0;title\x07", "\x1b[31m", "\x9b2J", "\u200b", "\u202e", "\x1b[2J\x1b[H", "\r", "\x08", "\x7f",
           "\u2028", "\ufeff", "\x1bP+q\x1b\\"]
"""Sequences a terminal would obey (title, colour, C1 CSI, clear screen, device control) or that hide or reorder
text (zero-width space, right-to-left override, carriage return, backspace)."""

SLOW_S = 10.0
"""A case slower than this is counted "slow >10 s" (the issue's bound for every command)."""
HANG_S = 120.0
"""A case still running after this is stopped and counted "hang"."""

LEAK = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069\ufeff]")
"""What :func:`economics.schema.values.escape_controls` escapes, less the line break and the tab (see the docstring)."""
REPORT_COMMANDS = frozenset({"explain", "uncertainty", "sweep"})
"""Commands whose standard output is a report for people: escaped wherever it goes (``retrofit --explain`` too)."""

FAILURES = ("exit 3", "exit other", "traceback", "escape leak", "slow >10 s", "hang", "mismatch", "output replaced",
            "partial left", "non-finite", "status 500", "status other", "bad body", "child left",
            "output incomplete")
"""Outcomes that are failures (target 0 of each); the exit codes 0, 1 and 2 are counts, not failures."""
MAX_KEPT = 50
"""Reproducers kept per stage and outcome (every failure is counted)."""


def computed_rows(result: pd.DataFrame) -> np.ndarray:
    """The positions of the rows of ``result`` (an evaluation's) that were computed: valid and feasible."""
    feasible = result["feasible"].to_numpy(dtype=bool, na_value=False)  # empty on a refused row
    return np.flatnonzero(result["valid"].to_numpy(dtype=bool) & feasible)


def derivation_gaps(df: pd.DataFrame, row: int, shown: pd.Series) -> list[str]:
    """What row ``row`` of ``df`` (valid and feasible), whose result in the table is ``shown``, hides of its
    derivation (:func:`economics.explain_row`, the row alone): each infinite step, and each output a step computes
    (a finite value) that the result leaves empty. The result empties an output that is not finite, so its cells
    alone cannot show an infinite one ("present cells are finite" holds whatever the engine computes); a row's result
    is also its own, whatever the other rows. Empty when nothing is hidden.
    """
    steps = economics.explain_row(df, row).steps
    gaps = [f"{s.name} is {s.value} in the derivation" for s in steps if math.isinf(s.value)]
    return gaps + sorted(f"{s.name} computed ({s.value:.6g}), shown empty" for s in steps
                         if s.name in NUMERIC_OUTPUTS and math.isfinite(s.value) and pd.isna(shown[s.name]))


def generated_text(rng: random.Random) -> str:
    """One hostile or ordinary value, drawn from several families."""
    family = rng.random()
    if family < 0.25:
        return rng.choice(WORDS)
    if family < 0.55:  # numbers as programs print them
        x = rng.choice([rng.uniform(-10, 10), rng.uniform(0, 2), 10 ** rng.uniform(-12, 20), rng.randint(-5, 10**9)])
        form = rng.choice(["{!r}", "{:g}", "{:.3f}", "{:e}", "{:.0f}", " {} ", "{:,}", "{:_}", "+{}"])
        try:
            return form.format(x)
        except ValueError:
            return repr(x)
    if family < 0.7:  # a number with one character changed
        text = list(repr(rng.uniform(0, 100)))
        text[rng.randrange(len(text))] = rng.choice(TEXT_ALPHABET)
        return "".join(text)
    if family < 0.85:  # a word in odd case and spacing
        word = rng.choice(WORDS[:48])
        word = "".join(c.upper() if rng.random() < 0.3 else c for c in word)
        return rng.choice(["", " ", "\t", "\u00a0"]) + word + rng.choice(["", " ", "\t", "\x1c"])
    return "".join(rng.choice(TEXT_ALPHABET) for _ in range(rng.randint(0, 20)))


def escaped_text(rng: random.Random, around: str = "") -> str:
    """``around`` with one to three escape sequences inside it (before, after or in the middle)."""
    picks = "".join(rng.choice(ESCAPES) for _ in range(rng.randint(1, 3)))
    cut = rng.randint(0, len(around))
    return around[:cut] + picks + around[cut:]


# --- the reference every parser is held to ---------------------------------------------------------------------


def bounds_ok(spec: Any, x: float) -> bool:
    """Whether ``x`` lies within a field's bounds (the reference's own reading of gt, ge, lt and le)."""
    return not ((spec.gt is not None and not x > spec.gt) or (spec.ge is not None and not x >= spec.ge)
                or (spec.lt is not None and not x < spec.lt) or (spec.le is not None and not x <= spec.le))


BASE_ROW = {"name": "fuzz", "accelerator_count": "8", "output_tokens_per_s_per_accelerator": "1000",
            "model": "llama-3.1-8b", "demand_output_tokens_per_day": "1e9", "existing_accelerators": "8",
            "accelerator_price_usd_low": "20000", "accelerator_price_usd_high": "45000",
            "grid_carbon_g_per_kwh": "400"}
"""The other cells of each row: valid, the range on a catalog field no input changes directly, and a grid
intensity (a carbon price needs one to price)."""

COMBINED = ("speculative_draft_tokens", "speculative_acceptance_rate", "weight_precision", "compute_precision")
"""Fields whose value a row refuses or keeps by the row's other cells: speculation needs both halves (or the stack's
half), and a weight and compute precision must be a pair the accelerator runs."""


def reference(name: str, text: str, on_a_request_row: bool = True) -> tuple[str, Any]:
    """The scalar parser plus bounds, catalog ids and length limits: what every path must agree with; and, where
    the value lands on one of the fuzz's request rows (``on_a_request_row``: a table's cell), what such a row may
    hold (a link's values and a Scenario's fields are checked one by one: their combination when evaluated).
    """
    spec = FIELDS[RANGE_COLUMNS[name][0]] if name in RANGE_COLUMNS else FIELDS[name]
    try:
        value = values.parse(spec, text)
    except values.ValueProblem:
        return ("bad", None)
    if value is values.EMPTY:
        return normal(spec.default if not spec.optional and name not in RANGE_COLUMNS else None)
    if spec.kind.numeric and not bounds_ok(spec, float(value)):
        return ("bad", None)
    if spec.max_length and isinstance(value, str) and len(value) > spec.max_length:
        return ("bad", None)
    if names_nothing_held(name, value):
        return ("bad", None)
    if name in validation_hours.HOURLY_FIELDS:
        value, problem = validation_hours.value_problem(name, str(value))
        if problem is not None:
            return ("bad", None)
    if on_a_request_row and not _fits_a_request_row(name, value):
        return ("bad", None)
    return normal(value)


def _fits_a_request_row(name: str, value: Any) -> bool:
    """The fuzz rows are request rows: a session-only field (validation_sessions.SESSION_ONLY) or a KV tier above 0
    is refused there by name, and workload=sessions needs the session's shape, which the row does not give; a
    field of :data:`COMBINED` is refused where the validator's rule for the pair on :data:`BASE_ROW` names it (a
    problem naming the pair's other field refuses the row, not this cell).
    """
    if name in validation_sessions.SESSION_ONLY:
        return False
    if name in {capacity for capacity, _ in validation_sessions.TIERS} | set(validation_sessions.SESSION_SPREAD):
        return float(value) <= 0
    if name in COMBINED:  # the value parsed and bounded above; the row's combination rule judges the rest
        return not any(p.field == name for p in validate(pd.DataFrame([{**BASE_ROW, name: value}]))[1])
    return not (name == "workload" and str(value) == "sessions")


def normal(value: Any) -> tuple[str, Any]:
    if value is None or value is values.EMPTY or value is pd.NA or value == "" or (
            isinstance(value, float) and math.isnan(value)):
        return ("ok", None)
    if isinstance(value, (bool, np.bool_)):
        return ("ok", bool(value))
    if isinstance(value, (int, float, np.number)):
        return ("ok", float(value))
    return ("ok", str(value))


def _empty_is_default(name: str, outcome: tuple[str, Any]) -> tuple[str, Any]:
    """Paths that leave an empty value unset (links with an optional field, dict): the default it stands for."""
    spec = FIELDS[name]
    if outcome == ("ok", None) and spec.default is not None:
        return normal(spec.default)
    return outcome


# --- one run ------------------------------------------------------------------------------------------------------


class CaseTimeout(BaseException):
    """Raised in the main thread when a case passes :data:`HANG_S`: a BaseException, so ``main()``'s last line of
    defence (``except Exception``) cannot turn it into an exit code."""


class _TerminalBytes(io.BytesIO):
    """A byte buffer that says it is a terminal: the CLI then escapes data as it would for a person."""

    def isatty(self) -> bool:
        return True


@dataclass
class Run:
    """One command's run: its arguments, exit code (None: it raised or was stopped), output and time."""

    argv: list[str]
    code: int | None
    out: str
    err: str
    seconds: float
    terminal: bool = False
    raised: str = ""
    timed_out: bool = False


@contextlib.contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    """Raise :class:`CaseTimeout` in the main thread after ``seconds`` (elsewhere no signal can be set: no guard)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expired(signum: int, frame: object) -> None:
        raise CaseTimeout

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run_in_process(argv: list[str], terminal: bool = False, timeout: float = HANG_S) -> Run:
    """``economics.cli.main(argv)`` with standard output a byte-backed text stream (a pipe, or a terminal when
    ``terminal``: the table writers use its ``buffer`` as they would a real one) and standard error a pipe.
    """
    raw = _TerminalBytes() if terminal else io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8", errors="surrogateescape", write_through=True)
    err = io.StringIO()
    code: int | None = None
    raised, timed_out = "", False
    start = time.perf_counter()
    try:
        with _deadline(timeout), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli_main(argv)
    except CaseTimeout:
        timed_out = True
    except BaseException as exc:  # noqa: BLE001 - main() must never raise; what it raised is the finding
        raised = "".join(traceback.format_exception(exc))[-1500:]
    seconds = time.perf_counter() - start
    out.flush()
    text = raw.getvalue().decode("utf-8", "replace")
    out.detach()  # the buffer outlives the wrapper
    return Run(argv, code, text, err.getvalue(), seconds, terminal, raised, timed_out)


def run_subprocess(argv: list[str], timeout: float = HANG_S) -> Run:
    """``python -m economics ARGV`` from the worktree in a session of its own (standard output and error pipes); on
    timeout the whole session (a Dask cluster's workers included) is killed and the case counted as a hang.
    """
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "economics", *argv], cwd=ROOT, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    timed_out = False
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # the session this call started, and only it
        out, err = proc.communicate()
    seconds = time.perf_counter() - start
    return Run(argv, None if timed_out else proc.returncode, out.decode("utf-8", "replace"),
               err.decode("utf-8", "replace"), seconds, timed_out=timed_out)


def run_again_if_slow(run: Run, again: Callable[[], Run]) -> tuple[Run, list[tuple[str, str]]]:
    """A run past :data:`SLOW_S` is run once more (the machine is shared: a burst of other work can stall one
    run); the second time decides. Returns the run to count and, when only the first was slow, a ``slow once``
    note with both times.
    """
    if run.seconds <= SLOW_S or run.timed_out:
        return run, []
    second = again()
    if second.seconds <= SLOW_S:
        return second, [("slow once", f"{run.seconds:.1f} s, then {second.seconds:.1f} s")]
    return second, []


# --- checks -------------------------------------------------------------------------------------------------------


def leaks(text: str) -> list[str]:
    """The raw control characters in ``text``, each as its escaped form (``\\x1b``), in order, once each."""
    return list(dict.fromkeys(escape_controls(m.group()) for m in LEAK.finditer(text)))


def stdout_is_checked(run: Run) -> bool:
    """Whether the project's rule requires this run's standard output escaped (module docstring)."""
    command = next((a for a in run.argv if not a.startswith("-")), "")
    return run.terminal or command in REPORT_COMMANDS or (command == "retrofit" and "--explain" in run.argv)


def outcomes(run: Run, allowed: Iterable[int] = (0, 1, 2)) -> list[str]:
    """The outcomes of one run: its exit code (``exit N``), then each failure it shows."""
    if run.timed_out:
        return ["hang"]
    if run.code is None:
        return ["traceback"]
    known = run.code in (0, 1, 2, 3, 130, 143)  # the documented codes; "exit 3" is itself a failure
    found = [f"exit {run.code}" if known else "exit other"]
    if "Traceback (most recent call last)" in run.err or "Traceback (most recent call last)" in run.out:
        found.append("traceback")
    if leaks(run.err) or (stdout_is_checked(run) and leaks(run.out)):
        found.append("escape leak")
    if run.seconds > SLOW_S:
        found.append("slow >10 s")
    if known and run.code != 3 and run.code not in set(allowed):  # the case knew which exit code it should get
        found.append("mismatch")
    return found


def readable(data: bytes) -> str:
    """A file's contents as text to read: a gzip stream decompressed, a Parquet file as CSV (said so), else the
    bytes as UTF-8 with the undecodable ones as ``\\xNN``.
    """
    if data[:2] == b"\x1f\x8b":
        with contextlib.suppress(OSError, EOFError):
            return "gzip of: " + gzip.decompress(data).decode("utf-8", "backslashreplace")
    if data[:4] == b"PAR1":
        import pyarrow.csv as pacsv  # noqa: PLC0415 - only for a failing Parquet input
        import pyarrow.parquet as pq  # noqa: PLC0415

        sink = io.BytesIO()
        with contextlib.suppress(Exception):  # a reproducer's rendering must not end the bench
            pacsv.write_csv(pq.read_table(io.BytesIO(data)), sink)
            return "Parquet of: " + sink.getvalue().decode("utf-8", "backslashreplace")
    return data.decode("utf-8", "backslashreplace")


def excerpt(text: str | bytes, limit: int = 400) -> str:
    """An input's start as safe text for a reproducer: readable (:func:`readable`), escaped, at most ``limit``
    characters.
    """
    if isinstance(text, bytes):
        text = readable(text)
    shown = escape_controls(text[:limit]).replace("\\x0d\\x0a", "\\n")  # a CSV's line ends, shorter
    return shown + (f"… ({len(text):,} characters)" if len(text) > limit else "")


def command_line(argv: list[str]) -> str:
    """The run as a shell command (each argument escaped and shortened, so the line is safe to print; a ``{name}``
    placeholder of a case's file shown as the file's name).
    """
    args = [excerpt(a[1:-1] if a.startswith("{") and a.endswith("}") else a, 80) for a in argv]
    return "python -m economics " + shlex.join(args)


@dataclass
class Failure:
    """One failure kept for the report: what went wrong and how to see it again."""

    outcome: str
    argv: list[str]
    inputs: dict[str, str]
    detail: str
    files: dict[str, bytes] = field(default_factory=dict)
    """The input files whole (name -> bytes), for ``--save``."""

    def save(self, folder: Path) -> None:
        """The failure's files and a ``command.sh`` running it on them (the arguments shell-quoted as given)."""
        folder.mkdir(parents=True, exist_ok=True)
        argv = list(self.argv)
        for name, data in self.files.items():
            (folder / name).write_bytes(data)
            argv = [str(folder / name) if a.endswith("/" + name) or a == f"{{{name}}}" else a for a in argv]
        (folder / "command.sh").write_text(f"# {self.outcome}: {self.detail}\n"
                                           f"python -m economics {shlex.join(argv)}\n", errors="backslashreplace")

    def text(self, stage: str) -> str:
        """The failure as report lines: the command (when there is one), its files' start, what happened."""
        files = "".join(f"\n      {name}: {body}" for name, body in self.inputs.items())
        if not self.argv:  # the values stage: its own description says what and where
            return f"[{stage}] {self.outcome}: {self.detail}"
        return f"[{stage}] {self.outcome}: {command_line(self.argv)}{files}\n      -> {self.detail}"


@dataclass
class Stage:
    """A stage's tally: cases, counts by outcome, the slowest case, and reproducers of its failures."""

    name: str
    cases: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    failures: list[Failure] = field(default_factory=list)
    seconds: float = 0.0
    slowest: float = 0.0

    def record(self, run: Run, allowed: Iterable[int] = (0, 1, 2), inputs: dict[str, str | bytes] | None = None,
               extra: Iterable[tuple[str, str]] = (), large: bool = False) -> list[str]:
        """Count one case: its run's outcomes plus ``extra`` (outcome, detail) found by the stage's own checks; a
        ``large`` input's time is real work (a million rows), so past the bound it is counted, not failed.
        """
        self.cases += 1
        self.slowest = max(self.slowest, run.seconds)
        found = [("slow, large input" if large and o == "slow >10 s" else o, _detail(run, o))
                 for o in outcomes(run, allowed)] + list(extra)
        for outcome, detail in found:
            self.counts[outcome] += 1
            if outcome in FAILURES:
                self.keep(outcome, run.argv, inputs or {}, detail)
        return [o for o, _ in found]

    def keep(self, outcome: str, argv: list[str], inputs: dict[str, str | bytes], detail: str) -> None:
        """Keep a reproducer (at most :data:`MAX_KEPT` per outcome)."""
        if sum(f.outcome == outcome for f in self.failures) < MAX_KEPT:
            whole = {k: v if isinstance(v, bytes) else v.encode("utf-8", "surrogatepass") for k, v in inputs.items()}
            self.failures.append(Failure(outcome, list(argv), {k: excerpt(v) for k, v in inputs.items()},
                                         excerpt(detail, 400), whole))

    def failed(self) -> dict[str, int]:
        """Failure outcome -> count, for the outcomes that happened."""
        return {o: self.counts[o] for o in FAILURES if self.counts[o]}

    def lines(self) -> list[str]:
        """The stage's summary line: cases, time, and every count (failure outcomes even at 0)."""
        counted = sorted((o for o in self.counts if o not in FAILURES and self.counts[o]),
                         key=lambda o: (not o.startswith("exit "), o))  # exit codes first
        fails = [f"{o} {self.counts[o]:,}" for o in FAILURES]
        return [f"{self.name}: {self.cases:,} cases in {self.seconds:.0f} s (slowest {self.slowest:.1f} s)",
                "  " + ", ".join(f"{o} {self.counts[o]:,}" for o in counted), "  failures: " + ", ".join(fails)]


def _detail(run: Run, outcome: str) -> str:
    if outcome == "escape leak":
        where = "stderr" if leaks(run.err) else "stdout" + (" (a terminal)" if run.terminal else "")
        return f"raw {', '.join(leaks(run.err) or leaks(run.out))} on {where}"
    if outcome == "slow >10 s":
        return f"{run.seconds:.1f} s"
    if outcome == "hang":
        return f"stopped after {run.seconds:.0f} s"
    if outcome == "traceback" and run.raised:
        return run.raised
    return f"exit {run.code}; stderr: {run.err[-300:]}"


def merge(stages: Iterable[Stage]) -> Stage:
    """Every stage's counts as one (the report's total line)."""
    total = Stage("total")
    for s in stages:
        total.cases += s.cases
        total.counts.update(s.counts)
        total.seconds += s.seconds
        total.slowest = max(total.slowest, s.slowest)
    return total


def stage_rng(seed: int, stage: str) -> random.Random:
    """A stage's own generator: the same seed gives the same cases whichever stages run."""
    return random.Random(f"{seed}:{stage}")


def parquet_bytes(rows: list[dict[str, Any]]) -> bytes:
    """The rows as a Parquet file of text columns (as a spreadsheet export would hold them)."""
    import pyarrow as pa  # noqa: PLC0415 - only the stages writing Parquet need it
    import pyarrow.parquet as pq  # noqa: PLC0415

    columns = list(dict.fromkeys(k for r in rows for k in r))
    table = pa.table({c: pa.array([None if r.get(c) is None else str(r.get(c)) for r in rows], pa.string())
                      for c in columns})
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()
