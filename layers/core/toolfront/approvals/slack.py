"""Approvals in Slack (docs/contract.md, "Approving in Slack"): the stack's Slack settings, its two
secrets and the Web API calls toolfront makes (``chat.postMessage``, ``chat.update``, ``chat.postEphemeral``,
``users.info``) with the official ``slack_sdk``.

``slack_sdk`` costs about 80 ms to import, so it is imported here only, inside the calls that need it:
a held call's ``park`` with Slack on, and ``POST /approvals/slack/actions``; the pages, the gateway
and the families never load it. The secrets are read from Secrets Manager once per process and are
never logged, stored or echoed in an error.
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolfront.aws import clients as aws
from toolfront.aws import dynamodb
from toolfront.calls.logs import emit_metric
from toolfront.errors import ConfigurationError, StoreUnavailableError

if TYPE_CHECKING:
    from toolfront.approvals.records import Approval
    from toolfront.approvals.store import ApprovalStore

logger = logging.getLogger(__name__)

#: A policy's name for this channel (``approval={"channels": ["slack"]}``).
CHANNEL_NAME = "slack"
#: How far a request's time stamp may be from now (Slack's own rule: five minutes).
MAX_CLOCK_SKEW_SECONDS = 300
#: Slack wants an interaction answered within 3 s: each Web API call gets much less than that.
ACTION_TIMEOUT_SECONDS = 2
POST_TIMEOUT_SECONDS = 5  # the park task has the time; a slow Slack still never fails it
_NO_SUCH_USER = frozenset({"user_not_found", "user_not_visible", "account_inactive"})
_VARIABLES = {
    "channel": "TOOLFRONT_SLACK_CHANNEL",
    "bot_token_secret_arn": "TOOLFRONT_SLACK_BOT_TOKEN_SECRET_ARN",
    "signing_secret_arn": "TOOLFRONT_SLACK_SIGNING_SECRET_ARN",
    "escalation_channel": "TOOLFRONT_SLACK_ESCALATION_CHANNEL",
    "escalation_user_group": "TOOLFRONT_SLACK_ESCALATION_USER_GROUP",
    "api_url": "TOOLFRONT_SLACK_API_URL",
    "user_pool_id": "TOOLFRONT_COGNITO_USER_POOL_ID",
}


@dataclass(frozen=True, slots=True)
class SlackSettings:
    """``SlackChannel`` (empty: Slack is off), the two secrets' ARNs, the escalation's channel and
    user group, (locally) the Web API's address, the stand-in's instead of Slack's, and the user pool
    where a Slack user's e-mail is looked up."""

    channel: str
    bot_token_secret_arn: str
    signing_secret_arn: str
    escalation_channel: str = ""
    escalation_user_group: str = ""
    api_url: str = ""  # empty: https://slack.com/api/
    user_pool_id: str = ""  # EnableCognito: a Slack user's e-mail may name a Cognito user there

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> SlackSettings | None:
        """The settings, or ``None`` without a channel (Slack off).

        Raises:
            ConfigurationError: a channel without one of the two secrets' ARNs (names the variable).
        """
        env = os.environ if environ is None else environ
        found = {field: env.get(name, "").strip() for field, name in _VARIABLES.items()}
        if not found["channel"]:
            return None
        for field in ("bot_token_secret_arn", "signing_secret_arn"):
            if not found[field]:
                raise ConfigurationError(
                    f"environment variable {_VARIABLES[field]} must name a Secrets Manager secret when "
                    f"{_VARIABLES['channel']} is set"
                )
        return cls(**found)


class SlackError(Exception):
    """Slack refused a Web API call (``code``: Slack's error code) or did not answer (``code`` empty);
    the message names the method and the code, never a token."""

    def __init__(self, message: str, code: str = "") -> None:
        super().__init__(message)
        self.code = code


def wants_slack(approval: Approval) -> bool:
    """Whether approvers are asked in Slack: an admin tool's call (a key's or a Cognito user's; a
    guest's double opt-in is confirmed by the guest alone) whose policy's ``channels`` name Slack
    (or none: every channel of the stack)."""
    from toolfront.auth.actors import ActorKind

    channels = approval.policy.channels
    by_approvers = approval.requester.kind in (ActorKind.KEY, ActorKind.COGNITO)
    return by_approvers and (not channels or CHANNEL_NAME in channels)


def announce(slack: Slack | None, store: ApprovalStore, approval: Approval, title: str) -> bool:
    """Post a held call's message to the stack's channel when its policy asks Slack, and keep where
    the message is on the approval; whether it was posted. A Slack failure never fails the park: it
    is logged and counted (``SlackFailures``), and the approvers' other channels still have the call.
    """
    if slack is None or not wants_slack(approval):
        return False
    from toolfront.approvals.slack_blocks import approval_message

    text, blocks = approval_message(approval, title)
    try:
        channel, ts = slack.post(slack.settings.channel, text, blocks)
    except (SlackError, ConfigurationError) as exc:
        logger.warning("the Slack message of %s was not posted: %s", approval.approval_id, exc)
        emit_metric("SlackFailures", Method="chat.postMessage")
        return False
    try:
        store.keep_slack_message(approval.approval_id, channel, ts)
    except (StoreUnavailableError, dynamodb.ConditionFailedError):  # a click on it still names the approval
        logger.warning("where the Slack message of %s is could not be kept", approval.approval_id)
    emit_metric("SlackMessagesPosted")
    return True


def escalate(slack: Slack | None, approval: Approval, title: str) -> bool:
    """Ask again in Slack for a call still pending at its escalation time: the escalation channel,
    else the approvals channel mentioning the escalation user group; whether it was posted (a
    failure is logged and counted, never raised: the escalation stands and the first message
    still decides)."""
    if slack is None or not wants_slack(approval):
        return False
    from toolfront.approvals.slack_blocks import escalation_message

    settings = slack.settings
    group = settings.escalation_user_group
    mention = f"<!subteam^{group}> " if group and not settings.escalation_channel else ""
    text, blocks = escalation_message(approval, title, mention)
    try:
        slack.post(settings.escalation_channel or settings.channel, text, blocks)
    except (SlackError, ConfigurationError) as exc:
        logger.warning("the Slack escalation of %s was not posted: %s", approval.approval_id, exc)
        emit_metric("SlackFailures", Method="chat.postMessage")
        return False
    emit_metric("SlackEscalationsPosted")
    return True


class Slack:
    """One stack's Slack app: its secrets (read once per process) and its Web API client."""

    def __init__(
        self,
        settings: SlackSettings,
        *,
        secrets: Callable[[str, str], str] | None = None,
        web: Any = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings = settings
        self._read_secret = secrets or _read_secret
        given = {} if web is None else {ACTION_TIMEOUT_SECONDS: web, POST_TIMEOUT_SECONDS: web}
        self._webs: dict[int, Any] = given
        self._clock = clock
        self._secrets: dict[str, str] = {}
        self._lock = threading.Lock()

    def verify(self, body: bytes, timestamp: str | None, signature: str | None) -> bool:
        """Whether Slack signed this request: ``v0=`` HMAC-SHA256 of ``v0:{timestamp}:{body}`` with the
        signing secret, compared in constant time, the time stamp within five minutes of now."""
        from slack_sdk.signature import SignatureVerifier

        if not timestamp or not signature or not timestamp.isascii() or not timestamp.isdigit():
            return False
        if abs(self._clock() - int(timestamp)) > MAX_CLOCK_SKEW_SECONDS:
            return False
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return False  # Slack sends UTF-8; anything else was not signed by it
        verifier = SignatureVerifier(self._secret("signing_secret_arn", "signing secret"))
        expected = verifier.generate_signature(timestamp=timestamp, body=text) or ""
        return hmac.compare_digest(expected.encode(), signature.encode("utf-8", "replace"))

    def post(self, channel: str, text: str, blocks: list[dict[str, Any]]) -> tuple[str, str]:
        """``chat.postMessage``: the message's channel id and ``ts`` (what ``update`` edits)."""
        answer = self._call(
            "chat_postMessage", POST_TIMEOUT_SECONDS, channel=channel, text=text, blocks=blocks
        )
        return str(answer.get("channel") or channel), str(answer["ts"])

    def update(self, channel: str, ts: str, text: str, blocks: list[dict[str, Any]]) -> None:
        """``chat.update``: the message at (``channel``, ``ts``) says this now."""
        self._call("chat_update", ACTION_TIMEOUT_SECONDS, channel=channel, ts=ts, text=text, blocks=blocks)

    def ephemeral(self, channel: str, user: str, text: str) -> None:
        """``chat.postEphemeral``: a message only ``user`` sees (a refusal changes nothing else)."""
        self._call("chat_postEphemeral", ACTION_TIMEOUT_SECONDS, channel=channel, user=user, text=text)

    def email_of(self, user: str) -> str | None:
        """``users.info``: the e-mail of a Slack user's profile (``users:read.email``), if any."""
        try:
            answer = self._call("users_info", ACTION_TIMEOUT_SECONDS, user=user)
        except SlackError as exc:
            if exc.code in _NO_SUCH_USER:
                return None  # nobody toolfront can know by e-mail
            raise
        profile = (answer.get("user") or {}).get("profile") or {}
        email = profile.get("email")
        return str(email) if isinstance(email, str) and email else None

    def _call(self, method: str, timeout: int, **arguments: Any) -> dict[str, Any]:
        from slack_sdk.errors import SlackApiError, SlackClientError

        client = self._client(timeout)
        name = method.replace("_", ".", 1)
        try:
            answer = getattr(client, method)(**arguments)
        except SlackApiError as exc:  # Slack's own refusal: its error code says why
            code = _error_code(exc.response)
            raise SlackError(f"Slack refused {name}: {code}", code) from None
        except (SlackClientError, OSError, ValueError) as exc:
            raise SlackError(f"Slack did not answer {name} ({type(exc).__name__})") from None
        data: dict[str, Any] = dict(answer.data) if isinstance(answer.data, dict) else {}
        return data

    def _client(self, timeout: int) -> Any:
        """The Web API client that waits ``timeout`` seconds (one per wait: threads share them)."""
        found = self._webs.get(timeout)
        if found is None:
            with self._lock:
                found = self._webs.get(timeout)
                if found is None:
                    from slack_sdk import WebClient

                    token = self._secret("bot_token_secret_arn", "bot token")
                    options: dict[str, Any] = {"token": token, "timeout": timeout}
                    if self.settings.api_url:
                        options["base_url"] = self.settings.api_url
                    found = WebClient(**options)
                    if self.settings.api_url:
                        found.proxy = None  # the local stand-in is on loopback: never through a proxy
                    self._webs[timeout] = found
        return found

    def _secret(self, field: str, what: str) -> str:
        found = self._secrets.get(field)
        if found is None:
            found = self._secrets[field] = self._read_secret(getattr(self.settings, field), what)
        return found


def _read_secret(arn: str, what: str) -> str:
    """A secret's text: the whole ``SecretString``, or its one value when it is a JSON object.

    Raises:
        ConfigurationError: the secret cannot be read or is empty (the message names the secret's
            role and AWS's error code, never its value).
    """
    try:
        answer = aws.client("secretsmanager").get_secret_value(SecretId=arn)
    except Exception as exc:
        if not aws.is_aws_failure(exc):
            raise
        raise ConfigurationError(
            f"the Slack {what} could not be read from Secrets Manager ({aws.error_code(exc) or 'no answer'})"
        ) from None
    text = str(answer.get("SecretString") or "").strip()
    if text.startswith("{"):
        try:
            values = [v for v in json.loads(text).values() if isinstance(v, str)]
        except ValueError:
            values = []
        text = values[0].strip() if len(values) == 1 else ""
    if not text:
        raise ConfigurationError(f"the Slack {what} secret is empty (or a JSON object of several values)")
    return text


def _error_code(response: Any) -> str:
    try:
        return str(response.get("error") or "unknown_error")
    except AttributeError:
        return "unknown_error"
