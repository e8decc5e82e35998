"""The mcp bench's fresh subprocesses: the gateway's cold import, and the check that no SDK loads."""

from __future__ import annotations

import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

from harness import Row, child_result, link_ratios, run_child, subprocess_row
from mcp_requests import HANDSHAKE, FakeContext, api_event, rpc

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
LAYER_DIR = ROOT / "layers" / "core"
FUNCTIONS_DIR = ROOT / "functions"
FULL_REPEATS = 10
QUICK_REPEATS = 1
#: Modules a Lambda function must not load (the check children below, and tests/unit).
SDK_MODULES = ("mcp", "mcp_types")
RESULT_PREFIX = "BENCH_MCP_RESULT "
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
import mcp_cold
mcp_cold.child_check()
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


def subprocess_rows(quick: bool) -> tuple[list[Row], dict[str, Any]]:
    repeats = QUICK_REPEATS if quick else FULL_REPEATS
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "TOOLFRONT_", "AWS_ENDPOINT"))}
    commands = {key: [sys.executable, "-c", code] for key, code in COLD_COMMANDS.items()}
    for cmd in commands.values():  # warm the .pyc caches; unmeasured
        run_child(cmd, env)
    walls: dict[str, list[float]] = {k: [] for k in commands}
    in_process: list[dict[str, float]] = []
    for _ in range(repeats):
        for key, cmd in commands.items():
            wall, out, _err = run_child(cmd, env)
            walls[key].append(wall)
            if key == "gateway":
                in_process.append(child_result(out, RESULT_PREFIX, "check"))
    check = child_result(
        run_child([sys.executable, "-c", CHECK], {**env, **CHECK_ENV})[1], RESULT_PREFIX, "check"
    )
    if check["sdk_after_import"] or check["sdk_after_serving"]:
        raise SystemExit(f"bench_mcp: a Lambda function imported the MCP SDK: {check}")
    if check["answers"].get("tools/list") != 200 or check["answers"].get("initialize") != 200:
        raise SystemExit(f"bench_mcp: the gateway did not serve anonymous MCP: {check}")

    def minus(key: str, base: str) -> list[float]:
        return [w - b for w, b in zip(walls[key], walls[base], strict=True)]

    rows = [
        subprocess_row(
            "mcp_cold_floor", "cold: boto3 + dynamodb client, wall - pass", minus("floor", "pass")
        ),
        subprocess_row(
            "mcp_cold_sdk",
            "ref cold: `from mcp.server.mcpserver import MCPServer` - floor",
            minus("sdk", "floor"),
        ),
        subprocess_row(
            "mcp_cold_mlh",
            "ref cold: `awslabs.mcp_lambda_handler` - floor",
            minus("mlh", "floor"),
            note="it imports boto3 itself: the floor already holds it",
        ),
        subprocess_row(
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
        subprocess_row(
            "mcp_cold_gateway_in_process",
            "cold: gateway import timed in-process",
            [c["import_ms"] for c in in_process],
            note="perf_counter around `import app` after the floor: no interpreter start or exit",
        ),
        subprocess_row(
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
