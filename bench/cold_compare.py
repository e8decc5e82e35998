"""Cold import of every function's ``app`` beyond boto3 + a DynamoDB client, in this checkout and in
another one, interleaved in fresh interpreters (so drift and load hit both alike).

Usage: ``.venv/bin/python bench/cold_compare.py OTHER_CHECKOUT [N]`` (e.g. a ``git worktree`` of an
earlier commit); prints the median of N (default 15) runs per function and checkout, in ms.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
FUNCTIONS = ("catalogue", "gateway", "guest", "approvals")
FLOOR = "import boto3; boto3.client('dynamodb', region_name='us-east-1')"
ENV = {
    **os.environ,
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_ACCESS_KEY_ID": "x",
    "AWS_SECRET_ACCESS_KEY": "x",
}


def once(root: Path, function: str) -> float:
    """One fresh interpreter: the floor, then the timed ``import app`` of ``root``'s function."""
    paths = [str(root / "functions" / function), str(root / "layers" / "core")]
    program = (
        f"import time\n{FLOOR}\nimport sys\nsys.path[:0] = {paths!r}\n"
        "t0 = time.perf_counter()\nimport app\nprint((time.perf_counter() - t0) * 1000)"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, env=ENV, cwd="/", check=True
    )
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    other, repeats = Path(sys.argv[1]).resolve(), int(sys.argv[2]) if len(sys.argv) > 2 else 15
    trees = {"this": HERE, "other": other}
    medians: dict[str, dict[str, float]] = {name: {} for name in trees}
    for function in FUNCTIONS:
        runs: dict[str, list[float]] = {name: [] for name in trees}
        for _ in range(repeats):
            for name, root in trees.items():
                runs[name].append(once(root, function))
        for name in trees:
            medians[name][function] = round(statistics.median(runs[name]), 1)
    print(json.dumps({"repeats": repeats, "median_ms": medians}, indent=2))


if __name__ == "__main__":
    main()
