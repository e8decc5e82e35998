"""A click on a held call's Slack message, once its signature holds: one person's vote, or a refusal
only that person sees.

The person is found (``slack_people``), section 14's rules applied (the approver permission, never
one's own call), and the vote counted by ``Decisions.vote`` (once per person, whatever the channel;
the quorum's last vote, or one rejection, decides and resumes the workflow). The message then says
who decided and the votes so far (``chat.update``). Slack sends an action again when its answer is
late (``X-Slack-Retry-Num``), and a signed request may be replayed within its five minutes: both
decide once, because a person's vote counts once and a decided approval is closed; the repeat of the
click that decided is answered with no change and no message. Every refusal (nobody toolfront knows,
no permission, one's own call, already decided, already voted) is a ``chat.postEphemeral`` to that
person, an audit record and a metric, and changes nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolfront.approvals.slack import SlackError, wants_slack
from toolfront.approvals.slack_blocks import ACTIONS, decided_message
from toolfront.audit.records import AuditActor, AuditEntry, AuditEvent, decided_by
from toolfront.aws import clients as aws
from toolfront.calls.logs import emit_metric
from toolfront.errors import AlreadyVotedError, ApprovalClosedError, StoreUnavailableError, ToolfrontError

if TYPE_CHECKING:
    from toolfront.approvals.decisions import Decisions
    from toolfront.approvals.records import Approval
    from toolfront.approvals.slack import Slack
    from toolfront.approvals.slack_people import SlackPeople, SlackPerson
    from toolfront.approvals.store import ApprovalStore
    from toolfront.audit.log import AuditLog

logger = logging.getLogger(__name__)
#: What each decision leaves an approval as, once it has decided it (a repeat of it changes nothing).
_DECIDED_AS = {"approve": ("approved", "succeeded", "failed"), "reject": ("rejected",)}
UNKNOWN_APPROVAL = "not_found"
NOT_IN_SLACK = "not_in_slack"
TRY_AGAIN = "unavailable"
_TRY_AGAIN_TEXT = "toolfront could not check who you are; retry shortly"


@dataclass(frozen=True, slots=True)
class SlackAction:
    """A button's click: the decision, the approval, who clicked (team and user) and where."""

    decision: str
    approval_id: str
    team: str
    user: str
    channel: str
    message_ts: str

    @property
    def slack_id(self) -> str:
        return f"{self.team}:{self.user}"


def action_of(payload: Any) -> SlackAction | None:
    """The click a ``block_actions`` payload carries on one of toolfront's buttons; ``None`` for any
    other interaction (answered 200 and ignored, as Slack expects)."""
    if not isinstance(payload, dict) or payload.get("type") != "block_actions":
        return None
    actions, user = payload.get("actions"), _object(payload.get("user"))
    container, channel = _object(payload.get("container")), _object(payload.get("channel"))
    team = _object(payload.get("team"))
    if not isinstance(actions, list) or len(actions) != 1 or not isinstance(actions[0], dict):
        return None
    decision = ACTIONS.get(str(actions[0].get("action_id")))
    values = {
        "approval_id": actions[0].get("value"),
        "team": user.get("team_id") or team.get("id"),
        "user": user.get("id"),
        "channel": container.get("channel_id") or channel.get("id"),
        "message_ts": container.get("message_ts") or "",
    }
    if decision is None or not all(isinstance(v, str) and v for k, v in values.items() if k != "message_ts"):
        return None
    return SlackAction(decision, **{k: str(v) for k, v in values.items()})


class SlackVotes:
    """Counts Slack users' clicks as votes, and tells them when a click changes nothing."""

    def __init__(
        self,
        slack: Slack,
        people: SlackPeople,
        decisions: Decisions,
        store: ApprovalStore,
        *,
        title_of: Callable[[str], str],
        audit: AuditLog | None = None,
    ) -> None:
        self._slack, self._people, self._decisions, self._store = slack, people, decisions, store
        self._title_of, self._audit = title_of, audit

    def act(self, action: SlackAction, *, retried: bool = False) -> str:
        """Count the click, or refuse it; answers what became of it (``voted`` or a refusal's code)."""
        approval = self._store.get(action.approval_id)
        if approval is None:
            missing = "this approval does not exist (any more)"
            return self._refuse(action, None, None, UNKNOWN_APPROVAL, missing)
        if not wants_slack(approval):  # a guest's double opt-in, or a tool that keeps out of Slack
            return self._refuse(action, approval, None, NOT_IN_SLACK, "this call is not decided in Slack")
        try:
            person = self._people.identify(action.team, action.user)
        except (SlackError, StoreUnavailableError) as exc:
            logger.warning("a Slack user could not be identified: %s", exc)
            return self._refuse(action, approval, None, TRY_AGAIN, _TRY_AGAIN_TEXT)
        except Exception as exc:
            if not aws.is_aws_failure(exc):
                raise
            logger.warning("a Slack user could not be identified: %s", aws.error_code(exc))
            return self._refuse(action, approval, None, TRY_AGAIN, _TRY_AGAIN_TEXT)
        refused = self._people.refusal(person, approval)
        if refused is not None:
            return self._refuse(action, approval, person, *refused)
        by = decided_by("slack", action.slack_id, person.principal)
        try:
            decided = self._decisions.vote(action.approval_id, action.decision, by=by)
        except AlreadyVotedError as exc:
            return "repeated" if retried else self._refuse(action, approval, person, exc.code, exc.message)
        except ApprovalClosedError as exc:
            current = self._store.get(action.approval_id) or approval
            if _decided_by(current, person, action.decision):
                return "repeated"  # Slack's retry, or a replay, of the click that decided it
            return self._refuse(action, current, person, exc.code, exc.message)
        except ToolfrontError as exc:
            return self._refuse(action, approval, person, exc.code, exc.message)
        emit_metric("SlackVotes", Decision=action.decision)
        self._show(decided, action, by)
        return "voted"

    def _show(self, approval: Approval, action: SlackAction, by: dict[str, Any]) -> None:
        """Edit the approval's message: who decided, the votes so far, the outcome."""
        where = approval.slack_message or {"channel": action.channel, "ts": action.message_ts}
        if not where.get("ts"):
            return
        text, blocks = decided_message(approval, self._title_of(approval.tool), by)
        try:
            self._slack.update(where["channel"], where["ts"], text, blocks)
        except SlackError as exc:  # the vote stands; only the message is behind
            logger.warning("the Slack message of %s was not updated: %s", approval.approval_id, exc)
            emit_metric("SlackFailures", Method="chat.update")

    def _refuse(
        self,
        action: SlackAction,
        approval: Approval | None,
        person: SlackPerson | None,
        code: str,
        message: str,
    ) -> str:
        """Tell the person alone why nothing changed; keep an audit record and count it."""
        try:
            self._slack.ephemeral(action.channel, action.user, f"Nothing changed: {message}.")
        except SlackError as exc:
            logger.warning("a Slack refusal could not be shown: %s", exc)
            emit_metric("SlackFailures", Method="chat.postEphemeral")
        emit_metric("SlackRefusals", Reason=code)
        if self._audit is not None:
            principal = person.principal if person is not None else None
            entry = AuditEntry(
                event=AuditEvent.SLACK_REFUSED,
                at=self._audit.now(),
                actor=AuditActor("slack", action.slack_id, principal),
                request_id=approval.request_id if approval else None,
                tool=approval.tool if approval else None,
                input_sha256=approval.input_digest if approval else None,
                status=str(approval.status) if approval else None,
                error_code=code,
                approval_id=action.approval_id if approval else None,
                entry="slack",
            )
            try:
                self._audit.append(entry)
            except StoreUnavailableError:
                logger.error("the audit record of a Slack refusal of %s was not written", action.approval_id)
        return code


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _decided_by(approval: Approval, person: SlackPerson, decision: str) -> bool:
    """Whether ``person``'s own ``decision`` is what closed ``approval``."""
    by = approval.decided_by or {}
    same = by.get("kind") == "slack" and by.get("principal") == person.principal
    return same and str(approval.status) in _DECIDED_AS[decision]
