"""The HTTP protocol uvicorn serves the API with: its h11 protocol, with Nagle's algorithm off on every connection
and a time limit on a client that sends its request too slowly.

Nagle: with ``--workers`` above 1, uvicorn binds the listening socket itself with protocol number 0, and asyncio
turns ``TCP_NODELAY`` on only for sockets whose protocol number is TCP's, so every small answer waited for the
client's delayed acknowledgement: 44 ms for ``/v1/health`` with two workers against 1 ms with one
(``bench/api.py``). Setting it on each accepted connection gives both the same latency.

Slow clients: uvicorn (0.54) limits only the idle time between two requests of a kept-alive connection
(``timeout_keep_alive``, armed once a response is complete) and the size of a request's head
(``h11_max_incomplete_event_size``). Nothing limits the time a client takes to send a request: a connection that
sends half its headers, or half its body, and then nothing, was held open for ever. Here the request's head must
arrive within ``header_timeout_s`` of the moment the server waits for it (the connection opened, or the previous
response sent), and its body may pause at most ``body_timeout_s`` between two reads; past either the client is
answered 408 in the error shape and the connection closed. Both are settings (:mod:`economics.api.settings`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import socket

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from economics.api import settings
from economics.api.errors import ApiError, Code, body_bytes


@functools.cache
def _timeouts() -> tuple[float, float]:
    """(header, body) timeouts [s] of this server process, from the environment ``serve`` wrote."""
    config = settings.from_environment()
    return config.header_timeout_s, config.body_timeout_s


def timeout_answer(what: str, seconds: float) -> bytes:
    """The raw HTTP 408 answer in the error shape, closing the connection (h11 cannot answer a request it has not
    read whole, so the bytes are written as they are).
    """
    option = "--header-timeout-s" if what == "headers" else "--body-timeout-s"
    body = body_bytes(ApiError(Code.REQUEST_TIMEOUT, f"the request's {what} did not arrive within {seconds:g} s "
                                                     f"(the server's {option}): the connection is closed"))
    head = (f"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
            "connection: close\r\n\r\n")
    return head.encode("ascii") + body


class NoDelayH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, with ``TCP_NODELAY`` set on the connection before it is served, and the header and
    body timeouts.
    """

    _deadline: asyncio.TimerHandle | None = None
    _waiting_for: str = ""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Turn Nagle's algorithm off on a TCP connection, then serve it as uvicorn does; the headers' clock starts."""
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().connection_made(transport)
        self._watch()

    def data_received(self, data: bytes) -> None:
        """Read as uvicorn does, then set the clock for what the connection waits for now."""
        super().data_received(data)
        self._watch(fresh_bytes=True)

    def on_response_complete(self) -> None:
        """The response sent: the next request's headers are waited for (and uvicorn's keep-alive timer runs)."""
        super().on_response_complete()
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        """Stop the clock, then end the connection as uvicorn does."""
        self._stop()
        super().connection_lost(exc)

    def _stop(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline, self._waiting_for = None, ""

    def _watch(self, fresh_bytes: bool = False) -> None:
        """Arm, keep or stop the clock by the request's state: its head awaited (a total limit, kept as its bytes
        trickle in), its body awaited (a limit on the silence: restarted by each read), or nothing awaited (the
        application is answering).
        """
        if self.transport is None or self.transport.is_closing():
            self._stop()
            return
        header_s, body_s = _timeouts()
        awaiting_head = self.conn.their_state is h11.IDLE and (self.cycle is None or self.cycle.response_complete)
        waiting_for = "headers" if awaiting_head else "body" if self.conn.their_state is h11.SEND_BODY else ""
        if waiting_for == self._waiting_for and not (waiting_for == "body" and fresh_bytes):
            return
        self._stop()
        if waiting_for:
            seconds = header_s if waiting_for == "headers" else body_s
            self._deadline = self.loop.call_later(seconds, self._too_slow, waiting_for, seconds)
            self._waiting_for = waiting_for

    def _too_slow(self, what: str, seconds: float) -> None:
        """The client took too long: answer 408 (unless the application has begun its answer) and close."""
        self._deadline, self._waiting_for = None, ""
        if self.transport.is_closing():
            return
        if self.cycle is None or not self.cycle.response_started:
            self.transport.write(timeout_answer(what, seconds))
        self.transport.close()
