"""A keyed call in one DynamoDB request: the key's item authenticates, authorizes and spends, and
grants and revokes keep every key's copy of its owner's permissions true."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest

from tests.aws import EVENT_ADMIN_KEY, counting_requests, key_store, seed
from tests.conftest import load_family
from tests.helpers import load_event
from toolfront.admission.admission import Admission
from toolfront.admission.idempotency import Claim
from toolfront.admission.keyed import Demand, KeyedAdmission, KeyGate
from toolfront.admission.ratelimit import BucketMemory
from toolfront.auth.authenticator import Authenticator
from toolfront.auth.keys import ParsedKey, parse_key
from toolfront.auth.keystore import MAX_KEYS_PER_OWNER, DynamoDBKeyStore, issue_key
from toolfront.errors import UnauthenticatedError
from toolfront.settings import RateLimits

START = 1_800_000_000_000_000  # µs (2027-01-15)
READ = Demand("admin", "catalogue.products:read", "catalogue", 1)

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


def gate(clock: Callable[[], int] = lambda: START) -> KeyGate:
    """A process's gate: its own client (its store's too, so counts see every request) and memory."""
    client = boto3.client("dynamodb")
    store = DynamoDBKeyStore("KeysTable", "PrincipalsTable", client)
    return KeyGate(store, "KeysTable", RateLimits(), BucketMemory(clock_us=clock), client=client)


def parsed(key: str) -> ParsedKey:
    found = parse_key(key)
    assert found is not None
    return found


def tat(key: str) -> int | None:
    item = boto3.client("dynamodb").get_item(TableName="KeysTable", Key={"key_id": {"S": parsed(key).key_id}})
    return int(item["Item"]["tat"]["N"]) if "tat" in item["Item"] else None


def admitted(outcome: KeyedAdmission | None) -> KeyedAdmission:
    assert outcome is not None and outcome.decision is not None and outcome.refused is None
    return outcome


# --- one request ------------------------------------------------------------------------------------


def test_a_keyed_call_is_one_update_item_that_answers_the_actor_and_the_decision(aws: None) -> None:
    key = seed("alice", ["catalogue.*"], permissions=["catalogue"], requires_approval=True)
    keys = gate()
    with counting_requests(keys.client) as sent:
        outcome = admitted(keys.admit(parsed(key), READ))
    assert sent == ["UpdateItem"]
    assert outcome.actor.principal == "alice" and outcome.actor.permissions == {"catalogue"}
    assert outcome.actor.scopes == {"catalogue.*"} and outcome.actor.requires_approval
    assert outcome.decision is not None and (outcome.decision.limit, outcome.decision.remaining) == (600, 599)


def test_a_wrong_secret_and_an_unknown_id_are_refused_alike_and_spend_nothing(aws: None) -> None:
    key = seed("alice", ["catalogue.*"], permissions=["catalogue"])
    keys = gate()
    admitted(keys.admit(parsed(key), READ))
    spent = tat(key)
    wrong = parsed(key).key_id

    def refused(presented: str) -> tuple[list[str], str]:
        with counting_requests(keys.client) as sent, pytest.raises(UnauthenticatedError) as error:
            keys.admit(parsed(presented), READ)
        return list(sent), error.value.message

    assert refused(f"tfk_{wrong}_{'w' * 32}") == refused(f"tfk_{'u' * 12}_{'w' * 32}")
    assert refused(f"tfk_{wrong}_{'w' * 32}") == (["UpdateItem"], "the API key is not valid")
    assert tat(key) == spent  # a wrong secret never spends the key's units
    assert tat(f"tfk_{'u' * 12}_{'w' * 32}".replace("u" * 12, wrong)) == spent
    item = boto3.client("dynamodb").get_item(TableName="KeysTable", Key={"key_id": {"S": "u" * 12}})
    assert "Item" not in item  # an unknown id's write made no item


def test_a_revoked_key_is_refused_from_the_next_call_on(aws: None) -> None:
    key = seed("alice", ["catalogue.*"], permissions=["catalogue"])
    keys = gate()
    admitted(keys.admit(parsed(key), READ))
    key_store().revoke_key(parsed(key).key_id, datetime.now(UTC))
    with pytest.raises(UnauthenticatedError, match="revoked"):
        keys.admit(parsed(key), READ)


def test_an_expired_key_is_refused_by_the_write_itself(aws: None) -> None:
    now = datetime.fromtimestamp(START / 1e6, UTC)
    key = seed("alice", ["catalogue.*"], permissions=["catalogue"], expires_at=now + timedelta(seconds=1))
    admitted(gate().admit(parsed(key), READ))
    spent = tat(key)
    with pytest.raises(UnauthenticatedError, match="expired"):
        gate(lambda: START + 2_000_000).admit(parsed(key), READ)
    assert tat(key) == spent


@pytest.mark.parametrize(
    ("scopes", "permissions", "refusal"),
    [
        (["catalogue.orders:*"], ["catalogue"], "scope"),
        (["catalogue.products:read"], ["orders"], "permission"),
    ],
)
def test_a_call_the_key_may_not_make_spends_nothing(
    aws: None, scopes: list[str], permissions: list[str], refusal: str
) -> None:
    key = seed("alice", scopes, permissions=permissions)
    outcome = gate().admit(parsed(key), READ)
    assert outcome is not None and outcome.decision is None and outcome.refused is None
    assert tat(key) is None  # the bucket was never written
    holds = (
        outcome.actor.has_scope(READ.scope or "") if refusal == "scope" else outcome.actor.holds("catalogue")
    )
    assert not holds


@pytest.mark.parametrize("held", ["catalogue.products:read", "catalogue.products:*", "catalogue.*"])
def test_each_form_of_a_held_scope_admits_in_the_one_write(aws: None, held: str) -> None:
    key = seed("alice", [held], permissions=["catalogue"])
    admitted(gate().admit(parsed(key), READ))


def test_a_public_tool_asks_no_scope_of_a_key(aws: None) -> None:
    key = seed("alice", ["orders.*"])
    admitted(gate().admit(parsed(key), Demand("public", "guest.sessions:write", None, 1)))


def test_over_budget_is_a_429_with_the_actor_known(aws: None) -> None:
    key = seed("alice", ["catalogue.*"], permissions=["catalogue"], rate_limit=2)
    keys = gate()
    admitted(keys.admit(parsed(key), READ))
    admitted(keys.admit(parsed(key), READ))
    outcome = keys.admit(parsed(key), READ)
    assert outcome is not None and outcome.refused is not None and outcome.actor.principal == "alice"
    assert outcome.refused.http_status == 429 and int(outcome.refused.headers["retry-after"]) >= 1


def test_a_keys_own_limit_is_learnt_once_per_process(aws: None) -> None:
    key = seed("alice", ["catalogue.*"], permissions=["catalogue"], rate_limit=5)
    keys = gate()
    with counting_requests(keys.client) as first:
        outcome = admitted(keys.admit(parsed(key), READ))
    with counting_requests(keys.client) as second:
        admitted(keys.admit(parsed(key), READ))
    assert (first, second) == (["UpdateItem", "UpdateItem"], ["UpdateItem"])
    assert outcome.decision is not None and outcome.decision.limit == 5


def test_a_cost_the_limit_can_never_admit_is_left_to_the_usual_path(aws: None) -> None:
    key = seed("alice", ["catalogue.*"], permissions=["catalogue"])
    assert gate().admit(parsed(key), Demand("admin", "catalogue.products:read", "catalogue", 601)) is None


def test_fifty_threads_on_a_key_of_twenty_units_admit_exactly_twenty(aws: None) -> None:
    key = seed("crowd", ["catalogue.*"], permissions=["catalogue"], rate_limit=20)
    for_threads = [gate() for _ in range(50)]  # a process each: no shared memory of the bucket
    barrier = threading.Barrier(50)

    def attempt(keys: KeyGate) -> bool:
        barrier.wait()
        outcome = keys.admit(parsed(key), READ)
        assert outcome is not None
        return outcome.refused is None

    with ThreadPoolExecutor(max_workers=50) as pool:
        assert sum(pool.map(attempt, for_threads)) == 20


def test_a_key_stored_before_keys_carried_permissions_reads_its_owner(aws: None) -> None:
    key = seed("alice", ["catalogue.*"], permissions=["catalogue"])
    client = boto3.client("dynamodb")
    client.update_item(
        TableName="KeysTable",
        Key={"key_id": {"S": parsed(key).key_id}},
        UpdateExpression="REMOVE owner_permissions",
    )
    keys = gate()
    with counting_requests(keys.client) as sent:
        outcome = admitted(keys.admit(parsed(key), READ))
    assert outcome.actor.permissions == {"catalogue"}
    assert sent == ["UpdateItem", "BatchGetItem"]


def test_a_key_revoked_after_it_was_read_is_refused_by_the_claim(aws: None) -> None:
    key = seed("alice", ["catalogue.*"], permissions=["catalogue"])
    client = boto3.client("dynamodb")
    actor = Authenticator(key_store()).authenticate({"authorization": f"Bearer {key}"}, "")
    key_store().revoke_key(parsed(key).key_id, datetime.now(UTC))
    admission = Admission(
        "RateLimitsTable", "IdempotencyTable", RateLimits(), keys_table="KeysTable", client=client
    )
    claim = Claim("key#x", "catalogue.create_product", "k", "f" * 64, "req", START, 60_000_000)
    with pytest.raises(UnauthenticatedError, match="revoked"):
        admission.admit(actor, 1, claim)


# --- grants and revokes reach every key -------------------------------------------------------------


def copies(owner: str) -> dict[str, frozenset[str] | None]:
    return {r.key_id: r.owner_permissions for r in key_store().list_keys() if r.owner == owner}


def test_grants_and_revokes_update_every_key_of_the_owner_in_one_transaction(aws: None) -> None:
    store = key_store()
    for _ in range(3):
        issue_key(store, owner="alice", scopes=["catalogue.*"])
    issue_key(store, owner="bob", scopes=["catalogue.*"])
    with counting_requests(store.client) as sent:
        store.grant("alice", ["catalogue", "orders"], datetime.now(UTC))
    assert sent == ["GetItem", "TransactWriteItems"]
    assert set(copies("alice").values()) == {frozenset({"catalogue", "orders"})}
    assert set(copies("bob").values()) == {frozenset()}
    store.revoke_permissions("alice", ["orders"], datetime.now(UTC))
    assert set(copies("alice").values()) == {frozenset({"catalogue"})}


def test_a_grant_that_fails_changes_nothing(aws: None) -> None:
    store = key_store()
    issue_key(store, owner="alice", scopes=["catalogue.*"])
    store.grant("alice", ["catalogue"], datetime.now(UTC))

    class Refusing:
        """The store's client, refusing every transaction as DynamoDB does when throttled."""

        def __getattr__(self, name: str) -> Any:
            return getattr(store.client, name)

        def transact_write_items(self, **_: Any) -> Any:
            from botocore.exceptions import ClientError

            error = {"Error": {"Code": "ThrottlingException", "Message": "slow down"}}
            raise ClientError(error, "TransactWriteItems")  # type: ignore[arg-type]

    broken = type(store)("KeysTable", "PrincipalsTable", Refusing())
    with pytest.raises(Exception, match="store did not answer"):
        broken.grant("alice", ["orders"], datetime.now(UTC))
    assert set(copies("alice").values()) == {frozenset({"catalogue"})}
    assert store.get_principals(["alice"])[0].permissions == {"catalogue"}


def test_a_revoked_key_leaves_its_owners_list_and_a_vanished_key_is_dropped(aws: None) -> None:
    store = key_store()
    _, kept = issue_key(store, owner="alice", scopes=["catalogue.*"])
    _, revoked = issue_key(store, owner="alice", scopes=["catalogue.*"])
    _, vanished = issue_key(store, owner="alice", scopes=["catalogue.*"])
    store.revoke_key(revoked.key_id, datetime.now(UTC))
    boto3.client("dynamodb").delete_item(TableName="KeysTable", Key={"key_id": {"S": vanished.key_id}})
    principal = store.grant("alice", ["catalogue"], datetime.now(UTC))
    assert principal.key_ids == {kept.key_id}
    assert store.get_principals(["alice"])[0].key_ids == {kept.key_id}
    assert copies("alice")[kept.key_id] == {"catalogue"}


def test_grants_racing_new_keys_leave_every_copy_true(aws: None) -> None:
    store = key_store()
    barrier = threading.Barrier(12)

    def grant(permission: str) -> None:
        barrier.wait()
        key_store().grant("alice", [permission], datetime.now(UTC))

    def create(_: str) -> None:
        barrier.wait()
        issue_key(key_store(), owner="alice", scopes=["catalogue.*"])

    with ThreadPoolExecutor(12) as pool:
        jobs = [pool.submit(grant, f"p{i}") for i in range(6)] + [pool.submit(create, "") for _ in range(6)]
        for job in jobs:
            job.result()
    held = store.get_principals(["alice"])[0]
    assert held.permissions == {f"p{i}" for i in range(6)}
    assert len(copies("alice")) == 6 and set(copies("alice").values()) == {held.permissions}
    assert held.key_ids == set(copies("alice"))


def test_an_owner_holds_at_most_the_keys_a_transaction_can_update(aws: None) -> None:
    client = boto3.client("dynamodb")
    ids = {"SS": [f"k{i:011d}" for i in range(MAX_KEYS_PER_OWNER)]}
    client.put_item(
        TableName="PrincipalsTable",
        Item={"principal_id": {"S": "alice"}, "key_ids": ids, "version": {"N": "1"}},
    )
    with pytest.raises(ValueError, match="revoke one first"):
        issue_key(key_store(), owner="alice", scopes=["catalogue.*"])


def test_a_taken_key_id_is_refused(aws: None) -> None:
    key = seed("alice", ["catalogue.*"])
    with pytest.raises(ValueError, match="exists already"):
        issue_key(key_store(), owner="bob", scopes=["catalogue.*"], key=key)


# --- through a deployed function --------------------------------------------------------------------


def rest(handler: Handler, tool: str, data: dict[str, Any], key: str = EVENT_ADMIN_KEY) -> dict[str, Any]:
    event = load_event("catalogue_create_product", body=json.dumps(data))
    event["rawPath"] = f"/v1/tools/catalogue/{tool}"
    event["pathParameters"] = {"verb_noun": tool}
    event["headers"] = {**event["headers"], "authorization": f"Bearer {key}"}
    return handler(event, None)


def test_a_keyed_read_through_the_catalogue_is_one_request_of_cores(aws: None) -> None:
    from toolfront import wiring

    seed("events-admin", ["catalogue.*"], permissions=["catalogue"], key=EVENT_ADMIN_KEY)
    handler: Handler = load_family("catalogue").lambda_handler
    rest(handler, "get_product", {"sku": "NONE-1"})  # the process's first call builds its clients
    client = wiring.key_store().client
    with counting_requests(client) as sent:
        answer = rest(handler, "get_product", {"sku": "NONE-1"})
    assert answer["statusCode"] == 404
    assert sent == ["UpdateItem", "GetItem"]  # the key and its units; the handler's read
    # spent from the key's bucket (599 or 598 left: a unit refills every 100 ms)
    assert re.match(r'"default";r=59[89];', answer["headers"]["ratelimit"])


def test_a_scope_refusal_through_the_catalogue_spends_nothing(aws: None) -> None:
    key = seed("reader", ["catalogue.orders:read"], permissions=["catalogue"])
    handler: Handler = load_family("catalogue").lambda_handler
    answer = rest(handler, "get_product", {"sku": "NONE-1"}, key=key)
    assert answer["statusCode"] == 403 and json.loads(answer["body"])["error"]["code"] == "missing_scope"
    assert tat(key) is None
