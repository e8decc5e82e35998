"""Cold import of every function's ``app`` beyond boto3 + a DynamoDB client, in this checkout and in
another one, interleaved in fresh interpreters (so drift and load hit both alike).

Usage: ``.venv/bin/python bench/cold_compare.py OTHER_CHECKOUT [N]`` (e.g. a ``git worktree`` of an
earlier commit); prints, per function and checkout, the median of N (default 15) runs in ms, their
quartiles and range, and the median time the import spent in garbage collection.

The children get no ``PYTHON*`` variable (as the bench's): with ``PYTHONDONTWRITEBYTECODE`` set no
``.pyc`` is written, and every import would compile its modules from source each time.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]
FUNCTIONS = ("catalogue", "gateway", "guest", "approvals", "oauth")
FLOOR = "import boto3; boto3.client('dynamodb', region_name='us-east-1')"
ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith("PYTHON")},
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_ACCESS_KEY_ID": "x",
    "AWS_SECRET_ACCESS_KEY": "x",
}
#: Adds up the collections that run during the import (gc callbacks), beside its time.
CHILD = """import gc, sys, time
{floor}
spent, started = [0.0], [0.0]


def watch(phase, info):
    if phase == "start":
        started[0] = time.perf_counter()
    else:
        spent[0] += time.perf_counter() - started[0]


sys.path[:0] = {paths!r}
gc.callbacks.append(watch)
t0 = time.perf_counter()
import app
took = time.perf_counter() - t0
gc.callbacks.remove(watch)
print(took * 1000, spent[0] * 1000)
"""


def once(root: Path, function: str) -> tuple[float, float]:
    """One fresh interpreter: the floor, then the timed ``import app`` of ``root``'s function (ms, and
    the ms of garbage collection within it)."""
    paths = [str(root / "functions" / function), str(root / "layers" / "core")]
    program = CHILD.format(floor=FLOOR, paths=paths)
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, env=ENV, cwd="/", check=True
    )
    took, collected = done.stdout.strip().splitlines()[-1].split()
    return float(took), float(collected)


def spread(values: list[float]) -> dict[str, float]:
    """Median, quartiles and range, rounded to 0.1 ms."""
    low, _, high = statistics.quantiles(values, n=4) if len(values) > 1 else (values[0],) * 3
    found = {
        "median": statistics.median(values),
        "q1": low,
        "q3": high,
        "min": min(values),
        "max": max(values),
    }
    return {k: round(v, 1) for k, v in found.items()}


def main() -> None:
    other, repeats = Path(sys.argv[1]).resolve(), int(sys.argv[2]) if len(sys.argv) > 2 else 15
    trees = {"this": HERE, "other": other}
    for root in trees.values():  # warm the .pyc caches; unmeasured
        for function in FUNCTIONS:
            once(root, function)
    found: dict[str, dict[str, Any]] = {name: {} for name in trees}
    for function in FUNCTIONS:
        runs: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
        for _ in range(repeats):
            for name, root in trees.items():
                runs[name].append(once(root, function))
        for name in trees:
            found[name][function] = {
                **spread([took for took, _ in runs[name]]),
                "gc_median": round(statistics.median(gc for _, gc in runs[name]), 1),
            }
    print(
        json.dumps(
            {"repeats": repeats, "trees": {k: str(v) for k, v in trees.items()}, "ms": found}, indent=2
        )
    )
    for function in FUNCTIONS:
        this, that = found["this"][function], found["other"][function]
        print(
            f"{function:10s} this {this['median']:6.1f} ms (IQR {this['q1']:.0f}-{this['q3']:.0f}, "
            f"range {this['min']:.0f}-{this['max']:.0f}, gc {this['gc_median']:.1f})   "
            f"other {that['median']:6.1f} ms (IQR {that['q1']:.0f}-{that['q3']:.0f}, "
            f"range {that['min']:.0f}-{that['max']:.0f}, gc {that['gc_median']:.1f})"
        )


if __name__ == "__main__":
    main()
