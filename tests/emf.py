"""CloudWatch's embedded metric format as CloudWatch reads it, for the metrics tests: the lines a run
printed, each checked against the format's rules, and the series they declare; and a run of every
code path that writes toolfront's metrics (calls of each outcome, approvals decided, expired,
escalated, an approved run, the backlog's sample), so a test knows what toolfront emits from what it
ran, not from a list kept by hand. The paths need moto (the ``aws`` fixture) and an approval state
machine (``tests.aws.approval_state_machine``).
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Mapping
from contextlib import redirect_stdout, suppress
from datetime import UTC, datetime, timedelta
from numbers import Real
from typing import Any

import boto3

from tests.helpers import family
from toolfront import Registry, Tool, ToolError
from toolfront.admission.admission import Admission
from toolfront.approvals.desk import ApprovalDesk
from toolfront.approvals.policy import ConfirmationReason
from toolfront.approvals.store import ApprovalStore
from toolfront.approvals.workflow import Workflow
from toolfront.auth.actors import Actor, ActorKind
from toolfront.calls.call import Call, CallResult
from toolfront.calls.pipeline import CallPipeline
from toolfront.errors import ToolfrontError
from toolfront.settings import RateLimits

#: The units CloudWatch accepts (PutMetricData's StandardUnit).
UNITS = frozenset(
    [
        "Seconds",
        "Microseconds",
        "Milliseconds",
        "Bytes",
        "Kilobytes",
        "Megabytes",
        "Gigabytes",
        "Terabytes",
        "Bits",
        "Kilobits",
        "Megabits",
        "Gigabits",
        "Terabits",
        "Percent",
        "Count",
        "Bytes/Second",
        "Kilobytes/Second",
        "Megabytes/Second",
        "Gigabytes/Second",
        "Terabytes/Second",
        "Bits/Second",
        "Kilobits/Second",
        "Megabits/Second",
        "Gigabits/Second",
        "Terabits/Second",
        "Count/Second",
        "None",
    ]
)
Series = tuple[str, str, frozenset[str]]  # namespace, metric name, dimension keys

KEY = Actor(ActorKind.KEY, "abcdefghijkl", "alice", frozenset({"shop.*"}), frozenset({"shop"}))
ITEMS = {"type": "object", "properties": {"n": {"type": "integer"}}, "additionalProperties": False}


def emf_lines(printed: str) -> list[dict[str, Any]]:
    """The JSON lines of ``printed`` that carry an EMF block."""
    lines = (json.loads(text) for text in printed.splitlines() if text.startswith("{"))
    return [line for line in lines if "_aws" in line]


def captured(run: Callable[[], object]) -> list[dict[str, Any]]:
    """The EMF lines ``run`` printed (toolfront writes them to stdout, as Lambda ships it)."""
    out = io.StringIO()
    with redirect_stdout(out):
        run()
    return emf_lines(out.getvalue())


def emf_problems(line: Mapping[str, Any]) -> list[str]:
    """What CloudWatch would reject in ``line`` (the specification's rules), or nothing."""
    block = line.get("_aws")
    if not isinstance(block, dict) or not isinstance(block.get("Timestamp"), int):
        return ["_aws.Timestamp is not an integer of milliseconds"]
    directives = block.get("CloudWatchMetrics")
    if not isinstance(directives, list) or not directives:
        return ["_aws.CloudWatchMetrics is not a non-empty list"]
    found: list[str] = []
    for directive in directives:
        namespace = directive.get("Namespace")
        if not isinstance(namespace, str) or not 1 <= len(namespace) <= 255:
            found.append(f"namespace {namespace!r}")
        for dimensions in directive.get("Dimensions", []):
            if not isinstance(dimensions, list) or len(dimensions) > 30:
                found.append(f"dimension set {dimensions!r}")
                continue
            for key in dimensions:
                value = line.get(key)
                if not isinstance(value, str) or not 1 <= len(value) <= 1024:
                    found.append(f"dimension {key!r} has no string value in the line: {value!r}")
        metrics = directive.get("Metrics")
        if not isinstance(metrics, list) or not 1 <= len(metrics) <= 100:
            found.append(f"metrics {metrics!r}")
            continue
        for metric in metrics:
            value = line.get(metric.get("Name"))
            if not isinstance(value, Real) or isinstance(value, bool):
                found.append(f"metric {metric.get('Name')!r} has no number in the line: {value!r}")
            if metric.get("Unit", "None") not in UNITS:
                found.append(f"metric {metric.get('Name')!r} has unit {metric.get('Unit')!r}")
    return found


def series(lines: list[dict[str, Any]]) -> set[Series]:
    """Every (namespace, metric, dimension keys) the lines declare."""
    return {
        (directive["Namespace"], metric["Name"], frozenset(dimensions))
        for line in lines
        for directive in line["_aws"]["CloudWatchMetrics"]
        for metric in directive["Metrics"]
        for dimensions in directive["Dimensions"]
    }


def declared(line: Mapping[str, Any], name: str) -> list[list[str]]:
    """The dimension sets ``line`` declares metric ``name`` under (every directive naming it)."""
    return [
        dimensions
        for directive in line["_aws"]["CloudWatchMetrics"]
        if any(metric["Name"] == name for metric in directive["Metrics"])
        for dimensions in directive["Dimensions"]
    ]


def crash(data: dict[str, Any], ctx: Any) -> dict[str, Any]:
    raise RuntimeError("boom")


def sold_out(data: dict[str, Any], ctx: Any) -> dict[str, Any]:
    raise ToolError("sold_out", "nothing left", 410)


def shop_tools() -> list[Tool]:
    """A tool for each outcome: one that answers, one that answers an error, one that crashes, and
    one that a person must confirm (escalated after a minute)."""
    admin: dict[str, Any] = {"audience": "admin", "permission": "shop", "input_schema": ITEMS}
    read = {"scope": "shop.items:read", "annotations": {"read_only": True}}
    return [
        Tool.new(name="shop.count_items", handler=lambda d, c: {"count": 1}, **read, **admin),
        Tool.new(name="shop.sell_item", handler=sold_out, scope="shop.items:write", **admin),
        Tool.new(name="shop.break_item", handler=crash, scope="shop.items:write", **admin),
        Tool.new(
            name="shop.wipe_items",
            handler=lambda d, c: {},
            scope="shop.items:write",
            danger="always",
            approval={"escalate_after_s": 60},
            **admin,
        ),
    ]


def shop_pipeline(machine: str | None) -> CallPipeline:
    """The shop's pipeline as a family function runs it; with ``machine``, held calls are held."""
    client = boto3.client("dynamodb")
    registry = Registry.from_modules([family("shop", shop_tools)])
    desk = None
    if machine is not None:
        store = ApprovalStore("ApprovalsTable", client)
        desk = ApprovalDesk(store, Workflow(machine, boto3.client("stepfunctions")), 3600)
    admission = Admission("RateLimitsTable", "IdempotencyTable", RateLimits(), client=client)
    return CallPipeline(registry, lambda headers, ip: KEY, admission, desk=desk)


def call(
    pipeline: CallPipeline, tool: str, body: bytes = b"{}", headers: Mapping[str, str] | None = None
) -> CallResult:
    """One REST call of ``tool`` by the key ``KEY``."""
    request = Call(tool, "r1", headers=headers or {}, body=body, content_type="application/json")
    return pipeline.run(request)


def hold(machine: str, tool: Tool, *, ago_s: int = 0, lifetime_s: int = 3600, actor: Actor = KEY) -> str:
    """A pending approval of ``tool`` held ``ago_s`` seconds ago: its id."""
    at = datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=ago_s)
    store = ApprovalStore("ApprovalsTable", boto3.client("dynamodb"))
    desk = ApprovalDesk(store, Workflow(machine, boto3.client("stepfunctions")), lifetime_s, clock=lambda: at)
    data = desk.hold(
        tool=tool,
        arguments={},
        actor=actor,
        reason=ConfirmationReason.DANGER,
        request_id=f"req-{tool.name}-{ago_s}",
        function="shop-fn",
        base_url="https://api.example.com",
        fields=tool.secret_fields,
        client_token_hash=None,
    )
    return str(data["approval_id"])


def every_metric_line(machine: str, approvals: Callable[[dict[str, Any], Any], Any]) -> list[dict[str, Any]]:
    """The EMF lines of every path that writes toolfront's metrics. ``approvals`` is the approvals
    function's handler (its workflow tasks and the backlog run as that function)."""
    from toolfront.approvals.decisions import Decisions
    from toolfront.audit.records import decided_by

    pipeline = shop_pipeline(machine)
    wipe = next(tool for tool in shop_tools() if tool.name == "shop.wipe_items")
    store = ApprovalStore("ApprovalsTable", boto3.client("dynamodb"))
    decisions = Decisions(store, _NoWorkflow())
    by = decided_by("approver", "sub-bob", "bob")

    def run() -> None:
        for tool, body in [
            ("shop.count_items", b"{}"),  # a success
            ("shop.sell_item", b"{}"),  # Errors: the handler's own error
            ("shop.break_item", b"{}"),  # Errors: a crash
            ("shop.count_items", b'{"n": "x"}'),  # Refusals: invalid_input
            ("shop.made_up", b"{}"),  # Refusals: unknown_tool, per service only
            ("shop.wipe_items", b"{}"),  # Held
        ]:
            call(pipeline, tool, body)
        decisions.vote(hold(machine, wipe), "approve", by=by)
        decisions.vote(hold(machine, wipe), "reject", by=by)
        with suppress(ToolfrontError):  # past its expiry: refused, and expired now
            decisions.vote(hold(machine, wipe, ago_s=7200), "approve", by=by)
        approvals({"toolfront_task": "expire", "approval_id": hold(machine, wipe)}, None)
        approvals({"toolfront_task": "fail", "approval_id": hold(machine, wipe)}, None)
        escalated = {"toolfront_task": "escalate", "approval_id": hold(machine, wipe), "task_token": "t"}
        approvals(escalated, None)
        hold(machine, wipe, ago_s=600)  # waiting, overdue (over 2 x 60 s)
        approvals({"toolfront_task": "backlog"}, None)

    return captured(run)


class _NoWorkflow:
    """A decision's resumer that resumes nothing (no workflow waits in these runs)."""

    def resume(self, approval: object) -> None:
        return None
