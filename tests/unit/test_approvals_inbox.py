"""The approvers' inbox (``GET /approvals``) on moto: a signed-in person sees exactly the pending
approvals they may decide, newest first, filtered by tool; anyone else is sent to sign in; an
approval opened from it is decided without the link's code, with the session's CSRF token only."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import boto3
import pytest

from tests.aws import key_store, template_enforcement, template_tables
from tests.conftest import reset_process_state
from tests.unit.test_approvals_routes import event_for, set_cookies, stored
from toolfront import Tool
from toolfront.adapters.http import PAGE_HEADERS
from toolfront.approvals.approvers import SESSION_COOKIE, ApproverSignIn
from toolfront.approvals.desk import ApprovalDesk
from toolfront.approvals.pending import PendingApprovals
from toolfront.approvals.policy import ConfirmationReason
from toolfront.approvals.records import ApprovalStatus
from toolfront.approvals.store import ApprovalStore
from toolfront.approvals.workflow import Workflow
from toolfront.audit.records import decided_by
from toolfront.auth.actors import Actor, ActorKind
from toolfront_dev.iam.enforcement import enforce

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]
ANN = {"sub": "sub-ann", "email": "ann@example.com", "cognito:groups": ["approvers"]}


def tool(name: str, **approval: Any) -> Tool:
    return Tool.new(
        name=name,
        audience="admin",
        scope=f"{name.split('.', maxsplit=1)[0]}.items:write",
        permission="shop",
        handler=lambda data, ctx: {},
        approval=approval or None,
    )


DELETE = tool("shop.delete_item")
REFUND = tool("shop.refund_order", quorum=2)
PAYOUT = tool("shop.pay_out", approver_permission="finance")
ALICE = Actor(ActorKind.KEY, "abcdefghijkl", "alice")


@pytest.fixture
def machine(aws: None, monkeypatch: pytest.MonkeyPatch) -> str:
    from tests.aws import approval_state_machine

    arn = approval_state_machine()
    monkeypatch.setenv("TOOLFRONT_APPROVAL_STATE_MACHINE_ARN", arn)
    monkeypatch.setenv("TOOLFRONT_PUBLIC_URL", "https://api.example.com")
    reset_process_state()
    return str(arn)


@pytest.fixture
def signing_in(machine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """ApproverSignIn on (Cognito's app client and token endpoint stood in for); the group
    ``approvers`` holds the permission ``approver``."""
    monkeypatch.setenv("TOOLFRONT_APPROVER_SIGN_IN", "true")
    monkeypatch.setenv("TOOLFRONT_COGNITO_DOMAIN_URL", "https://login.example.com")
    monkeypatch.setenv("TOOLFRONT_COGNITO_USER_POOL_ID", "us-east-1_pool")
    monkeypatch.setattr(ApproverSignIn, "client_id", lambda self: "approvers-client")
    monkeypatch.setattr(ApproverSignIn, "_exchange", lambda self, code, verifier, uri: ANN)
    key_store().grant("approvers", ["approver"], datetime.now(UTC))
    tables = {logical_id: logical_id for logical_id in template_tables()}
    enforce(template_enforcement(tables, parameters={"ApproverSignIn": "true"}))  # IAM as then granted
    reset_process_state()


@pytest.fixture
def approvals(machine: str) -> Handler:
    from tests.conftest import load_family

    handler: Handler = load_family("approvals").lambda_handler
    return handler


def hold(machine: str, held: Tool, actor: Actor = ALICE, *, ago_s: int = 0, lifetime_s: int = 3600) -> str:
    """A pending approval of ``held`` asked by ``actor`` ``ago_s`` seconds ago: its id."""
    at = datetime.now(UTC) - timedelta(seconds=ago_s)
    desk = ApprovalDesk(
        ApprovalStore("ApprovalsTable", boto3.client("dynamodb")),
        Workflow(machine, boto3.client("stepfunctions")),
        lifetime_s,
        clock=lambda: at,
    )
    data = desk.hold(
        tool=held,
        arguments={"sku": "SKU-1"},
        actor=actor,
        reason=ConfirmationReason.DANGER,
        request_id="req-inbox",
        function="shop-fn",
        base_url="https://api.example.com",
        fields=held.secret_fields,
        client_token_hash=None,
    )
    return str(data["approval_id"])


def signed_in(approvals: Handler) -> str:
    """Sign in from the inbox (its redirect, the sign-in, the callback): the session's token."""
    first = approvals(event_for("GET /approvals"), None)
    assert first["statusCode"] == 302 and first["headers"]["location"] == "/approvals/sign-in?to=inbox"
    begun = approvals(event_for("GET /approvals/sign-in", query={"to": "inbox"}), None)
    assert begun["statusCode"] == 302, begun["body"]
    state = parse_qs(urlsplit(begun["headers"]["location"]).query)["state"][0]
    jar = [f"{name}={value}" for name, value in set_cookies(begun).items()]
    back = approvals(
        event_for("GET /approvals/callback", query={"code": "c0de", "state": state}, cookies=jar), None
    )
    assert back["statusCode"] == 302 and back["headers"]["location"] == "/approvals", back
    return set_cookies(back)[SESSION_COOKIE]


def inbox(approvals: Handler, session: str, query: dict[str, str] | None = None) -> dict[str, Any]:
    return approvals(event_for("GET /approvals", query=query, cookies=[f"{SESSION_COOKIE}={session}"]), None)


def rows(page: dict[str, Any]) -> list[str]:
    """The approval ids of the inbox's rows, in order."""
    assert page["statusCode"] == 200, page["body"]
    return re.findall(r'<section class="row" data-approval-id="([^"]+)"', page["body"])


def test_the_inbox_without_a_session_sends_to_the_sign_in_and_back(
    approvals: Handler, signing_in: None
) -> None:
    answer = approvals(event_for("GET /approvals", cookies=[f"{SESSION_COOKIE}=forged"]), None)
    assert answer["statusCode"] == 302 and answer["headers"]["location"] == "/approvals/sign-in?to=inbox"
    assert signed_in(approvals)  # the callback lands on /approvals


def test_the_inbox_shows_exactly_what_the_person_may_decide_newest_first(
    approvals: Handler, signing_in: None, machine: str
) -> None:
    older = hold(machine, DELETE, ago_s=600)
    newer = hold(machine, DELETE, ago_s=60)
    quorum = hold(machine, REFUND, ago_s=30)
    hold(machine, DELETE, Actor(ActorKind.COGNITO, "sub-ann", "ann"), ago_s=5)  # her own call
    hold(machine, DELETE, Actor(ActorKind.KEY, "teamkey00000", "approvers"), ago_s=5)  # her team's
    hold(machine, PAYOUT, ago_s=5)  # needs "finance", which she does not hold
    hold(machine, DELETE, ago_s=7200, lifetime_s=3600)  # expired, not yet closed by its workflow
    hold(machine, DELETE, Actor(ActorKind.CLIENT, "guest-token-hash"), ago_s=5)  # a guest's opt-in
    rejected = hold(machine, DELETE, ago_s=5)
    ApprovalStore("ApprovalsTable", boto3.client("dynamodb")).transition(
        rejected, ApprovalStatus.REJECTED, datetime.now(UTC), decided_by=decided_by("link", None)
    )
    page = inbox(approvals, signed_in(approvals))
    assert rows(page) == [quorum, newer, older]
    assert "3 approvals wait for you." in page["body"]
    assert page["headers"] | PAGE_HEADERS == page["headers"]  # the pages' one header set


def test_the_inbox_filters_by_tool_and_offers_the_tools_present(
    approvals: Handler, signing_in: None, machine: str
) -> None:
    delete = hold(machine, DELETE, ago_s=20)
    hold(machine, REFUND, ago_s=10)
    session = signed_in(approvals)
    page = inbox(approvals, session, {"tool": "shop.delete_item"})
    assert rows(page) == [delete]
    options = re.findall(r'<option value="([^"]*)"( selected)?>', page["body"])
    assert options == [("", ""), ("shop.delete_item", " selected"), ("shop.refund_order", "")]
    assert rows(inbox(approvals, session, {"tool": "shop.unknown"})) == []


def test_a_row_says_who_asked_why_when_and_the_votes_so_far(
    approvals: Handler, signing_in: None, machine: str
) -> None:
    quorum = hold(machine, REFUND, Actor(ActorKind.KEY, "abcdefghijkl", '<b onmouseover="x">al'))
    session = signed_in(approvals)
    body = inbox(approvals, session)["body"]
    assert "<b onmouseover" not in body and "&lt;b onmouseover=&quot;x&quot;&gt;al" in body  # escaped
    assert f'href="/approvals/{quorum}"' in body and "code=" not in body  # no code in the row's link
    assert "This tool always needs a person" in body and "just now" in body
    assert '<dd class="votes">0 of 2</dd>' in body
    csrf = ApproverSignIn.csrf_token(session, quorum)
    voted = decide(approvals, session, quorum, {"decision": "approve", "csrf": csrf})
    assert voted["statusCode"] == 200, voted["body"]
    assert '<dd class="votes">1 of 2; you approved it</dd>' in inbox(approvals, session)["body"]


def decide(approvals: Handler, session: str, approval_id: str, form: dict[str, str]) -> dict[str, Any]:
    body = urlencode(form).encode()
    jar = [f"{SESSION_COOKIE}={session}"]
    return approvals(
        event_for("POST /approvals/{id}", path={"id": approval_id}, body=body, cookies=jar), None
    )


def test_an_approval_opened_from_the_inbox_is_decided_without_the_links_code(
    approvals: Handler, signing_in: None, machine: str
) -> None:
    approval_id = hold(machine, DELETE)
    session = signed_in(approvals)
    jar = [f"{SESSION_COOKIE}={session}"]
    opened = approvals(event_for("GET /approvals/{id}", path={"id": approval_id}, cookies=jar), None)
    assert opened["statusCode"] == 200 and 'id="approve"' in opened["body"]
    token = re.search(r'name="csrf" value="([^"]+)"', opened["body"])
    assert token and token.group(1) == ApproverSignIn.csrf_token(session, approval_id)
    answer = decide(
        approvals, session, approval_id, {"code": "", "decision": "approve", "csrf": token.group(1)}
    )
    assert answer["statusCode"] == 200, answer["body"]
    assert stored(approval_id)["status"] == "approved"
    assert stored(approval_id)["decided_by"] == {"kind": "approver", "id": "sub-ann", "principal": "sub-ann"}
    assert rows(inbox(approvals, session)) == []  # gone from the inbox


@pytest.mark.parametrize("csrf", [None, "", "0" * 64], ids=["none", "empty", "another"])
def test_deciding_without_the_code_needs_the_sessions_csrf_token(
    approvals: Handler, signing_in: None, machine: str, csrf: str | None
) -> None:
    approval_id = hold(machine, DELETE)
    session = signed_in(approvals)
    form = {"decision": "approve"} | ({"csrf": csrf} if csrf is not None else {})
    answer = decide(approvals, session, approval_id, form)
    assert answer["statusCode"] == 403 and "not from your signed-in page" in html.unescape(answer["body"])
    assert stored(approval_id)["status"] == "pending"


def test_deciding_without_the_code_and_without_a_session_is_refused(
    approvals: Handler, signing_in: None, machine: str
) -> None:
    approval_id = hold(machine, DELETE)
    form = urlencode({"decision": "approve", "csrf": "0" * 64}).encode()
    answer = approvals(event_for("POST /approvals/{id}", path={"id": approval_id}, body=form), None)
    assert answer["statusCode"] == 403 and "sign in as an approver" in answer["body"]
    assert stored(approval_id)["status"] == "pending"


def test_ones_own_call_is_neither_opened_nor_decided_without_the_code(
    approvals: Handler, signing_in: None, machine: str
) -> None:
    own = hold(machine, DELETE, Actor(ActorKind.COGNITO, "sub-ann", "ann"))
    session = signed_in(approvals)
    jar = [f"{SESSION_COOKIE}={session}"]
    opened = approvals(event_for("GET /approvals/{id}", path={"id": own}, cookies=jar), None)
    assert opened["statusCode"] == 403 and "your own call" in html.unescape(opened["body"])
    csrf = ApproverSignIn.csrf_token(session, own)
    answer = decide(approvals, session, own, {"decision": "approve", "csrf": csrf})
    assert answer["statusCode"] == 403 and stored(own)["status"] == "pending"


def test_a_guests_approval_is_not_opened_by_a_session(
    approvals: Handler, signing_in: None, machine: str
) -> None:
    guests = hold(machine, DELETE, Actor(ActorKind.CLIENT, "guest-token-hash"))
    session = signed_in(approvals)
    jar = [f"{SESSION_COOKIE}={session}"]
    opened = approvals(event_for("GET /approvals/{id}", path={"id": guests}, cookies=jar), None)
    assert opened["statusCode"] == 403
    answer = decide(approvals, session, guests, {"decision": "approve", "csrf": "x"})
    assert answer["statusCode"] == 403 and stored(guests)["status"] == "pending"


def test_an_approval_opened_without_a_code_or_a_session_sends_to_the_sign_in_and_back(
    approvals: Handler, signing_in: None, machine: str
) -> None:
    approval_id = hold(machine, DELETE)
    answer = approvals(event_for("GET /approvals/{id}", path={"id": approval_id}), None)
    assert answer["statusCode"] == 302
    assert answer["headers"]["location"] == f"/approvals/sign-in?to={approval_id}"
    begun = approvals(event_for("GET /approvals/sign-in", query={"to": approval_id}), None)
    assert begun["statusCode"] == 302
    assert set_cookies(begun)["tf_approval_return"] == f"/approvals/{approval_id}"


@pytest.mark.parametrize("to", ["https://evil.example", "//evil.example", "/approvals/x", ""])
def test_a_sign_in_returns_only_to_the_inbox_or_an_approval(
    approvals: Handler, signing_in: None, to: str
) -> None:
    answer = approvals(event_for("GET /approvals/sign-in", query={"to": to}), None)
    assert answer["statusCode"] == 404 and answer["headers"]["content-type"].startswith("text/html")


def test_without_approver_sign_in_there_is_no_inbox(approvals: Handler, machine: str) -> None:
    answer = approvals(event_for("GET /approvals"), None)
    assert answer["statusCode"] == 404 and "ApproverSignIn is off" in answer["body"]
    assert answer["headers"] | PAGE_HEADERS == answer["headers"]


def test_the_index_holds_an_approval_only_while_it_waits_for_an_approver(machine: str) -> None:
    client = boto3.client("dynamodb")
    store, pending = ApprovalStore("ApprovalsTable", client), PendingApprovals("ApprovalsTable", client)
    quorum, cancelled = hold(machine, REFUND, ago_s=2), hold(machine, DELETE, ago_s=1)
    hold(machine, DELETE, Actor(ActorKind.ANONYMOUS, "203.0.113.9"))  # never listed
    assert [row.approval_id for row in pending.newest()[0]] == [cancelled, quorum]
    store.transition(cancelled, ApprovalStatus.CANCELLED, datetime.now(UTC))
    for person in ("p1", "p2"):  # the quorum's last vote approves it
        current = store.get(quorum)
        assert current is not None
        store.add_vote(current, decided_by("approver", person, person), datetime.now(UTC))
    assert pending.newest() == ([], False)


def test_the_index_is_read_newest_first_up_to_a_limit(machine: str) -> None:
    ids = [hold(machine, DELETE, ago_s=seconds) for seconds in (50, 40, 30, 20, 10)]
    found, more = PendingApprovals("ApprovalsTable", boto3.client("dynamodb")).newest(limit=3)
    assert [row.approval_id for row in found] == ids[::-1][:3] and more
    assert PendingApprovals("ApprovalsTable", boto3.client("dynamodb")).newest(limit=5)[1] is False


def test_calls_held_within_one_second_are_listed_newest_first(machine: str) -> None:
    ids = [hold(machine, DELETE, ago_s=5) for _ in range(4)]  # one created_at, to the second
    found, _ = PendingApprovals("ApprovalsTable", boto3.client("dynamodb")).newest()
    assert [row.approval_id for row in found] == ids[::-1]


def test_a_damaged_record_in_the_index_is_skipped_not_fatal(machine: str) -> None:
    listed_one = hold(machine, DELETE, ago_s=5)
    damaged = hold(machine, DELETE, ago_s=1)
    boto3.client("dynamodb").update_item(
        TableName="ApprovalsTable",
        Key={"approval_id": {"S": damaged}},
        UpdateExpression="SET requester = :broken",
        ExpressionAttributeValues={":broken": {"S": "{not json"}},
    )
    found, _ = PendingApprovals("ApprovalsTable", boto3.client("dynamodb")).newest()
    assert [row.approval_id for row in found] == [listed_one]
