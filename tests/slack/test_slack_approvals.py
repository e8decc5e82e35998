"""Approvals in Slack on the local stack (``toolfront dev --slack``): the Web API's stand-in records
what the approvals function tells Slack, and clicks arrive as Slack sends them (signed
``block_actions`` forms). A held call posts one message without the link's code; a linked
approver's Approve runs the call and updates the message; unsigned, wrongly signed and stale
requests are 401 and a replayed one decides once; the requester and a person without the
permission are told so privately; a quorum counts a person once across Slack and the page; one
rejection after an approval rejects."""

from __future__ import annotations

import http.client
import json
import time
import urllib.parse
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import free_port
from tests.http.conftest import Api, Reply, wait_for
from tests.slack.pages import sign_in_and_decide
from toolfront.audit.trail import read_trail
from toolfront.auth.keystore import DynamoDBKeyStore, issue_key
from toolfront_dev.aws import moto_client
from toolfront_dev.cli import main
from toolfront_dev.commands_slack import action_payload, local_signing_secret, signed_request
from toolfront_dev.outbox import outbox_links
from toolfront_dev.seeds import parse_seed
from toolfront_dev.slack_local import LOCAL_TEAM, LocalSlack, SlackLocalStack, posted_message, read_slack_log

PROJECT = Path(__file__).resolve().parents[2]
PASSWORD = "Correct-Horse-42"
ANN = "ann@example.com"  # a Cognito approver; in Slack U0ANN, found by her profile's e-mail
SEED = {
    "principals": [{"id": "approvers", "permissions": ["approver"]}],
    "users": [{"username": ANN, "password": PASSWORD, "groups": ["approvers"], "scopes": []}],
}
BOSS, OTHER, READER, REQUESTER, STRANGER = "U0BOSS", "U0OTHER", "U0READER", "U0REQ", "U0NOBODY"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("slack-project")  # its .toolfront/ is this stack's, never the repo's


@pytest.fixture(scope="module")
def stack(project: Path) -> Iterator[SlackLocalStack]:
    with SlackLocalStack(
        PROJECT,
        port=free_port(),
        dev_json_path=project / ".toolfront" / "dev.json",
        parameters={"ApproverSignIn": "true"},
        seed=parse_seed(SEED),
        slack=LocalSlack({"U0ANN": ANN}),
    ) as running:
        yield running


@pytest.fixture(scope="module")
def store(stack: SlackLocalStack) -> DynamoDBKeyStore:
    client = moto_client(stack.moto_endpoint, "dynamodb")
    return DynamoDBKeyStore(stack.table_names["KeysTable"], stack.table_names["PrincipalsTable"], client)


@pytest.fixture(scope="module")
def linked(stack: SlackLocalStack, store: DynamoDBKeyStore, project: Path) -> dict[str, str]:
    """Slack users linked to principals with the CLI: two approvers, a reader, the requester."""
    now = datetime.now(UTC)
    store.grant("boss", ["approver"], now)
    store.grant("other", ["approver"], now)
    store.grant("reader", ["catalogue"], now)
    store.grant("requester", ["catalogue", "approver"], now)  # may approve, but never their own call
    links = {BOSS: "boss", OTHER: "other", READER: "reader", REQUESTER: "requester"}
    for user, principal in links.items():
        local = ["--local", "--project", str(project)]
        assert main(["approvers", "link-slack", *local, "--slack-user", user, "--principal", principal]) == 0
    return links


@pytest.fixture
def key(store: DynamoDBKeyStore, linked: dict[str, str]) -> str:
    return issue_key(store, owner="requester", scopes=["catalogue.*"])[0]


def hold(stack: SlackLocalStack, key: str, *, quorum: int = 1) -> tuple[str, str]:
    """A held delete of a new product: (approval id, sku), once its Slack message is out."""
    api = Api(stack.api_url)
    sku = f"S-{uuid.uuid4().hex[:8]}"
    product = {"sku": sku, "name": "Mug", "price_cents": 100, "currency": "EUR"}
    assert api.call("catalogue.create_product", product, key=key).status == 200
    held = api.call("catalogue.delete_product", {"sku": sku}, key=key)
    assert held.status == 202, held.body
    approval_id: str = held.json()["data"]["approval_id"]
    wait_for(lambda: message(stack, approval_id))
    if quorum > 1:  # the shipped catalogue has no quorum tool: its copy of the policy says so
        policy = {
            "quorum": quorum,
            "approver_permission": "approver",
            "escalate_after_s": None,
            "channels": [],
        }
        moto_client(stack.moto_endpoint, "dynamodb").update_item(
            TableName=stack.table_names["ApprovalsTable"],
            Key={"approval_id": {"S": approval_id}},
            UpdateExpression="SET policy = :p",
            ExpressionAttributeValues={":p": {"S": json.dumps(policy)}},
        )
    return approval_id, sku


def message(stack: SlackLocalStack, approval_id: str) -> dict[str, Any] | None:
    return posted_message(read_slack_log(stack.slack.log_path), approval_id)


def calls_since(stack: SlackLocalStack, count: int) -> list[dict[str, Any]]:
    return read_slack_log(stack.slack.log_path)[count:]


def click(
    stack: SlackLocalStack,
    approval_id: str,
    user: str,
    decision: str = "approve",
    *,
    secret: str | None = None,
    timestamp: int | None = None,
    body_headers: tuple[bytes, dict[str, str]] | None = None,
) -> Reply:
    """Slack's request for ``user`` clicking a button of the approval's message."""
    if body_headers is None:
        found = message(stack, approval_id)
        assert found is not None
        payload = action_payload(found, approval_id, user, LOCAL_TEAM, decision)
        signing = secret or local_signing_secret(stack.moto_endpoint, stack.stage)
        body_headers = signed_request(payload, signing, timestamp=timestamp)
    body, headers = body_headers
    return Api(stack.api_url).request("POST", "/approvals/slack/actions", body=body, headers=headers)


def approval(stack: SlackLocalStack, approval_id: str, key: str) -> dict[str, Any]:
    data: dict[str, Any] = (
        Api(stack.api_url).request("GET", f"/v1/approvals/{approval_id}", key=key).json()["data"]
    )
    return data


def settled(stack: SlackLocalStack, approval_id: str, key: str) -> dict[str, Any]:
    done = ("succeeded", "failed", "rejected", "expired", "cancelled")
    found: dict[str, Any] = wait_for(lambda: (a := approval(stack, approval_id, key))["status"] in done and a)
    return found


def product_exists(stack: SlackLocalStack, key: str, sku: str) -> bool:
    return Api(stack.api_url).call("catalogue.get_product", {"sku": sku}, key=key).status == 200


def refusals(stack: SlackLocalStack, approval_id: str) -> list[dict[str, Any]]:
    client = moto_client(stack.moto_endpoint, "dynamodb")
    records = read_trail(client, stack.table_names["AuditTable"]).newest_first()
    return [
        r.content
        for r in records
        if r.content
        and r.content["event"] == "approval.slack_refused"
        and r.content["approval_id"] == approval_id
    ]


def test_a_held_call_posts_one_message_without_the_links_code(stack: SlackLocalStack, key: str) -> None:
    approval_id, sku = hold(stack, key)
    posted = [e for e in read_slack_log(stack.slack.log_path) if e["method"] == "chat.postMessage"]
    mine = [e for e in posted if posted_message([e], approval_id)]
    assert len(mine) == 1 and mine[0]["args"]["channel"] == stack.slack.channel
    text = json.dumps(mine[0]["args"])
    for expected in ("catalogue.delete_product", "Delete a product", "requester", "danger", sku, "Approve"):
        assert expected in text, expected
    link = wait_for(lambda: outbox_links(stack.outbox_path).get(approval_id))
    code = urllib.parse.parse_qs(urllib.parse.urlsplit(link).query)["code"][0]
    assert code not in stack.slack.log_path.read_text(encoding="utf-8")  # the single-use code never
    assert f"{stack.api_url}/approvals|" in text  # the inbox, where approvers sign in
    item = moto_client(stack.moto_endpoint, "dynamodb").get_item(
        TableName=stack.table_names["ApprovalsTable"], Key={"approval_id": {"S": approval_id}}
    )["Item"]
    assert json.loads(item["slack_message"]["S"]) == {"channel": stack.slack.channel, "ts": mine[0]["ts"]}


def test_a_linked_approvers_approve_runs_the_call_and_updates_the_message(
    stack: SlackLocalStack, key: str
) -> None:
    approval_id, sku = hold(stack, key)
    before = len(read_slack_log(stack.slack.log_path))
    reply = click(stack, approval_id, BOSS)
    assert (reply.status, reply.body) == (200, b"")
    final = settled(stack, approval_id, key)
    assert final["status"] == "succeeded"
    assert final["decided_by"] == {"kind": "slack", "id": f"{LOCAL_TEAM}:{BOSS}", "principal": "boss"}
    assert not product_exists(stack, key, sku)
    [update] = calls_since(stack, before)
    ts = message(stack, approval_id)["ts"]  # type: ignore[index]
    assert (update["method"], update["args"]["ts"]) == ("chat.update", ts)
    assert f"<@{BOSS}>" in update["args"]["text"] and "approved" in update["args"]["text"]
    assert not any(b["type"] == "actions" for b in update["args"]["blocks"])  # decided: no buttons


def test_unsigned_wrongly_signed_and_stale_requests_are_401_and_change_nothing(
    stack: SlackLocalStack, key: str
) -> None:
    approval_id, sku = hold(stack, key)
    before = len(read_slack_log(stack.slack.log_path))
    found = message(stack, approval_id)
    assert found is not None
    body, headers = signed_request(action_payload(found, approval_id, BOSS, LOCAL_TEAM, "approve"), "x" * 64)
    unsigned = {k: v for k, v in headers.items() if not k.startswith("X-Slack")}
    assert click(stack, approval_id, BOSS, body_headers=(body, unsigned)).status == 401
    assert click(stack, approval_id, BOSS, body_headers=(body, headers)).status == 401  # another secret
    assert click(stack, approval_id, BOSS, timestamp=int(time.time()) - 360).status == 401  # 6 minutes old
    assert click(stack, approval_id, BOSS, timestamp=int(time.time()) + 360).status == 401
    good_body, good_headers = signed_request(
        action_payload(found, approval_id, BOSS, LOCAL_TEAM, "approve"),
        local_signing_secret(stack.moto_endpoint, stack.stage),
    )
    tampered = good_body.replace(b"approve", b"reject")  # the signature covers the body
    assert click(stack, approval_id, BOSS, body_headers=(tampered, good_headers)).status == 401
    assert calls_since(stack, before) == []
    assert approval(stack, approval_id, key)["status"] == "pending" and product_exists(stack, key, sku)


def test_a_replayed_or_retried_click_decides_once(stack: SlackLocalStack, key: str) -> None:
    approval_id, _ = hold(stack, key)
    found = message(stack, approval_id)
    assert found is not None
    secret = local_signing_secret(stack.moto_endpoint, stack.stage)
    body, headers = signed_request(action_payload(found, approval_id, BOSS, LOCAL_TEAM, "reject"), secret)
    before = len(read_slack_log(stack.slack.log_path))
    first = click(stack, approval_id, BOSS, body_headers=(body, headers))
    retried = click(stack, approval_id, BOSS, body_headers=(body, {**headers, "X-Slack-Retry-Num": "1"}))
    replayed = click(stack, approval_id, BOSS, body_headers=(body, headers))
    assert [r.status for r in (first, retried, replayed)] == [200, 200, 200]
    assert settled(stack, approval_id, key)["status"] == "rejected"
    assert [c["method"] for c in calls_since(stack, before)] == ["chat.update"]  # one decision, said once
    client = moto_client(stack.moto_endpoint, "dynamodb")
    decided = [
        r.content
        for r in read_trail(client, stack.table_names["AuditTable"]).records
        if r.content and r.content["approval_id"] == approval_id and r.content["event"] == "approval.decided"
    ]
    assert len(decided) == 1


@pytest.mark.parametrize(
    ("user", "code", "says"),
    [
        (REQUESTER, "own_call", "your own call"),
        (READER, "approver_required", "'approver' permission"),
        (STRANGER, "slack_user_not_linked", "link-slack --slack-user U0NOBODY"),
    ],
)
def test_a_click_that_may_not_decide_is_refused_privately_and_changes_nothing(
    stack: SlackLocalStack, key: str, user: str, code: str, says: str
) -> None:
    approval_id, sku = hold(stack, key)
    before = len(read_slack_log(stack.slack.log_path))
    assert click(stack, approval_id, user).status == 200
    told = [c for c in calls_since(stack, before) if c["method"] != "users.info"]
    assert [(c["method"], c["args"]["user"]) for c in told] == [("chat.postEphemeral", user)]
    assert says in told[0]["args"]["text"]
    assert approval(stack, approval_id, key)["status"] == "pending" and product_exists(stack, key, sku)
    [record] = refusals(stack, approval_id)
    assert record["error_code"] == code and record["actor"]["id"] == f"{LOCAL_TEAM}:{user}"


def test_a_click_on_a_decided_approval_is_refused_privately(stack: SlackLocalStack, key: str) -> None:
    approval_id, _ = hold(stack, key)
    assert click(stack, approval_id, BOSS, "reject").status == 200
    settled(stack, approval_id, key)
    before = len(read_slack_log(stack.slack.log_path))
    assert click(stack, approval_id, OTHER).status == 200
    [told] = calls_since(stack, before)
    assert told["method"] == "chat.postEphemeral" and "already rejected" in told["args"]["text"]
    assert settled(stack, approval_id, key)["status"] == "rejected"


def test_a_quorum_counts_a_person_once_across_slack_and_the_page(stack: SlackLocalStack, key: str) -> None:
    approval_id, sku = hold(stack, key, quorum=2)
    assert click(stack, approval_id, "U0ANN").status == 200  # Ann, by her Slack profile's e-mail
    pending = approval(stack, approval_id, key)
    assert pending["status"] == "pending" and len(pending["approved_by"]) == 1
    assert pending["approved_by"][0]["kind"] == "slack" and len(pending["approved_by"][0]["principal"]) == 36
    link = wait_for(lambda: outbox_links(stack.outbox_path).get(approval_id))
    again = sign_in_and_decide(stack.api_url, link, ANN, PASSWORD, "approve")  # the same person, signed in
    assert again.status == 409 and b"already approved" in again.body
    assert approval(stack, approval_id, key)["status"] == "pending" and product_exists(stack, key, sku)
    assert click(stack, approval_id, BOSS).status == 200  # a second person: the quorum is met
    final = settled(stack, approval_id, key)
    assert final["status"] == "succeeded" and [v["principal"] for v in final["approved_by"]][1] == "boss"
    assert not product_exists(stack, key, sku)


def test_a_rejection_after_one_approval_rejects(stack: SlackLocalStack, key: str) -> None:
    approval_id, sku = hold(stack, key, quorum=2)
    assert click(stack, approval_id, BOSS).status == 200
    before = len(read_slack_log(stack.slack.log_path))
    assert click(stack, approval_id, OTHER, "reject").status == 200
    final = settled(stack, approval_id, key)
    assert final["status"] == "rejected" and final["decided_by"]["principal"] == "other"
    assert product_exists(stack, key, sku)
    [update] = calls_since(stack, before)
    assert "rejected" in update["args"]["text"] and f"<@{OTHER}>" in update["args"]["text"]


def test_the_slack_route_answers_4xx_to_what_slack_never_sends(stack: SlackLocalStack) -> None:
    api = Api(stack.api_url)
    assert api.request("GET", "/approvals/slack/actions").status == 405
    connection = http.client.HTTPConnection(
        "127.0.0.1", urllib.parse.urlsplit(stack.api_url).port, timeout=10
    )
    connection.request("POST", "/approvals/slack/actions", body=b"payload=%7B", headers={})
    assert connection.getresponse().status == 401
    connection.close()


def test_a_second_approval_by_the_same_person_is_told_and_a_retry_of_it_is_silent(
    stack: SlackLocalStack, key: str
) -> None:
    approval_id, _ = hold(stack, key, quorum=2)
    found = message(stack, approval_id)
    assert found is not None
    secret = local_signing_secret(stack.moto_endpoint, stack.stage)
    body, headers = signed_request(action_payload(found, approval_id, BOSS, LOCAL_TEAM, "approve"), secret)
    assert click(stack, approval_id, BOSS, body_headers=(body, headers)).status == 200
    before = len(read_slack_log(stack.slack.log_path))
    retried = (body, {**headers, "X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"})
    assert click(stack, approval_id, BOSS, body_headers=retried).status == 200
    assert calls_since(stack, before) == []  # Slack's retry of the vote that counted: nothing more
    assert click(stack, approval_id, BOSS).status == 200  # the person clicks again
    [told] = calls_since(stack, before)
    assert told["method"] == "chat.postEphemeral" and "already approved" in told["args"]["text"]
    data = approval(stack, approval_id, key)
    assert data["status"] == "pending" and len(data["approved_by"]) == 1


def test_an_unlinked_slack_user_is_nobody_again(stack: SlackLocalStack, key: str, project: Path) -> None:
    local = ["--local", "--project", str(project)]
    assert main(["approvers", "link-slack", *local, "--slack-user", "U0TEMP", "--principal", "boss"]) == 0
    assert main(["approvers", "unlink-slack", *local, "--slack-user", "U0TEMP"]) == 0
    approval_id, _ = hold(stack, key)
    assert click(stack, approval_id, "U0TEMP").status == 200
    [record] = refusals(stack, approval_id)
    assert record["error_code"] == "slack_user_not_linked"
    assert approval(stack, approval_id, key)["status"] == "pending"
