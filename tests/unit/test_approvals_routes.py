"""The approvals function's HTTP routes on moto: a form that is not UTF-8 is a 400 page, a route
without an approval id never reads an empty key, the sign-in's state is bound to the browser that
started it (login CSRF), and ``/approvals/sign-out`` ends the session."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import boto3
import pytest

from tests.aws import approval_state_machine
from tests.conftest import load_family, reset_process_state
from tests.unit.test_openapi import approval_validator
from toolfront import Tool
from toolfront.adapters.openapi.document import openapi_document
from toolfront.approvals.approvers import SESSION_COOKIE, SIGN_IN_COOKIE, ApproverSignIn
from toolfront.approvals.desk import ApprovalDesk
from toolfront.approvals.policy import ConfirmationReason
from toolfront.approvals.records import hash_code
from toolfront.approvals.store import ApprovalStore
from toolfront.approvals.workflow import Workflow
from toolfront.auth.actors import Actor, ActorKind
from toolfront.tools.system import all_tools

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]
CODE = "the-code-of-the-link-" + "c" * 22
TOOL = Tool.new(
    name="shop.delete_item",
    audience="admin",
    scope="shop.items:write",
    permission="shop",
    handler=lambda data, ctx: {},
    input_schema={"type": "object", "properties": {"sku": {"type": "string"}}},
)


@pytest.fixture
def machine(aws: None, monkeypatch: pytest.MonkeyPatch) -> str:
    arn = approval_state_machine()
    monkeypatch.setenv("TOOLFRONT_APPROVAL_STATE_MACHINE_ARN", arn)
    monkeypatch.setenv("TOOLFRONT_PUBLIC_URL", "https://api.example.com")
    reset_process_state()
    return str(arn)


@pytest.fixture
def held(machine: str) -> str:
    """A parked approval of a key's call, its link's code ``CODE``."""
    client = boto3.client("dynamodb")
    store = ApprovalStore("ApprovalsTable", client)
    data = ApprovalDesk(store, Workflow(machine, boto3.client("stepfunctions")), 3600).hold(
        tool=TOOL,
        arguments={"sku": "SKU-1"},
        actor=Actor(ActorKind.KEY, "abcdefghijkl", "alice"),
        reason=ConfirmationReason.REQUIRES_APPROVAL,
        request_id="req-1",
        function="shop-fn",
        base_url="https://api.example.com",
        fields=TOOL.secret_fields,
        client_token_hash=None,
        secrets=(),
    )
    approval_id = str(data["approval_id"])
    client.update_item(
        TableName="ApprovalsTable",
        Key={"approval_id": {"S": approval_id}},
        UpdateExpression="SET code_hash = :c",
        ExpressionAttributeValues={":c": {"S": hash_code(CODE)}},
    )
    return approval_id


@pytest.fixture
def signing_in(machine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """ApproverSignIn on; Cognito's app client and token endpoint stood in for (no pool in moto)."""
    monkeypatch.setenv("TOOLFRONT_APPROVER_SIGN_IN", "true")
    monkeypatch.setenv("TOOLFRONT_COGNITO_DOMAIN_URL", "https://login.example.com")
    monkeypatch.setenv("TOOLFRONT_COGNITO_USER_POOL_ID", "us-east-1_pool")
    monkeypatch.setattr(ApproverSignIn, "client_id", lambda self: "approvers-client")
    claims = {"sub": "sub-mallory", "email": "mallory@example.com", "cognito:groups": ["approvers"]}
    monkeypatch.setattr(ApproverSignIn, "_exchange", lambda self, code, verifier, uri: claims)
    reset_process_state()


@pytest.fixture
def approvals(machine: str) -> Handler:
    handler: Handler = load_family("approvals").lambda_handler
    return handler


def event_for(
    route: str,
    *,
    path: dict[str, str] | None = None,
    query: dict[str, str] | None = None,
    cookies: list[str] | None = None,
    body: bytes | None = None,
    content_type: str = "application/x-www-form-urlencoded",
) -> dict[str, Any]:
    """A payload v2 event for one of the approvals function's routes."""
    method, raw_path = route.split(" ", 1)
    for name, value in (path or {}).items():
        raw_path = raw_path.replace("{" + name + "}", value)
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": route,
        "rawPath": raw_path,
        "headers": {"host": "api.example.com", "content-type": content_type},
        "requestContext": {
            "requestId": "req-approvals",
            "http": {"method": method, "path": raw_path, "sourceIp": "203.0.113.9"},
        },
        "isBase64Encoded": body is not None,
    }
    if path is not None:
        event["pathParameters"] = path
    if query is not None:
        event["queryStringParameters"] = query
    if cookies is not None:
        event["cookies"] = cookies
    if body is not None:
        event["body"] = base64.b64encode(body).decode()
    return event


def set_cookies(response: dict[str, Any]) -> dict[str, str]:
    """The cookies a response sets, by name (value, attributes dropped)."""
    found = {}
    for cookie in response.get("cookies") or []:
        name, _, rest = cookie.partition("=")
        found[name] = rest.split(";", 1)[0]
    return found


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-32"])
def test_approval_form_in_utf16_or_utf32_with_a_lone_surrogate_is_a_4xx_page(
    approvals: Handler, held: str, encoding: str
) -> None:
    decision = "code=\ud800&decision=approve".encode(encoding, "surrogatepass")
    for body, content_type in (
        (decision, "application/x-www-form-urlencoded"),
        (decision, "application/json"),
    ):
        event = event_for("POST /approvals/{id}", path={"id": held}, body=body, content_type=content_type)
        response = approvals(event, None)
        assert 400 <= response["statusCode"] < 500, response["body"]  # garbled fields; not a form
        assert response["headers"]["content-type"].startswith("text/html")


def test_a_repeated_field_of_the_approval_form_is_a_400_page(approvals: Handler, held: str) -> None:
    body = f"code={CODE}&decision=reject&decision=approve".encode()
    event = event_for(
        "POST /approvals/{id}", path={"id": held}, body=body, content_type="application/x-www-form-urlencoded"
    )
    response = approvals(event, None)
    assert response["statusCode"] == 400 and "repeated" in response["body"]
    assert response["headers"]["content-type"].startswith("text/html")


@pytest.mark.parametrize("sign_in", [False, True], ids=["sign-in off", "sign-in on"])
def test_sign_in_without_an_approval_is_a_404_page(
    approvals: Handler, sign_in: bool, request: pytest.FixtureRequest
) -> None:
    if sign_in:
        request.getfixturevalue("signing_in")
    for query in (None, {}, {"code": "x"}, {"approval": "", "code": "x"}):
        response = approvals(event_for("GET /approvals/sign-in", query=query), None)
        assert response["statusCode"] == 404, response["body"]
        assert response["headers"]["content-type"].startswith("text/html")


@pytest.mark.parametrize("route", ["GET /approvals/{id}", "POST /approvals/{id}"])
def test_an_approval_route_without_its_id_is_a_404_page(approvals: Handler, route: str) -> None:
    for path in (None, {"id": ""}, {"id": "x" * 3000}):
        event = event_for(route, query={"code": "x"}, body=b"code=x&decision=approve")
        if path is not None:
            event["pathParameters"] = path
        response = approvals(event, None)
        assert response["statusCode"] == 404, response["body"]


def start(approvals: Handler, approval_id: str) -> tuple[str, dict[str, str]]:
    """``/approvals/sign-in`` for the link: the state sent to the managed login, and the cookies set."""
    response = approvals(
        event_for("GET /approvals/sign-in", query={"approval": approval_id, "code": CODE}), None
    )
    assert response["statusCode"] == 302, response["body"]
    state = parse_qs(urlsplit(response["headers"]["location"]).query)["state"][0]
    return state, set_cookies(response)


def callback(approvals: Handler, state: str, cookies: dict[str, str]) -> dict[str, Any]:
    jar = [f"{name}={value}" for name, value in cookies.items()]
    return approvals(
        event_for("GET /approvals/callback", query={"code": "c0de", "state": state}, cookies=jar), None
    )


def test_the_sign_in_state_is_bound_to_the_browser_that_started_it(
    approvals: Handler, held: str, signing_in: None
) -> None:
    state, attackers = start(approvals, held)
    assert SIGN_IN_COOKIE in attackers
    victim = callback(approvals, state, {})  # the attacker's callback URL opened by someone else
    assert victim["statusCode"] == 403 and SESSION_COOKIE not in set_cookies(victim)
    assert "another browser" in victim["body"]


def test_the_sign_in_state_is_refused_with_another_browsers_cookie(
    approvals: Handler, held: str, signing_in: None
) -> None:
    state, _ = start(approvals, held)
    _, victims = start(approvals, held)  # the victim began a sign-in of their own
    answer = callback(approvals, state, victims)
    assert answer["statusCode"] == 403 and SESSION_COOKIE not in set_cookies(answer)


def test_the_browser_that_started_the_sign_in_gets_the_session(
    approvals: Handler, held: str, signing_in: None
) -> None:
    state, cookies = start(approvals, held)
    answer = callback(approvals, state, cookies)
    assert answer["statusCode"] == 302 and answer["headers"]["location"].startswith(f"/approvals/{held}?")
    given = set_cookies(answer)
    assert given[SESSION_COOKIE] and given[SIGN_IN_COOKIE] == ""  # the binding is spent


def test_sign_out_deletes_the_session_and_clears_its_cookie(
    approvals: Handler, held: str, signing_in: None
) -> None:
    state, cookies = start(approvals, held)
    session = set_cookies(callback(approvals, state, cookies))[SESSION_COOKIE]
    key = {"approval_id": {"S": "session#" + hashlib.sha256(session.encode()).hexdigest()}}
    assert "Item" in boto3.client("dynamodb").get_item(TableName="ApprovalsTable", Key=key)
    answer = approvals(event_for("GET /approvals/sign-out", cookies=[f"{SESSION_COOKIE}={session}"]), None)
    assert answer["statusCode"] == 200 and answer["headers"]["content-type"].startswith("text/html")
    assert any(c.startswith(f"{SESSION_COOKIE}=;") and "Max-Age=0" in c for c in answer["cookies"])
    assert "Item" not in boto3.client("dynamodb").get_item(TableName="ApprovalsTable", Key=key)
    link = approvals(
        event_for(
            "GET /approvals/{id}",
            path={"id": held},
            query={"code": CODE},
            cookies=[f"{SESSION_COOKIE}={session}"],
        ),
        None,
    )
    assert 'id="sign-in"' in link["body"]  # signed out: the page asks to sign in again


def test_sign_out_without_a_session_is_a_page(approvals: Handler) -> None:
    answer = approvals(event_for("GET /approvals/sign-out"), None)
    assert answer["statusCode"] == 200 and "signed out" in answer["body"]


def test_the_sign_in_landing_is_a_page(approvals: Handler) -> None:
    answer = approvals(event_for("GET /approvals/{id}", path={"id": "signed-in"}), None)
    assert answer["statusCode"] == 200 and 'id="sign-out"' in answer["body"]


def stored(approval_id: str) -> dict[str, Any]:
    found = ApprovalStore("ApprovalsTable", boto3.client("dynamodb")).get(approval_id)
    assert found is not None
    described: dict[str, Any] = json.loads(json.dumps(found.describe()))
    return described


def test_approvals_decided_through_the_page_match_the_published_schema(approvals: Handler, held: str) -> None:
    validator = approval_validator(openapi_document(all_tools(), server_url="https://api.example.com"))
    assert not list(validator.iter_errors(stored(held)))  # pending
    form = urlencode({"code": CODE, "decision": "reject"}).encode()
    assert (
        approvals(event_for("POST /approvals/{id}", path={"id": held}, body=form), None)["statusCode"] == 200
    )
    decided = stored(held)
    assert decided["decided_by"] == {"kind": "link", "id": None}
    assert not list(validator.iter_errors(decided)), decided


def test_an_approvers_decision_matches_the_published_schema(
    approvals: Handler, held: str, signing_in: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ApproverSignIn, "check", lambda self, approver, approval: None)
    state, cookies = start(approvals, held)
    session = set_cookies(callback(approvals, state, cookies))[SESSION_COOKIE]
    csrf = ApproverSignIn.csrf_token(session, held)
    form = urlencode({"code": CODE, "decision": "approve", "csrf": csrf}).encode()
    jar = [f"{SESSION_COOKIE}={session}"]
    answer = approvals(event_for("POST /approvals/{id}", path={"id": held}, body=form, cookies=jar), None)
    assert answer["statusCode"] == 200, answer["body"]
    validator = approval_validator(openapi_document(all_tools(), server_url="https://api.example.com"))
    decided = stored(held)
    assert decided["decided_by"] == {"kind": "approver", "id": "sub-mallory", "principal": "sub-mallory"}
    assert not list(validator.iter_errors(decided)), decided


@pytest.fixture
def held_for_two(machine: str) -> str:
    """A parked approval of a tool whose calls two different people must approve."""
    two = Tool.new(
        name="shop.refund_order",
        audience="admin",
        scope="shop.orders:write",
        permission="shop",
        handler=lambda data, ctx: {},
        approval={"quorum": 2},
    )
    client = boto3.client("dynamodb")
    data = ApprovalDesk(
        ApprovalStore("ApprovalsTable", client), Workflow(machine, boto3.client("stepfunctions")), 3600
    ).hold(
        tool=two,
        arguments={"order": "A-1"},
        actor=Actor(ActorKind.KEY, "abcdefghijkl", "alice"),
        reason=ConfirmationReason.REQUIRES_APPROVAL,
        request_id="req-2",
        function="shop-fn",
        base_url="https://api.example.com",
        fields=two.secret_fields,
        client_token_hash=None,
        secrets=(),
    )
    approval_id = str(data["approval_id"])
    client.update_item(
        TableName="ApprovalsTable",
        Key={"approval_id": {"S": approval_id}},
        UpdateExpression="SET code_hash = :c",
        ExpressionAttributeValues={":c": {"S": hash_code(CODE)}},
    )
    return approval_id


def test_a_quorums_page_says_who_decides_and_the_link_alone_decides_nothing(
    approvals: Handler, held_for_two: str
) -> None:
    page = approvals(event_for("GET /approvals/{id}", path={"id": held_for_two}, query={"code": CODE}), None)
    assert page["statusCode"] == 200
    assert 'id="quorum"' in page["body"] and "2 different people" in page["body"]
    assert "the link alone names nobody" in page["body"]
    form = urlencode({"code": CODE, "decision": "approve"}).encode()
    answer = approvals(event_for("POST /approvals/{id}", path={"id": held_for_two}, body=form), None)
    assert answer["statusCode"] == 403 and "2 different approvers" in answer["body"]
    assert stored(held_for_two)["status"] == "pending" and stored(held_for_two)["approved_by"] == []


@pytest.mark.parametrize(("decision", "sent"), [("approve", "approve"), ("reject", "reject")])
def test_a_vote_before_the_workflow_parks_reaches_it_when_it_parks(
    approvals: Handler, held: str, monkeypatch: pytest.MonkeyPatch, decision: str, sent: str
) -> None:
    """A vote needs no code (Slack, the inbox), so it may come before the park task: the park then
    hands the workflow that decision instead of letting it go (an approved call would never run)."""
    from functools import cache

    from tests.unit.test_escalation import StepFunctions
    from toolfront import wiring
    from toolfront.approvals.decisions import Decisions
    from toolfront.approvals.workflow import WorkflowCallbacks

    states = StepFunctions()
    callbacks = WorkflowCallbacks("ApprovalTokensTable", states, boto3.client("dynamodb"))
    monkeypatch.setattr(wiring, "workflow_callbacks", cache(lambda: callbacks))  # reset() clears it
    store = ApprovalStore("ApprovalsTable", boto3.client("dynamodb"))
    Decisions(store, callbacks).vote(held, decision, by={"kind": "slack", "id": "T:U1", "principal": "bob"})
    states.sent.clear()  # the vote's own resume found no token yet
    answer = approvals({"toolfront_task": "park", "approval_id": held, "task_token": "token-1"}, None)
    assert answer == {"parked": False}
    assert states.sent == [("success", {"taskToken": "token-1", "output": json.dumps({"decision": sent})})]
