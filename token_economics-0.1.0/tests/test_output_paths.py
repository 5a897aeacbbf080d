"""Outputs never replace what they should not: a pipe or a device is written in place, a symlink is followed, a
folder is refused before any work, two options naming one file are refused, and an interrupted run leaves no
partial file (exit 130 on SIGINT, 143 on SIGTERM). The CLI runs in a child process where signals are involved.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path
from typing import IO

import pytest

from economics.cli import main
from economics.io.output_paths import check_output

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = str(ROOT / "docs" / "example.csv")


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    return code, capsys.readouterr().err


def reference(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> bytes:
    """The example's results written to a plain new file (what every other target must receive)."""
    out = tmp_path / "reference.csv"
    assert cli(capsys, "evaluate", EXAMPLE, "-o", str(out))[0] == 0
    return out.read_bytes()


def test_a_fifo_is_written_in_place_and_stays_a_fifo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    want = reference(tmp_path, capsys)
    fifo = tmp_path / "results.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    code, err = cli(capsys, "evaluate", EXAMPLE, "-o", str(fifo))
    reader.join(60)
    assert code == 0, err
    assert got == [want]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["reference.csv", "results.fifo"]


def test_a_symlink_is_followed_and_kept_with_its_targets_permissions(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    want = reference(tmp_path, capsys)
    real = tmp_path / "real.csv"
    real.write_text("old results\n")
    real.chmod(0o640)
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    code, err = cli(capsys, "evaluate", EXAMPLE, "-o", str(link))
    assert code == 0, err
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_bytes() == want
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]


def test_a_new_file_gets_the_umasks_permissions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the temporary file is created private (0600); the result must not stay so
    old = os.umask(0o022)
    try:
        assert cli(capsys, "evaluate", EXAMPLE, "-o", str(tmp_path / "new.csv"))[0] == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.csv").stat().st_mode) == 0o644


def test_a_device_is_written_in_place(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a terminal device of the test's own (a pseudo-terminal): the results stream into it, it stays a device, and
    # nothing is renamed over it (the old writer wrote PATH.partial beside it and renamed that over the device)
    want = reference(tmp_path, capsys)
    master, slave = os.openpty()
    device = os.ttyname(slave)
    attrs = termios.tcgetattr(slave)
    attrs[1] &= ~termios.ONLCR  # the bytes as written: no CR added before each LF
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    got = bytearray()
    reader = threading.Thread(target=lambda: _drain(master, got, len(want)))
    reader.start()
    try:
        assert check_output(device).in_place
        code, err = cli(capsys, "evaluate", EXAMPLE, "-o", device)
        reader.join(60)
        assert code == 0, err
        assert bytes(got) == want
        assert stat.S_ISCHR(os.stat(device).st_mode)
    finally:
        os.close(slave)
        os.close(master)


def _drain(fd: int, into: bytearray, size: int) -> None:
    while len(into) < size:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return
        into += chunk


@pytest.mark.parametrize(("given", "words"), [
    ("{dir}", "is a folder; name a file to write"),
    ("{dir}/", "is a folder; name a file to write"),
    ("{dir}/new/", "names a folder"),
    ("{dir}/no/such/x.csv", "the folder"),
])
@pytest.mark.parametrize("command", [["evaluate", EXAMPLE], ["compare", EXAMPLE, "--row", "worked-example"]])
def test_a_folder_is_refused_before_any_work(tmp_path: Path, capsys: pytest.CaptureFixture[str], given: str,
                                             words: str, command: list[str]) -> None:
    target = given.format(dir=tmp_path)
    code, err = cli(capsys, *command, "-o", target)
    assert code == 2
    assert err.startswith("error: cannot write -o ") and words in err, err
    assert list(tmp_path.iterdir()) == []  # nothing written, no partial file left


def test_results_and_the_error_report_cannot_name_one_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # -o X --errors X would write the error report over the results; through a symlink too
    out = tmp_path / "out.csv"
    out.write_text("kept\n")
    link = tmp_path / "link.csv"
    link.symlink_to(out)
    for errors in (out, link):
        code, err = cli(capsys, "evaluate", EXAMPLE, "-o", str(out), "--errors", str(errors))
        assert code == 2 and "-o and --errors name the same output" in err, err
        assert out.read_text() == "kept\n"


def slow_input(sink: Path | IO[str], held: threading.Event) -> None:
    """Two chunks' worth of scenario rows into ``sink`` (a FIFO's path or a child's stdin), then the pipe held open
    (the run waits for more) until ``held`` is set: the run has written part of its output and is still going."""
    rows = Path(EXAMPLE).read_text().splitlines()
    header = next(r for r in rows if r and not r.startswith("#"))
    text = "\n".join(r for r in rows if r and not r.startswith("#") and r != header) + "\n"
    f = open(sink, "w") if isinstance(sink, Path) else sink  # noqa: SIM115 - closed below
    try:
        f.write(header + "\n")
        for _ in range((20 << 20) // len(text)):
            f.write(text)
        f.flush()
        held.wait(300)
    except BrokenPipeError:  # the run ended (the test then says how)
        pass
    finally:
        with contextlib.suppress(BrokenPipeError):
            f.close()


@pytest.mark.slow
@pytest.mark.parametrize("via", ["a FIFO by its path", "standard input"])
@pytest.mark.parametrize(("sig", "code", "word"), [(signal.SIGTERM, 143, "terminated"),
                                                   (signal.SIGINT, 130, "interrupted")])
def test_an_interrupted_run_removes_its_partial_file(tmp_path: Path, sig: int, code: int, word: str,
                                                    via: str) -> None:
    # the input streams (a pipe by path, or stdin): results are being written while the run waits for more rows;
    # the signal arrives then, with the main thread blocked in the reader (the watchdog ends the run)
    out = tmp_path / "out" / "results.csv.gz"
    out.parent.mkdir()
    fifo = tmp_path / "in.csv"
    os.mkfifo(fifo)
    source = str(fifo) if via != "standard input" else "-"
    proc = subprocess.Popen([sys.executable, "-m", "economics", "evaluate", source, "-o", str(out)], cwd=ROOT,
                            stdin=subprocess.PIPE if source == "-" else None, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    held = threading.Event()
    feeder = threading.Thread(target=slow_input, args=(fifo if proc.stdin is None else proc.stdin, held),
                              daemon=True)
    feeder.start()
    try:
        for _ in range(600):  # until the first chunk's results are being written (a partial file beside the output)
            if any(p.name.endswith(".partial") for p in out.parent.iterdir()) or proc.poll() is not None:
                break
            time.sleep(0.1)
        assert any(p.name.endswith(".partial") for p in out.parent.iterdir()), "the run never started writing"
        proc.send_signal(sig)
        err = proc.communicate(timeout=120)[1]
    finally:
        held.set()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, err
    assert err.strip() == f"{word}; the partial output was removed", err
    assert list(out.parent.iterdir()) == []
