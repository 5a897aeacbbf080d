"""The API's HTTP protocol turns Nagle's algorithm off on every connection, also on the socket uvicorn binds for
several workers (protocol number 0, on which asyncio leaves it on: every small answer then waited 40 ms for the
client's delayed acknowledgement); and a client that stalls while it sends a request, its headers or its body, is
answered 408 and its connection closed (a real server, a real socket that sends half a request)."""

from __future__ import annotations

import asyncio
import json
import socket
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from uvicorn import Config
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

from bench.api_server import running_api
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


def _answer_and_close(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a failure, never a measure, past 120 s)."""
    sock.settimeout(120)
    out = b""
    while chunk := sock.recv(65536):
        out += chunk
    return out


@pytest.mark.parametrize(("sent", "what", "option"), [
    (b"POST /v1/evaluate HTTP/1.1\r\nHost: x\r\nContent-Le", "headers", "--header-timeout-s"),  # half its headers
    (b"", "headers", "--header-timeout-s"),  # connected, and nothing
    (b"POST /v1/evaluate HTTP/1.1\r\nHost: x\r\nContent-Type: text/csv\r\nContent-Length: 100\r\n\r\nname,pue\n",
     "body", "--body-timeout-s"),  # a tenth of its body
])
def test_a_client_that_stalls_mid_request_is_answered_408_and_closed(tmp_path: Any, sent: bytes, what: str,
                                                                     option: str) -> None:
    # uvicorn has no such limit: before, each of these connections was held open for ever (over 40 s in the issue)
    env = {"TOKEN_ECONOMICS_API_HEADER_TIMEOUT_S": "2", "TOKEN_ECONOMICS_API_BODY_TIMEOUT_S": "2"}
    with (tmp_path / "log").open("wb") as log, running_api(log, env) as url:
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port))) as sock:
            sock.sendall(sent)
            answer = _answer_and_close(sock)
        # the same request sent whole is served as before
        with socket.create_connection((host, int(port))) as sock:
            head = b"POST /v1/evaluate?format=csv HTTP/1.1\r\nHost: x\r\nContent-Type: text/csv\r\n"
            body = b"name,accelerator_count,output_tokens_per_s_per_accelerator\na,8,1000\n"
            sock.sendall(head + b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
            served = _answer_and_close(sock)
    status, _, rest = answer.partition(b"\r\n")
    assert status == b"HTTP/1.1 408 Request Timeout", answer
    doc = json.loads(rest.split(b"\r\n\r\n", 1)[1])
    assert doc["error"]["code"] == "request_timeout" and doc["error"]["status"] == 408
    assert doc["error"]["message"] == (f"the request's {what} did not arrive within 2 s (the server's {option}): "
                                       "the connection is closed")
    assert served.startswith(b"HTTP/1.1 200 OK") and b"\r\n\r\nname," in served
