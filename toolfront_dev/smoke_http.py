"""HTTP as ``toolfront smoke`` speaks it: one request through the standard library, every status an
:class:`Answer` (a 4xx is something to report, not an exception), and one-line fixes for answers a
deployed API gives when it is not what the smoke expected.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

_TIMEOUT_SECONDS = 15.0
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
#: MCP's Streamable HTTP asks for both (the server answers JSON).
MCP_HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-06-18",
}


class Unreachable(Exception):
    """Nothing answered: no connection, or no answer in time."""


@dataclass(frozen=True, slots=True)
class Answer:
    """A response, read in full; header names lower-cased."""

    status: int
    headers: Mapping[str, str]
    body: bytes

    def json(self) -> Any:
        """The body's JSON value (``ValueError`` when it is none)."""
        return json.loads(self.body)

    def data(self) -> Any:
        """The envelope's ``data`` (``None`` when the body is no envelope)."""
        try:
            found = self.json()
        except ValueError:
            return None
        return found.get("data") if isinstance(found, dict) else None


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    # A redirect is reported as it is: following it would check some other address than the client's.
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def send(
    method: str,
    url: str,
    *,
    body: Any = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = _TIMEOUT_SECONDS,
) -> Answer:
    """One request; ``body`` (any JSON value) is sent as JSON.

    Raises:
        Unreachable: no connection could be made, or nothing answered within ``timeout``.
    """
    data = None if body is None else json.dumps(body).encode()
    sent = {"Content-Type": "application/json"} if data is not None else {}
    request = urllib.request.Request(url, data=data, method=method, headers={**sent, **(headers or {})})
    handlers: list[Any] = [_NoRedirects()]
    if urlsplit(url).hostname in _LOOPBACK:  # the local stack: a shell's HTTP(S)_PROXY must not see it
        handlers.append(urllib.request.ProxyHandler({}))
    opener = urllib.request.build_opener(*handlers)
    try:
        with opener.open(request, timeout=timeout) as response:
            return Answer(response.status, _headers(response.headers), response.read())
    except urllib.error.HTTPError as refused:
        with refused:
            return Answer(refused.code, _headers(refused.headers), refused.read())
    except urllib.error.URLError as exc:
        raise Unreachable(str(exc.reason)) from exc
    except (OSError, ValueError) as exc:  # a timeout, a reset connection, a malformed URL
        raise Unreachable(str(exc) or type(exc).__name__) from exc


def _headers(message: Any) -> dict[str, str]:
    found: dict[str, str] = {}
    for name, value in message.items():
        key = name.lower()
        found[key] = f"{found[key]}, {value}" if key in found else value
    return found


def refusal_fix(answer: Answer, what: str) -> str:
    """What an unexpected answer means and what to do, in one line (``what``: the request, e.g.
    ``GET /health``)."""
    message = _gateway_message(answer)
    if answer.status == 403:
        return (
            f"{what}: the API answered 403 ({message or 'Forbidden'}) — the address may not be this "
            "API (check --url and PublicUrl), or a WAF, resource policy or custom domain stands in the way"
        )
    if answer.status == 404 and message:
        return (
            f"{what}: API Gateway has no such route ({message}) — is this version deployed "
            "(`sam build && sam deploy`) and --url the API's address?"
        )
    if answer.status >= 500:
        return (
            f"{what}: the API answered {answer.status} — read the function's log "
            "(`sam logs --stack-name <stack> --tail`, or the `toolfront dev` console)"
        )
    snippet = answer.body[:200].decode("utf-8", "replace").strip()
    return f"{what}: the API answered {answer.status}: {snippet}"


def _gateway_message(answer: Answer) -> str:
    """API Gateway's own ``{"message": ...}`` (toolfront's answers never have that shape)."""
    try:
        found = answer.json()
    except ValueError:
        return ""
    return str(found["message"]) if isinstance(found, dict) and set(found) == {"message"} else ""
