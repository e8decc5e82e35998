"""Running an approved call on moto: a failed run is counted as failed in its log line's metrics."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest

from tests.aws import key_store, seed
from tests.helpers import family
from toolfront import Registry, Tool
from toolfront.admission.idempotency import fingerprint
from toolfront.approvals.records import Approval, ApprovalStatus, Requester, new_approval_id
from toolfront.approvals.runner import ApprovedCallRunner
from toolfront.approvals.store import ApprovalStore


def crash(data: dict[str, Any], ctx: Any) -> dict[str, Any]:
    raise RuntimeError("boom")


def tools() -> list[Tool]:
    admin = {"audience": "admin", "scope": "shop.notes:write", "permission": "shop"}
    return [
        Tool.new(name="shop.add_note", handler=lambda data, ctx: {"ok": True}, **admin),
        Tool.new(name="shop.break_note", handler=crash, **admin),
    ]


def approved(store: ApprovalStore, tool: str, key_id: str) -> str:
    now = datetime.now(UTC).replace(microsecond=0)
    approval = Approval(
        approval_id=new_approval_id(),
        tool=tool,
        function="shop",
        input={},
        input_digest=fingerprint(tool, {}),
        requester=Requester("key", key_id, "alice", ("shop.*",)),
        reason="requires_approval",
        status=ApprovalStatus.APPROVED,
        created_at=now,
        expires_at=now + timedelta(hours=1),
        request_id="req-1",
        base_url="https://api.example.com",
    )
    store.create(approval)
    return approval.approval_id


@pytest.mark.parametrize(
    ("tool", "metric", "status"),
    [
        ("shop.add_note", "ApprovalsSucceeded", "succeeded"),
        ("shop.break_note", "ApprovalsFailed", "failed"),
    ],
)
def test_the_run_is_counted_as_it_ended(
    aws: None, capsys: pytest.CaptureFixture[str], tool: str, metric: str, status: str
) -> None:
    key_id = seed("alice", ["shop.*"], permissions=["shop"]).split("_")[1]
    store = ApprovalStore("ApprovalsTable", boto3.client("dynamodb"))
    runner = ApprovedCallRunner(Registry.from_modules([family("shop", tools)]), store, key_store())
    approval_id = approved(store, tool, key_id)
    capsys.readouterr()
    assert runner.run(approval_id) == {"status": status}
    line = next(
        json.loads(text) for text in capsys.readouterr().out.splitlines() if '"message":"tool call"' in text
    )
    assert line[metric] == 1 and line["entry"] == "approval"
    assert ("ApprovalsSucceeded" in line) is (status == "succeeded")
