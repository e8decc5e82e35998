"""The large-registry bench in fresh interpreters: the build at cold start, and memory per 1,000 tools.

The parent writes the generated manifest (2,000 tools; and the first 25 families, 1,000 tools) to a
temporary directory once. Each build child then does what the gateway does on its first MCP request,
timing each step with ``perf_counter_ns`` and the garbage collections within it (``gc.callbacks``):
``import toolfront``; ``import toolfront.tools.search`` (first, so it pays for every module it needs:
the most it can cost); the endpoint's modules; reading and parsing the manifest and sorting it by
name (``all_tools()``); ``ToolCatalog`` (every MCP entry encoded); ``Pager``; ``McpEndpoint`` (which
builds its own ``Pager``); the search index (``index_of``, as the first ``system.search_tools``
builds it); the first search; the first ``tools/list`` page for a key holding every family.

Memory: ``tracemalloc`` (the bytes still allocated after each step, objects kept alive), and the
process's resident set (``/proc/self/statm``) in a child without tracemalloc.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harness import Row, child_result, run_child, subprocess_row
from rest_rows import BudgetRow

BENCH_DIR = Path(__file__).resolve().parent
PREFIX = "BENCH_LARGE_RESULT "
FULL_REPEATS, QUICK_REPEATS = 10, 3
RSS_REPEATS = 3
INDEX_BUDGET_MS = 50.0  # the index built at cold start in <= 50 ms (docs/performance.md)
FIRST_SEARCH_QUERY = "refund a card payment"


# --- children ------------------------------------------------------------------------------------


class _Clock:
    """Step times (ms) and the garbage collection inside each step."""

    def __init__(self) -> None:
        import gc

        self.steps: dict[str, float] = {}
        self.collected: dict[str, float] = {}
        self._gc_ns = 0
        self._gc_start = 0
        gc.callbacks.append(self._on_gc)
        self._last = time.perf_counter_ns()
        self._last_gc = 0

    def _on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_start = time.perf_counter_ns()
        else:
            self._gc_ns += time.perf_counter_ns() - self._gc_start

    def mark(self, step: str) -> None:
        now = time.perf_counter_ns()
        self.steps[step] = (now - self._last) / 1e6
        self.collected[step] = (self._gc_ns - self._last_gc) / 1e6
        self._last, self._last_gc = time.perf_counter_ns(), self._gc_ns


def _endpoint(catalog: Any) -> tuple[Any, Any]:
    """``POST /mcp`` behind the edge, with a caller that is the all-families key when it sends one."""
    from large_registry import admin_actor, anonymous_actor

    from toolfront.adapters.http import Edge, Route
    from toolfront.adapters.mcp.endpoint import McpEndpoint, rpc_refusal

    admin, anonymous = admin_actor(), anonymous_actor()

    def authenticate(headers: Any, source_ip: str) -> Any:
        return admin if "authorization" in headers else anonymous

    endpoint = McpEndpoint(
        catalog, lambda call: (200, {}), authenticate, records=lambda actor, tool, key: None
    )
    return endpoint, Edge({"POST /mcp": Route(endpoint, rpc_refusal)})


def child_build(manifest: str) -> None:
    """Print the step times (ms) of building the registry, the index and the first answers."""
    clock = _Clock()
    import toolfront

    clock.mark("import_toolfront")
    before = set(sys.modules)
    import toolfront.tools.search

    clock.mark("import_search")
    search_modules = sorted(set(sys.modules) - before)
    from large_registry import admin_actor
    from mcp_requests import LIST_BODY, api_event

    from toolfront.adapters.mcp.endpoint import McpEndpoint  # noqa: F401 (its import is timed)
    from toolfront.adapters.mcp.results import ToolCatalog
    from toolfront.tools.paging import Pager

    clock.mark("import_endpoint")
    tools = json.loads(Path(manifest).read_text(encoding="utf-8"))["tools"]
    tools.sort(key=lambda tool: str(tool["name"]))
    clock.mark("load_manifest")
    catalog = ToolCatalog(tools)
    clock.mark("catalog")
    pager = Pager([str(tool["name"]) for tool in tools])
    clock.mark("pager")
    _, edge = _endpoint(catalog)
    clock.mark("endpoint")
    toolfront.tools.search.index_of(tools)
    clock.mark("index")
    found = toolfront.tools.search.found_tools(tools, FIRST_SEARCH_QUERY, admin_actor())
    clock.mark("first_search")
    answer = edge(api_event(LIST_BODY, extra={"authorization": "Bearer bench"}))
    clock.mark("first_list")
    listed = json.loads(answer["body"])["result"]
    assert len(listed["tools"]) == 100 and listed.get("nextCursor"), answer["body"][:300]
    assert found and pager is not None
    result = {
        "tools": len(tools),
        "steps_ms": clock.steps,
        "gc_ms": clock.collected,
        "search_modules": search_modules,
        "first_search_top": found[0]["name"],
    }
    print(PREFIX + json.dumps(result))


def _rss_bytes() -> int:
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def child_memory(manifest: str, traced: bool) -> None:
    """Print the memory (bytes) each part of the registry holds, by tracemalloc or by RSS: the
    manifest entries (the gateway holds them anyway), the catalog, the pager, the index, the
    endpoint (its own pager) and the visible names it keeps for one caller's rights."""
    import gc
    import tracemalloc

    from large_registry import admin_actor
    from mcp_requests import LIST_BODY, api_event

    from toolfront.adapters.mcp.results import ToolCatalog
    from toolfront.tools.paging import Pager
    from toolfront.tools.search import ToolIndex

    text = Path(manifest).read_text(encoding="utf-8")
    admin_actor()
    few = json.loads(text)["tools"][:40]  # first use, unmeasured: the modules it imports lazily
    _endpoint(ToolCatalog(few))[1](api_event(LIST_BODY, extra={"authorization": "Bearer bench"}))
    ToolIndex(few)
    kept: list[Any] = []

    def used() -> int:
        gc.collect()
        return tracemalloc.get_traced_memory()[0] if traced else _rss_bytes()

    if traced:
        tracemalloc.start()
    sizes: dict[str, int] = {}
    last = used()

    def mark(step: str, value: Any) -> None:
        nonlocal last
        kept.append(value)
        now = used()
        sizes[step] = now - last
        last = now

    tools = json.loads(text)["tools"]
    tools.sort(key=lambda tool: str(tool["name"]))
    mark("entries", tools)
    catalog = ToolCatalog(tools)
    mark("catalog", catalog)
    mark("pager", Pager([str(tool["name"]) for tool in tools]))
    mark("index", ToolIndex(tools))
    _, edge = _endpoint(catalog)
    mark("endpoint", edge)
    edge(api_event(LIST_BODY, extra={"authorization": "Bearer bench"}))
    mark("visible_names", None)
    print(PREFIX + json.dumps({"tools": len(tools), "traced": traced, "bytes": sizes}))


# --- the parent ----------------------------------------------------------------------------------


def _child(call: str) -> list[str]:
    code = f"import sys; sys.path.insert(0, {str(BENCH_DIR)!r}); import large_cold as c; c.{call}"
    return [sys.executable, "-c", code]


def write_manifests(where: Path) -> dict[int, Path]:
    """The 2,000-tool and 1,000-tool manifests, written once per run."""
    from large_registry import N_FAMILIES, write_manifest

    paths = {}
    for families in (N_FAMILIES, N_FAMILIES // 2):
        path = where / f"manifest-{families}.json"
        write_manifest(path, families)
        paths[families * 40] = path
    return paths


def subprocess_rows(quick: bool) -> tuple[list[Row], dict[str, Any]]:
    """The cold-start rows (ms, median of the repeats) and the memory rows (KiB)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    repeats = QUICK_REPEATS if quick else FULL_REPEATS
    with tempfile.TemporaryDirectory(prefix="bench-large-") as tmp:
        paths = write_manifests(Path(tmp))
        build = _child(f"child_build({str(paths[2000])!r})")
        run_child(build, env)  # warm the .pyc caches; unmeasured
        builds = [child_result(run_child(build, env)[1], PREFIX, "build") for _ in range(repeats)]
        memory: dict[str, Any] = {}
        for n, path in sorted(paths.items()):
            traced = _child(f"child_memory({str(path)!r}, True)")
            memory[f"traced_{n}"] = child_result(run_child(traced, env)[1], PREFIX, "memory")["bytes"]
            rss = _child(f"child_memory({str(path)!r}, False)")
            samples = [
                child_result(run_child(rss, env)[1], PREFIX, "rss")["bytes"] for _ in range(RSS_REPEATS)
            ]
            memory[f"rss_{n}"] = {k: statistics.median(s[k] for s in samples) for k in samples[0]}
    return _build_rows(builds) + _memory_rows(memory), {"builds": builds, "memory": memory}


def _build_rows(builds: list[dict[str, Any]]) -> list[Row]:
    def step(name: str) -> list[float]:
        return [b["steps_ms"][name] for b in builds]

    registry = [c + p for c, p in zip(step("catalog"), step("pager"), strict=True)]
    collected = [sum(b["gc_ms"][k] for k in ("catalog", "pager", "index")) for b in builds]
    cold = "cold (fresh interpreter), 2,000 tools: "
    rows = [
        subprocess_row(
            "large.cold_import_search",
            "cold: import toolfront.tools.search (after toolfront)",
            step("import_search"),
        ),
        subprocess_row(
            "large.cold_import_endpoint",
            "cold: import the MCP endpoint's modules (after search)",
            step("import_endpoint"),
        ),
        subprocess_row(
            "large.cold_load", cold + "read + json.loads + sort the manifest", step("load_manifest")
        ),
        subprocess_row("large.cold_catalog", cold + "ToolCatalog (MCP entries encoded)", step("catalog")),
        subprocess_row("large.cold_pager", cold + "Pager", step("pager")),
        subprocess_row("large.cold_registry", cold + "ToolCatalog + Pager", registry),
        subprocess_row("large.cold_endpoint", cold + "McpEndpoint (builds its own Pager)", step("endpoint")),
        subprocess_row("large.cold_index", cold + "search index (index_of)", step("index")),
        subprocess_row("large.cold_first_search", cold + "first search, index built", step("first_search")),
        subprocess_row(
            "large.cold_first_list", cold + "first tools/list page (new rights)", step("first_list")
        ),
        subprocess_row("large.cold_gc", cold + "of catalog + pager + index: garbage collection", collected),
    ]
    index = rows[7]
    rows[7] = BudgetRow(**{**index.__dict__, "target": INDEX_BUDGET_MS, "note": "target <= 50 ms"})
    return rows


def _memory_rows(memory: dict[str, Any]) -> list[Row]:
    parts = ("catalog", "pager", "index")
    rows = []
    for n in (1000, 2000):
        traced, rss = memory[f"traced_{n}"], memory[f"rss_{n}"]
        detail = ", ".join(
            f"{p} {traced[p] / 1024:.0f}" for p in (*parts, "endpoint", "visible_names", "entries")
        )
        rows += [
            subprocess_row(
                f"large.mem_{n}",
                f"memory: catalog + pager + index, {n:,} tools (tracemalloc)",
                [sum(traced[p] for p in parts) / 1024],
                unit="KiB",
                note=f"KiB by tracemalloc: {detail}",
            ),
            subprocess_row(
                f"large.mem_rss_{n}",
                f"ref: the same, resident set growth, {n:,} tools",
                [sum(rss[p] for p in parts) / 1024],
                unit="KiB",
                note=f"median of {RSS_REPEATS} children; pages the allocator keeps count too",
            ),
        ]
    per = sum(memory["traced_2000"][p] for p in parts) / 2 / 1024
    rows.append(
        subprocess_row(
            "large.mem_per_1000", "memory per 1,000 tools (tracemalloc, 2,000 ÷ 2)", [per], unit="KiB"
        )
    )
    return rows
