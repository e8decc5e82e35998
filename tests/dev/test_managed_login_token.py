"""The local managed login's token endpoint (``/_cognito/oauth2/token``) over real HTTP: codes, PKCE, refresh.

Driven as the sign-in facade would (tests/dev/oauth_flow.py), against the shared stack and its one
seeded user; the access tokens verify with toolfront's own CognitoVerifier against moto's JWKS.
"""

from __future__ import annotations

import base64
import logging
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest
from werkzeug.test import Client

from tests.dev.conftest import USER_EMAIL, USER_GROUP, USER_PASSWORD, Fetch
from tests.dev.oauth_flow import (
    CALLBACK,
    OTHER_CALLBACK,
    OUTSIDER_EMAIL,
    READ,
    WRITE,
    Clients,
    Pkce,
    authorize_query,
    authorize_url,
    claims,
    exchange,
    make_clients,
    pkce,
    post_form,
    redirect_params,
    refresh,
    sign_in,
    tokens,
    verifier_for,
)
from toolfront_dev.aws import REGION, moto_client
from toolfront_dev.managed_login import CODE_LIFETIME_SECONDS, ManagedLogin
from toolfront_dev.stack import LocalStack


@pytest.fixture(scope="module")
def clients(stack: LocalStack) -> Clients:
    return make_clients(stack)


# --- POST /oauth2/token: the authorization code ----------------------------------------------


def test_token_right_verifier_answers_tokens(stack: LocalStack, clients: Clients, fetch: Fetch) -> None:
    proof = pkce()
    code = sign_in(stack, fetch, clients.main, proof)

    reply = exchange(stack, fetch, clients.main, code, proof.verifier)

    assert reply.status == 200
    assert reply.headers["cache-control"] == "no-store"
    answer = reply.json()
    assert set(answer) == {"access_token", "id_token", "refresh_token", "token_type", "expires_in"}
    assert (answer["token_type"], answer["expires_in"]) == ("Bearer", 3600)
    identity = claims(answer["id_token"])
    assert (identity["token_use"], identity["aud"], identity["email"]) == ("id", clients.main, USER_EMAIL)


def test_token_access_token_verifies_with_seeded_scopes_and_groups(
    stack: LocalStack, clients: Clients, fetch: Fetch
) -> None:
    answer = tokens(stack, fetch, clients.main, scope=f"openid {READ} {WRITE}")

    verified = verifier_for(stack, clients, clients.main).verify(answer["access_token"])

    # The client allows write too, but the seed gave the user read only.
    assert verified.scopes == frozenset({"catalogue.products:read"})
    assert verified.groups == (USER_GROUP,)
    assert claims(answer["access_token"])["scope"] == f"openid {READ}"


def test_token_user_outside_the_seed_gets_every_requested_scope(
    stack: LocalStack, clients: Clients, fetch: Fetch
) -> None:
    answer = tokens(stack, fetch, clients.main, OUTSIDER_EMAIL, scope=f"{READ} {WRITE}")

    verified = verifier_for(stack, clients, clients.main).verify(answer["access_token"])

    assert verified.scopes == frozenset({"catalogue.products:read", "catalogue.products:write"})
    assert verified.groups == ()
    assert "id_token" not in answer  # no openid scope, no id token (as Cognito)


def test_token_no_scope_requested_means_all_the_client_allows(
    stack: LocalStack, clients: Clients, fetch: Fetch
) -> None:
    answer = tokens(stack, fetch, clients.main, OUTSIDER_EMAIL)

    assert claims(answer["access_token"])["scope"] == f"openid {READ} {WRITE}"


def test_token_id_token_carries_nonce_of_authorize(stack: LocalStack, clients: Clients, fetch: Fetch) -> None:
    answer = tokens(stack, fetch, clients.main, nonce="n-0nce")

    assert claims(answer["id_token"])["nonce"] == "n-0nce"


def test_token_second_use_of_code_is_invalid_grant(stack: LocalStack, clients: Clients, fetch: Fetch) -> None:
    proof = pkce()
    code = sign_in(stack, fetch, clients.main, proof)
    assert exchange(stack, fetch, clients.main, code, proof.verifier).status == 200

    again = exchange(stack, fetch, clients.main, code, proof.verifier)

    assert (again.status, again.json()) == (400, {"error": "invalid_grant"})


def test_token_wrong_verifier_is_invalid_grant_and_spends_the_code(
    stack: LocalStack, clients: Clients, fetch: Fetch
) -> None:
    proof = pkce()
    code = sign_in(stack, fetch, clients.main, proof)

    wrong = exchange(stack, fetch, clients.main, code, pkce().verifier)
    right = exchange(stack, fetch, clients.main, code, proof.verifier)

    assert (wrong.status, wrong.json()) == (400, {"error": "invalid_grant"})
    assert (right.status, right.json()) == (400, {"error": "invalid_grant"})


def test_token_other_clients_code_is_invalid_grant(stack: LocalStack, clients: Clients, fetch: Fetch) -> None:
    proof = pkce()
    code = sign_in(stack, fetch, clients.main, proof)

    reply = exchange(stack, fetch, clients.other, code, proof.verifier)

    assert (reply.status, reply.json()) == (400, {"error": "invalid_grant"})


def test_token_other_redirect_uri_is_invalid_grant(stack: LocalStack, clients: Clients, fetch: Fetch) -> None:
    proof = pkce()
    code = sign_in(stack, fetch, clients.main, proof)

    reply = exchange(stack, fetch, clients.main, code, proof.verifier, redirect_uri=OTHER_CALLBACK)

    assert (reply.status, reply.json()) == (400, {"error": "invalid_grant"})


class Clocked:
    """A managed login of its own on a clock the test moves (its own codes; moto's pool is shared)."""

    def __init__(self) -> None:
        self.now = 1_000_000.0
        self.browser = Client(ManagedLogin(REGION, clock=lambda: self.now))

    def sign_in(self, client_id: str, proof: Pkce) -> str:
        signed_in = self.browser.post(
            f"/oauth2/authorize?{authorize_query(client_id, proof)}",
            data={"username": USER_EMAIL, "password": USER_PASSWORD},
        )
        return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(signed_in.headers["Location"]).query))[
            "code"
        ]

    def token(self, **fields: str) -> tuple[int, Any]:
        reply = self.browser.post("/oauth2/token", data=fields)
        return reply.status_code, reply.get_json()

    def exchange(self, client_id: str, code: str, proof: Pkce) -> tuple[int, Any]:
        return self.token(
            grant_type="authorization_code",
            code=code,
            client_id=client_id,
            redirect_uri=CALLBACK,
            code_verifier=proof.verifier,
        )


def test_token_expired_code_is_invalid_grant(clients: Clients) -> None:
    clocked, proof = Clocked(), pkce()
    code = clocked.sign_in(clients.main, proof)
    clocked.now += CODE_LIFETIME_SECONDS + 1

    assert clocked.exchange(clients.main, code, proof) == (400, {"error": "invalid_grant"})


def test_token_code_just_before_expiry_is_exchanged(clients: Clients) -> None:
    clocked, proof = Clocked(), pkce()
    code = clocked.sign_in(clients.main, proof)
    clocked.now += CODE_LIFETIME_SECONDS - 1

    assert clocked.exchange(clients.main, code, proof)[0] == 200


def test_refresh_token_expires_after_the_clients_refresh_token_validity(clients: Clients) -> None:
    clocked, proof = Clocked(), pkce()
    status, answer = clocked.exchange(clients.main, clocked.sign_in(clients.main, proof), proof)
    assert status == 200
    refreshing = {
        "grant_type": "refresh_token",
        "refresh_token": answer["refresh_token"],
        "client_id": clients.main,
    }

    clocked.now += 29 * 86400  # moto's default RefreshTokenValidity: 30 (days)
    assert clocked.token(**refreshing)[0] == 200
    clocked.now += 2 * 86400
    assert clocked.token(**refreshing) == (400, {"error": "invalid_grant"})


def test_token_lifetime_is_the_clients_access_token_validity(
    stack: LocalStack, clients: Clients, fetch: Fetch
) -> None:
    client_id = moto_client(stack.moto_endpoint, "cognito-idp").create_user_pool_client(
        UserPoolId=clients.pool_id,
        ClientName="short-lived",
        AllowedOAuthFlows=["code"],
        AllowedOAuthFlowsUserPoolClient=True,
        AllowedOAuthScopes=["openid", READ],
        CallbackURLs=[CALLBACK],
        AccessTokenValidity=5,
        IdTokenValidity=10,
        TokenValidityUnits={"AccessToken": "minutes", "IdToken": "minutes"},
    )["UserPoolClient"]["ClientId"]

    answer = tokens(stack, fetch, client_id)

    access, identity = claims(answer["access_token"]), claims(answer["id_token"])
    assert answer["expires_in"] == 300
    assert (access["exp"] - access["iat"], identity["exp"] - identity["iat"]) == (300, 600)


@pytest.mark.parametrize("missing", ["code", "client_id", "redirect_uri", "code_verifier"])
def test_token_missing_parameter_is_invalid_request(
    stack: LocalStack, clients: Clients, fetch: Fetch, missing: str
) -> None:
    fields = {"grant_type": "authorization_code", "code": "c", "client_id": clients.main}
    fields |= {"redirect_uri": CALLBACK, "code_verifier": pkce().verifier}
    del fields[missing]

    reply = post_form(fetch, f"{stack.info.managed_login_url}/oauth2/token", fields)

    assert (reply.status, reply.json()) == (400, {"error": "invalid_request"})


def test_token_unknown_grant_type_is_unsupported(stack: LocalStack, clients: Clients, fetch: Fetch) -> None:
    fields = {"grant_type": "password", "client_id": clients.main}

    reply = post_form(fetch, f"{stack.info.managed_login_url}/oauth2/token", fields)

    assert (reply.status, reply.json()) == (400, {"error": "unsupported_grant_type"})


def test_token_unknown_client_is_invalid_client_401(stack: LocalStack, fetch: Fetch) -> None:
    reply = exchange(stack, fetch, "nosuchclient", "c", pkce().verifier)

    assert (reply.status, reply.json()) == (401, {"error": "invalid_client"})


def test_token_confidential_client_needs_its_secret(
    stack: LocalStack, clients: Clients, fetch: Fetch
) -> None:
    proof = pkce()
    code = sign_in(stack, fetch, clients.confidential, proof)
    refused = exchange(stack, fetch, clients.confidential, code, proof.verifier, client_secret="wrong")
    proof = pkce()
    code = sign_in(stack, fetch, clients.confidential, proof)
    basic = base64.b64encode(f"{clients.confidential}:{clients.secret}".encode()).decode()
    fields = {"grant_type": "authorization_code", "code": code, "redirect_uri": CALLBACK}
    fields["code_verifier"] = proof.verifier

    accepted = post_form(
        fetch, f"{stack.info.managed_login_url}/oauth2/token", fields, [("Authorization", f"Basic {basic}")]
    )

    assert (refused.status, refused.json()) == (401, {"error": "invalid_client"})
    assert accepted.status == 200, accepted.body


# --- POST /oauth2/token: the refresh token ---------------------------------------------------


def test_refresh_answers_new_access_token_with_same_scopes(
    stack: LocalStack, clients: Clients, fetch: Fetch
) -> None:
    first = tokens(stack, fetch, clients.main, scope=f"openid {READ} {WRITE}")

    reply = refresh(stack, fetch, clients.main, first["refresh_token"])

    assert reply.status == 200
    answer = reply.json()
    assert "refresh_token" not in answer  # Cognito keeps the first one
    assert answer["access_token"] != first["access_token"]
    assert claims(answer["id_token"])["token_use"] == "id"
    verified = verifier_for(stack, clients, clients.main).verify(answer["access_token"])
    assert verified.scopes == frozenset({"catalogue.products:read"})
    assert verified.groups == (USER_GROUP,)


@pytest.mark.parametrize("which", ["other client", "unknown token"])
def test_refresh_other_clients_or_unknown_token_is_invalid_grant(
    stack: LocalStack, clients: Clients, fetch: Fetch, which: str
) -> None:
    token = tokens(stack, fetch, clients.main)["refresh_token"] if which == "other client" else "nope"

    reply = refresh(stack, fetch, clients.other, token)

    assert (reply.status, reply.json()) == (400, {"error": "invalid_grant"})


def test_refresh_after_global_sign_out_is_invalid_grant(
    stack: LocalStack, clients: Clients, fetch: Fetch
) -> None:
    answer = tokens(stack, fetch, clients.main, OUTSIDER_EMAIL)
    moto_client(stack.moto_endpoint, "cognito-idp").global_sign_out(AccessToken=answer["access_token"])

    reply = refresh(stack, fetch, clients.main, answer["refresh_token"])

    assert (reply.status, reply.json()) == (400, {"error": "invalid_grant"})


# --- the whole way: a tool call with the token, the request log -----------------------------


def test_access_token_of_stack_client_calls_tool_with_group_permissions(
    stack: LocalStack, fetch: Fetch
) -> None:
    client_id = stack.info.user_pool_clients["UserPoolClient"]
    answer = tokens(stack, fetch, client_id, redirect_uri="http://localhost:8976/callback", scope=READ)
    headers = [("Authorization", f"Bearer {answer['access_token']}"), ("Content-Type", "application/json")]

    listed = fetch(
        f"{stack.api_url}/v1/tools/catalogue/list_products", method="POST", body=b"{}", headers=headers
    )
    actor = fetch(f"{stack.api_url}/v1/tools/system/get_actor", method="POST", body=b"{}", headers=headers)

    assert listed.status == 200, listed.body
    described = actor.json()["data"]["actor"]
    assert (described["kind"], described["permissions"]) == ("cognito", ["catalogue"])
    assert described["scopes"] == ["catalogue.products:read"]


class Recorder(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    recorder = Recorder()
    loggers = [logging.getLogger(), logging.getLogger("toolfront_dev")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.addHandler(recorder)
        logger.setLevel(logging.DEBUG)
    try:
        yield recorder
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.removeHandler(recorder)
            logger.setLevel(level)


def test_request_log_shows_paths_never_codes_states_passwords_or_tokens(
    stack: LocalStack, clients: Clients, fetch: Fetch, recorder: Recorder
) -> None:
    proof = pkce()
    url = authorize_url(stack, clients.main, proof, state="state-Secret-42")
    code = redirect_params(post_form(fetch, url, {"username": USER_EMAIL, "password": USER_PASSWORD}))["code"]
    answer = exchange(stack, fetch, clients.main, code, proof.verifier).json()

    logged = "\n".join(recorder.lines)
    assert "/_cognito/oauth2/authorize" in logged
    assert "/_cognito/oauth2/token" in logged
    for secret in (USER_PASSWORD, code, "state-Secret-42", proof.verifier, proof.challenge, *answer.values()):
        assert str(secret) not in logged
