"""The large-registry bench's fixture and checks: the tools, callers and both servers, built once;
the sanity checks run before timing; and where the time goes (search per query kind, cProfile).
"""

from __future__ import annotations

import itertools
import json
import statistics
import time
from typing import Any

from large_queries import N_QUERIES, Query, queries
from large_registry import admin_actor, anonymous_actor, manifest_entries
from large_sdk import SdkList, sdk_list
from mcp_requests import LIST_BODY, api_event, rpc
from mcp_toolfront import NeverCalledStore, profile

PARTIAL_FAMILIES = ("catalogue", "orders", "customers", "payments", "support")
ADMIN_HEADERS = {"authorization": "Bearer bench"}
PAGE = 11  # the cursor row asks for the 11th page of 20


class Fixture:
    """The tools, the callers, toolfront's endpoint and the SDK's server, built once."""

    def __init__(self) -> None:
        from toolfront.adapters.http import Edge, Route
        from toolfront.adapters.mcp.endpoint import McpEndpoint, rpc_refusal
        from toolfront.adapters.mcp.results import ToolCatalog, tool_entry
        from toolfront.auth.authenticator import Authenticator

        self.tools = manifest_entries()
        self.queries = queries(self.tools)
        self.admin, self.anonymous = admin_actor(), anonymous_actor()
        self.partial = admin_actor(PARTIAL_FAMILIES)
        anonymous = Authenticator(NeverCalledStore()).authenticate  # type: ignore[arg-type]

        def authenticate(headers: Any, source_ip: str) -> Any:
            return self.admin if "authorization" in headers else anonymous(headers, source_ip)

        self.endpoint = McpEndpoint(
            ToolCatalog(self.tools), lambda call: (200, {}), authenticate, records=lambda a, t, k: None
        )
        self.edge = Edge({"POST /mcp": Route(self.endpoint, rpc_refusal)})
        self.entries = [tool_entry(tool) for tool in self.tools]
        self.sdk: SdkList = sdk_list(self.entries)

    def list_event(self, cursor: str | None = None, admin: bool = True) -> dict[str, Any]:
        body = LIST_BODY if cursor is None else rpc("tools/list", {"cursor": cursor})
        return api_event(body, extra=ADMIN_HEADERS if admin else None)

    def page(self, event: dict[str, Any]) -> dict[str, Any]:
        answer = self.edge(event)
        assert answer["statusCode"] == 200, answer
        result: dict[str, Any] = json.loads(answer["body"])["result"]
        return result


# --- sanity: both servers list the same tools; paging and search keep to the caller's rights ------


def sanity(fx: Fixture, loop: Any) -> tuple[dict[str, Any], list[str]]:
    """Check before timing; answer what was found, and the cursors of pages 2 to 20."""
    from toolfront.tools.rules import mcp_name
    from toolfront.tools.search import found_tools

    sdk_body = loop.run_until_complete(fx.sdk.handle())
    sdk_tools = json.loads(sdk_body)["result"]["tools"]
    names = [mcp_name(str(t["name"])) for t in fx.tools]
    assert [t["name"] for t in sdk_tools] == names, "the SDK lists other tools"
    pages, cursor, cursors = [], None, []
    while True:
        result = fx.page(fx.list_event(cursor))
        pages.append(result["tools"])
        cursor = result.get("nextCursor")
        if cursor is None:
            break
        cursors.append(cursor)
    walked = [t for page in pages for t in page]
    assert [len(p) for p in pages] == [100] * 20, [len(p) for p in pages]
    assert [t["name"] for t in walked] == names, "the pages do not walk every tool once, in order"
    assert walked == sdk_tools, "toolfront's entries differ from the SDK's"
    public = [t for t in fx.tools if t["audience"] == "public"]
    anonymous = fx.page(fx.list_event(admin=False))
    assert len(anonymous["tools"]) == len(public) and "nextCursor" not in anonymous
    leaks = 0
    for query in fx.queries:
        for actor, allowed in ((fx.anonymous, ("public",)), (fx.partial, PARTIAL_FAMILIES)):
            for hit in found_tools(fx.tools, query.text, actor):
                tool = next(t for t in fx.tools if t["name"] == hit["name"])
                leaks += tool["audience"] != "public" and tool["module"] not in allowed
    assert leaks == 0, f"{leaks} search results the caller may not call"
    top5 = sum(
        q.tool in [h["name"] for h in found_tools(fx.tools, q.text, fx.admin, 5)]
        for q in fx.queries
        if q.kind == "task"
    )
    page_body = fx.edge(fx.list_event())["body"]
    return {
        "tools": len(fx.tools),
        "public_tools": len(public),
        "pages_walked": len(pages),
        "cursor_page": PAGE,
        "sdk_answer_bytes": len(sdk_body),
        "toolfront_page_bytes": len(page_body),
        "toolfront_anonymous_page_bytes": len(fx.edge(fx.list_event(admin=False))["body"]),
        "task_queries_top5": f"{top5}/{sum(q.kind == 'task' for q in fx.queries)}",
        "note": "task queries are paraphrases made from the generated tools' own words: not the "
        "relevance test on an outside tool-selection set the project does not see",
    }, cursors


# --- where the time goes --------------------------------------------------------------------------


def by_kind(fx: Fixture) -> dict[str, Any]:
    """Median µs per query kind and the slowest queries, per caller (5 calls per query, one pass)."""
    from toolfront.tools.search import found_tools

    found: dict[str, Any] = {}
    for name, actor in (("admin", fx.admin), ("anonymous", fx.anonymous)):
        per_query: list[tuple[float, Query]] = []
        for query in fx.queries:
            samples = []
            for _ in range(5):
                t0 = time.perf_counter_ns()
                found_tools(fx.tools, query.text, actor)
                samples.append((time.perf_counter_ns() - t0) / 1000)
            per_query.append((statistics.median(samples), query))
        kinds = sorted({q.kind for _, q in per_query})
        found[name] = {
            "median_us_by_kind": {
                k: round(statistics.median(us for us, q in per_query if q.kind == k), 1) for k in kinds
            },
            "slowest": [
                {"query": q.text, "kind": q.kind, "us": round(us, 1)}
                for us, q in sorted(per_query, key=lambda p: -p[0])[:5]
            ],
        }
    return found


#: What each profile explains: the rows whose miss it is printed for in full.
PROFILED = {
    "index": ("large.cold_index", "large.warm_index"),
    "catalog": ("large.cold_catalog",),
    "search_admin": ("large.search_admin",),
    "search_anonymous": ("large.search_anonymous",),
}


def profiles(fx: Fixture, quick: bool) -> dict[str, Any]:
    """cProfile of the index build, the catalog build and the 200 searches for each caller."""
    from toolfront.adapters.mcp.results import ToolCatalog
    from toolfront.tools.search import ToolIndex, found_tools

    builds = 2 if quick else 5
    found = {
        "index": profile(ToolIndex, fx.tools, builds),
        "catalog": profile(ToolCatalog, fx.tools, builds),
    }
    for name, actor in (("admin", fx.admin), ("anonymous", fx.anonymous)):
        texts = itertools.cycle([q.text for q in fx.queries])

        def search(_: Any, texts: Any = texts, actor: Any = actor) -> Any:
            return found_tools(fx.tools, next(texts), actor)

        found[f"search_{name}"] = profile(search, None, N_QUERIES * (1 if quick else 5))
    return found
