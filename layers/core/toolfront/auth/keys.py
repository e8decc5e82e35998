"""API keys: the ``tfk_<key_id>_<secret>`` format, secret hashing and the stored records.

Secrets are 32 random URL-safe characters (192 bits), so a plain SHA-256 is enough to make a
stolen table useless (no password-style KDF needed); the comparison is constant-time.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import string
from dataclasses import dataclass, field
from datetime import datetime

from toolfront.encoding import rfc3339

KEY_PREFIX = "tfk_"
KEY_ID_LENGTH = 12
SECRET_LENGTH = 32
_KEY = re.compile(r"tfk_([a-z0-9]{12})_([A-Za-z0-9_-]{32})")
_KEY_ID_ALPHABET = string.ascii_lowercase + string.digits


@dataclass(frozen=True, slots=True)
class ParsedKey:
    key_id: str
    secret: str = field(repr=False)


def parse_key(presented: str) -> ParsedKey | None:
    """Split a presented key into id and secret; ``None`` when it is not in the key format."""
    match = _KEY.fullmatch(presented)
    return ParsedKey(match.group(1), match.group(2)) if match else None


def looks_like_key(presented: str) -> bool:
    return presented.startswith(KEY_PREFIX)


def generate_key() -> tuple[str, ParsedKey]:
    """A new random key: the string to hand out once, and its parts."""
    key_id = "".join(secrets.choice(_KEY_ID_ALPHABET) for _ in range(KEY_ID_LENGTH))
    secret = secrets.token_urlsafe(24)  # 24 bytes -> exactly 32 URL-safe characters
    return f"{KEY_PREFIX}{key_id}_{secret}", ParsedKey(key_id, secret)


def hash_secret(secret: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(secret.encode()).digest()).decode().rstrip("=")


def secret_matches(secret: str, stored_hash: str) -> bool:
    return hmac.compare_digest(hash_secret(secret), stored_hash)


@dataclass(frozen=True, slots=True)
class KeyRecord:
    """A key as stored: never the secret, only its hash."""

    key_id: str
    owner: str
    secret_hash: str = field(repr=False)
    scopes: frozenset[str]
    created_at: datetime
    requires_approval: bool = False
    expires_at: datetime | None = None
    revoked_at: datetime | None = None
    description: str = ""
    rate_limit: int | None = None  # units per minute; None: the audience default
    # Units a warm function may take at once and spend locally (admission.leases); None: every call
    # is decided by its own write.
    lease: int | None = None
    # The owner's permissions as the key item carries them (grants and revokes update every key of
    # the owner in the same transaction); None on a key stored before keys carried them.
    owner_permissions: frozenset[str] | None = None

    def usable_at(self, now: datetime) -> bool:
        if self.revoked_at is not None:
            return False
        return self.expires_at is None or now < self.expires_at

    def describe(self) -> dict[str, object]:
        """The key as JSON data for listings (no hash)."""
        return {
            "key_id": self.key_id,
            "owner": self.owner,
            "scopes": sorted(self.scopes),
            "requires_approval": self.requires_approval,
            "created_at": _rfc3339(self.created_at),
            "expires_at": _rfc3339(self.expires_at),
            "revoked_at": _rfc3339(self.revoked_at),
            "description": self.description,
            "rate_limit": self.rate_limit,
            "lease": self.lease,
        }


@dataclass(frozen=True, slots=True)
class PrincipalRecord:
    """An owner of keys (or a Cognito group), the permissions it holds, and the keys that carry a copy
    of them (``version`` counts the changes, so a change made from a stale read is refused)."""

    principal_id: str
    permissions: frozenset[str]
    key_ids: frozenset[str] = frozenset()
    version: int = 0


def _rfc3339(moment: datetime | None) -> str | None:
    return None if moment is None else rfc3339(moment, "microseconds")
