"""The official MCP conformance suite (@modelcontextprotocol/conformance 0.1.13, the newest that runs
on node 20) against the local stack: the scenarios that apply to a tools-only stateless server."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from toolfront_dev.stack import LocalStack

SUITE = Path(__file__).resolve().parents[1] / "mcp_ts" / "node_modules" / ".bin" / "conformance"
SCENARIOS = ["server-initialize", "ping", "tools-list", "dns-rebinding-protection"]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_conformance_scenario_passes(stack: LocalStack, scenario: str) -> None:
    if shutil.which("node") is None or not SUITE.exists():
        pytest.fail(
            "node and tests/mcp_ts/node_modules are needed: run `make install` (npm ci in tests/mcp_ts)"
        )
    done = subprocess.run(
        [str(SUITE), "server", "--url", f"{stack.api_url}/mcp", "--scenario", scenario],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    report = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)
    passed = re.search(r"Passed: (\d+)/(\d+), (\d+) failed", report)
    assert passed is not None, report
    assert passed.group(1) == passed.group(2) and passed.group(3) == "0", report
