"""Client ID metadata documents: fetched over https from allow-listed hosts only, with no redirect
followed, a timeout and a size limit, and used only when they name themselves; the app client of a
document is made once and follows the document when it changes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from tests.oauth import app_clients, authorize_query, body, event, handle
from tests.tls import HttpsServer, https_server
from toolfront.oauth import documents
from toolfront.oauth.documents import fetch_document, is_document_url
from toolfront.oauth.errors import OAuthError

PATH = "/oauth/client.json"


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HttpsServer]:
    with https_server(tmp_path, delay=lambda path: 1.0 if path == "/slow" else 0.0) as running:
        monkeypatch.setenv("SSL_CERT_FILE", str(running.ca_file))  # what create_default_context trusts
        yield running


def publish(server: HttpsServer, path: str = PATH, **fields: Any) -> str:
    url = server.url + path
    document = {"client_id": url, "client_name": "Test agent", "redirect_uris": ["http://127.0.0.1/callback"]}
    document.update(fields)
    server.routes[path] = (200, "application/json", json.dumps(document).encode(), {})
    return url


HOSTS = frozenset({"127.0.0.1"})


@pytest.mark.parametrize(
    ("client_id", "expected"),
    [
        ("https://claude.ai/oauth/claude-code-client-metadata", True),
        ("https://claude.ai/", False),
        ("https://claude.ai", False),
        ("http://claude.ai/client.json", False),
        ("8a7b6c5d4e3f", False),
    ],
)
def test_which_client_ids_are_document_urls(client_id: str, expected: bool) -> None:
    assert is_document_url(client_id) is expected


def test_a_published_document_is_read(server: HttpsServer) -> None:
    url = publish(server, grant_types=["authorization_code", "refresh_token"])
    metadata = fetch_document(url, HOSTS)
    assert metadata.client_name == "Test agent"
    assert metadata.redirect_uris == ("http://127.0.0.1/callback",)
    assert metadata.grant_types == ("authorization_code", "refresh_token")


def test_a_host_off_the_allow_list_is_never_fetched(server: HttpsServer) -> None:
    url = publish(server)
    with pytest.raises(OAuthError, match="not accepted here"):
        fetch_document(url, frozenset({"claude.ai"}))
    assert server.requests == []


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda s: publish(s, client_id="https://elsewhere.example/client.json"), "not its own URL"),
        (lambda s: publish(s, redirect_uris=["http://attacker.example/cb"]), "not usable"),
        (lambda s: publish(s, token_endpoint_auth_method="private_key_jwt"), "not usable"),
        (lambda s: publish(s, client_name="x" * 9000), "larger than"),
    ],
)
def test_a_document_that_does_not_hold_is_refused(server: HttpsServer, setup: Any, message: str) -> None:
    with pytest.raises(OAuthError, match=message) as refused:
        fetch_document(setup(server), HOSTS)
    assert refused.value.error == "invalid_client"


def test_a_redirect_is_not_followed(server: HttpsServer) -> None:
    target = publish(server, "/moved.json")
    server.routes[PATH] = (302, "text/plain", b"", {"location": target})
    with pytest.raises(OAuthError, match="HTTP 302"):
        fetch_document(server.url + PATH, HOSTS)
    assert server.requests == [PATH]


@pytest.mark.parametrize(
    ("route", "message"),
    [((404, "text/plain", b"", {}), "HTTP 404"), ((200, "application/json", b"{not json", {}), "not JSON")],
)
def test_a_missing_or_broken_document_is_refused(server: HttpsServer, route: Any, message: str) -> None:
    server.routes[PATH] = route
    with pytest.raises(OAuthError, match=message):
        fetch_document(server.url + PATH, HOSTS)


def test_a_slow_host_times_out(server: HttpsServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(documents, "FETCH_TIMEOUT_SECONDS", 0.2)
    publish(server, "/slow")
    with pytest.raises(OAuthError, match="could not be fetched"):
        fetch_document(server.url + "/slow", HOSTS)


def test_a_certificate_nobody_trusts_is_refused(server: HttpsServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SSL_CERT_FILE")
    with pytest.raises(OAuthError, match="could not be fetched"):
        fetch_document(publish(server), HOSTS)


# --- through the facade ---------------------------------------------------------------------------


@pytest.fixture
def facade_hosts(pool: str, monkeypatch: pytest.MonkeyPatch) -> str:
    from tests.conftest import reset_process_state

    monkeypatch.setenv("TOOLFRONT_CLIENT_METADATA_HOSTS", "127.0.0.1")
    reset_process_state()
    return pool


def test_a_document_gets_one_app_client_that_follows_its_changes(
    server: HttpsServer, facade_hosts: str
) -> None:
    url = publish(server)
    redirect = "http://127.0.0.1:50999/callback"
    first = handle(event("GET /oauth/authorize", query=authorize_query(url, redirect_uri=redirect)))
    assert first["statusCode"] == 200, first["body"]
    assert "published at <code>127.0.0.1</code>" in first["body"]
    again = handle(event("GET /oauth/authorize", query=authorize_query(url, redirect_uri=redirect)))
    assert again["statusCode"] == 200
    (created,) = app_clients(facade_hosts)
    assert created["CallbackURLs"] == ["http://127.0.0.1/callback", redirect]
    publish(server, redirect_uris=["http://localhost/callback"])  # the owner changed the document
    moved = "http://localhost:50998/callback"
    assert (
        handle(event("GET /oauth/authorize", query=authorize_query(url, redirect_uri=moved)))["statusCode"]
        == 200
    )
    (updated,) = app_clients(facade_hosts)
    assert updated["ClientId"] == created["ClientId"]
    assert updated["CallbackURLs"] == ["http://localhost/callback", moved]  # the old port went with its URI
    stale = handle(event("GET /oauth/authorize", query=authorize_query(url, redirect_uri=redirect)))
    assert stale["statusCode"] == 400 and "location" not in stale["headers"]


def test_a_redirect_uri_the_document_does_not_list_is_refused(server: HttpsServer, facade_hosts: str) -> None:
    url = publish(server)
    query = authorize_query(url, redirect_uri="https://attacker.example/callback")
    answer = handle(event("GET /oauth/authorize", query=query))
    assert answer["statusCode"] == 400 and "location" not in answer["headers"]


def test_a_token_request_of_a_document_never_seen_is_invalid_client(
    server: HttpsServer, facade_hosts: str
) -> None:
    form = f"grant_type=refresh_token&refresh_token=r&client_id={publish(server)}"
    answer = handle(event("POST /oauth/token", body=form, form=True))
    assert (answer["statusCode"], body(answer)["error"]) == (401, "invalid_client")
    assert server.requests == []  # a token request never fetches


def test_an_unlisted_document_host_is_a_page_not_a_redirect(server: HttpsServer, pool: str) -> None:
    answer = handle(event("GET /oauth/authorize", query=authorize_query(publish(server))))
    assert answer["statusCode"] == 400 and "location" not in answer["headers"]
    assert "not accepted here" in answer["body"]
    assert boto3.client("cognito-idp") and app_clients(pool) == []
