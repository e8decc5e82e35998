"""Every route of template.yaml against what outside testing sends: never a 5xx, always a request id,
the refusal in the route's own form (the REST envelope, JSON-RPC, an OAuth error, an HTML page).

The table is generated from the template the stack serves, so a route added tomorrow is covered the
day it is added, without a line of test code (docs/contract.md: no 5xx from input on any route).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest

from tests.http.conftest import PROJECT_DIR, Api, Reply
from toolfront_dev.template import DEFAULT_ROUTE, Route, load_template

#: A stand-in for each path parameter: a real tool, an unknown one, a well-formed approval id.
_PARAMETERS = {
    "verb_noun": "create_product",
    "namespace": "nowhere",
    "family": "nowhere",
    "id": "apr_" + "0" * 24,
}
_PLACEHOLDER = re.compile(r"\{([^}+]+)\+?\}")
DEEP = ("[" * 200 + "]" * 200).encode()
SURROGATE = b'{"name": "\\ud800", "sku": "\\ud800"}'
NOT_AN_OBJECT = b"[1, 2, 3]"
TOO_LARGE = b'{"name": "' + b"x" * (2 * 1024 * 1024) + b'"}'


def routes() -> list[Route]:
    """Every route of template.yaml but API Gateway's $default, as the local stack serves them."""
    template = load_template(PROJECT_DIR / "template.yaml")
    return [r for r in template.routes if r.path != DEFAULT_ROUTE]


def concrete(route: Route) -> str:
    """The route's path with each parameter filled in (the catalogue's for a family's own route)."""
    return _PLACEHOLDER.sub(lambda m: _PARAMETERS.get(m.group(1), "x"), route.path)


Send = Callable[[Api, Route], Reply]


def _post(body: bytes, content_type: str = "application/json") -> Send:
    def send(api: Api, route: Route) -> Reply:
        return api.request(route.method, concrete(route), body=body, headers={"Content-Type": content_type})

    return send


def _credential_in_url(api: Api, route: Route) -> Reply:
    body = b"{}" if route.method == "POST" else None
    path = f"{concrete(route)}?api_key=tfk_abcdefghijkl_notarealsecretnotarealsecret00"
    return api.request(route.method, path, body=body, headers={"Content-Type": "application/json"})


def _wrong_method(api: Api, route: Route) -> Reply:
    return api.request("PATCH", concrete(route), body=b"{}", headers={"Content-Type": "application/json"})


CASES: dict[str, Send] = {
    "credential in the url": _credential_in_url,
    "a wrong method": _wrong_method,
}
BODY_CASES: dict[str, Send] = {
    "nesting of 200": _post(DEEP),
    "a lone surrogate": _post(SURROGATE),
    "a non-object body": _post(NOT_AN_OBJECT),
    "2 MiB": _post(TOO_LARGE),
    "a wrong content type": _post(b"name=x", "text/plain"),
}
MATRIX = [(route, case) for route in routes() for case in CASES] + [
    (route, case) for route in routes() if route.method == "POST" for case in BODY_CASES
]


def form_of(route: Route) -> str:
    """The form a route answers refusals in, by its address (so a new route needs no line here)."""
    if route.path == "/mcp" or route.path.startswith("/mcp/"):
        return "json-rpc"
    if route.path == "/approvals" or route.path.startswith("/approvals/") or route.path == "/oauth/authorize":
        return "page"
    if route.path.startswith(("/oauth/", "/.well-known/")):
        return "oauth"
    return "envelope"


def assert_in_form(reply: Reply, form: str) -> None:
    content_type = reply.headers.get("content-type", "")
    assert reply.headers.get("x-content-type-options") == "nosniff", reply.headers  # JSON and pages alike
    if form == "page":
        assert content_type.startswith("text/html"), (content_type, reply.body[:200])
        assert "frame-ancestors 'none'" in reply.headers["content-security-policy"]
        return
    assert content_type.startswith("application/json"), (content_type, reply.body[:200])
    body = reply.json()
    if form == "json-rpc":
        assert body["jsonrpc"] == "2.0" and isinstance(body["error"]["code"], int), body
    elif form == "oauth":
        assert isinstance(body["error"], str) and body["error_description"], body
    else:
        assert isinstance(body["error"]["code"], str) and body["request_id"], body


@pytest.mark.parametrize(
    ("route", "case"), MATRIX, ids=[f"{route.route_key} x {case}" for route, case in MATRIX]
)
def test_every_route_answers_hostile_input_with_a_4xx_in_its_form_and_a_request_id(
    api: Api, route: Route, case: str
) -> None:
    reply = {**CASES, **BODY_CASES}[case](api, route)
    assert 400 <= reply.status < 500, (reply.status, reply.body[:300])
    assert reply.headers.get("x-request-id"), reply.headers
    assert b"notarealsecret" not in reply.body  # a credential is never echoed
    assert_in_form(reply, form_of(route))
    if case == "a wrong method":  # 405, and Allow names the route's own method
        assert reply.status == 405 and route.method in reply.headers["allow"].split(", "), reply.headers


def test_the_matrix_covers_every_function_of_the_template() -> None:
    covered = {route.function_id for route, _ in MATRIX}
    template = load_template(PROJECT_DIR / "template.yaml")
    assert covered == {f.logical_id for f in template.functions if f.routes}
    assert json.dumps(sorted(covered))
