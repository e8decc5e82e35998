"""Signing in on the local stack as a real client does: the MCP Python SDK's own OAuth client
(``OAuthClientProvider``) finds the sign-in from a 401, registers (or presents a client ID metadata
document), sends the person through the consent page and the login form, exchanges the code with
PKCE, and then lists and calls tools on ``/mcp/catalogue``. And the refusals: a wrong verifier, an
unregistered redirect URI, another pool's token, another client's token, an expired token."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import logging
import re
import secrets
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from moto.cognitoidp.models import cognitoidp_backends

from tests.http.conftest import PASSWORD, USER, Api
from tests.http.test_mcp_clients import every_tool
from tests.tls import https_server
from toolfront_dev.aws import REGION, moto_client
from toolfront_dev.stack import LocalStack

READ, WRITE = "toolfront/catalogue.products:read", "toolfront/catalogue.products:write"
ACCOUNT = "123456789012"  # moto's default account


def run(test: Callable[[], Awaitable[None]]) -> None:
    # A thread of its own: Playwright's sync API (tests/browser) keeps an event loop on the main thread.
    with ThreadPoolExecutor(1) as thread:
        thread.submit(anyio.run, test).result()


class Memory(TokenStorage):
    """The SDK's token storage, kept in memory for one test."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


def _field(page: str, pattern: str) -> str:
    found = re.search(pattern, page)
    assert found, f"no {pattern!r} on the page: {page[:300]}"
    return html.unescape(found.group(1))


class Person:
    """A browser and the person at it: opens the authorization URL, allows on the consent page, signs
    in on the login form, and ends on the client's redirect URI (whose query the client reads)."""

    def __init__(self, username: str = USER, password: str = PASSWORD) -> None:
        self.username, self.password = username, password
        self.landed: str | None = None
        self.pages: list[str] = []

    async def open(self, authorization_url: str) -> None:
        async with httpx2.AsyncClient(follow_redirects=False, timeout=10) as browser:
            consent = await browser.get(authorization_url)
            assert consent.status_code == 200, consent.text
            self.pages.append(consent.text)
            consent_id = _field(consent.text, r'name="consent_id" value="([^"]+)"')
            base = authorization_url.split("/oauth/authorize", maxsplit=1)[0]
            allowed = await browser.post(
                f"{base}/oauth/authorize", data={"consent_id": consent_id, "decision": "allow"}
            )
            assert allowed.status_code == 302, allowed.text
            login = await browser.get(allowed.headers["location"])
            assert login.status_code == 200, login.text
            action = _field(login.text, r'<form[^>]*action="([^"]+)"')
            target = action if action.startswith("http") else f"{base}{action}"
            signed_in = await browser.post(
                target, data={"username": self.username, "password": self.password}
            )
            assert signed_in.status_code == 302, signed_in.text
            self.landed = signed_in.headers["location"]

    async def callback(self) -> AuthorizationCodeResult:
        assert self.landed is not None
        query = parse_qs(urlsplit(self.landed).query)
        return AuthorizationCodeResult(code=query["code"][0], state=query.get("state", [None])[0])


def provider(url: str, person: Person, storage: Memory, **options: Any) -> OAuthClientProvider:
    metadata = OAuthClientMetadata(
        client_name="toolfront sign-in test",
        redirect_uris=[options.pop("redirect_uri", "http://127.0.0.1:8976/callback")],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    return OAuthClientProvider(url, metadata, storage, person.open, person.callback, **options)


async def list_and_call(url: str, auth: OAuthClientProvider) -> tuple[set[str], Any]:
    async with (
        create_mcp_http_client(auth=auth) as http,
        streamable_http_client(url, http_client=http) as (read, write, *_),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        names = {tool.name for tool in await every_tool(session)}  # 4 a page on this stack
        actor = await session.call_tool("system-get_actor", {})
        return names, actor


def test_the_sdk_signs_in_by_registering_and_calls_a_family_endpoint(stack: LocalStack) -> None:
    person, storage = Person(), Memory()
    url = f"{stack.api_url}/mcp/catalogue"

    async def scenario() -> None:
        names, actor = await list_and_call(url, provider(url, person, storage))
        assert {"catalogue-list_products", "catalogue-create_product", "system-get_actor"} <= names
        assert actor.is_error is False
        who = actor.structured_content["actor"]
        assert who["kind"] == "cognito" and who["permissions"] == ["catalogue"]
        assert set(who["scopes"]) == {"catalogue.products:read", "catalogue.products:write"}

    run(scenario)
    assert storage.client is not None and storage.tokens is not None
    assert storage.client.token_endpoint_auth_method == "none"
    assert "toolfront sign-in test" in person.pages[0]  # the consent page named the client


def test_a_client_id_metadata_document_signs_in(
    stack: LocalStack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"{stack.api_url}/mcp/catalogue"
    with https_server(tmp_path) as documents:
        monkeypatch.setenv("SSL_CERT_FILE", str(documents.ca_file))  # the facade trusts the test's server
        document_url = f"{documents.url}/agents/client.json"
        document = {
            "client_id": document_url,
            "client_name": "Document agent",
            "redirect_uris": ["http://127.0.0.1/callback"],  # any loopback port (RFC 8252)
            "grant_types": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_method": "none",
        }
        documents.routes["/agents/client.json"] = (200, "application/json", json.dumps(document).encode(), {})
        person, storage = Person(), Memory()
        auth = provider(
            url,
            person,
            storage,
            redirect_uri="http://127.0.0.1:51777/callback",
            client_metadata_url=document_url,
        )

        async def scenario() -> None:
            names, actor = await list_and_call(url, auth)
            assert "catalogue-get_product" in names and actor.is_error is False

        run(scenario)
        assert documents.requests == ["/agents/client.json"]  # fetched once, at the authorization
    assert storage.client is not None and storage.client.client_id == document_url
    assert "published at <code>127.0.0.1</code>" in person.pages[0]


# --- by hand: the refusals ------------------------------------------------------------------------


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def register(api: Api, redirect_uri: str = "http://127.0.0.1:8977/cb", refresh: bool = True) -> str:
    grants = ["authorization_code", "refresh_token"] if refresh else ["authorization_code"]
    metadata = {"redirect_uris": [redirect_uri], "client_name": "by hand", "grant_types": grants}
    answer = api.request(
        "POST",
        "/oauth/register",
        body=json.dumps(metadata).encode(),
        headers={"Content-Type": "application/json"},
    )
    assert answer.status == 201, answer.body
    return str(answer.json()["client_id"])


def code_for(
    stack: LocalStack, client_id: str, challenge: str, redirect_uri: str = "http://127.0.0.1:8977/cb"
) -> str:
    query = urlencode(
        {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": redirect_uri,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": "s1",
            "scope": READ,
        }
    )
    person = Person()
    run(lambda: person.open(f"{stack.api_url}/oauth/authorize?{query}"))
    assert person.landed is not None and person.landed.startswith(redirect_uri)
    found = parse_qs(urlsplit(person.landed).query)
    assert found["state"] == ["s1"]
    return found["code"][0]


def token(api: Api, **fields: str) -> Any:
    body = urlencode(fields).encode()
    return api.request(
        "POST", "/oauth/token", body=body, headers={"Content-Type": "application/x-www-form-urlencoded"}
    )


def test_a_wrong_code_verifier_is_invalid_grant(stack: LocalStack, api: Api) -> None:
    client_id = register(api)
    verifier, challenge = pkce()
    code = code_for(stack, client_id, challenge)
    wrong = token(
        api,
        grant_type="authorization_code",
        code=code,
        client_id=client_id,
        redirect_uri="http://127.0.0.1:8977/cb",
        code_verifier=pkce()[0],
    )
    assert (wrong.status, wrong.json()["error"]) == (400, "invalid_grant")
    # the code was spent on the wrong try: the right verifier cannot use it now either
    late = token(
        api,
        grant_type="authorization_code",
        code=code,
        client_id=client_id,
        redirect_uri="http://127.0.0.1:8977/cb",
        code_verifier=verifier,
    )
    assert (late.status, late.json()["error"]) == (400, "invalid_grant")


def test_the_right_verifier_gets_tokens_that_refresh(stack: LocalStack, api: Api) -> None:
    client_id = register(api)
    verifier, challenge = pkce()
    code = code_for(stack, client_id, challenge)
    fields = {"client_id": client_id, "redirect_uri": "http://127.0.0.1:8977/cb", "code_verifier": verifier}
    tokens = token(api, grant_type="authorization_code", code=code, **fields)
    assert tokens.status == 200, tokens.body
    assert tokens.headers["cache-control"] == "no-store"
    issued = tokens.json()
    assert issued["token_type"] == "Bearer" and issued["refresh_token"]
    assert call_actor(api, issued["access_token"])["scopes"] == ["catalogue.products:read"]
    refreshed = token(
        api, grant_type="refresh_token", refresh_token=issued["refresh_token"], client_id=client_id
    )
    assert refreshed.status == 200 and refreshed.json()["access_token"] != issued["access_token"]


def test_a_client_registered_without_refresh_cannot_refresh(stack: LocalStack, api: Api) -> None:
    client_id = register(api, refresh=False)
    verifier, challenge = pkce()
    code = code_for(stack, client_id, challenge)
    fields = {"client_id": client_id, "redirect_uri": "http://127.0.0.1:8977/cb", "code_verifier": verifier}
    issued = token(api, grant_type="authorization_code", code=code, **fields).json()
    again = token(api, grant_type="refresh_token", refresh_token=issued["refresh_token"], client_id=client_id)
    assert (again.status, again.json()["error"]) == (400, "unauthorized_client")


def test_an_unregistered_redirect_uri_is_never_redirected_to(stack: LocalStack, api: Api) -> None:
    client_id = register(api)
    _, challenge = pkce()
    query = urlencode(
        {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": "https://attacker.example/cb",
            "code_challenge": challenge,
            "code_challenge_method": "S256",
        }
    )
    answer = api.request("GET", f"/oauth/authorize?{query}")
    assert answer.status == 400 and "location" not in answer.headers
    assert b"redirect_uri is not registered" in answer.body


def call_actor(api: Api, access_token: str) -> Any:
    rpc = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "system-get_actor", "arguments": {}},
    }
    answer = api.request(
        "POST",
        "/mcp/catalogue",
        body=json.dumps(rpc).encode(),
        headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
        key=access_token,
    )
    if answer.status != 200:
        return answer
    return answer.json()["result"]["structuredContent"]["actor"]


def pool_token(pool_id: str, client_id: str, username: str, **options: Any) -> str:
    pool = cognitoidp_backends[ACCOUNT][REGION].user_pools[pool_id]
    scope = {"scope": READ}
    signed, _ = pool.create_jwt(client_id, username, "access", extra_data=scope, **options)
    return str(signed)


@pytest.fixture(scope="module")
def pool_id(stack: LocalStack) -> str:
    [found] = stack.info.user_pools.values()
    return str(found)


def refused(answer: Any, message: str) -> None:
    assert answer.status == 401
    assert 'error="invalid_token"' in answer.headers["www-authenticate"]
    assert "/.well-known/oauth-protected-resource/mcp/catalogue" in answer.headers["www-authenticate"]
    assert message in answer.json()["error"]["message"]


def test_a_token_of_another_pool_is_refused(stack: LocalStack, api: Api) -> None:
    idp = moto_client(stack.moto_endpoint, "cognito-idp")
    other = idp.create_user_pool(PoolName="someone-elses")["UserPool"]["Id"]
    app = idp.create_user_pool_client(UserPoolId=other, ClientName="theirs")["UserPoolClient"]["ClientId"]
    idp.admin_create_user(UserPoolId=other, Username=USER, MessageAction="SUPPRESS")
    refused(call_actor(api, pool_token(other, app, USER)), "invalid or expired")


def test_a_token_of_a_client_the_facade_did_not_register_is_refused(
    stack: LocalStack, api: Api, pool_id: str
) -> None:
    idp = moto_client(stack.moto_endpoint, "cognito-idp")
    app = idp.create_user_pool_client(UserPoolId=pool_id, ClientName="side door")["UserPoolClient"][
        "ClientId"
    ]
    refused(call_actor(api, pool_token(pool_id, app, USER)), "another app client")


def test_an_expired_token_is_refused(stack: LocalStack, api: Api, pool_id: str) -> None:
    client_id = register(api)
    assert call_actor(api, pool_token(pool_id, client_id, USER))["kind"] == "cognito"  # the same, in time
    refused(call_actor(api, pool_token(pool_id, client_id, USER, expires_in=-120)), "invalid or expired")


def test_without_a_credential_the_family_endpoint_asks_for_a_sign_in(stack: LocalStack, api: Api) -> None:
    rpc = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}}
    answer = api.request(
        "POST", "/mcp/catalogue", body=json.dumps(rpc).encode(), headers={"Content-Type": "application/json"}
    )
    assert answer.status == 401
    challenge = answer.headers["www-authenticate"]
    assert (
        f'resource_metadata="{stack.api_url}/.well-known/oauth-protected-resource/mcp/catalogue"' in challenge
    )
    assert f'scope="{READ} {WRITE}"' in challenge
    metadata = api.request("GET", "/.well-known/oauth-protected-resource/mcp/catalogue").json()
    assert metadata["resource"] == f"{stack.api_url}/mcp/catalogue"
    assert metadata["authorization_servers"] == [stack.api_url]
    server = api.request("GET", "/.well-known/oauth-authorization-server").json()
    assert server["issuer"] == stack.api_url and server["code_challenge_methods_supported"] == ["S256"]


def test_no_password_code_verifier_or_token_reaches_a_log_or_a_stored_item(
    stack: LocalStack, api: Api, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.http.test_secrets import scan_everything

    caplog.set_level(logging.DEBUG)
    client_id = register(api)
    verifier, challenge = pkce()
    code = code_for(stack, client_id, challenge)
    fields = {"client_id": client_id, "redirect_uri": "http://127.0.0.1:8977/cb", "code_verifier": verifier}
    issued = token(api, grant_type="authorization_code", code=code, **fields).json()
    refreshed = token(
        api, grant_type="refresh_token", refresh_token=issued["refresh_token"], client_id=client_id
    )
    call_actor(api, issued["access_token"])
    secrets_used = {
        "password": PASSWORD,
        "code": code,
        "verifier": verifier,
        "access token": issued["access_token"],
        "refresh token": issued["refresh_token"],
        "refreshed token": refreshed.json()["access_token"],
    }
    # The server's lines (toolfront, the local API, botocore's requests): the test's own browser
    # (httpx2, httpcore) logs the URLs it follows, which carry the code by design.
    client_side = ("httpx2", "httpcore")
    server_lines = [r.getMessage() for r in caplog.records if not r.name.startswith(client_side)]
    logs = "\n".join(server_lines) + capsys.readouterr().out
    stored = scan_everything(stack)
    for name, value in secrets_used.items():
        assert value not in logs, f"the {name} was logged"
        assert value not in stored, f"the {name} was stored"
