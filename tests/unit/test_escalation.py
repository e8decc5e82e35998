"""Escalation (docs/contract.md, "Escalation and the end") on moto: the workflow's start input
carries the timers only when the policy escalates before the end; the ``escalate`` task keeps its
new token, marks the approval escalated once, posts to the approvers' topic and the outbox and
writes the audit record; a decision made while the workflow was between its two waits resumes it at
once."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import boto3
import pytest

from tests.aws import FUNCTION_PREFIX, approval_state_machine
from tests.conftest import load_family, reset_process_state
from toolfront import Tool
from toolfront.approvals.desk import ApprovalDesk
from toolfront.approvals.escalation import Escalation, escalation_message
from toolfront.approvals.policy import ConfirmationReason
from toolfront.approvals.records import Approval, ApprovalStatus
from toolfront.approvals.store import ApprovalStore
from toolfront.approvals.workflow import Workflow, WorkflowCallbacks
from toolfront.audit.log import AuditLog
from toolfront.audit.records import decided_by
from toolfront.audit.trail import read_trail
from toolfront.auth.actors import Actor, ActorKind
from toolfront.settings import ApprovalSettings
from toolfront.tools.approval_policy import ApprovalPolicy

TOOL = Tool.new(
    name="shop.delete_item",
    audience="admin",
    scope="shop.items:write",
    permission="shop",
    handler=lambda data, ctx: {},
    input_schema={"type": "object", "properties": {"sku": {"type": "string"}}},
)
TOPIC = f"{FUNCTION_PREFIX}ApproverTopic"  # the name the template's policy grants Publish on


class StepFunctions:
    """Records what the approvals function sends a workflow (a stand-in for the client)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.started: list[dict[str, Any]] = []

    def start_execution(self, **request: Any) -> dict[str, Any]:
        self.started.append(json.loads(request["input"]))
        return {"executionArn": "arn:aws:states:us-east-1:123456789012:execution:m:" + request["name"]}

    def send_task_success(self, **request: Any) -> None:
        self.sent.append(("success", request))

    def send_task_failure(self, **request: Any) -> None:
        self.sent.append(("failure", request))


def hold(workflow: Workflow, lifetime: int, escalate_after_s: int | None) -> Approval:
    """A call held with a policy built directly (Tool.new's check wants at least 60 s)."""
    store = ApprovalStore("ApprovalsTable", boto3.client("dynamodb"))
    tool = replace(TOOL, approval=ApprovalPolicy(escalate_after_s=escalate_after_s))
    data = ApprovalDesk(store, workflow, lifetime).hold(
        tool=tool,
        arguments={"sku": "SKU-1"},
        actor=Actor(ActorKind.KEY, "abcdefghijkl", "alice"),
        reason=ConfirmationReason.REQUIRES_APPROVAL,
        request_id="req-esc",
        function="shop-fn",
        base_url="https://api.example.com",
        fields=TOOL.secret_fields,
        client_token_hash=None,
        secrets=(),
    )
    found = store.get(str(data["approval_id"]))
    assert found is not None
    return found


@pytest.mark.parametrize(
    ("escalate_after_s", "lifetime", "timers"),
    [
        (None, 3600, {}),
        (60, 3600, {"escalate_after_seconds": 60, "remaining_seconds": 3540}),
        (3600, 3600, {}),  # at the end: it just expires
        (7200, 3600, {}),
    ],
)
def test_start_input_carries_the_timers_only_when_escalating_before_the_end(
    aws: None, escalate_after_s: int | None, lifetime: int, timers: dict[str, int]
) -> None:
    states = StepFunctions()
    approval = hold(Workflow("arn:machine", states), lifetime, escalate_after_s)
    assert states.started == [
        {"approval_id": approval.approval_id, "function": "shop-fn", "timeout_seconds": lifetime, **timers}
    ]


@pytest.fixture
def escalating(aws: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The approvals function's settings with an outbox and the approvers' topic, a queue on it."""
    monkeypatch.setenv("TOOLFRONT_APPROVAL_STATE_MACHINE_ARN", approval_state_machine())
    monkeypatch.setenv("TOOLFRONT_OUTBOX_PATH", str(tmp_path / "outbox.jsonl"))
    topic = boto3.client("sns").create_topic(Name=TOPIC)["TopicArn"]
    monkeypatch.setenv("TOOLFRONT_APPROVER_TOPIC_ARN", topic)
    sqs = boto3.client("sqs")
    queue = sqs.create_queue(QueueName="approvers")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]
    boto3.client("sns").subscribe(TopicArn=topic, Protocol="sqs", Endpoint=queue_arn["QueueArn"])
    reset_process_state()
    return {"outbox": str(tmp_path / "outbox.jsonl"), "queue": queue}


def escalations(outbox: str) -> list[dict[str, Any]]:
    lines = Path(outbox).read_text(encoding="utf-8").splitlines() if Path(outbox).exists() else []
    return [entry for entry in map(json.loads, lines) if entry.get("event") == "escalated"]


def messages(queue: str) -> list[dict[str, Any]]:
    received = boto3.client("sqs").receive_message(QueueUrl=queue, MaxNumberOfMessages=10)
    return [json.loads(m["Body"]) for m in received.get("Messages", [])]


def test_the_escalate_task_escalates_once_posts_and_audits(
    escalating: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    approval = hold(Workflow(approval_state_machine(), boto3.client("stepfunctions")), 3600, 60)
    handler = load_family("approvals").lambda_handler
    task = {"toolfront_task": "escalate", "approval_id": approval.approval_id}

    first = handler({**task, "task_token": "token-2"}, None)
    again = handler({**task, "task_token": "token-3"}, None)  # a retried invocation

    assert (first, again) == ({"escalated": True, "posted": True}, {"escalated": False})
    stored = ApprovalStore("ApprovalsTable", boto3.client("dynamodb")).get(approval.approval_id)
    assert stored is not None and stored.status is ApprovalStatus.PENDING and stored.escalated_at
    (line,) = escalations(escalating["outbox"])
    assert line["page"] == f"https://api.example.com/approvals/{approval.approval_id}"
    assert "link" not in line and "code" not in json.dumps(line)
    assert line["escalated_at"] == stored.describe()["escalated_at"]
    (message,) = messages(escalating["queue"])
    assert message["Subject"] == "Still waiting for approval: shop.delete_item"
    assert f"/approvals/{approval.approval_id}\n" in message["Message"]
    assert "one person holding the 'approver' permission" in message["Message"]
    records = [r.content for r in read_trail(boto3.client("dynamodb"), "AuditTable").newest_first()]
    assert [(r or {})["event"] for r in records] == ["approval.escalated"]
    token = boto3.client("dynamodb").get_item(
        TableName="ApprovalTokensTable", Key={"approval_id": {"S": approval.approval_id}}
    )
    assert token["Item"]["task_token"]["S"] == "token-3"  # the waiting task's: a decision resumes it
    metrics = [json.loads(line) for line in capsys.readouterr().out.splitlines() if "_aws" in line]
    assert [m.get("ApprovalsEscalated") for m in metrics] == [1]


def callbacks(states: StepFunctions) -> WorkflowCallbacks:
    return WorkflowCallbacks("ApprovalTokensTable", states, boto3.client("dynamodb"))


def escalation(states: StepFunctions, outbox: Path) -> Escalation:
    settings = ApprovalSettings(table="ApprovalsTable", state_machine_arn="arn:m", outbox_path=str(outbox))
    store = ApprovalStore("ApprovalsTable", boto3.client("dynamodb"))
    audit = AuditLog("AuditTable", client=boto3.client("dynamodb"))
    return Escalation(settings, store, callbacks(states), audit=audit)


@pytest.mark.parametrize(
    ("status", "sent"),
    [
        (ApprovalStatus.APPROVED, ("success", {"taskToken": "token-2", "output": '{"decision": "approve"}'})),
        (ApprovalStatus.REJECTED, ("success", {"taskToken": "token-2", "output": '{"decision": "reject"}'})),
        (
            ApprovalStatus.CANCELLED,
            ("failure", {"taskToken": "token-2", "error": "Cancelled", "cause": "Cancelled"}),
        ),
        (ApprovalStatus.EXPIRED, ("success", {"taskToken": "token-2", "output": '{"decision": "none"}'})),
    ],
)
def test_a_decision_between_the_two_waits_resumes_the_workflow_at_once(
    aws: None, tmp_path: Path, status: ApprovalStatus, sent: tuple[str, dict[str, Any]]
) -> None:
    """Decided after the first wait timed out, before the escalate task kept its token: the decision
    resumed nobody (the stored token was the timed-out one); the escalate task resumes it."""
    states = StepFunctions()
    approval = hold(Workflow("arn:machine", states), 3600, 60)
    callbacks(states).park(approval.approval_id, "token-1", 3600)
    store = ApprovalStore("ApprovalsTable", boto3.client("dynamodb"))
    decided = store.transition(
        approval.approval_id, status, approval.created_at, decided_by=decided_by("link", None)
    )
    callbacks(states).resume(decided)  # what the decision did: sent on the timed-out token-1
    states.sent.clear()

    answer = escalation(states, tmp_path / "outbox.jsonl").run(approval.approval_id, "token-2")

    assert answer == {"escalated": False}
    assert states.sent == [sent]
    after = store.get(approval.approval_id)
    assert after is not None and after.status is status and after.escalated_at is None
    assert escalations(str(tmp_path / "outbox.jsonl")) == []


def test_a_decision_after_the_new_token_is_kept_resumes_it(aws: None, tmp_path: Path) -> None:
    """The token is kept before the approval is marked: a decision from then on finds it."""
    from toolfront.approvals.decisions import Decisions

    states = StepFunctions()
    approval = hold(Workflow("arn:machine", states), 3600, 60)
    escalation(states, tmp_path / "outbox.jsonl").run(approval.approval_id, "token-2")
    store = ApprovalStore("ApprovalsTable", boto3.client("dynamodb"))
    pending = store.get(approval.approval_id)
    assert pending is not None

    decided = Decisions(store, callbacks(states))._decide(
        pending, "approve", decided_by("link", None), code_hash=None
    )

    assert decided.status is ApprovalStatus.APPROVED and decided.escalated_at is not None
    assert states.sent == [("success", {"taskToken": "token-2", "output": '{"decision": "approve"}'})]


def test_a_gone_approval_lets_the_workflow_go(aws: None, tmp_path: Path) -> None:
    states = StepFunctions()
    answer = escalation(states, tmp_path / "outbox.jsonl").run("apr_" + "0" * 24, "token-2")
    assert answer == {"escalated": False}
    assert states.sent == [("success", {"taskToken": "token-2", "output": '{"decision": "none"}'})]


def test_the_message_says_who_decides_with_a_quorum_and_carries_no_code(aws: None) -> None:
    approval = hold(Workflow("arn:machine", StepFunctions()), 3600, 60)
    two = replace(approval, policy=ApprovalPolicy(quorum=2, escalate_after_s=60))
    two = replace(two, approved_by=(decided_by("approver", "sub-bob", "bob"),))
    text = escalation_message(two)
    assert "2 different people holding the 'approver' permission" in text
    assert "1 of 2 approved so far" in text
    assert "code=" not in text and "SKU-1" not in text
