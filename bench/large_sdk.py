"""The large-registry bench's baseline: the official MCP SDK's low-level ``Server`` listing 2,000 tools.

The SDK's tools are toolfront's own MCP entries (``tool_entry`` of each manifest entry) validated
once into ``mcp_types.Tool`` objects, so both servers list the same tools with the same fields.
``on_list_tools`` answers ``ListToolsResult(tools=<those objects>)``: the cheapest handler the SDK
allows (no per-request construction of the tools, as ``MCPServer.list_tools`` does).

One request, as the SDK's runner serves it and without the transport: the params validated
(``PaginatedRequestParams``), the handler awaited, the result dumped as its runner dumps it
(``model_dump(by_alias=True, mode="json", exclude_none=True)``) and the JSON-RPC answer encoded with
``json.dumps``. References: the same plus the runner's per-version sieve
(``mcp_types.methods.serialize_server_result``, which it applies to every spec method's result), and
the whole stateless Streamable HTTP app called as ASGI in-process (``mcp_sdk.AsgiClient``).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from mcp_timing import AsyncSpec

HANDSHAKE = "2025-11-25"


@dataclass
class SdkList:
    """The SDK's ``tools/list`` for the given entries: the server, its handler and the two request forms."""

    server: Any
    handle: Callable[[], Coroutine[Any, Any, str]]
    handle_sieved: Callable[[], Coroutine[Any, Any, str]]


def sdk_list(entries: list[dict[str, Any]]) -> SdkList:
    """A low-level ``Server`` whose ``tools/list`` answers the MCP ``entries`` (toolfront's own)."""
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp_types import methods

    tools = [types.Tool.model_validate(entry) for entry in entries]

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=tools)

    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        server = Server("bench", on_list_tools=list_tools)
    finally:  # the SDK must not leave a handler on the root logger
        root.handlers[:] = handlers
        root.setLevel(level)
    entry = server.get_request_handler("tools/list")
    assert entry is not None
    handler: Any = entry.handler  # typed for a context; this one never reads it

    async def handle() -> str:
        params = entry.params_type.model_validate({}, by_name=False)
        result = await handler(None, params)
        dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        return json.dumps({"jsonrpc": "2.0", "id": 1, "result": dumped}, separators=(",", ":"))

    async def handle_sieved() -> str:
        params = entry.params_type.model_validate({}, by_name=False)
        result = await handler(None, params)
        dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        dumped = methods.serialize_server_result("tools/list", HANDSHAKE, dumped)
        return json.dumps({"jsonrpc": "2.0", "id": 1, "result": dumped}, separators=(",", ":"))

    return SdkList(server, handle, handle_sieved)


def sdk_asgi_app(server: Any) -> Any:
    """The same server's stateless Streamable HTTP app with JSON answers (as the mcp bench serves it)."""
    return server.streamable_http_app(stateless_http=True, json_response=True)


@dataclass
class SlowAsyncSpec(AsyncSpec):
    """An ``AsyncSpec`` whose call takes tens of milliseconds: a warm-up of ``warm_up`` calls, not 50."""

    warm_up: int = 5

    def round(self) -> list[int]:
        assert self.loop is not None and self.coroutine is not None
        make = self.coroutine

        async def sample(n: int) -> list[int]:
            clock = time.perf_counter_ns
            samples = [0] * n
            for i in range(n):
                t0 = clock()
                await make()
                samples[i] = clock() - t0
            samples.sort()
            return samples

        self.loop.run_until_complete(sample(self.warm_up))  # thrown away
        return self.loop.run_until_complete(sample(self.n))
