"""Slack in the approvals function: a held call's message when the workflow parks it
(``announce_in_slack``), and ``POST /approvals/slack/actions``, Slack's interactivity URL.

Slack's signature is checked on the raw body before anything is read (anything else is 401 and
changes nothing); the form's ``payload`` field (JSON, through the one JSON reader) then names the
click, which ``toolfront.approvals.slack_votes`` counts or refuses. The answer is an empty 200 well
within Slack's 3 seconds: a vote is one or two DynamoDB writes, and resuming the workflow is an
asynchronous Step Functions call. ``slack_sdk`` is loaded by these paths only.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from toolfront import wiring
from toolfront.adapters.http import Request, Response
from toolfront.calls.inputs import parse_json
from toolfront.calls.logs import emit_metric
from toolfront.errors import ConfigurationError, InvalidFormError, NotFoundError, UnauthenticatedError
from toolfront.settings import current
from toolfront.tools.manifest import manifest_tool

if TYPE_CHECKING:
    from toolfront.approvals.records import Approval
    from toolfront.approvals.slack import Slack
    from toolfront.approvals.slack_votes import SlackVotes

logger = logging.getLogger(__name__)
#: Slack's interaction carries the whole message it came from: more than a page's form.
MAX_SLACK_FORM_BYTES = 64 * 1024
SIGNATURE_HEADER, TIMESTAMP_HEADER = "x-slack-signature", "x-slack-request-timestamp"
RETRY_HEADER = "x-slack-retry-num"


def announce_in_slack(approval: Approval, title: str) -> None:
    """The park task's Slack message (when Slack is on and the policy asks it): never fails the park."""
    from toolfront.approvals.slack import announce

    store = wiring.approval_store()
    try:
        slack = wiring.slack()
    except ConfigurationError as exc:
        logger.warning("Slack is misconfigured, no message for %s: %s", approval.approval_id, exc.message)
        emit_metric("SlackFailures", Method="configuration")
        return
    if store is not None:
        announce(slack, store, approval, title)


def escalate_in_slack(approval: Approval) -> None:
    """The escalate task's Slack post (when Slack is on and the policy asks it): never fails it."""
    from toolfront.approvals.slack import escalate

    try:
        slack = wiring.slack()
    except ConfigurationError as exc:
        logger.warning("Slack is misconfigured, no escalation for %s: %s", approval.approval_id, exc.message)
        emit_metric("SlackFailures", Method="configuration")
        return
    escalate(slack, approval, _title_of(approval.tool))


def update_in_slack(approval: Approval) -> None:
    """The message of a call that ended without a click (expired, or its workflow failed) says so,
    its buttons gone; nothing without a message or without Slack, and a failure is only logged."""
    if not approval.slack_message:
        return
    from toolfront.approvals.slack import SlackError
    from toolfront.approvals.slack_blocks import decided_message

    try:
        slack = wiring.slack()
        if slack is None:
            return
        by = approval.decided_by or {"kind": "system", "id": None}
        text, blocks = decided_message(approval, _title_of(approval.tool), by)
        slack.update(approval.slack_message["channel"], approval.slack_message["ts"], text, blocks)
    except (ConfigurationError, SlackError) as exc:
        logger.warning("the Slack message of %s was not updated: %s", approval.approval_id, exc)
        emit_metric("SlackFailures", Method="chat.update")


def slack_actions(request: Request) -> Response:
    """A click on a held call's message: verified, then counted or refused; always an empty 200."""
    slack = wiring.slack()
    if slack is None:
        raise NotFoundError("Slack is not configured for this stack")
    headers = request.headers
    if not slack.verify(request.body or b"", headers.get(TIMESTAMP_HEADER), headers.get(SIGNATURE_HEADER)):
        emit_metric("SlackSignatureRefusals")
        raise UnauthenticatedError("this request is not signed by this stack's Slack app")
    from toolfront.approvals.slack_votes import action_of

    form = request.form(max_bytes=MAX_SLACK_FORM_BYTES)
    if "payload" not in form:
        raise InvalidFormError("an interaction carries its JSON in the form field 'payload'")
    action = action_of(parse_json(form["payload"].encode("utf-8", "surrogatepass"), what="the payload"))
    if action is not None:
        outcome = _votes(slack).act(action, retried=RETRY_HEADER in headers)
        emit_metric("SlackActions", Outcome=outcome)
    return Response.empty(200)


def _votes(slack: Slack) -> SlackVotes:
    from toolfront.approvals.slack_people import SlackPeople
    from toolfront.approvals.slack_votes import SlackVotes

    store, settings = wiring.approval_store(), current()
    if store is None or settings.approvals is None:
        raise ConfigurationError("TOOLFRONT_APPROVAL_STATE_MACHINE_ARN is not set: no approvals here")
    pool = slack.settings.user_pool_id or None  # with Cognito: a Slack e-mail's user
    people = SlackPeople(
        settings.approvals.table, wiring.key_store(), email_of=slack.email_of, user_pool_id=pool
    )
    decisions = wiring.decisions(resumes_itself=True)
    return SlackVotes(slack, people, decisions, store, title_of=_title_of, audit=wiring.audit_log())


def _title_of(tool: str) -> str:
    return str(manifest_tool(tool).get("title") or tool)
