"""Set up in each worker process of a sweep's local cluster (Dask imports it as the workers' preload module).

A Ctrl-C at the terminal goes to every process of the job: the sweep's own process stops its workers
(:func:`economics.studies.sweep.run_dask`), so a worker ignores SIGINT rather than print a traceback of its own.
"""

from __future__ import annotations

import signal
import threading
from typing import Any


def dask_setup(worker: Any) -> None:
    """Ignore SIGINT in this worker process (Dask calls this as the worker starts)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
