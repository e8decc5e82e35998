"""MCP, server side: toolfront's ``McpEndpoint`` against the official SDK and mcp-lambda-handler.

perf-anchors section 5 and "What ratios..." item 6. Everything runs in this process, no network:

- **the official SDK** (``mcp`` 2.3.0): ``MCPServer`` with 200 tools
  ``fn(sku: str, quantity: int = 1, locale: str = "en-GB") -> str``, served by
  ``streamable_http_app(stateless_http=True, json_response=True)`` and called as an ASGI app with a
  hand-built scope, ``receive`` and ``send``, after entering its lifespan once. Each request is
  awaited and timed inside one event loop. Protocol 2025-11-25 (``MCP-Protocol-Version`` header);
  2026-07-28 (single exchange, ``_meta`` and the ``mcp-method``/``mcp-name`` headers) is a reference
  for ``tools/call``;
- **awslabs mcp-lambda-handler**: ``MCPLambdaHandler("bench")`` with the same 200 functions through
  ``@tool()``, called as ``handle_request(http_api_v2_event, ctx)``;
- **toolfront**: ``McpEndpoint(ToolCatalog(entries), call_tool, authenticate).handle(event)`` for the
  same API Gateway v2 event. The 200 entries are ``Tool.new(...).describe()`` of public tools of the
  module ``bench`` (what ``toolfront manifest`` writes); ``authenticate`` is a real
  ``Authenticator`` over a key store that raises if asked anything (an anonymous caller needs no
  store); ``call_tool`` is a stub answering ``(200, {"data": {"ok": True}, "request_id": "r"})``, so
  ``tools/call`` measures the gateway's own work: JSON-RPC parse, authentication of an anonymous
  caller, routing, and shaping the result.

Loggers: the SDK's and mcp-lambda-handler's loggers stay at WARNING (their per-request INFO lines
are not written; mcp-lambda-handler still formats its debug f-string of the whole event, as it does
in production). toolfront's endpoint logs nothing per request.

Fresh subprocesses (interleaved, median of 10): ``import app`` of ``functions/gateway`` beyond
``import boto3; boto3.client("dynamodb")``, with the SDK and mcp-lambda-handler imports as
references; a check that neither ``mcp`` nor ``mcp_types`` is loaded after importing the gateway and
every family module and serving an anonymous MCP ``initialize`` and ``tools/list`` through the
gateway.
"""

from __future__ import annotations

import asyncio
import cProfile
import json
import logging
import os
import pstats
import statistics
import sys
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import ROUNDS, Row, Section, Spec, _round, canary, link_ratios, percentile

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
LAYER_DIR = ROOT / "layers" / "core"
FUNCTIONS_DIR = ROOT / "functions"

N_TOOLS = 200
HANDSHAKE = "2025-11-25"
MODERN = "2026-07-28"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CALLED = 7  # the tool every tools/call calls
ARGUMENTS = {"sku": "MUG-01"}
SDK_ANSWER = "MUG-01 x1 (en-GB)"
STUB_ANSWER = (200, {"data": {"ok": True}, "request_id": "r"})
#: Per round: the anchors' n (500-1 000 for the SDK, 1 000-5 000 for mcp-lambda-handler).
FULL_N = {"sdk_list": 500, "sdk_call": 1000, "list": 2000, "call": 5000, "toolfront": 5000}
QUICK_N = {"sdk_list": 60, "sdk_call": 100, "list": 200, "call": 500, "toolfront": 1000}
FULL_REPEATS = 10
QUICK_REPEATS = 1
PROFILE_CALLS = {"list": 3000, "call": 20000}
TOP_OFFENDERS = 8
#: Targets (perf-anchors "What ratios..." item 6), of toolfront against mcp-lambda-handler.
LIST_TARGET = 0.1
CALL_TARGET = 1.0
SPREAD_TARGET = 3.0  # p99 ÷ median
SDK_LIST_AIM = 0.01  # the anchors' aim against the SDK's tools/list (reported, not a row target)
#: Modules a Lambda function must not load (the check children below, and tests/unit).
SDK_MODULES = ("mcp", "mcp_types")
RESULT_PREFIX = "BENCH_MCP_RESULT "


def description(i: int) -> str:
    return f"Look up product family {i:03d}: price and stock of one SKU."


INPUT_SCHEMA = {  # what the SDK derives from fn's signature, as toolfront declares it
    "type": "object",
    "properties": {
        "sku": {"type": "string"},
        "quantity": {"type": "integer", "minimum": 1, "default": 1},
        "locale": {"type": "string", "default": "en-GB"},
    },
    "required": ["sku"],
    "additionalProperties": False,
}


def product_function(i: int) -> Callable[..., str]:
    """The i-th tool function of the SDK and mcp-lambda-handler servers (one object per tool)."""

    def fn(sku: str, quantity: int = 1, locale: str = "en-GB") -> str:
        return f"{sku} x{quantity} ({locale})"

    fn.__name__ = fn.__qualname__ = f"get_product{i:03d}"
    fn.__doc__ = description(i)
    return fn


# --- the three servers ---------------------------------------------------------------------------


class NeverCalledStore:
    """A key store that fails the bench if asked anything: an anonymous caller needs no store."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the key store was asked for {name!r}: an anonymous caller needs none")


@dataclass
class StubCaller:
    """``call_tool`` of the endpoint: remembers the last call and answers at once."""

    last: Any = None

    def __call__(self, call: Any) -> tuple[int, dict[str, Any]]:
        self.last = call
        return STUB_ANSWER


def manifest_entries() -> list[dict[str, Any]]:
    """200 manifest tool entries, built as ``toolfront manifest`` builds them (``describe()``)."""
    from toolfront import Tool

    def handler(arguments: dict[str, Any], context: Any) -> dict[str, Any]:
        return {"ok": True}

    return [
        Tool.new(
            name=f"bench.get_product{i:03d}",
            audience="public",
            module="bench",
            handler=handler,
            title=f"Get product {i:03d}",
            description=description(i),
            input_schema=json.loads(json.dumps(INPUT_SCHEMA)),  # a dict of its own, as declared
            annotations={"read_only": True},
        ).describe()
        for i in range(N_TOOLS)
    ]


def toolfront_endpoint() -> tuple[Any, StubCaller]:
    from toolfront.authn import Authenticator
    from toolfront.mcp import McpEndpoint
    from toolfront.mcp_shapes import ToolCatalog

    stub = StubCaller()
    authenticator = Authenticator(NeverCalledStore())  # type: ignore[arg-type]
    return McpEndpoint(ToolCatalog(manifest_entries()), stub, authenticator.authenticate), stub


def lambda_handler_server() -> Any:
    try:
        from awslabs.mcp_lambda_handler import MCPLambdaHandler
    except ImportError:  # a dev extra
        raise SystemExit(
            "bench_mcp needs awslabs.mcp-lambda-handler: "
            ".venv/bin/pip install 'awslabs.mcp-lambda-handler==0.1.15'"
        ) from None
    handler = MCPLambdaHandler("bench")
    for i in range(N_TOOLS):
        handler.tool()(product_function(i))
    return handler


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


# --- requests ------------------------------------------------------------------------------------


def rpc(method: str, params: dict[str, Any] | None = None, message_id: int = 1) -> str:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": message_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message)


def modern_meta() -> dict[str, Any]:
    return {
        VERSION_KEY: MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1.0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }


LIST_BODY = rpc("tools/list")
CALL_PARAMS = {"name": f"get_product{CALLED:03d}", "arguments": ARGUMENTS}
CALL_BODY = rpc("tools/call", CALL_PARAMS, 2)
TF_CALL_BODY = rpc("tools/call", {**CALL_PARAMS, "name": f"bench.get_product{CALLED:03d}"}, 2)
SDK_MODERN_CALL_BODY = rpc("tools/call", {**CALL_PARAMS, "_meta": modern_meta()}, 2)
TF_MODERN_CALL_BODY = rpc(
    "tools/call", {**CALL_PARAMS, "name": f"bench.get_product{CALLED:03d}", "_meta": modern_meta()}, 2
)


def api_event(body: str, protocol: str = HANDSHAKE, extra: dict[str, str] | None = None) -> dict[str, Any]:
    """An API Gateway HTTP API (payload v2) event of ``POST /mcp`` from an anonymous MCP client."""
    headers = {
        "accept": "application/json, text/event-stream",
        "content-length": str(len(body.encode())),
        "content-type": "application/json",
        "host": "abc123def4.execute-api.eu-west-1.amazonaws.com",
        "mcp-protocol-version": protocol,
        "user-agent": "bench-mcp-client/1.0",
        "x-amzn-trace-id": "Root=1-67891234-abcdef012345678912345678",
        "x-forwarded-for": "198.51.100.7",
        "x-forwarded-port": "443",
        "x-forwarded-proto": "https",
        **(extra or {}),
    }
    return {
        "version": "2.0",
        "routeKey": "POST /mcp",
        "rawPath": "/mcp",
        "rawQueryString": "",
        "headers": headers,
        "requestContext": {
            "accountId": "123456789012",
            "apiId": "abc123def4",
            "domainName": headers["host"],
            "domainPrefix": "abc123def4",
            "http": {
                "method": "POST",
                "path": "/mcp",
                "protocol": "HTTP/1.1",
                "sourceIp": "198.51.100.7",
                "userAgent": headers["user-agent"],
            },
            "requestId": "JKJaXmPLvHcESHA=",
            "routeKey": "POST /mcp",
            "stage": "$default",
            "time": "30/Nov/2026:05:00:00 +0000",
            "timeEpoch": 1796014800000,
        },
        "body": body,
        "isBase64Encoded": False,
    }


def asgi_headers(protocol: str = HANDSHAKE, extra: dict[str, str] | None = None) -> list[tuple[bytes, bytes]]:
    found = {
        "host": "127.0.0.1:8000",  # the SDK's DNS-rebinding guard allows 127.0.0.1:*
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": protocol,
        **(extra or {}),
    }
    return [(k.encode(), v.encode()) for k, v in found.items()]


class FakeContext:
    function_name = "bench-mcp"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:eu-west-1:123456789012:function:bench-mcp"
    aws_request_id = "bench-request"


# --- the floors (anchors): JSON in, nothing else, JSON out ---------------------------------------


def list_floor(tools: list[dict[str, Any]]) -> Callable[[dict[str, Any]], str]:
    def answer(event: dict[str, Any]) -> str:
        message = json.loads(event["body"])
        return json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": tools}})

    return answer


def call_floor(functions: dict[str, Callable[..., str]]) -> Callable[[dict[str, Any]], str]:
    def answer(event: dict[str, Any]) -> str:
        message = json.loads(event["body"])
        params = message["params"]
        text = functions[params["name"]](**params["arguments"])
        result = {"content": [{"type": "text", "text": text}]}
        return json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result})

    return answer


# --- timing: the harness's method, with coroutines timed inside their loop ------------------------


@dataclass
class AsyncSpec(Spec):
    """A row whose call is a coroutine: each ``await fn()`` is timed inside ``loop``."""

    loop: asyncio.AbstractEventLoop | None = None
    coroutine: Callable[[], Coroutine[Any, Any, Any]] | None = None

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

        self.loop.run_until_complete(sample(max(50, self.n // 10)))  # warm-up, thrown away
        return self.loop.run_until_complete(sample(self.n))


@dataclass
class Measured:
    rows: list[Row]
    round_p99s: dict[str, list[float]] = field(default_factory=dict)


def run_interleaved(specs: list[Spec], rounds: int = ROUNDS) -> Measured:
    """``harness.run_group`` for sync and async specs alike, keeping each round's p99."""
    stats: dict[str, list[tuple[float, float, float]]] = {s.key: [] for s in specs}
    for _ in range(rounds):
        for spec in specs:
            samples = spec.round() if isinstance(spec, AsyncSpec) else _round(spec)
            stats[spec.key].append(
                (samples[0] / 1000, statistics.median(samples) / 1000, percentile(samples, 99) / 1000)
            )
    rows = [
        Row(
            key=spec.key,
            label=spec.label,
            unit="µs",
            n=spec.n,
            rounds=rounds,
            median=statistics.median(m for _, m, _ in stats[spec.key]),
            min=min(lo for lo, _, _ in stats[spec.key]),
            p99=statistics.median(p for _, _, p in stats[spec.key]),
            round_medians=[m for _, m, _ in stats[spec.key]],
            baseline=spec.baseline,
            target=spec.target,
            note=spec.note,
        )
        for spec in specs
    ]
    return Measured(rows, {key: [p for _, _, p in found] for key, found in stats.items()})


def compared(source: Row, key: str, label: str, baseline: str, note: str = "") -> Row:
    """``source`` again, its ratio taken against another baseline (no target)."""
    return Row(
        key=key,
        label=label,
        unit=source.unit,
        n=source.n,
        rounds=source.rounds,
        median=source.median,
        min=source.min,
        p99=source.p99,
        round_medians=list(source.round_medians),
        baseline=baseline,
        note=note,
    )


def spread_row(source: Row, round_p99s: list[float], key: str, label: str) -> Row:
    """p99 ÷ median of ``source``: the median column is the row's, min/p99 the lowest/highest round."""
    per_round = [p / m for p, m in zip(round_p99s, source.round_medians, strict=True)]
    value = source.p99 / source.median
    return Row(
        key=key,
        label=label,
        unit="×",  # noqa: RUF001 (the table prints a multiplication sign)
        n=source.n,
        rounds=source.rounds,
        median=value,
        min=min(per_round),
        p99=max(per_round),
        round_medians=per_round,
        target=SPREAD_TARGET,
        ratio=value,
        round_ratios=per_round,
        note="p99 ÷ median (median of round p99s ÷ median of round medians); min/p99 columns: "
        "lowest and highest round",
    )


# --- sanity --------------------------------------------------------------------------------------


def _result(text: str | bytes) -> dict[str, Any]:
    message = json.loads(text)
    if "result" not in message:
        raise SystemExit(f"bench_mcp: an error instead of a result: {str(text)[:500]}")
    found: dict[str, Any] = message["result"]
    return found


def sanity_check(servers: dict[str, Any]) -> dict[str, Any]:
    """Every server answers both requests correctly; the sizes of the answers. Stops on a failure."""
    sdk, mlh, endpoint, stub = servers["sdk"], servers["mlh"], servers["toolfront"], servers["stub"]
    events, ctx = servers["events"], servers["ctx"]
    sizes: dict[str, int] = {}

    status, body = sdk.post_now(LIST_BODY.encode(), asgi_headers())
    tools = _result(body)["tools"]
    assert status == 200 and len(tools) == N_TOOLS, (status, body[:300])
    sizes["sdk_list"] = len(body)
    status, body = sdk.post_now(CALL_BODY.encode(), asgi_headers())
    assert status == 200 and _result(body)["content"][0]["text"] == SDK_ANSWER, (status, body)
    sizes["sdk_call"] = len(body)
    modern = {"mcp-method": "tools/call", "mcp-name": f"get_product{CALLED:03d}"}
    status, body = sdk.post_now(SDK_MODERN_CALL_BODY.encode(), asgi_headers(MODERN, modern))
    found = _result(body)
    assert status == 200 and found["content"][0]["text"] == SDK_ANSWER, (status, body)
    assert found.get("resultType") == "complete", body
    sizes["sdk_call_modern"] = len(body)

    response = mlh.handle_request(events["list"], ctx)
    assert response["statusCode"] == 200 and len(_result(response["body"])["tools"]) == N_TOOLS
    sizes["mlh_list"] = len(response["body"].encode())
    response = mlh.handle_request(events["call"], ctx)
    assert response["statusCode"] == 200, response
    assert _result(response["body"])["content"][0]["text"] == SDK_ANSWER, response
    sizes["mlh_call"] = len(response["body"].encode())

    response = endpoint.handle(events["tf_list"])
    tools = _result(response["body"])["tools"]
    assert response["statusCode"] == 200 and len(tools) == N_TOOLS, response["body"][:300]
    assert tools[0]["inputSchema"] == INPUT_SCHEMA and tools[0]["annotations"]["readOnlyHint"] is True
    sizes["toolfront_list"] = len(response["body"].encode())
    for key, event in (("toolfront_call", events["tf_call"]), ("toolfront_call_modern", events["tf_modern"])):
        stub.last = None
        response = endpoint.handle(event)
        found = _result(response["body"])
        assert response["statusCode"] == 200, response
        assert found["structuredContent"] == {"ok": True} and found["isError"] is False, response
        assert stub.last is not None and stub.last.tool == f"bench.get_product{CALLED:03d}", stub.last
        assert stub.last.arguments == ARGUMENTS, stub.last
        sizes[key] = len(response["body"].encode())
    assert _result(endpoint.handle(events["tf_modern"])["body"]).get("resultType") == "complete"

    tools = servers["floor_tools"]
    sizes["floor_list"] = len(list_floor(tools)(events["list"]).encode())
    sizes["floor_call"] = len(call_floor(servers["functions"])(events["call"]).encode())
    return {"response_bytes": sizes, "tools": N_TOOLS}


# --- cProfile of toolfront's two paths ------------------------------------------------------------


def _where(func: tuple[str, int, str]) -> str:
    file, line, name = func
    if file == "~":
        return name
    parts = Path(file).parts
    short = "/".join(parts[parts.index("toolfront") :]) if "toolfront" in parts else Path(file).name
    return f"{short}:{line}({name})"


def profile(call: Callable[[Any], Any], arg: Any, calls: int) -> dict[str, Any]:
    """Where toolfront's time goes: top functions by own and by cumulative time (shares of total).

    cProfile inflates small functions: read the shares as a ranking, not as µs.
    """
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(calls):
        call(arg)
    prof.disable()
    stats = pstats.Stats(prof)
    total = sum(tt for _, _, tt, _, _ in stats.stats.values())  # type: ignore[attr-defined]
    entries = []
    for func, (_cc, ncalls, tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        entries.append(
            {
                "function": _where(func),
                "calls_per_request": round(ncalls / calls, 2),
                "self_share": round(tt / total, 4),
                "cumulative_share": round(ct / total, 4),
            }
        )

    def ranked(key: str, keep: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
        return sorted((e for e in entries if keep(e)), key=lambda e: -e[key])[:TOP_OFFENDERS]

    return {
        "calls": calls,
        "profiled_us_per_call": round(total / calls * 1e6, 2),
        "top_self": ranked("self_share", lambda e: True),
        "top_cumulative": ranked("cumulative_share", lambda e: e["function"].startswith("toolfront/")),
    }


# --- fresh subprocesses --------------------------------------------------------------------------

FLOOR = "import boto3; boto3.client('dynamodb', region_name='us-east-1')"
NO_SDK = f"""
import sys
loaded = sorted(m for m in sys.modules if m.split('.')[0] in {SDK_MODULES!r})
if loaded:
    raise SystemExit('the SDK was imported: ' + ', '.join(loaded))
"""


def _import_gateway() -> str:
    """The floor, then the gateway imported as Lambda does, timed in-process too (ms, with its GC)."""
    paths = [str(FUNCTIONS_DIR / "gateway"), str(LAYER_DIR)]
    return f"""{FLOOR}
import gc, json, sys, time
collected = []
started = [0]


def gc_watch(phase, info):
    if phase == "start":
        started[0] = time.perf_counter_ns()
    else:
        collected.append((time.perf_counter_ns() - started[0]) / 1e6)


gc.callbacks.append(gc_watch)
sys.path[:0] = {paths!r}
t0 = time.perf_counter_ns()
import app
import_ms = (time.perf_counter_ns() - t0) / 1e6
gc.callbacks.remove(gc_watch)
{NO_SDK}
print({RESULT_PREFIX!r} + json.dumps({{"import_ms": import_ms, "gc_ms": sum(collected)}}))
"""


COLD_COMMANDS = {
    "pass": "pass",
    "floor": FLOOR,
    "gateway": _import_gateway(),
    "sdk": f"{FLOOR}\nfrom mcp.server.mcpserver import MCPServer",
    "mlh": f"{FLOOR}\nfrom awslabs.mcp_lambda_handler import MCPLambdaHandler",
}
CHECK_ENV = {  # what the gateway's settings need once it serves (never read at import)
    "TOOLFRONT_KEYS_TABLE": "bench-unused-keys",
    "TOOLFRONT_PRINCIPALS_TABLE": "bench-unused-principals",
    "TOOLFRONT_IDEMPOTENCY_TABLE": "bench-unused-idempotency",
    "TOOLFRONT_RATE_LIMITS_TABLE": "bench-unused-rate-limits",
}
CHECK = f"""
import sys
sys.path[:0] = [{str(BENCH_DIR)!r}, {str(LAYER_DIR)!r}]
import bench_mcp
bench_mcp.child_check()
"""


def load_function(name: str) -> Any:
    """``functions/<name>/app.py`` under a name of its own, its folder first on the path (as Lambda)."""
    import importlib.util

    path = FUNCTIONS_DIR / name / "app.py"
    spec = importlib.util.spec_from_file_location(f"function_{name}_app", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module


def child_check() -> None:
    """In a fresh process: import every function, serve anonymous MCP through the gateway, report."""
    before = set(sys.modules)
    functions = sorted(p.parent.name for p in FUNCTIONS_DIR.glob("*/app.py"))
    modules = {name: load_function(name) for name in functions}
    after_import = sorted(m for m in sys.modules if m.split(".")[0] in SDK_MODULES)
    gateway = modules["gateway"]
    answers = {}
    for method in ("initialize", "tools/list"):
        params = {
            "protocolVersion": HANDSHAKE,
            "capabilities": {},
            "clientInfo": {"name": "b", "version": "1"},
        }
        event = api_event(rpc(method, params if method == "initialize" else None))
        response = gateway.lambda_handler(event, FakeContext())
        answers[method] = response["statusCode"]
        if method == "tools/list":
            answers["tools_listed"] = len(json.loads(response["body"])["result"]["tools"])
    heavy = ("mcp", "mcp_types", "moto", "werkzeug", "cfnlint", "jsonschema", "pydantic", "starlette")
    result = {
        "functions": functions,
        "sdk_after_import": after_import,
        "sdk_after_serving": sorted(m for m in sys.modules if m.split(".")[0] in SDK_MODULES),
        "heavy_loaded": sorted({m.split(".")[0] for m in set(sys.modules) - before} & set(heavy)),
        "boto3_loaded": "boto3" in sys.modules,
        "answers": answers,
    }
    print(RESULT_PREFIX + json.dumps(result))


def _child_result(stdout: str) -> dict[str, Any]:
    for line in reversed(stdout.splitlines()):
        if line.startswith(RESULT_PREFIX):
            found: dict[str, Any] = json.loads(line[len(RESULT_PREFIX) :])
            return found
    raise RuntimeError(f"the check child printed no result: {stdout[-2000:]}")


def subprocess_rows(quick: bool) -> tuple[list[Row], dict[str, Any]]:
    from bench_registry import _run, _subprocess_row

    repeats = QUICK_REPEATS if quick else FULL_REPEATS
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "TOOLFRONT_", "AWS_ENDPOINT"))}
    commands = {key: [sys.executable, "-c", code] for key, code in COLD_COMMANDS.items()}
    for cmd in commands.values():  # warm the .pyc caches; unmeasured
        _run(cmd, env)
    walls: dict[str, list[float]] = {k: [] for k in commands}
    in_process: list[dict[str, float]] = []
    for _ in range(repeats):
        for key, cmd in commands.items():
            wall, out, _err = _run(cmd, env)
            walls[key].append(wall)
            if key == "gateway":
                in_process.append(_child_result(out))
    check = _child_result(_run([sys.executable, "-c", CHECK], {**env, **CHECK_ENV})[1])
    if check["sdk_after_import"] or check["sdk_after_serving"]:
        raise SystemExit(f"bench_mcp: a Lambda function imported the MCP SDK: {check}")
    if check["answers"].get("tools/list") != 200 or check["answers"].get("initialize") != 200:
        raise SystemExit(f"bench_mcp: the gateway did not serve anonymous MCP: {check}")

    def minus(key: str, base: str) -> list[float]:
        return [w - b for w, b in zip(walls[key], walls[base], strict=True)]

    rows = [
        _subprocess_row(
            "mcp_cold_floor", "cold: boto3 + dynamodb client, wall - pass", minus("floor", "pass")
        ),
        _subprocess_row(
            "mcp_cold_sdk",
            "ref cold: `from mcp.server.mcpserver import MCPServer` - floor",
            minus("sdk", "floor"),
        ),
        _subprocess_row(
            "mcp_cold_mlh",
            "ref cold: `awslabs.mcp_lambda_handler` - floor",
            minus("mlh", "floor"),
            note="it imports boto3 itself: the floor already holds it",
        ),
        _subprocess_row(
            "mcp_cold_gateway",
            "cold: import gateway app.py - floor (no mcp loaded)",
            minus("gateway", "floor"),
            baseline="mcp_cold_sdk",
            note="ratio: to the SDK's import; the 55 ms budget row is in the rest section",
        ),
    ]
    paired = [a / b for a, b in zip(minus("gateway", "floor"), minus("sdk", "floor"), strict=True)]
    rows[-1].round_ratios = paired
    rows += [
        _subprocess_row(
            "mcp_cold_gateway_in_process",
            "cold: gateway import timed in-process",
            [c["import_ms"] for c in in_process],
            note="perf_counter around `import app` after the floor: no interpreter start or exit",
        ),
        _subprocess_row(
            "mcp_cold_gateway_gc",
            "cold: of which garbage collection",
            [c["gc_ms"] for c in in_process],
        ),
    ]
    link_ratios(rows)
    extra = {
        "repeats": repeats,
        "module_check": check,
        "samples_ms": {k: [round(v, 3) for v in vs] for k, vs in walls.items()},
        "python_c_pass_ms_median": round(statistics.median(walls["pass"]), 3),
    }
    return rows, extra


# --- the section ---------------------------------------------------------------------------------


def _quiet_loggers() -> dict[str, int]:
    """The SDK's and mcp-lambda-handler's loggers at WARNING (their old levels, to restore)."""
    saved = {}
    for name in ("mcp", "awslabs", "uvicorn", "sse_starlette"):
        logger = logging.getLogger(name)
        saved[name] = logger.level
        logger.setLevel(logging.WARNING)
    return saved


def in_process_rows(quick: bool) -> tuple[list[Row], dict[str, Any]]:
    sizes_n = QUICK_N if quick else FULL_N
    saved = _quiet_loggers()
    sdk = AsgiClient(sdk_app())
    sdk.start()
    try:
        return _measure(quick, sizes_n, sdk)
    finally:
        sdk.close()
        for name, level in saved.items():
            logging.getLogger(name).setLevel(level)


def _measure(quick: bool, n: dict[str, int], sdk: AsgiClient) -> tuple[list[Row], dict[str, Any]]:
    mlh = lambda_handler_server()
    endpoint, stub = toolfront_endpoint()
    ctx = FakeContext()
    functions = {f"get_product{i:03d}": product_function(i) for i in range(N_TOOLS)}
    modern = {"mcp-method": "tools/call", "mcp-name": f"bench.get_product{CALLED:03d}"}
    events = {
        "list": api_event(LIST_BODY),
        "call": api_event(CALL_BODY),
        "tf_list": api_event(LIST_BODY),
        "tf_call": api_event(TF_CALL_BODY),
        "tf_modern": api_event(TF_MODERN_CALL_BODY, MODERN, modern),
    }
    floor_tools = list(mlh.tools.values())
    found = sanity_check(
        {
            "sdk": sdk,
            "mlh": mlh,
            "toolfront": endpoint,
            "stub": stub,
            "events": events,
            "ctx": ctx,
            "floor_tools": floor_tools,
            "functions": functions,
        }
    )

    list_body, call_body = LIST_BODY.encode(), CALL_BODY.encode()
    modern_body = SDK_MODERN_CALL_BODY.encode()
    list_headers, call_headers = asgi_headers(), asgi_headers()
    modern_headers = asgi_headers(
        MODERN, {"mcp-method": "tools/call", "mcp-name": f"get_product{CALLED:03d}"}
    )
    handle_request = mlh.handle_request
    tf_handle = endpoint.handle

    list_specs: list[Spec] = [
        Spec(
            "mcp_list_floor",
            "floor: json.loads + precomputed list + json.dumps",
            list_floor(floor_tools),
            n["list"],
            arg=events["list"],
            note="the mcp-lambda-handler list as dicts, encoded on every call (perf-anchors floor)",
        ),
        AsyncSpec(
            "mcp_list_sdk",
            f"SDK tools/list 200 tools, {HANDSHAKE} stateless (ASGI)",
            sdk.post,
            n["sdk_list"],
            loop=sdk.loop,
            coroutine=lambda: sdk.post(list_body, list_headers),
        ),
        Spec(
            "mcp_list_mlh",
            "mcp-lambda-handler tools/list 200 tools (baseline)",
            lambda event: handle_request(event, ctx),
            n["list"],
            arg=events["list"],
        ),
        Spec(
            "mcp_list_toolfront",
            "toolfront McpEndpoint tools/list 200 tools, anonymous",
            tf_handle,
            n["toolfront"],
            arg=events["tf_list"],
            baseline="mcp_list_mlh",
            target=LIST_TARGET,
        ),
    ]
    call_specs: list[Spec] = [
        Spec(
            "mcp_call_floor",
            "floor: json.loads + direct call + json.dumps",
            call_floor(functions),
            n["call"],
            arg=events["call"],
        ),
        AsyncSpec(
            "mcp_call_sdk",
            f"SDK tools/call trivial, {HANDSHAKE} stateless (ASGI)",
            sdk.post,
            n["sdk_call"],
            loop=sdk.loop,
            coroutine=lambda: sdk.post(call_body, call_headers),
        ),
        AsyncSpec(
            "mcp_call_sdk_modern",
            f"ref: SDK tools/call trivial, {MODERN} (ASGI)",
            sdk.post,
            n["sdk_call"],
            loop=sdk.loop,
            coroutine=lambda: sdk.post(modern_body, modern_headers),
        ),
        Spec(
            "mcp_call_mlh",
            "mcp-lambda-handler tools/call trivial (baseline)",
            lambda event: handle_request(event, ctx),
            n["call"],
            arg=events["call"],
        ),
        Spec(
            "mcp_call_toolfront",
            "toolfront McpEndpoint tools/call, stub caller, anonymous",
            tf_handle,
            n["toolfront"],
            arg=events["tf_call"],
            baseline="mcp_call_mlh",
            target=CALL_TARGET,
            note="the gateway's own work: JSON-RPC, anonymous actor, routing, result shaping",
        ),
        Spec(
            "mcp_call_toolfront_modern",
            f"ref: toolfront tools/call, {MODERN}",
            tf_handle,
            n["toolfront"],
            arg=events["tf_modern"],
            baseline="mcp_call_sdk_modern",
        ),
    ]
    listed = run_interleaved(list_specs)
    called = run_interleaved(call_specs)
    by_key = {r.key: r for r in listed.rows + called.rows}
    rows = [
        *listed.rows,
        compared(
            by_key["mcp_list_toolfront"],
            "mcp_list_toolfront_vs_sdk",
            "  toolfront tools/list ÷ SDK",
            "mcp_list_sdk",
        ),
        spread_row(
            by_key["mcp_list_toolfront"],
            listed.round_p99s["mcp_list_toolfront"],
            "mcp_list_toolfront_spread",
            "  toolfront tools/list p99 ÷ median",
        ),
        *called.rows,
        compared(
            by_key["mcp_call_toolfront"],
            "mcp_call_toolfront_vs_sdk",
            "  toolfront tools/call ÷ SDK",
            "mcp_call_sdk",
        ),
        spread_row(
            by_key["mcp_call_toolfront"],
            called.round_p99s["mcp_call_toolfront"],
            "mcp_call_toolfront_spread",
            "  toolfront tools/call p99 ÷ median",
        ),
    ]
    link_ratios(rows)
    p99s = {**listed.round_p99s, **called.round_p99s}
    found["p99_over_median"] = {
        r.key: round(r.p99 / r.median, 3) for r in listed.rows + called.rows if r.key in p99s
    }
    found["profile"] = {
        "tools_list": profile(tf_handle, events["tf_list"], PROFILE_CALLS["list"] // (5 if quick else 1)),
        "tools_call": profile(tf_handle, events["tf_call"], PROFILE_CALLS["call"] // (5 if quick else 1)),
    }
    return rows, found


def run(quick: bool = False) -> Section:
    """The in-process rows, then the subprocess rows, in one section named ``mcp``."""
    section = Section("mcp", canary_before=canary())
    rows, found = in_process_rows(quick)
    cold_rows, cold = subprocess_rows(quick)
    section.rows = rows + cold_rows
    section.canary_after = canary()
    section.extra.update({"n": QUICK_N if quick else FULL_N, "sanity": found, "cold": cold})
    section.extra["summary"] = summary(section.rows, found, cold)
    return section


def summary(rows: list[Row], found: dict[str, Any], cold: dict[str, Any]) -> list[str]:
    """Lines printed under the table: sizes and p99 ÷ median per server, the module check, offenders."""
    sizes = found["response_bytes"]
    spreads = found["p99_over_median"]
    size_of = {
        "mcp_list_floor": "floor_list",
        "mcp_list_sdk": "sdk_list",
        "mcp_list_mlh": "mlh_list",
        "mcp_list_toolfront": "toolfront_list",
        "mcp_call_floor": "floor_call",
        "mcp_call_sdk": "sdk_call",
        "mcp_call_sdk_modern": "sdk_call_modern",
        "mcp_call_mlh": "mlh_call",
        "mcp_call_toolfront": "toolfront_call",
        "mcp_call_toolfront_modern": "toolfront_call_modern",
    }
    by_key = {r.key: r for r in rows}
    lines = ["mcp: response body and p99 ÷ median per row:"]
    for key, size in size_of.items():
        row = by_key[key]
        lines.append(
            f"    {row.label:<62} {sizes[size]:>8} B   median {row.median:>9.2f} µs"
            f"   p99/median {spreads[key]:5.2f}"
        )
    sdk_ratio = by_key["mcp_list_toolfront_vs_sdk"].ratio
    if sdk_ratio is not None:
        verdict = "meets" if sdk_ratio <= SDK_LIST_AIM else "misses"
        lines.append(
            f"mcp: toolfront tools/list is {sdk_ratio:.4f}x the SDK's: {verdict} the anchors' aim of"
            f" <= {SDK_LIST_AIM:g}x"
        )
    check = cold["module_check"]
    lines.append(
        f"mcp: after importing {', '.join(check['functions'])} and serving anonymous initialize +"
        f" tools/list ({check['answers'].get('tools_listed')} tools) through the gateway: mcp/mcp_types"
        f" loaded: {check['sdk_after_serving'] or 'none'}; other heavy packages: "
        f"{check['heavy_loaded'] or 'none'}; boto3 loaded: {check['boto3_loaded']}"
    )
    missed = {r.key for r in rows if r.status == "MISS"}
    for name, key in (("tools_list", "mcp_list_toolfront"), ("tools_call", "mcp_call_toolfront")):
        prof = found["profile"][name]
        misses = {key, f"{key}_spread"} & missed
        head = "MISSED TARGET, " if misses else ""
        lines.append(
            f"mcp: {head}toolfront {name} by cProfile (own time share, calls per request;"
            f" {prof['profiled_us_per_call']} µs per call under the profiler):"
        )
        for e in prof["top_self"][: TOP_OFFENDERS if misses else 5]:
            lines.append(f"    {e['self_share']:6.1%}  x{e['calls_per_request']:<6g} {e['function']}")
    return lines


if __name__ == "__main__":
    from harness import format_table

    result = run(quick="--quick" in sys.argv)
    print(format_table([result]))
    print("\n".join(result.extra["summary"]))
