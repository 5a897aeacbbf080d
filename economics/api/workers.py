"""Bounded pools of worker processes: every computation runs in one, so a request past its time limit is stopped by
ending the process (and a fresh one takes its place), and a long plan in the study pool never holds up an evaluate.

A request reaches a worker as JSON and raw bytes over a pipe, and the answer comes back the same way: nothing is
pickled. The processes fork from a server process that holds the engine (``forkserver``), so a replacement is ready
in milliseconds, and each sets its own memory limit. That fork server is itself forked from the API process once
its imports are done (:func:`fork_the_fork_server`), so the engine is imported once at the start, not again by a
fresh interpreter.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import inspect
import json
import multiprocessing as mp
import os
import signal
import socket
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
from multiprocessing import connection, forkserver, resource_tracker
from multiprocessing.connection import Connection
from typing import Any

try:
    import resource
except ImportError:  # not on Windows: the workers run without a memory limit there
    resource = None  # type: ignore[assignment]

from economics.api import errors, tasks
from economics.api.errors import ApiError, Code
from economics.api.tasks import Answer, Request
from economics.io import interrupts
from economics.io.output_paths import OutputFormat

PRELOAD = ["economics.api.tasks"]
"""Imported by a fork server started the usual way (a fresh interpreter), so each worker starts with the engine
loaded; a fork server forked from this process (:func:`fork_the_fork_server`) has it already."""
FORKSERVER_MAIN = ("listener_fd", "alive_r", "preload", "main_path", "sys_path")
"""The parameters of :func:`multiprocessing.forkserver.main` this module knows how to call (Python 3.11 and 3.12)."""


def fork_the_fork_server() -> bool:
    """Start this process's fork server by forking it from this process, which has imported the engine: the
    workers then fork from a copy of it, where a fork server started by :mod:`multiprocessing` is a fresh
    interpreter that imports the engine again (:data:`PRELOAD`), about as long as the API process's own imports,
    before the pools can start and ``/v1/health`` answer.

    Only while this process has no other thread but the CLI's signal watchdog (a fork copies no other thread, and
    so could copy a lock one of them held; the watchdog waits on its pipe holding none) and with a
    :func:`multiprocessing.forkserver.main` of the known signature; otherwise it returns
    False and :mod:`multiprocessing` starts its own as before. The child keeps only the fork server's socket, its
    pipe and the standard streams (the server's other files and sockets are closed, as in a fresh interpreter),
    and sees none of this process's objects collected (:func:`gc.freeze`: a copied socket's finalizer could close
    a descriptor the child reused); in this process the collector is left as it was (all or nothing: what
    :mod:`economics.__main__` froze stays frozen, with what came since). When the fork fails it leaves nothing
    behind (no descriptor or socket file) and returns False, as above. Returns whether it forked.
    """
    server: Any = forkserver._forkserver
    others = [t for t in threading.enumerate() if t is not threading.current_thread()]
    known = tuple(inspect.signature(forkserver.main).parameters) == FORKSERVER_MAIN
    if not known or any(t.name != interrupts.WATCHDOG for t in others):
        return False
    with server._lock:
        if server._forkserver_pid is not None:
            return False
        resource_tracker.ensure_running()  # before the fork: the workers get its descriptor from the pools
        address = connection.arbitrary_address("AF_UNIX")  # type: ignore[attr-defined]  # not in the stubs
        with socket.socket(socket.AF_UNIX) as listener:
            listener.bind(address)
            os.chmod(address, 0o600)
            listener.listen()
            alive_r, alive_w = os.pipe()
            frozen = gc.get_freeze_count()  # python -m economics froze the modules' objects: they stay frozen
            gc.freeze()
            try:
                with warnings.catch_warnings():  # the child's filters are the parent's again as it leaves the block
                    # Python 3.12+ warns of a fork while another thread runs, in the parent once the child runs:
                    # under -W error it would raise there, the child's pid lost and the child left serving. The
                    # only other thread is the watchdog, which holds no lock (checked above)
                    warnings.filterwarnings("ignore", r".*use of fork\(\) may lead to deadlocks", DeprecationWarning)
                    pid = os.fork()
                if pid == 0:
                    _serve_forks(listener.fileno(), alive_r, alive_w)  # never returns
            except OSError:  # no process to spare (EAGAIN, ENOMEM): multiprocessing tries its own, or says why not
                os.close(alive_w)
                os.unlink(address)
                return False
            finally:  # the parent's: the child ends in _serve_forks
                if not frozen:
                    gc.unfreeze()
                os.close(alive_r)
        server._forkserver_address, server._forkserver_alive_fd, server._forkserver_pid = address, alive_w, pid
    return True


def _serve_forks(listener_fd: int, alive_r: int, alive_w: int) -> None:
    """The forked fork server's life: :func:`multiprocessing.forkserver.main` until the API process ends."""
    code = 1
    try:
        os.close(alive_w)
        # the API process held the fork server's lock as it forked: a copy stays held in this process and its
        # workers, where multiprocessing's forkserver.ensure_running would wait on it for ever
        server: Any = forkserver._forkserver  # its private state, as fork_the_fork_server reads it
        server._lock = threading.Lock()
        keep = sorted({0, 1, 2, listener_fd, alive_r})
        for low, high in zip([-1, *keep], [*keep, os.sysconf("SC_OPEN_MAX")], strict=True):
            if high > low + 1:  # an empty range is not nothing: CPython 3.11 closes every descriptor above it
                os.closerange(low + 1, high)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the server's handler: ended as a fresh one would be
        forkserver.main(listener_fd, alive_r, [])
        code = 0
    except SystemExit:  # the API process ended (the pipe's last writer closed): the fork server's normal end
        code = 0
    finally:
        os._exit(code)


def _limit_memory(memory_mb: int) -> None:
    """Bound the process's memory: its data segment and private writable mappings (``RLIMIT_DATA``), what numpy,
    pandas and the report's chart renderer actually take. Not the address space (``RLIMIT_AS``): the renderer's V8
    reserves far more address space than it uses, and would not start under it.
    """
    if resource is None:
        return
    with contextlib.suppress(ValueError, OSError):
        limit = memory_mb << 20
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))


def worker_main(conn: Connection, memory_mb: int, max_rows: int) -> None:
    """A worker's loop: a request's header (JSON) and parts (bytes) in, the answer's header and body out, until the
    pipe closes.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the server, which ends its workers
    _limit_memory(memory_mb)
    while True:
        try:
            head = json.loads(conn.recv_bytes())
            parts: dict[str, list[tuple[str, bytes]]] = {}
            for name, filename in head["parts"]:
                parts.setdefault(name, []).append((filename, conn.recv_bytes()))
        except (EOFError, OSError):
            return
        answer = _answer(Request(head["task"], head["params"], parts), max_rows)
        try:
            conn.send_bytes(json.dumps({"status": answer.status, "media_type": answer.media_type}).encode())
            conn.send_bytes(answer.body)
        except (BrokenPipeError, OSError):
            return


def _answer(request: Request, max_rows: int) -> Answer:
    """The answer to send back, whatever happened: the worker lives on to take the next request."""
    try:
        answer = tasks.run(request, max_rows)
        if isinstance(answer, ApiError):
            answer = Answer(answer.code.status, tasks.MEDIA[OutputFormat.JSON], errors.body_bytes(answer))
        return answer
    except Exception as exc:  # the last line of defence: an answer that cannot be written is a bug, named
        return Answer(500, tasks.MEDIA[OutputFormat.JSON], errors.from_text(Code.INTERNAL, f"internal error: "
                                                                 f"{type(exc).__name__} writing the answer"))


class WorkerGone(Exception):
    """The worker process ended before it answered (killed by the operating system, or a crash); ``exitcode`` is
    the process's (minus the signal number that ended it).
    """

    def __init__(self, message: str, exitcode: int | None) -> None:
        super().__init__(message)
        self.exitcode = exitcode

    @property
    def out_of_memory(self) -> bool:
        """Ended as a process past its memory does: aborted (a C++ library's failed allocation, ``std::bad_alloc``)
        or killed (the kernel's out-of-memory killer).
        """
        return self.exitcode in (-signal.SIGABRT, -signal.SIGKILL)


class Worker:
    """One worker process and its end of the pipe."""

    def __init__(self, context: Any, memory_mb: int, max_rows: int) -> None:
        self.conn, child = context.Pipe()
        self.process = context.Process(target=worker_main, args=(child, memory_mb, max_rows), daemon=True)
        self.process.start()
        child.close()

    def exchange(self, request: Request, timeout_s: float) -> Answer | None:
        """The worker's answer to ``request``, or None when it took longer than ``timeout_s`` (the worker is then
        stopped: :meth:`stop`). Raises :class:`WorkerGone`.
        """
        try:
            head = {"task": request.task, "params": request.params,
                    "parts": [[name, filename] for name, files in request.parts.items() for filename, _ in files]}
            self.conn.send_bytes(json.dumps(head).encode())
            for files in request.parts.values():
                for _, data in files:
                    self.conn.send_bytes(data)
            if not self.conn.poll(timeout_s):
                self.stop()
                return None
            got = json.loads(self.conn.recv_bytes())
            return Answer(int(got["status"]), str(got["media_type"]), self.conn.recv_bytes())
        except (EOFError, OSError) as exc:
            self.stop()
            raise WorkerGone(str(exc), self.process.exitcode) from None

    def stop(self) -> None:
        """End the process (SIGKILL: a computation in a C library does not look at signals) and wait for it."""
        with contextlib.suppress(OSError, ValueError):
            self.process.kill()
            self.process.join(5)
            self.conn.close()

    @property
    def alive(self) -> bool:
        """Whether the process still runs."""
        return bool(self.process.is_alive())


class Pool:
    """``size`` workers; a request waits at most ``queue_timeout_s`` for one (then 503) and runs at most
    ``timeout_s`` (then 504, the worker replaced).
    """

    def __init__(self, name: str, size: int, memory_mb: int, max_rows: int, timeout_s: float,
                 queue_timeout_s: float) -> None:
        self.name, self.size, self.timeout_s, self.queue_timeout_s = name, size, timeout_s, queue_timeout_s
        self.memory_mb, self.max_rows = memory_mb, max_rows
        self.context = mp.get_context("forkserver")
        self.context.set_forkserver_preload(PRELOAD)
        fork_the_fork_server()  # the first pool's, once: the engine is imported already
        self.idle: asyncio.Queue[Worker] = asyncio.Queue()
        self.threads = ThreadPoolExecutor(max_workers=size, thread_name_prefix=f"pool-{name}")
        self.workers: list[Worker] = []
        for _ in range(size):
            self._add()

    def _add(self) -> None:
        worker = Worker(self.context, self.memory_mb, self.max_rows)
        self.workers.append(worker)
        self.idle.put_nowait(worker)

    def _retire(self, worker: Worker) -> None:
        """Replace a worker that was stopped or died."""
        worker.stop()
        self.workers.remove(worker)
        self._add()

    def _done(self, worker: Worker) -> None:
        if worker.alive:
            self.idle.put_nowait(worker)
        else:
            self._retire(worker)

    async def run(self, request: Request) -> Answer:
        """The answer of ``request`` from a free worker of this pool; :class:`ApiError` BUSY, TIMEOUT or INTERNAL."""
        try:
            worker = await asyncio.wait_for(self.idle.get(), self.queue_timeout_s or 0.001)
        except TimeoutError:
            raise ApiError(Code.BUSY, f"all {self.size} {self.name} workers were busy for {self.queue_timeout_s:g} s; "
                           "try again") from None
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self.threads, worker.exchange, request, self.timeout_s)
        try:
            answer = await asyncio.shield(future)
        except asyncio.CancelledError:  # the client went away: the worker is handed back once it has answered
            future.add_done_callback(lambda _: loop.call_soon_threadsafe(self._done, worker))
            raise
        except WorkerGone as gone:
            self._retire(worker)
            if gone.out_of_memory:
                raise ApiError(Code.OUT_OF_MEMORY, "out of memory: the computation needed more than a worker may "
                               "take (--worker-memory-mb); send fewer rows or ask for fewer samples") from None
            raise ApiError(Code.INTERNAL, f"the worker process ended before it answered (exit code "
                           f"{gone.exitcode}); it was replaced") from None
        if answer is None:
            self._retire(worker)
            raise ApiError(Code.TIMEOUT, f"the computation ran past the {self.timeout_s:g} s time limit and was "
                           "stopped; send fewer rows or candidates, or ask the operator for a longer "
                           "--request-timeout-s")
        self._done(worker)
        return answer

    def close(self) -> None:
        """End every worker."""
        for worker in self.workers:
            worker.stop()
        self.threads.shutdown(wait=False, cancel_futures=True)
