"""The fuzz bench's ``outputs`` stage (a module of ``bench/fuzz.py``; running it on its own does nothing).

Every command that writes a file (``evaluate -o`` and ``--errors``, ``compare``, ``retrofit``, ``plan`` and
``import-benchmark -o``), on inputs whose exit code is known (0, or 1 for a file with an invalid row), is pointed
at an output of one kind: a new file, an existing regular or read-only file, a folder, a path ending in ``/``, a
file in a missing folder or below a file, a FIFO (drained by a reader thread that holds the FIFO open for reading
and writing, so neither side can block), a symlink to a file, to nothing, to a folder, to a FIFO or to itself,
``/dev/null``, a socket, a 300-character name, the empty string, ``-``; ``-o X --errors X`` through the same
path, a symlink, a FIFO or ``/dev/null``; and one of the command's own inputs (copied into the case folder first)
spelled as given, as ``./name``, absolute, through a symlink or a hard link (each refused). Two runs stop half-way
over an existing file: one refused past the first 8 MB block of a large input (a byte that is not UTF-8), and one
stopped by SIGTERM (in a process of its own) once its temporary file exists: the old file must stay as it was,
with no temporary file left (exit 2, and 143).

Each case's folder is listed before and after (``lstat`` of every entry, the bytes of regular files, symlink
targets), and counted:

- ``output replaced``: anything but a regular file changed identity (a folder, FIFO, socket, symlink or
  ``/dev/null`` replaced, a link re-pointed), or a regular file changed by a run that was refused;
- ``partial left``: a new ``*.partial`` or hidden file after the run;
- ``mismatch``: an exit code other than the kind's (2 for what must be refused before any work, a read-only file
  and an input among them; the input's own 0 or 1 for what can be written), or a run that succeeded without writing
  its target.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import random
import select
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from fuzz_common import HANG_S, ROOT, Run, Stage, run_in_process, stage_rng

from economics.io.reading import CHUNK_BYTES

DOCS = ROOT / "docs"
OLD = b"old contents\n"
WRITABLE, REFUSED = "writable", "refused"


@dataclass(frozen=True)
class Command:
    """A command that writes ``-o`` (and, for evaluate, ``--errors``), on an input with a known exit code."""

    argv: tuple[str, ...]
    code: int
    errors: bool = False


def _invalid_rows_file(tmp: Path) -> Path:
    """docs/example.csv plus a row refused for its PUE: evaluate writes the valid row and exits 1."""
    lines = [ln for ln in (DOCS / "example.csv").read_text().splitlines() if ln and not ln.startswith("#")]
    header = lines[0].split(",")
    bad = lines[1].split(",")
    bad[header.index("name")], bad[header.index("pue")] = "bad-pue", "0.5"
    path = tmp / "invalid.csv"
    path.write_text("\n".join([*lines, ",".join(bad)]) + "\n")
    return path


HEADER = b"name,accelerator_count,output_tokens_per_s_per_accelerator\n"
WIDE_ROW = b"r" * 92 + b",8,1000\n"
"""A valid row of 100 bytes (a 92-letter name), about a typical scenario file's width: a block
(:data:`economics.io.reading.CHUNK_BYTES`, 8 MB) holds 84,000 of them. Rows of 9 bytes (``r,8,1000``) made a block
of 930,000 rows, each evaluated and written before the case reached its point (17 s of CPU for the late refusal)."""


def _midway_file(tmp: Path) -> Path:
    """A file refused past its first block: 9 MB of good rows (the first block whole, and part of the second), then a
    byte that is not UTF-8, so evaluate has written the first block to its temporary file when it exits 2.
    """
    path = tmp / "late-refusal.csv"
    with path.open("wb") as f:
        f.write(HEADER)
        f.write(WIDE_ROW * (CHUNK_BYTES * 9 // 8 // len(WIDE_ROW)))
        f.write(b"caf\xe9,8,1000\n")
    return path


def commands(tmp: Path) -> list[Command]:
    """The commands the stage points at its outputs."""
    bench = ROOT / "tests" / "fixtures" / "benchmarks" / "vllm_serve.json"
    example = str(DOCS / "example.csv")
    return [
        Command(("evaluate", example), 0, errors=True),
        Command(("evaluate", str(_invalid_rows_file(tmp))), 1, errors=True),
        Command(("evaluate", example, "--format", "parquet"), 0, errors=True),
        Command(("evaluate", example, "--format", "json"), 0, errors=True),
        Command(("compare", example, "--row", "1"), 0),
        Command(("retrofit", str(DOCS / "retrofit-example.csv"), "--row", "1"), 0),
        Command(("retrofit", str(DOCS / "retrofit-example.csv"), "--row", "1", "--explain"), 0),
        Command(("plan", str(DOCS / "plan-example.csv"), "--row", "1", "--candidates",
                 str(DOCS / "plan-candidates.csv"), "--format", "csv"), 0),
        Command(("import-benchmark", str(bench), "--accelerator", "h100-sxm", "--accelerators", "8", "--precision",
                 "bf16"), 0),
    ]


class FifoReader:
    """Drains a FIFO in a thread. The FIFO is opened for reading and writing, which never blocks, so a writer's
    open never waits for a reader and a command that refuses the FIFO leaves nothing hanging.
    """

    def __init__(self, path: Path) -> None:
        self.fd = os.open(path, os.O_RDWR | os.O_NONBLOCK)
        self.data = bytearray()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._drain, daemon=True)
        self.thread.start()

    def _drain(self) -> None:
        while True:
            ready, _, _ = select.select([self.fd], [], [], 0.05)
            if ready:
                with contextlib.suppress(BlockingIOError):
                    self.data += os.read(self.fd, 1 << 16)
            elif self.done.is_set():  # the command has returned and the pipe is empty
                return

    def close(self) -> bytes:
        self.done.set()
        self.thread.join(timeout=10)
        os.close(self.fd)
        return bytes(self.data)


@dataclass
class Target:
    """An output path of one kind, how a command must treat it, and where its bytes end up."""

    kind: str
    path: str
    treat: str
    written: Path | None = None
    fifo: FifoReader | None = None


def _file(d: Path, name: str, mode: int = 0o644) -> Path:
    path = d / name
    path.write_bytes(OLD)
    path.chmod(mode)
    return path


def _fifo(d: Path, name: str) -> tuple[Path, FifoReader]:
    path = d / name
    os.mkfifo(path)
    return path, FifoReader(path)


def make_target(kind: str, d: Path, holders: list[socket.socket]) -> Target:
    """Create an output of ``kind`` in the case folder ``d``."""
    if kind == "new":
        return Target(kind, str(d / "new.csv"), WRITABLE, d / "new.csv")
    if kind in ("regular", "readonly"):
        path = _file(d, f"{kind}.csv", 0o644 if kind == "regular" else 0o444)
        return Target(kind, str(path), WRITABLE if kind == "regular" else REFUSED, path)
    if kind == "fifo":
        path, reader = _fifo(d, "out.fifo")
        return Target(kind, str(path), WRITABLE, fifo=reader)
    if kind.startswith("symlink"):
        return _symlink(kind, d)
    if kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(d / "out.sock"))
        holders.append(sock)
        return Target(kind, str(d / "out.sock"), REFUSED)
    paths: dict[str, Callable[[], str]] = {
        "devnull": lambda: os.devnull, "dash": lambda: "-", "empty": lambda: "",
        "dir": lambda: str(_mkdir(d / "folder")), "dir-slash": lambda: str(d / "nothing") + "/",
        "missing-dir": lambda: str(d / "missing" / "out.csv"),
        "below-file": lambda: str(_file(d, "plain.csv")) + "/out.csv",
        "long-name": lambda: str(d / ("x" * 300 + ".csv"))}
    return Target(kind, paths[kind](), WRITABLE if kind in ("devnull", "dash") else REFUSED)


def _mkdir(path: Path) -> Path:
    path.mkdir()
    return path


def _symlink(kind: str, d: Path) -> Target:
    link = d / "link.csv"
    if kind == "symlink":
        target = _file(d, "target.csv")
        link.symlink_to(target)
        return Target(kind, str(link), WRITABLE, target)
    if kind == "symlink-dangling":
        link.symlink_to(d / "absent.csv")
        return Target(kind, str(link), WRITABLE, d / "absent.csv")
    if kind == "symlink-dir":
        link.symlink_to(_mkdir(d / "linked-folder"))
        return Target(kind, str(link), REFUSED)
    if kind == "symlink-fifo":
        path, reader = _fifo(d, "linked.fifo")
        link.symlink_to(path)
        return Target(kind, str(link), WRITABLE, fifo=reader)
    link.symlink_to(d / "loop.csv")  # symlink-loop: link.csv -> loop.csv -> link.csv
    (d / "loop.csv").symlink_to(link)
    return Target(kind, str(link), REFUSED)


KINDS = ["new", "regular", "readonly", "fifo", "symlink", "symlink-dangling", "symlink-dir", "symlink-fifo",
         "symlink-loop", "devnull", "dash", "empty", "dir", "dir-slash", "missing-dir", "below-file", "long-name",
         "socket"]
SAME = ["same-file", "same-link", "same-fifo", "same-devnull"]
"""``-o X --errors X`` through one path: refused, except for ``/dev/null``, which any number of outputs may share."""
SELF = ["self-given", "self-dot", "self-absolute", "self-symlink", "self-hardlink"]
"""``-o`` at one of the command's own inputs (a copy in the case folder), spelled one way: refused."""


def snapshot(d: Path) -> dict[str, tuple[int, int, str]]:
    """Every entry below ``d``: (file type bits, inode, bytes' hash or link target)."""
    found: dict[str, tuple[int, int, str]] = {}
    for root, dirs, files in os.walk(d):
        for name in [*dirs, *files]:
            path = os.path.join(root, name)
            st = os.lstat(path)
            kind = stat.S_IFMT(st.st_mode)
            detail = os.readlink(path) if stat.S_ISLNK(st.st_mode) else hashlib.sha256(
                Path(path).read_bytes()).hexdigest() if stat.S_ISREG(st.st_mode) else ""
            found[os.path.relpath(path, d)] = (kind, st.st_ino, detail)
    return found


def changes(before: dict[str, tuple[int, int, str]], after: dict[str, tuple[int, int, str]], refused: bool,
            devnull: tuple[int, int, int]) -> list[tuple[str, str]]:
    """The stage's findings from two listings of a case folder (and ``/dev/null``'s identity before)."""
    found = []
    for name, (kind, ino, detail) in before.items():
        now = after.get(name)
        regular = kind == stat.S_IFREG
        if not regular and (now is None or now[:2] != (kind, ino) or now[2] != detail):
            found.append(("output replaced", f"{name}: {stat.filemode(kind)} {'gone' if now is None else 'changed'}"))
        elif regular and refused and now is not None and now[2] != detail:
            found.append(("output replaced", f"{name}: a regular file changed by a refused run"))
    for name in after.keys() - before.keys():
        if name.endswith(".partial") or os.path.basename(name).startswith("."):
            found.append(("partial left", name))
    st = os.stat(os.devnull)
    if (stat.S_IFMT(st.st_mode), st.st_ino, st.st_rdev) != devnull:
        found.append(("output replaced", "/dev/null is no longer the null device"))
    return found


def _null_identity() -> tuple[int, int, int]:
    st = os.stat(os.devnull)
    return stat.S_IFMT(st.st_mode), st.st_ino, st.st_rdev


def _same_targets(kind: str, d: Path, holders: list[socket.socket]) -> tuple[Target, Target]:
    """Two options naming one output: ``-o X --errors X`` through a path, a symlink, a FIFO or /dev/null."""
    if kind == "same-file":
        path = _file(d, "shared.csv")
        return Target(kind, str(path), REFUSED), Target(kind, str(path), REFUSED)
    if kind == "same-link":
        path = _file(d, "shared.csv")
        (d / "alias.csv").symlink_to(path)
        return Target(kind, str(path), REFUSED), Target(kind, str(d / "alias.csv"), REFUSED)
    if kind == "same-fifo":
        fifo = make_target("fifo", d, holders)
        return Target(kind, fifo.path, REFUSED, fifo=fifo.fifo), Target(kind, fifo.path, REFUSED)
    return Target(kind, os.devnull, WRITABLE), Target(kind, os.devnull, WRITABLE)


def _self_target(kind: str, command: Command, d: Path, rng: random.Random) -> tuple[Command, Target]:
    """The command with its input files copied into ``d`` (the copies read instead), and ``-o`` at one of them
    spelled as ``kind`` says; the case runs in ``d``, so a relative name is resolved there.
    """
    argv = list(command.argv)
    inputs = [i for i, a in enumerate(argv) if i > 0 and Path(a).is_file()]
    for i in inputs:
        copy = d / f"in{i}{Path(argv[i]).suffix}"
        shutil.copyfile(argv[i], copy)
        argv[i] = str(copy)
    victim = Path(argv[rng.choice(inputs)])
    if kind == "self-symlink":
        (d / "alias").symlink_to(victim.name)
        path = str(d / "alias")
    elif kind == "self-hardlink":
        os.link(victim, d / "hard")
        path = str(d / "hard")
    else:
        path = {"self-given": str(victim), "self-dot": f"{d}/./{victim.name}",
                "self-absolute": str(victim.resolve())}[kind]
    return Command(tuple(argv), command.code, command.errors), Target(kind, path, REFUSED)


def expected_codes(code: int, targets: list[Target]) -> tuple[int, ...]:
    """The exit codes a run may give: 2 when one target must be refused, else the input's own code."""
    return (2,) if any(t.treat == REFUSED for t in targets) else (code,)


def written_check(targets: list[Target], exit_code: int | None, data: dict[str, bytes]) -> list[tuple[str, str]]:
    """A run that succeeded must have written each writable target (a file, a symlink's target, a FIFO)."""
    if exit_code not in (0, 1):
        return []
    found = []
    for t in targets:
        if t.written is not None:
            body = t.written.read_bytes() if t.written.is_file() else b""
            if not body or body == OLD:
                found.append(("mismatch", f"{t.kind}: exit {exit_code} but {t.written.name} was not written"))
        if t.fifo is not None and t.treat == WRITABLE and not data.get(t.path):
            found.append(("mismatch", f"{t.kind}: exit {exit_code} but nothing reached the FIFO"))
    return found


@contextlib.contextmanager
def case_folder(tmp: Path, n: int | str) -> Iterator[Path]:
    """A fresh folder for one case, removed after (read-only entries made writable first)."""
    d = tmp / f"case{n}"
    d.mkdir()
    try:
        yield d
    finally:
        for root, dirs, files in os.walk(d):
            for name in dirs + files:
                with contextlib.suppress(OSError):
                    if not os.path.islink(os.path.join(root, name)):
                        os.chmod(os.path.join(root, name), 0o755)
        shutil.rmtree(d, ignore_errors=True)


def run_output_case(stage: Stage, command: Command, kinds: tuple[str, ...], d: Path, large: bool = False,
                    rng: random.Random | None = None, timeout: float = HANG_S) -> None:
    """One command with ``-o`` (and maybe ``--errors``) at outputs of the given kinds, checked as the module says;
    still running after ``timeout`` seconds, it is stopped and counted a hang.
    """
    holders: list[socket.socket] = []
    if kinds[0] in SELF:
        command, target = _self_target(kinds[0], command, d, rng or random.Random(0))
        targets = [target]
    elif kinds[0] in SAME:
        targets = list(_same_targets(kinds[0], d, holders))
    else:  # each in a folder of its own, so two outputs of one kind are two paths
        targets = [make_target(kind, _mkdir(d / f"o{i}"), holders) for i, kind in enumerate(kinds)]
        if kinds == ("dash", "dash"):  # both on standard output: the same output, refused
            targets = [Target("dash", "-", REFUSED), Target("dash", "-", REFUSED)]
    options = [a for t, opt in zip(targets, ("-o", "--errors"), strict=False) for a in (opt, t.path)]
    argv = [*command.argv, *options]
    before, null = snapshot(d), _null_identity()
    run = run_in_process(argv, timeout=timeout)
    data = {t.path: t.fifo.close() for t in targets if t.fifo is not None}
    for sock in holders:
        sock.close()
    extra = changes(before, snapshot(d), run.code == 2, null) + written_check(targets, run.code, data)
    stage.record(run, expected_codes(command.code, targets), {}, extra, large)


def _big_file(tmp: Path) -> Path:
    """1,000,000 valid rows (100 MB, a dozen blocks): an evaluate long enough to be stopped while it writes; its
    temporary file appears once the first block is evaluated."""
    path = tmp / "big.csv"
    with path.open("wb") as f:
        f.write(HEADER)
        f.write(WIDE_ROW * 1_000_000)
    return path


def run_terminated(stage: Stage, tmp: Path, d: Path, wait_s: float = 60.0) -> None:
    """SIGTERM to ``evaluate`` (a process of its own) once its temporary file exists beside an existing output:
    exit 143, one line on stderr, the old file as it was and no temporary file left. The signal goes after
    ``wait_s`` seconds without a temporary file too, and a process still running ``wait_s / 2`` seconds after it
    (its watchdog ends it after :data:`economics.io.interrupts.GRACE_S`) is killed: its exit code is then not 143.
    """
    target = _file(d, "out.csv")
    argv = ["evaluate", str(_big_file(tmp)), "-o", str(target)]
    before, null = snapshot(d), _null_identity()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "economics", *argv], cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    while proc.poll() is None and time.perf_counter() - start < wait_s and not any(
            n.endswith(".partial") for n in os.listdir(d)):
        time.sleep(0.02)
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        out, err = proc.communicate(timeout=wait_s / 2)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the session this function started
        out, err = proc.communicate()
    run = Run(argv, proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"),
              time.perf_counter() - start)
    extra = changes(before, snapshot(d), True, null)
    if len(run.err.strip().splitlines()) != 1:
        extra.append(("mismatch", f"SIGTERM: {len(run.err.strip().splitlines())} lines on stderr, not one"))
    stage.record(run, (143,), {}, extra, large=True)


def output_stage(cases: int, seed: int, tmp: Path, quick: bool = False) -> Stage:
    """The outputs stage: every kind once with evaluate, the same-output cases, (unless ``quick``) a run refused
    after its first block (9 MB) and one stopped by SIGTERM (a million rows), then random commands and kinds,
    ``cases`` in all.
    """
    rng, stage = stage_rng(seed, "outputs"), Stage("outputs")
    cmds = commands(tmp)
    fixed: list[tuple[Command, tuple[str, ...]]] = [(cmds[0], (k,)) for k in KINDS]
    fixed += [(cmds[0], (k,)) for k in SAME]
    fixed += [(c, (k,)) for c, k in zip(cmds[4:], SELF * 2, strict=False)]  # every other command, each spelling
    for n, (command, kinds) in enumerate(fixed[:cases]):
        with case_folder(tmp, n) as d:
            run_output_case(stage, command, kinds, d, rng=rng)
    if not quick and stage.cases < cases:
        with case_folder(tmp, "late") as d:
            run_output_case(stage, Command(("evaluate", str(_midway_file(tmp))), 2, errors=True),
                            ("regular", "regular"), d, large=True)
        with case_folder(tmp, "term") as d:
            run_terminated(stage, tmp, d)
    while stage.cases < cases:
        command, kinds = _drawn(rng, cmds)
        with case_folder(tmp, stage.cases) as d:
            run_output_case(stage, command, kinds, d, rng=rng)
    return stage


def _drawn(rng: random.Random, cmds: list[Command]) -> tuple[Command, tuple[str, ...]]:
    command = rng.choice(cmds)
    if rng.random() < 0.15:
        return command, (rng.choice(SELF),)
    if command.errors and rng.random() < 0.15:
        return command, (rng.choice(SAME),)
    if command.errors and rng.random() < 0.5:
        return command, (rng.choice(KINDS), rng.choice(KINDS))
    return command, (rng.choice(KINDS),)

