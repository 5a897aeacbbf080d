"""The fuzz bench's ``signals`` stage (a module of ``bench/fuzz.py``; running it on its own does nothing).

Ctrl-C and SIGTERM at start-up: ``python -m economics evaluate docs/example.csv -o OUT`` and ``sweep
docs/example.csv --row 1 --grid pue=1.1:1.5:3 --local`` (its worker processes) each in a session of its own, sent
SIGINT or SIGTERM (to the process, or to its whole session as a terminal's Ctrl-C reaches the foreground group) at
a random point: at once, or once the process exists or has opened its input, then after a random delay up to
1.5 s. Each case costs a process start (a second or more): the stage runs few. The stage's first two cases are
fixed (:data:`FIXED`): SIGINT to the process and SIGTERM to the session, each sent as soon as
:mod:`economics.__main__` has set its handlers (``/proc/<pid>/status``'s ``SigCgt`` holds SIGTERM, which Python's
start-up leaves to the default) and while the command's modules still load, so that even a few cases on a slow
host reach both exit 130 and exit 143 (random moments alone gave a slice with no exit 130).

Checks: exit 130 (SIGINT) or 143 (SIGTERM), or 0 when the command finished first (``mismatch`` for another of
these, ``exit other`` for a death by the signal itself); at most one line on standard error (``mismatch``) and no
``Traceback`` (``traceback``); no ``*.partial`` file left (``partial left``); the output file either absent or
byte for byte the one an undisturbed run writes (``output incomplete``); no process of the command's session left
once it has exited (``child left``: ``/proc/*/stat``'s session id, 2 s allowed for them to go; they are then
killed, as the session is the case's own).

A signal that lands while the interpreter itself starts (``site``, ``runpy``: the first tens of milliseconds, before
any module of the package runs and so before :mod:`economics.__main__` can set its handlers) gets Python's default
``KeyboardInterrupt`` traceback. No code of ours can run earlier under ``python -m``, so such a case is counted as
``signal in Python's start-up`` (:func:`before_our_code`), not as ``traceback`` or ``mismatch`` (its exit 1 is
Python's own, allowed for it alone: :func:`startup_counted`); a heavily loaded machine widens that window (seen at a
load of 13).
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from fuzz_common import ROOT, Run, Stage, run_in_process, stage_rng

DOCS = ROOT / "docs"
LATEST_S = 1.5
"""The latest a signal is sent, after the process started (or opened its input)."""
CHILDREN_GRACE_S = 2.0


def commands(tmp: Path) -> list[tuple[list[str], Path | None]]:
    """(argv, output file or None) of each command the stage interrupts."""
    return [(["evaluate", str(DOCS / "example.csv"), "-o", str(tmp / "out.csv")], tmp / "out.csv"),
            (["sweep", str(DOCS / "example.csv"), "--row", "1", "--grid", "pue=1.1:1.5:3", "--local"], None)]


def session_members(sid: int) -> list[int]:
    """The processes whose session id is ``sid`` (``/proc/<pid>/stat``'s sixth field, after the name's ``)``)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError):
            stat = Path(f"/proc/{entry}/stat").read_text()
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[3]) == sid and fields[0] != "Z":
                found.append(int(entry))
    return found


def has_opened(pid: int, path: Path) -> bool:
    """Whether process ``pid`` holds ``path`` open (it has begun to read its input)."""
    with contextlib.suppress(OSError):
        fds = Path(f"/proc/{pid}/fd")
        return any(os.readlink(fds / fd) == str(path) for fd in os.listdir(fds))
    return False


HANDLERS_SET = "handlers set"
FIXED: list[tuple[str, int, bool]] = [("evaluate", signal.SIGINT, False), ("sweep", signal.SIGTERM, True)]
"""The stage's first cases: (command, signal, to the whole session), each sent at :data:`HANDLERS_SET`."""


def catches(pid: int, signum: int) -> bool:
    """Whether process ``pid`` has a handler for ``signum`` (``/proc/<pid>/status``'s ``SigCgt`` mask, bit
    ``signum - 1``).

    >>> catches(os.getpid(), signal.SIGINT)  # Python's start-up sets its own handler for SIGINT
    True
    """
    with contextlib.suppress(OSError, ValueError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("SigCgt:"):
                return bool(int(line.split()[1], 16) >> (signum - 1) & 1)
    return False


def wait_for(proc: subprocess.Popen[bytes], rng: random.Random, moment: str | None = None) -> str:
    """Wait for the case's moment to signal (``moment``, or one drawn); returns what was waited for."""
    moment = moment or rng.choice(["at once", "started", "input opened"])
    start = time.perf_counter()
    if moment == HANDLERS_SET:
        # SIGTERM is caught only once economics.__main__ has run its first lines (Python leaves it to the default)
        while proc.poll() is None and time.perf_counter() - start < 30 and not catches(proc.pid, signal.SIGTERM):
            time.sleep(0.001)
        return moment
    if moment == "input opened":
        while proc.poll() is None and time.perf_counter() - start < 30 and not has_opened(proc.pid,
                                                                                        DOCS / "example.csv"):
            time.sleep(0.005)
    elif moment == "started":
        while proc.poll() is None and not Path(f"/proc/{proc.pid}/stat").exists():
            time.sleep(0.001)
    if moment != "at once":
        delay = rng.uniform(0, LATEST_S)
        time.sleep(delay)
        moment += f", then {delay:.2f} s"
    return moment


def reap_session(sid: int) -> list[int]:
    """The session's processes still there after :data:`CHILDREN_GRACE_S`, then killed (the case's own session)."""
    deadline = time.perf_counter() + CHILDREN_GRACE_S
    left = session_members(sid)
    while left and time.perf_counter() < deadline:
        time.sleep(0.05)
        left = session_members(sid)
    if left:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(sid, signal.SIGKILL)
    return left


def reference_outputs(tmp: Path) -> dict[str, bytes]:
    """What an undisturbed run writes to each command's output file (run once, in-process)."""
    done = {}
    for argv, out in commands(tmp):
        if out is not None:
            run = run_in_process(argv)
            assert run.code == 0, run.err
            done[argv[0]] = out.read_bytes()
            out.unlink()
    return done


def signal_case(stage: Stage, rng: random.Random, tmp: Path, expected: dict[str, bytes]) -> None:
    """One command started, signalled at a random point (or a :data:`FIXED` case's), and checked (module
    docstring)."""
    folder = tmp / f"case{stage.cases}"
    folder.mkdir()
    moment: str | None = None
    if stage.cases < len(FIXED):
        name, signum, whole_session = FIXED[stage.cases]
        argv, out = next(c for c in commands(folder) if c[0][0] == name)
        moment = HANDLERS_SET
    else:
        argv, out = rng.choice(commands(folder))
        signum = rng.choice([signal.SIGINT, signal.SIGTERM])
        whole_session = rng.random() < 0.5
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "economics", *argv], cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    moment = wait_for(proc, rng, moment)
    with contextlib.suppress(ProcessLookupError):
        if whole_session:
            os.killpg(proc.pid, signum)  # the session this case started, and only it
        else:
            proc.send_signal(signum)
    timed_out = False
    try:
        stdout, stderr = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        timed_out = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
    run = Run([*argv, f"<{signal.Signals(signum).name} to the {'session' if whole_session else 'process'} "
               f"{moment}>"], None if timed_out else proc.returncode, stdout.decode("utf-8", "replace"),
              stderr.decode("utf-8", "replace"), time.perf_counter() - start, timed_out=timed_out)
    if run.code is not None and run.code < 0:
        run.code = 128 - run.code  # killed by the signal itself: counted as the exit code a shell shows
        run.err += f"\n(killed by signal {-proc.returncode})"
    extra = checks(run, folder, out, expected, reap_session(proc.pid))
    allowed, extra = startup_counted(run, signum, extra)
    stage.record(run, allowed, {}, extra)


def startup_counted(run: Run, signum: int, extra: list[tuple[str, str]]) -> tuple[
        tuple[int, ...], list[tuple[str, str]]]:
    r"""The exit codes allowed and the stage's own findings to record for a case. A signal in Python's
    start-up is counted under its own name, not as our traceback or a mismatch: no line of the package had run, so
    no handler of ours could have been set (module docstring), and Python ends such a run with exit 1 (its own
    uncaught ``KeyboardInterrupt``), which is allowed for it alone. ``run.err`` is replaced by a note saying so.

    >>> run = Run(["evaluate"], 1, "", "Traceback (most recent call last):\nKeyboardInterrupt\n", 0.1)
    >>> allowed, extra = startup_counted(run, signal.SIGINT, [("mismatch", "2 lines")])
    >>> allowed, [o for o, _ in extra]
    ((0, 130, 1), ["signal in Python's start-up"])
    """
    allowed: tuple[int, ...] = (0, 130 if signum == signal.SIGINT else 143)
    if not before_our_code(run.err):
        return allowed, extra
    run.err = "(Python's own start-up traceback: KeyboardInterrupt before the package was imported)"
    return (*allowed, 1), [("signal in Python's start-up", "KeyboardInterrupt in the interpreter's own "
                                                                 "imports")] + [f for f in extra if f[0] != "mismatch"]


OUR_FRAME = re.compile(r'File "[^"]*/economics/[^"]*"')


def before_our_code(err: str) -> bool:
    r"""Whether standard error is Python's own traceback of a signal during the interpreter's start-up (``site``,
    ``runpy``), before any module of the package ran: a ``KeyboardInterrupt`` with no frame under ``economics/``.

    >>> before_our_code('Traceback (most recent call last):\n  File "<frozen runpy>", line 189\nKeyboardInterrupt')
    True
    >>> before_our_code('Traceback (most recent call last):\n  File "/x/economics/cli.py", line 1\nKeyboardInterrupt')
    False
    """
    lines = [line.strip() for line in err.splitlines()]
    return ("Traceback (most recent call last):" in lines and "KeyboardInterrupt" in lines
            and OUR_FRAME.search(err) is None)


def checks(run: Run, folder: Path, out: Path | None, expected: dict[str, bytes], left: list[int]) -> list[
        tuple[str, str]]:
    """The stage's own failures of one case (module docstring)."""
    found = []
    lines = run.err.strip().splitlines()
    if len(lines) > 1:
        found.append(("mismatch", f"{len(lines)} lines on stderr, not one: {run.err[-300:]}"))
    partial = [p.name for p in folder.iterdir() if p.name.endswith(".partial")]
    if partial:
        found.append(("partial left", ", ".join(partial)))
    if out is not None and out.exists() and out.read_bytes() != expected[run.argv[0]]:
        found.append(("output incomplete", f"{out.stat().st_size:,} bytes, {len(expected[run.argv[0]]):,} expected"
                                           f" (exit {run.code})"))
    if left:
        found.append(("child left", f"processes {left} of the session after it exited"))
    return found


def signal_stage(cases: int, seed: int, tmp: Path, quick: bool = False) -> Stage:
    """The signals stage: ``cases`` commands each started and signalled once (``quick`` unused: every case is a
    process start)."""
    rng, stage = stage_rng(seed, "signals"), Stage("signals")
    expected = reference_outputs(tmp)
    while stage.cases < cases:
        signal_case(stage, rng, tmp, expected)
    return stage
