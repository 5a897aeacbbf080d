"""Where a command's output goes: checked before any work starts, and written so that only a regular file (or
nothing) is ever replaced.

* ``-`` is standard output.
* A FIFO or a character device (``/dev/null``, a terminal) is written in place, streaming, never replaced.
* A symlink is followed: the file it points to is written, the link stays.
* A regular file or a missing one is written to a temporary file beside it (same folder, so the rename is atomic)
  and renamed over it only when the command succeeds; the file keeps its permissions (a new one gets the umask's).
  A file the user could not write with ``>`` is refused, and so is a file with no write permission for anyone
  (``chmod a-w``), which root could write: a read-only file is one its owner meant to keep.
* An output is never one of the command's own inputs: :func:`check_all` compares each output with every file the
  command reads (the same file however it is named: a relative path, a symlink, a hard link) and refuses before
  any work, naming both.
  A failed or interrupted run removes its temporary file (:func:`remove_partials`, called by the CLI on SIGINT
  and SIGTERM).
* A folder, a socket or a block device is refused (:class:`~economics.schema.validation.InputError`, exit 2), as is a
  folder that does not exist.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import IO

from economics.io import terminal
from economics.schema.validation import InputError
from economics.schema.values import shown, shown_path


class OutputFormat(StrEnum):
    """Every format a command or a route gives its answer in: the one list. A command's ``--format`` and a route's
    ``format`` take the members of one of the subsets below (each a :class:`StrEnum` of its own, so that OpenAPI
    names it once), each member spelled as here; ``pdf`` is the report's answer and taken by no option.

    >>> [f.value for f in OutputFormat], TableFormat("parquet") == OutputFormat.PARQUET
    (['json', 'csv', 'parquet', 'text', 'markdown', 'pdf'], True)
    """

    JSON = "json"
    CSV = "csv"
    PARQUET = "parquet"
    TEXT = "text"
    MARKDOWN = "markdown"
    PDF = "pdf"


class TableFormat(StrEnum):
    """A table of scenarios or results as a file: ``evaluate``'s ``--format`` and ``--input-format``, the API's
    ``format`` of ``POST /v1/evaluate``.
    """

    JSON = OutputFormat.JSON.value
    CSV = OutputFormat.CSV.value
    PARQUET = OutputFormat.PARQUET.value


class RecordFormat(StrEnum):
    """A study's answer: JSON, or its table as CSV (the row commands', ``plan``'s and ``store show``'s ``--format``,
    the API's studies' ``format``).
    """

    JSON = OutputFormat.JSON.value
    CSV = OutputFormat.CSV.value


class ExplainFormat(StrEnum):
    """A derivation: JSON, or text for people (the API's ``format`` of ``POST /v1/explain``)."""

    JSON = OutputFormat.JSON.value
    TEXT = OutputFormat.TEXT.value


class FieldsFormat(StrEnum):
    """The fields' reference: JSON, or the docs' Markdown tables (the API's ``format`` of ``GET /v1/fields``)."""

    JSON = OutputFormat.JSON.value
    MARKDOWN = OutputFormat.MARKDOWN.value


FORMAT_CHOICES: tuple[type[StrEnum], ...] = (TableFormat, RecordFormat, ExplainFormat, FieldsFormat)
"""The subsets of :class:`OutputFormat` an option or a parameter takes (tests/test_one_rule.py holds each to it)."""

_PARTIALS: set[str] = set()
"""Temporary files being written: removed by :func:`remove_partials` when a run is interrupted."""
_DISCARDED: list[str] = []
"""Temporary files removed because their run failed, since :func:`remove_partials` last counted them."""


@dataclass(frozen=True)
class Target:
    """An output checked by :func:`check_output`: what the user gave, the path written, how it is written."""

    given: str
    path: str
    in_place: bool
    mode: int


STDOUT = Target("-", "-", True, 0)


def check_output(given: str, option: str = "-o") -> Target:
    """The output ``given`` for ``option``, or :class:`InputError` naming the option and the path.

    >>> check_output("-").in_place
    True
    >>> check_output("/dev/null").in_place
    True
    >>> check_output("/")
    Traceback (most recent call last):
    ...
    economics.schema.validation.InputError: cannot write -o '/': is a folder; name a file to write
    """
    if given == "-":
        return STDOUT
    if given == "" or "\x00" in given:
        raise InputError(f"cannot write {option} '{shown_path(given)}': not a file name")
    path = os.path.realpath(given)  # a symlink is followed: its target is written, the link stays
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise InputError(f"cannot write {option} '{shown_path(given)}': {exc.strerror or exc}") from None
    if st is None:
        return _new_file(given, path, option)
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"cannot write {option} '{shown_path(given)}': is a folder; name a file to write")
    if stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode):
        return Target(given, path, True, 0)
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"cannot write {option} '{shown_path(given)}': is not a regular file, a pipe or a device; "
                         "not replaced")
    if not _writable(path, st):
        raise InputError(f"cannot write {option} '{shown_path(given)}': the file is read-only "
                         f"(mode {stat.S_IMODE(st.st_mode):04o}); not replaced")
    return Target(given, path, False, stat.S_IMODE(st.st_mode))


def _writable(path: str, st: os.stat_result) -> bool:
    """Whether a regular file may be replaced: the user could write it with ``>``, and it has a write bit for
    someone. Root passes the first test for every file, so for root the second is what keeps a ``chmod a-w`` file.
    """
    return bool(st.st_mode & 0o222) and os.access(path, os.W_OK)


def _new_file(given: str, path: str, option: str) -> Target:
    """A path that does not exist yet: its folder must."""
    if given.endswith(("/", os.sep)):
        raise InputError(f"cannot write {option} '{shown_path(given)}': names a folder; name a file to write")
    folder = os.path.dirname(path) or "."
    if not os.path.isdir(folder):
        folder_given = shown(os.path.dirname(given) or ".")
        raise InputError(f"cannot write {option} '{shown_path(given)}': the folder '{folder_given}' does not exist")
    umask = os.umask(0)
    os.umask(umask)
    return Target(given, path, False, 0o666 & ~umask)


def check_all(given: Mapping[str, object], inputs: Mapping[str, object] | None = None) -> dict[str, Target]:
    """Every output a command will write (option -> what was given; None: not given, and an empty name is refused
    as for ``-o ''``), checked before any work: no two naming the same file, and none naming one of ``inputs``
    (option -> a path or a list of paths the command reads; None and ``-`` are skipped).
    """
    targets = {option: check_output(value, option) for option, value in given.items() if isinstance(value, str)}
    check_distinct(targets)
    check_not_inputs(targets, inputs or {})
    return targets


def _identity(path: str) -> tuple[int, int] | None:
    """(device, inode) of the file ``path`` names, symlinks followed (``-``: the regular file standard input was
    redirected from, as ``< a.csv`` does); None when it cannot be found.
    """
    try:
        if path == "-":
            st = os.fstat(sys.stdin.fileno())
            return (st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None
        st = os.stat(path)
    except (OSError, ValueError, AttributeError):  # no standard input at all (closed, or replaced by a test)
        return None
    return st.st_dev, st.st_ino


def check_not_inputs(targets: Mapping[str, Target], inputs: Mapping[str, object]) -> None:
    """Refuse an output that is one of the command's inputs (``evaluate a.csv -o a.csv`` would replace the
    scenarios with their results), however either is spelled: compared by device and inode, so ``./a.csv``, a
    symlink or a hard link to it are the same file. A character device (``/dev/null``) may be both.

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile(suffix=".csv") as f:
    ...     check_not_inputs({"-o": check_output(f.name)}, {"input": f.name})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    economics.schema.validation.InputError: cannot write -o '...': it is the input file '...' this command reads; ...
    """
    read: dict[tuple[int, int], tuple[str, str]] = {}
    for option, value in inputs.items():
        for path in [value] if isinstance(value, str) else value if isinstance(value, list | tuple) else []:
            ident = _identity(path) if isinstance(path, str) and path != "" else None
            if ident is not None:
                read.setdefault(ident, (option, path))
    for option, target in targets.items():
        if target is STDOUT or _is_device(target.path):
            continue
        ident = _identity(target.path)
        if ident in read:
            name, path = read[ident]
            what = ("the file standard input comes from" if path == "-" else
                    f"the {name} file '{shown_path(path)}' this command reads")
            raise InputError(f"cannot write {option} '{shown_path(target.given)}': it is {what}; name another file")


def _is_device(path: str) -> bool:
    try:
        return stat.S_ISCHR(os.stat(path).st_mode)
    except OSError:
        return False


def check_distinct(targets: dict[str, Target]) -> None:
    """Refuse two options naming the same file (``-o X --errors X`` would write one over the other).

    >>> check_distinct({"-o": check_output("-"), "--errors": check_output("-")})
    Traceback (most recent call last):
    ...
    economics.schema.validation.InputError: cannot write: -o and --errors name the same output ('-'); name two
    """
    seen: dict[str, str] = {}
    for option, target in targets.items():
        if target.path in seen and target.path != os.devnull:
            raise InputError(f"cannot write: {seen[target.path]} and {option} name the same output "
                             f"('{shown(target.given)}'); name two")
        seen[target.path] = option


@contextlib.contextmanager
def opened(target: Target) -> Iterator[IO[bytes]]:
    """A binary file to write ``target`` through: in place for a pipe or a device, else a temporary file beside
    it renamed over it when the block ends without an exception (removed otherwise).
    """
    if target.in_place:
        with _open_in_place(target) as f:
            yield f
        return
    tmp = start_partial(target)
    try:
        with open(tmp, "wb") as f:
            yield f
    except BaseException:
        discard_partial(tmp)
        raise
    finish_partial(target, tmp)


def _open_in_place(target: Target) -> IO[bytes]:
    try:
        return open(target.path, "wb")  # noqa: SIM115 (closed by the caller's with block)
    except OSError as exc:
        raise InputError(f"cannot write '{shown(target.given)}': {exc.strerror or exc}") from None


def start_partial(target: Target) -> str:
    """Create the temporary file beside ``target`` (a hidden name in the same folder) and return its path."""
    folder, name = os.path.split(target.path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{name[:100]}.", suffix=".partial", dir=folder or ".")
    except OSError as exc:
        raise InputError(f"cannot write '{shown(target.given)}': {exc.strerror or exc}") from None
    os.close(fd)
    _PARTIALS.add(tmp)
    return tmp


def finish_partial(target: Target, tmp: str) -> None:
    """Rename the finished temporary file over ``target``, which must still be a regular file or missing."""
    try:
        st = os.stat(target.path)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        discard_partial(tmp)
        raise InputError(f"cannot write '{shown(target.given)}': it is no longer a regular file; not replaced")
    try:
        os.chmod(tmp, target.mode)
        os.replace(tmp, target.path)
    except OSError as exc:
        discard_partial(tmp)
        raise InputError(f"cannot write '{shown(target.given)}': {exc.strerror or exc}") from None
    _PARTIALS.discard(tmp)


def discard_partial(tmp: str) -> None:
    """Remove a temporary file of a run that failed (gone already: nothing to do)."""
    if tmp in _PARTIALS:
        _PARTIALS.discard(tmp)
        _DISCARDED.append(tmp)
    with contextlib.suppress(FileNotFoundError):
        os.remove(tmp)


def start_counting() -> None:
    """Forget the temporary files removed so far: :func:`remove_partials` counts those of the run starting now."""
    _DISCARDED.clear()


def remove_partials() -> int:
    """Remove every temporary file still being written (an interrupted run); returns how many were removed, by
    this call or by the writers as the run unwound.
    """
    for tmp in list(_PARTIALS):
        discard_partial(tmp)
    count = len(_DISCARDED)
    _DISCARDED.clear()
    return count


def write_text(given: str, text: str, option: str = "-o") -> None:
    """``text`` (UTF-8) to standard output for ``-``, else to the output ``given`` for ``option``, as above."""
    if given == "-":
        terminal.data(text)  # escaped on a terminal, exact to a pipe
        return
    write_bytes(given, text.encode("utf-8"), option)


def write_bytes(given: str, data: bytes, option: str = "-o") -> None:
    """``data`` to the output ``given`` for ``option`` (a file, a pipe or a device, as above; ``-``: standard output
    when it is not a terminal, where binary data would garble the screen).
    """
    if given == "-":
        if terminal.is_terminal(sys.stdout):
            raise InputError(f"{option} -: standard output is a terminal; name a file to write")
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    try:
        with opened(check_output(given, option)) as f:
            f.write(data)
    except OSError as exc:
        raise InputError(f"cannot write {option} '{shown_path(given)}': {exc.strerror or type(exc).__name__}") from None
