"""Client metadata as RFC 7591 (registration) and client ID metadata documents state it, checked
into what this server registers: public clients of the code flow with https redirect URIs (or http
on a loopback host, RFC 8252 section 7.3)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from toolfront.calls.inputs import is_unicode_text
from toolfront.oauth.errors import OAuthError

LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
MAX_REDIRECT_URIS = 10
MAX_URI_LENGTH = 1024
MAX_NAME_LENGTH = 100
DEFAULT_NAME = "MCP client"
GRANT_TYPES = frozenset({"authorization_code", "refresh_token"})
_PRINTABLE = re.compile(r"[^\x00-\x1f\x7f]+")
# A browser (WHATWG URL) reads ``\`` as ``/`` and drops tabs and newlines; ``urlsplit`` does not, so
# ``http://evil.example\@127.0.0.1/`` is loopback to Python and evil.example to the browser.
_UNSAFE_URI_CHARACTERS = re.compile(r"[\x00-\x20\x7f\\]")


@dataclass(frozen=True, slots=True)
class ClientMetadata:
    """What a client asked to be registered as (or what its metadata document says)."""

    redirect_uris: tuple[str, ...]
    client_name: str = DEFAULT_NAME
    grant_types: tuple[str, ...] = ("authorization_code",)

    def registration(self, client_id: str, issued_at: int) -> dict[str, Any]:
        """The RFC 7591 section 3.2.1 answer for this client."""
        return {
            "client_id": client_id,
            "client_id_issued_at": issued_at,
            "client_name": self.client_name,
            "redirect_uris": list(self.redirect_uris),
            "token_endpoint_auth_method": "none",
            "grant_types": list(self.grant_types),
            "response_types": ["code"],
        }


def client_metadata(document: Any) -> ClientMetadata:
    """Check a registration request's (or metadata document's) fields.

    Raises:
        OAuthError: ``invalid_redirect_uri`` or ``invalid_client_metadata``, naming the field.
    """
    if not isinstance(document, Mapping):
        raise _invalid("the client metadata must be a JSON object")
    method = document.get("token_endpoint_auth_method", "none")
    if method != "none":
        raise _invalid("only public clients are registered: token_endpoint_auth_method must be none")
    redirect_uris = document.get("redirect_uris")
    if not isinstance(redirect_uris, list) or not redirect_uris:
        raise OAuthError("invalid_redirect_uri", "redirect_uris must be a non-empty list of URLs")
    if len(redirect_uris) > MAX_REDIRECT_URIS:
        raise OAuthError("invalid_redirect_uri", f"at most {MAX_REDIRECT_URIS} redirect_uris are registered")
    for uri in redirect_uris:
        redirect_uri_problem(uri)
    grant_types = document.get("grant_types", ["authorization_code"])
    if (
        not isinstance(grant_types, list)
        or not all(isinstance(g, str) for g in grant_types)
        or "authorization_code" not in grant_types
        or not set(grant_types) <= GRANT_TYPES
    ):
        raise _invalid("grant_types must include authorization_code and may add refresh_token, nothing else")
    response_types = document.get("response_types", ["code"])
    if response_types != ["code"]:
        raise _invalid('response_types must be ["code"]')
    name = document.get("client_name", DEFAULT_NAME)
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME_LENGTH:
        raise _invalid(f"client_name must be a string of 1 to {MAX_NAME_LENGTH} characters")
    if not _PRINTABLE.fullmatch(name):
        raise _invalid("client_name must not contain control characters")
    if not is_unicode_text(name):
        raise _invalid("client_name must be Unicode text (it holds a lone surrogate)")
    return ClientMetadata(tuple(redirect_uris), name.strip(), tuple(dict.fromkeys(grant_types)))


def redirect_uri_problem(uri: Any) -> None:
    """Refuse a redirect URI that is not absolute https (or http on loopback), or carries a fragment
    or user info (RFC 6749 section 3.1.2, RFC 8252 sections 7.3 and 8.3)."""
    if not isinstance(uri, str) or not uri or len(uri) > MAX_URI_LENGTH:
        raise OAuthError(
            "invalid_redirect_uri", f"a redirect URI must be a URL of at most {MAX_URI_LENGTH} characters"
        )
    if _UNSAFE_URI_CHARACTERS.search(uri) or not is_unicode_text(uri):
        raise OAuthError(
            "invalid_redirect_uri", "a redirect URI may not hold a backslash, a space or a control character"
        )
    try:
        parts = urlsplit(uri)
        host = parts.hostname or ""
        parts.port  # noqa: B018 - a malformed port raises here
    except ValueError:
        raise OAuthError("invalid_redirect_uri", f"{uri!r} is not a valid URL") from None
    if parts.fragment or "#" in uri:
        raise OAuthError("invalid_redirect_uri", f"{uri!r} has a fragment, which redirect URIs may not")
    if parts.username is not None or parts.password is not None:
        raise OAuthError("invalid_redirect_uri", f"{uri!r} carries user information")
    if parts.scheme == "https" and host:
        return
    if parts.scheme == "http" and host in LOOPBACK_HOSTS:
        return
    raise OAuthError(
        "invalid_redirect_uri",
        f"{uri!r} must be an https URL, or http on a loopback host (localhost, 127.0.0.1)",
    )


def registered_redirect(uri: str, registered: tuple[str, ...]) -> bool:
    """Whether ``uri`` is one of the client's redirect URIs: exactly, or for a loopback URI with any
    port (RFC 8252 section 7.3: native apps take a free port when they start).

    ``uri`` first passes every rule of registration (``redirect_uri_problem``), then its parsed parts
    are compared: scheme, host, path and query equal to a registered loopback URI's, the port free.
    """
    try:
        redirect_uri_problem(uri)
    except OAuthError:
        return False
    if uri in registered:
        return True
    if not uri.isascii():  # the any-port rule compares hosts: only where both parsers see one host
        return False
    seen = urlsplit(uri)
    if seen.scheme.lower() != "http" or seen.hostname not in LOOPBACK_HOSTS:
        return False
    wanted = ("http", seen.hostname, seen.path or "/", seen.query)
    for candidate in registered:
        try:
            known = urlsplit(candidate)
            if (known.scheme.lower(), known.hostname, known.path or "/", known.query) == wanted:
                return True
        except ValueError:
            continue
    return False


def _invalid(description: str) -> OAuthError:
    return OAuthError("invalid_client_metadata", description)
