"""``toolfront slack click --local APPROVAL_ID --user U123 --approve|--reject``: the signed
interactivity request Slack would send when that user clicks a button of the approval's message.

The message is the one the stand-in recorded (``.toolfront/slack.jsonl``); the request is Slack's
own: ``application/x-www-form-urlencoded`` with a JSON ``payload`` of type ``block_actions`` (the
clicked button, the user and team, the channel, the message), signed ``v0=HMAC-SHA256(signing
secret, "v0:{timestamp}:{body}")`` in ``X-Slack-Signature`` with ``X-Slack-Request-Timestamp``. The
signing secret is read from the local stack's Secrets Manager, never printed. Only ``--local``: the
command signs with a secret only the local stack's stand-in made.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import http.client
import json
import secrets
import time
import urllib.parse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolfront.approvals.slack_blocks import APPROVE_ACTION, DECISION_BLOCK, REJECT_ACTION
from toolfront_dev.command import Command, command_group
from toolfront_dev.errors import CommandError

ACTIONS_PATH = "/approvals/slack/actions"
SLACK_USER_AGENT = "Slackbot 1.0 (+https://api.slack.com/robots)"


def action_payload(
    message: Mapping[str, Any], approval_id: str, user: str, team: str, decision: str
) -> dict[str, Any]:
    """A ``block_actions`` payload as Slack sends it for a click on ``message`` (a stand-in log entry)."""
    args = message.get("args", {})
    channel, ts = str(args.get("channel", "")), str(message.get("ts", ""))
    action_id, label = (APPROVE_ACTION, "Approve") if decision == "approve" else (REJECT_ACTION, "Reject")
    now = f"{time.time():.6f}"
    return {
        "type": "block_actions",
        "user": {"id": user, "username": user.lower(), "name": user.lower(), "team_id": team},
        "api_app_id": "A0LOCAL",
        "token": "",  # Slack's deprecated verification token: the signature is what counts
        "container": {"type": "message", "message_ts": ts, "channel_id": channel, "is_ephemeral": False},
        "trigger_id": f"{secrets.randbelow(10**12)}.{secrets.randbelow(10**12)}.{secrets.token_hex(16)}",
        "team": {"id": team, "domain": "toolfront-local"},
        "enterprise": None,
        "is_enterprise_install": False,
        "channel": {"id": channel, "name": "approvals"},
        "message": {
            "type": "message",
            "subtype": "bot_message",
            "text": args.get("text", ""),
            "ts": ts,
            "bot_id": "B0LOCAL",
            "blocks": args.get("blocks", []),
        },
        "state": {"values": {}},
        "response_url": f"https://hooks.slack.com/actions/{team}/0000000000/{secrets.token_hex(12)}",
        "actions": [
            {
                "action_id": action_id,
                "block_id": DECISION_BLOCK,
                "text": {"type": "plain_text", "text": label, "emoji": True},
                "value": approval_id,
                "style": "primary" if decision == "approve" else "danger",
                "type": "button",
                "action_ts": now,
            }
        ],
    }


def signed_request(
    payload: Mapping[str, Any], signing_secret: str, *, timestamp: int | None = None
) -> tuple[bytes, dict[str, str]]:
    """The body and headers of Slack's request carrying ``payload``, signed as Slack signs it."""
    body = urllib.parse.urlencode({"payload": json.dumps(payload, separators=(",", ":"))}).encode()
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(signing_secret.encode(), f"v0:{stamp}:".encode() + body, hashlib.sha256).hexdigest()
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        "User-Agent": SLACK_USER_AGENT,
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": f"v0={digest}",
    }
    return body, headers


def post(api_url: str, body: bytes, headers: Mapping[str, str]) -> tuple[int, bytes]:
    """POST a signed interaction to the local stack's ``/approvals/slack/actions``."""
    parts = urllib.parse.urlsplit(api_url)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80, timeout=30)
    try:
        connection.request("POST", ACTIONS_PATH, body=body, headers=dict(headers))
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def local_signing_secret(moto_endpoint: str, stage: str) -> str:
    """This run's signing secret, from the local stack's Secrets Manager.

    Raises:
        CommandError: the stack runs without ``--slack``.
    """
    from toolfront_dev.aws import moto_client
    from toolfront_dev.environment import local_stack_name
    from toolfront_dev.slack_local import secret_name

    name = secret_name(local_stack_name(stage), "SlackSigningSecretArn")
    try:
        return str(
            moto_client(moto_endpoint, "secretsmanager").get_secret_value(SecretId=name)["SecretString"]
        )
    except Exception as exc:  # botocore's errors (no such secret, no moto) alike
        raise CommandError(
            f"no Slack signing secret in the local stack ({type(exc).__name__}): start it with "
            "`toolfront dev --slack`"
        ) from None


def _configure_click(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("approval_id", metavar="APPROVAL_ID", help="the held call's approval id (apr_...)")
    parser.add_argument(
        "--local", action="store_true", required=True, help="the stack `toolfront dev --slack` runs"
    )
    parser.add_argument("--user", required=True, metavar="U123", help="the Slack user who clicks")
    parser.add_argument(
        "--team", default=None, metavar="T123", help="their workspace (default: the stand-in's)"
    )
    choice = parser.add_mutually_exclusive_group(required=True)
    choice.add_argument("--approve", dest="decision", action="store_const", const="approve")
    choice.add_argument("--reject", dest="decision", action="store_const", const="reject")
    parser.add_argument(
        "--project", type=Path, default=Path(), metavar="DIR", help="the folder holding .toolfront/dev.json"
    )


def _run_click(args: argparse.Namespace) -> int:
    from toolfront_dev.devinfo import DEV_JSON
    from toolfront_dev.slack_local import LOCAL_TEAM, SLACK_LOG_NAME, posted_message, read_slack_log

    path = args.project / DEV_JSON
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
        api_url, moto_endpoint, stage = info["api_url"], info["moto_endpoint"], info["stage"]
    except FileNotFoundError:
        raise CommandError(f"no local stack: run `toolfront dev --slack` first (no {path})") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CommandError(f"{path} is unreadable ({exc!r}): restart `toolfront dev`") from exc
    log = path.parent / SLACK_LOG_NAME
    entries = read_slack_log(log)
    message = posted_message(entries, args.approval_id)
    if message is None:
        raise CommandError(
            f"no Slack message of {args.approval_id} in {log}: was it held while `toolfront dev --slack` ran?"
        )
    payload = action_payload(message, args.approval_id, args.user, args.team or LOCAL_TEAM, args.decision)
    body, headers = signed_request(payload, local_signing_secret(moto_endpoint, stage))
    try:
        status, answer = post(api_url, body, headers)
    except OSError as exc:
        raise CommandError(f"the local stack did not answer at {api_url} ({exc}): is it running?") from None
    said = f" {answer.decode(errors='replace')[:200]}" if answer else ""
    print(f"{args.decision} by {args.user}: HTTP {status}{said}")
    for entry in read_slack_log(log)[len(entries) :]:  # what toolfront told Slack while answering
        sent = entry.get("args", {})
        method = entry.get("method")
        to = f" to {sent.get('user')}" if method == "chat.postEphemeral" else ""
        said = sent.get("text") or f"{sent.get('user')}: {'ok' if entry.get('ok') else entry.get('error')}"
        print(f"  {method}{to}: {said}")
    return 0 if status == 200 else 1


SLACK = command_group(
    "slack",
    "act as Slack does towards the local stack",
    [
        Command(
            "click",
            "send the signed request of a click on an approval's Approve or Reject button",
            _configure_click,
            _run_click,
        )
    ],
)
