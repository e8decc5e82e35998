"""The local stand-in for Slack's Web API (``toolfront dev --slack``): ``chat.postMessage``,
``chat.update``, ``chat.postEphemeral`` and ``users.info`` on a loopback port, every call recorded as
a JSON line in ``.toolfront/slack.jsonl`` beside dev.json.

The approvals function's ``slack_sdk`` is pointed at it through its ``base_url``
(``TOOLFRONT_SLACK_API_URL``). The bot token and the signing secret are generated for each run and
kept where a deployment keeps them, in (moto's) Secrets Manager, under
``toolfront-<stage>/slack/bot-token`` and ``.../signing-secret``: the function reads them through
boto3 as it does on AWS, ``toolfront slack click`` reads the signing secret there to sign a click,
and neither is ever printed or written elsewhere. A line: ``{"at", "method", "args", "ok", "ts" |
"error"}`` (``args`` as the function sent them, without the token).
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from werkzeug.serving import BaseWSGIServer, make_server
from werkzeug.wrappers import Request, Response

from toolfront_dev.aws import moto_client
from toolfront_dev.environment import EnvironmentPatch
from toolfront_dev.intrinsics import Intrinsics
from toolfront_dev.net import http_url
from toolfront_dev.server import silence_werkzeug
from toolfront_dev.stack import LocalStack
from toolfront_dev.template import Template

logger = logging.getLogger(__name__)

SLACK_LOG_NAME = "slack.jsonl"
LOCAL_TEAM = "T0LOCAL"
LOCAL_CHANNEL = "C0APPROVALS"
API_URL_VARIABLE = "TOOLFRONT_SLACK_API_URL"
SECRET_NAMES = {"SlackBotTokenSecretArn": "bot-token", "SlackSigningSecretArn": "signing-secret"}
METHODS = frozenset({"chat.postMessage", "chat.update", "chat.postEphemeral", "users.info"})


def secret_name(stack_name: str, parameter: str) -> str:
    """Where a run keeps a Slack secret in moto's Secrets Manager (``toolfront-local/slack/...``)."""
    return f"{stack_name}/slack/{SECRET_NAMES[parameter]}"


def read_slack_log(path: Path) -> list[dict[str, Any]]:
    """Every complete line of the stand-in's log (none when there is no log)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    lines = data[: data.rfind(b"\n") + 1].splitlines()
    return [entry for line in lines if line.strip() and isinstance(entry := json.loads(line), dict)]


def posted_message(entries: list[dict[str, Any]], approval_id: str) -> dict[str, Any] | None:
    """The ``chat.postMessage`` entry of an approval's message (its buttons carry the approval id)."""
    for entry in entries:
        if entry.get("method") == "chat.postMessage" and entry.get("ok") and _carries(entry, approval_id):
            return entry
    return None


def _carries(entry: dict[str, Any], approval_id: str) -> bool:
    blocks = entry.get("args", {}).get("blocks") or []
    if isinstance(blocks, str):
        blocks = json.loads(blocks)
    return any(
        element.get("value") == approval_id
        for block in blocks
        if block.get("type") == "actions"
        for element in block.get("elements", [])
    )


class LocalSlack:
    """The stand-in: started by the local stack once moto runs, stopped with it.

    Args:
        users: Slack user id -> the e-mail of their profile (what ``users.info`` answers).
        channel: the stack's ``SlackChannel`` when no ``--parameter`` names one.
        host: the loopback interface to serve on.
    """

    def __init__(
        self, users: Mapping[str, str] | None = None, channel: str = LOCAL_CHANNEL, host: str = "127.0.0.1"
    ) -> None:
        self.users = dict(users or {})
        self.channel = channel
        self._host = host
        self._token = ""
        self._server: BaseWSGIServer | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._messages: dict[tuple[str, str], dict[str, Any]] = {}
        self._sequence = 0
        self.log_path = Path(SLACK_LOG_NAME)

    @property
    def url(self) -> str:
        """The Web API's base URL, as ``slack_sdk``'s ``base_url`` takes it (``.../api/``)."""
        if self._server is None:
            raise RuntimeError("the Slack stand-in is not running")
        return http_url(self._host, int(self._server.server_port)) + "/api/"

    def start(
        self,
        moto_endpoint: str,
        environment: EnvironmentPatch,
        folder: Path,
        stack_name: str,
        given: Mapping[str, str],
    ) -> dict[str, str]:
        """Make this run's secrets in moto, serve, and point the functions here; answer the template
        parameters that turn Slack on (those ``given`` as ``--parameter`` stay as given)."""
        self._token = "xoxb-local-" + secrets.token_hex(16)
        values = {"SlackBotTokenSecretArn": self._token, "SlackSigningSecretArn": secrets.token_hex(32)}
        manager = moto_client(moto_endpoint, "secretsmanager")
        refs = {"SlackChannel": self.channel}
        for parameter, value in values.items():
            created = manager.create_secret(Name=secret_name(stack_name, parameter), SecretString=value)
            refs[parameter] = str(created["ARN"])
        self.log_path = folder / SLACK_LOG_NAME
        folder.mkdir(parents=True, exist_ok=True)
        self.log_path.write_bytes(b"")  # this run's calls only
        silence_werkzeug()
        self._server = make_server(self._host, 0, self, threaded=True)
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="toolfront-slack", daemon=True
        )
        self._thread.start()
        environment.set(API_URL_VARIABLE, self.url)
        return {name: value for name, value in refs.items() if name not in given}

    def stop(self) -> None:
        """Stop serving; safe to call twice."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        request = Request(environ)
        method = request.path.removeprefix("/api/")
        args = _arguments(request)
        authorization = request.headers.get("Authorization")
        if authorization != f"Bearer {self._token}":
            answer: dict[str, Any] = {"ok": False, "error": "invalid_auth" if authorization else "not_authed"}
        elif method not in METHODS:
            answer = {"ok": False, "error": "unknown_method"}
        else:
            answer = self._answer(method, args)
        self._record(method, args, answer)
        response = Response(json.dumps(answer), status=200, content_type="application/json; charset=utf-8")
        return response(environ, start_response)

    def _answer(self, method: str, args: dict[str, Any]) -> dict[str, Any]:
        channel = str(args.get("channel") or "")
        if method == "users.info":
            user = str(args.get("user") or "")
            if user not in self.users:
                return {"ok": False, "error": "user_not_found"}
            profile = {"email": self.users[user], "real_name": user}
            return {"ok": True, "user": {"id": user, "team_id": LOCAL_TEAM, "name": user, "profile": profile}}
        if not channel:
            return {"ok": False, "error": "channel_not_found"}
        if method == "chat.postEphemeral":
            if not args.get("user"):
                return {"ok": False, "error": "user_not_in_channel"}
            return {"ok": True, "message_ts": self._next_ts()}
        if method == "chat.update":
            key = (channel, str(args.get("ts") or ""))
            with self._lock:
                if key not in self._messages:
                    return {"ok": False, "error": "message_not_found"}
                self._messages[key] |= {"text": args.get("text"), "blocks": args.get("blocks")}
            return {"ok": True, "channel": channel, "ts": key[1], "text": args.get("text")}
        if not (args.get("text") or args.get("blocks")):
            return {"ok": False, "error": "no_text"}
        ts = self._next_ts()
        message = {"type": "message", "text": args.get("text"), "blocks": args.get("blocks"), "ts": ts}
        with self._lock:
            self._messages[(channel, ts)] = message | {"bot_id": "B0LOCAL"}
        return {"ok": True, "channel": channel, "ts": ts, "message": message}

    def _next_ts(self) -> str:
        with self._lock:
            self._sequence += 1
            return f"{int(time.time())}.{self._sequence:06d}"

    def _record(self, method: str, args: dict[str, Any], answer: dict[str, Any]) -> None:
        line: dict[str, Any] = {
            "at": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "method": method,
            "args": args,
            "ok": bool(answer.get("ok")),
        }
        line |= {"ts": answer["ts"]} if "ts" in answer else {}
        line |= {"error": answer["error"]} if "error" in answer else {}
        text = json.dumps(line, ensure_ascii=False) + "\n"
        with self._lock, self.log_path.open("a", encoding="utf-8") as log:
            log.write(text)
        logger.info("slack stand-in: %s %s", method, "ok" if line["ok"] else line.get("error"))


def _arguments(request: Request) -> dict[str, Any]:
    """The call's arguments, however ``slack_sdk`` sent them: JSON, a form, or the query (GET)."""
    found: dict[str, Any] = dict(request.args)
    if request.mimetype == "application/json":
        body = request.get_json(silent=True)
        found |= body if isinstance(body, dict) else {}
    else:
        found |= dict(request.form)
    found.pop("token", None)
    return found


class SlackLocalStack(LocalStack):
    """The local stack with Slack on (``toolfront dev --slack``): once moto runs, the stand-in makes
    this run's secrets there and starts serving, and the parameters that turn Slack on
    (``SlackChannel`` and the two secrets' ARNs) reach the functions' environment and their IAM
    policies as a deployment's would; a ``--parameter`` naming one of them stays as given."""

    def __init__(self, *args: Any, slack: LocalSlack, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.slack = slack

    def _provision(
        self, endpoint: str, template: Template, tables: Mapping[str, str], intrinsics: Intrinsics
    ) -> dict[str, str]:
        ids = super()._provision(endpoint, template, tables, intrinsics)
        folder = self.dev_json_path.parent
        return ids | self.slack.start(endpoint, self._environment, folder, self.stack_name, self._parameters)

    def stop(self) -> None:
        try:
            super().stop()
        finally:
            self.slack.stop()
