"""Every route of template.yaml against what outside testing sends: never a 5xx, always a request id.

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


@pytest.mark.parametrize(
    ("route", "case"), MATRIX, ids=[f"{route.route_key} x {case}" for route, case in MATRIX]
)
def test_every_route_answers_hostile_input_with_a_4xx_and_a_request_id(
    api: Api, route: Route, case: str
) -> None:
    reply = {**CASES, **BODY_CASES}[case](api, route)
    assert 400 <= reply.status < 500, (reply.status, reply.body[:300])
    assert reply.headers.get("x-request-id"), reply.headers
    assert b"notarealsecret" not in reply.body  # a credential is never echoed


def test_the_matrix_covers_every_function_of_the_template() -> None:
    covered = {route.function_id for route, _ in MATRIX}
    template = load_template(PROJECT_DIR / "template.yaml")
    assert covered == {f.logical_id for f in template.functions if f.routes}
    assert json.dumps(sorted(covered))
