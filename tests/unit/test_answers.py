"""What a call answers when its handler returns content blocks, and output schemas enforced on every
success: REST's envelope and raw bytes, MCP's result, replays, the 500 of a broken answer (never
stored or sent as data), and a held call that produced one."""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Mapping
from typing import Any

import boto3
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import family
from toolfront import Registry, Tool, ToolResult, results
from toolfront.adapters.mcp.results import result_of_answer
from toolfront.adapters.rest import result_response
from toolfront.admission.admission import Admission
from toolfront.auth.actors import Actor, ActorKind
from toolfront.calls.call import Call, CallResult
from toolfront.calls.pipeline import CallPipeline
from toolfront.settings import RateLimits
from toolfront.tools.answers import OutputSchemaError, answer_parts

PNG = b"\x89PNG\r\n\x1a\n" + bytes(32)
SVG = b'<svg xmlns="http://www.w3.org/2000/svg"/>'
SECRET_VALUE = "value-that-must-not-leak-7f3a"
COUNT = {
    "type": "object",
    "properties": {"count": {"type": "integer", "minimum": 0}},
    "required": ["count"],
    "additionalProperties": False,
}
answers: dict[str, Any] = {}


def answer(name: str) -> Any:
    def handler(data: dict[str, Any], ctx: Any) -> Any:
        return answers[name]

    return handler


def tools() -> list[Tool]:
    admin = {"audience": "admin", "permission": "shop", "scope": "shop.items:write"}
    return [
        Tool.new(name="shop.draw_label", handler=answer("draw"), mime_type="image/svg+xml", **admin),
        Tool.new(name="shop.count_items", handler=answer("count"), output_schema=COUNT, **admin),
        Tool.new(name="shop.export_items", handler=answer("export"), output_schema=COUNT, **admin),
    ]


KEY = Actor(ActorKind.KEY, "k1", "alice", frozenset({"shop.*"}), frozenset({"shop"}))


def pipeline() -> CallPipeline:
    registry = Registry.from_modules([family("shop", tools)])
    admission = Admission(
        "RateLimitsTable", "IdempotencyTable", RateLimits(), client=boto3.client("dynamodb")
    )
    return CallPipeline(registry, lambda headers, ip: KEY, admission)


def run(name: str, body: dict[str, Any] | None = None, request_id: str = "r1") -> CallResult:
    call = Call(
        tool_name=name,
        request_id=request_id,
        body=json.dumps(body or {}).encode(),
        content_type="application/json",
    )
    return pipeline().run(call)


@pytest.fixture(autouse=True)
def _clear(aws: None) -> None:
    answers.clear()


def envelope(result: CallResult) -> dict[str, Any]:
    assert result.body is not None
    parsed: dict[str, Any] = json.loads(result.body)
    return parsed


def test_a_tool_result_answers_data_and_content_in_wire_form() -> None:
    answers["draw"] = ToolResult(content=[results.text("label"), results.image(PNG)], data={"sku": "A"})
    result = run("shop.draw_label")
    assert result.status == 200
    assert envelope(result) == {
        "data": {"sku": "A"},
        "content": [
            {"type": "text", "text": "label"},
            {"type": "image", "data": base64.b64encode(PNG).decode(), "mimeType": "image/png"},
        ],
        "request_id": "r1",
    }


def test_an_untyped_image_that_would_take_the_tools_svg_type_is_a_500_never_sent() -> None:
    # the tool's mime_type is image/svg+xml: an image block may not be that, so the answer is the
    # tool's bug, as data breaking its output schema is
    answers["draw"] = ToolResult(content=[results.image(SVG)], data={"sku": "A"})
    result = run("shop.draw_label")
    assert (result.status, result.error.code if result.error else None) == (500, "internal_error")
    assert result.body is None or "svg" not in result.body


def test_mcp_adds_the_datas_json_as_text_only_when_the_handler_gave_no_text() -> None:
    image = {"type": "image", "data": "AA==", "mimeType": "image/png"}
    plain = result_of_answer(200, {"data": {"sku": "A"}, "content": [image], "request_id": "r"})
    assert plain == {
        "content": [image, {"type": "text", "text": '{"sku":"A"}'}],
        "structuredContent": {"sku": "A"},
        "isError": False,
    }
    texted = result_of_answer(
        200, {"data": {"n": 1}, "content": [{"type": "text", "text": "t"}], "request_id": "r"}
    )
    assert texted["content"] == [{"type": "text", "text": "t"}]
    no_data = result_of_answer(200, {"data": None, "content": [image], "request_id": "r"})
    assert no_data == {"content": [image], "isError": False}


@pytest.mark.parametrize(
    ("accept", "raw"),
    [
        ("image/png", True),
        ("image/png;q=0.9", True),
        ("image/png;q=0", False),
        ("image/*", False),
        ("*/*", False),
        ("application/json, image/png", False),
        (None, False),
    ],
)
def test_rest_answers_the_bytes_when_accept_names_their_type_exactly(accept: str | None, raw: bool) -> None:
    answers["draw"] = ToolResult(content=[results.image(PNG)], data={"sku": "A"})
    response = result_response(run("shop.draw_label"), "r1", accept)
    if raw:
        assert response["isBase64Encoded"] is True
        assert base64.b64decode(response["body"]) == PNG
        assert response["headers"]["content-type"] == "image/png"
        assert response["headers"]["x-request-id"] == "r1"
    else:
        assert response["headers"]["content-type"] == "application/json"
        assert json.loads(response["body"])["content"][0]["type"] == "image"


def test_a_replay_returns_the_first_content_exactly() -> None:
    svg = results.embedded_resource("toolfront://shop/a.svg", text=SVG.decode(), mime_type="image/svg+xml")
    answers["draw"] = ToolResult(content=[results.image(PNG), svg], data={"sku": "A"})
    first = run("shop.draw_label", {"idempotency_key": "k-1"}, request_id="r1")
    answers["draw"] = ToolResult(content=[results.text("something else")], data={"sku": "B"})
    again = run("shop.draw_label", {"idempotency_key": "k-1"}, request_id="r2")
    assert again.replayed and again.body == first.body
    for accept, sent in (("image/png", PNG), ("image/svg+xml", SVG)):
        raw = result_response(again, "r2", accept)
        assert base64.b64decode(raw["body"]) == sent and raw["headers"]["idempotent-replayed"] == "true"


# --- output schemas -----------------------------------------------------------------------------


def test_data_that_matches_the_output_schema_is_answered() -> None:
    answers["count"] = {"count": 3}
    assert (run("shop.count_items").status, run("shop.count_items").data) == (200, {"count": 3})


@pytest.mark.parametrize(
    ("returned", "paths"),
    [
        ({"count": -1, "secret": SECRET_VALUE}, ["", "/count"]),
        ({"count": SECRET_VALUE}, ["/count"]),
        ({}, [""]),
    ],
)
def test_data_that_breaks_the_output_schema_is_a_500_never_stored_or_sent(
    returned: dict[str, Any],
    paths: list[str],
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level(logging.INFO)
    answers["count"] = returned
    result = run("shop.count_items", {"idempotency_key": "k-out"}, request_id="r1")
    assert (result.status, result.error.code if result.error else None) == (500, "internal_error")
    assert result.data is None and (result.body is None or SECRET_VALUE not in result.body)
    answers["count"] = {"count": 1}  # fixed meanwhile: the key still answers the first outcome
    again = run("shop.count_items", {"idempotency_key": "k-out"}, request_id="r2")
    assert (again.status, again.replayed) == (500, True)
    assert again.body is not None and SECRET_VALUE not in again.body
    logged = caplog.text + capsys.readouterr().out
    assert "shop.count_items answered data that does not match its output_schema" in logged
    assert all(f"{path or '/'}" in logged for path in paths)
    assert SECRET_VALUE not in logged
    stored = json.dumps(boto3.client("dynamodb").scan(TableName="IdempotencyTable")["Items"])
    assert SECRET_VALUE not in stored


def test_a_tool_with_an_output_schema_must_answer_data() -> None:
    answers["export"] = ToolResult(content=[results.text("no data")])
    assert run("shop.export_items").status == 500
    answers["export"] = ToolResult(content=[results.text("n")], data={"count": 2})
    assert run("shop.export_items").status == 200


def test_a_handler_that_answers_neither_a_dict_nor_a_tool_result_is_a_500() -> None:
    answers["draw"] = ["a list"]
    assert run("shop.draw_label").status == 500


# Generated schemas from the portable subset and data: an answer passes exactly when the reference
# validator (jsonschema) says the data is valid.
_LEAF = st.sampled_from(
    [
        {"type": "integer", "minimum": 0},
        {"type": "string", "maxLength": 3},
        {"type": "boolean"},
        {"type": "number", "maximum": 10},
        {"enum": ["a", "b"]},
    ]
)
_SCHEMAS = st.dictionaries(st.sampled_from(["a", "b", "c"]), _LEAF, max_size=3).flatmap(
    lambda properties: st.builds(
        lambda required, closed: {
            "type": "object",
            "properties": properties,
            "required": sorted(required),
            "additionalProperties": not closed,
        },
        st.sets(
            st.sampled_from(sorted(properties)) if properties else st.nothing(), max_size=len(properties)
        ),
        st.booleans(),
    )
)
_VALUES = st.one_of(
    st.integers(-3, 12), st.text(max_size=5), st.booleans(), st.floats(-1, 20, allow_nan=False), st.none()
)
_DATA = st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), _VALUES, max_size=4)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(schema=_SCHEMAS, data=_DATA)
def test_a_success_passes_exactly_when_the_validator_says_so(
    schema: Mapping[str, Any], data: dict[str, Any]
) -> None:
    import jsonschema

    tool = Tool.new(
        name="shop.check_items", audience="public", handler=lambda d, c: data, output_schema=dict(schema)
    )
    # the reference implementation decides what is valid, not toolfront's own validator
    valid = jsonschema.Draft202012Validator(dict(schema)).is_valid(data)
    if valid:
        assert answer_parts(tool, data)[0] == data
        return
    with pytest.raises(OutputSchemaError) as refused:
        answer_parts(tool, data)
    assert refused.value.paths and all(path.startswith("/") for path in refused.value.paths)
    shown = str(refused.value)
    assert not any(v in shown for v in data.values() if isinstance(v, str) and len(v) > 2)


_SENTINEL = "sentinel-zq9"  # a value no generated data holds, to find stored data by


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(schema=_SCHEMAS, data=_DATA)
def test_through_the_pipeline_a_failing_output_is_never_stored_or_sent(
    schema: Mapping[str, Any], data: dict[str, Any]
) -> None:
    import uuid

    import jsonschema

    number = uuid.uuid4().hex  # the tables live across examples: each example its own key

    answered = {**data, "d": _SENTINEL} if "d" not in schema.get("properties", {}) else data
    valid = jsonschema.Draft202012Validator(dict(schema)).is_valid(answered)
    checked = Tool.new(
        name="shop.report_items",
        audience="admin",
        scope="shop.items:write",
        permission="shop",
        handler=lambda d, c: answered,
        output_schema=dict(schema),
    )
    registry = Registry.from_modules([family("shop", lambda: [checked])])
    admission = Admission(
        "RateLimitsTable", "IdempotencyTable", RateLimits(), client=boto3.client("dynamodb")
    )
    call = Call(
        tool_name="shop.report_items",
        request_id=f"r-{number}",
        body=json.dumps({"idempotency_key": f"k-{number}"}).encode(),
        content_type="application/json",
    )
    result = CallPipeline(registry, lambda headers, ip: KEY, admission).run(call)
    record = boto3.client("dynamodb").scan(
        TableName="IdempotencyTable",
        FilterExpression="contains(response_body, :r)",
        ExpressionAttributeValues={":r": {"S": f"r-{number}"}},
    )["Items"]
    if valid:
        assert result.status == 200 and result.data == answered
        return
    assert (result.status, result.data) == (500, None)
    sent = result.body or json.dumps(result.error.to_dict() if result.error else {})
    assert _SENTINEL not in sent and all(_SENTINEL not in json.dumps(item) for item in record)
    assert record and json.loads(record[0]["response_body"]["S"])["error"]["code"] == "internal_error"
