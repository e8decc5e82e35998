"""MCP, server side: toolfront's ``McpEndpoint`` against the official SDK and mcp-lambda-handler.

Baselines and targets: docs/performance.md, "5. MCP servers" and "Targets", item 6. Everything runs
in this process, no network:

- **the official SDK** (``mcp`` 2.3.0): ``MCPServer`` with 200 tools
  ``fn(sku: str, quantity: int = 1, locale: str = "en-GB") -> str``, served by
  ``streamable_http_app(stateless_http=True, json_response=True)`` and called as an ASGI app with a
  hand-built scope, ``receive`` and ``send``, after entering its lifespan once. Each request is
  awaited and timed inside one event loop. Protocol 2025-11-25 (``MCP-Protocol-Version`` header);
  2026-07-28 (single exchange, ``_meta`` and the ``mcp-method``/``mcp-name`` headers) is a reference
  for ``tools/call``;
- **awslabs mcp-lambda-handler**: ``MCPLambdaHandler("bench")`` with the same 200 functions through
  ``@tool()``, called as ``handle_request(http_api_v2_event, ctx)``;
- **toolfront**: ``McpEndpoint(ToolCatalog(entries), call_tool, authenticate)`` behind the HTTP edge
  (``Edge``, as the gateway serves ``POST /mcp``) for the same API Gateway v2 event. The 200 entries
  are ``Tool.new(...).describe()`` of public tools of the module ``bench`` (what ``toolfront
  manifest`` writes); ``authenticate`` is a real ``Authenticator`` over a key store that raises if
  asked anything (an anonymous caller needs no store);
  ``call_tool`` is a stub answering ``(200, {"data": {"ok": True}, "request_id": "r"})``, so
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

The parts: ``mcp_requests`` (tools, bodies, events), ``mcp_sdk`` (the SDK over ASGI), ``mcp_mlh``
(mcp-lambda-handler and the floors), ``mcp_toolfront`` (the endpoint and its profile),
``mcp_timing``, ``mcp_sanity`` and ``mcp_cold``; this module runs them as one section.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from harness import Row, Section, Spec, canary, link_ratios
from mcp_cold import subprocess_rows
from mcp_mlh import call_floor, lambda_handler_server, list_floor
from mcp_requests import (
    CALL_BODY,
    CALLED,
    HANDSHAKE,
    LIST_BODY,
    MODERN,
    N_TOOLS,
    SDK_MODERN_CALL_BODY,
    TF_CALL_BODY,
    TF_MODERN_CALL_BODY,
    FakeContext,
    api_event,
    asgi_headers,
    product_function,
)
from mcp_sanity import sanity_check
from mcp_sdk import AsgiClient, sdk_app
from mcp_timing import AsyncSpec, compared, run_interleaved, spread_row
from mcp_toolfront import TOP_OFFENDERS, profile, toolfront_endpoint

#: Per round: the baselines' n (500-1 000 for the SDK, 1 000-5 000 for mcp-lambda-handler), as in
#: docs/performance.md, "Timing method".
FULL_N = {"sdk_list": 500, "sdk_call": 1000, "list": 2000, "call": 5000, "toolfront": 5000}
QUICK_N = {"sdk_list": 60, "sdk_call": 100, "list": 200, "call": 500, "toolfront": 1000}
PROFILE_CALLS = {"list": 3000, "call": 20000}
#: Targets (docs/performance.md, "Targets", item 6), of toolfront against mcp-lambda-handler.
LIST_TARGET = 0.1
CALL_TARGET = 1.0
SDK_LIST_AIM = 0.01  # "Targets" item 6's aim against the SDK's tools/list (reported, not a row target)


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
    tf_handle = endpoint

    list_specs: list[Spec] = [
        Spec(
            "mcp_list_floor",
            "floor: json.loads + precomputed list + json.dumps",
            list_floor(floor_tools),
            n["list"],
            arg=events["list"],
            note="the mcp-lambda-handler list as dicts, encoded on every call (the anchors' floor)",
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
