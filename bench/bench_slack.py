"""Deciding in Slack, on the local stack (moto, real state machine, HTTP, the Slack stand-in):

- slack_click: a linked approver's signed Approve (``POST /approvals/slack/actions``) -> the handler
  starting, beside the same path from the approval page's POST (``page_click``), in one run. The
  Slack path adds the signature check, the link's lookup, the permission check and ``chat.update``
  (to the loopback stand-in); the ratio says what those cost against the page's code check.
"""

from __future__ import annotations

import sys
import tempfile
import time
import urllib.parse
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench_approvals import _free_port, _row, _wait
from harness import Section, canary

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.http.conftest import Api  # noqa: E402
from toolfront.auth.keystore import DynamoDBKeyStore, issue_key  # noqa: E402
from toolfront_dev.aws import moto_client  # noqa: E402
from toolfront_dev.commands_slack import action_payload, local_signing_secret, signed_request  # noqa: E402
from toolfront_dev.outbox import outbox_links  # noqa: E402
from toolfront_dev.slack_local import LOCAL_TEAM, LocalSlack, SlackLocalStack, posted_message, read_slack_log  # noqa: E402

APPROVER = "U0BENCH"
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def run(quick: bool = False) -> Section:
    n = 5 if quick else 25
    section = Section("approvals in Slack (local stack, Slack stand-in)", canary_before=canary())
    started_at: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        dev_json = Path(tmp) / ".toolfront" / "dev.json"
        with SlackLocalStack(ROOT, port=_free_port(), dev_json_path=dev_json, slack=LocalSlack()) as stack:
            client = moto_client(stack.moto_endpoint, "dynamodb")
            store = DynamoDBKeyStore(
                stack.table_names["KeysTable"], stack.table_names["PrincipalsTable"], client
            )
            store.grant("bench", ["catalogue"], datetime.now(UTC))
            store.grant("bench-approver", ["approver"], datetime.now(UTC))
            client.put_item(  # what `toolfront approvers link-slack` writes
                TableName=stack.table_names["ApprovalsTable"],
                Item={"approval_id": {"S": f"slack#*:{APPROVER}"}, "principal": {"S": "bench-approver"}},
            )
            key = issue_key(store, owner="bench", scopes=["catalogue.*"], rate_limit=100_000)[0]
            secret = local_signing_secret(stack.moto_endpoint, stack.stage)
            api = Api(stack.api_url)
            tool = stack.handler("CatalogueFunction").registry["catalogue.delete_product"]
            original = tool.handler

            def timed_delete(data: dict[str, Any], ctx: Any) -> dict[str, Any]:
                started_at.append(time.perf_counter())
                result: dict[str, Any] = original(data, ctx)
                return result

            object.__setattr__(
                tool, "handler", timed_delete
            )  # a frozen Tool: instrumented for the bench only
            slack, page = [], []
            for _ in range(n):  # interleaved: both paths see the same machine
                for samples, decide in ((slack, _slack_click), (page, _page_click)):
                    approval_id = _hold(api, key)
                    before = len(started_at)
                    sent = decide(stack, api, approval_id, secret)
                    _wait(lambda before=before: len(started_at) > before)
                    samples.append((started_at[-1] - sent) * 1000)
            object.__setattr__(tool, "handler", original)
    section.rows = [
        _row("page_click", "approver page POST -> handler start", page),
        _row("slack_click", "Slack Approve (signed) -> handler start", slack, baseline="page_click"),
    ]
    slack_row, page_row = section.rows[1], section.rows[0]
    slack_row.ratio = slack_row.median / page_row.median
    section.canary_after = canary()
    section.extra["summary"] = [
        f"slack: a click runs the held call {slack_row.median:.1f} ms after Slack sends it "
        f"(median, n={n}); the page's POST {page_row.median:.1f} ms"
    ]
    return section


def _hold(api: Api, key: str) -> str:
    sku = f"S-{uuid.uuid4().hex[:10]}"
    product = {"sku": sku, "name": "Mug", "price_cents": 1, "currency": "EUR"}
    assert api.call("catalogue.create_product", product, key=key).status == 200
    approval_id: str = api.call("catalogue.delete_product", {"sku": sku}, key=key).json()["data"][
        "approval_id"
    ]
    return approval_id


def _slack_click(stack: SlackLocalStack, api: Api, approval_id: str, secret: str) -> float:
    message = _wait(lambda: posted_message(read_slack_log(stack.slack.log_path), approval_id))
    body, headers = signed_request(
        action_payload(message, approval_id, APPROVER, LOCAL_TEAM, "approve"), secret
    )
    sent = time.perf_counter()
    assert api.request("POST", "/approvals/slack/actions", body=body, headers=headers).status == 200
    return sent


def _page_click(stack: SlackLocalStack, api: Api, approval_id: str, secret: str) -> float:
    link = _wait(lambda: outbox_links(stack.outbox_path).get(approval_id))
    parts = urllib.parse.urlsplit(link)
    code = urllib.parse.parse_qs(parts.query)["code"][0]
    body = urllib.parse.urlencode({"code": code, "decision": "approve"}).encode()
    sent = time.perf_counter()
    assert api.request("POST", parts.path, body=body, headers=FORM).status == 200
    return sent


if __name__ == "__main__":
    for row in run(quick="--quick" in sys.argv).rows:
        print(f"{row.label}: median {row.median:.1f} ms (min {row.min:.1f}, max {row.p99:.1f})")
