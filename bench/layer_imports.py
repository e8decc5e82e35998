"""What an import would add to a warm family function's cold start: each candidate imported in a
fresh interpreter that already holds boto3, a DynamoDB client and ``toolfront.calls.pipeline``,
median (and IQR) of N runs, in ms. The figures behind docs/performance.md, "What the layer ships".

    .venv/bin/python bench/layer_imports.py 15
"""

from __future__ import annotations

import statistics
import subprocess
import sys

FLOOR = "import boto3; boto3.client('dynamodb', region_name='us-east-1'); import toolfront.calls.pipeline"
CANDIDATES = {
    "aws_lambda_powertools Metrics": "from aws_lambda_powertools import Metrics",
    "aws_lambda_powertools Logger": "from aws_lambda_powertools import Logger",
    "aws_lambda_powertools Tracer": "from aws_lambda_powertools import Tracer",
    "aws_lambda_powertools parameters": "from aws_lambda_powertools.utilities import parameters",
    "opentelemetry.trace (the API)": "from opentelemetry import trace",
    "OpenTelemetry SDK + OTLP/HTTP exporter": (
        "from opentelemetry.sdk.trace import TracerProvider; "
        "from opentelemetry.sdk.trace.export import BatchSpanProcessor; "
        "from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter"
    ),
}
ENV = {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "PATH": "/usr/bin"}


def measure(statement: str, runs: int) -> list[float]:
    timed = f"import time\nt = time.perf_counter()\n{statement}\nprint((time.perf_counter() - t) * 1000)"
    code = f"{FLOOR}\n{timed}"
    found = []
    for _ in range(runs):
        command = [sys.executable, "-c", code]
        ran = subprocess.run(command, capture_output=True, text=True, env=ENV, check=True)
        found.append(float(ran.stdout))
    return sorted(found)


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    for name, statement in CANDIDATES.items():
        found = measure(statement, runs)
        iqr = f"{found[runs // 4]:.1f}-{found[3 * runs // 4]:.1f}"
        print(f"{name:40s} {statistics.median(found):6.1f} ms  (IQR {iqr})")


if __name__ == "__main__":
    main()
