"""Cognito access tokens: signature against the pool's JWKS, issuer, token use, client, expiry.

PyJWT (with cryptography) is imported on the first token, so key-only callers never pay for it.
"""

from __future__ import annotations

import threading
from collections.abc import Container
from dataclasses import dataclass
from typing import Any

from toolfront.errors import UnauthenticatedError
from toolfront.settings import CognitoSettings

JWKS_CACHE_SECONDS = 3600  # Cognito rotates signing keys rarely; a new kid triggers a refetch
LEEWAY_SECONDS = 30


@dataclass(frozen=True, slots=True)
class VerifiedToken:
    sub: str
    scopes: frozenset[str]
    groups: tuple[str, ...]


class CognitoVerifier:
    """Verifies access tokens of one user pool; the JWKS is fetched once and cached.

    ``registered`` holds the app clients the sign-in facade registered: their tokens are accepted
    besides those of the stack's own clients (``settings.client_ids``).
    """

    def __init__(self, settings: CognitoSettings, registered: Container[str] = frozenset()) -> None:
        self._settings = settings
        self._registered = registered
        self._jwks: Any = None
        self._lock = threading.Lock()

    def _client(self) -> Any:
        if self._jwks is None:
            with self._lock:
                if self._jwks is None:
                    import jwt

                    self._jwks = jwt.PyJWKClient(
                        self._settings.jwks_url, cache_jwk_set=True, lifespan=JWKS_CACHE_SECONDS, timeout=5
                    )
        return self._jwks

    def verify(self, token: str) -> VerifiedToken:
        """The token's subject, tool scopes and groups; raises ``UnauthenticatedError`` otherwise."""
        import jwt

        try:
            signing_key = self._client().get_signing_key_from_jwt(token)
            claims = jwt.decode(
                token,
                signing_key.key,
                algorithms=["RS256"],
                issuer=self._settings.issuer,
                leeway=LEEWAY_SECONDS,
                options={"require": ["exp", "iss", "sub", "token_use"], "verify_aud": False},
            )
        except jwt.PyJWKClientConnectionError as exc:
            raise UnauthenticatedError("the token could not be checked (signing keys unavailable)") from exc
        except jwt.PyJWTError as exc:
            raise UnauthenticatedError("the bearer token is invalid or expired") from exc
        if claims.get("token_use") != "access":
            raise UnauthenticatedError("an access token is required (this is an id token)")
        client_id, sub = claims.get("client_id"), claims.get("sub")
        if not isinstance(client_id, str) or not self._audience(client_id):
            raise UnauthenticatedError("the token was issued to another app client")
        scope, groups = claims.get("scope", ""), claims.get("cognito:groups", [])
        # Claims of another shape than Cognito's are refused, never coerced (a string is not a list).
        if not (isinstance(sub, str) and sub and isinstance(scope, str)) or not _strings(groups):
            raise UnauthenticatedError("the bearer token's claims are not those of a Cognito access token")
        scopes = self._tool_scopes(scope)
        if not scopes:  # a token for Cognito's own APIs (aws.cognito.signin.user.admin), not for this one
            raise UnauthenticatedError("the token carries no scope of this API")
        return VerifiedToken(sub=sub, scopes=scopes, groups=tuple(groups))

    def _audience(self, client_id: str) -> bool:
        # The stack's own clients first: no table read for them.
        return client_id in self._settings.client_ids or client_id in self._registered

    def _tool_scopes(self, claim: str) -> frozenset[str]:
        # Custom scopes arrive as "<resource server id>/<scope>"; Cognito's own scopes have no prefix.
        prefix = self._settings.scope_prefix + "/"
        return frozenset(s[len(prefix) :] for s in claim.split() if s.startswith(prefix))


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)
