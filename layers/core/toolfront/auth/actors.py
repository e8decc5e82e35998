"""Who is calling: the actor behind a call, the grammar of scopes and permissions, and the rule that
matches held scopes to a tool's."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum

_WORD = r"[a-z][a-z0-9_]*"
#: A tool's scope: ``<module>.<resource>:<action>`` (``catalogue.products:read``).
TOOL_SCOPE = re.compile(rf"{_WORD}\.{_WORD}:{_WORD}")
#: A scope a key or token may hold: a tool scope, ``<module>.<resource>:*`` or ``<module>.*``.
HELD_SCOPE = re.compile(rf"{_WORD}\.(?:\*|{_WORD}:(?:\*|{_WORD}))")
#: A permission a principal holds and a tool names (``catalogue``).
PERMISSION = re.compile(r"[a-z][a-z0-9_.:-]{0,99}")


class ActorKind(StrEnum):
    KEY = "key"  # an API key of the key table; id = key id
    COGNITO = "cognito"  # a Cognito access token; id = sub
    CLIENT = "client"  # a public tool's client token; id = base64url(sha256(token))
    ANONYMOUS = "anonymous"  # no credentials (public tools only); id = source IP


@dataclass(frozen=True, slots=True)
class Actor:
    """The caller as the pipeline knows it. Never carries the key or token itself."""

    kind: ActorKind
    id: str
    principal: str | None = None
    scopes: frozenset[str] = field(default_factory=frozenset)
    permissions: frozenset[str] = field(default_factory=frozenset)
    requires_approval: bool = False
    rate_limit: int | None = None  # units per minute of this key, over the audience default
    groups: tuple[str, ...] = ()  # Cognito groups (the principals whose permissions it holds)

    @property
    def authenticated(self) -> bool:
        """Whether a key or an access token stands behind the call (admin tools need one)."""
        return self.kind in (ActorKind.KEY, ActorKind.COGNITO)

    def with_client_token(self, token_hash: str | None) -> Actor:
        """The caller a public tool's client token makes: an anonymous caller presenting one is that
        client (``CLIENT``, its id the token's hash); anyone else stays who they are."""
        if self.kind is ActorKind.ANONYMOUS and token_hash:
            return Actor(ActorKind.CLIENT, token_hash)
        return self

    @property
    def client_token_hash(self) -> str | None:
        """The hash of the client token that identifies this caller (a ``CLIENT`` only)."""
        return self.id if self.kind is ActorKind.CLIENT else None

    def has_scope(self, scope: str) -> bool:
        """Whether one held scope covers ``scope`` (exact, ``<module>.<resource>:*`` or ``<module>.*``)."""
        return any(scope_covers(held, scope) for held in self.scopes)

    def holds(self, permission: str) -> bool:
        return permission in self.permissions

    def describe(self) -> dict[str, object]:
        """The actor as JSON data (what ``system.get_actor`` answers)."""
        return {
            "kind": str(self.kind),
            "id": self.id,
            "principal": self.principal,
            "scopes": sorted(self.scopes),
            "permissions": sorted(self.permissions),
            "requires_approval": self.requires_approval,
        }


def scope_covers(held: str, needed: str) -> bool:
    """Whether the held scope grants the needed ``<module>.<resource>:<action>`` scope."""
    if held == needed:
        return True
    if held.endswith(":*"):
        return needed.startswith(held[:-1])  # "catalogue.products:" prefix
    if held.endswith(".*"):
        return needed.startswith(held[:-1])  # "catalogue." prefix
    return False
