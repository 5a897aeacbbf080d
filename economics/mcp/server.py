"""The MCP server on the official SDK's low-level :class:`mcp.server.lowlevel.Server`: the tools of
:mod:`economics.mcp.schemas`, each computing tool run in the HTTP API's worker pools (their time limits, memory
limits and errors: :mod:`economics.api.workers`), each result the HTTP API's JSON as the tool's text content, each
failure its error shape with ``isError`` set.

Over stdio the SDK points file descriptor 1 at standard error while it serves, and the pools start inside it, so
no worker's stray output can reach the protocol's stream. Over streamable HTTP the app sits behind the HTTP API's
own body limit, access log and bearer token (``TOKEN_ECONOMICS_API_TOKEN``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import anyio.to_thread
import uvicorn
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from starlette.types import ASGIApp

from economics.api.app import Guard, TokenCheck, configure_access_log
from economics.api.errors import ApiError, Code, body_bytes
from economics.api.settings import Settings
from economics.api.tasks import Answer
from economics.api.workers import Pool
from economics.mcp.calls import reference_answer, request_for, store_answer
from economics.mcp.schemas import STORE, Tool, tools
from economics.version import __version__

INSTRUCTIONS = ("Token economics of LLM inference: cost per million tokens, fleet sizes, energy, margins, retrofit "
                "options and fleet plans, every figure explainable. Call fields for the scenario fields (units, "
                "bounds, defaults), evaluate a scenario, explain it for its derivation; list_scenarios, "
                "get_scenario and save_scenario read and keep named scenarios with every version in the store.")


def _result(answer: Answer) -> types.CallToolResult:
    """An answer as the tool's result: its body as text, ``isError`` for anything but a success."""
    text = answer.body.decode("utf-8", "backslashreplace")
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                is_error=not 200 <= answer.status < 300)


def _failure(error: ApiError) -> types.CallToolResult:
    return _result(Answer(error.code.status, "application/json", body_bytes(error)))


async def call(tool: Tool, arguments: dict[str, Any] | None, pools: dict[str, Pool],
               config: Settings) -> types.CallToolResult:
    """The result of calling ``tool``: a reference table read here, or a computation in its pool."""
    try:
        if tool.pool is None:
            return _result(reference_answer(tool, arguments))
        if tool.pool == STORE:  # one short transaction, on a thread as the HTTP API runs its store routes
            return _result(await anyio.to_thread.run_sync(store_answer, tool, arguments))
        return _result(await pools[tool.pool].run(request_for(tool, arguments or {}, config)))
    except ApiError as exc:
        return _failure(exc)
    except Exception as exc:  # the last line of defence: the error shape, never a trace
        return _failure(ApiError(Code.INTERNAL, f"internal error: {type(exc).__name__}"))


def build_server(config: Settings) -> Server[dict[str, Pool]]:
    """The server: its tools, and the pools it starts with (``config``'s sizes and limits) and ends with."""
    offered = {t.name.value: t for t in tools(config)}

    @contextlib.asynccontextmanager
    async def lifespan(_: Server[dict[str, Pool]]) -> AsyncIterator[dict[str, Pool]]:
        timeout, queue = config.request_timeout_s, config.queue_timeout_s
        pools = {"evaluate": Pool("evaluate", config.evaluate_workers, config.worker_memory_mb, config.max_rows,
                                  timeout, queue),
                 "study": Pool("study", config.study_workers, config.worker_memory_mb, config.max_rows, timeout,
                               queue)}
        try:
            yield pools
        finally:
            for pool in pools.values():
                pool.close()

    async def list_tools(_: Any, __: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(
            name=t.name.value, title=t.title, description=t.description, input_schema=t.input_schema,
            annotations=types.ToolAnnotations(read_only_hint=not t.writes, destructive_hint=False,
                                              idempotent_hint=not t.writes, open_world_hint=False))
            for t in offered.values()])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        tool = offered.get(params.name)
        if tool is None:
            raise MCPError(types.INVALID_PARAMS, f"unknown tool '{params.name[:100]}'; the tools are "
                           f"{', '.join(offered)}")
        return await call(tool, params.arguments, ctx.lifespan_context, config)

    def input_schema(name: str) -> dict[str, Any] | None:
        return offered[name].input_schema if name in offered else None

    return Server("token-economics", version=__version__, title="Token economics", instructions=INSTRUCTIONS,
                  lifespan=lifespan, on_list_tools=list_tools, on_call_tool=call_tool,
                  get_tool_input_schema=input_schema)


async def _serve_stdio(config: Settings) -> None:
    async with stdio_server() as (read, write):  # fd 1 now points at stderr: the pools start after this
        server = build_server(config)
        await server.run(read, write, server.create_initialization_options())


def serve_stdio(config: Settings) -> None:
    """Serve one client over standard input and output until it closes them."""
    asyncio.run(_serve_stdio(config))


def http_app(config: Settings, host: str) -> ASGIApp:
    """The streamable HTTP app (at ``/mcp``) behind the HTTP API's token check and guard (body limit, access log,
    version header); the SDK's DNS-rebinding protection on for a loopback ``host``.
    """
    app = build_server(config).streamable_http_app(host=host, max_request_body_size=config.max_body_bytes)
    return Guard(TokenCheck(app, config.token), config)


def serve_http(config: Settings, host: str, port: int) -> None:
    """Serve streamable HTTP on ``host:port`` until interrupted, one access-log line a request on stderr."""
    configure_access_log()
    uvicorn.run(http_app(config, host), host=host, port=port, access_log=False, log_level="warning",
                timeout_graceful_shutdown=5)

