"""Driving the local managed login as the sign-in facade and a browser would: PKCE, the form, codes, tokens.

The shared stack's seed holds one user (tests/dev/conftest.py); the app clients are created in its moto.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import html.parser
import secrets
import urllib.parse
from dataclasses import dataclass
from typing import Any

import jwt

from tests.dev.conftest import USER_EMAIL, USER_PASSWORD, Fetch, Reply
from toolfront.auth.cognito import CognitoVerifier
from toolfront.settings import CognitoSettings
from toolfront_dev.aws import REGION, moto_client
from toolfront_dev.stack import LocalStack

CALLBACK = "http://127.0.0.1:8976/callback"
OTHER_CALLBACK = "http://127.0.0.1:8976/other"
READ = "toolfront/catalogue.products:read"
WRITE = "toolfront/catalogue.products:write"
FORM = "application/x-www-form-urlencoded"
STATE = "st&te =/?"  # what a form-encoded redirect must carry back intact
OUTSIDER_EMAIL = "bob@example.com"  # created here, not by the seed: no scope limit of its own


@dataclass(frozen=True, slots=True)
class Clients:
    """The stack's pool and the app clients the tests sign in to."""

    pool_id: str
    main: str  # code flow, openid + read + write, two callbacks
    other: str  # code flow, same callbacks
    implicit: str  # implicit flow only
    confidential: str  # code flow with a secret
    secret: str


@dataclass(frozen=True, slots=True)
class Pkce:
    verifier: str
    challenge: str


def pkce() -> Pkce:
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return Pkce(verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode())


def make_clients(stack: LocalStack) -> Clients:
    """The app clients (new ones at each call) and the user outside the seed (made once)."""
    [pool_id] = stack.info.user_pools.values()
    idp = moto_client(stack.moto_endpoint, "cognito-idp")

    def client(name: str, flows: list[str], secret: bool = False) -> dict[str, Any]:
        created = idp.create_user_pool_client(
            UserPoolId=pool_id,
            ClientName=name,
            GenerateSecret=secret,
            AllowedOAuthFlows=flows,
            AllowedOAuthFlowsUserPoolClient=True,
            AllowedOAuthScopes=["openid", READ, WRITE],
            CallbackURLs=[CALLBACK, OTHER_CALLBACK],
            SupportedIdentityProviders=["COGNITO"],
        )
        return dict(created["UserPoolClient"])

    confidential = client("confidential", ["code"], secret=True)
    with contextlib.suppress(idp.exceptions.UsernameExistsException):  # another module made it
        idp.admin_create_user(
            UserPoolId=pool_id,
            Username=OUTSIDER_EMAIL,
            MessageAction="SUPPRESS",
            UserAttributes=[{"Name": "email", "Value": OUTSIDER_EMAIL}],
        )
    idp.admin_set_user_password(
        UserPoolId=pool_id, Username=OUTSIDER_EMAIL, Password=USER_PASSWORD, Permanent=True
    )
    return Clients(
        pool_id,
        client("main <app> & co", ["code"])["ClientId"],
        client("other", ["code"])["ClientId"],
        client("implicit", ["implicit"])["ClientId"],
        confidential["ClientId"],
        confidential["ClientSecret"],
    )


class FormParser(html.parser.HTMLParser):
    """The sign-in page's form: its method, action and input names."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict[str, str]] = []
        self.inputs: dict[str, dict[str, str]] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if tag == "form":
            self.forms.append(values)
        if tag == "input":
            self.inputs[values["name"]] = values


def parse_form(body: bytes) -> FormParser:
    parser = FormParser()
    parser.feed(body.decode())
    return parser


def authorize_query(client_id: str, proof: Pkce | None = None, **changes: str | None) -> str:
    params: dict[str, str | None] = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": CALLBACK,
        "state": STATE,
        "code_challenge": (proof or pkce()).challenge,
        "code_challenge_method": "S256",
    }
    params.update(changes)
    return urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})


def authorize_url(stack: LocalStack, client_id: str, proof: Pkce | None = None, **changes: str | None) -> str:
    return f"{stack.info.managed_login_url}/oauth2/authorize?{authorize_query(client_id, proof, **changes)}"


def post_form(
    fetch: Fetch, url: str, fields: dict[str, str], headers: list[tuple[str, str]] | None = None
) -> Reply:
    body = urllib.parse.urlencode(fields).encode()
    return fetch(url, method="POST", body=body, headers=[("Content-Type", FORM), *(headers or [])])


def redirect_params(reply: Reply, to: str = CALLBACK) -> dict[str, str]:
    assert reply.status == 302, reply.body
    location = urllib.parse.urlsplit(reply.headers["location"])
    assert urllib.parse.urlunsplit(location._replace(query="")) == to
    return dict(urllib.parse.parse_qsl(location.query))


def sign_in(
    stack: LocalStack,
    fetch: Fetch,
    client_id: str,
    proof: Pkce,
    email: str = USER_EMAIL,
    **changes: str | None,
) -> str:
    """The code a correct sign-in returns to the callback."""
    url = authorize_url(stack, client_id, proof, **changes)
    reply = post_form(fetch, url, {"username": email, "password": USER_PASSWORD})
    return redirect_params(reply, changes.get("redirect_uri") or CALLBACK)["code"]


def exchange(
    stack: LocalStack, fetch: Fetch, client_id: str, code: str, verifier: str, **changes: str
) -> Reply:
    fields = {
        "grant_type": "authorization_code",
        "code": code,
        "client_id": client_id,
        "redirect_uri": CALLBACK,
        "code_verifier": verifier,
    }
    return post_form(fetch, f"{stack.info.managed_login_url}/oauth2/token", {**fields, **changes})


def tokens(
    stack: LocalStack, fetch: Fetch, client_id: str, email: str = USER_EMAIL, **changes: str
) -> dict[str, Any]:
    proof = pkce()
    callback = changes.get("redirect_uri", CALLBACK)
    code = sign_in(stack, fetch, client_id, proof, email, **changes)
    reply = exchange(stack, fetch, client_id, code, proof.verifier, redirect_uri=callback)
    assert reply.status == 200, reply.body
    answer: dict[str, Any] = reply.json()
    return answer


def claims(token: str) -> dict[str, Any]:
    decoded: dict[str, Any] = jwt.decode(token, options={"verify_signature": False})
    return decoded


def verifier_for(stack: LocalStack, clients: Clients, client_id: str) -> CognitoVerifier:
    return CognitoVerifier(
        CognitoSettings(
            issuer=f"https://cognito-idp.{REGION}.amazonaws.com/{clients.pool_id}",
            client_ids=frozenset({client_id}),
            jwks_url=f"{stack.moto_endpoint}/{clients.pool_id}/.well-known/jwks.json",
            scope_prefix="toolfront",
        )
    )


def refresh(stack: LocalStack, fetch: Fetch, client_id: str, token: str) -> Reply:
    fields = {"grant_type": "refresh_token", "refresh_token": token, "client_id": client_id}
    return post_form(fetch, f"{stack.info.managed_login_url}/oauth2/token", fields)
