"""Authentication: the credentials of a request become an Actor (or a 401).

A key is checked against the key table and its owner's permissions are read live, both in one
DynamoDB request once the key's owner is known (a key's owner never changes, so it is remembered
per process; revocation, expiry and permissions are still read on every call).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping
from datetime import UTC, datetime

from toolfront.auth.actors import Actor, ActorKind
from toolfront.auth.cognito import CognitoVerifier
from toolfront.auth.keys import (
    KeyRecord,
    PrincipalRecord,
    hash_secret,
    looks_like_key,
    parse_key,
    secret_matches,
)
from toolfront.auth.keystore import KeyStore
from toolfront.errors import UnauthenticatedError

OWNER_CACHE_SIZE = 4096
_INVALID_KEY = "the API key is not valid"
_NO_OWNER = "\x00no-owner"  # a principal id no principal has (ids are lowercase words)
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


def actor_for_key(record: KeyRecord, principal: PrincipalRecord | None) -> Actor:
    """The actor of a live key: its scopes, its owner's permissions now, its own bucket and approval rule."""
    return Actor(
        ActorKind.KEY,
        record.key_id,
        principal=record.owner,
        scopes=record.scopes,
        permissions=principal.permissions if principal else frozenset(),
        requires_approval=record.requires_approval,
        rate_limit=record.rate_limit,
    )


def permissions_of(groups: list[PrincipalRecord]) -> frozenset[str]:
    """A Cognito user's permissions: every permission its groups (principals) hold now."""
    return frozenset().union(*(g.permissions for g in groups))


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
        self._owners: OrderedDict[str, str] = OrderedDict()

    def authenticate(self, headers: Mapping[str, str], source_ip: str) -> Actor:
        credential = presented_credential(headers)
        if credential is None:
            return Actor(ActorKind.ANONYMOUS, source_ip)
        if looks_like_key(credential):
            return self._key_actor(credential)
        if self._cognito is None:
            raise UnauthenticatedError(_INVALID_KEY)
        return self._cognito_actor(credential)

    def _key_actor(self, presented: str) -> Actor:
        parsed = parse_key(presented)
        if parsed is None:
            raise UnauthenticatedError(_INVALID_KEY)
        # An unknown key id takes the path of a known one (the same requests, the same hash
        # comparison), so its refusal takes as long as a wrong secret's: ids cannot be probed.
        owner = self._owners.get(parsed.key_id)
        if owner is not None:
            record, principal = self._store.get_key_and_principal(parsed.key_id, owner or _NO_OWNER)
            if record is not None and record.owner != owner:  # created since it was probed
                principals = self._store.get_principals([record.owner])
                principal = principals[0] if principals else None
        else:
            record = self._store.get_key(parsed.key_id)
            principals = self._store.get_principals([record.owner if record else _NO_OWNER])
            principal = principals[0] if principals else None
        matches = secret_matches(parsed.secret, record.secret_hash if record else _NO_HASH)
        # Remembered whatever the secret (an owner is no secret): next time one request, for all.
        self._remember_owner(parsed.key_id, record.owner if record else "")
        if record is None or not matches:
            raise UnauthenticatedError(_INVALID_KEY)
        if record.revoked_at is not None:
            raise UnauthenticatedError("this API key has been revoked")
        if not record.usable_at(self._clock()):
            raise UnauthenticatedError("this API key has expired")
        return actor_for_key(record, principal)

    def _remember_owner(self, key_id: str, owner: str) -> None:
        self._owners[key_id] = owner
        self._owners.move_to_end(key_id)
        if len(self._owners) > OWNER_CACHE_SIZE:
            self._owners.popitem(last=False)

    def _cognito_actor(self, token: str) -> Actor:
        assert self._cognito is not None
        verified = self._cognito.verify(token)
        groups = self._store.get_principals(list(verified.groups)) if verified.groups else []
        return Actor(
            ActorKind.COGNITO,
            verified.sub,
            principal=verified.sub,
            scopes=verified.scopes,
            permissions=permissions_of(groups),
            groups=verified.groups,
        )
