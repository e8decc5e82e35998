"""The sign-in facade's HTTP face: the OAuth routes of the ``OAuthFunction``, each answered in the
form its RFC gives (metadata JSON, RFC 7591 registration JSON, the consent page and redirects, the
token JSON), with OAuth error bodies. Nothing here logs a request's query or body: they carry
codes, verifiers and tokens.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from toolfront.adapters.http import Edge, Request, Response, Route, origin_of
from toolfront.errors import InvalidJsonError, NotFoundError, StoreUnavailableError, ToolfrontError
from toolfront.oauth import metadata
from toolfront.oauth.authorize import Authorizer, error_redirect
from toolfront.oauth.errors import OAuthError, RedirectableError
from toolfront.oauth.pages import consent_page, error_page
from toolfront.oauth.token import TokenExchange

logger = logging.getLogger(__name__)

MAX_METADATA_BYTES = 16384  # a client's metadata document: anything larger is not one
PRM = "GET " + metadata.RESOURCE_METADATA_PATH
ASM = "GET " + metadata.SERVER_METADATA_PATH
NO_STORE = {"cache-control": "no-store"}
PUBLIC = {"cache-control": "max-age=300", "access-control-allow-origin": "*"}


class SignInFacade:
    """Answers the facade's routes (``handle`` is the function's ``lambda_handler``)."""

    def __init__(
        self,
        *,
        tools: Sequence[Mapping[str, Any]],
        scope_prefix: str,
        base_url: Callable[[Request], str],
        registrar: Any,
        authorizer: Authorizer,
        tokens: TokenExchange,
    ) -> None:
        self._tools, self._prefix, self._base_url = tools, scope_prefix, base_url
        self._families = metadata.families_of(tools)
        self._scopes = metadata.api_scopes(tools, scope_prefix)
        self._registrar, self._authorizer, self._tokens = registrar, authorizer, tokens
        self.handle = Edge(
            {
                PRM: self.resource_metadata,
                f"{PRM}/mcp": self.resource_metadata,
                f"{PRM}/mcp/{{family}}": self.family_metadata,
                # RFC 9728/8414 section 3.1 behind a PublicUrl with a path: the well-known prefix at
                # the origin, then that path (the API mapped at the domain's root as well).
                f"{PRM}/{{proxy+}}": self.inserted_resource_metadata,
                ASM: self.server_metadata,
                f"{ASM}/{{proxy+}}": self.inserted_server_metadata,
                "POST /oauth/register": self.register,
                "GET /oauth/authorize": Route(self.authorize, oauth_page),
                "POST /oauth/authorize": Route(self.consent, oauth_page),
                "POST /oauth/token": self.token,
            },
            refusals=(ToolfrontError, OAuthError),
            fallback=Route(_no_route, oauth_json),
        )
        # Every route answers OAuth's JSON error unless it names the page form.
        for key, route in self.handle.routes.items():
            if route.form is not oauth_page:
                self.handle.routes[key] = Route(route.handler, oauth_json)

    def resource_metadata(self, request: Request) -> Response:
        base = self._base_url(request)
        return Response.json(200, metadata.protected_resource_metadata(base, self._scopes), PUBLIC)

    def family_metadata(self, request: Request) -> Response:
        return self._family_document(request, request.path_params.get("family", ""))

    def _family_document(self, request: Request, family: str) -> Response:
        if family not in self._families:
            raise OAuthError("not_found", f"no MCP server {family!r}", 404)
        scopes = metadata.api_scopes(self._tools, self._prefix, family)
        document = metadata.protected_resource_metadata(self._base_url(request), scopes, family)
        return Response.json(200, document, PUBLIC)

    def server_metadata(self, request: Request) -> Response:
        document = metadata.authorization_server_metadata(self._base_url(request), self._scopes)
        return Response.json(200, document, PUBLIC)

    def inserted_resource_metadata(self, request: Request) -> Response:
        """``/.well-known/oauth-protected-resource<base path>/mcp[/<family>]``; anything else is 404."""
        below = _below(self._base_url(request), request) or ""
        if below == metadata.MCP_PATH:
            return self.resource_metadata(request)
        family = below.removeprefix(metadata.MCP_PATH + "/")
        if family not in ("", below) and "/" not in family:
            return self._family_document(request, family)
        raise OAuthError("not_found", "no protected resource at this address", 404)

    def inserted_server_metadata(self, request: Request) -> Response:
        """``/.well-known/oauth-authorization-server<base path>``; anything else is 404."""
        if _below(self._base_url(request), request) != "":
            raise OAuthError("not_found", "no authorization server at this address", 404)
        return self.server_metadata(request)

    def register(self, request: Request) -> Response:
        """RFC 7591: a client's metadata in, its registration out (errors ``invalid_client_metadata``)."""
        if request.body is not None and len(request.body) > MAX_METADATA_BYTES:
            raise OAuthError("invalid_client_metadata", "the client metadata is too large")
        try:
            document = request.json(what="the client metadata")
        except InvalidJsonError as refused:  # RFC 7591 section 3.2.2's form, not the REST envelope
            raise OAuthError("invalid_client_metadata", refused.message) from None
        return Response.json(201, self._registrar.register(document, request.source_ip), NO_STORE)

    def authorize(self, request: Request) -> Response:
        """The consent page, its consent bound to this browser by a cookie under the page's own path."""
        base = self._base_url(request)
        page = self._authorizer.request(request.query_fields(), request.source_ip, self._resources(base))
        secure = base.startswith("https://")
        path = urlsplit(base).path.rstrip("/") + "/oauth/authorize"  # under PublicUrl's path, if any
        attributes = f"; Path={path}; HttpOnly; SameSite=Strict; Max-Age=600{'; Secure' if secure else ''}"
        cookie = f"{_cookie_name(secure)}={page.cookie}{attributes}"
        return Response.page(200, consent_page(page, f"{base}/oauth/authorize"), [cookie])

    def consent(self, request: Request) -> Response:
        """Allow or Deny, posted from the consent page of this server and this browser."""
        base = self._base_url(request)
        origin = request.headers.get("origin")
        if origin is not None and origin.rstrip("/").lower() != origin_of(base):
            raise OAuthError(
                "invalid_request", "the decision must be posted from this server's own page", 403
            )
        form = request.form()
        cookie = request.cookies.get(_cookie_name(base.startswith("https://")), "")
        return Response.redirect(
            self._authorizer.decide(form.get("consent_id", ""), form.get("decision", ""), cookie)
        )

    def token(self, request: Request) -> Response:
        status, answer = self._tokens.exchange(request.form(), self._resources(self._base_url(request)))
        return Response.json(status, answer, {**NO_STORE, "pragma": "no-cache"})

    def _resources(self, base: str) -> frozenset[str]:
        """The tokens' audiences: ``/mcp`` and each family's endpoint."""
        return frozenset(
            {metadata.resource_url(base), *(metadata.resource_url(base, f) for f in self._families)}
        )


def _below(base_url: str, request: Request) -> str | None:
    """What follows the base URL's path in a path-inserted metadata address (``/mcp`` of
    ``/.well-known/oauth-protected-resource/tools/mcp`` for the base ``https://host/tools``; ``""``
    for the path itself), ``None`` when the address is not under that path."""
    path = "/" + request.path_params.get("proxy", "")
    prefix = metadata.base_path(base_url)
    if path == prefix:
        return ""
    return path[len(prefix) :] if path.startswith(prefix + "/") else None


def _no_route(request: Request) -> Response:
    raise OAuthError("not_found", "no such route", 404)


def as_oauth_error(error: Exception) -> OAuthError:
    """A refusal as OAuth says it: the edge's (a credential in the URL, a body that is no form...)
    become ``invalid_request`` with their status; a store that did not answer, ``temporarily_unavailable``."""
    if isinstance(error, OAuthError):
        return error
    if isinstance(error, StoreUnavailableError):
        logger.warning("a store of the sign-in facade is unavailable", exc_info=True)
        return OAuthError("temporarily_unavailable", "try again shortly", 503)
    assert isinstance(error, ToolfrontError)
    if isinstance(error, NotFoundError):
        return OAuthError("not_found", error.message, 404)
    return OAuthError(
        "invalid_request", error.message, getattr(error, "http_status", 400), headers=error.headers
    )


def oauth_json(request: Request, error: Exception) -> Response:
    """RFC 6749 section 5.2's JSON error (RFC 7591's for registration)."""
    refused = as_oauth_error(error)
    if isinstance(refused, RedirectableError):
        return Response.redirect(error_redirect(refused))
    headers = {**NO_STORE, **refused.headers}
    if refused.status == 401:
        headers["www-authenticate"] = 'Basic realm="toolfront"'  # RFC 6749 section 5.2, invalid_client
    return Response.json(refused.status, refused.to_dict(), headers)


def oauth_page(request: Request, error: Exception) -> Response:
    """A person's browser: back to the client for a registered redirect URI, else a page (never a
    redirect to an unchecked URI)."""
    refused = as_oauth_error(error)
    if isinstance(refused, RedirectableError):
        return Response.redirect(error_redirect(refused))
    title = "This sign-in cannot continue"
    return Response.page(refused.status, error_page(title, f"{refused.description} ({refused.error})"))


def _cookie_name(secure: bool) -> str:
    # __Secure-: a browser takes it only over https with Secure set (deployed); loopback is http.
    return "__Secure-toolfront-consent" if secure else "toolfront-consent"
