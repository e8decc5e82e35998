"""Leased keys (docs/operating.md, "Leased keys"): a warm process takes up to N units of a key's
bucket in its one conditional write and spends them without a request for at most the lease's age;
never more admitted than the bucket gave, a revocation or a lost permission refused once the lease
ends, and nothing changed for keys without a lease. The many-process proof is
test_lease_concurrency.py."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import boto3
import pytest

from tests.aws import counting_requests, key_store, seed
from tests.unit.test_keyed import READ, START, admitted, parsed, tat
from toolfront.admission.keyed import Demand, KeyGate
from toolfront.admission.ratelimit import BucketMemory
from toolfront.auth.keys import ParsedKey
from toolfront.auth.keystore import DynamoDBKeyStore
from toolfront.errors import UnauthenticatedError
from toolfront.settings import RateLimits

AGE_MS = 1000
WRITE = Demand("admin", "catalogue.products:write", "catalogue", 1)


class Clock:
    """The gate's clock (µs), moved by the test."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> int:
        return self.now

    def advance_ms(self, ms: float) -> None:
        self.now += int(ms * 1000)


def leased_gate(clock: Callable[[], int], *, limits: RateLimits | None = None) -> KeyGate:
    client = boto3.client("dynamodb")
    store = DynamoDBKeyStore("KeysTable", "PrincipalsTable", client)
    found = limits or RateLimits(lease_max_age_ms=AGE_MS)
    return KeyGate(store, "KeysTable", found, BucketMemory(clock_us=clock), client=client)


@pytest.fixture
def clock() -> Clock:
    return Clock()


def test_a_leased_key_writes_once_per_lease_and_answers_the_rest_without_a_request(
    aws: None, clock: Clock
) -> None:
    key = seed("alice", ["catalogue.*"], permissions=["catalogue"], lease=10)
    gate = leased_gate(clock)
    with counting_requests(gate.client) as sent:
        admitted(gate.admit(parsed(key), READ))  # the first call learns the lease: exact
        assert sent == ["UpdateItem"]
        for _ in range(30):
            admitted(gate.admit(parsed(key), READ))
    # 1 exact write, then one write per 10 units: the 30 calls took 3 leases.
    assert sent == ["UpdateItem"] * 4
    assert tat(key) is not None


def test_the_bucket_is_debited_the_whole_lease_so_no_process_admits_more_than_the_limit(
    aws: None, clock: Clock
) -> None:
    key = seed("alice", ["catalogue.*"], permissions=["catalogue"], rate_limit=30, lease=10)
    first, second = leased_gate(clock), leased_gate(clock)
    admitted_total = 0
    for _ in range(40):  # two warm processes taking turns, with no time passing
        for gate in (first, second):
            outcome = gate.admit(parsed(key), READ)
            assert outcome is not None
            admitted_total += outcome.refused is None and outcome.decision is not None
    assert admitted_total <= 30  # what the bucket held; units left in a lease are never given twice
    assert admitted_total >= 30 - 2 * 10  # at most one lease each left unspent


def test_a_lease_larger_than_what_is_left_takes_the_call_alone_and_refuses_exactly(
    aws: None, clock: Clock
) -> None:
    key = seed("alice", ["catalogue.*"], permissions=["catalogue"], rate_limit=5, lease=50)
    gate = leased_gate(clock)
    outcomes = [gate.admit(parsed(key), READ) for _ in range(7)]
    allowed = [o for o in outcomes if o is not None and o.refused is None]
    refused = [o for o in outcomes if o is not None and o.refused is not None]
    assert len(allowed) == 5 and len(refused) == 2  # exact: a lease of 50 never fits a limit of 5
    assert refused[0].refused is not None and "retry-after" in refused[0].refused.headers


def test_a_revoked_key_is_refused_once_the_lease_ends_and_not_before(aws: None, clock: Clock) -> None:
    key = seed("alice", ["catalogue.*"], permissions=["catalogue"], lease=10)
    gate = leased_gate(clock)
    admitted(gate.admit(parsed(key), READ))
    admitted(gate.admit(parsed(key), READ))  # takes a lease
    key_store().revoke_key(parsed(key).key_id, datetime.now(UTC))
    clock.advance_ms(AGE_MS - 1)
    admitted(gate.admit(parsed(key), READ))  # within the lease's age: its bounded staleness
    clock.advance_ms(1)
    with pytest.raises(UnauthenticatedError):
        gate.admit(parsed(key), READ)


def test_a_lost_permission_is_refused_once_the_lease_ends(aws: None, clock: Clock) -> None:
    key = seed("alice", ["catalogue.*"], permissions=["catalogue"], lease=10)
    gate = leased_gate(clock)
    admitted(gate.admit(parsed(key), READ))
    admitted(gate.admit(parsed(key), READ))
    key_store().revoke_permissions("alice", ["catalogue"], datetime.now(UTC))
    clock.advance_ms(AGE_MS)
    outcome = gate.admit(parsed(key), READ)
    assert outcome is not None and outcome.decision is None  # 403 (authorize says why), nothing spent


def test_a_wrong_secret_is_never_answered_from_a_lease(aws: None, clock: Clock) -> None:
    key = seed("alice", ["catalogue.*"], permissions=["catalogue"], lease=10)
    gate = leased_gate(clock)
    admitted(gate.admit(parsed(key), READ))
    admitted(gate.admit(parsed(key), READ))  # a lease is held
    forged = ParsedKey(parsed(key).key_id, "A" * 32)
    with counting_requests(gate.client) as sent, pytest.raises(UnauthenticatedError):
        gate.admit(forged, READ)
    assert sent == ["UpdateItem"]  # decided by the write, whose condition refuses the secret


def test_a_tool_the_leased_key_may_not_call_is_refused_from_the_lease_with_nothing_spent(
    aws: None, clock: Clock
) -> None:
    key = seed("alice", ["catalogue.products:read"], permissions=["catalogue"], lease=10)
    gate = leased_gate(clock)
    admitted(gate.admit(parsed(key), READ))
    admitted(gate.admit(parsed(key), READ))
    with counting_requests(gate.client) as sent:
        outcome = gate.admit(parsed(key), WRITE)
    assert outcome is not None and outcome.decision is None and sent == []
    # the lease still holds its units: the next read spends one of them, no request
    with counting_requests(gate.client) as sent:
        admitted(gate.admit(parsed(key), READ))
    assert sent == []


def test_the_headers_count_the_units_held_here_with_the_buckets(aws: None, clock: Clock) -> None:
    key = seed("alice", ["catalogue.*"], permissions=["catalogue"], rate_limit=100, lease=10)
    gate = leased_gate(clock)
    remaining = [admitted(gate.admit(parsed(key), READ)).decision for _ in range(4)]
    # 1 exact (99 left), then a lease of 10 taken (89 in the bucket) with 9 held here: 98, 97, 96.
    assert [d.remaining for d in remaining if d is not None] == [99, 98, 97, 96]


def test_a_key_without_a_lease_writes_once_per_call_as_before(aws: None, clock: Clock) -> None:
    key = seed("alice", ["catalogue.*"], permissions=["catalogue"])
    gate = leased_gate(clock)
    with counting_requests(gate.client) as sent:
        for _ in range(5):
            admitted(gate.admit(parsed(key), READ))
    assert sent == ["UpdateItem"] * 5


def test_a_lease_set_or_removed_later_is_seen_by_the_next_write(aws: None, clock: Clock) -> None:
    key = seed("alice", ["catalogue.*"], permissions=["catalogue"])
    gate = leased_gate(clock)
    store = key_store()
    admitted(gate.admit(parsed(key), READ))
    assert store.set_lease(parsed(key).key_id, 5).lease == 5
    with counting_requests(gate.client) as sent:
        for _ in range(11):  # learns the lease, then 2 leases of 5
            admitted(gate.admit(parsed(key), READ))
    assert sent == ["UpdateItem"] * 3
    assert store.set_lease(parsed(key).key_id, None).lease is None
    clock.advance_ms(AGE_MS)
    with counting_requests(gate.client) as sent:
        for _ in range(3):  # the lease ends, its write learns there is none: one write per call
            admitted(gate.admit(parsed(key), READ))
    assert sent == ["UpdateItem"] * 3


def test_a_leased_key_at_its_limit_sends_one_write_per_call_not_two(aws: None, clock: Clock) -> None:
    key = seed("alice", ["catalogue.*"], permissions=["catalogue"], rate_limit=20, lease=10)
    gate = leased_gate(clock)
    outcomes = [gate.admit(parsed(key), READ) for _ in range(20)]
    assert all(o is not None and o.refused is None for o in outcomes[:11])
    with counting_requests(gate.client) as sent:
        refused = [gate.admit(parsed(key), READ) for _ in range(3)]
    assert all(o is not None and o.refused is not None for o in refused)
    assert sent == ["UpdateItem"] * 3  # the item the failed write brings back says no room: 429 at once
    clock.advance_ms(3100)  # one unit refilled (20 a minute), the lease that did not fit still recent
    with counting_requests(gate.client) as sent:
        admitted(gate.admit(parsed(key), READ))
    assert sent == ["UpdateItem"] * 2  # once a lease age has passed, one try of a lease, then the call's
