"""Least privilege: each function and the state machine reach exactly what they use, nothing with "*"
except the two Step Functions callbacks AWS only grants that way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cfnlint.decode import decode

from toolfront_dev.families import family_apps

ROOT = Path(__file__).resolve().parents[2]
CORE = {
    ("DynamoDBReadPolicy", "KeysTable"),
    ("DynamoDBReadPolicy", "PrincipalsTable"),
    ("DynamoDBReadPolicy", "OAuthClientsTable"),  # the audience check of Cognito tokens
    ("DynamoDBCrudPolicy", "IdempotencyTable"),
    ("DynamoDBCrudPolicy", "RateLimitsTable"),
    ("DynamoDBCrudPolicy", "ApprovalsTable"),
    ("Statement", "dynamodb:PutItem"),  # audit records: appended, never changed
}
FAMILY = CORE | {
    ("StepFunctionsExecutionPolicy", "${AWS::StackName}-approval"),
    ("Statement", "states:SendTaskFailure,states:SendTaskSuccess"),  # system tools on /mcp/<family>
}
CALLBACKS = frozenset({"states:SendTaskSuccess", "states:SendTaskFailure"})
AUDIT_APPEND = frozenset({"dynamodb:PutItem"})
APP_CLIENTS = frozenset(
    {
        "cognito-idp:CreateUserPoolClient",
        "cognito-idp:UpdateUserPoolClient",
        "cognito-idp:DeleteUserPoolClient",
        "cognito-idp:ListUserPoolClients",
    }
)
NEEDS = {
    "CatalogueFunction": FAMILY | {("DynamoDBCrudPolicy", "ProductsTable")},
    "GuestFunction": FAMILY | {("DynamoDBCrudPolicy", "GuestTable")},
    "GatewayFunction": CORE | {("Statement", "states:SendTaskFailure,states:SendTaskSuccess")},
    "ApprovalsFunction": {
        ("DynamoDBCrudPolicy", "ApprovalsTable"),
        ("DynamoDBReadPolicy", "PrincipalsTable"),  # approvers' permissions (ApproverSignIn)
        ("Statement", "cognito-idp:ListUserPoolClients"),  # the approvers' app client, by name
        ("Statement", "dynamodb:PutItem"),
        ("SNSPublishMessagePolicy", "ApproverTopic"),
        ("Statement", "states:SendTaskFailure,states:SendTaskSuccess"),
    },
    # The sign-in facade alone writes the clients table and manages app clients (in its pool only).
    "OAuthFunction": {
        ("DynamoDBCrudPolicy", "OAuthClientsTable"),
        ("DynamoDBCrudPolicy", "RateLimitsTable"),
        ("Statement", "dynamodb:PutItem"),  # registrations' audit records
        (
            "Statement",
            "cognito-idp:CreateUserPoolClient,cognito-idp:DeleteUserPoolClient,cognito-idp:UpdateUserPoolClient",
        ),
    },
    "ApprovalStateMachine": {("LambdaInvokePolicy", "ApprovalsFunction")},
}
#: Who invokes every family's function: the gateway (MCP calls on /mcp) and the workflow (approved calls).
INVOKERS = ("GatewayFunction", "ApprovalStateMachine")
SHIPPED_FAMILIES = {"catalogue", "guest"}


@pytest.fixture(scope="module")
def resources() -> dict[str, Any]:
    template, problems = decode(str(ROOT / "template.yaml"))
    assert not problems
    found: dict[str, Any] = template["Resources"]
    return found


def families(resources: dict[str, Any]) -> dict[str, str]:
    """Every family's function: its family name by logical id (a family's app.py declares tools)."""
    declared = {app.parent.name for app in family_apps(ROOT)}
    return {
        lid: family
        for lid, res in resources.items()
        if res["Type"] == "AWS::Serverless::Function"
        and (family := res["Properties"]["CodeUri"].strip("/").removeprefix("functions/")) in declared
    }


def needs(resources: dict[str, Any]) -> dict[str, set[tuple[str, str]]]:
    """What each principal may reach: NEEDS, every family added by `toolfront new family` (the
    family's grants and its own tables, the ones its environment names), and the invoke grants."""
    found = {lid: set(grants) for lid, grants in NEEDS.items()}
    for lid, family in families(resources).items():
        invoke = ("LambdaInvokePolicy", f"${{AWS::StackName}}-{family}")
        for invoker in INVOKERS:
            found[invoker].add(invoke)
        if lid not in found:
            variables = resources[lid]["Properties"].get("Environment", {}).get("Variables", {})
            own = {("DynamoDBCrudPolicy", v["Ref"]) for v in variables.values() if isinstance(v, dict)}
            found[lid] = FAMILY | own
    return found


def _target(value: Any) -> str:
    """The single resource a policy template names (a !Ref, a !GetAtt or a !Sub of a name)."""
    if isinstance(value, dict) and len(value) == 1:
        ((kind, inner),) = value.items()
        if kind == "Ref":
            return str(inner)
        if kind == "Fn::GetAtt":
            return str(inner[0] if isinstance(inner, list) else inner.split(".")[0])
        if kind == "Fn::Sub":
            return str(inner)
    raise AssertionError(f"a policy template must name one resource by reference, got {value!r}")


def grants(policies: list[Any]) -> set[tuple[str, str]]:
    found = set()
    for policy in policies:
        assert isinstance(policy, dict) and len(policy) == 1, f"unexpected policy {policy!r}"
        ((name, body),) = policy.items()
        if name == "Fn::If":  # a grant only a condition's resources need: the grant, or none at all
            _condition, granted, otherwise = body
            assert otherwise == {"Ref": "AWS::NoValue"}, (
                f"a conditional grant must grant nothing else: {policy!r}"
            )
            ((name, body),) = granted.items()
        if name == "Statement":
            for statement in body:
                actions = sorted(
                    statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
                )
                allowed = CALLBACKS | APP_CLIENTS | AUDIT_APPEND
                assert set(actions) <= allowed, f"an inline statement beyond these: {actions}"
                if set(actions) & APP_CLIENTS:  # app clients of the stack's own pool, no other
                    assert statement["Resource"] == {"Fn::GetAtt": ["UserPool", "Arn"]}, statement
                if set(actions) & AUDIT_APPEND:  # puts on the audit table alone: no update, no delete
                    assert set(actions) == AUDIT_APPEND, statement
                    assert statement["Resource"] == {"Fn::GetAtt": ["AuditTable", "Arn"]}, statement
                found.add(("Statement", ",".join(actions)))
            continue
        (parameter,) = body.values()
        found.add((name, _target(parameter)))
    return found


def test_each_principal_reaches_exactly_what_it_uses(resources: dict[str, Any]) -> None:
    for logical_id, expected in needs(resources).items():
        assert grants(resources[logical_id]["Properties"].get("Policies", [])) == expected, logical_id


def test_the_shipped_families_are_pinned_here(resources: dict[str, Any]) -> None:
    assert set(families(resources).values()) >= SHIPPED_FAMILIES
    assert {"CatalogueFunction", "GuestFunction"} <= set(NEEDS)


def test_every_function_is_listed_here(resources: dict[str, Any]) -> None:
    functions = {lid for lid, res in resources.items() if res["Type"] == "AWS::Serverless::Function"}
    assert functions <= set(needs(resources))


def test_no_statement_grants_star_actions_or_star_resources_beyond_callbacks(
    resources: dict[str, Any],
) -> None:
    for logical_id, res in resources.items():
        for policy in res.get("Properties", {}).get("Policies", []) or []:
            for statement in policy.get("Statement", []) if isinstance(policy, dict) else []:
                actions = (
                    statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
                )
                assert not any(a == "*" or a.endswith(":*") for a in actions), logical_id
                if statement.get("Resource") == "*":
                    # SendTaskSuccess/Failure accept no resource-level permission: the token is the authority
                    assert set(actions) <= CALLBACKS, logical_id
