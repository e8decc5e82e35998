"""Least privilege, by the template's own rules: read from each role as the SAM translator builds it.

What each function uses is proven from the other side by the suite's account (tests/iam_account.py:
a whole run fails on a write granted and never used); these rules hold whatever the suite ran.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cfnlint.decode import decode

from tests.aws import template_enforcement, template_tables
from toolfront_dev.families import family_apps
from toolfront_dev.iam.account import is_write, short_resource
from toolfront_dev.iam.enforcement import Enforcement, logical_resource
from toolfront_dev.iam.evaluation import Access

ROOT = Path(__file__).resolve().parents[2]
CALLBACKS = frozenset({"states:SendTaskSuccess", "states:SendTaskFailure"})
#: Who invokes every family's function: the gateway (MCP calls on /mcp) and the workflow (approved calls).
INVOKERS = ("GatewayFunction", "ApprovalStateMachine")
SHIPPED_FAMILIES = {"CatalogueFunction": "ProductsTable", "GuestFunction": "GuestTable"}


@pytest.fixture(scope="module")
def resources() -> dict[str, Any]:
    template, problems = decode(str(ROOT / "template.yaml"))
    assert not problems
    found: dict[str, Any] = template["Resources"]
    return found


@pytest.fixture
def enforcement(aws: None) -> Enforcement:
    return template_enforcement({logical_id: logical_id for logical_id in template_tables()})


def grants(enforcement: Enforcement, function: str) -> set[tuple[str, str]]:
    """(action, resource) of a function's Allow statements, in the template's names."""
    policy = enforcement.policies[function]
    return {(action, short_resource(logical_resource(resource))) for action, resource in policy.granted()}


def families(resources: dict[str, Any]) -> dict[str, str]:
    """Every family's function: its family name by logical id (a family's app.py declares tools)."""
    declared = {app.parent.name for app in family_apps(ROOT)}
    return {
        lid: family
        for lid, res in resources.items()
        if res["Type"] == "AWS::Serverless::Function"
        and (family := res["Properties"]["CodeUri"].strip("/").removeprefix("functions/")) in declared
    }


def test_no_statement_grants_every_action_or_every_resource_beyond_callbacks(
    enforcement: Enforcement,
) -> None:
    for function, policy in enforcement.policies.items():
        for action, resource in policy.granted():
            assert action != "*" and not action.endswith(":*"), (function, action)
            if resource == "*":  # SendTask* accept no resource-level permission: the token decides
                assert action in CALLBACKS and function == "ApprovalsFunction", (function, action)


def test_every_family_reaches_the_pipelines_tables_exactly_as_the_catalogue_does(
    enforcement: Enforcement, resources: dict[str, Any]
) -> None:
    def core(function: str) -> set[tuple[str, str]]:
        own = f"table/{SHIPPED_FAMILIES.get(function, '')}"
        return {g for g in grants(enforcement, function) if not g[1].startswith(own) or own == "table/"}

    expected = core("CatalogueFunction")
    assert ("dynamodb:UpdateItem", "table/KeysTable") in expected  # the key gate's bucket (N1)
    for function in families(resources):
        own_tables = {g for g in core(function) if g not in expected}
        assert core(function) - own_tables == expected, function
        assert all(g[1].startswith("table/") for g in own_tables), (function, own_tables)


def test_the_gateway_and_the_workflow_invoke_every_family(
    enforcement: Enforcement, resources: dict[str, Any]
) -> None:
    for function, family in families(resources).items():
        arn = f"arn:aws:lambda:us-east-1:123456789012:function:toolfront-unit-{family}"
        for invoker in INVOKERS:
            assert enforcement.policies[invoker].allows(Access("lambda:InvokeFunction", arn)), (
                invoker,
                function,
            )


def test_the_shipped_families_write_their_own_tables_only_as_their_tools_do(enforcement: Enforcement) -> None:
    products = {a for a, r in grants(enforcement, "CatalogueFunction") if r == "table/ProductsTable"}
    assert {a for a in products if is_write(a)} == {
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:DeleteItem",
    }
    guests = {a for a, r in grants(enforcement, "GuestFunction") if r == "table/GuestTable"}
    assert {a for a in guests if is_write(a)} == {"dynamodb:PutItem"}


def test_the_sign_in_facade_alone_manages_app_clients(enforcement: Enforcement) -> None:
    managing = {
        function
        for function in enforcement.policies
        for action, _ in grants(enforcement, function)
        if action.startswith("cognito-idp:") and is_write(action)
    }
    assert managing == {"OAuthFunction"}
