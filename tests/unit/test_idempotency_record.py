"""The idempotency record's lifecycle on moto: claimed with the units, settled once, freed by a crash."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import boto3
import pytest

from toolfront.admission.admission import Admission
from toolfront.admission.idempotency import Claim, IdempotencyRecord
from toolfront.auth.actors import Actor, ActorKind
from toolfront.settings import RateLimits

ACTOR = Actor(ActorKind.KEY, "k1", principal="alice")


class Crash(Exception):
    """What a handler raises in these tests."""


Settle = Callable[[IdempotencyRecord], None]


def crash_inside(record: IdempotencyRecord, before: Settle | None = None) -> None:
    """Run ``before`` on the record inside its block, then crash out of the block."""
    with pytest.raises(Crash), record:
        _settle_then_crash(record, before)


def _settle_then_crash(record: IdempotencyRecord, before: Settle | None) -> None:
    if before is not None:
        before(record)
    raise Crash


@pytest.fixture
def client(aws: None) -> Any:
    return boto3.client("dynamodb")


@pytest.fixture
def admission(client: Any) -> Admission:
    return Admission("RateLimitsTable", "IdempotencyTable", RateLimits(), client=client)


def claim(owner: str = "req-1") -> Claim:
    now = time.time_ns() // 1000
    return Claim("key#k1", "shop.add_note", "retry-1", "f" * 64, owner, now, 60_000_000)


def stored(client: Any, made: Claim) -> dict[str, Any] | None:
    found = client.get_item(TableName="IdempotencyTable", Key={"pk": {"S": made.record_id}})
    item: dict[str, Any] | None = found.get("Item")
    return item


def test_a_completed_record_keeps_the_first_answer_only(admission: Admission, client: Any) -> None:
    made = claim()
    admission.admit(ACTOR, 1, made)
    with IdempotencyRecord(admission, made) as record:
        record.complete(200, '{"data":1}')
        record.complete(500, '{"data":2}')  # settled already: nothing more is written
        record.release()
    item = stored(client, made)
    assert item is not None and item["response_body"]["S"] == '{"data":1}'


def test_leaving_the_block_by_a_crash_frees_the_key(admission: Admission, client: Any) -> None:
    made = claim()
    admission.admit(ACTOR, 1, made)
    crash_inside(IdempotencyRecord(admission, made))
    assert stored(client, made) is None
    again = admission.admit(ACTOR, 1, claim("req-2"))  # a retry claims the key afresh
    assert again.replay is None


def test_a_crash_after_the_answer_was_kept_keeps_it(admission: Admission, client: Any) -> None:
    made = claim()
    admission.admit(ACTOR, 1, made)
    crash_inside(IdempotencyRecord(admission, made), lambda record: record.complete(422, '{"error":{}}'))
    item = stored(client, made)
    assert item is not None and item["response_status"]["N"] == "422"


def test_a_call_without_a_key_writes_nothing(admission: Admission, client: Any) -> None:
    before = client.scan(TableName="IdempotencyTable")["Count"]
    crash_inside(IdempotencyRecord(admission, None), lambda record: record.complete(200, "{}"))
    assert client.scan(TableName="IdempotencyTable")["Count"] == before


def test_a_replay_is_settled_from_the_start(admission: Admission, client: Any) -> None:
    made = claim()
    admission.admit(ACTOR, 1, made)
    with IdempotencyRecord(admission, made) as first:
        first.complete(200, '{"data":"first"}')
    retry = claim("req-2")
    replay = admission.admit(ACTOR, 1, retry).replay
    assert replay is not None and replay.body == '{"data":"first"}'
    record = IdempotencyRecord(admission, retry, replay)
    assert record.replay is replay
    crash_inside(record)  # a crash while answering the replay releases nothing
    assert stored(client, made) is not None
