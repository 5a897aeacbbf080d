"""``python -m economics`` (and the ``token-economics`` command, :func:`run`): see :mod:`economics.cli`.

Ctrl-C and SIGTERM are handled from the first instruction: while the command's modules load (about a second of
pandas, scipy and the engine), either ends the process at once with one line and the shell's exit code (130, 143),
never a traceback of the imports; the command itself then unwinds as :mod:`economics.io.interrupts` describes.
Nothing is imported before the handlers are set but what Python's start-up has already loaded (``_signal``, the C
module under ``signal``, whose own import builds enums for about 7 ms; the package ``economics`` loads its names on
first use), so this module sets them as it is imported, before it imports the command line.

Python's cyclic garbage collector is off while the command's modules load, and what they made is then frozen
(:func:`gc.freeze`): those modules live as long as the process, yet each full collection walked them all, twice while
they loaded and again as the interpreter ends (``python -m economics plan`` on the Plan page's example: 0.11-0.14 s
of collections in the imports, and the interpreter's end about 0.2 s, nearly all collections; the whole command
0.2-0.4 s less CPU, docs/speed.md "Planner speed", branch ``fresh4``). Only when this import loads the command line
(a fresh process): the few objects the imports leave unreachable (about a thousand) stay, as the modules do.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # `signal`'s C module, loaded by Python's start-up
import os
import sys
from types import FrameType

EXIT_CODES: dict[int, int] = {_signal.SIGINT: 130, _signal.SIGTERM: 143}
WORDS: dict[int, bytes] = {_signal.SIGINT: b"interrupted\n", _signal.SIGTERM: b"terminated\n"}


def _end_now(signum: int, frame: FrameType | None) -> None:
    """A signal before the command runs: nothing is written yet, so end at once with its one line."""
    os.write(2, WORDS.get(signum, b"interrupted\n"))
    os._exit(EXIT_CODES.get(signum, 130))


def _set(handler: object) -> dict[int, object]:
    """Each of SIGINT and SIGTERM to ``handler`` (one ignored, as ``nohup`` or a shell's ``&`` leave SIGINT, stays
    ignored); the handlers before, or none outside the main thread (run by ``runpy`` from a test's worker).
    """
    previous: dict[int, object] = {}
    for sig in EXIT_CODES:
        try:
            if _signal.getsignal(sig) is not _signal.SIG_IGN:
                previous[sig] = _signal.signal(sig, handler)
        except ValueError:
            return previous
    return previous


_PREVIOUS = _set(_end_now)

import gc  # noqa: E402 - after the handlers (a built-in module, not loaded by Python's start-up)
import signal  # noqa: E402 - after the handlers: it builds its enums (about 7 ms, a window a Ctrl-C could land in)

_LOADING = "economics.cli" not in sys.modules and gc.isenabled()  # a fresh process: the modules load now
if _LOADING:
    gc.disable()  # no collection walks the modules while they load (see the module docstring)

from economics.cli import main  # noqa: E402 - the heavy imports, after the handlers

if _LOADING:
    gc.freeze()  # the modules' objects leave every later collection, the interpreter's last ones included
    gc.enable()

# the command unwinds on Ctrl-C (its partial output removed); SIGTERM keeps _end_now until the command's own handler
# takes it (economics.io.interrupts.interruptible), so a SIGTERM before that still says one line
if signal.SIGINT in _PREVIOUS:
    signal.signal(signal.SIGINT, _PREVIOUS[signal.SIGINT])  # type: ignore[arg-type]


def run(argv: list[str] | None = None) -> int:
    """Run the command line (:func:`economics.cli.main`, the signals handled since this module was imported); the
    exit code. SIGTERM's handler before this module is back once it returns.
    """
    try:
        return main(argv)
    finally:
        if signal.SIGTERM in _PREVIOUS:
            signal.signal(signal.SIGTERM, _PREVIOUS[signal.SIGTERM])  # type: ignore[arg-type]


if __name__ == "__main__":
    sys.exit(run())
