"""API keys: format, hashing, the key table, revocation and expiry, live permissions, one request."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from tests.aws import counting_requests, key_store, seed
from toolfront.auth.actors import Actor, ActorKind, scope_covers
from toolfront.auth.authenticator import Authenticator, presented_credential
from toolfront.auth.keys import generate_key, hash_secret, parse_key, secret_matches
from toolfront.errors import UnauthenticatedError


def bearer(key: str) -> dict[str, str]:
    return {"authorization": f"Bearer {key}"}


# --- key format and hashing ---------------------------------------------------------------------


def test_generate_key_has_the_documented_format() -> None:
    key, parsed = generate_key()
    assert key == f"tfk_{parsed.key_id}_{parsed.secret}"
    assert parse_key(key) == parsed
    assert re.fullmatch(r"[a-z0-9]{12}", parsed.key_id)
    assert re.fullmatch(r"[A-Za-z0-9_-]{32}", parsed.secret)


@pytest.mark.parametrize(
    "presented",
    [
        "tfk_short_" + "a" * 32,
        "tfk_ABCDEFGHIJKL_" + "a" * 32,
        "tfk_abcdefghijkl_" + "a" * 31,
        "abc",
        "tfk_abcdefghijkl",
    ],
)
def test_parse_key_refuses_other_shapes(presented: str) -> None:
    assert parse_key(presented) is None


def test_secret_underscores_belong_to_the_secret() -> None:
    parsed = parse_key("tfk_abcdefghijkl_" + "_" * 32)
    assert parsed is not None and parsed.secret == "_" * 32


def test_secret_hash_is_not_the_secret_and_matches_only_it() -> None:
    stored = hash_secret("s" * 32)
    assert "s" * 32 not in stored
    assert secret_matches("s" * 32, stored)
    assert not secret_matches("t" * 32, stored)


def test_repr_of_parsed_key_hides_the_secret() -> None:
    _, parsed = generate_key()
    assert parsed.secret not in repr(parsed)


# --- scopes ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("held", "needed", "covers"),
    [
        ("catalogue.products:read", "catalogue.products:read", True),
        ("catalogue.products:*", "catalogue.products:write", True),
        ("catalogue.*", "catalogue.orders:write", True),
        ("catalogue.products:read", "catalogue.products:write", False),
        ("catalogue.products:*", "catalogue.productsx:read", False),
        ("catalogue.*", "catalogues.products:read", False),
        ("*", "catalogue.products:read", False),
    ],
)
def test_scope_covers_exact_resource_wildcard_and_module_wildcard(
    held: str, needed: str, covers: bool
) -> None:
    assert scope_covers(held, needed) is covers


# --- credentials in headers ---------------------------------------------------------------------------


def test_presented_credential_reads_bearer_then_x_api_key() -> None:
    assert presented_credential({"authorization": "Bearer abc"}) == "abc"
    assert presented_credential({"authorization": "bearer  abc "}) == "abc"
    assert presented_credential({"x-api-key": "xyz"}) == "xyz"
    assert presented_credential({}) is None


@pytest.mark.parametrize("value", ["Basic dXNlcjpwYXNz", "Bearer", "Bearer   ", "tfk_abc"])
def test_presented_credential_other_schemes_are_refused(value: str) -> None:
    with pytest.raises(UnauthenticatedError):
        presented_credential({"authorization": value})


# --- the key table ----------------------------------------------------------------------------------


@pytest.fixture
def authn(aws: None) -> Authenticator:
    return Authenticator(key_store())


def test_valid_key_becomes_an_actor_with_live_permissions(authn: Authenticator) -> None:
    key = seed("alice", ["catalogue.*"], permissions=["catalogue"], requires_approval=True)
    actor = authn.authenticate(bearer(key), "198.51.100.1")
    assert actor == Actor(
        ActorKind.KEY,
        key.split("_")[1],
        principal="alice",
        scopes=frozenset({"catalogue.*"}),
        permissions=frozenset({"catalogue"}),
        requires_approval=True,
    )


def test_x_api_key_header_is_accepted(authn: Authenticator) -> None:
    key = seed("alice", ["catalogue.*"])
    assert authn.authenticate({"x-api-key": key}, "").principal == "alice"


def test_no_credentials_is_an_anonymous_actor_keyed_by_ip(authn: Authenticator) -> None:
    actor = authn.authenticate({}, "198.51.100.1")
    assert (actor.kind, actor.id, actor.authenticated) == (ActorKind.ANONYMOUS, "198.51.100.1", False)


@pytest.mark.parametrize("variant", ["wrong_secret", "unknown_id", "malformed", "not_a_key"])
def test_invalid_keys_are_401_without_saying_which_part_is_wrong(authn: Authenticator, variant: str) -> None:
    key = seed("alice", ["catalogue.*"])
    presented = {
        "wrong_secret": key[:-1] + ("A" if key[-1] != "A" else "B"),
        "unknown_id": "tfk_zzzzzzzzzzzz_" + key[-32:],
        "malformed": "tfk_nope",
        "not_a_key": "some-opaque-token",
    }[variant]
    with pytest.raises(UnauthenticatedError, match=r"^the API key is not valid$"):
        authn.authenticate(bearer(presented), "")


def test_revoked_key_is_refused_on_the_next_call(authn: Authenticator) -> None:
    key = seed("alice", ["catalogue.*"])
    authn.authenticate(bearer(key), "")  # warm: the owner is remembered
    key_store().revoke_key(key.split("_")[1], datetime.now(UTC))
    with pytest.raises(UnauthenticatedError, match="revoked"):
        authn.authenticate(bearer(key), "")


def test_expired_key_is_refused(authn: Authenticator) -> None:
    key = seed("alice", ["catalogue.*"], expires_at=datetime.now(UTC) + timedelta(hours=1))
    assert authn.authenticate(bearer(key), "").principal == "alice"
    later = Authenticator(key_store(), clock=lambda: datetime.now(UTC) + timedelta(hours=2))
    with pytest.raises(UnauthenticatedError, match="expired"):
        later.authenticate(bearer(key), "")


def test_permission_revoked_takes_effect_on_the_next_call(authn: Authenticator) -> None:
    key = seed("alice", ["catalogue.*"], permissions=["catalogue", "orders"])
    assert authn.authenticate(bearer(key), "").permissions == {"catalogue", "orders"}
    key_store().revoke_permissions("alice", ["catalogue"], datetime.now(UTC))
    assert authn.authenticate(bearer(key), "").permissions == {"orders"}


def test_owner_without_principal_record_holds_no_permission(authn: Authenticator) -> None:
    key = seed("nobody", ["catalogue.*"])
    assert authn.authenticate(bearer(key), "").permissions == frozenset()


def test_a_key_lookup_is_one_dynamodb_request_carrying_its_owners_permissions(authn: Authenticator) -> None:
    key = seed("alice", ["catalogue.*"], permissions=["catalogue"])
    store = key_store()
    with counting_requests(store.client) as first:
        actor = Authenticator(store).authenticate(bearer(key), "")
    assert first == ["GetItem"]
    assert actor.permissions == {"catalogue"}


def test_key_listing_and_revocation_of_unknown_key(aws: None) -> None:
    seed("alice", ["catalogue.*"], description="laptop")
    store = key_store()
    (record,) = store.list_keys()
    assert record.describe()["description"] == "laptop"
    assert "secret_hash" not in record.describe()
    with pytest.raises(Exception, match="no key with id"):
        store.revoke_key("zzzzzzzzzzzz", datetime.now(UTC))


def test_an_unknown_key_id_makes_the_requests_of_a_known_one(aws: None) -> None:
    """A refused unknown id and a wrong secret of a known id cost the same DynamoDB requests."""
    known_id = seed("alice", ["catalogue.*"], permissions=["catalogue"]).split("_")[1]
    store = key_store()
    authenticator = Authenticator(store)

    def refused_with(key: str) -> list[str]:
        with counting_requests(store.client) as seen, pytest.raises(UnauthenticatedError):
            authenticator.authenticate(bearer(key), "")
        return list(seen)

    wrong_secret = f"tfk_{known_id}_{'w' * 32}"
    unknown_id = f"tfk_{'u' * 12}_{'w' * 32}"
    assert refused_with(unknown_id) == refused_with(wrong_secret) == ["GetItem"]
