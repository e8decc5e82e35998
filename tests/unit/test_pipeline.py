"""The call pipeline's order of checks and its refusals, on moto's DynamoDB."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import boto3
import pytest

from tests.helpers import family
from toolfront import Registry, Tool, ToolError
from toolfront.admission.admission import Admission
from toolfront.auth.actors import Actor, ActorKind
from toolfront.calls.call import Call, CallResult
from toolfront.calls.pipeline import CallPipeline
from toolfront.errors import UnauthenticatedError
from toolfront.settings import RateLimits

ITEMS = {
    "type": "object",
    "properties": {"items": {"type": "array", "items": {"type": "integer", "minimum": 0}}},
    "required": ["items"],
    "additionalProperties": False,
}
ran: list[dict[str, Any]] = []


def record(data: dict[str, Any], ctx: Any) -> dict[str, Any]:
    ran.append(data)
    return {"count": len(data.get("items", []))}


def tools() -> list[Tool]:
    admin = {"audience": "admin", "permission": "shop", "handler": record, "input_schema": ITEMS}
    return [
        Tool.new(name="shop.count_items", scope="shop.items:read", annotations={"read_only": True}, **admin),
        Tool.new(name="shop.store_items", scope="shop.items:write", max_items=3, **admin),
        Tool.new(name="shop.wipe_items", scope="shop.items:write", danger="always", **admin),
        Tool.new(name="shop.greet_visitor", audience="public", handler=record),
        Tool.new(
            name="shop.fail_loudly",
            scope="shop.items:read",
            audience="admin",
            permission="shop",
            handler=lambda d, c: (_ for _ in ()).throw(ToolError("sold_out", "nothing left", 410)),
        ),
    ]


KEY = Actor(ActorKind.KEY, "k1", "alice", frozenset({"shop.*"}), frozenset({"shop"}))


def run(
    name: str,
    body: bytes | None = b'{"items": [1, 2]}',
    *,
    actor: Actor | None = KEY,
    query: Mapping[str, str] | None = None,
    content_type: str = "application/json",
) -> CallResult:
    def authenticate(headers: Mapping[str, str], ip: str) -> Actor:
        if actor is None:
            raise UnauthenticatedError("the API key is not valid")
        return actor

    registry = Registry.from_modules([family("shop", tools)])
    client = boto3.client("dynamodb")
    admission = Admission("RateLimitsTable", "IdempotencyTable", RateLimits(), client=client)
    pipeline = CallPipeline(registry, authenticate, admission, batch_confirm_items=100)
    call = Call(tool_name=name, request_id="r1", query=query or {}, body=body, content_type=content_type)
    return pipeline.run(call)


def code(result: CallResult) -> tuple[int, str | None]:
    return result.status, result.error.code if result.error else None


@pytest.fixture(autouse=True)
def _clear(aws: None) -> None:
    ran.clear()


def test_valid_call_runs_the_handler_once() -> None:
    result = run("shop.count_items")
    assert (result.status, result.data) == (200, {"count": 2})
    assert ran == [{"items": [1, 2]}]


def test_credential_in_url_comes_before_everything() -> None:
    result = run("shop.nope_nope", body=b"not json", actor=None, query={"session_token": "x"})
    assert code(result) == (400, "credential_in_url")


def test_body_comes_before_tool_lookup() -> None:
    assert code(run("shop.nope_nope", body=b"{", actor=None)) == (400, "invalid_json")


def test_unknown_tool_comes_before_authentication() -> None:
    assert code(run("shop.nope_nope", actor=None)) == (404, "unknown_tool")


def test_authentication_comes_before_scope() -> None:
    assert code(run("shop.count_items", actor=None)) == (401, "unauthenticated")


def test_anonymous_caller_of_admin_tool_is_401() -> None:
    assert code(run("shop.count_items", actor=Actor(ActorKind.ANONYMOUS, "ip"))) == (401, "unauthenticated")


def test_missing_scope_comes_before_permission() -> None:
    actor = Actor(ActorKind.KEY, "k", "bob", frozenset({"shop.items:read"}), frozenset())
    assert code(run("shop.store_items", actor=actor)) == (403, "missing_scope")


def test_missing_permission_is_403() -> None:
    actor = Actor(ActorKind.KEY, "k", "bob", frozenset({"shop.items:read"}), frozenset({"other"}))
    assert code(run("shop.count_items", actor=actor)) == (403, "missing_permission")


def test_max_items_comes_before_schema_validation() -> None:
    result = run("shop.store_items", body=b'{"items": ["a", "b", "c", "d"]}')
    assert code(result) == (422, "too_many_items")


def test_schema_errors_are_all_listed() -> None:
    result = run("shop.count_items", body=b'{"items": [-1, "x"], "extra": 1}')
    assert code(result) == (422, "invalid_input")
    assert result.error is not None
    assert {(d["path"], d["keyword"]) for d in result.error.details} == {
        ("/items/0", "minimum"),
        ("/items/1", "type"),
        ("", "additionalProperties"),
    }
    assert ran == []


def test_dangerous_call_is_refused_before_the_handler() -> None:
    assert code(run("shop.wipe_items")) == (501, "confirmation_unavailable")
    assert ran == []


def test_requires_approval_key_holds_writes_but_not_reads() -> None:
    actor = Actor(
        ActorKind.KEY, "k", "alice", frozenset({"shop.*"}), frozenset({"shop"}), requires_approval=True
    )
    assert code(run("shop.store_items", actor=actor)) == (501, "confirmation_unavailable")
    assert run("shop.count_items", actor=actor).status == 200


def test_public_tool_needs_no_key() -> None:
    result = run("shop.greet_visitor", body=None, actor=Actor(ActorKind.ANONYMOUS, "198.51.100.1"))
    assert (result.status, result.data) == (200, {"count": 0})


def test_empty_body_is_an_empty_input_whatever_the_media_type() -> None:
    assert (
        run("shop.greet_visitor", body=b"", content_type="", actor=Actor(ActorKind.ANONYMOUS, "ip")).status
        == 200
    )


def test_json_media_type_with_charset_is_accepted() -> None:
    assert run("shop.count_items", content_type="application/json; charset=utf-8").status == 200


def test_tool_error_keeps_its_code_and_status() -> None:
    assert code(run("shop.fail_loudly", body=b"{}")) == (410, "sold_out")


def test_nan_is_not_json() -> None:
    assert code(run("shop.count_items", body=b'{"items": [NaN]}')) == (400, "invalid_json")


def test_the_log_line_is_also_the_calls_metrics(capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    run("shop.count_items", body=b'{"items": [-1]}')
    (line,) = [json.loads(text) for text in capsys.readouterr().out.splitlines() if '"tool call"' in text]
    assert (line["Calls"], line["Refusals"], line["ErrorCode"]) == (1, 1, "invalid_input")
    directives = line["_aws"]["CloudWatchMetrics"]
    assert {m["Name"] for d in directives for m in d["Metrics"]} >= {
        "Calls",
        "Latency",
        "CostUnits",
        "Refusals",
    }
    assert ["service", "ErrorCode"] in [dims for d in directives for dims in d["Dimensions"]]
