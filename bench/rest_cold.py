"""The rest bench's fresh subprocesses: cold imports beyond the boto3 floor and the first calls.

The budget rows (``cold_<function>``, ≤ 55 ms each) time ``import app`` inside the child, after
``import boto3; boto3.client("dynamodb")``: what ``cold_compare.py`` measures too. The child's wall
time minus the floor's (the ``_wall`` reference rows) also counts the interpreter's exit, whose
final collection walks boto3's objects unless toolfront froze them, so it reads low, even below 0.
"""

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
IMPORT_PREFIX = "BENCH_REST_IMPORT "
FLOOR = "import boto3; boto3.client('dynamodb', region_name='us-east-1')"
#: Every Lambda function of the stack (functions/<name>/app.py), each with its own budget row.
FUNCTIONS = ("catalogue", "gateway", "guest", "approvals", "oauth")

#: Times the code that follows it after the floor, in the child: ms and the collections' ms.
_TIMER = f"""{FLOOR}
import gc, json, sys, time
_gc = [0, 0.0]


def _gc_watch(phase, info):
    if phase == "start":
        _gc[0] = time.perf_counter_ns()
    else:
        _gc[1] += (time.perf_counter_ns() - _gc[0]) / 1e6


gc.callbacks.append(_gc_watch)
_t0 = time.perf_counter_ns()
"""
_REPORT = f"""
_ms = (time.perf_counter_ns() - _t0) / 1e6
gc.callbacks.remove(_gc_watch)
print({IMPORT_PREFIX!r} + json.dumps({{"import_ms": _ms, "gc_ms": _gc[1]}}))
"""


def _import_app(function: str) -> str:
    """The floor, then ``functions/<function>/app.py`` imported as Lambda does (``app``, layer on path)."""
    paths = [str(FUNCTIONS_DIR / function), str(LAYER_DIR)]
    return f"{FLOOR}\nimport sys\nsys.path[:0] = {paths!r}\nimport app"


def _timed_import(function: str) -> str:
    """``_import_app``, the import timed inside the child (no interpreter start or exit)."""
    paths = [str(FUNCTIONS_DIR / function), str(LAYER_DIR)]
    return f"{_TIMER}sys.path[:0] = {paths!r}\nimport app\n{_REPORT}"


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
    **{function: _timed_import(function) for function in FUNCTIONS},
    "powertools": f"{_TIMER}{POWERTOOLS_APP}{_REPORT}",
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
        key: [sys.executable, "-X", "importtime", "-c", FLOOR if key == "floor" else _import_app(key)]
        for key in ("floor", *FUNCTIONS)
    }
    for cmd in commands.values():  # warm the .pyc caches; unmeasured
        run_child(cmd, env)
    walls: dict[str, list[float]] = {k: [] for k in commands}
    timed: dict[str, list[dict[str, float]]] = {k: [] for k in (*FUNCTIONS, "powertools")}
    first: list[dict[str, Any]] = []
    reports: dict[str, list[str]] = {k: [] for k in importtime}
    for _ in range(repeats):
        for key, cmd in commands.items():
            wall, out, _err = run_child(cmd, env)
            walls[key].append(wall)
            if key == "first_call":
                first.append(child_result(out, RESULT_PREFIX, "first-call"))
            elif key in timed:
                timed[key].append(child_result(out, IMPORT_PREFIX, f"{key} import"))
        for key, cmd in importtime.items():
            reports[key].append(run_child(cmd, env)[2])

    def minus(key: str, base: str) -> list[float]:
        return [w - b for w, b in zip(walls[key], walls[base], strict=True)]

    def inside(key: str, field: str = "import_ms") -> list[float]:
        return [t[field] for t in timed[key]]

    found = {key: offenders(reports["floor"], reports[key]) for key in FUNCTIONS}
    calls = [[c["calls"][i]["ms"] for c in first] for i in range(3)]
    client_ms = [c["client_ms"] for c in first]
    budget = f"budget {COLD_BUDGET_MS:g} ms over the floor"
    rows = [
        subprocess_row("cold_floor", "cold: boto3 + dynamodb client, wall - pass", minus("floor", "pass")),
        subprocess_row(
            "cold_powertools",
            "ref cold: Powertools route module after the floor",
            inside("powertools"),
            note="the baseline app above as a module (resolver, pydantic model, route), timed in the"
            " child; no client made",
        ),
    ]
    for key in FUNCTIONS:
        row = subprocess_row(f"cold_{key}", f"cold: import {key} app.py after the floor", inside(key))
        paired = [a / b for a, b in zip(inside(key), inside("powertools"), strict=True)]
        collected = statistics.median(inside(key, "gc_ms"))
        note = f"{budget}; timed in the child; of which garbage collection {collected:.1f} ms (median)"
        fields = {"target": COLD_BUDGET_MS, "baseline": "cold_powertools", "note": note}
        rows.append(BudgetRow(**{**row.__dict__, **fields, "round_ratios": paired}))
    rows += [
        subprocess_row(
            "cold_catalogue_wall",
            "ref cold: catalogue app.py child, wall - floor's wall",
            minus("catalogue", "floor"),
            note="counts the exit: the floor's final collection walks boto3's objects, a frozen one's not",
        ),
        subprocess_row(
            "cold_catalogue_importtime",
            "cold: catalogue -X importtime beyond the floor",
            found["catalogue"]["top_level_cumulative_ms"],
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
            found["gateway"]["top_level_cumulative_ms"],
        ),
        subprocess_row(
            "first_call",
            "first call after cold import (client made before)",
            calls[0],
            note="lazy first-use work in toolfront and botocore",
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
        **{
            f"importtime_{key}": {k: v for k, v in report.items() if k != "top_level_cumulative_ms"}
            for key, report in found.items()
        },
        "importtime_top_level_ms": {key: report["top_level_cumulative_ms"] for key, report in found.items()},
        "import_in_child_ms": {key: [round(t["import_ms"], 3) for t in runs] for key, runs in timed.items()},
        "import_in_child_gc_ms": {key: [round(t["gc_ms"], 3) for t in runs] for key, runs in timed.items()},
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
