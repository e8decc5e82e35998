"""``toolfront smoke``'s OAuth discovery, done as an MCP client does it: a request without a valid
credential to ``/mcp`` and each ``/mcp/<family>`` answers 401, whose ``WWW-Authenticate`` names the
protected-resource metadata (RFC 9728 section 5.1); that document, fetched there, names the endpoint
and the authorization server; the server's metadata, fetched where RFC 8414 section 3.1 puts it,
names that issuer.

The well-known URLs are computed here as a client computes them (not with the server's own code),
so that a server building them wrongly is caught.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import partial
from typing import Any
from urllib.parse import urlsplit

from toolfront_dev.smoke import CheckFailed, CheckResult, SmokeStack, checked, skipped
from toolfront_dev.smoke_http import MCP_HEADERS, Answer, Unreachable, refusal_fix, send

PRM_PREFIX = "/.well-known/oauth-protected-resource"
ASM_PREFIX = "/.well-known/oauth-authorization-server"
#: A key of the right form that no stack holds: a refused credential is a 401 on every endpoint
#: (one serving public tools answers a request without any credential).
UNKNOWN_KEY = "tfk_smokesmoke00_" + "0" * 32
_LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
_METADATA = re.compile(r'resource_metadata="([^"]*)"')
REMAPPED = "x-amzn-remapped-www-authenticate"
BASE_PATH_FIX = (
    "map the API at the domain's root as well, or use a custom domain with no base path: "
    "clients look for /.well-known at the origin"
)


def inserted(identifier: str, prefix: str) -> str:
    """RFC 8414/9728 section 3.1: ``prefix`` between the host and the path (its last ``/`` removed)."""
    parts = urlsplit(identifier)
    return f"{parts.scheme}://{parts.netloc}{prefix}{parts.path.rstrip('/')}"


def discovery_checks(stack: SmokeStack, families: Sequence[str]) -> list[CheckResult]:
    """One result per MCP endpoint, then one for the authorization server's metadata."""
    if not stack.oauth:
        return [
            skipped("oauth discovery", "the stack signs nobody in (EnableCognito=false): clients use keys")
        ]
    servers: list[str] = []
    results = [
        checked(f"oauth discovery {path}", partial(_endpoint, stack, path, servers))
        for path in ["/mcp", *(f"/mcp/{family}" for family in families)]
    ]
    issuers = list(dict.fromkeys(servers))
    if not issuers:
        results.append(skipped("authorization server metadata", "no protected-resource metadata named one"))
    for issuer in issuers:
        results.append(checked("authorization server metadata", partial(_server, stack, issuer)))
    return results


def _endpoint(stack: SmokeStack, path: str, servers: list[str]) -> str:
    endpoint = stack.url.rstrip("/") + path
    answer = stack.call("POST", path, body=_LIST, headers=MCP_HEADERS)
    if answer.status == 200:  # it serves public tools to anyone: a refused credential is challenged
        headers = {**MCP_HEADERS, "Authorization": f"Bearer {UNKNOWN_KEY}"}
        answer = stack.call("POST", path, body=_LIST, headers=headers)
    if answer.status != 401:
        raise CheckFailed(refusal_fix(answer, f"POST {path} with no valid credential (expected 401)"))
    challenge = answer.headers.get("www-authenticate")
    if challenge is None:
        raise CheckFailed(_no_challenge(answer, path))
    found = _METADATA.search(challenge)
    if found is None:
        raise CheckFailed(
            f"the 401's WWW-Authenticate names no resource_metadata ({challenge}) — deploy with "
            "EnableCognito=true (the sign-in facade), or use keys"
        )
    url, expected = found.group(1), inserted(endpoint, PRM_PREFIX)
    if url != expected:
        raise CheckFailed(
            f"the challenge points at {url}, but RFC 9728 puts {endpoint}'s metadata at {expected} — "
            "deploy this version of toolfront, and set PublicUrl to the address clients use"
        )
    document = _document(stack, url)
    if document.get("resource") != endpoint:
        raise CheckFailed(
            f"{url} names the resource {document.get('resource')!r}, not {endpoint} — set PublicUrl "
            "to the address clients use (clients refuse a mismatch, RFC 9728 section 3.3)"
        )
    named = document.get("authorization_servers")
    if not isinstance(named, list) or not named or not isinstance(named[0], str):
        raise CheckFailed(f"{url} names no authorization_servers — deploy this version of toolfront")
    servers.append(named[0])
    return ""


def _no_challenge(answer: Answer, path: str) -> str:
    if REMAPPED in answer.headers:
        return (
            f"the 401 of {path} carries its challenge as x-amzn-Remapped-WWW-Authenticate: an API "
            "Gateway REST API renames WWW-Authenticate, and clients then never find the sign-in — "
            "serve /mcp through an HTTP API (template.yaml's HttpApi) or a proxy that keeps the header"
        )
    return (
        f"the 401 of {path} carries no WWW-Authenticate — something between the client and the API "
        "(a proxy, CloudFront, a WAF) drops it: let it through, clients find the sign-in only there"
    )


def _server(stack: SmokeStack, issuer: str) -> str:
    url = inserted(issuer, ASM_PREFIX)
    document = _document(stack, url, base=issuer)
    if document.get("issuer") != issuer:
        raise CheckFailed(
            f"{url} names the issuer {document.get('issuer')!r}, not {issuer} — clients refuse a "
            "mismatch (RFC 8414 section 3.3): set PublicUrl to the address clients use"
        )
    return ""


def _document(stack: SmokeStack, url: str, *, base: str | None = None) -> dict[str, Any]:
    """The JSON document at ``url``; a failure names the base-path fix when the API's address has a
    path (only the origin's root is where clients look)."""
    behind_path = urlsplit(base or stack.url).path.rstrip("/") != ""
    extra = f" — {BASE_PATH_FIX}" if behind_path else ""
    try:
        answer = send("GET", url)
    except Unreachable as exc:
        raise CheckFailed(
            f"nothing answered at {url} ({exc}){extra or ' — ' + stack.unreachable_fix}"
        ) from None
    if answer.status != 200:
        if behind_path:
            raise CheckFailed(f"GET {url} answered {answer.status}{extra}")
        raise CheckFailed(refusal_fix(answer, f"GET {url}"))
    try:
        document = answer.json()
    except ValueError:
        document = None
    if not isinstance(document, dict):
        raise CheckFailed(f"GET {url} is not a JSON object{extra}")
    return document
