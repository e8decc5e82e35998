"""The approvals that wait for an approver, as metrics: how many wait, how long the oldest has
waited and how many are overdue, in total and per tool (docs/operating.md, "Metrics, the dashboard
and alarms").

Nothing runs while an approval waits (its workflow carries the timers), so the approvals function's
``backlog`` task samples the backlog every 5 minutes (a schedule in template.yaml), reading the
approvers' inbox index oldest first (``approvals.pending``): the approvals approvers decide, a key's
or a Cognito user's held calls. A guest's double opt-in waits for the guest alone, whom no alarm can
hurry, so it is not counted.

Overdue: still pending more than ``OVERDUE_FACTOR`` times its policy's ``escalate_after_s`` after it
was held (escalated, and still nobody decided), or, whatever its policy, still pending past its
expiry (its workflow should have ended it: the workflow is stuck or failed). An approval whose
policy does not escalate is otherwise never overdue: its lifetime is the deadline the operator chose
(``ApprovalLifetimeSeconds``), and it expires then.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from toolfront.approvals.pending import PendingApproval, PendingApprovals
from toolfront.calls.logs import emit_metrics

logger = logging.getLogger(__name__)

OVERDUE_FACTOR = 2
#: Past its expiry an approval is overdue only after this: the workflow closes it seconds after its
#: timer ends, and the index is eventually consistent.
EXPIRY_GRACE = timedelta(minutes=5)
#: Approvals read at most per sample, the oldest (those that can be overdue); more is logged.
MAX_SAMPLED = 1000

PENDING, OLDEST_AGE, OVERDUE = "ApprovalsPending", "OldestPendingApprovalAge", "ApprovalsOverdue"
UNITS = {PENDING: "Count", OLDEST_AGE: "Seconds", OVERDUE: "Count"}


@dataclass(frozen=True, slots=True)
class Waiting:
    """What waits, in total or for one tool."""

    pending: int = 0
    oldest_age_s: float = 0.0
    overdue: int = 0

    def plus(self, age_s: float, overdue: bool) -> Waiting:
        return Waiting(self.pending + 1, max(self.oldest_age_s, age_s), self.overdue + int(overdue))

    def metrics(self) -> dict[str, float]:
        return {PENDING: self.pending, OLDEST_AGE: round(self.oldest_age_s, 3), OVERDUE: self.overdue}


@dataclass(frozen=True, slots=True)
class Backlog:
    """One sample: the totals, each tool's that has an approval waiting, and whether every waiting
    approval was read (more than ``MAX_SAMPLED``: the newest beyond them were not)."""

    total: Waiting = Waiting()
    by_tool: dict[str, Waiting] = field(default_factory=dict)
    complete: bool = True

    def as_dict(self) -> dict[str, Any]:
        """The task's answer (the invocation's result, for whoever invokes it by hand)."""
        return {
            "pending": self.total.pending,
            "oldest_age_s": round(self.total.oldest_age_s, 3),
            "overdue": self.total.overdue,
            "tools": {tool: waiting.metrics() for tool, waiting in sorted(self.by_tool.items())},
            "complete": self.complete,
        }


def is_overdue(approval: PendingApproval, now: datetime) -> bool:
    """Whether a waiting approval is overdue (see the module's docstring)."""
    if now > approval.expires_at + EXPIRY_GRACE:
        return True
    after = approval.policy.escalate_after_s
    return after is not None and (now - approval.created_at).total_seconds() > OVERDUE_FACTOR * after


def measure(approvals: Iterable[PendingApproval], now: datetime, *, complete: bool = True) -> Backlog:
    """The backlog of these waiting approvals at ``now``."""
    total, by_tool = Waiting(), dict[str, Waiting]()
    for approval in approvals:
        age_s = max(0.0, (now - approval.created_at).total_seconds())
        overdue = is_overdue(approval, now)
        total = total.plus(age_s, overdue)
        by_tool[approval.tool] = by_tool.get(approval.tool, Waiting()).plus(age_s, overdue)
    return Backlog(total, by_tool, complete)


def report(backlog: Backlog) -> None:
    """Write the sample as metrics: the totals always, zero when nothing waits (so the overdue alarm
    tells an empty backlog from a sampler that stopped: no data), and each waiting tool's.

    A tool's values are a gauge of that tool alone: they go by service and tool only, never into the
    service's totals (which would then count each approval twice)."""
    emit_metrics(backlog.total.metrics(), units=UNITS)
    for tool, waiting in sorted(backlog.by_tool.items()):
        emit_metrics(waiting.metrics(), units=UNITS, tool=tool, rollup=False)


def sample(pending: PendingApprovals, clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> Backlog:
    """Read what waits (the oldest ``MAX_SAMPLED``), measure it and write its metrics."""
    approvals, more = pending.oldest(MAX_SAMPLED)
    if more:
        logger.warning(
            "more than %d approvals wait; the backlog's metrics count the oldest %d", MAX_SAMPLED, MAX_SAMPLED
        )
    backlog = measure(approvals, clock(), complete=not more)
    report(backlog)
    return backlog
