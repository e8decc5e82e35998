"""Registry cold start: ``import toolfront`` and building 200 generated tools.

Baselines and target: docs/performance.md, "Targets", item 2, and "4. Cold imports".

Each sample is a fresh interpreter, the commands interleaved, 10 repeats (medians):

- ``import toolfront``: wall time minus that of ``python -c pass`` (paired per repeat), and the
  ``-X importtime`` cumulative time of the modules start-up had not already imported;
- a build: 10 generated modules offering 20 tools each (200 tools, 20 distinct input schemas
  declared as separate but equal dicts), collected by ``Registry.from_modules``; timed inside the
  process with ``perf_counter_ns`` after ``import toolfront``, then ``manifest()`` + ``json.dumps``;
- the same build where all 200 schemas differ (the schema-check cache never hits), for reference;
- the baseline a naive registry pays: jsonschema's ``Draft202012Validator.check_schema`` on each of
  the same 200 schemas, timed after ``import jsonschema``.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import sys
import time
import types
from pathlib import Path
from typing import Any

from harness import Section, canary, link_ratios, run_child, subprocess_row

BENCH_DIR = Path(__file__).resolve().parent
N_TOOLS = 200
N_MODULES = 10
N_SCHEMAS = 20
FULL_REPEATS = 10
QUICK_REPEATS = 3

VERBS = ("get", "list", "create", "update", "delete", "find", "count", "set")
READ_VERBS = frozenset({"get", "list", "find", "count"})

#: Property declarations that generated schemas draw 3-6 of.
PROPERTIES: dict[str, dict[str, Any]] = {
    "sku": {"type": "string", "maxLength": 32, "pattern": "^[A-Z]{3}-[0-9]{4,8}$"},
    "quantity": {"type": "integer", "minimum": 1, "maximum": 1000},
    "locale": {"type": "string", "maxLength": 16, "pattern": "^[a-z]{2}(-[A-Z]{2})?$"},
    "email": {"type": "string", "format": "email", "maxLength": 254},
    "customer_id": {"type": "string", "format": "uuid"},
    "since": {"type": "string", "format": "date-time"},
    "status": {"enum": ["open", "paid", "shipped", "cancelled"]},
    "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
    "cursor": {"type": "string", "maxLength": 200, "description": "Opaque page token"},
    "price": {"type": "number", "minimum": 0, "exclusiveMaximum": 1000000},
    "tags": {
        "type": "array",
        "items": {"type": "string", "maxLength": 40},
        "maxItems": 10,
        "uniqueItems": True,
    },
    "active": {"type": "boolean"},
    "note": {"type": "string", "maxLength": 500, "description": "Free text shown to staff"},
    "url": {"type": "string", "format": "uri", "maxLength": 2048},
    "day": {"type": "string", "format": "date"},
    "address": {
        "type": "object",
        "properties": {
            "line1": {"type": "string", "maxLength": 100},
            "city": {"type": "string", "maxLength": 60},
            "postcode": {"type": "string", "pattern": "^[A-Z0-9 ]{3,10}$"},
        },
        "required": ["line1", "city"],
        "additionalProperties": False,
    },
}


def schema_templates(count: int = N_SCHEMAS) -> list[str]:
    """``count`` distinct input schemas (as JSON text) of 3-6 properties each, deterministic."""
    names = sorted(PROPERTIES)
    templates = []
    for k in range(count):
        rng = random.Random(k)
        chosen = rng.sample(names, 3 + k % 4)
        schema = {
            "type": "object",
            "title": f"Input shape {k}",
            "properties": {name: PROPERTIES[name] for name in chosen},
            "required": chosen[: 1 + k % 2],
            "additionalProperties": False,
        }
        templates.append(json.dumps(schema))
    return templates


def tool_fields(distinct: int = N_SCHEMAS) -> list[list[dict[str, Any]]]:
    """The tool fields of each generated module; every schema is its own dict, as declared in code.

    With ``distinct`` equal to the number of tools, each schema gets its own title (no sharing).
    """
    templates = schema_templates(N_SCHEMAS)
    per_module = N_TOOLS // N_MODULES
    modules: list[list[dict[str, Any]]] = [[] for _ in range(N_MODULES)]
    for i in range(N_TOOLS):
        m = i // per_module
        verb = VERBS[i % len(VERBS)]
        schema = json.loads(templates[(i * 7) % N_SCHEMAS])
        if distinct >= N_TOOLS:
            schema["title"] = f"Input of tool {i}"
        public = i % 10 == 9 and verb in READ_VERBS
        family = f"bench{m:02d}"
        fields: dict[str, Any] = {
            "name": f"{family}.{verb}_item{i:04d}",
            "audience": "public" if public else "admin",
            "title": f"{verb.capitalize()} item {i}",
            "description": f"{verb.capitalize()} one item of family {family} (generated tool {i}).",
            "input_schema": schema,
            "annotations": {
                "read_only": verb in READ_VERBS,
                "idempotent": verb in {"set", "update", "delete"},
            },
            "handler": _make_handler(i),
        }
        if not public:
            fields["scope"] = f"{family}.items:{'read' if verb in READ_VERBS else 'write'}"
            fields["permission"] = family
        if verb == "delete":
            fields["danger"] = "always"
        if i % 5 == 0:
            fields["cost"] = 1 + i % 7
        modules[m].append(fields)
    return modules


def _make_handler(i: int) -> Any:
    def handler(data: dict[str, Any], ctx: Any) -> dict[str, Any]:
        return {"tool": i, **data}

    return handler


def make_modules(distinct: int = N_SCHEMAS) -> list[Any]:
    """10 module-like objects whose ``api_tools()`` build their 20 tools with ``Tool.new``."""
    from toolfront import Tool

    modules = []
    for m, fields_list in enumerate(tool_fields(distinct)):

        def api_tools(fields_list: list[dict[str, Any]] = fields_list) -> list[Tool]:
            return [Tool.new(**fields) for fields in fields_list]

        modules.append(types.SimpleNamespace(FAMILY=f"bench{m:02d}", api_tools=api_tools))
    return modules


# --- run inside a fresh interpreter -----------------------------------------------------------


def child_build(distinct: int) -> None:
    """Print the build and manifest times (ms) of the 200 generated tools, as JSON."""
    from toolfront import Registry
    from toolfront.tools.schema import check_cache_info

    modules = make_modules(distinct)
    clock = time.perf_counter_ns
    t0 = clock()
    registry = Registry.from_modules(modules)
    t1 = clock()
    body = json.dumps(registry.manifest())
    t2 = clock()
    if len(registry) != N_TOOLS:
        raise SystemExit(f"expected {N_TOOLS} tools, registered {len(registry)}")
    info = check_cache_info()
    print(
        json.dumps(
            {
                "build_ms": (t1 - t0) / 1e6,
                "manifest_ms": (t2 - t1) / 1e6,
                "manifest_bytes": len(body),
                "check_misses": info.misses,
                "check_hits": info.hits,
            }
        )
    )


def child_naive() -> None:
    """Print the time (ms) of jsonschema's ``check_schema`` on each of the 200 input schemas."""
    from jsonschema import Draft202012Validator

    schemas = [f["input_schema"] for fields_list in tool_fields(N_SCHEMAS) for f in fields_list]
    clock = time.perf_counter_ns
    t0 = clock()
    for schema in schemas:
        Draft202012Validator.check_schema(schema)
    t1 = clock()
    print(json.dumps({"naive_ms": (t1 - t0) / 1e6, "schemas": len(schemas)}))


# --- the parent ---------------------------------------------------------------------------------


def _py(*args: str) -> list[str]:
    return [sys.executable, *args]


def _child(call: str) -> list[str]:
    return _py(
        "-c", f"import sys; sys.path.insert(0, {str(BENCH_DIR)!r}); import bench_registry as b; b.{call}"
    )


COMMANDS: dict[str, list[str]] = {
    "pass": _py("-c", "pass"),
    "import_toolfront": _py("-c", "import toolfront"),
    "import_jsonschema": _py("-c", "import jsonschema"),
    "build": _child(f"child_build({N_SCHEMAS})"),
    "build_distinct": _child(f"child_build({N_TOOLS})"),
    "naive": _child("child_naive()"),
}


def parse_importtime(stderr: str) -> dict[str, float]:
    """Top-level modules of a ``-X importtime`` report and their cumulative times (ms)."""
    top: dict[str, float] = {}
    for line in stderr.splitlines():
        if not line.startswith("import time:"):
            continue
        parts = line[len("import time:") :].split("|")
        if len(parts) != 3 or not parts[1].strip().isdigit():
            continue
        name = parts[2]
        if name.startswith(" ") and not name[1:2].isspace():
            top[name.strip()] = int(parts[1]) / 1000
    return top


def _all_modules(stderr: str) -> set[str]:
    return {line.rsplit("|", 1)[1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


def run(quick: bool = False) -> Section:
    """Run the interleaved subprocesses and turn them into rows."""
    repeats = QUICK_REPEATS if quick else FULL_REPEATS
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    section = Section("registry (fresh subprocesses)", canary_before=canary())
    for cmd in COMMANDS.values():  # warm the .pyc caches; unmeasured
        run_child(cmd, env)
    walls: dict[str, list[float]] = {k: [] for k in COMMANDS}
    outputs: dict[str, list[dict[str, Any]]] = {k: [] for k in ("build", "build_distinct", "naive")}
    importtime: list[float] = []
    toolfront_cumulative: list[float] = []
    for _ in range(repeats):
        for key, cmd in COMMANDS.items():
            wall, out, _err = run_child(cmd, env)
            walls[key].append(wall)
            if key in outputs:
                outputs[key].append(json.loads(out))
        _, _, startup = run_child(_py("-X", "importtime", "-c", "pass"), env)
        _, _, report = run_child(_py("-X", "importtime", "-c", "import toolfront"), env)
        already = _all_modules(startup)
        top = parse_importtime(report)
        importtime.append(sum(ms for name, ms in top.items() if name not in already))
        toolfront_cumulative.append(top.get("toolfront", float("nan")))

    def minus_pass(key: str) -> list[float]:
        return [w - p for w, p in zip(walls[key], walls["pass"], strict=True)]

    build = [o["build_ms"] for o in outputs["build"]]
    build_distinct = [o["build_ms"] for o in outputs["build_distinct"]]
    naive = [o["naive_ms"] for o in outputs["naive"]]
    manifest = [o["manifest_ms"] for o in outputs["build"]]
    per_tool = 1000 / N_TOOLS  # ms for 200 tools -> µs per tool
    rows = [
        subprocess_row(
            "import_wall", "import toolfront, wall - python -c pass", minus_pass("import_toolfront")
        ),
        subprocess_row("import_time", "import toolfront, -X importtime cumulative", importtime),
        subprocess_row(
            "ref_import_jsonschema",
            "ref: import jsonschema, wall - python -c pass",
            minus_pass("import_jsonschema"),
        ),
        subprocess_row("naive_total", "naive: jsonschema check_schema x 200 schemas", naive),
        subprocess_row(
            "build_total",
            "toolfront Registry.from_modules, 200 tools / 20 schemas",
            build,
            baseline="naive_total",
        ),
        subprocess_row(
            "naive_per_tool", "naive: check_schema, per tool", [v * per_tool for v in naive], unit="µs"
        ),
        subprocess_row(
            "build_per_tool",
            "toolfront build, per tool (20 distinct schemas)",
            [v * per_tool for v in build],
            unit="µs",
            baseline="naive_per_tool",
            target=0.05,
        ),
        subprocess_row(
            "build_distinct_per_tool",
            "toolfront build, per tool (200 distinct schemas)",
            [v * per_tool for v in build_distinct],
            unit="µs",
            baseline="naive_per_tool",
            note="worst case: no two tools share a schema, so the check cache never hits",
        ),
        subprocess_row(
            "manifest",
            "manifest() + json.dumps, 200 tools",
            manifest,
            note=f"{outputs['build'][0]['manifest_bytes']} bytes",
        ),
    ]
    # Paired ratios: each repeat's build against the naive run of the same repeat.
    by_key = {r.key: r for r in rows}
    by_key["build_total"].round_ratios = [b / n for b, n in zip(build, naive, strict=True)]
    by_key["build_per_tool"].round_ratios = by_key["build_total"].round_ratios
    by_key["build_distinct_per_tool"].round_ratios = [
        b / n for b, n in zip(build_distinct, naive, strict=True)
    ]
    link_ratios(rows)
    section.rows = rows
    section.canary_after = canary()
    section.extra.update(
        {
            "repeats": repeats,
            "samples_ms": {
                "wall": {k: [round(v, 3) for v in vs] for k, vs in walls.items()},
                "importtime": [round(v, 3) for v in importtime],
                "toolfront_cumulative": [round(v, 3) for v in toolfront_cumulative],
                "build": [round(v, 3) for v in build],
                "build_distinct": [round(v, 3) for v in build_distinct],
                "naive": [round(v, 3) for v in naive],
                "manifest": [round(v, 3) for v in manifest],
            },
            "python_c_pass_ms_median": round(statistics.median(walls["pass"]), 3),
            "check_cache": {k: outputs["build"][0][k] for k in ("check_misses", "check_hits")},
            "check_cache_distinct": {
                k: outputs["build_distinct"][0][k] for k in ("check_misses", "check_hits")
            },
        }
    )
    return section


if __name__ == "__main__":
    from harness import format_table

    print(format_table([run(quick="--quick" in sys.argv)]))
