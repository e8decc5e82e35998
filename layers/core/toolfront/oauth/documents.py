"""Client ID metadata documents: a ``client_id`` that is an https URL with a path names a JSON
document its owner publishes (draft-ietf-oauth-client-id-metadata-document), fetched here.

The fetch is the server reaching out to a URL a stranger chose, so it is held tight: https only, a
host on the operator's allow-list (``ClientMetadataHosts``), no redirects, one deadline for the whole
fetch (a socket timeout is per read: a server sending a byte at a time would hold the request) and a
small size limit. The document is read by the one JSON reader and must name itself: its
``client_id`` equals the URL.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import ssl
import threading
from collections.abc import Collection
from typing import Any
from urllib.parse import urlsplit

from toolfront.calls.inputs import parse_json
from toolfront.errors import InvalidJsonError
from toolfront.oauth.clientmeta import ClientMetadata, client_metadata
from toolfront.oauth.errors import OAuthError

FETCH_TIMEOUT_SECONDS: float = 3  # the whole fetch: connection, TLS, headers and body
MAX_DOCUMENT_BYTES = 8192


def is_document_url(client_id: str) -> bool:
    """Whether a ``client_id`` is a metadata document's URL (https with a path beyond ``/``)."""
    parts = urlsplit(client_id)
    return parts.scheme == "https" and bool(parts.netloc) and parts.path not in ("", "/")


def fetch_document(url: str, hosts: Collection[str]) -> ClientMetadata:
    """The checked metadata of the document at ``url``.

    Raises:
        OAuthError: ``invalid_client`` naming what is wrong (host, transport, size, shape).
    """
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    try:
        parts.port  # noqa: B018 - a malformed port raises here, not in the fetch
    except ValueError:
        raise _refused("a client ID metadata document URL must have a valid port") from None
    if parts.scheme != "https" or parts.username or parts.password or parts.fragment:
        raise _refused("a client ID metadata document URL must be https, without user info or fragment")
    if host not in hosts:
        raise _refused(f"client ID metadata documents from {host!r} are not accepted here")
    body = _download(url)
    if len(body) > MAX_DOCUMENT_BYTES:
        raise _refused(f"the client ID metadata document is larger than {MAX_DOCUMENT_BYTES} bytes")
    try:
        document: Any = parse_json(body, what="the client ID metadata document")
    except InvalidJsonError as exc:
        raise _refused(
            f"the client ID metadata document is not JSON as this server reads it: {exc.message}"
        ) from None
    if not isinstance(document, dict) or document.get("client_id") != url:
        raise _refused("the client ID metadata document's client_id is not its own URL")
    try:
        return client_metadata(document)
    except OAuthError as exc:
        raise _refused(f"the client ID metadata document is not usable: {exc.description}") from None


def _download(url: str) -> bytes:
    """The body of a 200 answer to ``GET url`` (at most ``MAX_DOCUMENT_BYTES`` + 1 bytes), within
    ``FETCH_TIMEOUT_SECONDS`` in all. http.client follows no redirect and reads no proxy setting.

    The fetch runs in a thread so the deadline holds whatever the server does; past it, the
    connection is shut, which ends the thread's blocked read.
    """
    parts = urlsplit(url)
    connection = http.client.HTTPSConnection(
        parts.hostname or "", parts.port, timeout=FETCH_TIMEOUT_SECONDS, context=ssl.create_default_context()
    )
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    outcome: list[bytes | int | BaseException] = []

    def fetch() -> None:
        try:
            connection.request("GET", target, headers={"accept": "application/json"})
            answer = connection.getresponse()
            outcome.append(answer.read(MAX_DOCUMENT_BYTES + 1) if answer.status == 200 else answer.status)
        except BaseException as exc:  # handed to the caller's thread
            outcome.append(exc)

    worker = threading.Thread(target=fetch, name="client-metadata-fetch", daemon=True)
    worker.start()
    worker.join(FETCH_TIMEOUT_SECONDS)
    if worker.is_alive() or not outcome:
        _abort(connection)
        raise _refused(
            f"the client ID metadata document could not be fetched within {FETCH_TIMEOUT_SECONDS} s"
        )
    connection.close()
    result = outcome[0]
    if isinstance(result, int):
        raise _refused(f"the client ID metadata document answered HTTP {result}")
    if isinstance(result, BaseException):
        if isinstance(result, OSError | http.client.HTTPException | ValueError):
            raise _refused(f"the client ID metadata document could not be fetched ({type(result).__name__})")
        raise result
    return result


def _abort(connection: http.client.HTTPSConnection) -> None:
    """End a fetch still running in its thread (``shutdown`` wakes a blocked read; ``close`` may not)."""
    sock = connection.sock
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
    connection.close()


def _refused(description: str) -> OAuthError:
    return OAuthError("invalid_client", description, 400)
