"""Least privilege: each function and the state machine reach exactly what they use, nothing with "*"
except the two Step Functions callbacks AWS only grants that way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cfnlint.decode import decode

ROOT = Path(__file__).resolve().parents[2]
CORE = {
    ("DynamoDBReadPolicy", "KeysTable"),
    ("DynamoDBReadPolicy", "PrincipalsTable"),
    ("DynamoDBReadPolicy", "OAuthClientsTable"),  # the audience check of Cognito tokens
    ("DynamoDBCrudPolicy", "IdempotencyTable"),
    ("DynamoDBCrudPolicy", "RateLimitsTable"),
    ("DynamoDBCrudPolicy", "ApprovalsTable"),
}
FAMILY = CORE | {
    ("StepFunctionsExecutionPolicy", "${AWS::StackName}-approval"),
    ("Statement", "states:SendTaskFailure,states:SendTaskSuccess"),  # system tools on /mcp/<family>
}
CALLBACKS = frozenset({"states:SendTaskSuccess", "states:SendTaskFailure"})
APP_CLIENTS = frozenset(
    {
        "cognito-idp:CreateUserPoolClient",
        "cognito-idp:UpdateUserPoolClient",
        "cognito-idp:DeleteUserPoolClient",
    }
)
NEEDS = {
    "CatalogueFunction": FAMILY | {("DynamoDBCrudPolicy", "ProductsTable")},
    "GuestFunction": FAMILY | {("DynamoDBCrudPolicy", "GuestTable")},
    "GatewayFunction": CORE
    | {
        ("LambdaInvokePolicy", "${AWS::StackName}-catalogue"),
        ("LambdaInvokePolicy", "${AWS::StackName}-guest"),
        ("Statement", "states:SendTaskFailure,states:SendTaskSuccess"),
    },
    "ApprovalsFunction": {
        ("DynamoDBCrudPolicy", "ApprovalsTable"),
        ("SNSPublishMessagePolicy", "ApproverTopic"),
        ("Statement", "states:SendTaskFailure,states:SendTaskSuccess"),
    },
    # The sign-in facade alone writes the clients table and manages app clients (in its pool only).
    "OAuthFunction": {
        ("DynamoDBCrudPolicy", "OAuthClientsTable"),
        ("DynamoDBCrudPolicy", "RateLimitsTable"),
        (
            "Statement",
            "cognito-idp:CreateUserPoolClient,cognito-idp:DeleteUserPoolClient,cognito-idp:UpdateUserPoolClient",
        ),
    },
    "ApprovalStateMachine": {
        ("LambdaInvokePolicy", "ApprovalsFunction"),
        ("LambdaInvokePolicy", "${AWS::StackName}-catalogue"),
        ("LambdaInvokePolicy", "${AWS::StackName}-guest"),
    },
}


@pytest.fixture(scope="module")
def resources() -> dict[str, Any]:
    template, problems = decode(str(ROOT / "template.yaml"))
    assert not problems
    found: dict[str, Any] = template["Resources"]
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
                assert set(actions) <= CALLBACKS | APP_CLIENTS, f"an inline statement beyond these: {actions}"
                if set(actions) & APP_CLIENTS:  # app clients of the stack's own pool, no other
                    assert statement["Resource"] == {"Fn::GetAtt": ["UserPool", "Arn"]}, statement
                found.add(("Statement", ",".join(actions)))
            continue
        (parameter,) = body.values()
        found.add((name, _target(parameter)))
    return found


@pytest.mark.parametrize("logical_id", sorted(NEEDS))
def test_each_principal_reaches_exactly_what_it_uses(resources: dict[str, Any], logical_id: str) -> None:
    assert grants(resources[logical_id]["Properties"].get("Policies", [])) == NEEDS[logical_id]


def test_every_function_is_listed_here(resources: dict[str, Any]) -> None:
    functions = {lid for lid, res in resources.items() if res["Type"] == "AWS::Serverless::Function"}
    assert functions <= set(NEEDS)


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
