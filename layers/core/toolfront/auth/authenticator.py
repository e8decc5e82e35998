"""Authentication: the credentials of a request become an Actor (or a 401).

A key is one item of the key table, read on every call: its revocation, expiry and its copy of the
owner's permissions (kept true by grants and revokes, ``auth.keystore``) are live. A tool call with
a key does better still: ``admission.keyed`` authenticates it with its rate-limit write, and uses
``live_key`` below to tell why a refused one was refused.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime

from toolfront.auth.actors import Actor, ActorKind
from toolfront.auth.cognito import CognitoVerifier
from toolfront.auth.keys import (
    KeyRecord,
    ParsedKey,
    PrincipalRecord,
    hash_secret,
    looks_like_key,
    parse_key,
    secret_matches,
)
from toolfront.auth.keystore import KeyStore
from toolfront.errors import UnauthenticatedError

INVALID_KEY = "the API key is not valid"
_NO_HASH = hash_secret("\x00no-secret")  # compared against when the key id is unknown


def presented_credential(headers: Mapping[str, str]) -> str | None:
    """The key or token of a request (``Authorization: Bearer`` or ``X-Api-Key``), if any."""
    authorization = headers.get("authorization")
    if authorization is not None:
        scheme, _, value = authorization.strip().partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            raise UnauthenticatedError("use 'Authorization: Bearer <key or access token>'")
        return value.strip()
    api_key = headers.get("x-api-key")
    return api_key.strip() if api_key is not None else None


def live_key(parsed: ParsedKey, record: KeyRecord | None, now: datetime) -> KeyRecord:
    """``record`` when the presented secret is its own and the key is live; else the 401 that applies.

    The hash is compared in constant time, and an unknown id compares against a hash too, so a
    refusal takes as long whatever the reason: key ids cannot be probed by timing.
    """
    matches = secret_matches(parsed.secret, record.secret_hash if record else _NO_HASH)
    refusal = dead_key(record if matches else None, now)
    if refusal is not None:
        raise refusal
    assert record is not None  # dead_key refuses a missing record
    return record


def dead_key(record: KeyRecord | None, now: datetime) -> UnauthenticatedError | None:
    """The 401 for a key that is gone (or was never there), revoked or expired; None when it is live."""
    if record is None:
        return UnauthenticatedError(INVALID_KEY)
    if record.revoked_at is not None:
        return UnauthenticatedError("this API key has been revoked")
    if not record.usable_at(now):
        return UnauthenticatedError("this API key has expired")
    return None


def actor_for_key(record: KeyRecord, permissions: frozenset[str]) -> Actor:
    """The actor of a live key: its scopes, its owner's permissions now, its own bucket and approval rule."""
    return Actor(
        ActorKind.KEY,
        record.key_id,
        principal=record.owner,
        scopes=record.scopes,
        permissions=permissions,
        requires_approval=record.requires_approval,
        rate_limit=record.rate_limit,
    )


def permissions_of(groups: list[PrincipalRecord]) -> frozenset[str]:
    """A Cognito user's permissions: every permission its groups (principals) hold now."""
    return frozenset().union(*(g.permissions for g in groups))


def actor_for_user(
    sub: str, scopes: frozenset[str], groups: tuple[str, ...], principal: str | None, store: KeyStore
) -> Actor:
    """The actor of a Cognito user: its token's scopes, and the permissions its groups hold now."""
    held = store.get_principals(list(groups)) if groups else []
    return Actor(
        ActorKind.COGNITO,
        sub,
        principal=principal,
        scopes=scopes,
        permissions=permissions_of(held),
        groups=groups,
    )


class Authenticator:
    """Turns request credentials into an Actor."""

    def __init__(
        self,
        store: KeyStore,
        cognito: CognitoVerifier | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._store = store
        self._cognito = cognito
        self._clock = clock

    def authenticate(self, headers: Mapping[str, str], source_ip: str) -> Actor:
        credential = presented_credential(headers)
        if credential is None:
            return Actor(ActorKind.ANONYMOUS, source_ip)
        if looks_like_key(credential):
            return self._key_actor(credential)
        if self._cognito is None:
            raise UnauthenticatedError(INVALID_KEY)
        return self._cognito_actor(credential)

    def _key_actor(self, presented: str) -> Actor:
        parsed = parse_key(presented)
        if parsed is None:
            raise UnauthenticatedError(INVALID_KEY)
        record = live_key(parsed, self._store.get_key(parsed.key_id), self._clock())
        return actor_for_key(record, self._store.owner_permissions(record))

    def _cognito_actor(self, token: str) -> Actor:
        assert self._cognito is not None
        verified = self._cognito.verify(token)
        return actor_for_user(verified.sub, verified.scopes, verified.groups, verified.sub, self._store)
