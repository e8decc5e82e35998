"""Escalation and the end (docs/contract.md, "Escalation and the end") on the local stack: the real
state machine in moto carries the timers and runs the real approvals and catalogue functions (each
under its own IAM).

Calls are held through the desk with a policy built directly (``Tool.new`` wants ``escalate_after_s``
of at least 60 s), so seconds-scale timers keep the suite short.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from tests.http.conftest import Api, wait_for
from tests.http.test_approvals import link_of, post, settled
from toolfront import Tool
from toolfront.approvals.desk import ApprovalDesk
from toolfront.approvals.policy import ConfirmationReason
from toolfront.approvals.store import ApprovalStore
from toolfront.approvals.workflow import Workflow
from toolfront.audit.trail import read_trail
from toolfront.auth.actors import Actor, ActorKind
from toolfront.encoding import parse_rfc3339
from toolfront.tools.approval_policy import ApprovalPolicy
from toolfront_dev.aws import moto_client
from toolfront_dev.outbox import read_outbox
from toolfront_dev.stack import LocalStack

DELETE = Tool.new(  # the name the catalogue function runs; its own definition is the one checked
    name="catalogue.delete_product",
    audience="admin",
    scope="catalogue.products:write",
    permission="catalogue",
    handler=lambda data, ctx: {},
)


def hold(stack: LocalStack, key: str, owner: str, sku: str, lifetime: int, after: int | None) -> str:
    """Hold ``catalogue.delete_product`` of ``sku`` for ``key``: the desk stores it and starts the
    stack's workflow, which the approvals function parks (the link in the outbox)."""
    states = moto_client(stack.moto_endpoint, "stepfunctions")
    workflow = Workflow(stack.info.state_machines["ApprovalStateMachine"], states)
    store = ApprovalStore(stack.table_names["ApprovalsTable"], moto_client(stack.moto_endpoint, "dynamodb"))
    catalogue = next(f.arn for f in stack.resource_names.functions if f.logical_id == "CatalogueFunction")
    tool = replace(DELETE, approval=ApprovalPolicy(escalate_after_s=after) if after else None)
    data = ApprovalDesk(store, workflow, lifetime).hold(
        tool=tool,
        arguments={"sku": sku},
        actor=Actor(ActorKind.KEY, key.split("_")[1], owner, frozenset({"catalogue.*"})),
        reason=ConfirmationReason.DANGER,
        request_id=f"req-{sku}",
        function=catalogue,
        base_url=stack.api_url,
        fields=(),
        client_token_hash=None,
    )
    return str(data["approval_id"])


def escalations(stack: LocalStack, approval_id: str) -> list[dict[str, Any]]:
    return [
        entry
        for entry in read_outbox(stack.outbox_path)
        if entry.get("event") == "escalated" and entry.get("approval_id") == approval_id
    ]


def execution_arn(stack: LocalStack, approval_id: str) -> str:
    machine = stack.info.state_machines["ApprovalStateMachine"]
    return machine.replace(":stateMachine:", ":execution:") + ":" + approval_id


def states_entered(stack: LocalStack, approval_id: str) -> list[str]:
    """The states the approval's execution went through, once it has ended."""
    states = moto_client(stack.moto_endpoint, "stepfunctions")
    arn = execution_arn(stack, approval_id)
    wait_for(lambda: states.describe_execution(executionArn=arn)["status"] != "RUNNING")
    history = states.get_execution_history(executionArn=arn)["events"]
    return [e["stateEnteredEventDetails"]["name"] for e in history if "stateEnteredEventDetails" in e]


def audit_events(stack: LocalStack, approval_id: str) -> list[str]:
    trail = read_trail(moto_client(stack.moto_endpoint, "dynamodb"), stack.table_names["AuditTable"])
    found = [r.content or {} for r in trail.newest_first()]
    return [str(r["event"]) for r in reversed(found) if r.get("approval_id") == approval_id]


@pytest.fixture(scope="module")
def approvers_mail(stack: LocalStack) -> Iterator[str]:
    """A queue subscribed to the approvers' topic: what their e-mail would get."""
    sqs, sns = moto_client(stack.moto_endpoint, "sqs"), moto_client(stack.moto_endpoint, "sns")
    queue = sqs.create_queue(QueueName="approvers-mail")["QueueUrl"]
    attributes = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]
    queue_arn = attributes["QueueArn"]
    topic = next(t.arn for t in stack.resource_names.topics if t.logical_id == "ApproverTopic")
    subscription = sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=queue_arn)["SubscriptionArn"]
    yield queue
    sns.unsubscribe(SubscriptionArn=subscription)
    sqs.delete_queue(QueueUrl=queue)


def mail_about(stack: LocalStack, queue: str, approval_id: str) -> list[dict[str, Any]]:
    sqs = moto_client(stack.moto_endpoint, "sqs")
    found = []
    while messages := sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10).get("Messages"):
        for message in messages:
            sqs.delete_message(QueueUrl=queue, ReceiptHandle=message["ReceiptHandle"])
            body = json.loads(message["Body"])
            if approval_id in body["Message"]:
                found.append(body)
    return found


def test_a_call_still_pending_is_escalated_once_then_expires(
    api: Api, stack: LocalStack, key: str, owner: str, sku: str, approvers_mail: str
) -> None:
    approval_id = hold(stack, key, owner, sku, lifetime=3, after=2)
    (line,) = wait_for(lambda: escalations(stack, approval_id))
    final = settled(api, approval_id, key)

    assert (final["status"], final["decided_by"]) == ("expired", {"kind": "system", "id": None})
    waited = parse_rfc3339(final["escalated_at"]) - parse_rfc3339(final["created_at"])
    assert 2 <= waited.total_seconds() <= 4.5  # about escalate_after_s (created_at is to the second)
    assert escalations(stack, approval_id) == [line]  # once
    assert line["page"] == f"{stack.api_url}/approvals/{approval_id}" and "link" not in line
    assert line["escalated_at"] == final["escalated_at"]
    subjects = [m["Subject"] for m in mail_about(stack, approvers_mail, approval_id)]
    assert subjects == [
        "Approval needed: Delete a product",
        "Still waiting for approval: catalogue.delete_product",
    ]
    assert audit_events(stack, approval_id) == ["approval.escalated", "approval.expired"]
    assert states_entered(stack, approval_id) == [
        "Escalates",
        "AwaitDecisionUntilEscalation",
        "Escalate",
        "Expire",
        "Done",
    ]
    path, code = link_of(stack, approval_id)
    assert post(api, path, code=code, decision="approve").status == 409  # never approved after


def test_a_decision_after_escalation_still_runs_the_call(
    api: Api, stack: LocalStack, key: str, owner: str, sku: str
) -> None:
    approval_id = hold(stack, key, owner, sku, lifetime=60, after=1)
    wait_for(lambda: escalations(stack, approval_id))
    path, code = link_of(stack, approval_id)

    assert post(api, path, code=code, decision="approve").status == 200
    final = settled(api, approval_id, key)

    assert (final["status"], final["result"]) == ("succeeded", {"deleted": sku})
    assert final["escalated_at"] is not None
    assert states_entered(stack, approval_id)[-4:] == ["Escalate", "Decided", "Execute", "Done"]
    assert api.call("catalogue.get_product", {"sku": sku}, key=key).status == 404


def test_a_decision_before_escalation_means_no_escalation(
    api: Api, stack: LocalStack, key: str, owner: str, sku: str
) -> None:
    approval_id = hold(stack, key, owner, sku, lifetime=60, after=2)
    path, code = link_of(stack, approval_id)

    assert post(api, path, code=code, decision="reject").status == 200

    assert states_entered(stack, approval_id) == [
        "Escalates",
        "AwaitDecisionUntilEscalation",
        "Decided",
        "Done",
    ]  # the workflow has ended: nothing is left to escalate it
    final = settled(api, approval_id, key)
    assert (final["status"], final["escalated_at"]) == ("rejected", None)
    assert escalations(stack, approval_id) == []


def test_a_call_without_the_policy_is_never_escalated(
    api: Api, stack: LocalStack, key: str, owner: str, sku: str
) -> None:
    started = time.monotonic()
    approval_id = hold(stack, key, owner, sku, lifetime=1, after=None)

    final = settled(api, approval_id, key)

    assert (final["status"], final["escalated_at"]) == ("expired", None)
    assert time.monotonic() - started >= 1
    assert states_entered(stack, approval_id) == ["Escalates", "AwaitDecision", "Expire", "Done"]
    assert escalations(stack, approval_id) == []
    assert audit_events(stack, approval_id) == ["approval.expired"]
