"""toolfront's metrics as CloudWatch reads them (docs/operating.md, "Metrics, the dashboard and
alarms"), on moto: every line is valid embedded metric format; a call counts per service and per
tool, as exactly one of a success, an ``Errors`` (an isError result the caller did not cause), a
``Refusals`` by code or a ``Held``; approvals decided, expired and escalated count per tool on the
real paths; the backlog's sample counts what waits, the oldest's age and the overdue ones."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest

from tests.aws import approval_state_machine, key_store, seed
from tests.conftest import load_family, reset_process_state
from tests.emf import (
    call,
    captured,
    declared,
    emf_problems,
    every_metric_line,
    hold,
    shop_pipeline,
    shop_tools,
)
from tests.helpers import family
from toolfront import Registry, Tool
from toolfront.approvals.backlog import EXPIRY_GRACE, is_overdue
from toolfront.approvals.pending import PendingApproval
from toolfront.approvals.records import Requester
from toolfront.auth.actors import Actor, ActorKind
from toolfront.calls.logs import emit_metric
from toolfront.tools.approval_policy import ApprovalPolicy

Handler = Callable[[dict[str, Any], Any], Any]
OUTCOMES = ("Errors", "Refusals", "Held")
PER_TOOL = [["service"], ["service", "tool"]]


@pytest.fixture
def machine(aws: None, monkeypatch: pytest.MonkeyPatch) -> str:
    arn = approval_state_machine()
    monkeypatch.setenv("TOOLFRONT_APPROVAL_STATE_MACHINE_ARN", arn)
    reset_process_state()
    return arn


@pytest.fixture
def approvals(machine: str) -> Handler:
    """The approvals function's handler, running as that function (its IAM policy enforced)."""
    handler: Handler = load_family("approvals").lambda_handler
    return handler


def tool_named(name: str) -> Tool:
    return next(tool for tool in shop_tools() if tool.name == name)


def call_line(tool: str, body: bytes = b"{}", *, machine: str | None = None) -> dict[str, Any]:
    (line,) = captured(lambda: call(shop_pipeline(machine), tool, body))
    return line


def test_every_line_toolfront_writes_is_valid_emf(machine: str, approvals: Handler) -> None:
    lines = every_metric_line(machine, approvals)
    assert len(lines) >= 14  # six calls, five approvals metrics, the backlog (total, one tool)
    assert {(line.get("tool"), str(emf_problems(line))) for line in lines if emf_problems(line)} == set()


def test_a_success_counts_calls_and_latency_per_service_and_per_tool(aws: None) -> None:
    line = call_line("shop.count_items")
    assert (line["Calls"], line["tool"]) == (1, "shop.count_items")
    assert declared(line, "Calls") == declared(line, "Latency") == PER_TOOL
    assert [name for name in OUTCOMES if name in line] == []


@pytest.mark.parametrize(
    ("tool", "body", "status", "outcome"),
    [
        ("shop.sell_item", b"{}", 410, "Errors"),  # the handler answered an error (a 4xx of its own)
        ("shop.break_item", b"{}", 500, "Errors"),  # the handler crashed
        ("shop.wipe_items", b"{}", 501, "Errors"),  # toolfront failed (5xx): no approvals here
        ("shop.count_items", b'{"n": "x"}', 422, "Refusals"),  # refused before the handler
        ("shop.count_items", b"{", 400, "Refusals"),
    ],
)
def test_each_call_counts_once_as_its_outcome(
    aws: None, tool: str, body: bytes, status: int, outcome: str
) -> None:
    line = call_line(tool, body)
    assert line["status"] == status
    assert {name: line[name] for name in OUTCOMES if name in line} == {outcome: 1}
    assert line["Calls"] == 1


def test_an_error_counts_per_tool_without_a_code(aws: None) -> None:
    line = call_line("shop.sell_item")
    assert declared(line, "Errors") == PER_TOOL
    assert "ErrorCode" not in line and line["error"]["code"] == "sold_out"


def test_a_refusal_counts_by_error_code_per_service_and_per_tool(aws: None) -> None:
    line = call_line("shop.count_items", b'{"n": "x"}')
    assert line["ErrorCode"] == "invalid_input"
    assert declared(line, "Refusals") == [["service", "ErrorCode"], ["service", "tool", "ErrorCode"]]
    assert declared(line, "Calls") == PER_TOOL


def test_a_made_up_tool_name_makes_no_series_of_its_own(aws: None) -> None:
    line = call_line("shop.anything_at_all")
    assert (line["tool"], line["ErrorCode"]) == ("shop.anything_at_all", "unknown_tool")  # still logged
    assert declared(line, "Calls") == [["service"]]
    assert declared(line, "Refusals") == [["service", "ErrorCode"]]


def test_a_held_call_counts_once_as_held_and_its_replay_not_at_all(machine: str) -> None:
    pipeline = shop_pipeline(machine)
    headers = {"idempotency-key": "hold-once-0001"}
    first, replay = captured(lambda: [call(pipeline, "shop.wipe_items", b"{}", headers) for _ in "ab"])
    assert (first["status"], first.get("replayed"), replay["status"], replay.get("replayed")) == (
        202,
        None,
        202,
        True,
    )
    assert {name: first[name] for name in OUTCOMES if name in first} == {"Held": 1}
    assert declared(first, "Held") == PER_TOOL
    assert [name for name in OUTCOMES if name in replay] == [] and replay["Calls"] == 1


@pytest.mark.parametrize(("tool", "outcome"), [("shop.add_note", None), ("shop.break_note", "Errors")])
def test_an_approved_run_counts_per_tool_and_its_crash_as_an_error(
    aws: None, tool: str, outcome: str | None
) -> None:
    from tests.unit.test_runner import approved, tools
    from toolfront.approvals.runner import ApprovedCallRunner
    from toolfront.approvals.store import ApprovalStore

    key_id = seed("alice", ["shop.*"], permissions=["shop"]).split("_")[1]
    store = ApprovalStore("ApprovalsTable", boto3.client("dynamodb"))
    runner = ApprovedCallRunner(Registry.from_modules([family("shop", tools)]), store, key_store())
    approval_id = approved(store, tool, key_id)
    (line,) = captured(lambda: runner.run(approval_id))
    assert (line["entry"], line["tool"], declared(line, "Calls")) == ("approval", tool, PER_TOOL)
    assert [name for name in OUTCOMES if name in line] == ([outcome] if outcome else [])


def test_approvals_decided_expired_and_escalated_count_per_tool(machine: str, approvals: Handler) -> None:
    lines = every_metric_line(machine, approvals)
    counted = {
        (name, line.get("Decision")): declared(line, name)
        for line in lines
        for name in ("ApprovalsDecided", "ApprovalsExpired", "ApprovalsEscalated")
        if name in line and line.get("tool") == "shop.wipe_items"
    }
    assert counted == {
        ("ApprovalsDecided", "approve"): [["service", "Decision"], ["service", "tool", "Decision"]],
        ("ApprovalsDecided", "reject"): [["service", "Decision"], ["service", "tool", "Decision"]],
        ("ApprovalsExpired", None): PER_TOOL,
        ("ApprovalsEscalated", None): PER_TOOL,
    }
    expired = [line for line in lines if "ApprovalsExpired" in line]
    assert len(expired) == 2  # the late decision's expiry and the workflow's, one approval each


def test_an_expiry_is_counted_once_whichever_ends_it(machine: str, approvals: Handler) -> None:
    from toolfront.approvals.decisions import Decisions
    from toolfront.approvals.store import ApprovalStore
    from toolfront.audit.records import decided_by
    from toolfront.errors import ApprovalClosedError

    approval_id = hold(machine, tool_named("shop.wipe_items"), ago_s=7200)
    decisions = Decisions(ApprovalStore("ApprovalsTable", boto3.client("dynamodb")), lambda_resumer())

    def late_decision_then_the_workflows_expiry() -> None:
        with pytest.raises(ApprovalClosedError):
            decisions.vote(approval_id, "approve", by=decided_by("approver", "sub-bob", "bob"))
        assert approvals({"toolfront_task": "expire", "approval_id": approval_id}, None) == {"closed": False}

    lines = captured(late_decision_then_the_workflows_expiry)
    assert [line.get("ApprovalsExpired") for line in lines] == [1]


def lambda_resumer() -> Any:
    class Resumer:
        def resume(self, approval: object) -> None:
            return None

    return Resumer()


def test_emit_metric_with_a_tool_counts_per_service_and_per_tool() -> None:
    (line,) = captured(lambda: emit_metric("ApprovalsCancelled", tool="shop.wipe_items"))
    assert (line["ApprovalsCancelled"], line["tool"], emf_problems(line)) == (1, "shop.wipe_items", [])
    assert declared(line, "ApprovalsCancelled") == PER_TOOL


def test_the_backlog_counts_what_waits_the_oldest_and_the_overdue(machine: str, approvals: Handler) -> None:
    wipe, count = tool_named("shop.wipe_items"), tool_named("shop.count_items")  # count: no escalation
    hold(machine, wipe, ago_s=200)  # over 2 x 60 s: overdue
    hold(machine, wipe, ago_s=100)  # escalated, not yet overdue
    hold(machine, count, ago_s=5000, lifetime_s=7200)  # no escalate_after_s, within its life
    hold(machine, count, ago_s=1000, lifetime_s=600)  # past its expiry and the grace: stuck
    # a guest's double opt-in waits for the guest alone: not in the approvers' index, not counted
    hold(machine, wipe, ago_s=9000, actor=Actor(ActorKind.CLIENT, "client-token-hash"))

    answer: list[Any] = []
    lines = captured(lambda: answer.append(approvals({"toolfront_task": "backlog"}, None)))

    total, *tools = lines
    assert declared(total, "ApprovalsPending") == [["service"]]
    assert (total["ApprovalsPending"], total["ApprovalsOverdue"]) == (4, 2)
    assert 5000 <= total["OldestPendingApprovalAge"] < 5060
    by_tool = {line["tool"]: (line["ApprovalsPending"], line["ApprovalsOverdue"]) for line in tools}
    assert by_tool == {"shop.count_items": (2, 1), "shop.wipe_items": (2, 1)}
    assert all(declared(line, "ApprovalsOverdue") == [["service", "tool"]] for line in tools)  # no rollup
    assert all(emf_problems(line) == [] for line in lines)
    assert answer[0]["overdue"] == 2 and answer[0]["complete"] is True


def test_an_empty_backlog_still_writes_its_zeros(approvals: Handler) -> None:
    (line,) = captured(lambda: approvals({"toolfront_task": "backlog"}, None))
    assert (line["ApprovalsPending"], line["ApprovalsOverdue"], line["OldestPendingApprovalAge"]) == (0, 0, 0)


def waiting(age_s: int, *, escalate_after_s: int | None, lifetime_s: int = 86400) -> PendingApproval:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    created = now - timedelta(seconds=age_s)
    return PendingApproval(
        approval_id="apr_1",
        tool="shop.wipe_items",
        requester=Requester("key", "k"),
        reason="danger",
        created_at=created,
        expires_at=created + timedelta(seconds=lifetime_s),
        policy=ApprovalPolicy(escalate_after_s=escalate_after_s),
    )


@pytest.mark.parametrize(
    ("age_s", "escalate_after_s", "lifetime_s", "overdue"),
    [
        (120, 60, 86400, False),  # exactly twice: not yet
        (121, 60, 86400, True),
        (80000, None, 86400, False),  # no escalation: its lifetime is the deadline
        (600 + int(EXPIRY_GRACE.total_seconds()), None, 600, False),  # the workflow may be closing it
        (601 + int(EXPIRY_GRACE.total_seconds()), None, 600, True),  # its workflow did not end it
    ],
)
def test_overdue_is_twice_the_escalation_or_past_the_expiry(
    age_s: int, escalate_after_s: int | None, lifetime_s: int, overdue: bool
) -> None:
    approval = waiting(age_s, escalate_after_s=escalate_after_s, lifetime_s=lifetime_s)
    assert is_overdue(approval, datetime(2026, 1, 1, tzinfo=UTC)) is overdue
