"""Approval policies and quorum (docs/contract.md, "The approval object"): a tool's
``approval={...}`` is checked naming its field and copied onto every call it holds; a quorum counts
distinct people (one principal, whatever channel they decide from), never a link's code alone; one
rejection rejects; the last vote approves and resumes the workflow, with an audit record for each
vote."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

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
from toolfront.auth.actors import Actor, ActorKind
from toolfront.errors import (
    AlreadyVotedError,
    ApprovalClosedError,
    QuorumIdentityRequiredError,
    ToolDefinitionError,
)
from toolfront.tools.approval_policy import ApprovalPolicy

CODE = "the-code-of-the-link-" + "q" * 22


def tool(**approval: Any) -> Tool:
    return Tool.new(
        name="shop.refund_order",
        audience="admin",
        scope="shop.orders:write",
        permission="shop",
        handler=lambda data, ctx: {},
        input_schema={"type": "object", "properties": {"order": {"type": "string"}}},
        approval=approval or None,
    )


@pytest.mark.parametrize(
    ("approval", "named"),
    [
        ({"quorum": 0}, "approval.quorum"),
        ({"quorum": 6}, "approval.quorum"),
        ({"quorum": True}, "approval.quorum"),
        ({"approver_permission": "Not Valid"}, "approval.approver_permission"),
        ({"escalate_after_s": 5}, "approval.escalate_after_s"),
        ({"escalate_after_s": 90.5}, "approval.escalate_after_s"),
        ({"channels": "slack"}, "approval.channels"),
        ({"quorom": 2}, "unknown field 'quorom'"),
    ],
)
def test_a_policy_is_checked_naming_its_field(approval: dict[str, Any], named: str) -> None:
    with pytest.raises(ToolDefinitionError) as refused:
        tool(**approval)
    assert named in str(refused.value)


def test_a_policy_is_published_in_the_tools_description() -> None:
    described = tool(quorum=2, escalate_after_s=600, channels=["slack"]).describe()
    assert described["approval"] == {
        "quorum": 2,
        "approver_permission": "approver",
        "escalate_after_s": 600,
        "channels": ["slack"],
    }
    assert (
        Tool.new(
            name="shop.list_orders",
            audience="admin",
            scope="shop.orders:read",
            permission="shop",
            handler=lambda d, c: {},
        ).describe()["approval"]
        is None
    )


@pytest.fixture
def held(aws: None) -> tuple[Decisions, Approval]:
    """A call of a quorum-2 tool, held for alice's key, parked with the link's code."""
    client = boto3.client("dynamodb")
    store = ApprovalStore("ApprovalsTable", client)
    refund = tool(quorum=2, approver_permission="refunds")
    data = ApprovalDesk(store, Workflow(approval_state_machine(), boto3.client("stepfunctions")), 3600).hold(
        tool=refund,
        arguments={"order": "A-1"},
        actor=Actor(ActorKind.KEY, "abcdefghijkl", "alice"),
        reason=ConfirmationReason.REQUIRES_APPROVAL,
        request_id="req-q",
        function="shop-fn",
        base_url="https://api.example.com",
        fields=refund.secret_fields,
        client_token_hash=None,
        secrets=(),
    )
    client.update_item(
        TableName="ApprovalsTable",
        Key={"approval_id": {"S": str(data["approval_id"])}},
        UpdateExpression="SET code_hash = :c",
        ExpressionAttributeValues={":c": {"S": hash_code(CODE)}},
    )
    approval = store.get(str(data["approval_id"]))
    assert approval is not None
    callbacks = WorkflowCallbacks("ApprovalTokensTable", boto3.client("stepfunctions"), client)
    return Decisions(store, callbacks, audit=AuditLog("AuditTable", client=client)), approval


def person(name: str, kind: str = "approver") -> dict[str, Any]:
    return decided_by(kind, f"{kind}-id-{name}", name)


def test_the_held_call_carries_the_tools_policy(held: tuple[Decisions, Approval]) -> None:
    _, approval = held
    assert approval.policy == ApprovalPolicy(quorum=2, approver_permission="refunds")
    described = approval.describe()
    assert (described["approvals_needed"], described["approved_by"], described["escalated_at"]) == (
        2,
        [],
        None,
    )


def test_one_approval_of_two_leaves_it_pending_and_a_second_person_approves(
    held: tuple[Decisions, Approval],
) -> None:
    decisions, approval = held
    first = decisions.decide(approval.approval_id, CODE, "approve", by=person("bob"))
    assert first.status is ApprovalStatus.PENDING and first.approved_by == (person("bob"),)
    assert first.decided_by is None
    second = decisions.vote(approval.approval_id, "approve", by=person("carol", "slack"))
    assert second.status is ApprovalStatus.APPROVED
    assert second.approved_by == (person("bob"), person("carol", "slack"))
    assert second.decided_by == person("carol", "slack")
    events = [
        r.content["event"]
        for r in read_trail(boto3.client("dynamodb"), "AuditTable").newest_first()
        if r.content
    ]
    assert events[:2] == ["approval.decided", "approval.voted"]


def test_the_same_person_counts_once_whatever_the_channel(held: tuple[Decisions, Approval]) -> None:
    decisions, approval = held
    decisions.decide(approval.approval_id, CODE, "approve", by=person("bob"))
    with pytest.raises(AlreadyVotedError):  # again on the page
        decisions.decide(approval.approval_id, CODE, "approve", by=person("bob"))
    with pytest.raises(AlreadyVotedError):  # bob again, through Slack
        decisions.vote(approval.approval_id, "approve", by={**person("bob", "slack")})
    still = ApprovalStore("ApprovalsTable", boto3.client("dynamodb")).get(approval.approval_id)
    assert still is not None and still.status is ApprovalStatus.PENDING and len(still.approved_by) == 1


def test_a_links_code_alone_counts_for_nothing_with_a_quorum(held: tuple[Decisions, Approval]) -> None:
    decisions, approval = held
    for decision in ("approve", "reject"):
        with pytest.raises(QuorumIdentityRequiredError) as refused:
            decisions.decide(approval.approval_id, CODE, decision, by=decided_by("link", None))
        assert "2 different approvers" in refused.value.message
    still = ApprovalStore("ApprovalsTable", boto3.client("dynamodb")).get(approval.approval_id)
    assert still is not None and still.status is ApprovalStatus.PENDING and still.approved_by == ()


def test_a_rejection_after_one_approval_rejects(held: tuple[Decisions, Approval]) -> None:
    decisions, approval = held
    decisions.decide(approval.approval_id, CODE, "approve", by=person("bob"))
    rejected = decisions.vote(approval.approval_id, "reject", by=person("dave", "slack"))
    assert rejected.status is ApprovalStatus.REJECTED and rejected.decided_by == person("dave", "slack")
    with pytest.raises(ApprovalClosedError):
        decisions.vote(approval.approval_id, "approve", by=person("carol", "slack"))


def test_two_votes_at_once_both_count(held: tuple[Decisions, Approval]) -> None:
    """The second vote's write finds the first one's votes: it reads them again and counts."""
    decisions, approval = held
    stale = approval  # what both voters read
    store = ApprovalStore("ApprovalsTable", boto3.client("dynamodb"))
    store.add_vote(stale, person("bob"), datetime.now(UTC))
    done = decisions._count_vote(stale, person("carol"), datetime.now(UTC))  # from the stale read
    assert done.status is ApprovalStatus.APPROVED and [v["principal"] for v in done.approved_by] == [
        "bob",
        "carol",
    ]


def test_a_held_calls_description_says_who_must_confirm() -> None:
    from toolfront.adapters.openapi.document import confirmation_text

    two = {**tool(quorum=2, approver_permission="refunds").describe(), "module": "shop"}
    assert confirmation_text(two) is not None
    assert "by 2 different people holding the 'refunds' permission" in str(confirmation_text(two))
    assert " by " not in str(confirmation_text({**tool().describe(), "module": "shop"}))
