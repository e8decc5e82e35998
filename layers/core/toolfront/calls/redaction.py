"""Credentials: which names carry one, client-token hashing, the one redaction function, and the
refusal of credentials sent in a URL.

Query strings end up in access logs, browser history and proxies, so a credential there is
refused before anything else happens (and its value is never logged).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Collection, Iterable
from typing import Any

from toolfront.errors import CredentialInUrlError, ToolError

# Query parameters refused in URLs (docs/contract.md, "Redaction and credentials in URLs");
# ``code`` is allowed on the approval page.
URL_CREDENTIAL_NAMES = frozenset(
    {
        "api_key",
        "apikey",
        "api-key",
        "x-api-key",
        "x_api_key",
        "key",
        "authorization",
        "bearer",
        "token",
        "access_token",
        "jwt",
        "password",
        "secret",
        "client_secret",
        "code",
    }
)
# Fields redacted from every sink (the same section), besides a tool's own credentials fields.
SECRET_FIELD_NAMES = frozenset({"authorization", "x-api-key", "api_key", "password", "secret"})


def is_credential_name(name: str) -> bool:
    """Whether a query parameter of this name carries a credential."""
    lowered = name.lower()
    return lowered in URL_CREDENTIAL_NAMES or lowered.endswith("_token")


def is_secret_field(name: str) -> bool:
    """Whether a field of this name holds a secret wherever it appears (logs, answers, records)."""
    lowered = name.lower()
    return lowered in SECRET_FIELD_NAMES or lowered.endswith("_token")


def refuse_credentials_in_url(query: Iterable[str], *, allowed: frozenset[str] = frozenset()) -> None:
    """Raise ``CredentialInUrlError`` naming the first credential parameter (never its value)."""
    for name in query:
        if name.lower() not in allowed and is_credential_name(name):
            raise CredentialInUrlError(
                f"the query parameter {name!r} carries a credential; send credentials in the "
                "Authorization header or the JSON body, never in the URL",
                details={"parameter": name},
            )


REDACTED = "[redacted]"


def hash_client_token(token: str) -> str:
    """A client token's identity: ``base64url(sha256(token))`` without padding (never the token)."""
    digest = hashlib.sha256(token.encode("utf-8")).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


def redact(value: Any, *, fields: Collection[str] = (), secrets: Collection[str] = ()) -> Any:
    """``value`` with every credential removed: the one redaction every sink goes through.

    A field is a credential when its name says so (``is_secret_field``) or is listed in
    ``fields`` (a tool's ``credentials`` and ``client_token``); a known secret string (the key or
    token of the request) is blanked wherever it appears inside other strings too.
    """
    if isinstance(value, dict):
        return {
            k: REDACTED
            if (isinstance(k, str) and (k in fields or is_secret_field(k))) and v is not None
            else redact(v, fields=fields, secrets=secrets)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(v, fields=fields, secrets=secrets) for v in value]
    if isinstance(value, str) and secrets:
        for secret in secrets:
            if secret and secret in value:
                value = value.replace(secret, REDACTED)
    return value


def mentions_secret_field(json_text: str, fields: Collection[str] = ()) -> bool:
    """Whether JSON text may hold a secret field (a cheap pre-check before ``carries_credential``)."""
    lowered = json_text.lower()
    return '_token"' in lowered or any(
        f'"{name.lower()}"' in lowered for name in (*SECRET_FIELD_NAMES, *fields)
    )


def carries_credential(answer: Any, fields: Collection[str] = ()) -> bool:
    """Whether an answer hands out a credential (then it is never stored anywhere)."""
    if isinstance(answer, dict):
        return any(
            (isinstance(k, str) and (k in fields or is_secret_field(k)) and v not in (None, ""))
            or carries_credential(v, fields)
            for k, v in answer.items()
        )
    if isinstance(answer, list):
        return any(carries_credential(v, fields) for v in answer)
    return False


def scrubbed(error: ToolError, fields: Collection[str], secrets: Collection[str]) -> ToolError:
    """A handler's refusal without the call's secrets (or its tool's secret fields) in its message
    or details; the same error when it held none."""
    message = redact(error.message, secrets=secrets)
    details = redact(error.details, fields=fields, secrets=secrets)
    if message == error.message and details == error.details:
        return error
    return ToolError(error.code, message, error.http_status, details=details)
