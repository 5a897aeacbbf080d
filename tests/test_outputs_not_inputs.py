"""An output never replaces one of the command's own inputs, nor a read-only file (issue #44, data loss).

Every command that writes a file is pointed at each file it reads, spelled as given, as ``./name``, through a
symlink and through a hard link, and at a file standard input is redirected from: each is refused with exit 2
before any work, naming both, and the input is left byte for byte as it was. A read-only file (``chmod 444``) is
refused too, even for root, who could write it with ``>``.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from economics.cli import main

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
BENCH = ROOT / "tests" / "fixtures" / "benchmarks" / "vllm_serve.json"


@pytest.fixture()
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder holding a copy of every input the commands read (relative names are resolved in it)."""
    for name, source in {"a.csv": DOCS / "example.csv", "p.csv": DOCS / "plan-example.csv",
                         "c.csv": DOCS / "plan-candidates.csv", "r.csv": DOCS / "retrofit-example.csv",
                         "run.json": BENCH}.items():
        shutil.copyfile(source, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def curves_file(folder: Path) -> Path:
    """A curve file made by import-benchmark from the vLLM fixture (the --curves input)."""
    assert main(["import-benchmark", "run.json", "--accelerator", "h100-sxm", "--accelerators", "8",
                 "--precision", "bf16", "-o", "cur.csv"]) == 0
    return folder / "cur.csv"


# (command before the output option, the input it must not replace)
COMMANDS: list[tuple[list[str], str]] = [
    (["evaluate", "a.csv"], "a.csv"),
    (["compare", "a.csv", "--row", "1"], "a.csv"),
    (["retrofit", "r.csv", "--row", "1"], "r.csv"),
    (["retrofit", "r.csv", "--row", "1", "--explain"], "r.csv"),
    (["plan", "p.csv", "--row", "1", "--candidates", "c.csv", "--format", "csv"], "p.csv"),
    (["plan", "p.csv", "--row", "1", "--candidates", "c.csv", "--format", "csv"], "c.csv"),
    (["report", "a.csv", "--row", "1"], "a.csv"),
    (["report", "p.csv", "--row", "1", "--kind", "plan", "--candidates", "c.csv"], "c.csv"),
    (["import-benchmark", "run.json", "--accelerator", "h100-sxm", "--accelerators", "8", "--precision", "bf16"],
     "run.json"),
]

SPELLINGS: dict[str, Callable[[Path, str], str]] = {
    "as given": lambda d, name: name,
    "dot slash": lambda d, name: f"./{name}",
    "absolute": lambda d, name: str(d / name),
    "symlink": lambda d, name: (os.symlink(name, d / "link"), "link")[1],
    "hard link": lambda d, name: (os.link(d / name, d / "hard"), "hard")[1],
}


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize(("argv", "victim"), COMMANDS, ids=lambda v: v[0] if isinstance(v, list) else v)
def test_an_output_naming_an_input_is_refused_before_any_work(folder: Path, capsys: pytest.CaptureFixture[str],
                                                             argv: list[str], victim: str, spelling: str) -> None:
    before = (folder / victim).read_bytes()
    output = SPELLINGS[spelling](folder, victim)
    assert main([*argv, "-o", output]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: cannot write -o '{output}': it is the ") and "this command reads" in err, err
    assert (folder / victim).read_bytes() == before
    assert not [p for p in folder.iterdir() if p.name.endswith(".partial")]


def test_the_error_report_cannot_replace_the_input(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = (folder / "a.csv").read_bytes()
    assert main(["evaluate", "a.csv", "-o", "out.csv", "--errors", "./a.csv"]) == 2
    assert "cannot write --errors './a.csv': it is the input file 'a.csv' this command reads" in capsys.readouterr().err
    assert (folder / "a.csv").read_bytes() == before and not (folder / "out.csv").exists()


def test_the_curve_file_cannot_be_the_output(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    curves = curves_file(folder)
    before = curves.read_bytes()
    capsys.readouterr()
    assert main(["evaluate", "a.csv", "--curves", "cur.csv", "-o", "cur.csv"]) == 2
    assert "it is the --curves file 'cur.csv' this command reads" in capsys.readouterr().err
    assert curves.read_bytes() == before


def test_a_file_standard_input_comes_from_cannot_be_the_output(folder: Path) -> None:
    # `evaluate - -o a.csv < a.csv`: the shell opened a.csv as standard input; a separate process, as a user runs it
    before = (folder / "a.csv").read_bytes()
    with (folder / "a.csv").open("rb") as stdin:
        run = subprocess.run([sys.executable, "-m", "economics", "evaluate", "-", "-o", "a.csv"], stdin=stdin,
                             capture_output=True, text=True, cwd=folder, env={**os.environ, "PYTHONPATH": str(ROOT)},
                             timeout=120)
    assert run.returncode == 2, run.stderr
    assert run.stderr == "error: cannot write -o 'a.csv': it is the file standard input comes from; " \
                         "name another file\n"
    assert (folder / "a.csv").read_bytes() == before


def test_another_file_is_still_written(folder: Path) -> None:
    # the refusal is about identity, not names alike: a copy of the input is a different file and is replaced
    shutil.copyfile(folder / "a.csv", folder / "copy.csv")
    assert main(["evaluate", "a.csv", "-o", "copy.csv"]) == 0
    assert (folder / "copy.csv").read_bytes().startswith(b"name,")
    assert (folder / "copy.csv").read_bytes() != (folder / "a.csv").read_bytes()


@pytest.mark.parametrize("mode", [0o444, 0o400, 0o555])
def test_a_read_only_file_is_not_replaced(folder: Path, capsys: pytest.CaptureFixture[str], mode: int) -> None:
    target = folder / "kept.csv"
    target.write_bytes(b"keep me\n")
    target.chmod(mode)
    assert main(["evaluate", "a.csv", "-o", "kept.csv"]) == 2
    assert capsys.readouterr().err == (f"error: cannot write -o 'kept.csv': the file is read-only (mode {mode:04o}); "
                                       "not replaced\n")
    assert target.read_bytes() == b"keep me\n" and stat.S_IMODE(target.stat().st_mode) == mode


def test_a_file_writable_by_its_owner_only_is_replaced(folder: Path) -> None:
    target = folder / "mine.csv"
    target.write_bytes(b"old\n")
    target.chmod(0o200)
    assert main(["evaluate", "a.csv", "-o", "mine.csv"]) == 0
    assert stat.S_IMODE(target.stat().st_mode) == 0o200
    target.chmod(0o600)
    assert target.read_bytes().startswith(b"name,")
