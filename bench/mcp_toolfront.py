"""toolfront's side of the mcp bench: ``McpEndpoint`` over 200 manifest entries, and its cProfile."""

from __future__ import annotations

import cProfile
import json
import pstats
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_requests import INPUT_SCHEMA, N_TOOLS, description

STUB_ANSWER = (200, {"data": {"ok": True}, "request_id": "r"})
TOP_OFFENDERS = 8


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
    """``POST /mcp`` as the gateway serves it: the endpoint behind the HTTP edge (event in, event out)."""
    from toolfront.adapters.http import Edge, Route
    from toolfront.adapters.mcp.endpoint import McpEndpoint, rpc_refusal
    from toolfront.adapters.mcp.results import ToolCatalog
    from toolfront.auth.authenticator import Authenticator

    stub = StubCaller()
    authenticator = Authenticator(NeverCalledStore())  # type: ignore[arg-type]
    endpoint = McpEndpoint(
        ToolCatalog(manifest_entries()),
        stub,
        authenticator.authenticate,
        records=lambda actor, tool, key: None,  # no call here is sent as a task
    )
    return Edge({"POST /mcp": Route(endpoint, rpc_refusal)}), stub


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
