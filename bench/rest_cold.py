"""The rest bench's fresh subprocesses: cold imports beyond the boto3 floor and the first calls."""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from typing import Any

from harness import Row, child_result, link_ratios, run_child, subprocess_row
from rest_canned import CannedDynamoDB
from rest_fixture import (
    BENCH_DIR,
    ENV,
    FUNCTIONS_DIR,
    LAYER_DIR,
    UNSET,
    FakeContext,
    bench_tables,
    counting,
    load_event,
)
from rest_importtime import offenders
from rest_powertools import POWERTOOLS_APP
from rest_rows import BudgetRow

#: The cold-import budget over the boto3-and-client floor (docs/performance.md, "Targets", item 5).
COLD_BUDGET_MS = 55.0
FULL_REPEATS = 10
QUICK_REPEATS = 1
RESULT_PREFIX = "BENCH_REST_RESULT "
FLOOR = "import boto3; boto3.client('dynamodb', region_name='us-east-1')"


def _import_app(function: str) -> str:
    """The floor, then ``functions/<function>/app.py`` imported as Lambda does (``app``, layer on path)."""
    paths = [str(FUNCTIONS_DIR / function), str(LAYER_DIR)]
    return f"{FLOOR}\nimport sys\nsys.path[:0] = {paths!r}\nimport app"


FIRST_CALL = f"""{FLOOR}
import gc, sys, time
gc_log = []
gc_started = [0]


def gc_watch(phase, info):
    if phase == "start":
        gc_started[0] = time.perf_counter_ns()
    else:
        gc_log.append((info["generation"], (time.perf_counter_ns() - gc_started[0]) / 1e6))


gc.callbacks.append(gc_watch)
t0 = time.perf_counter_ns()
sys.path[:0] = {[str(FUNCTIONS_DIR / "catalogue"), str(LAYER_DIR)]!r}
import app
t1 = time.perf_counter_ns()
gc_import = list(gc_log)
sys.path.insert(0, {str(BENCH_DIR)!r})
import rest_cold
rest_cold.child_first_call(app, (t1 - t0) / 1e6, gc_import, gc_log)
"""

COMMANDS: dict[str, str | None] = {
    "pass": "pass",
    "floor": FLOOR,
    "catalogue": _import_app("catalogue"),
    "gateway": _import_app("gateway"),
    "powertools": f"{FLOOR}\n{POWERTOOLS_APP}",
    "first_call": FIRST_CALL,
}


def child_first_call(
    app_module: Any, import_ms: float, gc_import: list[tuple[int, float]], gc_log: list[tuple[int, float]]
) -> None:
    """In a fresh process after ``import app``: make toolfront's client, then time 3 calls (ms).

    ``gc_import`` holds the collections (generation, ms) during the import; ``gc_log`` keeps growing.
    """
    from toolfront.aws import clients as aws

    clock = time.perf_counter_ns
    t0 = clock()
    client = aws.client("dynamodb")  # what the first call would otherwise create itself
    client_ms = (clock() - t0) / 1e6
    event = load_event()
    CannedDynamoDB(bench_tables(event)).install(client)
    ctx = FakeContext()
    calls = []
    with counting(client) as seen:
        for _ in range(3):
            seen.clear()
            collected = len(gc_log)
            start = clock()
            response = app_module.lambda_handler(event, ctx)
            elapsed = (clock() - start) / 1e6
            gc_ms = sum(ms for _, ms in gc_log[collected:])
            calls.append({"ms": elapsed, "gc_ms": gc_ms, "requests": dict(seen)})
            if response["statusCode"] != 200:
                raise SystemExit(f"the call answered {response['statusCode']}: {response['body']}")
    result = {
        "import_ms": import_ms,
        "import_gc_ms": sum(ms for _, ms in gc_import),
        "import_gc_collections": [g for g, _ in gc_import],
        "client_ms": client_ms,
        "calls": calls,
    }
    print(RESULT_PREFIX + json.dumps(result))


def subprocess_rows(quick: bool) -> tuple[list[Row], dict[str, Any]]:
    """Cold imports and first calls in fresh interpreters, the commands interleaved per repeat."""
    repeats = QUICK_REPEATS if quick else FULL_REPEATS
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON") and k not in UNSET}
    env.update(ENV)
    commands = {key: [sys.executable, "-c", code] for key, code in COMMANDS.items() if code}
    importtime = {
        "floor": [sys.executable, "-X", "importtime", "-c", FLOOR],
        "catalogue": [sys.executable, "-X", "importtime", "-c", _import_app("catalogue")],
        "gateway": [sys.executable, "-X", "importtime", "-c", _import_app("gateway")],
    }
    for cmd in commands.values():  # warm the .pyc caches; unmeasured
        run_child(cmd, env)
    walls: dict[str, list[float]] = {k: [] for k in commands}
    first: list[dict[str, Any]] = []
    reports: dict[str, list[str]] = {k: [] for k in importtime}
    for _ in range(repeats):
        for key, cmd in commands.items():
            wall, out, _err = run_child(cmd, env)
            walls[key].append(wall)
            if key == "first_call":
                first.append(child_result(out, RESULT_PREFIX, "first-call"))
        for key, cmd in importtime.items():
            reports[key].append(run_child(cmd, env)[2])

    def minus(key: str, base: str) -> list[float]:
        return [w - b for w, b in zip(walls[key], walls[base], strict=True)]

    found = offenders(reports["floor"], reports["catalogue"])
    gateway = offenders(reports["floor"], reports["gateway"])
    calls = [[c["calls"][i]["ms"] for c in first] for i in range(3)]
    client_ms = [c["client_ms"] for c in first]
    budget = f"budget {COLD_BUDGET_MS:g} ms over the floor"
    rows = [
        subprocess_row("cold_floor", "cold: boto3 + dynamodb client, wall - pass", minus("floor", "pass")),
        subprocess_row(
            "cold_powertools",
            "ref cold: Powertools route module - floor",
            minus("powertools", "floor"),
            note="the baseline app above as a module (resolver, pydantic model, route); no client made",
        ),
    ]
    for key, label in (("catalogue", "catalogue app.py"), ("gateway", "gateway app.py")):
        row = subprocess_row(f"cold_{key}", f"cold: import {label} - floor", minus(key, "floor"))
        paired = [a / b for a, b in zip(minus(key, "floor"), minus("powertools", "floor"), strict=True)]
        fields = {"target": COLD_BUDGET_MS, "baseline": "cold_powertools", "note": budget}
        rows.append(BudgetRow(**{**row.__dict__, **fields, "round_ratios": paired}))
    rows += [
        subprocess_row(
            "cold_catalogue_importtime",
            "cold: catalogue -X importtime beyond the floor",
            found["top_level_cumulative_ms"],
        ),
        subprocess_row(
            "cold_catalogue_in_process",
            "cold: catalogue import timed in-process",
            [c["import_ms"] for c in first],
            note="perf_counter around `import app` after the floor: no interpreter start or exit",
        ),
        subprocess_row(
            "cold_catalogue_gc",
            "cold: of which garbage collection",
            [c["import_gc_ms"] for c in first],
            note="collections the import's allocations trigger, boto3's models being in memory already",
        ),
        subprocess_row(
            "cold_gateway_importtime",
            "cold: gateway -X importtime beyond the floor",
            gateway["top_level_cumulative_ms"],
        ),
        subprocess_row(
            "first_call",
            "first call after cold import (client made before)",
            calls[0],
            note="lazy first-use work in toolfront, botocore and Powertools Logger",
        ),
        subprocess_row(
            "first_client",
            "toolfront dynamodb client creation (1st call pays it)",
            client_ms,
            note="a new boto3 Session: the service model is loaded again",
        ),
        subprocess_row(
            "first_call_with_client",
            "first call incl. client creation",
            [a + b for a, b in zip(calls[0], client_ms, strict=True)],
        ),
        subprocess_row("second_call", "second call (the key's owner known)", calls[1]),
        subprocess_row("third_call", "third call", calls[2]),
    ]
    link_ratios(rows)
    extra = {
        "repeats": repeats,
        "importtime_catalogue": {k: v for k, v in found.items() if k != "top_level_cumulative_ms"},
        "importtime_gateway": {k: v for k, v in gateway.items() if k != "top_level_cumulative_ms"},
        "first_call_requests": [c["requests"] for c in first[0]["calls"]],
        "first_call_gc_ms": [[round(c["gc_ms"], 3) for c in f["calls"]] for f in first],
        "import_gc_collections": [f["import_gc_collections"] for f in first],
        "import_gc_ms": [round(f["import_gc_ms"], 3) for f in first],
        "samples_ms": {
            "wall": {k: [round(v, 3) for v in vs] for k, vs in walls.items()},
            "calls": [[round(v, 3) for v in vs] for vs in calls],
            "client": [round(v, 3) for v in client_ms],
        },
        "python_c_pass_ms_median": round(statistics.median(walls["pass"]), 3),
    }
    return rows, extra
