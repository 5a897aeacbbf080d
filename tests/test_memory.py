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


def test_the_preload_s_objects_are_set_aside_and_their_garbage_freed_at_the_first_freeze() -> None:
    # ui.memory's preload freezes what its imports and evaluation left (the young generation would otherwise hold
    # them all, and the first collection after the preload walk them before the first KPI); freeze_once puts them
    # back before its full collection, so a cycle that was garbage at the preload's end is freed there, not kept
    code = ("import asyncio, gc, threading, weakref\nfrom ui import memory\ngc.disable()\n"
            "class Node: pass\nnode = Node(); node.me = node; dead = weakref.ref(node); del node\n"
            "async def serve():\n    async with memory.preload(None):\n        pass\n"
            "asyncio.run(serve())\nmemory.until_first_page()\n"
            "print(gc.get_freeze_count(), gc.get_count()[0], dead() is not None)\n"
            "memory.freeze_once()\nprint(dead() is None)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    frozen, young, kept = out.stdout.split("\n")[0].split()
    assert int(frozen) > 100_000 and int(young) < 10_000 and kept == "True", out.stdout
    assert out.stdout.split("\n")[1] == "True", out.stdout
