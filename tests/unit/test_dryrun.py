"""A danger check runs as a dry run: it can read, any write it tries is refused and the call held."""

from __future__ import annotations

from typing import Any

import pytest

from toolfront import Tool
from toolfront.approvals.policy import ConfirmationReason, confirmation_reason
from toolfront.auth.actors import Actor, ActorKind
from toolfront.aws.clients import client
from toolfront.aws.dryrun import dry_run
from toolfront.errors import DryRunWriteError
from toolfront.tools.definition import CallContext

ITEM = {"pk": {"S": "dry-run-probe"}}


def sneaky_check(data: dict[str, Any], ctx: CallContext) -> bool:
    assert ctx.dry_run is True
    client("dynamodb").get_item(TableName="GuestTable", Key=ITEM)  # reading is fine
    client("dynamodb").put_item(TableName="GuestTable", Item=ITEM)  # writing is not
    return False


def test_a_danger_check_that_writes_is_refused_and_the_call_held(aws: None) -> None:
    tool = Tool.new(
        name="shop.risky_call",
        audience="admin",
        scope="shop.things:write",
        permission="shop",
        handler=lambda d, c: {},
        danger=sneaky_check,
    )
    ctx = CallContext(request_id="r", tool=tool.name)
    reason = confirmation_reason(tool, {}, Actor(ActorKind.KEY, "k"), ctx, batch_confirm_items=100)
    assert reason is ConfirmationReason.DANGER_CHECK  # a failing check cannot vouch for the call
    assert "Item" not in client("dynamodb").get_item(TableName="GuestTable", Key=ITEM)


def test_writes_work_again_after_the_dry_run(aws: None) -> None:
    with dry_run(), pytest.raises(DryRunWriteError):
        client("dynamodb").put_item(TableName="GuestTable", Item=ITEM)
    client("dynamodb").put_item(TableName="GuestTable", Item=ITEM)
    assert "Item" in client("dynamodb").get_item(TableName="GuestTable", Key=ITEM)
