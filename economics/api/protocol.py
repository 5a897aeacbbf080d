"""The HTTP protocol uvicorn serves the API with: its h11 protocol, with Nagle's algorithm off on every connection.

Why: with ``--workers`` above 1, uvicorn binds the listening socket itself with protocol number 0, and asyncio
turns ``TCP_NODELAY`` on only for sockets whose protocol number is TCP's, so every small answer waited for the
client's delayed acknowledgement: 44 ms for ``/v1/health`` with two workers against 1 ms with one
(``bench/api.py``). Setting it on each accepted connection gives both the same latency.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket

from uvicorn.protocols.http.h11_impl import H11Protocol


class NoDelayH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, with ``TCP_NODELAY`` set on the connection before it is served."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Turn Nagle's algorithm off on a TCP connection, then serve it as uvicorn does."""
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().connection_made(transport)
