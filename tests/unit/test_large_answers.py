"""Answers too large for one DynamoDB item: kept compressed, or in parts, and given back exactly to a
retry and to the requester of a held call; a completed write never runs twice because its answer
was big. Also: data breaking a held tool's output schema ends the approval failed."""

from __future__ import annotations

import base64
import json
import os
from typing import Any

import boto3
import pytest

from tests.aws import key_store, seed
from tests.helpers import family
from tests.unit.test_runner import approved
from toolfront import Registry, Tool, ToolResult, results
from toolfront.admission.admission import Admission
from toolfront.approvals.runner import ApprovedCallRunner
from toolfront.approvals.store import ApprovalStore
from toolfront.auth.actors import Actor, ActorKind
from toolfront.aws import bodies
from toolfront.calls.call import Call
from toolfront.calls.pipeline import CallPipeline
from toolfront.settings import RateLimits

ONE_MB = os.urandom(1024 * 1024)  # random: compression cannot bring it under one item
runs: list[str] = []


def big_image(data: dict[str, Any], ctx: Any) -> ToolResult:
    runs.append(ctx.request_id)
    return ToolResult(content=[results.image(ONE_MB, "image/png")], data={"bytes": len(ONE_MB)})


def tools() -> list[Tool]:
    admin = {"audience": "admin", "scope": "shop.items:write", "permission": "shop"}
    return [
        Tool.new(name="shop.render_image", handler=big_image, **admin),
        Tool.new(
            name="shop.count_notes",
            handler=lambda d, c: {"count": "many"},
            output_schema={"type": "object", "properties": {"count": {"type": "integer"}}},
            **admin,
        ),
    ]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("small", "S"),
        (json.dumps({"rows": ["abc" * 40] * 2000}), "B"),  # 250 KB of JSON: compressed into one item
        (base64.b64encode(ONE_MB).decode(), "M"),  # 1.4 MB of base64 of random bytes: parts
    ],
)
def test_a_text_is_kept_in_the_form_its_size_needs(text: str, kind: str) -> None:
    packed = bodies.pack(text)
    assert set(packed.value) == {kind}
    assert all(len(part) <= bodies.PART_BYTES for part in packed.parts)
    assert bodies.unpack(packed.value, lambda count: list(packed.parts[:count])) == text


def run(request_id: str) -> Any:
    actor = Actor(ActorKind.KEY, "k1", "alice", frozenset({"shop.*"}), frozenset({"shop"}))
    admission = Admission(
        "RateLimitsTable", "IdempotencyTable", RateLimits(), client=boto3.client("dynamodb")
    )
    pipeline = CallPipeline(Registry.from_modules([family("shop", tools)]), lambda h, ip: actor, admission)
    body = json.dumps({"idempotency_key": "big-1"}).encode()
    return pipeline.run(Call("shop.render_image", request_id, body=body, content_type="application/json"))


def test_a_one_megabyte_answer_is_replayed_exactly_and_the_handler_runs_once(aws: None) -> None:
    runs.clear()
    first = run("r1")
    assert first.status == 200 and first.body is not None and len(first.body) > 1_300_000
    again = run("r2")
    assert again.replayed and again.body == first.body
    assert runs == ["r1"]
    pages = boto3.client("dynamodb").get_paginator("scan").paginate(TableName="IdempotencyTable")
    items = [item for page in pages for item in page["Items"]]  # a scan page holds 1 MB at most
    record = next(item for item in items if "#part#" not in item["pk"]["S"])
    parts = [item for item in items if "#part#" in item["pk"]["S"]]
    assert int(record["response_body"]["M"]["parts"]["N"]) == len(parts) >= 4
    assert {part["expires_at_epoch"]["N"] for part in parts} == {record["expires_at_epoch"]["N"]}


def test_a_held_calls_large_result_is_kept_exactly(aws: None) -> None:
    key_id = seed("alice", ["shop.*"], permissions=["shop"]).split("_")[1]
    store = ApprovalStore("ApprovalsTable", boto3.client("dynamodb"))
    runner = ApprovedCallRunner(Registry.from_modules([family("shop", tools)]), store, key_store())
    approval_id = approved(store, "shop.render_image", key_id)
    assert runner.run(approval_id) == {"status": "succeeded"}
    kept = store.get(approval_id)
    assert kept is not None and kept.result == {"bytes": len(ONE_MB)}
    assert kept.result_content == [
        {"type": "image", "data": base64.b64encode(ONE_MB).decode(), "mimeType": "image/png"}
    ]
    assert kept.describe()["result_content"] == kept.result_content


def test_a_held_call_whose_data_breaks_the_output_schema_ends_failed(aws: None) -> None:
    key_id = seed("alice", ["shop.*"], permissions=["shop"]).split("_")[1]
    store = ApprovalStore("ApprovalsTable", boto3.client("dynamodb"))
    runner = ApprovedCallRunner(Registry.from_modules([family("shop", tools)]), store, key_store())
    approval_id = approved(store, "shop.count_notes", key_id)
    assert runner.run(approval_id) == {"status": "failed"}
    kept = store.get(approval_id)
    assert kept is not None and kept.result is None
    assert kept.error is not None and kept.error["code"] == "internal_error"
    assert "many" not in json.dumps(kept.describe())
