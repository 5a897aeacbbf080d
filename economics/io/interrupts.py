"""Ctrl-C and SIGTERM end a command with one line, its partial output removed, and the shell's exit code
(128 + the signal: 130, 143), never a traceback.

In the main thread SIGINT raises :class:`KeyboardInterrupt` and SIGTERM :class:`Terminated`, so the command unwinds
(its writer removes its temporary file) and the CLI says one line (:func:`unwound`). A run can also be blocked where
Python cannot raise: in Arrow's reader waiting for a pipe that sends nothing. Python's C-level handler still writes
the signal's number to a wake-up pipe (:func:`signal.set_wakeup_fd`); a watchdog thread reads it and, if the main
thread has not unwound within :data:`GRACE_S`, removes the partial outputs itself, says the line and exits. Once the
main thread has unwound, the process is given :data:`GRACE_S` to end: a library's thread still blocked on such a pipe
would hold the interpreter's exit for as long as the pipe stays open, so the process then ends without it. A signal
whose exception Python cannot raise where it lands (a garbage collector callback) is sent again, never printed.

:func:`libraries_quiet` keeps the libraries' own output (warnings, Dask's logs) off the terminal meanwhile.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator

from economics.io import output_paths

GRACE_S = 2.0
"""Seconds the main thread has to unwind after a signal before the watchdog ends the process itself."""


RESEND_S = 0.01
"""Seconds after a signal's exception was lost (:func:`_unraisable`) that the signal is sent again."""


EXIT_CODES: dict[int, int] = {signal.SIGINT: 130, signal.SIGTERM: 143}
WORDS: dict[int, str] = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}
WATCHDOG = "signal watchdog"
"""The watchdog thread's name: it waits on its pipe holding no lock (the API's fork of its fork server allows it)."""
_UNWOUND = threading.Event()
_HANDLING = threading.Event()
"""Set while :func:`interruptible` has the signals (the main thread of a real run, not a test calling the CLI)."""
_SAY = threading.Lock()
_SAID = threading.Event()
"""Set once the line is said since :func:`interruptible` began (set under :data:`_SAY`): the main thread
(:func:`unwound`) and the watchdog (:func:`_watch`) may both reach it when the unwinding takes :data:`GRACE_S`."""


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that the run unwinds as on Ctrl-C (partial outputs removed)."""


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated


def _signal_of(kind: type[BaseException]) -> int:
    """The signal whose handler raised an exception of this kind (:class:`Terminated` or KeyboardInterrupt)."""
    return signal.SIGTERM if issubclass(kind, Terminated) else signal.SIGINT


def _unraisable(previous: Callable[[sys.UnraisableHookArgs], object]) -> Callable[[sys.UnraisableHookArgs], None]:
    """A hook for exceptions Python cannot raise (in a garbage collector callback, a ``__del__``) that keeps a
    signal's exception off the terminal and sends the signal again; anything else goes to ``previous``.

    A signal's handler runs wherever the main thread is: inside Dask's garbage collector callback
    (``distributed.gc``), :class:`Terminated` was printed as "Exception ignored in" with its traceback and the run went
    on until the watchdog ended it. Sent again, the signal's handler runs once the callback has returned, and the run
    unwinds as from anywhere else (the watchdog still ends it if the handler lands in such a place every time).
    """
    def hook(unraisable: sys.UnraisableHookArgs) -> None:
        if not issubclass(unraisable.exc_type, (Terminated, KeyboardInterrupt)):
            previous(unraisable)
            return
        sig = _signal_of(unraisable.exc_type)
        # from another thread, a moment later: sent from here (or marked pending), its handler would run in this
        # hook as soon as it returned from the call, as it ran in the callback
        resend = threading.Timer(RESEND_S, signal.pthread_kill, (threading.main_thread().ident, sig))
        resend.daemon = True
        resend.start()
    return hook


def unwound(exc: BaseException, say: Callable[[str], None]) -> int:
    """The main thread's end after a signal: partial outputs removed, one line, the exit code."""
    _UNWOUND.set()
    sig = _signal_of(type(exc))
    _say_once(sig, say)
    if _HANDLING.is_set():
        threading.Thread(target=_end_after_grace, args=(EXIT_CODES[sig],), name="exit guard", daemon=True).start()
    return EXIT_CODES[sig]


def _end_after_grace(code: int) -> None:
    """End the process if it has not ended :data:`GRACE_S` after the main thread unwound (a daemon thread: a normal
    exit ends it first).
    """
    time.sleep(GRACE_S)
    _exit_now(code)


def _exit_now(code: int) -> None:
    """End the process at once, its output flushed and the child processes it started (a sweep's Dask workers)
    killed and reaped first: ``os._exit`` alone would leave them running.
    """
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    with contextlib.suppress(Exception):
        children = multiprocessing.active_children()
        for child in children:
            child.kill()
        for child in children:
            child.join(timeout=GRACE_S)
    os._exit(code)


def _line(sig: int, removed: int) -> str:
    return WORDS[sig] + ("; the partial output was removed" if removed else "")


def _say_once(sig: int, say: Callable[[str], None]) -> None:
    """The partial outputs removed and the one line said, unless the other thread did it already. The line is said
    under the lock, so a thread that finds it said returns only once it is out (the process may end right after).
    """
    with _SAY:
        if not _SAID.is_set():
            _SAID.set()
            say(_line(sig, output_paths.remove_partials()))


@contextlib.contextmanager
def interruptible(say: Callable[[str], None]) -> Iterator[None]:
    """SIGTERM raises :class:`Terminated` while the block runs, and the watchdog stands by; both undone after.
    Outside the main thread (a test calling the CLI from a worker) signals cannot be set: the block just runs.
    """
    output_paths.start_counting()
    with _SAY:
        _SAID.clear()
    try:
        previous = signal.signal(signal.SIGTERM, _raise_terminated)
    except ValueError:
        yield
        return
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    old_fd = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    old_hook, sys.unraisablehook = sys.unraisablehook, _unraisable(sys.unraisablehook)
    _UNWOUND.clear()
    _HANDLING.set()
    watchdog = threading.Thread(target=_watch, args=(read_fd, say), name=WATCHDOG, daemon=True)
    watchdog.start()
    interrupted = False
    try:
        yield
    except (Terminated, KeyboardInterrupt):
        interrupted = True
        raise
    finally:
        sys.unraisablehook = old_hook
        signal.set_wakeup_fd(old_fd)
        signal.signal(signal.SIGTERM, previous)
        if not interrupted:  # interrupted, the watchdog stands by until unwound() has said its line: the unwinding
            # itself can block (a reader closed while its thread waits on a pipe that sends nothing)
            _UNWOUND.set()
            _HANDLING.clear()  # interrupted, it stays set: unwound() then guards the process's end
            os.close(write_fd)  # the watchdog's read returns: it ends
            watchdog.join()
            os.close(read_fd)


def _watch(read_fd: int, say: Callable[[str], None]) -> None:
    """Wait for a signal's byte on the wake-up pipe; end the process if the main thread does not unwind."""
    while True:
        data = os.read(read_fd, 1)
        if not data or _UNWOUND.is_set():
            return
        sig = data[0]
        if sig not in EXIT_CODES or _UNWOUND.wait(GRACE_S):
            continue
        _say_once(sig, say)  # the main thread may reach unwound() meanwhile: one line either way
        _exit_now(EXIT_CODES[sig])


@contextlib.contextmanager
def libraries_quiet() -> Iterator[None]:
    """While a command runs, the libraries' own output stays off the user's terminal: Python warnings (numpy's
    RuntimeWarning with its file path, pandas' FutureWarning) are not shown, and Dask's loggers report nothing below
    CRITICAL (a worker's failure is the command's one error line, not a logged traceback). Restored after.
    """
    loggers = [logging.getLogger(name) for name in ("distributed", "dask")]
    levels = [lg.level for lg in loggers]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lg in loggers:
            lg.setLevel(logging.CRITICAL)
        try:
            yield
        finally:
            for lg, level in zip(loggers, levels, strict=True):
                lg.setLevel(level)
