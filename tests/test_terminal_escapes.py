"""No escape sequence in user text reaches a terminal: every command runs in a real pseudo-terminal (stdout and
stderr), with control sequences in every text field, in the names it prints, in a header and in the candidate
names of a plan; the raw sequences never appear in what the terminal receives, their escaped form does.
"""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from economics.schema.scenario import FIELDS
from economics.schema.values import FieldKind

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

TITLE = "\x1b]0;PWNED\x07"   # OSC: sets the window title
COLOUR = "\x1b[31m"           # CSI: red text
C1 = "\x9b2J"                 # C1 CSI (clear screen on some terminals)
BIDI = "\u202e"               # right-to-left override: reorders what is shown
PAYLOAD = f"x{TITLE}{COLOUR}{C1}{BIDI}y"
RAW = [TITLE.encode(), COLOUR.encode(), C1.encode(), BIDI.encode()]
ESCAPED = b"x\\x1b]0;PWNED\\x07\\x1b[31m\\x9b2J\\u202ey"


def in_terminal(*args: str) -> bytes:
    """What a terminal receives from ``python -m economics ARGS`` (stdout and stderr on one pseudo-terminal)."""
    master, slave = os.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "economics", *args], cwd=ROOT, stdin=subprocess.DEVNULL,
                            stdout=slave, stderr=slave)
    os.close(slave)
    out = bytearray()
    while True:
        try:
            chunk = os.read(master, 1 << 16)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    proc.wait(timeout=600)
    os.close(master)
    return bytes(out)


def with_names(path: Path, out: Path, column: str = "name", value: str = PAYLOAD) -> Path:
    """``path`` (a scenario CSV, comments dropped) with ``column`` of every row set to ``value`` plus its row."""
    lines = [line for line in path.read_text().splitlines() if line and not line.startswith("#")]
    rows = list(csv.DictReader(io.StringIO("\n".join(lines))))
    for i, row in enumerate(rows):
        row[column] = f"{value}{i}"
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    out.write_text(buf.getvalue())
    return out


def assert_safe(got: bytes, shown: bool = True) -> None:
    for raw in RAW:
        assert raw not in got, (raw, got[-2000:])
    if shown:  # the text was printed, escaped (ours, or JSON's own \u001b)
        assert ESCAPED in got or b"\\u001b]0;PWNED" in got, got[-2000:]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("escapes")
    text_fields = [f for f, spec in FIELDS.items() if spec.kind in (FieldKind.STR, FieldKind.CHOICE) and f != "name"]
    example = with_names(DOCS / "example.csv", tmp / "example.csv")
    # every other text field holding the payload, one row each: each row is refused with a message naming the value
    base = next(csv.DictReader(io.StringIO("\n".join(
        ln for ln in (DOCS / "example.csv").read_text().splitlines() if ln and not ln.startswith("#")))))
    bad = [{**base, "name": f"bad-{f}", f: PAYLOAD} for f in text_fields]
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=sorted({k for r in bad for k in r}), lineterminator="\n")
    writer.writeheader()
    writer.writerows(bad)
    (tmp / "fields.csv").write_text(buf.getvalue())
    (tmp / "header.csv").write_text(f"name,{PAYLOAD}\na,1\n")
    return {"example": example, "fields": tmp / "fields.csv", "header": tmp / "header.csv",
            "retrofit": with_names(DOCS / "retrofit-example.csv", tmp / "retrofit.csv"),
            "uncertainty": with_names(DOCS / "uncertainty-example.csv", tmp / "uncertainty.csv"),
            "plan": with_names(DOCS / "plan-example.csv", tmp / "plan.csv"),
            "candidates": with_names(DOCS / "plan-candidates.csv", tmp / "candidates.csv")}


COMMANDS = {
    "evaluate CSV": ["evaluate", "{example}"],
    "evaluate JSON": ["evaluate", "{example}", "--format", "json"],
    "evaluate, every text field refused": ["evaluate", "{fields}"],
    "evaluate, a header": ["evaluate", "{header}"],
    "explain": ["explain", "{example}", "--row", "1"],
    "compare": ["compare", "{example}", "--row", "1"],
    "retrofit": ["retrofit", "{retrofit}", "--row", "1"],
    "retrofit --explain": ["retrofit", "{retrofit}", "--row", "1", "--explain"],
    "uncertainty": ["uncertainty", "{uncertainty}", "--row", "1", "--samples", "50"],
    "plan": ["plan", "{plan}", "--row", "1", "--candidates", "{candidates}", "--format", "csv"],
    "plan, a row name asked for": ["plan", "{plan}", "--row", PAYLOAD, "--candidates", "{candidates}"],
    "explain, a row name asked for": ["explain", "{example}", "--row", PAYLOAD],
}


NOT_PRINTING_NAMES = {"compare", "retrofit", "retrofit --explain", "uncertainty"}
"""Commands whose output holds no name (they must still hold no raw sequence)."""


@pytest.mark.slow
@pytest.mark.parametrize("name", list(COMMANDS))
def test_no_command_lets_an_escape_sequence_reach_the_terminal(files: dict[str, Path], name: str) -> None:
    args = [a.format(**{k: str(v) for k, v in files.items()}) if "{" in a else a for a in COMMANDS[name]]
    got = in_terminal(*args)
    assert b"Traceback" not in got, got[-3000:]
    assert_safe(got, shown=name not in NOT_PRINTING_NAMES)
