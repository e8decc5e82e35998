"""Large registries: 2,000 tools in one function (docs/performance.md, "Large registries").

Targets (section 21): a search over 2,000 tools, median <= 1 ms; the index built at cold start in
<= 50 ms; a ``tools/list`` page of 100 over 2,000 tools <= 0.1x the MCP SDK server's full list of
the same tools. Memory per 1,000 tools is reported.

The tools: ``large_registry`` (2,000 generated manifest entries, 50 families, 88 public). The
callers: a key holding every family's scopes and permission (sees all 2,000), an anonymous caller
(the 88 public tools) and, for reference, a key holding 5 families (200 tools).

In this process (the harness's method: 3 rounds, interleaved, each call timed on its own):

- ``tools/list``: toolfront's ``McpEndpoint`` behind the HTTP edge (``POST /mcp`` as the gateway
  serves it, pages of 100) against the SDK's low-level ``Server`` answering the same 2,000 tools
  (``large_sdk``: handler + serialisation, no transport). The key's lookup is left out: the bench's
  ``authenticate`` answers the all-families actor when a key is sent (it is DynamoDB's cost, the same
  for a page of any size); an anonymous request goes through the real ``Authenticator``;
- search: ``found_tools`` (what ``system.search_tools`` answers) for 200 queries (``large_queries``),
  each sample one query, the 200 in turn;
- the index and the catalog built again in a warm process (reference for the cold figures).

In fresh interpreters (``large_cold``): the build at cold start, step by step, and the memory.
Where the time goes (``large_fixture``): search time per query kind, and cProfile of the index, the
catalog and the searches, in the JSON and under the table (in full for a missed target).
"""

from __future__ import annotations

import asyncio
import itertools
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from harness import ROUNDS, Row, Section, Spec, canary, link_ratios, percentile
from large_cold import subprocess_rows
from large_fixture import PAGE, PROFILED, Fixture, by_kind, profiles, sanity
from large_sdk import SlowAsyncSpec, sdk_asgi_app
from mcp_requests import LIST_BODY, asgi_headers
from mcp_sdk import AsgiClient
from mcp_timing import compared, run_interleaved, spread_row
from rest_rows import BudgetRow

FULL_N = {"sdk": 30, "ref": 10, "asgi": 10, "list": 2000, "search": 2000, "build": 10}
QUICK_N = {"sdk": 5, "ref": 3, "asgi": 0, "list": 300, "search": 400, "build": 3}
LIST_TARGET = 0.1  # of the SDK's full list
SEARCH_BUDGET_US = 1000.0
INDEX_BUDGET_MS = 50.0


# --- rows ---------------------------------------------------------------------------------------


def list_rows(fx: Fixture, loop: Any, n: dict[str, int], cursors: list[str]) -> tuple[list[Row], Any]:
    page_event = fx.list_event(cursors[PAGE - 2])
    clear = fx.endpoint._visible.clear  # the per-rights name cache: a new caller's first page
    first = fx.list_event()

    async def new_rights() -> Any:
        clear()
        return fx.edge(first)

    specs: list[Spec] = [
        SlowAsyncSpec(
            "large.list_sdk",
            "SDK tools/list, 2,000 tools: handler + serialisation (baseline)",
            fx.sdk.handle,
            n["sdk"],
            loop=loop,
            coroutine=fx.sdk.handle,
        ),
        SlowAsyncSpec(
            "large.list_sdk_sieved",
            "ref: SDK tools/list + the runner's per-version sieve",
            fx.sdk.handle_sieved,
            n["ref"],
            loop=loop,
            coroutine=fx.sdk.handle_sieved,
        ),
        Spec(
            "large.list_admin",
            "toolfront tools/list page 1 of 20 (all-families key)",
            fx.edge,
            n["list"],
            arg=first,
            baseline="large.list_sdk",
            target=LIST_TARGET,
        ),
        Spec(
            "large.list_admin_cursor",
            f"toolfront tools/list page {PAGE} of 20 (cursor checked)",
            fx.edge,
            n["list"],
            arg=page_event,
            baseline="large.list_sdk",
            target=LIST_TARGET,
        ),
        Spec(
            "large.list_anonymous",
            "toolfront tools/list, anonymous (88 public tools, 1 page)",
            fx.edge,
            n["list"],
            arg=fx.list_event(admin=False),
            baseline="large.list_sdk",
            target=LIST_TARGET,
        ),
        SlowAsyncSpec(
            "large.list_new_rights",
            "ref: toolfront page 1, a caller's first (visibility computed)",
            new_rights,
            n["ref"] * 3,
            loop=loop,
            coroutine=new_rights,
            baseline="large.list_sdk",
            note="the endpoint keeps the visible names per rights; this clears them before each call",
        ),
    ]
    asgi = None
    if n["asgi"]:
        asgi = AsgiClient(sdk_asgi_app(fx.sdk.server))
        asgi.start()
        body, headers = LIST_BODY.encode(), asgi_headers()
        specs.insert(
            2,
            SlowAsyncSpec(
                "large.list_sdk_asgi",
                "ref: SDK stateless Streamable HTTP app (ASGI)",
                asgi.post,
                n["asgi"],
                loop=asgi.loop,
                coroutine=lambda: asgi.post(body, headers),
                warm_up=2,
            ),
        )
    try:
        measured = run_interleaved(specs)
    finally:
        if asgi is not None:
            asgi.close()
    by_key = {r.key: r for r in measured.rows}
    extra = [
        spread_row(
            by_key["large.list_admin"],
            measured.round_p99s["large.list_admin"],
            "large.list_admin_spread",
            "  toolfront page 1 p99 ÷ median",
        ),
    ]
    if "large.list_sdk_asgi" in by_key:
        extra.append(
            compared(
                by_key["large.list_admin"],
                "large.list_admin_vs_asgi",
                "  toolfront page 1 ÷ SDK over ASGI",
                "large.list_sdk_asgi",
            )
        )
    rows = [*measured.rows, *extra]
    link_ratios(rows)
    return rows, measured.round_p99s


def search_rows(fx: Fixture, n: int) -> list[Row]:
    from toolfront.tools.search import found_tools

    tools, texts = fx.tools, [q.text for q in fx.queries]

    def spec(key: str, label: str, actor: Any) -> Spec:
        turn = itertools.cycle(texts).__next__
        return Spec(key, label, lambda q: found_tools(tools, q, actor), n, setup=turn)

    measured = run_interleaved(
        [
            spec("large.search_admin", "search, 200 queries in turn, all-families key", fx.admin),
            spec("large.search_anonymous", "search, 200 queries in turn, anonymous", fx.anonymous),
            spec("large.search_partial", "ref: search, a key of 5 families (200 tools)", fx.partial),
        ]
    )
    rows: list[Row] = []
    for row in measured.rows:
        target = None if row.key == "large.search_partial" else SEARCH_BUDGET_US
        rows.append(BudgetRow(**{**row.__dict__, "target": target, "note": "target: median <= 1 ms"}))
    return rows


def slow_row(key: str, label: str, fn: Callable[[], Any], n: int, target: float | None = None) -> Row:
    """A call of tens of milliseconds, in ms: 2 warm-up calls, then ``n`` per round, 3 rounds."""
    medians, p99s, low = [], [], float("inf")
    for _ in range(ROUNDS):
        for _ in range(2):
            fn()
        samples = []
        for _ in range(n):
            t0 = time.perf_counter_ns()
            fn()
            samples.append((time.perf_counter_ns() - t0) / 1e6)
        samples.sort()
        medians.append(statistics.median(samples))
        p99s.append(percentile(samples, 99))
        low = min(low, samples[0])
    fields: dict[str, Any] = {
        "key": key,
        "label": label,
        "unit": "ms",
        "n": n,
        "rounds": ROUNDS,
        "median": statistics.median(medians),
        "min": low,
        "p99": statistics.median(p99s),
        "round_medians": medians,
        "target": target,
    }
    return BudgetRow(**fields) if target is not None else Row(**fields)


def build_rows(fx: Fixture, n: int) -> list[Row]:
    from toolfront.adapters.mcp.results import ToolCatalog
    from toolfront.tools.search import ToolIndex

    return [
        slow_row(
            "large.warm_index",
            "warm process: ToolIndex over 2,000 tools",
            lambda: ToolIndex(fx.tools),
            n,
            INDEX_BUDGET_MS,
        ),
        slow_row(
            "large.warm_catalog",
            "ref: warm process: ToolCatalog over 2,000 tools",
            lambda: ToolCatalog(fx.tools),
            n,
        ),
    ]


def run(quick: bool = False) -> Section:
    n = QUICK_N if quick else FULL_N
    section = Section("large registry (2,000 tools)", canary_before=canary())
    fx = Fixture()
    loop = asyncio.new_event_loop()
    try:
        found, cursors = sanity(fx, loop)
        listed, _ = list_rows(fx, loop, n, cursors)
    finally:
        loop.close()
    rows = [*listed, *search_rows(fx, n["search"]), *build_rows(fx, n["build"])]
    cold_rows, cold = subprocess_rows(quick)
    rows += cold_rows
    section.rows = rows
    section.extra.update(
        {
            "n": n,
            "sanity": found,
            "search_by_kind": by_kind(fx),
            "profile": profiles(fx, quick),
            "cold": cold,
        }
    )
    section.canary_after = canary()
    section.extra["summary"] = summary(section)
    return section


def summary(section: Section) -> list[str]:
    extra, by_key = section.extra, {r.key: r for r in section.rows}
    sanity_found = extra["sanity"]
    lines = [
        f"large: answers: SDK full list {sanity_found['sdk_answer_bytes']:,} B, toolfront page of 100"
        f" {sanity_found['toolfront_page_bytes']:,} B; task queries found in the top 5:"
        f" {sanity_found['task_queries_top5']}",
    ]
    ratio = by_key["large.list_admin"].ratio
    if ratio is not None:
        lines.append(
            f"large: toolfront page of 100 ÷ SDK full list of 2,000: {ratio:.4f} (target <= {LIST_TARGET})"
        )
    for caller, found in extra["search_by_kind"].items():
        kinds = ", ".join(f"{k} {us:g}" for k, us in found["median_us_by_kind"].items())
        slowest = "; ".join(f"{s['query']!r} {s['us']:g}" for s in found["slowest"][:3])
        lines.append(f"large: search ({caller}) median µs by kind: {kinds}; slowest: {slowest}")
    builds = extra["cold"]["builds"]
    modules = builds[0]["search_modules"]
    lines.append(f"large: import toolfront.tools.search loads {len(modules)} modules: {', '.join(modules)}")
    missed = {r.key for r in section.rows if r.status == "MISS"}
    for name, prof in extra["profile"].items():
        miss = bool(missed & set(PROFILED[name]))
        lines.append(
            f"large: {'MISSED TARGET, ' if miss else ''}{name} by cProfile (own time share, calls per"
            f" call; {prof['profiled_us_per_call']:g} µs per call under the profiler):"
        )
        for entry in prof["top_self"][: 8 if miss else 4]:
            lines.append(
                f"    {entry['self_share']:6.1%}  x{entry['calls_per_request']:<8g} {entry['function']}"
            )
    return lines


if __name__ == "__main__":
    from harness import format_table

    result = run(quick="--quick" in sys.argv)
    print(format_table([result]))
    print("\n".join(result.extra["summary"]))
