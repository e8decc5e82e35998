"""``/oauth/authorize``: an authorization request checked, shown to the person for consent, and
sent on to Cognito's managed login, which returns the person to the client's redirect URI.

Until the client and its redirect URI are known to be registered, a refusal is a 400 page and never
a redirect (RFC 6749 section 4.1.2.1); after that it goes back to the client with ``error=``. PKCE
(S256) is required. ``state`` and ``code_challenge`` reach Cognito exactly as the client sent them:
Cognito checks the verifier at the token exchange and hands the state back itself.

The consent step stands between the two because the clients here were registered by software, not
by the person signing in: without it, a page that sends someone's browser to this URL (signed in
to Cognito already) would have a code delivered to whatever redirect URI its author registered. The
decision must come from the browser the page was shown to (a cookie set with it, ``SameSite=Strict``)
and is taken once.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit, urlunsplit

from toolfront.oauth.errors import OAuthError, RedirectableError
from toolfront.oauth.pkce import is_pkce_value
from toolfront.oauth.registration import Registrar
from toolfront.oauth.store import Consent, FacadeStore

IGNORED_SCOPES = frozenset({"offline_access"})  # Cognito's code flow always issues a refresh token


@dataclass(frozen=True, slots=True)
class ConsentPage:
    """What the consent page shows and the cookie that binds its decision to this browser."""

    consent_id: str
    cookie: str
    client_name: str
    redirect_host: str
    scopes: tuple[str, ...]
    verified_host: str | None  # a metadata document's host: who stands behind the name


class Authorizer:
    """Checks authorization requests, keeps them for the person's decision, and sends the decision on."""

    def __init__(
        self,
        registrar: Registrar,
        store: FacadeStore,
        login_url: str,
        *,
        scopes: Collection[str],
        scope_prefix: str,
    ) -> None:
        self._registrar, self._store, self._login = registrar, store, login_url
        self._scopes, self._prefix = frozenset(scopes), scope_prefix

    def request(self, query: Mapping[str, str], source_ip: str, resources: Collection[str]) -> ConsentPage:
        """``GET /oauth/authorize``: the consent page for a valid request.

        Raises:
            OAuthError: the client or redirect URI is unknown (answer 400, no redirect).
            RedirectableError: anything else wrong (back to the client with ``error=``).
        """
        client_id = query.get("client_id", "")
        if not client_id:
            raise OAuthError("invalid_request", "client_id is required")
        registered = self._registrar.for_authorization(client_id, source_ip)
        redirect_uri = query.get("redirect_uri") or ""
        if not redirect_uri:
            if len(registered.metadata.redirect_uris) != 1:
                raise OAuthError("invalid_request", "redirect_uri is required")
            redirect_uri = registered.metadata.redirect_uris[0]
        # Checked before anything can redirect to it; Cognito learns a new port only once the whole
        # request holds, so a refused request never costs an app-client update.
        self._registrar.check_redirect(registered, redirect_uri)
        state = query.get("state")

        def refuse(error: str, description: str) -> RedirectableError:
            return RedirectableError(error, description, redirect_uri=redirect_uri, state=state)

        if query.get("response_type") != "code":
            raise refuse("unsupported_response_type", "response_type must be code")
        challenge = query.get("code_challenge", "")
        if not challenge:
            raise refuse(
                "invalid_request", "PKCE is required: send code_challenge with code_challenge_method=S256"
            )
        if query.get("code_challenge_method") != "S256":
            raise refuse("invalid_request", "code_challenge_method must be S256")
        if not is_pkce_value(challenge):
            raise refuse("invalid_request", "code_challenge must be 43 to 128 characters of [A-Za-z0-9-._~]")
        resource = query.get("resource")
        if resource is not None and resource.rstrip("/") not in resources:
            raise refuse("invalid_target", "resource is not an MCP endpoint of this server")
        scopes = self._granted_scopes(query.get("scope", ""), refuse)
        registered = self._registrar.allow_redirect(registered, redirect_uri, source_ip)
        cookie = secrets.token_urlsafe(32)
        consent_id = secrets.token_urlsafe(24)
        self._store.put_consent(
            consent_id,
            Consent(
                registered.cognito_id,
                registered.metadata.client_name,
                redirect_uri,
                state,
                challenge,
                scopes,
                _hash(cookie),
            ),
        )
        verified = urlsplit(registered.document_url).hostname if registered.document_url else None
        return ConsentPage(
            consent_id,
            cookie,
            registered.metadata.client_name,
            urlsplit(redirect_uri).netloc,
            scopes,
            verified,
        )

    def decide(self, consent_id: str, decision: str, cookie: str | None) -> str:
        """``POST /oauth/authorize``: where the browser goes now (Cognito's login, or back to the
        client with ``error=access_denied``).

        Raises:
            OAuthError: the consent is unknown, used, expired, or from another browser (a 400 page).
        """
        pending = self._store.take_consent(consent_id) if consent_id else None
        if pending is None:
            raise OAuthError(
                "invalid_request", "this sign-in request has expired or was used; start again from your app"
            )
        if not cookie or not hmac.compare_digest(_hash(cookie), pending.browser):
            raise OAuthError(
                "invalid_request", "this decision did not come from the browser the request was shown in"
            )
        if decision != "allow":
            return with_query(pending.redirect_uri, _state({"error": "access_denied"}, pending.state))
        parameters = {
            "response_type": "code",
            "client_id": pending.cognito_id,
            "redirect_uri": pending.redirect_uri,
            "code_challenge": pending.code_challenge,
            "code_challenge_method": "S256",
        }
        if pending.scopes:
            parameters["scope"] = " ".join(pending.scopes)
        return f"{self._login}/oauth2/authorize?" + urlencode(_state(parameters, pending.state))

    def _granted_scopes(
        self, requested: str, refuse: Callable[[str, str], RedirectableError]
    ) -> tuple[str, ...]:
        granted: list[str] = []
        for scope in requested.split():
            if scope in IGNORED_SCOPES:
                continue
            full = scope if scope in self._scopes else f"{self._prefix}/{scope}"
            if full not in self._scopes:
                raise refuse("invalid_scope", f"unknown scope {scope!r}")
            granted.append(full)
        return tuple(dict.fromkeys(granted))


def error_redirect(error: RedirectableError) -> str:
    """The client's redirect URI carrying the refusal (RFC 6749 section 4.1.2.1)."""
    return with_query(
        error.redirect_uri,
        _state({"error": error.error, "error_description": error.description}, error.state),
    )


def with_query(uri: str, parameters: Mapping[str, str]) -> str:
    """``uri`` with ``parameters`` added to its query (a registered URI may carry a query of its own)."""
    parts = urlsplit(uri)
    query = "&".join(q for q in (parts.query, urlencode(parameters)) if q)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


def _state(parameters: dict[str, str], state: str | None) -> dict[str, str]:
    return {**parameters, "state": state} if state is not None else parameters


def _hash(cookie: str) -> str:
    return hashlib.sha256(cookie.encode("utf-8")).hexdigest()
