"""IAM on the local stack and in the tests: each function's requests checked against its policy in
template.yaml (expanded by the SAM translator), refused as AWS refuses them."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from tests.aws import EVENT_ADMIN_KEY, ROOT, seed, template_enforcement, template_tables
from tests.conftest import load_family
from tests.helpers import load_event
from toolfront_dev.errors import TemplateError
from toolfront_dev.iam.account import is_write, usage_table
from toolfront_dev.iam.enforcement import Ledger, enforce, running_as
from toolfront_dev.iam.evaluation import Access, Policy
from toolfront_dev.iam.requests import accesses

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]
ROUND2_TEMPLATE = Path(__file__).resolve().parents[1] / "data" / "template-round2.yaml"
TABLE = "arn:aws:dynamodb:us-east-1:123456789012:table/"


def policy(*statements: dict[str, Any]) -> Policy:
    return Policy.parse([{"Statement": list(statements)}], where="test")


# --- the evaluation ----------------------------------------------------------------------------------


def test_an_allow_needs_both_the_action_and_the_resource() -> None:
    found = policy({"Effect": "Allow", "Action": ["dynamodb:GetItem"], "Resource": TABLE + "Keys"})
    assert found.allows(Access("dynamodb:GetItem", TABLE + "Keys"))
    assert not found.allows(Access("dynamodb:UpdateItem", TABLE + "Keys"))
    assert not found.allows(Access("dynamodb:GetItem", TABLE + "KeysX"))


def test_an_explicit_deny_wins_over_any_allow() -> None:
    found = policy(
        {"Effect": "Allow", "Action": "dynamodb:*", "Resource": "*"},
        {"Effect": "Deny", "Action": "dynamodb:DeleteItem", "Resource": TABLE + "Audit"},
    )
    assert found.allows(Access("dynamodb:DeleteItem", TABLE + "Keys"))
    assert not found.allows(Access("dynamodb:DeleteItem", TABLE + "Audit"))


def test_wildcards_match_actions_without_case_and_resources_with_it() -> None:
    found = policy({"Effect": "Allow", "Action": "DynamoDB:Get*", "Resource": TABLE + "K?ys/index/*"})
    assert found.allows(Access("dynamodb:GetItem", TABLE + "Keys/index/by_owner"))
    assert not found.allows(Access("dynamodb:GetItem", TABLE + "keys/index/by_owner"))


def test_conditions_follow_iams_rules_for_missing_and_multivalued_keys() -> None:
    leading = {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["apr_*"]}}
    found = policy({"Effect": "Allow", "Action": "dynamodb:GetItem", "Resource": "*", "Condition": leading})
    assert found.allows(Access("dynamodb:GetItem", "t", {"dynamodb:LeadingKeys": ("apr_1",)}))
    assert not found.allows(Access("dynamodb:GetItem", "t", {"dynamodb:LeadingKeys": ("apr_1", "tok_1")}))
    assert found.allows(Access("dynamodb:GetItem", "t"))  # ForAllValues over no values is true
    plain = {"StringEquals": {"aws:ResourceTag/owner": "oauth"}}
    tagged = policy({"Effect": "Allow", "Action": "x:Y", "Resource": "*", "Condition": plain})
    assert not tagged.allows(Access("x:Y", "r"))  # a missing key fails a plain operator
    assert tagged.allows(Access("x:Y", "r", {"aws:ResourceTag/owner": ("oauth",)}))


def test_a_condition_operator_it_cannot_evaluate_fails_loudly() -> None:
    with pytest.raises(TemplateError, match="DateGreaterThan"):
        policy({"Effect": "Allow", "Action": "x:Y", "Resource": "*", "Condition": {"DateGreaterThan": {}}})


# --- what a request needs ----------------------------------------------------------------------------


def test_a_transaction_needs_each_items_own_action_on_its_table() -> None:
    items = [
        {"Put": {"TableName": "Audit"}},
        {"Update": {"TableName": "Keys"}},
        {"ConditionCheck": {"TableName": "Idempotency"}},
        {"Delete": {"TableName": "Idempotency"}},
    ]
    found = accesses(
        "dynamodb", "TransactWriteItems", {"TransactItems": items}, region="us-east-1", account="1"
    )
    assert [(a.action, a.resource.rpartition("/")[2]) for a in found] == [
        ("dynamodb:PutItem", "Audit"),
        ("dynamodb:UpdateItem", "Keys"),
        ("dynamodb:ConditionCheckItem", "Idempotency"),
        ("dynamodb:DeleteItem", "Idempotency"),
    ]


def test_invoke_is_authorized_as_invoke_function_on_the_functions_arn() -> None:
    [found] = accesses(
        "lambda", "Invoke", {"FunctionName": "fn", "Qualifier": "live"}, region="r", account="1"
    )
    assert found == Access("lambda:InvokeFunction", "arn:aws:lambda:r:1:function:fn:live")


def test_an_operation_it_does_not_know_needs_its_action_on_everything() -> None:
    [found] = accesses("kms", "Decrypt", {"KeyId": "k"}, region="r", account="1")
    named = policy({"Effect": "Allow", "Action": "kms:Decrypt", "Resource": "arn:aws:kms:r:1:key/k"})
    assert found == Access("kms:Decrypt", "*") and not named.allows(found)


# --- the template, enforced --------------------------------------------------------------------------


@pytest.fixture
def round2_grants(aws: None) -> Iterator[None]:
    """The template of round 2, whose families and gateway could only read KeysTable."""
    previous = enforce(template_enforcement(_tables(), template_path=ROUND2_TEMPLATE))
    yield
    enforce(previous)


def _tables() -> dict[str, str]:
    return {logical_id: logical_id for logical_id in template_tables()}


def keyed(path: str, route: str, verb_noun: str) -> dict[str, Any]:
    event = load_event("catalogue_create_product", body="{}")
    event.update(rawPath=path, routeKey=route, pathParameters={"verb_noun": verb_noun})
    event["headers"] = {**event["headers"], "authorization": f"Bearer {EVENT_ADMIN_KEY}"}
    return event


CALLS = {
    "catalogue": (
        "/v1/tools/catalogue/list_products",
        "POST /v1/tools/catalogue/{verb_noun}",
        "list_products",
    ),
    "gateway": ("/v1/tools/system/get_actor", "POST /v1/tools/system/{verb_noun}", "get_actor"),
}


@pytest.mark.parametrize("family", sorted(CALLS))
def test_a_keyed_call_was_refused_by_round_twos_grants(
    round2_grants: None, family: str, caplog: pytest.LogCaptureFixture
) -> None:
    seed("events-admin", ["catalogue.*"], permissions=["catalogue"], key=EVENT_ADMIN_KEY)
    handler: Handler = load_family(family).lambda_handler
    answer = handler(keyed(*CALLS[family]), None)
    assert answer["statusCode"] == 500  # what AWS would have answered: AccessDenied, then a 500
    assert "AccessDeniedException" in caplog.text and "dynamodb:UpdateItem" in caplog.text


@pytest.mark.parametrize("family", sorted(CALLS))
def test_a_keyed_call_is_allowed_by_todays_grants(aws: None, family: str) -> None:
    seed("events-admin", ["catalogue.*"], permissions=["catalogue"], key=EVENT_ADMIN_KEY)
    handler: Handler = load_family(family).lambda_handler
    answer = handler(keyed(*CALLS[family]), None)
    assert answer["statusCode"] == 200, answer["body"]


def test_every_function_that_admits_keys_may_write_the_keys_item(aws: None) -> None:
    enforcement = template_enforcement(_tables())
    bucket = Access("dynamodb:UpdateItem", TABLE + "KeysTable")
    for function in ("CatalogueFunction", "GuestFunction", "GatewayFunction"):
        assert enforcement.policies[function].allows(bucket), function


def test_only_the_approvals_function_reaches_task_tokens_and_resumes_workflows(aws: None) -> None:
    enforcement = template_enforcement(_tables())
    token = Access("dynamodb:GetItem", TABLE + "ApprovalTokensTable")
    callback = Access("states:SendTaskSuccess", "*")
    reaching = {f for f, p in enforcement.policies.items() if p.allows(token) or p.allows(callback)}
    assert reaching == {"ApprovalsFunction"}


def test_no_function_may_change_or_remove_an_audit_record(aws: None) -> None:
    enforcement = template_enforcement(_tables())
    for action in ("UpdateItem", "DeleteItem", "BatchWriteItem"):
        change = Access(f"dynamodb:{action}", TABLE + "AuditTable")
        assert not any(p.allows(change) for p in enforcement.policies.values()), action


def test_a_request_outside_any_function_is_the_administrators_and_is_not_checked(aws: None) -> None:
    enforce(template_enforcement(_tables()))
    boto3.client("dynamodb").delete_item(TableName="AuditTable", Key={"pk": {"S": "x"}, "sk": {"N": "1"}})
    with running_as("CatalogueFunction"), pytest.raises(Exception, match="AccessDenied"):
        boto3.client("dynamodb").delete_item(TableName="AuditTable", Key={"pk": {"S": "x"}, "sk": {"N": "1"}})


# --- least privilege from both sides -----------------------------------------------------------------


def test_a_write_granted_and_never_used_is_reported_and_a_used_one_is_not() -> None:
    ledger = Ledger()
    ledger.grant(
        "Fn",
        policy(
            {"Effect": "Allow", "Action": ["dynamodb:GetItem", "dynamodb:PutItem"], "Resource": TABLE + "A"},
            {"Effect": "Allow", "Action": ["dynamodb:DeleteItem"], "Resource": TABLE + "toolfront-dev-B"},
        ),
    )
    ledger.use("Fn", Access("dynamodb:PutItem", TABLE + "toolfront-local-A"))
    unused = ledger.unused(is_write)
    assert [(u.action, u.resource.rpartition("/")[2]) for u in unused] == [("dynamodb:DeleteItem", "B")]
    table = usage_table(ledger)
    assert "| Fn | dynamodb:PutItem | table/A | used |" in table
    assert "| Fn | dynamodb:DeleteItem | table/B | **granted, never used** |" in table


def test_writes_are_told_apart_from_reads() -> None:
    assert is_write("dynamodb:UpdateItem") and is_write("states:SendTaskSuccess")
    assert is_write("cognito-idp:UpdateUserPoolClient") and not is_write("cognito-idp:ListUserPoolClients")
    assert not is_write("dynamodb:BatchGetItem") and not is_write("sns:Publish")


def test_the_template_parses_into_a_policy_per_function_and_state_machine(aws: None) -> None:
    found = template_enforcement(_tables()).policies
    assert set(found) >= {
        "GatewayFunction",
        "CatalogueFunction",
        "GuestFunction",
        "ApprovalsFunction",
        "ApprovalStateMachine",
    }
    assert json.dumps(sorted(found)) and (ROOT / "template.yaml").is_file()


def guest_call(handler: Handler, tool: str, data: dict[str, Any]) -> dict[str, Any]:
    event = load_event("catalogue_create_product", body=json.dumps(data))
    route = "POST /v1/tools/guest/{verb_noun}"
    event.update(rawPath=f"/v1/tools/guest/{tool}", routeKey=route, pathParameters={"verb_noun": tool})
    event["headers"] = {k: v for k, v in event["headers"].items() if k != "authorization"}
    return handler(event, None)


@pytest.mark.parametrize("family", ["catalogue", "guest"])
def test_a_held_call_whose_workflow_cannot_start_gives_its_idempotency_key_back(
    aws: None, monkeypatch: pytest.MonkeyPatch, family: str
) -> None:
    """The claim's release (DeleteItem on IdempotencyTable, granted to the families for it): the
    retry with the same key runs again instead of waiting on a claim that will never answer."""
    from tests.aws import APPROVAL_STATE_MACHINE
    from tests.conftest import reset_process_state

    arn = f"arn:aws:states:us-east-1:123456789012:stateMachine:{APPROVAL_STATE_MACHINE}"  # never created
    monkeypatch.setenv("TOOLFRONT_APPROVAL_STATE_MACHINE_ARN", arn)
    reset_process_state()
    handler: Handler = load_family(family).lambda_handler
    if family == "catalogue":
        seed("events-admin", ["catalogue.*"], permissions=["catalogue"], key=EVENT_ADMIN_KEY)
        path, route = "/v1/tools/catalogue/delete_product", "POST /v1/tools/catalogue/{verb_noun}"
        event = keyed(path, route, "delete_product")
        event["body"] = json.dumps({"sku": "MUG-01", "idempotency_key": "delete-mug-01"})

        def held() -> dict[str, Any]:
            return handler(event, None)
    else:
        token = json.loads(guest_call(handler, "start_session", {})["body"])["data"]["session_token"]
        subscribe = {"session_token": token, "email": "ann@example.com", "idempotency_key": "sub-1"}

        def held() -> dict[str, Any]:
            return guest_call(handler, "subscribe_newsletter", subscribe)

    for _ in range(2):  # the second is the same call again, not 409 idempotency_in_progress
        answer = held()
        assert answer["statusCode"] == 503, answer["body"]
    assert boto3.client("dynamodb").scan(TableName="IdempotencyTable")["Items"] == []
