"""Lambda functions import no development or SDK packages: cold starts stay small (docs/performance.md).

Each function's ``app.py`` is imported in a fresh interpreter, as Lambda loads it: the function's
folder first on ``sys.path``, then the layer (``layers/core``), with no ``TOOLFRONT_*`` or ``AWS_*``
variable set (nothing may read settings or talk to AWS at import). The MCP SDK alone costs 0.6-0.8 s
to import and ``mcp_types`` 0.2 s; ``jsonschema`` loads only to explain a broken schema.

Each function's import also leaves for later what only some of its paths need, and, imported after
boto3 and a client, freezes their objects (toolfront's ``gc.freeze``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAYER = ROOT / "layers" / "core"
FUNCTIONS = sorted(path.parent.name for path in (ROOT / "functions").glob("*/app.py"))
FORBIDDEN = ("mcp", "mcp_types", "moto", "werkzeug", "cfnlint", "jsonschema", "pydantic", "slack_sdk")
MARK = "LOADED "

#: Imports each named function as Lambda would (one interpreter per function), then reports which
#: forbidden packages are loaded. The gateway also answers anonymous MCP requests: its endpoint is
#: built on first use, so that is where a lazy SDK import would hide.
CHILD = """
import json, sys
forbidden = {forbidden!r}
before = sorted(m for m in sys.modules if m.split(".")[0] in forbidden)
sys.path[:0] = [{folder!r}, {layer!r}]
import app
found = {{"before": before, "after_import": sorted(m for m in sys.modules if m.split(".")[0] in forbidden)}}
if {serve!r}:
    def event(body):
        return {{
            "version": "2.0",
            "routeKey": "POST /mcp",
            "rawPath": "/mcp",
            "headers": {{"content-type": "application/json", "mcp-protocol-version": "2025-11-25"}},
            "requestContext": {{"requestId": "r1", "http": {{"method": "POST", "sourceIp": "198.51.100.7"}}}},
            "body": json.dumps(body),
        }}
    client = {{"name": "t", "version": "1"}}
    hello = {{"protocolVersion": "2025-11-25", "capabilities": {{}}, "clientInfo": client}}
    initialize = {{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}}
    listing = {{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}}
    answers = [app.lambda_handler(event(initialize), None), app.lambda_handler(event(listing), None)]
    found["served"] = [a["statusCode"] for a in answers]
    found["tools"] = len(json.loads(answers[1]["body"])["result"]["tools"])
    found["after_serving"] = sorted(m for m in sys.modules if m.split(".")[0] in forbidden)
print({mark!r} + json.dumps(found))
"""

SERVE_ENV = {  # the settings an MCP request reads; an anonymous one never reaches these tables
    "TOOLFRONT_KEYS_TABLE": "unused-keys",
    "TOOLFRONT_PRINCIPALS_TABLE": "unused-principals",
    "TOOLFRONT_IDEMPOTENCY_TABLE": "unused-idempotency",
    "TOOLFRONT_RATE_LIMITS_TABLE": "unused-rate-limits",
}


def bare_environment() -> dict[str, str]:
    """This environment without toolfront's or AWS's variables, nor any that change Python's path."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("TOOLFRONT_", "AWS_", "PYTHON"))}


def forbidden_for(function: str) -> tuple[str, ...]:
    """FORBIDDEN, but pydantic for a family whose own module imports it (its models are its choice:
    a family that uses none never loads it)."""
    source = (ROOT / "functions" / function / "app.py").read_text(encoding="utf-8")
    uses_models = re.search(r"^(from|import) pydantic\b", source, re.MULTILINE) is not None
    return tuple(name for name in FORBIDDEN if not (uses_models and name == "pydantic"))


def import_in_fresh_interpreter(function: str, env: dict[str, str], *, serve: bool = False) -> dict[str, Any]:
    code = CHILD.format(
        forbidden=forbidden_for(function),
        folder=str(ROOT / "functions" / function),
        layer=str(LAYER),
        serve=serve,
        mark=MARK,
    )
    found = _child(function, code, env)
    assert found["before"] == [], f"loaded at interpreter start-up, so the check cannot tell: {found}"
    return found


def test_every_function_is_checked() -> None:
    assert {"gateway", "catalogue"} <= set(FUNCTIONS)
    assert all(forbidden_for(f) == FORBIDDEN for f in ("gateway", "catalogue", "guest", "approvals"))


@pytest.mark.parametrize("function", FUNCTIONS)
def test_function_imports_no_sdk_and_no_dev_package(function: str) -> None:
    found = import_in_fresh_interpreter(function, bare_environment())
    assert found["after_import"] == [], f"functions/{function}/app.py loads {found['after_import']}"


def test_gateway_serves_mcp_without_the_sdk() -> None:
    found = import_in_fresh_interpreter("gateway", {**bare_environment(), **SERVE_ENV}, serve=True)
    assert found["served"] == [200, 200] and found["tools"] > 0, found
    assert found["after_serving"] == [], f"answering MCP loaded {found['after_serving']}"


#: Parts of core a function's import must leave for the paths that use them: the approvals function's
#: pages run no tool call and its approvers sign in only with ApproverSignIn; the OAuth function runs
#: no tool call; the gateway's core tools (the pipeline) and held calls are a few of its routes; a
#: family's REST call never lists tools, nor signs in an approver, nor runs an approved call, and only
#: a held call reads approvals and an audited one writes a record. Every family does load the
#: pipeline at import: every request needs it, so it stays in the init phase.
FAMILY_LATER = (
    "toolfront.approvals.approvers",
    "toolfront.approvals.records",  # a held call's, and the store's once it reads or writes one
    "toolfront.approvals.runner",
    "toolfront.audit.records",  # the first audited call's
    "toolfront.tools.manifest",
)
LEFT_FOR_LATER = {
    "approvals": (
        "toolfront.calls.pipeline",
        "toolfront.auth.authenticator",
        "toolfront.approvals.runner",
        "toolfront.oauth.token",
        "toolfront.tools.definition",
    ),
    "oauth": ("toolfront.calls.pipeline", "toolfront.tools.definition", "toolfront.oauth.facade"),
    "gateway": ("toolfront.calls.pipeline", "toolfront.auth.authenticator", "toolfront.approvals.records"),
    "catalogue": FAMILY_LATER,
    "guest": FAMILY_LATER,
    "audit_anchor": ("toolfront.calls.pipeline", "toolfront.calls.logs", "toolfront.auth.authenticator"),
}
ALWAYS_LATER = ("aws_lambda_powertools",)  # toolfront.calls.jsonlog writes the Powertools shape itself

#: After boto3 and a client (the cold-import floor), imports the function and reports which of the
#: named modules are loaded, and how many objects the import found and froze (toolfront's gc.freeze).
FLOOR_CHILD = """
import gc, json, sys
import boto3
boto3.client("dynamodb", region_name="us-east-1")
before = len(gc.get_objects())
sys.path[:0] = [{folder!r}, {layer!r}]
import app
loaded = sorted(m for m in sys.modules if m in {modules!r} or m.split(".")[0] in {packages!r})
pipeline = "toolfront.calls.pipeline" in sys.modules
found = {{"loaded": loaded, "pipeline": pipeline, "before": before, "frozen": gc.get_freeze_count()}}
print({mark!r} + json.dumps(found))
"""


def import_after_the_floor(function: str) -> dict[str, Any]:
    code = FLOOR_CHILD.format(
        folder=str(ROOT / "functions" / function),
        layer=str(LAYER),
        modules=LEFT_FOR_LATER[function],
        packages=ALWAYS_LATER,
        mark=MARK,
    )
    env = {**bare_environment(), "AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x"}
    return _child(function, code, env)


def test_every_function_has_its_import_rules() -> None:
    assert set(LEFT_FOR_LATER) == set(FUNCTIONS)


@pytest.mark.parametrize("function", FUNCTIONS)
def test_import_leaves_what_only_some_paths_need(function: str) -> None:
    found = import_after_the_floor(function)
    assert found["loaded"] == [], f"functions/{function}/app.py loads {found['loaded']} at import"


@pytest.mark.parametrize("function", FUNCTIONS)
def test_import_freezes_what_was_loaded_before_it(function: str) -> None:
    """boto3's objects are frozen, so the process's first full collection does not walk them."""
    found = import_after_the_floor(function)
    assert found["frozen"] >= 0.95 * found["before"], found


@pytest.mark.parametrize("function", ["catalogue", "guest"])
def test_a_family_loads_its_pipeline_with_the_function(function: str) -> None:
    """Not on the first request: the init phase is where a cold start's fixed work belongs."""
    assert import_after_the_floor(function)["pipeline"] is True


def _child(function: str, code: str, env: dict[str, str]) -> dict[str, Any]:
    """Run ``code`` (which imports ``functions/<function>/app.py``) in a fresh interpreter; what it
    printed after ``MARK``."""
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"importing functions/{function}/app.py failed:\n{done.stderr[-3000:]}"
    line = next(line for line in reversed(done.stdout.splitlines()) if line.startswith(MARK))
    found: dict[str, Any] = json.loads(line[len(MARK) :])
    return found
