"""``slack_sdk`` (about 80 ms to import, docs/performance.md) loads on the Slack paths only: never when
a function is imported (tests/unit/test_lambda_imports.py forbids it there), never while the
approvals function serves its pages, and only once ``POST /approvals/slack/actions`` is asked."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

from tests.unit.test_lambda_imports import FORBIDDEN, bare_environment

ROOT = Path(__file__).resolve().parents[2]
MARK = "SLACK "
CHILD = """
import json, sys
sys.path[:0] = [{folder!r}, {layer!r}]
import app

def event(method, path, route, body=None, headers=None):
    return {{
        "version": "2.0",
        "routeKey": route,
        "rawPath": path,
        "headers": headers or {{}},
        "pathParameters": {{"id": path.rsplit("/", 1)[1]}} if "{{id}}" in route else {{}},
        "requestContext": {{"requestId": "r1", "http": {{"method": method, "sourceIp": "198.51.100.7"}}}},
        "body": body,
    }}

form = {{"content-type": "application/x-www-form-urlencoded"}}
pages = [
    event("GET", "/approvals/signed-in", "GET /approvals/{{id}}"),
    event("GET", "/approvals/sign-out", "GET /approvals/sign-out"),
    event("POST", "/approvals/not-an-approval", "POST /approvals/{{id}}", "decision=approve", form),
    event("PUT", "/approvals/signed-in", "PUT /approvals/signed-in"),
]
found = {{"pages": [app.lambda_handler(e, None)["statusCode"] for e in pages]}}
found["after_pages"] = sorted(m for m in sys.modules if m.split(".")[0] == "slack_sdk")
slack = event("POST", "/approvals/slack/actions", "POST /approvals/slack/actions", "payload=%7B%7D", form)
found["slack"] = app.lambda_handler(slack, None)["statusCode"]
found["after_slack"] = "slack_sdk.signature" in sys.modules
print({mark!r} + json.dumps(found))
"""
ENVIRONMENT = {
    "TOOLFRONT_KEYS_TABLE": "unused-keys",
    "TOOLFRONT_PRINCIPALS_TABLE": "unused-principals",
    "TOOLFRONT_IDEMPOTENCY_TABLE": "unused-idempotency",
    "TOOLFRONT_RATE_LIMITS_TABLE": "unused-rate-limits",
    "TOOLFRONT_APPROVALS_TABLE": "unused-approvals",
    "TOOLFRONT_APPROVAL_TOKENS_TABLE": "unused-tokens",
    "TOOLFRONT_APPROVAL_STATE_MACHINE_ARN": "arn:aws:states:us-east-1:123456789012:stateMachine:unused",
    "TOOLFRONT_SLACK_CHANNEL": "C0APPROVALS",  # Slack on: the secrets are read only past the signature
    "TOOLFRONT_SLACK_BOT_TOKEN_SECRET_ARN": "arn:aws:secretsmanager:us-east-1:123456789012:secret:bot-AbCdEf",
    "TOOLFRONT_SLACK_SIGNING_SECRET_ARN": "arn:aws:secretsmanager:us-east-1:123456789012:secret:sig-AbCdEf",
}


def serve_in_fresh_interpreter() -> dict[str, Any]:
    code = CHILD.format(
        folder=str(ROOT / "functions" / "approvals"), layer=str(ROOT / "layers" / "core"), mark=MARK
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**bare_environment(), **ENVIRONMENT},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(line for line in reversed(done.stdout.splitlines()) if line.startswith(MARK))
    found: dict[str, Any] = json.loads(line[len(MARK) :])
    return found


def test_no_function_imports_slack_sdk() -> None:
    assert "slack_sdk" in FORBIDDEN  # every function's import, and the gateway's MCP answers


def test_the_approvals_pages_never_load_slack_sdk_and_the_slack_route_does() -> None:
    found = serve_in_fresh_interpreter()
    assert found["pages"] == [200, 200, 404, 405], found
    assert found["after_pages"] == [], f"the approvals pages loaded {found['after_pages']}"
    assert found["slack"] == 401  # unsigned: refused before any secret is read
    assert found["after_slack"] is True  # the check that could tell: the Slack path does load it


def test_the_approvals_function_pins_slack_sdk_as_the_dev_install_does() -> None:
    shipped = (ROOT / "functions" / "approvals" / "requirements.txt").read_text(encoding="utf-8")
    pins = [line for line in shipped.splitlines() if line and not line.startswith("#")]
    dev = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["dev"]
    assert pins == ["slack_sdk==3.48.0"] and pins[0] in dev
