"""The sign-in facade's HTTP face: the OAuth routes of the ``OAuthFunction``, each answered in the
form its RFC gives (metadata JSON, RFC 7591 registration JSON, the consent page and redirects, the
token JSON), with OAuth error bodies. Nothing here logs a request's query or body: they carry
codes, verifiers and tokens.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from toolfront.adapters.http import (
    Event,
    Response,
    body_bytes,
    cookies_of,
    headers_of,
    origin_of,
    request_id_of,
    source_ip_of,
)
from toolfront.calls.inputs import parse_json
from toolfront.calls.redaction import refuse_credentials_in_url
from toolfront.errors import CredentialInUrlError, InvalidJsonError, StoreUnavailableError
from toolfront.oauth import metadata
from toolfront.oauth.authorize import Authorizer, error_redirect
from toolfront.oauth.errors import OAuthError, RedirectableError
from toolfront.oauth.pages import PAGE_HEADERS, consent_page, error_page
from toolfront.oauth.token import TokenExchange

logger = logging.getLogger(__name__)

MAX_FORM_BYTES = 16384
PRM = "GET " + metadata.RESOURCE_METADATA_PATH
ROUTES_OF_MCP = (PRM, f"{PRM}/mcp")
ROUTE_OF_FAMILY = f"{PRM}/mcp/{{family}}"
ROUTE_OF_SERVER = "GET " + metadata.SERVER_METADATA_PATH
_JSON_HEADERS = {"content-type": "application/json", "cache-control": "no-store"}
_PUBLIC_JSON = {
    "content-type": "application/json",
    "cache-control": "max-age=300",
    "access-control-allow-origin": "*",
}
_PAGES = frozenset({"GET /oauth/authorize", "POST /oauth/authorize"})


class SignInFacade:
    """Answers the facade's routes (``handle`` is the function's ``lambda_handler``)."""

    def __init__(
        self,
        *,
        tools: Sequence[Mapping[str, Any]],
        scope_prefix: str,
        base_url: Callable[[Event], str],
        registrar: Any,
        authorizer: Authorizer,
        tokens: TokenExchange,
    ) -> None:
        self._tools, self._prefix, self._base_url = tools, scope_prefix, base_url
        self._families = metadata.families_of(tools)
        self._scopes = metadata.api_scopes(tools, scope_prefix)
        self._registrar, self._authorizer, self._tokens = registrar, authorizer, tokens

    def handle(self, event: Event, context: Any = None) -> Response:
        """Answer one request; every answer carries ``X-Request-Id``, as every route's does."""
        response = self._answer(event)
        response["headers"] = {**response.get("headers", {}), "x-request-id": request_id_of(event)}
        return response

    def _answer(self, event: Event) -> Response:
        route = str(event.get("routeKey", ""))
        try:
            query = _pairs(str(event.get("rawQueryString") or ""))
            refuse_credentials_in_url(query)
            return self._route(route, event, query)
        except RedirectableError as refused:
            return _redirect(error_redirect(refused))
        except CredentialInUrlError as refused:
            return self._error(route, OAuthError("invalid_request", refused.message))
        except OAuthError as refused:
            return self._error(route, refused)
        except StoreUnavailableError:
            logger.warning("a store of the sign-in facade is unavailable", exc_info=True)
            return self._error(route, OAuthError("temporarily_unavailable", "try again shortly", 503))

    def _route(self, route: str, event: Event, query: dict[str, str]) -> Response:
        base = self._base_url(event)
        if route in ROUTES_OF_MCP:
            return _json(200, metadata.protected_resource_metadata(base, self._scopes), _PUBLIC_JSON)
        if route == ROUTE_OF_FAMILY:
            family = str((event.get("pathParameters") or {}).get("family", ""))
            if family not in self._families:
                return _json(404, {"error": "not_found", "error_description": f"no MCP server {family!r}"})
            scopes = metadata.api_scopes(self._tools, self._prefix, family)
            return _json(200, metadata.protected_resource_metadata(base, scopes, family), _PUBLIC_JSON)
        if route == ROUTE_OF_SERVER:
            return _json(200, metadata.authorization_server_metadata(base, self._scopes), _PUBLIC_JSON)
        if route == "POST /oauth/register":
            return _json(201, self._registrar.register(_json_body(event), source_ip_of(event)))
        if route == "GET /oauth/authorize":
            page = self._authorizer.request(query, source_ip_of(event), self._resources(base))
            secure = base.startswith("https://")
            cookie = _cookie_name(secure)
            # The page's own path (under PublicUrl's path, when the API sits below one)
            path = urlsplit(base).path.rstrip("/") + "/oauth/authorize"
            attributes = f"; Path={path}; HttpOnly; SameSite=Strict; Max-Age=600"
            return {
                "statusCode": 200,
                "headers": PAGE_HEADERS,
                "cookies": [f"{cookie}={page.cookie}{attributes}{'; Secure' if secure else ''}"],
                "body": consent_page(page, f"{base}/oauth/authorize"),
                "isBase64Encoded": False,
            }
        if route == "POST /oauth/authorize":
            self._same_origin(event, base)
            form = _form(event)
            cookie = cookies_of(event).get(_cookie_name(base.startswith("https://")), "")
            return _redirect(
                self._authorizer.decide(form.get("consent_id", ""), form.get("decision", ""), cookie)
            )
        if route == "POST /oauth/token":
            status, answer = self._tokens.exchange(_form(event), self._resources(base))
            return _json(status, answer, {**_JSON_HEADERS, "pragma": "no-cache"})
        return _json(404, {"error": "not_found", "error_description": "no such route"})

    def _resources(self, base: str) -> frozenset[str]:
        """The tokens' audiences: ``/mcp`` and each family's endpoint."""
        return frozenset(
            {metadata.resource_url(base), *(metadata.resource_url(base, f) for f in self._families)}
        )

    @staticmethod
    def _same_origin(event: Event, base: str) -> None:
        origin = headers_of(event).get("origin")
        if origin is not None and origin.rstrip("/").lower() != origin_of(base):
            raise OAuthError(
                "invalid_request", "the decision must be posted from this server's own page", 403
            )

    @staticmethod
    def _error(route: str, refused: OAuthError) -> Response:
        if route in _PAGES:  # a person's browser: a page, never a redirect to an unchecked URI
            title = "This sign-in cannot continue"
            return {
                "statusCode": refused.status,
                "headers": PAGE_HEADERS,
                "body": error_page(title, f"{refused.description} ({refused.error})"),
                "isBase64Encoded": False,
            }
        headers = {**_JSON_HEADERS, **refused.headers}
        if refused.status == 401:
            headers["www-authenticate"] = 'Basic realm="toolfront"'  # RFC 6749 section 5.2, invalid_client
        return _json(refused.status, refused.to_dict(), headers)


def _json(status: int, body: Mapping[str, Any], headers: Mapping[str, str] = _JSON_HEADERS) -> Response:
    text = json.dumps(body, separators=(",", ":"), ensure_ascii=False)
    return {"statusCode": status, "headers": dict(headers), "body": text, "isBase64Encoded": False}


def _redirect(location: str) -> Response:
    headers = {"location": location, "cache-control": "no-store", "referrer-policy": "no-referrer"}
    return {"statusCode": 302, "headers": headers, "body": "", "isBase64Encoded": False}


def _pairs(encoded: str) -> dict[str, str]:
    """Form or query fields; a repeated one is refused (RFC 6749 section 3.1)."""
    fields: dict[str, str] = {}
    for name, value in parse_qsl(encoded, keep_blank_values=True):
        if name in fields:
            raise OAuthError("invalid_request", f"the parameter {name!r} is repeated")
        fields[name] = value
    return fields


def _form(event: Event) -> dict[str, str]:
    content_type = headers_of(event).get("content-type", "").split(";")[0].strip().lower()
    if content_type != "application/x-www-form-urlencoded":
        raise OAuthError("invalid_request", "send the fields as application/x-www-form-urlencoded")
    body = body_bytes(event) or b""
    if len(body) > MAX_FORM_BYTES:
        raise OAuthError("invalid_request", "the request body is too large")
    return _pairs(body.decode("utf-8", "replace"))


def _json_body(event: Event) -> Any:
    body = body_bytes(event) or b""
    if len(body) > MAX_FORM_BYTES:
        raise OAuthError("invalid_client_metadata", "the client metadata is too large")
    try:
        return parse_json(body, what="the client metadata")
    except InvalidJsonError as refused:  # RFC 7591 section 3.2.2's form, not the REST envelope
        raise OAuthError("invalid_client_metadata", refused.message) from None


def _cookie_name(secure: bool) -> str:
    # __Secure-: a browser takes it only over https with Secure set (deployed); loopback is http.
    return "__Secure-toolfront-consent" if secure else "toolfront-consent"
