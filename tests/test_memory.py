"""The server's memory between runs (ui/memory.py, .streamlit/config.toml): what the first run leaves alive is
frozen once, and Streamlit's collection after every run stays on."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_first_run_freezes_what_it_leaves_alive_and_later_runs_freeze_nothing() -> None:
    # a fresh interpreter (the freeze is once per process): after the first call the permanent generation holds the
    # objects alive then; a second call, after 1,000 new lists, leaves it as it was (they stay collectable)
    code = ("import gc; from ui import memory; before = gc.get_freeze_count(); memory.freeze_once(); "
            "first = gc.get_freeze_count(); kept = [[] for _ in range(1000)]; memory.freeze_once(); "
            "print(before, first, gc.get_freeze_count())")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    before, first, second = map(int, out.stdout.split())
    assert before == 0 and first > 1000 and second == first, out.stdout


def test_streamlit_collects_after_every_run() -> None:
    # off, Python's own collector did that work inside the next run, between an edit and its KPI (docs/speed.md)
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["runner"]["postScriptGC"] is True
