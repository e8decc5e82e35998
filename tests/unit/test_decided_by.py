"""``decided_by`` on the approval in every path (the link, a guest's confirm_call, the requester's
cancellation, the expiry), each with its audit record, which names the decider and no secret."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import boto3
import pytest

from tests.aws import approval_state_machine
from toolfront import Tool
from toolfront.approvals.decisions import Decisions
from toolfront.approvals.desk import ApprovalDesk
from toolfront.approvals.policy import ConfirmationReason
from toolfront.approvals.records import Approval, ApprovalStatus, hash_code
from toolfront.approvals.store import ApprovalStore
from toolfront.approvals.workflow import Workflow, WorkflowCallbacks
from toolfront.audit.log import AuditLog
from toolfront.audit.records import decided_by
from toolfront.audit.trail import read_trail
from toolfront.audit.verification import problems
from toolfront.auth.actors import Actor, ActorKind
from toolfront.errors import ApprovalClosedError

CODE = "the-code-of-the-link-" + "c" * 22
TOKEN_HASH = "f" * 64
TOOL = Tool.new(
    name="shop.delete_item",
    audience="admin",
    scope="shop.items:write",
    permission="shop",
    handler=lambda data, ctx: {},
    input_schema={"type": "object", "properties": {"sku": {"type": "string"}}},
)


@pytest.fixture
def held(aws: None) -> tuple[Decisions, Approval]:
    client = boto3.client("dynamodb")
    machine = approval_state_machine()
    store = ApprovalStore("ApprovalsTable", client)
    workflow = Workflow(machine, boto3.client("stepfunctions"))
    data = ApprovalDesk(store, workflow, 3600).hold(
        tool=TOOL,
        arguments={"sku": "SKU-VALUE-42"},
        actor=Actor(ActorKind.KEY, "abcdefghijkl", "alice"),
        reason=ConfirmationReason.REQUIRES_APPROVAL,
        request_id="req-1",
        function="shop-fn",
        base_url="https://api.example.com",
        fields=TOOL.secret_fields,
        client_token_hash=TOKEN_HASH,
        secrets=(),
    )
    approval = store.get(str(data["approval_id"]))
    assert approval is not None
    # The workflow's park task: a code for the link (no task token: nothing waits in this test).
    client.update_item(
        TableName="ApprovalsTable",
        Key={"approval_id": {"S": approval.approval_id}},
        UpdateExpression="SET code_hash = :c",
        ExpressionAttributeValues={":c": {"S": hash_code(CODE)}},
    )
    callbacks = WorkflowCallbacks("ApprovalTokensTable", boto3.client("stepfunctions"), client)
    return Decisions(store, callbacks, audit=AuditLog("AuditTable", client=client)), approval


def deciding_at(moment: datetime) -> Decisions:
    """Decisions whose clock reads ``moment`` (the store and workflow of the fixture's)."""
    client = boto3.client("dynamodb")
    return Decisions(
        ApprovalStore("ApprovalsTable", client),
        WorkflowCallbacks("ApprovalTokensTable", boto3.client("stepfunctions"), client),
        clock=lambda: moment,
        audit=AuditLog("AuditTable", client=client),
    )


def audit_records() -> list[dict[str, object]]:
    trail = read_trail(boto3.client("dynamodb"), "AuditTable")
    assert problems(trail, now=datetime.now(UTC), retention_days=400) == []
    return [r.content or {} for r in trail.newest_first()]


def test_the_link_decides_as_link(held: tuple[Decisions, Approval]) -> None:
    decisions, approval = held
    decided = decisions.decide(approval.approval_id, CODE, "reject", by=decided_by("link", None))
    assert decided.decided_by == {"kind": "link", "id": None}
    assert decided.describe()["decided_by"] == {"kind": "link", "id": None}
    (record,) = audit_records()
    assert (record["event"], record["status"], record["approval_id"]) == (
        "approval.decided",
        "rejected",
        approval.approval_id,
    )
    assert record["decided_by"] == {"kind": "link", "id": None}
    assert record["actor"] == {"kind": "key", "id": "abcdefghijkl", "principal": "alice"}


def test_a_guests_confirmation_decides_as_its_client(held: tuple[Decisions, Approval]) -> None:
    decisions, approval = held
    by = decided_by("client", TOKEN_HASH)
    decided = decisions.decide(approval.approval_id, CODE, "approve", by=by, client_token_hash=TOKEN_HASH)
    assert decided.decided_by == {"kind": "client", "id": TOKEN_HASH}
    assert audit_records()[0]["decided_by"] == {"kind": "client", "id": TOKEN_HASH}


def test_the_requesters_cancellation_decides_as_the_requester(held: tuple[Decisions, Approval]) -> None:
    decisions, approval = held
    cancelled = decisions.cancel(approval)
    assert cancelled.status is ApprovalStatus.CANCELLED
    assert cancelled.decided_by == {"kind": "requester", "id": "abcdefghijkl"}
    assert audit_records()[0]["event"] == "approval.cancelled"


def test_an_expiry_decides_as_the_system(held: tuple[Decisions, Approval]) -> None:
    _, approval = held
    later = deciding_at(approval.expires_at + timedelta(seconds=1))
    with pytest.raises(ApprovalClosedError, match="it expired before anyone decided"):
        later.decide(approval.approval_id, CODE, "approve", by=decided_by("link", None))
    (record,) = audit_records()
    assert (record["event"], record["status"], record["decided_by"]) == (
        "approval.expired",
        "expired",
        {"kind": "system", "id": None},
    )


def test_no_input_value_or_code_reaches_the_audit_table(held: tuple[Decisions, Approval]) -> None:
    decisions, approval = held
    decisions.decide(approval.approval_id, CODE, "approve", by=decided_by("link", None))
    stored = json.dumps(boto3.client("dynamodb").scan(TableName="AuditTable")["Items"])
    assert "SKU-VALUE-42" not in stored and CODE not in stored and hash_code(CODE) not in stored
