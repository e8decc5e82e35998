"""Rate limits: cost rules, the token bucket's arithmetic, headers, and exactness under threads."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import boto3
import pytest

from tests.aws import counting_requests
from toolfront import Tool
from toolfront.admission.admission import Admission
from toolfront.admission.ratelimit import BucketMemory
from toolfront.auth.actors import Actor, ActorKind
from toolfront.errors import RateLimitedError, StoreUnavailableError
from toolfront.settings import RateLimits
from toolfront.tools.rules import cost_of

START = 1_800_000_000_000_000  # µs


def handler(data: dict[str, Any], ctx: Any) -> dict[str, Any]:
    return {}


def tool(**fields: Any) -> Tool:
    base: dict[str, Any] = {
        "name": "shop.set_items",
        "audience": "admin",
        "scope": "shop.items:write",
        "permission": "shop",
        "handler": handler,
    }
    return Tool.new(**{**base, **fields})


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> int:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += int(seconds * 1_000_000)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def admission(aws: None, clock: Clock) -> Admission:
    return Admission(
        "RateLimitsTable",
        "IdempotencyTable",
        RateLimits(),
        client=boto3.client("dynamodb"),
        memory=BucketMemory(clock_us=clock),
    )


def key(limit: int | None = None, name: str = "k1") -> Actor:
    return Actor(ActorKind.KEY, name, "alice", rate_limit=limit)


# --- cost -------------------------------------------------------------------------------------------


def test_cost_fixed_is_used_as_is() -> None:
    assert cost_of(tool(cost=7), {"items": [1] * 500}) == 7


def test_cost_callable_gets_the_raw_input() -> None:
    assert cost_of(tool(cost=lambda data: len(data["skus"])), {"skus": ["a", "b", "c"]}) == 3


@pytest.mark.parametrize(
    "broken", [lambda data: data["missing"], lambda data: 0, lambda data: "2", lambda data: True]
)
def test_cost_callable_failure_falls_back_to_the_default_rule(broken: Any) -> None:
    assert cost_of(tool(cost=broken), {"items": list(range(120))}) == 3


@pytest.mark.parametrize(("items", "cost"), [(0, 1), (1, 1), (50, 1), (51, 2), (500, 10)])
def test_default_cost_of_an_admin_write_grows_with_the_longest_list(items: int, cost: int) -> None:
    assert cost_of(tool(), {"outer": {"items": list(range(items))}}) == cost


def test_default_cost_of_a_read_or_public_tool_is_one() -> None:
    assert cost_of(tool(annotations={"read_only": True}), {"items": list(range(500))}) == 1
    public = Tool.new(name="guest.send_items", audience="public", handler=handler)
    assert cost_of(public, {"items": list(range(500))}) == 1


def test_limits_follow_the_kind_of_caller_and_the_key() -> None:
    limits = RateLimits()
    assert limits.for_actor(key()) == 600
    assert limits.for_actor(key(limit=5)) == 5
    assert limits.for_actor(Actor(ActorKind.COGNITO, "sub")) == 600
    assert limits.for_actor(Actor(ActorKind.CLIENT, "hash")) == 60
    assert limits.for_actor(Actor(ActorKind.ANONYMOUS, "203.0.113.7")) == 30


# --- the bucket ---------------------------------------------------------------------------------------


def test_bucket_admits_the_limit_then_refuses_with_retry_after(admission: Admission) -> None:
    decisions = [admission.admit(key(limit=3), 1, None).decision for _ in range(3)]
    assert [d.remaining for d in decisions if d] == [2, 1, 0]
    with pytest.raises(RateLimitedError) as refused:
        admission.admit(key(limit=3), 1, None)
    assert refused.value.http_status == 429
    assert refused.value.headers["retry-after"] == "20"  # one unit every 20 s at 3 per minute
    assert refused.value.headers["ratelimit"] == '"default";r=0;t=20'


def test_headers_follow_the_ietf_draft_form(admission: Admission) -> None:
    decision = admission.admit(key(limit=60), 1, None).decision
    assert decision is not None
    assert decision.headers() == {
        "ratelimit-policy": '"default";q=60;w=60',
        "ratelimit": '"default";r=59;t=1',
    }


def test_bucket_refills_continuously(admission: Admission, clock: Clock) -> None:
    for _ in range(3):
        admission.admit(key(limit=3), 1, None)
    clock.advance(19)
    with pytest.raises(RateLimitedError):
        admission.admit(key(limit=3), 1, None)
    clock.advance(1)
    assert admission.admit(key(limit=3), 1, None).decision.remaining == 0  # type: ignore[union-attr]


def test_bucket_never_holds_more_than_one_minute(admission: Admission, clock: Clock) -> None:
    admission.admit(key(limit=3), 1, None)
    clock.advance(3600)  # idle for an hour: still only 3 units
    for _ in range(3):
        admission.admit(key(limit=3), 1, None)
    with pytest.raises(RateLimitedError):
        admission.admit(key(limit=3), 1, None)


def test_cost_spends_several_units(admission: Admission) -> None:
    assert admission.admit(key(limit=10), 7, None).decision.remaining == 3  # type: ignore[union-attr]
    with pytest.raises(RateLimitedError):
        admission.admit(key(limit=10), 4, None)
    assert admission.admit(key(limit=10), 3, None).decision.remaining == 0  # type: ignore[union-attr]


def test_cost_over_the_whole_limit_is_always_refused(admission: Admission) -> None:
    with pytest.raises(RateLimitedError, match="more than the limit"):
        admission.admit(key(limit=5), 6, None)


def test_buckets_are_per_actor(admission: Admission) -> None:
    admission.admit(key(limit=1, name="a"), 1, None)
    admission.admit(key(limit=1, name="b"), 1, None)
    with pytest.raises(RateLimitedError):
        admission.admit(key(limit=1, name="a"), 1, None)


def test_a_decision_is_one_conditional_write(admission: Admission) -> None:
    with counting_requests(admission.client) as sent:
        admission.admit(key(limit=100), 1, None)  # idle bucket: FILL
        admission.admit(key(limit=100), 1, None)  # busy bucket, remembered: DRAIN
    assert sent == ["UpdateItem", "UpdateItem"]


def test_a_wrong_guess_costs_one_more_write_never_a_read(aws: None, clock: Clock) -> None:
    client = boto3.client("dynamodb")
    first = Admission(
        "RateLimitsTable",
        "IdempotencyTable",
        RateLimits(),
        client=client,
        memory=BucketMemory(clock_us=clock),
    )
    other = Admission(
        "RateLimitsTable",
        "IdempotencyTable",
        RateLimits(),
        client=client,
        memory=BucketMemory(clock_us=clock),
    )
    first.admit(key(limit=100), 1, None)
    with counting_requests(client) as sent:
        other.admit(key(limit=100), 1, None)  # guesses FILL, the bucket is busy: DRAIN
    assert sent == ["UpdateItem", "UpdateItem"]


def test_fifty_threads_against_a_bucket_of_twenty_admit_exactly_twenty(aws: None) -> None:
    actor = key(limit=20, name="crowd")
    barrier = threading.Barrier(50)

    def attempt(_: int) -> bool:
        admission = Admission(
            "RateLimitsTable",
            "IdempotencyTable",
            RateLimits(),
            client=boto3.client("dynamodb"),
            memory=BucketMemory(clock_us=lambda: START),
        )
        barrier.wait()
        try:
            admission.admit(actor, 1, None)
        except RateLimitedError:
            return False
        return True

    with ThreadPoolExecutor(max_workers=50) as pool:
        admitted = sum(pool.map(attempt, range(50)))
    assert admitted == 20


def test_unavailable_table_fails_closed_by_default_and_open_when_set(aws: None) -> None:
    from botocore.exceptions import EndpointConnectionError

    class Down:
        def update_item(self, **_: Any) -> Any:
            raise EndpointConnectionError(endpoint_url="http://dynamodb")

    closed = Admission("RateLimitsTable", "IdempotencyTable", RateLimits(), client=Down())
    with pytest.raises(StoreUnavailableError):
        closed.admit(key(), 1, None)
    opened = Admission("RateLimitsTable", "IdempotencyTable", RateLimits(fail_open=True), client=Down())
    assert opened.admit(key(), 1, None).decision is None
