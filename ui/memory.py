"""The server's memory between runs: what the first run leaves alive is frozen, so the collections after later runs
walk only what those runs create.

Streamlit runs a full garbage collection after every script run (``runner.postScriptGC``): that frees a run's cyclic
garbage before the next edit (without it, Python's own collector does that work inside the next run, between the edit
and its KPI: the Cost page's edit went from 1.25-1.63x to 2.08-2.13x the Streamlit floor). A full collection walks
every tracked object, and after the first run that is mostly the modules, catalogs and caches, which stay alive for the
process's life (45 % of the server's CPU under load, py-spy); :func:`gc.freeze` moves them to the permanent
generation, which collections skip.
"""

from __future__ import annotations

import gc

_frozen = False


def freeze_once() -> None:
    """After the process's first run: collect its garbage, then freeze what is left (once per process)."""
    global _frozen
    if not _frozen:
        _frozen = True
        gc.collect()
        gc.freeze()
