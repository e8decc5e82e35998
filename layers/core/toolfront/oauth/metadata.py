"""The documents OAuth clients discover the sign-in with: protected-resource metadata (RFC 9728) for
``/mcp`` and each ``/mcp/<family>``, authorization-server metadata (RFC 8414), and the 401 challenge
that points at them. Pure functions of the API's base URL and the tools' scopes.

Both RFCs put a document at its identifier's origin, the well-known path inserted before the
identifier's own path: behind a ``PublicUrl`` with a path (``https://api.example.com/tools``), the
metadata of ``.../tools/mcp`` is at ``https://api.example.com/.well-known/oauth-protected-resource/tools/mcp``.

Scopes are named as Cognito grants them, ``<resource server>/<tool scope>``
(``toolfront/catalogue.products:read``): what a client asks for is what the token then carries.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource"
SERVER_METADATA_PATH = "/.well-known/oauth-authorization-server"
MCP_PATH = "/mcp"


def resource_url(base_url: str, family: str | None = None) -> str:
    """The MCP endpoint a token is for: ``<base>/mcp`` or ``<base>/mcp/<family>``."""
    return f"{base_url.rstrip('/')}{MCP_PATH}" + (f"/{family}" if family else "")


def well_known_url(identifier: str, well_known_path: str) -> str:
    """``well_known_path`` inserted between the identifier's host and its path (RFC 8414 and RFC 9728,
    section 3.1 of each; a terminating ``/`` of the path removed first), its query kept."""
    parts = urlsplit(identifier)
    query = f"?{parts.query}" if parts.query else ""
    return f"{parts.scheme}://{parts.netloc}{well_known_path}{parts.path.rstrip('/')}{query}"


def resource_metadata_url(base_url: str, family: str | None = None) -> str:
    """Where a client looks for the endpoint's protected-resource metadata (RFC 9728 section 3.1)."""
    return well_known_url(resource_url(base_url, family), RESOURCE_METADATA_PATH)


def server_metadata_url(issuer: str) -> str:
    """Where a client looks for the authorization server's metadata (RFC 8414 section 3.1)."""
    return well_known_url(issuer, SERVER_METADATA_PATH)


def base_path(base_url: str) -> str:
    """The path of the API's base URL (``/tools`` of ``https://api.example.com/tools``; ``""`` at the
    root): what the path-inserted metadata URLs carry after the well-known prefix."""
    return urlsplit(base_url).path.rstrip("/")


def api_scopes(tools: Iterable[Mapping[str, Any]], prefix: str, family: str | None = None) -> list[str]:
    """The OAuth scopes of the tools (of one family, when named), sorted, each once."""
    return sorted(
        {
            f"{prefix}/{tool['scope']}"
            for tool in tools
            if tool.get("scope") and (family is None or tool.get("module") == family)
        }
    )


def families_of(tools: Iterable[Mapping[str, Any]]) -> frozenset[str]:
    """The families with an MCP endpoint of their own (every module but core's)."""
    return frozenset(str(tool["module"]) for tool in tools if tool.get("module") not in (None, "core"))


def has_public_tool(tools: Iterable[Mapping[str, Any]], family: str) -> bool:
    return any(tool.get("module") == family and tool.get("audience") == "public" for tool in tools)


def protected_resource_metadata(
    base_url: str, scopes: list[str], family: str | None = None
) -> dict[str, Any]:
    """RFC 9728 section 2: the resource, the one authorization server (this API), its scopes."""
    name = f"toolfront {family} tools" if family else "toolfront tools"
    return {
        "resource": resource_url(base_url, family),
        "authorization_servers": [base_url],
        "scopes_supported": scopes,
        "bearer_methods_supported": ["header"],
        "resource_name": name,
    }


def authorization_server_metadata(base_url: str, scopes: list[str]) -> dict[str, Any]:
    """RFC 8414 section 2, for public clients using the code flow with PKCE (S256 only)."""
    return {
        "issuer": base_url,
        "authorization_endpoint": f"{base_url}/oauth/authorize",
        "token_endpoint": f"{base_url}/oauth/token",
        "registration_endpoint": f"{base_url}/oauth/register",
        "scopes_supported": scopes,
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_methods_supported": ["none"],
        "code_challenge_methods_supported": ["S256"],
        "client_id_metadata_document_supported": True,
    }


def challenge(
    base_url: str, family: str | None, *, scopes: Iterable[str] = (), error: str | None = None
) -> str:
    """A ``WWW-Authenticate`` value pointing at the endpoint's metadata (RFC 9728 section 5.1); with
    ``error`` (RFC 6750 section 3.1, ``invalid_token``) when a credential was sent and refused."""
    parts = ['Bearer realm="toolfront"']
    if error:
        parts.append(f'error="{error}"')
    parts.append(f'resource_metadata="{resource_metadata_url(base_url, family)}"')
    scope = " ".join(scopes)
    if scope:
        parts.append(f'scope="{scope}"')
    return ", ".join(parts)
