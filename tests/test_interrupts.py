"""Ctrl-C and SIGTERM, sent to a real ``python -m economics`` process: one line and the shell's exit code (130, 143)
while its modules load as much as while it runs, and an interrupted sweep leaves none of its Dask workers behind.

The tests wait for a state they read in ``/proc`` (a signal handler set, a worker started), never for a time.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from economics.io import interrupts

ROOT = Path(__file__).resolve().parent.parent
SIGNALS = [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")]
PROC = Path("/proc")
"""The kernel's view of the processes a test starts (their signal handlers, children, mappings)."""
DEADLINE_S = 300.0
"""The longest wait for a state (the machine may be shared and slow): a failure, never a measure."""


def _mask(pid: int, key: str) -> int:
    """A signal mask of ``/proc/PID/status`` (SigCgt: caught, SigIgn: ignored); 0 once the process is gone."""
    try:
        for line in (PROC / str(pid) / "status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1], 16)
    except OSError:
        pass
    return 0


def _has(mask: int, sig: int) -> bool:
    return bool(mask >> (sig - 1) & 1)


def _wait_for(ready: object, proc: subprocess.Popen[bytes]) -> None:
    """Poll ``ready()`` until it holds; fail if the process ends first or the deadline passes."""
    deadline = time.monotonic() + DEADLINE_S
    while not ready():  # type: ignore[operator]
        assert proc.poll() is None, proc.communicate()[1].decode()
        assert time.monotonic() < deadline, "the state never came"
        time.sleep(0.001)


def _descendants(pid: int) -> set[int]:
    """Every live process under ``pid`` (its children, theirs...), from each process's parent in /proc."""
    parents = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, todo = set(), [pid]
    while todo:
        pid = todo.pop()
        kids = [p for p, parent in parents.items() if parent == pid]
        found.update(kids)
        todo += kids
    return found


def _alive(pid: int) -> bool:
    """Running (or sleeping): not gone, and not a zombie waiting for its parent."""
    try:
        return (PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _cmdline(pid: int) -> str:
    try:
        return (PROC / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


@pytest.mark.parametrize(("sig", "code", "word"), SIGNALS)
def test_a_signal_while_the_modules_load_ends_the_command_with_one_line(sig: int, code: int, word: str) -> None:
    # economics/__main__.py sets its handlers first; the command's modules (pandas, scipy, the engine) take about a
    # second more. Before, a Ctrl-C then printed a 21-47-line KeyboardInterrupt traceback and exited -2
    landed_while_loading = False
    for _ in range(5):  # a signal that comes after the imports is answered the same; try for one during them
        proc = subprocess.Popen([sys.executable, "-m", "economics", "evaluate", "-"], cwd=ROOT,
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            _wait_for(lambda p=proc: _has(_mask(p.pid, "SigCgt"), signal.SIGTERM), proc)
            loading = "pandas" not in (PROC / str(proc.pid) / "maps").read_text()
            proc.send_signal(sig)
            err = proc.communicate(timeout=DEADLINE_S)[1].decode()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert (proc.returncode, err) == (code, word + "\n")
        if loading:
            landed_while_loading = True
            break
    assert landed_while_loading, "no signal reached the command while its modules loaded"


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "code", "word"), SIGNALS)
def test_an_interrupted_sweep_leaves_no_worker_behind(sig: int, code: int, word: str) -> None:
    # a sweep long enough to be running when the signal comes: 20 M scenarios on a 2-worker LocalCluster. Ctrl-C is
    # sent as a terminal sends it, to every process of the job; SIGTERM to the command only (as `kill` does)
    proc = subprocess.Popen([sys.executable, "-m", "economics", "sweep", "docs/uncertainty-example.csv", "--row",
                             "uncertain-h100", "--samples", "20000000", "--partition-rows", "200000", "--workers", "2"],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    seen: set[int] = set()

    def workers_started() -> bool:  # each worker ignores SIGINT once Dask has set it up (its preload has run)
        seen.update(_descendants(proc.pid))
        workers = [p for p in seen if "spawn_main" in _cmdline(p)]
        return len(workers) == 2 and all(_has(_mask(p, "SigIgn"), signal.SIGINT) for p in workers)

    try:
        _wait_for(workers_started, proc)
        workers = {p for p in seen if "spawn_main" in _cmdline(p)}
        if sig == signal.SIGINT:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
        err = proc.communicate(timeout=DEADLINE_S)[1].decode()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert (proc.returncode, err) == (code, word + "\n")
    assert [p for p in workers if _alive(p)] == []  # killed and reaped before the command ended
    # multiprocessing's resource tracker ends by itself once the command has (its pipe closes): poll for it
    deadline = time.monotonic() + DEADLINE_S
    while [p for p in seen if _alive(p)] and time.monotonic() < deadline:
        time.sleep(0.01)
    assert [p for p in seen if _alive(p)] == []


def test_the_line_is_said_once_when_the_watchdog_and_the_unwinding_meet() -> None:
    # the watchdog says the line after GRACE_S, and the main thread may reach unwound() at that moment (its
    # unwinding took the whole grace): whichever comes first says it and the other says nothing; a new run (a new
    # interruptible block) says its own line again
    lines: list[str] = []
    with interrupts.interruptible(lines.append):
        pass
    watchdog = threading.Thread(target=interrupts._say_once, args=(signal.SIGTERM, lines.append))
    watchdog.start()
    watchdog.join()
    assert interrupts.unwound(interrupts.Terminated(), lines.append) == 143
    assert lines == ["terminated"]
    with interrupts.interruptible(lines.append):
        pass
    assert interrupts.unwound(KeyboardInterrupt(), lines.append) == 130
    assert lines == ["terminated", "interrupted"]


IN_A_COLLECTOR_CALLBACK = """
import gc, signal, sys
from economics.io import interrupts

sent = []

def callback(phase, info):  # as Dask's distributed.gc does: the signal's handler then runs in here
    if not sent:
        sent.append(signal.SIG{name})
        signal.raise_signal(sent[0])
        for _ in range(1000):  # a backward jump: where Python runs a pending signal's handler
            pass

try:
    with interrupts.interruptible(lambda line: print(line, file=sys.stderr)):
        gc.callbacks.append(callback)
        gc.collect()
        while True:
            pass
except (interrupts.Terminated, KeyboardInterrupt) as exc:
    sys.exit(interrupts.unwound(exc, lambda line: print(line, file=sys.stderr)))
"""


@pytest.mark.parametrize(("sig", "code", "word"), SIGNALS)
def test_a_signal_inside_a_garbage_collector_callback_still_ends_the_run_with_one_line(sig: int, code: int,
                                                                                       word: str) -> None:
    # its exception cannot be raised in the callback: Python printed "Exception ignored in" and a traceback, and the
    # run went on until the watchdog ended it; now the signal is sent again and the run unwinds from where it is
    name = signal.Signals(sig).name.removeprefix("SIG")
    done = subprocess.run([sys.executable, "-c", IN_A_COLLECTOR_CALLBACK.replace("{name}", name)], cwd=ROOT,
                          capture_output=True, text=True, timeout=DEADLINE_S)
    assert (done.returncode, done.stderr) == (code, word + "\n")
