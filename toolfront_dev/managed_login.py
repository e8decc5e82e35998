"""The local stand-in for Cognito's managed login: ``/oauth2/authorize`` (a sign-in form), ``/oauth2/token``.

Deployed, the sign-in facade sends people to ``<domain>/oauth2/authorize`` and exchanges the code
at ``<domain>/oauth2/token``; moto serves neither. This app, mounted on the local API server at
``/_cognito``, answers both as Cognito does (the same parameters, checks, errors and token shapes)
from moto's own state, read in-process: the pools, their app clients (callback URLs, flows, scopes),
users and groups. Tokens are signed with the pool's own key (``pool.create_jwt``), whose JWKS moto
serves at ``<moto>/<pool id>/.well-known/jwks.json``, so they verify like moto's other tokens; they
live as long as the app client's token validities say (Cognito's defaults: 1 hour, refresh 30 days)
and are registered with the pool too, so moto's GetUser and GlobalSignOut know them. moto's models
are private API, read as moto 5.2.5 (pinned in pyproject.toml) lays them out.

Locally the seed's scopes stand in for a pre-token-generation trigger: deployed Cognito grants any
user every requested scope the app client allows and cannot restrict scopes per user without such a
trigger. Here a seeded user is granted a resource server's scope ``<identifier>/<s>`` only when one
of its seeded scopes covers ``s`` (``scope_covers``); scopes without a resource server (``openid``,
``email``) are granted as requested, and users the seed did not create get what Cognito would give.

Not emulated: sign-up, forgotten passwords, MFA, federated identity providers, the XSRF cookie,
/logout and /oauth2/userInfo. Passwords, codes, tokens and states are never logged; the local API's
request log shows paths only, never query strings.
"""

from __future__ import annotations

import hmac
import html
import json
import secrets
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from werkzeug.datastructures import MultiDict
from werkzeug.wrappers import Request, Response

from toolfront.auth.actors import scope_covers
from toolfront.oauth.pkce import is_pkce_value, s256_challenge
from toolfront_dev.payload import LOCAL_ACCOUNT_ID

PREFIX = "/_cognito"  # where the local API server mounts it; the facade's TOOLFRONT_COGNITO_DOMAIN_URL
CODE_LIFETIME_SECONDS = 300  # Cognito's authorization codes live 5 minutes
_UNIT_SECONDS = {"seconds": 1, "minutes": 60, "hours": 3600, "days": 86400}
# An app client's AccessTokenValidity, IdTokenValidity and RefreshTokenValidity, when it sets none:
# Cognito's defaults (1 hour, 1 hour, 30 days) and units (TokenValidityUnits).
_VALIDITY = {"AccessToken": (1, "hours"), "IdToken": (1, "hours"), "RefreshToken": (30, "days")}
BAD_LOGIN = "Incorrect username or password."
# RFC 7636: a challenge (and a verifier) is 43 to 128 unreserved characters.
_NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}
# The sign-in page may not be framed: a framed form invites clickjacking of credentials.
_PAGE_HEADERS = {**_NO_STORE, "X-Frame-Options": "DENY", "Content-Security-Policy": "frame-ancestors 'none'"}
_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{{font-family:system-ui,sans-serif;max-width:24rem;margin:4rem auto;padding:0 1rem}}
label,input,button{{display:block;width:100%;margin:.4rem 0}}
input,button{{padding:.5rem;box-sizing:border-box}}
.error{{color:#b00020}}.note{{color:#666;font-size:.85rem}}</style></head>
<body><main>{body}</main></body></html>
"""


@dataclass(frozen=True, slots=True)
class _Authorization:
    """An authorize request that passed every check."""

    pool: Any  # moto's CognitoIdpUserPool
    client: Any  # moto's CognitoIdpUserPoolClient
    redirect_uri: str
    state: str | None
    challenge: str
    scopes: tuple[str, ...]
    nonce: str | None


@dataclass(frozen=True, slots=True)
class _Grant:
    """What an authorization code stands for (single use, until ``expires_at``)."""

    client_id: str
    redirect_uri: str
    challenge: str
    scopes: tuple[str, ...]
    username: str  # moto's username (the sub in an e-mail pool)
    nonce: str | None
    expires_at: float


@dataclass(frozen=True, slots=True)
class _Session:
    """What a refresh token stands for: new tokens with the scopes first granted."""

    pool_id: str
    client_id: str
    username: str
    scopes: tuple[str, ...]
    expires_at: float  # the client's RefreshTokenValidity from the sign-in


class ManagedLogin:
    """The managed login of every moto user pool of this process, as a WSGI app.

    Args:
        region: the region of moto's Cognito backend (the stack's).
        account_id: moto's account (its default, which every local client lands in).
        clock: seconds since the epoch (tests move it to expire codes).
    """

    def __init__(
        self, region: str, account_id: str = LOCAL_ACCOUNT_ID, clock: Callable[[], float] = time.time
    ) -> None:
        self._region, self._account_id, self._clock = region, account_id, clock
        self._lock = threading.Lock()  # the server is threaded: a code must be taken exactly once
        self._codes: dict[str, _Grant] = {}
        self._sessions: dict[str, _Session] = {}
        self._held: dict[tuple[str, str], tuple[str, ...]] = {}

    def hold_scopes(self, user_pool_id: str, username: str, scopes: Iterable[str]) -> None:
        """Limit what a seeded user is granted to what ``scopes`` cover (``username``: moto's)."""
        self._held[(user_pool_id, username)] = tuple(scopes)

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        """WSGI entry point (mounted, its script root is the mount prefix)."""
        return self.dispatch(Request(environ))(environ, start_response)

    def dispatch(self, request: Request) -> Response:
        """Answer one request; ``request.path`` is relative to the mount prefix."""
        if request.path == "/oauth2/authorize" and request.method in ("GET", "POST"):
            checked = self._check(request.args)
            if isinstance(checked, Response):
                return checked
            if request.method == "GET":
                return _form(request, checked)
            return self._sign_in(request, checked)
        if request.path == "/oauth2/token":
            if request.method != "POST":
                return _json(405, {"error": "invalid_request"})
            return self._token(request)
        return _page(404, "Not found", "The managed login serves /oauth2/authorize and /oauth2/token.")

    # --- authorize ------------------------------------------------------------------------------

    def _check(self, args: MultiDict[str, str]) -> _Authorization | Response:
        """Cognito's checks, in its order: until the client and its redirect URI are known, errors are
        pages (never a redirect to an unregistered URI); after that they return to the client."""
        found = self._client(args.get("client_id", ""))
        if found is None:
            return _page(400, "Sign-in error", "The app client (client_id) is unknown.")
        pool, client = found
        config: Mapping[str, Any] = client.extended_config
        redirect_uri = args.get("redirect_uri", "")
        if redirect_uri not in (config.get("CallbackURLs") or []):
            return _page(400, "Sign-in error", "redirect_mismatch: the redirect_uri is not registered.")
        state = args.get("state")

        def refuse(error: str) -> Response:
            return _redirect(redirect_uri, {"error": error, "state": state})

        if args.get("response_type") != "code":
            return refuse("unsupported_response_type")
        if "code" not in (config.get("AllowedOAuthFlows") or []) or not config.get(
            "AllowedOAuthFlowsUserPoolClient"
        ):
            return refuse("unauthorized_client")
        challenge = args.get("code_challenge", "")
        # Cognito itself would take a request without PKCE; toolfront requires S256, and so does this.
        if not is_pkce_value(challenge) or args.get("code_challenge_method") != "S256":
            return refuse("invalid_request")
        allowed = list(config.get("AllowedOAuthScopes") or [])
        requested = tuple(dict.fromkeys(args.get("scope", "").split() or allowed))
        if any(scope not in allowed for scope in requested):
            return refuse("invalid_scope")
        return _Authorization(pool, client, redirect_uri, state, challenge, requested, args.get("nonce"))

    def _sign_in(self, request: Request, checked: _Authorization) -> Response:
        username, password = request.form.get("username", ""), request.form.get("password", "")
        user = checked.pool._get_user(username) if username else None  # by e-mail, as Cognito signs in
        if user is None or not _may_sign_in(user, password):
            return _form(request, checked, username=username, error=BAD_LOGIN)
        code = secrets.token_urlsafe(32)
        grant = _Grant(
            checked.client.id,
            checked.redirect_uri,
            checked.challenge,
            self._granted(checked.pool, user.username, checked.scopes),
            user.username,
            checked.nonce,
            self._clock() + CODE_LIFETIME_SECONDS,
        )
        with self._lock:
            now = self._clock()
            self._codes = {c: g for c, g in self._codes.items() if g.expires_at > now}  # forget stale codes
            self._codes[code] = grant
        return _redirect(checked.redirect_uri, {"code": code, "state": checked.state})

    def _granted(self, pool: Any, username: str, requested: tuple[str, ...]) -> tuple[str, ...]:
        held = self._held.get((pool.id, username))
        if held is None:
            return requested  # not a seeded user: what Cognito itself grants
        prefixes = [f"{identifier}/" for identifier in pool.resource_servers]
        granted = []
        for scope in requested:
            prefix = next((p for p in prefixes if scope.startswith(p)), None)
            if prefix is None or any(scope_covers(h, scope[len(prefix) :]) for h in held):
                granted.append(scope)
        return tuple(granted)

    # --- token ----------------------------------------------------------------------------------

    def _token(self, request: Request) -> Response:
        form = request.form
        grant_type = form.get("grant_type", "")
        code = form.get("code", "") if grant_type == "authorization_code" else ""
        with self._lock:
            grant = self._codes.pop(code, None)  # consumed on first presentation, whatever follows
        if not grant_type:
            return _json(400, {"error": "invalid_request"})
        if grant_type not in ("authorization_code", "refresh_token"):
            return _json(400, {"error": "unsupported_grant_type"})
        client_id, secret = _credentials(request)
        refreshing = grant_type == "refresh_token"
        required = ("refresh_token",) if refreshing else ("code", "redirect_uri", "code_verifier")
        if not client_id or any(not form.get(name) for name in required):
            return _json(400, {"error": "invalid_request"})
        found = self._client(client_id)
        if found is None or not _authenticated(found[1], secret):
            return _json(401, {"error": "invalid_client"})
        pool, client = found
        if refreshing:
            return self._refresh(form["refresh_token"], client)
        verifier = form["code_verifier"]
        if (
            grant is None
            or grant.expires_at <= self._clock()
            or grant.client_id != client_id
            or grant.redirect_uri != form["redirect_uri"]
            or not is_pkce_value(verifier)
            or not hmac.compare_digest(s256_challenge(verifier), grant.challenge)
        ):
            return _json(400, {"error": "invalid_grant"})
        user = pool._get_user(grant.username)
        if user is None or not user.enabled:
            return _json(400, {"error": "invalid_grant"})
        refresh_token, origin_jti = pool.create_refresh_token(client_id, grant.username)
        lasts = self._clock() + _lifetime(client, "RefreshToken")
        with self._lock:
            self._sessions[refresh_token] = _Session(pool.id, client_id, grant.username, grant.scopes, lasts)
        tokens = self._tokens(pool, user, client, grant.scopes, origin_jti, grant.nonce)
        return _json(200, {**tokens, "refresh_token": refresh_token})

    def _refresh(self, refresh_token: str, client: Any) -> Response:
        session = self._sessions.get(refresh_token)
        pool = self._backend().user_pools.get(session.pool_id) if session else None
        # Another client's token is no token at all.
        if session is None or pool is None or session.client_id != client.id:
            return _json(400, {"error": "invalid_grant"})
        moto_session = pool.refresh_tokens.get(refresh_token)  # None after GlobalSignOut
        user = pool._get_user(session.username)
        if moto_session is None or session.expires_at <= self._clock() or user is None or not user.enabled:
            return _json(400, {"error": "invalid_grant"})
        return _json(200, self._tokens(pool, user, client, session.scopes, moto_session[2], None))

    def _tokens(
        self, pool: Any, user: Any, client: Any, scopes: tuple[str, ...], origin_jti: str, nonce: str | None
    ) -> dict[str, Any]:
        """An access token and, with ``openid`` granted, an id token, as Cognito issues them."""
        groups = sorted(group.group_name for group in user.groups)
        common: dict[str, Any] = {"origin_jti": origin_jti} | ({"cognito:groups": groups} if groups else {})
        lifetime = _lifetime(client, "AccessToken")
        access, _ = pool.create_jwt(
            client.id,
            user.username,
            "access",
            expires_in=lifetime,
            extra_data={**common, "scope": " ".join(scopes)},
        )
        pool.access_tokens[access] = (client.id, user.username)  # moto's GetUser knows it
        answer = {"access_token": access, "token_type": "Bearer", "expires_in": lifetime}
        if "openid" in scopes:  # Cognito issues an id token only for the openid scope
            attributes = {a["Name"]: a["Value"] for a in user.attributes}
            # moto would put the username (the sub, in an e-mail pool) in the email claim.
            claims = {**common, "email": attributes.get("email", user.username)}
            claims |= {"email_verified": attributes.get("email_verified") == "true"}
            claims |= {"nonce": nonce} if nonce else {}
            answer["id_token"], _ = pool.create_jwt(
                client.id, user.username, "id", expires_in=_lifetime(client, "IdToken"), extra_data=claims
            )
            pool.id_tokens[answer["id_token"]] = (client.id, user.username)
        return answer

    # --- moto ------------------------------------------------------------------------------------

    def _backend(self) -> Any:
        from moto.cognitoidp.models import cognitoidp_backends  # deferred: moto is a dev extra

        # Looked up per request: moto's reset replaces the backend objects.
        return cognitoidp_backends[self._account_id][self._region]

    def _client(self, client_id: str) -> tuple[Any, Any] | None:
        """The pool and app client of ``client_id``, in whichever pool holds it."""
        for pool in list(self._backend().user_pools.values()):
            client = pool.clients.get(client_id) if client_id else None
            if client is not None:
                return pool, client
        return None


def _lifetime(client: Any, token: str) -> int:
    """Seconds a token of ``token`` kind (``AccessToken``...) lives, as the app client configures it."""
    config: Mapping[str, Any] = client.extended_config
    value, unit = _VALIDITY[token]
    value = config.get(f"{token}Validity") or value
    unit = (config.get("TokenValidityUnits") or {}).get(token) or unit
    return int(value) * _UNIT_SECONDS.get(unit, 3600)


def _may_sign_in(user: Any, password: str) -> bool:
    """Whether ``password`` is the user's, and the user may sign in (enabled, confirmed)."""
    # moto keeps the password itself on the user; compared in constant time all the same.
    stored = user.password if isinstance(user.password, str) else ""
    matches = hmac.compare_digest(stored.encode(), password.encode())
    return bool(stored) and matches and user.enabled and user.status == "CONFIRMED"


def _credentials(request: Request) -> tuple[str, str | None]:
    """The client id and secret: HTTP Basic (form-encoded, RFC 6749 §2.3.1) or the form's fields."""
    basic = request.authorization
    if basic is not None and basic.type == "basic" and basic.username:
        return urllib.parse.unquote_plus(basic.username), urllib.parse.unquote_plus(basic.password or "")
    return request.form.get("client_id", ""), request.form.get("client_secret")


def _authenticated(client: Any, secret: str | None) -> bool:
    """A public client needs no secret; a confidential one must present its own."""
    if not client.generate_secret:
        return True
    return secret is not None and hmac.compare_digest(secret.encode(), str(client.secret).encode())


def _redirect(uri: str, params: Mapping[str, str | None]) -> Response:
    """302 to ``uri`` with ``params`` added to its query (``None`` values left out)."""
    parts = urllib.parse.urlsplit(uri)
    added = urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
    query = f"{parts.query}&{added}" if parts.query else added
    return Response(status=302, headers={"Location": parts._replace(query=query).geturl(), **_NO_STORE})


def _json(status: int, body: Mapping[str, Any]) -> Response:
    return Response(json.dumps(body), status=status, mimetype="application/json", headers=_NO_STORE)


def _page(status: int, title: str, message: str) -> Response:
    body = f'<h1>{html.escape(title)}</h1>\n<p class="error">{html.escape(message)}</p>'
    return _html(status, title, body)


def _html(status: int, title: str, body: str) -> Response:
    text = _PAGE.format(title=html.escape(title), body=body)
    return Response(text, status=status, mimetype="text/html", headers=_PAGE_HEADERS)


def _form(
    request: Request, checked: _Authorization, username: str = "", error: str | None = None
) -> Response:
    """The sign-in form; it posts to this very URL, so the POST is checked as the GET was."""
    action = f"{request.script_root}{request.path}?{request.environ.get('QUERY_STRING', '')}"
    name = checked.client.extended_config.get("ClientName") or checked.client.id
    alert = f'<p class="error" role="alert">{html.escape(error)}</p>\n' if error else ""
    body = (
        f"<h1>Sign in</h1>\n<p>to {html.escape(str(name))}</p>\n{alert}"
        f'<form method="post" action="{html.escape(action)}">\n'
        f'<label for="username">Email</label>\n'
        f'<input id="username" name="username" type="email" autocomplete="username" required autofocus'
        f' value="{html.escape(username)}">\n'
        '<label for="password">Password</label>\n'
        '<input id="password" name="password" type="password" autocomplete="current-password" required>\n'
        '<button type="submit">Sign in</button>\n</form>\n'
        '<p class="note">toolfront dev: the local stand-in for Cognito\'s managed login.</p>'
    )
    return _html(400 if error else 200, "Sign in", body)
