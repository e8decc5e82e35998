"""The mcp bench's first baseline: the official SDK's Starlette app, called as ASGI in-process."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from mcp_requests import N_TOOLS, product_function


def sdk_app() -> Any:
    """The SDK's Starlette app; its ``configure_logging`` must not leave a handler on the root logger."""
    from mcp.server.mcpserver import MCPServer

    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        server = MCPServer("bench", log_level="WARNING")
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
    for i in range(N_TOOLS):
        server.tool()(product_function(i))
    return server.streamable_http_app(stateless_http=True, json_response=True)


class AsgiClient:
    """Calls an ASGI app in-process in an event loop of its own, its lifespan entered once."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.loop = asyncio.new_event_loop()
        self._lifespan_in: asyncio.Queue[dict[str, Any]] | None = None
        self._lifespan_out: asyncio.Queue[dict[str, Any]] | None = None
        self._lifespan: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.loop.run_until_complete(self._start())

    async def _start(self) -> None:
        inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._lifespan_in, self._lifespan_out = inbox, outbox
        scope = {"type": "lifespan", "asgi": {"version": "3.0", "spec_version": "2.0"}, "state": {}}
        self._lifespan = asyncio.ensure_future(self.app(scope, inbox.get, outbox.put))
        await inbox.put({"type": "lifespan.startup"})
        started = await outbox.get()
        if started["type"] != "lifespan.startup.complete":
            raise RuntimeError(f"the SDK app did not start: {started}")

    def close(self) -> None:
        async def stop() -> None:
            assert self._lifespan_in and self._lifespan_out and self._lifespan
            await self._lifespan_in.put({"type": "lifespan.shutdown"})
            await self._lifespan_out.get()
            await self._lifespan

        try:
            if self._lifespan is not None:
                self.loop.run_until_complete(stop())
        finally:
            self.loop.close()

    async def post(self, body: bytes, headers: list[tuple[bytes, bytes]]) -> tuple[int, bytes]:
        scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": "/mcp",
            "raw_path": b"/mcp",
            "query_string": b"",
            "root_path": "",
            "headers": headers,
            "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 8000),
            "state": {},
        }
        delivered = False
        status = 0
        chunks: list[bytes] = []

        async def receive() -> dict[str, Any]:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            await asyncio.Event().wait()  # the client never disconnects while the answer is pending
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await self.app(scope, receive, send)
        return status, b"".join(chunks)

    def post_now(self, body: bytes, headers: list[tuple[bytes, bytes]]) -> tuple[int, bytes]:
        return self.loop.run_until_complete(self.post(body, headers))
