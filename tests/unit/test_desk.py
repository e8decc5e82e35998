"""Holding a call on moto: nothing waits for ever, and the caller's own key never reaches the record."""

from __future__ import annotations

import json

import boto3
import pytest

from toolfront import Tool
from toolfront.approvals.desk import ApprovalDesk
from toolfront.approvals.policy import ConfirmationReason
from toolfront.approvals.records import ApprovalStatus
from toolfront.approvals.store import ApprovalStore
from toolfront.approvals.workflow import Workflow
from toolfront.auth.actors import Actor, ActorKind
from toolfront.errors import StoreUnavailableError

KEY = "tfk_abcdefghijkl_" + "s" * 32
MISSING_MACHINE = "arn:aws:states:us-east-1:123456789012:stateMachine:no-such-machine"
TOOL = Tool.new(
    name="shop.add_note",
    audience="admin",
    scope="shop.notes:write",
    permission="shop",
    handler=lambda data, ctx: {},
    input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
)


def hold(desk: ApprovalDesk) -> dict[str, object]:
    return desk.hold(
        tool=TOOL,
        arguments={"text": f"my key is {KEY}"},
        actor=Actor(ActorKind.KEY, "abcdefghijkl", "alice"),
        reason=ConfirmationReason.REQUIRES_APPROVAL,
        request_id="req-1",
        function="shop-fn",
        base_url="https://api.example.com",
        fields=TOOL.secret_fields,
        client_token_hash=None,
        secrets=(KEY,),
    )


def records(table: str) -> list[dict[str, object]]:
    items: list[dict[str, object]] = boto3.client("dynamodb").scan(TableName=table)["Items"]
    return items


def test_a_workflow_that_cannot_start_ends_the_approval_failed(aws: None) -> None:
    table = "ApprovalsTable"
    store = ApprovalStore(table, boto3.client("dynamodb"))
    desk = ApprovalDesk(store, Workflow(MISSING_MACHINE, boto3.client("stepfunctions")), 3600)
    with pytest.raises(StoreUnavailableError):
        hold(desk)
    (item,) = records(table)
    approval = store.get(str(item["approval_id"]["S"]))  # type: ignore[index]
    assert approval is not None and approval.status is ApprovalStatus.FAILED
    assert approval.error is not None and approval.error["code"] == "unavailable"


def test_a_key_pasted_into_the_input_is_redacted_from_the_record(aws: None) -> None:
    table = "ApprovalsTable"
    store = ApprovalStore(table, boto3.client("dynamodb"))
    desk = ApprovalDesk(store, Workflow(MISSING_MACHINE, boto3.client("stepfunctions")), 3600)
    with pytest.raises(StoreUnavailableError):
        hold(desk)
    assert KEY not in json.dumps(records(table))
    assert "[redacted]" in json.dumps(records(table))
