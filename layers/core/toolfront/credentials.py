"""Which names carry credentials, and the refusal of credentials sent in a URL.

Query strings end up in access logs, browser history and proxies, so a credential there is
refused before anything else happens (and its value is never logged).
"""

from __future__ import annotations

from collections.abc import Mapping

from toolfront.errors import CredentialInUrlError

CREDENTIAL_NAMES = frozenset(
    {"api_key", "key", "authorization", "access_token", "password", "secret", "code"}
)


def is_credential_name(name: str) -> bool:
    """Whether a field or parameter of this name carries a credential."""
    lowered = name.lower()
    return lowered in CREDENTIAL_NAMES or lowered.endswith("_token")


def refuse_credentials_in_url(query: Mapping[str, str], *, allowed: frozenset[str] = frozenset()) -> None:
    """Raise ``CredentialInUrlError`` naming the first credential parameter (never its value)."""
    for name in query:
        if name.lower() not in allowed and is_credential_name(name):
            raise CredentialInUrlError(
                f"the query parameter {name!r} carries a credential; send credentials in the "
                "Authorization header or the JSON body, never in the URL",
                details={"parameter": name},
            )
