"""Client ID metadata documents: a ``client_id`` that is an https URL with a path names a JSON
document its owner publishes (draft-ietf-oauth-client-id-metadata-document), fetched here.

The fetch is the server reaching out to a URL a stranger chose, so it is held tight: https only, a
host on the operator's allow-list (``ClientMetadataHosts``), no redirects, a short timeout and a
small size limit. The document must name itself: its ``client_id`` equals the URL.
"""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from collections.abc import Collection
from typing import Any
from urllib.parse import urlsplit

from toolfront.oauth.clientmeta import ClientMetadata, client_metadata
from toolfront.oauth.errors import OAuthError

FETCH_TIMEOUT_SECONDS = 3
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
    if parts.scheme != "https" or parts.username or parts.password or parts.fragment:
        raise _refused("a client ID metadata document URL must be https, without user info or fragment")
    if host not in hosts:
        raise _refused(f"client ID metadata documents from {host!r} are not accepted here")
    opener = urllib.request.build_opener(
        _NoRedirects(), urllib.request.HTTPSHandler(context=ssl.create_default_context())
    )
    request = urllib.request.Request(url, headers={"accept": "application/json"})
    try:
        with opener.open(request, timeout=FETCH_TIMEOUT_SECONDS) as answer:
            body = answer.read(MAX_DOCUMENT_BYTES + 1)
    except urllib.error.HTTPError as exc:
        raise _refused(f"the client ID metadata document answered HTTP {exc.code}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise _refused(
            f"the client ID metadata document could not be fetched ({type(exc).__name__})"
        ) from None
    if len(body) > MAX_DOCUMENT_BYTES:
        raise _refused(f"the client ID metadata document is larger than {MAX_DOCUMENT_BYTES} bytes")
    try:
        document: Any = json.loads(body)
    except ValueError:
        raise _refused("the client ID metadata document is not JSON") from None
    if not isinstance(document, dict) or document.get("client_id") != url:
        raise _refused("the client ID metadata document's client_id is not its own URL")
    try:
        return client_metadata(document)
    except OAuthError as exc:
        raise _refused(f"the client ID metadata document is not usable: {exc.description}") from None


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect could lead anywhere, past the allow-list: it is a failure."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _refused(description: str) -> OAuthError:
    return OAuthError("invalid_client", description, 400)
