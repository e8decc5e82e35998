"""The Slack channel's parts without a stack: its settings, the signature check, the secrets read
once, the message's content, and a Slack failure that never fails a held call's park."""

from __future__ import annotations

import hashlib
import hmac
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest

from toolfront.approvals.records import Approval, ApprovalStatus, Requester
from toolfront.approvals.slack import Slack, SlackError, SlackSettings, announce
from toolfront.approvals.slack_blocks import SUMMARY_CHARS, approval_message, decided_message
from toolfront.approvals.slack_votes import action_of
from toolfront.errors import ConfigurationError
from toolfront.tools.approval_policy import ApprovalPolicy

NOW = 1_800_000_000
SETTINGS = SlackSettings("C0APPROVALS", "arn:bot", "arn:signing")


def slack(**changes: Any) -> tuple[Slack, list[str]]:
    reads: list[str] = []

    def read(arn: str, what: str) -> str:
        reads.append(arn)
        return "the-signing-secret" if arn == "arn:signing" else "xoxb-token"

    return Slack(SETTINGS, secrets=read, clock=lambda: NOW, **changes), reads


def signature(body: bytes, timestamp: int, secret: str = "the-signing-secret") -> str:
    digest = hmac.new(secret.encode(), f"v0:{timestamp}:".encode() + body, hashlib.sha256).hexdigest()
    return f"v0={digest}"


def held(**changes: Any) -> Approval:
    values: dict[str, Any] = {
        "approval_id": "apr_0123456789abcdef01234567",
        "tool": "catalogue.delete_product",
        "function": "catalogue",
        "input": {"name": "<b>&", "note": "x" * 2000},
        "input_digest": "d",
        "requester": Requester("key", "k1", "alice"),
        "reason": "danger",
        "status": ApprovalStatus.PENDING,
        "created_at": datetime(2026, 12, 1, tzinfo=UTC),
        "expires_at": datetime(2026, 12, 1, tzinfo=UTC) + timedelta(days=1),
        "request_id": "r1",
        "base_url": "https://api.example.com",
        "code_hash": "a-hash",
    }
    return Approval(**(values | changes))


def test_settings_are_off_without_a_channel_and_name_a_missing_secret() -> None:
    assert SlackSettings.from_env({}) is None
    with pytest.raises(ConfigurationError, match="TOOLFRONT_SLACK_SIGNING_SECRET_ARN"):
        SlackSettings.from_env({"TOOLFRONT_SLACK_CHANNEL": "C1", "TOOLFRONT_SLACK_BOT_TOKEN_SECRET_ARN": "a"})


def test_verify_accepts_slacks_signature_once_and_reads_the_secret_once() -> None:
    app, reads = slack()
    body = b"payload=%7B%7D"
    assert app.verify(body, str(NOW), signature(body, NOW))
    assert app.verify(body, str(NOW - 299), signature(body, NOW - 299))
    assert reads == ["arn:signing"]  # cached for the process


@pytest.mark.parametrize(
    ("body", "timestamp", "signed"),
    [
        (b"payload=%7B%7D", str(NOW - 301), signature(b"payload=%7B%7D", NOW - 301)),  # stale
        (b"payload=%7B%7D", str(NOW + 301), signature(b"payload=%7B%7D", NOW + 301)),  # from the future
        (b"payload=%7B%7D", str(NOW), signature(b"payload=%7B%7D", NOW, "another-secret")),
        (b"payload=%7B%7D", str(NOW), signature(b"payload=%7B%7C", NOW)),  # another body
        (b"payload=%7B%7D", "1e9", "v0=00"),
        (b"payload=%7B%7D", None, None),
        (b"\xff\xfe", str(NOW), signature(b"\xff\xfe", NOW)),
    ],
)
def test_verify_refuses_anything_else(body: bytes, timestamp: str | None, signed: str | None) -> None:
    assert not slack()[0].verify(body, timestamp, signed)


def test_the_message_names_the_call_never_carries_the_code_and_escapes_the_input() -> None:
    approval = held()
    text, blocks = approval_message(approval, "Delete a product")
    whole = repr(blocks)
    assert "a-hash" not in whole and "code=" not in whole
    assert "&lt;b&gt;&amp;" in whole and "<b>" not in whole  # no mention or link from the input
    summary = next(b for b in blocks if "Input" in b.get("text", {}).get("text", ""))
    assert len(summary["text"]["text"]) < SUMMARY_CHARS + 40
    buttons = next(b for b in blocks if b["type"] == "actions")["elements"]
    assert [b["value"] for b in buttons] == [approval.approval_id] * 2
    assert "API key k1 of alice" in text


def test_a_decided_message_names_who_and_drops_the_buttons() -> None:
    by = {"kind": "slack", "id": "T1:U1", "principal": "boss"}
    _, blocks = decided_message(held(status=ApprovalStatus.REJECTED, decided_by=by), "Delete", by)
    assert "<@U1>" in repr(blocks) and not any(b["type"] == "actions" for b in blocks)
    policy = ApprovalPolicy(quorum=2)
    pending = held(policy=policy, approved_by=(by,))
    _, blocks = decided_message(pending, "Delete", by)
    assert "1 of 2 approvals" in repr(blocks) and any(b["type"] == "actions" for b in blocks)


def test_only_a_click_on_our_buttons_is_an_action() -> None:
    click = {
        "type": "block_actions",
        "user": {"id": "U1", "team_id": "T1"},
        "container": {"channel_id": "C1", "message_ts": "1.2"},
        "actions": [{"action_id": "toolfront_reject", "value": "apr_1"}],
    }
    assert action_of(click) is not None and action_of(click).decision == "reject"  # type: ignore[union-attr]
    assert action_of({**click, "type": "view_submission"}) is None
    assert action_of({**click, "actions": [{"action_id": "other", "value": "apr_1"}]}) is None
    assert action_of({**click, "user": "U1"}) is None
    assert action_of([click]) is None


class FailingWeb:
    timeout = 0

    def chat_postMessage(self, **arguments: Any) -> Any:
        raise OSError("no route to Slack")


def test_a_slack_failure_never_fails_the_park() -> None:
    app, _ = slack(web=FailingWeb())

    kept: list[Any] = []

    class Store:
        def keep_slack_message(self, *args: Any) -> None:
            kept.append(args)

    assert announce(app, Store(), held(), "Delete") is False  # type: ignore[arg-type]
    assert kept == []
    with pytest.raises(SlackError, match=r"did not answer chat\.postMessage"):
        app.post("C1", "t", [])


def test_a_policy_naming_other_channels_posts_nothing() -> None:
    app, _ = slack(web=FailingWeb())
    quiet = held(policy=ApprovalPolicy(channels=("email",)))
    assert announce(app, None, quiet, "Delete") is False  # type: ignore[arg-type]


def test_an_expired_calls_message_says_so_without_buttons() -> None:
    by = {"kind": "system", "id": None}
    text, blocks = decided_message(held(status=ApprovalStatus.EXPIRED, decided_by=by), "Delete", by)
    assert "toolfront: expired before enough people approved" in text and ":hourglass:" in text
    assert not any(b["type"] == "actions" for b in blocks)


class RecordingWeb:
    timeout = 0

    def __init__(self) -> None:
        self.posted: list[dict[str, Any]] = []

    def chat_postMessage(self, **arguments: Any) -> Any:
        self.posted.append(arguments)
        return SimpleNamespace(data={"ok": True, "channel": arguments["channel"], "ts": "1.1"})


@pytest.mark.parametrize(
    ("channel", "group", "posted_to", "mention"),
    [
        ("", "S0ESCALATE", "C0APPROVALS", "<!subteam^S0ESCALATE> "),  # the approvals channel, mentioning
        ("C0ESCALATE", "S0ESCALATE", "C0ESCALATE", ""),  # a channel of its own: no mention needed
        ("", "", "C0APPROVALS", ""),
    ],
)
def test_an_escalation_asks_again_in_the_escalation_channel_or_mentions_the_group(
    channel: str, group: str, posted_to: str, mention: str
) -> None:
    from dataclasses import replace

    from toolfront.approvals.slack import escalate

    web = RecordingWeb()
    settings = replace(SETTINGS, escalation_channel=channel, escalation_user_group=group)
    app = Slack(settings, secrets=lambda arn, what: "xoxb-token", clock=lambda: NOW, web=web)
    assert escalate(app, held(), "Delete a product") is True
    [message] = web.posted
    assert message["channel"] == posted_to
    first = message["blocks"][0]["text"]["text"]
    assert first.startswith(f":rotating_light: {mention}Still waiting") and "code" not in str(message)
    assert any(block.get("type") == "actions" for block in message["blocks"])  # its buttons vote alike


def test_an_escalation_that_slack_refuses_is_only_logged() -> None:
    from toolfront.approvals.slack import escalate

    app, _ = slack(web=FailingWeb())
    assert escalate(app, held(), "Delete") is False
    assert escalate(None, held(), "Delete") is False
