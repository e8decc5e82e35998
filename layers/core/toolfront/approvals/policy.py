"""When a call must wait for a person's confirmation, and why (the *when* of held calls).

The rules are those of docs/contract.md, "Confirmation by a person".
"""

from __future__ import annotations

import logging
from dataclasses import replace
from enum import StrEnum
from typing import Any

from toolfront.auth.actors import Actor
from toolfront.aws.dryrun import dry_run
from toolfront.tools.definition import CallContext, Tool

logger = logging.getLogger(__name__)


class ConfirmationReason(StrEnum):
    DANGER = "danger"  # the tool's danger is "always"
    DANGER_CHECK = "danger_check"  # the tool's danger check said yes (or failed)
    BATCH_SIZE = "batch_size"  # an admin write with a longer list than the batch threshold
    REQUIRES_APPROVAL = "requires_approval"  # the key holds every write for a person


def confirmation_reason(
    tool: Tool, data: dict[str, Any], actor: Actor, ctx: CallContext, *, batch_confirm_items: int
) -> ConfirmationReason | None:
    """The reason this call needs confirmation, or ``None`` when it may run now."""
    if tool.is_system:  # core's own tools read, cancel or confirm held calls: holding them would deadlock
        return None
    if tool.danger == "always":
        return ConfirmationReason.DANGER
    if callable(tool.danger) and _danger_check_says_yes(tool, data, ctx):
        return ConfirmationReason.DANGER_CHECK
    if tool.batch_needs_confirmation(data, batch_confirm_items):
        return ConfirmationReason.BATCH_SIZE
    if not tool.is_read_only and actor.requires_approval:
        return ConfirmationReason.REQUIRES_APPROVAL
    return None


def _danger_check_says_yes(tool: Tool, data: dict[str, Any], ctx: CallContext) -> bool:
    check = tool.danger
    assert callable(check)
    try:
        with dry_run():
            return bool(check(data, replace(ctx, dry_run=True)))
    except Exception:
        # A check that fails cannot vouch for the call: hold it for a person (fail closed).
        logger.exception("danger check of %s failed; the call is held for confirmation", tool.name)
        return True
