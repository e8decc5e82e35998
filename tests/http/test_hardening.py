"""What an outside probe found, held shut over real HTTP against the local stack."""

from __future__ import annotations

import json
import time
import urllib.parse
import uuid
from collections.abc import Iterator

import pytest

from tests.http.conftest import Api, wait_for
from toolfront import wiring
from toolfront.admission.admission import HOLDS_PREFIX
from toolfront_dev.aws import moto_client
from toolfront_dev.outbox import outbox_links
from toolfront_dev.stack import LocalStack

FORGED = {"X-Forwarded-Proto": "https://evil.example/?", "X-Forwarded-Host": "evil.example"}


def test_the_approvers_link_ignores_host_and_forwarded_headers(
    api: Api, stack: LocalStack, key: str, sku: str
) -> None:
    headers = {**FORGED, "Host": "evil.example"}
    held = api.call("catalogue.delete_product", {"sku": sku}, key=key, headers=headers)
    assert held.status == 202, held.body
    approval_id = held.json()["data"]["approval_id"]
    link = wait_for(lambda: outbox_links(stack.outbox_path).get(approval_id))
    assert "evil" not in link
    parts = urllib.parse.urlsplit(link)
    assert f"{parts.scheme}://{parts.netloc}" == stack.api_url
    assert parts.path == f"/approvals/{approval_id}"


def test_the_openapi_server_is_the_configured_address(api: Api, stack: LocalStack) -> None:
    reply = api.request("GET", "/v1/openapi.json", headers={**FORGED, "Host": f"evil-{uuid.uuid4().hex[:4]}"})
    assert reply.status == 200
    assert reply.json()["servers"] == [{"url": stack.api_url}]


@pytest.fixture
def holds_cap_of_ten(monkeypatch: pytest.MonkeyPatch, stack: LocalStack) -> Iterator[None]:
    """The deployment's default cap, for 127.0.0.1, counted from zero."""
    table = stack.table_names["RateLimitsTable"]
    dynamodb = moto_client(stack.moto_endpoint, "dynamodb")
    for item in dynamodb.scan(TableName=table)["Items"]:
        if item["pk"]["S"].startswith(HOLDS_PREFIX):
            dynamodb.delete_item(TableName=table, Key={"pk": item["pk"]})
    monkeypatch.setenv("TOOLFRONT_MAX_PUBLIC_HOLDS_PER_IP_PER_HOUR", "10")
    wiring.reset()
    yield
    monkeypatch.undo()
    wiring.reset()


def test_forty_invented_session_tokens_from_one_address_open_at_most_ten_holds(
    api: Api, stack: LocalStack, holds_cap_of_ten: None
) -> None:
    before = len(outbox_links(stack.outbox_path))
    statuses = []
    for n in range(40):
        token = f"invented-{n}-{uuid.uuid4().hex}"
        reply = api.call("guest.subscribe_newsletter", {"session_token": token, "email": f"v{n}@example.org"})
        statuses.append(reply.status)
        if reply.status == 429:
            assert reply.json()["error"]["code"] == "too_many_pending_approvals"
            assert int(reply.headers["retry-after"]) >= 1
    assert statuses.count(202) == 10 and statuses.count(429) == 30
    time.sleep(1.5)  # the workflows of the ten park and notify
    assert len(outbox_links(stack.outbox_path)) - before <= 10


def test_an_unknown_namespace_is_404_unknown_tool_in_the_envelope(api: Api) -> None:
    reply = api.call("nosuchfamily.get_thing", {})
    assert reply.status == 404 and reply.json()["error"]["code"] == "unknown_tool"
    assert reply.headers["x-request-id"]


@pytest.mark.parametrize(("method", "path"), [("GET", "/no/such/route"), ("PUT", "/v1")])
def test_any_other_unknown_route_is_404_not_found_in_the_envelope(api: Api, method: str, path: str) -> None:
    reply = api.request(method, path)
    assert reply.status == 404 and reply.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("POST", "/health", "GET"),
        ("PUT", "/approvals/sign-out", "GET, POST"),  # POST /approvals/{id} takes it too
        ("DELETE", "/v1/tools/catalogue/create_product", "POST"),
        ("GET", "/oauth/register", "POST"),
        ("PATCH", "/approvals/apr_000000000000000000000000", "GET, POST"),
    ],
)
def test_a_method_an_address_does_not_serve_is_405_with_allow(
    api: Api, method: str, path: str, allow: str
) -> None:
    reply = api.request(method, path)
    assert (reply.status, reply.headers.get("allow")) == (405, allow)
    if path.startswith("/approvals/"):  # in the form of the address's routes: a page there
        assert reply.headers["content-type"].startswith("text/html")
    elif path.startswith("/oauth/"):  # an OAuth error there
        assert reply.json()["error"] == "invalid_request"
    else:
        assert reply.json()["error"]["code"] == "method_not_allowed"


@pytest.mark.parametrize("name", ["token", "apikey", "api-key", "client_secret", "access_token"])
@pytest.mark.parametrize("path", ["/health", "/v1/tools", "/v1/openapi.json", "/no/such/route"])
def test_credentials_in_the_url_are_refused_on_every_route(api: Api, path: str, name: str) -> None:
    reply = api.request("GET", f"{path}?{name}=tfk_x")
    assert reply.status == 400 and reply.json()["error"]["code"] == "credential_in_url"
    assert "tfk_x" not in reply.body.decode()


def test_credentials_in_the_url_are_refused_on_mcp(api: Api) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    reply = api.request("POST", "/mcp?apikey=tfk_x", body=body, headers={"Content-Type": "application/json"})
    error = reply.json()["error"]  # JSON-RPC, as an MCP client reads it; the refusal in its data
    assert reply.status == 400 and error["data"]["code"] == "credential_in_url"


@pytest.mark.parametrize(
    ("body", "content_type", "status"),
    [
        ('{"code": "\\ud800", "decision": "approve"}', "application/json", 415),
        ("[" * 5000 + "]" * 5000, "application/json", 415),
        ("code=a&decision=approve&decision=reject", "application/x-www-form-urlencoded", 400),
        ("code=" + "a" * 20_000, "application/x-www-form-urlencoded", 400),
    ],
    ids=["json with a lone surrogate", "json nesting of 5000", "a repeated field", "over 16 KiB"],
)
def test_a_malformed_approval_form_is_a_4xx_page(api: Api, body: str, content_type: str, status: int) -> None:
    reply = api.request(
        "POST", "/approvals/apr_x", body=body.encode(), headers={"Content-Type": content_type}
    )
    assert reply.status == status and reply.headers["content-type"].startswith("text/html")
    assert reply.headers["x-content-type-options"] == "nosniff"


def test_a_right_code_from_another_session_reads_like_a_wrong_code(api: Api, stack: LocalStack) -> None:
    token = api.call("guest.start_session").json()["data"]["session_token"]
    held = api.call("guest.subscribe_newsletter", {"session_token": token, "email": "cy@example.org"})
    approval_id = held.json()["data"]["approval_id"]
    link = wait_for(lambda: outbox_links(stack.outbox_path).get(approval_id))
    code = urllib.parse.parse_qs(urllib.parse.urlsplit(link).query)["code"][0]
    other = api.call("guest.start_session").json()["data"]["session_token"]
    right_code = api.call(
        "system.confirm_call", {"approval_id": approval_id, "code": code, "session_token": other}
    )
    wrong_code = api.call(
        "system.confirm_call", {"approval_id": approval_id, "code": "x", "session_token": other}
    )
    assert right_code.status == wrong_code.status == 403
    assert right_code.json()["error"] == wrong_code.json()["error"]


@pytest.mark.parametrize(
    ("origin", "status"), [("http://evil.example.com", 403), (None, 200), ("http://localhost:1", 200)]
)
def test_mcp_refuses_a_page_of_another_origin(
    api: Api, stack: LocalStack, origin: str | None, status: int
) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    headers = {"Content-Type": "application/json", "Host": "evil.example.com"}
    if origin is not None:
        headers["Origin"] = origin
    assert api.request("POST", "/mcp", body=body, headers=headers).status == status
    own = {"Content-Type": "application/json", "Origin": stack.api_url}
    assert api.request("POST", "/mcp", body=body, headers=own).status == 200
