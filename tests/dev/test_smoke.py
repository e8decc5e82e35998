"""``toolfront smoke --local``: every check passes on a healthy stack and nothing it made is left; a
broken stack (stopped, a table gone, behind a base path the origin does not serve) names the failing
check and its fix, and exits 1.

The destructive and the base-path cases run a ``toolfront dev`` of their own in another process (this
one already runs the shared stack), so no other test meets what they break.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.dev.conftest import Toolfront
from tests.dev.smoke_stacks import BasePathDomain, DevProcess, own_stack
from toolfront_dev.aws import dynamodb_client, moto_client
from toolfront_dev.devinfo import DEV_JSON
from toolfront_dev.net import free_port
from toolfront_dev.smoke import MARKS, SKIP_MARK, CheckResult, Status, published_tools
from toolfront_dev.smoke_discovery import BASE_PATH_FIX, inserted
from toolfront_dev.smoke_key import example_input
from toolfront_dev.stack import LocalStack

CHECKS = (
    "health",
    "openapi",
    "oauth discovery /mcp",
    "oauth discovery /mcp/catalogue",
    "oauth discovery /mcp/guest",
    "authorization server metadata",
    "key reads a tool",
    "held call",
    "idempotent replay",
    "cancelled call",
    "cleanup",
    "audit trail",
    "dynamodb transport",
)


def lines(out: str) -> dict[str, str]:
    """The check lines of the output, by check name: ``{"health": "✓ health", ...}``."""
    found = {}
    for line in out.splitlines():
        if line[:2] in {f"{mark} " for mark in MARKS.values()}:
            found[line[2:].split(":", 1)[0]] = line
    return found


def ids(client: Any, table: str, field: str) -> set[str]:
    return {item[field]["S"] for item in client.scan(TableName=table, ConsistentRead=True)["Items"]}


def approvals(client: Any, table: str) -> dict[str, str]:
    items = client.scan(TableName=table, ConsistentRead=True)["Items"]
    return {
        i["approval_id"]["S"]: i["status"]["S"] for i in items if i["approval_id"]["S"].startswith("apr_")
    }


# --- on the shared, healthy stack -----------------------------------------------------------------


def test_smoke_local_passes_every_check_and_leaves_nothing_behind(
    stack: LocalStack, local_project: Path, toolfront: Toolfront
) -> None:
    client, tables = dynamodb_client(stack.moto_endpoint), stack.table_names
    keys, principals = (
        ids(client, tables["KeysTable"], "key_id"),
        ids(client, tables["PrincipalsTable"], "principal_id"),
    )
    pending = {a for a, status in approvals(client, tables["ApprovalsTable"]).items() if status == "pending"}

    outcome = toolfront("smoke", "--local", "--project", local_project)

    assert outcome.code == 0, outcome.out + outcome.err
    found = lines(outcome.out)
    assert list(found) == list(CHECKS), outcome.out
    assert all(line.startswith("✓ ") for line in found.values()), outcome.out
    held = re.search(r"approval (apr_[0-9a-f]{24}), workflow RUNNING", found["held call"])
    assert held, found["held call"]
    assert "Idempotent-Replayed: true" in found["idempotent replay"]
    # Nothing it made is left: no key, no principal, no pending approval (its own is cancelled).
    assert ids(client, tables["KeysTable"], "key_id") == keys
    assert ids(client, tables["PrincipalsTable"], "principal_id") == principals
    after = approvals(client, tables["ApprovalsTable"])
    assert after[held.group(1)] == "cancelled"
    assert {a for a, status in after.items() if status == "pending"} <= pending
    execution = stack.info.state_machines["ApprovalStateMachine"].replace(":stateMachine:", ":execution:")
    described = moto_client(stack.moto_endpoint, "stepfunctions").describe_execution(
        executionArn=f"{execution}:{held.group(1)}"
    )
    assert described["status"] != "RUNNING"


def test_smoke_stack_name_finds_the_stack_through_its_outputs_and_passes(
    stack: LocalStack, toolfront: Toolfront
) -> None:
    """A "deployed" stack: a CloudFormation stack (moto's) whose outputs name the local stack's API,
    tables, workflow and user pool, as template.yaml's outputs name a deployed one's."""
    info = stack.info
    outputs = {f"{logical_id}Name": name for logical_id, name in info.tables.items()}
    outputs |= {
        "ApiUrl": info.api_url,
        "ApprovalStateMachineArn": info.state_machines["ApprovalStateMachine"],
        "UserPoolId": next(iter(info.user_pools.values())),
    }
    template = {
        "Parameters": {"PublicUrl": {"Type": "String", "Default": ""}},
        "Resources": {"Topic": {"Type": "AWS::SNS::Topic"}},
        "Outputs": {key: {"Value": value} for key, value in outputs.items()},
    }
    name = f"toolfront-smoke-{uuid.uuid4().hex[:8]}"
    moto_client(stack.moto_endpoint, "cloudformation").create_stack(
        StackName=name, TemplateBody=json.dumps(template)
    )

    outcome = toolfront("smoke", "--stack-name", name)

    assert outcome.code == 0, outcome.out + outcome.err
    assert outcome.out.splitlines()[0].startswith(f"toolfront smoke: stack {name!r}")
    assert list(lines(outcome.out)) == list(CHECKS), outcome.out


def test_smoke_local_refuses_a_tool_that_is_not_held_for_a_key(
    stack: LocalStack, local_project: Path, toolfront: Toolfront
) -> None:
    outcome = toolfront("smoke", "--local", "--project", local_project, "--tool", "catalogue.get_product")

    assert outcome.code == 1
    found = lines(outcome.out)
    assert found["held call"].startswith("✗ held call: --tool catalogue.get_product: choose an admin tool")
    assert "key reads a tool" not in found  # nothing was made for it
    assert found["health"].startswith("✓")


# --- broken stacks --------------------------------------------------------------------------------


def test_smoke_local_on_a_stopped_stack_names_the_health_check_and_the_fix(
    tmp_path: Path, stack: LocalStack, toolfront: Toolfront
) -> None:
    api, moto = free_port(), free_port()  # nothing listens there
    info = json.loads(stack.dev_json_path.read_text(encoding="utf-8"))
    info |= {"api_url": f"http://127.0.0.1:{api}", "moto_endpoint": f"http://127.0.0.1:{moto}"}
    (tmp_path / DEV_JSON).parent.mkdir(parents=True)
    (tmp_path / DEV_JSON).write_text(json.dumps(info), encoding="utf-8")

    outcome = toolfront("smoke", "--local", "--project", tmp_path)

    assert outcome.code == 1
    found = lines(outcome.out)
    assert found["health"].startswith(f"✗ health: nothing answered at http://127.0.0.1:{api}/health")
    assert "is `toolfront dev` (`make dev`) still running" in found["health"]
    assert found["key"] == f"{SKIP_MARK} key: GET /health failed"
    assert found["dynamodb transport"].startswith(
        "✗ dynamodb transport: GetItem through the transport did not"
    )


def test_smoke_local_without_a_local_stack_says_how_to_start_one(
    tmp_path: Path, toolfront: Toolfront
) -> None:
    outcome = toolfront("smoke", "--local", "--project", tmp_path)

    assert outcome.code == 1
    assert "run `make dev` first" in outcome.err


def test_smoke_local_with_a_table_gone_names_the_failing_checks(tmp_path: Path, toolfront: Toolfront) -> None:
    with own_stack(tmp_path) as dev:
        client = dynamodb_client(dev.moto_endpoint)
        client.delete_table(TableName=dev.table("KeysTable"))

        outcome = toolfront("smoke", "--local", "--project", dev.project)

        assert outcome.code == 1
        found = lines(outcome.out)
        assert found["health"].startswith("✓")
        assert found["key reads a tool"].startswith("✗ key reads a tool:")
        assert "ResourceNotFoundException" in found["key reads a tool"]
        assert found["held call"] == f"{SKIP_MARK} held call: key reads a tool failed"
        assert found["dynamodb transport"].startswith("✗ dynamodb transport: GetItem through the transport:")
        assert "ResourceNotFoundException" in found["dynamodb transport"]
        assert "restart `toolfront dev`" in found["dynamodb transport"]
        # What it made before the failure (the grant) is removed all the same.
        assert found["cleanup"].startswith("✓ cleanup")
        made = ids(client, dev.table("PrincipalsTable"), "principal_id")
        assert {p for p in made if p.startswith("smoke-")} == set()


def test_smoke_local_of_a_key_only_stack_skips_oauth_discovery_saying_why(
    tmp_path: Path, toolfront: Toolfront
) -> None:
    with own_stack(tmp_path, "EnableCognito=false") as dev:
        outcome = toolfront("smoke", "--local", "--project", dev.project)

    assert outcome.code == 0, outcome.out  # a skipped check is no failure
    found = lines(outcome.out)
    assert found["oauth discovery"] == (
        f"{SKIP_MARK} oauth discovery: the stack signs nobody in (EnableCognito=false): clients use keys"
    )
    assert found["cleanup"].startswith("✓ cleanup")


# --- behind a base path ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def behind_base_path(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DevProcess, BasePathDomain]]:
    """A stack whose PublicUrl is ``http://127.0.0.1:<port>/base``, served by a ``BasePathDomain``."""
    port, api = free_port(), free_port()
    public = f"http://127.0.0.1:{port}/base"
    with own_stack(tmp_path_factory.mktemp("base"), f"PublicUrl={public}", port=api) as dev:
        domain = BasePathDomain(port, dev.api_url)
        try:
            yield dev, domain
        finally:
            domain.close()


def test_smoke_behind_a_base_path_not_mapped_at_the_root_names_the_fix(
    behind_base_path: tuple[DevProcess, BasePathDomain], toolfront: Toolfront
) -> None:
    dev, domain = behind_base_path
    domain.root_mapped = False

    outcome = toolfront("smoke", "--local", "--project", dev.project, "--url", domain.url)

    assert outcome.code == 1
    found = lines(outcome.out)
    origin = domain.url.removesuffix("/base")
    expected = f"{origin}/.well-known/oauth-protected-resource/base/mcp"
    assert (
        found["oauth discovery /mcp"]
        == f"✗ oauth discovery /mcp: GET {expected} answered 404 — {BASE_PATH_FIX}"
    )
    # Everything else reaches the API through its base path.
    for name in ("health", "openapi", "key reads a tool", "held call", "cancelled call", "cleanup"):
        assert found[name].startswith("✓"), found[name]


def test_smoke_behind_a_base_path_mapped_at_the_root_too_passes(
    behind_base_path: tuple[DevProcess, BasePathDomain], toolfront: Toolfront
) -> None:
    dev, domain = behind_base_path
    domain.root_mapped = True

    outcome = toolfront("smoke", "--local", "--project", dev.project, "--url", domain.url)

    assert outcome.code == 0, outcome.out
    assert all(line.startswith("✓") for line in lines(outcome.out).values()), outcome.out


# --- the checks' parts ----------------------------------------------------------------------------


def test_check_lines_mark_each_outcome() -> None:
    assert CheckResult("health", Status.PASSED).line == "✓ health"
    assert CheckResult("health", Status.FAILED, "nothing answered — start it").line == (
        "✗ health: nothing answered — start it"
    )
    assert (
        CheckResult("oauth discovery", Status.SKIPPED, "no sign-in").line
        == f"{SKIP_MARK} oauth discovery: no sign-in"
    )


def test_inserted_puts_the_well_known_prefix_at_the_origin() -> None:
    prefix = "/.well-known/oauth-authorization-server"
    assert inserted("https://api.example.com/tools/", prefix) == f"https://api.example.com{prefix}/tools"
    assert inserted("https://api.example.com", prefix) == f"https://api.example.com{prefix}"


def test_published_tools_reads_the_tool_operations_of_an_openapi_document() -> None:
    operation = {
        "x-toolfront-audience": "admin",
        "x-toolfront-scope": "catalogue.products:write",
        "x-toolfront-permission": "catalogue",
        "x-toolfront-danger": "always",
        "x-toolfront-annotations": {"read_only": False},
        "requestBody": {"content": {"application/json": {"schema": {"type": "object"}}}},
    }
    document = {
        "paths": {
            "/health": {"get": {}},
            "/v1/tools": {"get": {}},
            "/v1/tools/catalogue/delete_product": {"post": operation},
        }
    }
    [tool] = published_tools(document)
    assert (tool.name, tool.family, tool.scope, tool.permission) == (
        "catalogue.delete_product",
        "catalogue",
        "catalogue.products:write",
        "catalogue",
    )
    assert (tool.audience, tool.danger, tool.read_only, tool.input_schema) == (
        "admin",
        "always",
        False,
        {"type": "object"},
    )


def test_example_input_fills_required_properties_only() -> None:
    schema = {
        "properties": {
            "sku": {"type": "string", "maxLength": 8},
            "kind": {"type": "string", "enum": ["a", "b"]},
            "count": {"type": "integer", "minimum": 3},
            "note": {"type": "string"},
        },
        "required": ["sku", "kind", "count"],
    }
    assert example_input(schema, "SMOKE-ABCDEF12") == {"sku": "SMOKE-AB", "kind": "a", "count": 3}
