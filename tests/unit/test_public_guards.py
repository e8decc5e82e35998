"""Anonymous callers cannot flood: the per-address guard bucket and the cap on held calls, on moto."""

from __future__ import annotations

import boto3
import pytest

from toolfront.admission.admission import Admission
from toolfront.admission.ratelimit import BucketMemory
from toolfront.auth.actors import Actor, ActorKind
from toolfront.errors import RateLimitedError, TooManyPendingApprovalsError
from toolfront.settings import RateLimits

START = 1_800_000_000 * 1_000_000


def admission(**limits: int) -> Admission:
    return Admission(
        "RateLimitsTable",
        "IdempotencyTable",
        RateLimits(**limits),
        client=boto3.client("dynamodb"),
        memory=BucketMemory(clock_us=lambda: START),
    )


def admitted(gate: Admission, actor: Actor, ip: str) -> bool:
    try:
        gate.admit(actor, 1, None, source_ip=ip)
    except RateLimitedError:
        return False
    return True


def test_invented_session_tokens_from_one_address_share_its_guard(aws: None) -> None:
    gate = admission(public_ip_guard_per_minute=20)
    tokens = [Actor(ActorKind.CLIENT, f"invented-{n}") for n in range(40)]
    assert sum(admitted(gate, token, "203.0.113.7") for token in tokens) == 20
    assert admitted(gate, Actor(ActorKind.CLIENT, "another"), "198.51.100.1")  # another address


def test_calls_without_a_token_spend_the_guard_too(aws: None) -> None:
    gate = admission(public_ip_guard_per_minute=5, public_ip_per_minute=100)
    anonymous = Actor(ActorKind.ANONYMOUS, "203.0.113.7")
    assert [admitted(gate, anonymous, "203.0.113.7") for _ in range(7)] == [True] * 5 + [False] * 2


def test_keyed_calls_never_spend_the_guard(aws: None) -> None:
    gate = admission(public_ip_guard_per_minute=1)
    keyed = Actor(ActorKind.KEY, "k1", "alice")
    assert all(admitted(gate, keyed, "203.0.113.7") for _ in range(5))


def test_keyless_callers_open_at_most_the_cap_of_held_calls_per_hour(aws: None) -> None:
    gate = admission(public_holds_per_ip_per_hour=3)
    for _ in range(3):
        gate.open_public_hold("203.0.113.7")
    with pytest.raises(TooManyPendingApprovalsError) as refused:
        gate.open_public_hold("203.0.113.7")
    assert refused.value.http_status == 429
    assert 1 <= int(refused.value.headers["retry-after"]) <= 3600
    gate.open_public_hold("198.51.100.1")  # each address has its own count
