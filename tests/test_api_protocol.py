"""The API's HTTP protocol turns Nagle's algorithm off on every connection, also on the socket uvicorn binds for
several workers (protocol number 0, on which asyncio leaves it on: every small answer then waited 40 ms for the
client's delayed acknowledgement)."""

from __future__ import annotations

import asyncio
import socket
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from uvicorn import Config
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

from economics.api.protocol import NoDelayH11Protocol


async def _app(scope: Any, receive: Any, send: Any) -> None:
    return None


async def _nodelay_of_an_accepted_connection(protocol: type[H11Protocol]) -> int:
    config = Config(app=_app, http=protocol, log_level="warning")
    config.load()
    state, seen = ServerState(), asyncio.get_running_loop().create_future()

    class Probe(protocol):  # type: ignore[misc, valid-type]
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            seen.set_result(transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))

    sock = socket.socket(family=socket.AF_INET)  # as uvicorn's Config.bind_socket makes it: protocol number 0
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    assert sock.proto == 0
    server = await asyncio.get_running_loop().create_server(
        lambda: Probe(config=config, server_state=state, app_state={}), sock=sock)
    _, writer = await asyncio.open_connection(*sock.getsockname())
    try:
        return int(await asyncio.wait_for(seen, 30))
    finally:
        writer.close()
        server.close()


@pytest.mark.parametrize(("protocol", "nodelay"), [(H11Protocol, 0), (NoDelayH11Protocol, 1)])
def test_nagle_is_off_on_connections_the_api_accepts(protocol: type[H11Protocol], nodelay: int) -> None:
    # uvicorn's own protocol leaves it on there (the cause); ours turns it off. The loop runs in a thread of its
    # own: a browser test before this one in the same worker can leave an event loop running in this thread
    with ThreadPoolExecutor(1) as pool:
        got = pool.submit(asyncio.run, _nodelay_of_an_accepted_connection(protocol)).result(timeout=60)
    assert (got != 0) == bool(nodelay)
