"""The sign-in facade against round 3's probes: a loopback redirect URI checked as strictly as at
registration and its new ports rationed (N5), unused registrations that give their place back
(N8), the one JSON reader on ``/oauth/register`` (N9) and a metadata document fetched within one
deadline and read by that reader (N14)."""

from __future__ import annotations

import socket
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.oauth import SCOPES, app_clients, authorize_query, body, event, handle
from tests.tls import HttpsServer, _certificate, https_server
from toolfront.oauth import documents, registration
from toolfront.oauth.apps import CognitoApps
from toolfront.oauth.documents import fetch_document
from toolfront.oauth.errors import OAuthError
from toolfront.oauth.registration import Registrar
from toolfront.oauth.store import FacadeStore
from toolfront.oauth.token import TokenExchange
from toolfront.settings import FacadeSettings, current
from toolfront_dev.iam.enforcement import running_as

LOOPBACK = "http://127.0.0.1:4000/cb"


def loopback_client() -> str:
    answer = handle(event("POST /oauth/register", body={"redirect_uris": [LOOPBACK]}))
    assert answer["statusCode"] == 201
    return str(body(answer)["client_id"])


# --- N5: the request's loopback redirect URI ----------------------------------------------------


@pytest.mark.parametrize(
    "redirect_uri",
    [
        "http://evil.example\\@127.0.0.1:4003/cb",  # loopback to urlsplit, evil.example to a browser
        "http://evil@127.0.0.1:4002/cb",
        "http://127.0.0.1:4002/cb#frag",
        " http://127.0.0.1:4002/cb",
        "http://127.0.0.1:4002/cb\n",
        "http://127.0.0.1:4002\\cb",
    ],
)
def test_authorize_loopback_uri_failing_registration_rules_is_a_page_and_never_reaches_cognito(
    pool: str, redirect_uri: str
) -> None:
    client_id = loopback_client()
    query = authorize_query(client_id, redirect_uri=redirect_uri, response_type="token")
    answer = handle(event("GET /oauth/authorize", query=query))
    assert answer["statusCode"] == 400
    assert "location" not in answer["headers"]
    (created,) = app_clients(pool)
    assert created["CallbackURLs"] == [LOOPBACK]


def test_authorize_bad_request_on_a_new_port_goes_back_without_updating_cognito(pool: str) -> None:
    client_id = loopback_client()
    used = "http://127.0.0.1:5999/cb"
    query = authorize_query(client_id, redirect_uri=used, response_type="token")
    answer = handle(event("GET /oauth/authorize", query=query))
    assert answer["statusCode"] == 302
    assert answer["headers"]["location"].startswith(used + "?error=unsupported_response_type")
    (created,) = app_clients(pool)
    assert created["CallbackURLs"] == [LOOPBACK]


def test_authorize_new_loopback_ports_are_limited_per_address(
    pool: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(registration, "NEW_PORTS_PER_IP_PER_HOUR", 2)
    client_id = loopback_client()

    def authorize(port: int, ip: str = "198.51.100.7") -> dict[str, Any]:
        query = authorize_query(client_id, redirect_uri=f"http://127.0.0.1:{port}/cb")
        return handle(event("GET /oauth/authorize", query=query, ip=ip))

    assert [authorize(p)["statusCode"] for p in (5001, 5002)] == [200, 200]
    refused = authorize(5003)
    assert refused["statusCode"] == 429 and "location" not in refused["headers"]
    assert refused["headers"]["content-type"].startswith("text/html")
    assert authorize(5001)["statusCode"] == 200  # a port Cognito knows costs nothing
    assert authorize(5003, ip="203.0.113.9")["statusCode"] == 200
    (created,) = app_clients(pool)
    assert created["CallbackURLs"] == [LOOPBACK, *(f"http://127.0.0.1:{p}/cb" for p in (5001, 5002, 5003))]


# --- N8: registrations never used expire --------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def facade_parts(
    pool: str, clock: Clock, max_clients: int = 1
) -> tuple[Registrar, TokenExchange, FacadeStore]:
    settings = current()
    assert settings.cognito is not None and settings.cognito.clients_table is not None
    store = FacadeStore(settings.cognito.clients_table, settings.rate_limits_table, clock=clock)
    facade = FacadeSettings(pool, "https://login.example.com", frozenset(), max_clients=max_clients)
    registrar = Registrar(store, CognitoApps(pool, SCOPES), facade, clock=clock)
    return registrar, TokenExchange(registrar, "https://login.example.com"), store


def test_an_unused_registration_expires_and_gives_its_place_back(pool: str) -> None:
    clock = Clock()
    registrar, _, store = facade_parts(pool, clock)
    with running_as("OAuthFunction"):
        first = registrar.register({"redirect_uris": [LOOPBACK]}, "198.51.100.7")["client_id"]
        clock.now += 3600
        with pytest.raises(OAuthError) as full:
            registrar.register({"redirect_uris": [LOOPBACK]}, "203.0.113.9")
        assert full.value.error == "registration_limit_reached"
        clock.now += registration.UNUSED_CLIENT_SECONDS
        second = registrar.register({"redirect_uris": [LOOPBACK]}, "203.0.113.9")["client_id"]
        assert store.get_client(first) is None
    assert [c["ClientId"] for c in app_clients(pool)] == [second]


def test_a_registration_that_got_a_token_keeps_its_place(pool: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from toolfront.oauth import token

    clock = Clock()
    registrar, tokens, _ = facade_parts(pool, clock)
    monkeypatch.setattr(
        token, "post_token_request", lambda *a: (200, {"access_token": "at", "token_type": "Bearer"})
    )
    with running_as("OAuthFunction"):
        first = registrar.register({"redirect_uris": [LOOPBACK]}, "198.51.100.7")["client_id"]
        form = {"grant_type": "authorization_code", "code": "c", "redirect_uri": LOOPBACK}
        status, _ = tokens.exchange({**form, "client_id": first, "code_verifier": "v" * 43}, ())
        assert status == 200
        clock.now += registration.UNUSED_CLIENT_SECONDS + 3600
        with pytest.raises(OAuthError, match="registers at most"):
            registrar.register({"redirect_uris": [LOOPBACK]}, "203.0.113.9")
    assert [c["ClientId"] for c in app_clients(pool)] == [first]


# --- N9: /oauth/register reads JSON with the one reader -----------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "[" * 5000 + "]" * 5000,
        '{"redirect_uris": ["https://a.example/cb"], "x": NaN}',
        '{"client_name": "\\ud800"}',
    ],
)
def test_register_body_the_one_reader_refuses_is_an_oauth_400(pool: str, text: str) -> None:
    answer = handle(event("POST /oauth/register", body=text, headers={"content-type": "application/json"}))
    assert answer["statusCode"] == 400
    assert body(answer)["error"] == "invalid_client_metadata"
    assert app_clients(pool) == []


# --- N14: the metadata document's fetch -----------------------------------------------------------


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HttpsServer]:
    with https_server(tmp_path) as running:
        monkeypatch.setenv("SSL_CERT_FILE", str(running.ca_file))
        yield running


def publish_text(server: HttpsServer, text: str) -> str:
    server.routes["/client.json"] = (200, "application/json", text.encode(), {})
    return server.url + "/client.json"


def test_document_nested_deeply_is_refused_as_invalid_client(server: HttpsServer) -> None:
    url = server.url + "/client.json"
    nested = "[" * 4000 + "]" * 4000
    publish_text(server, f'{{"client_id": "{url}", "x": {nested}}}')
    with pytest.raises(OAuthError, match="not JSON") as refused:
        fetch_document(url, frozenset({"127.0.0.1"}))
    assert refused.value.error == "invalid_client"


def test_document_with_a_surrogate_in_client_name_is_refused_as_invalid_client(server: HttpsServer) -> None:
    url = server.url + "/client.json"
    name = "\\ud800"  # a lone surrogate, escaped as JSON allows
    document = f'{{"client_id": "{url}", "client_name": "{name}", "redirect_uris": ["{LOOPBACK}"]}}'
    publish_text(server, document)
    with pytest.raises(OAuthError) as refused:
        fetch_document(url, frozenset({"127.0.0.1"}))
    assert (refused.value.error, refused.value.status) == ("invalid_client", 400)


@contextmanager
def dribbling_server(directory: Path, pause_seconds: float, length: int) -> Iterator[tuple[str, Path]]:
    """An https server that answers headers at once, then one byte of body every ``pause_seconds``."""
    cert_file, key_file = _certificate(directory)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                raw, _ = listener.accept()
            except TimeoutError:
                continue
            try:
                with context.wrap_socket(raw, server_side=True) as connection:
                    connection.recv(65536)
                    head = f"HTTP/1.1 200 OK\r\ncontent-length: {length}\r\n\r\n"
                    connection.sendall(head.encode())
                    for _ in range(length):
                        if stop.wait(pause_seconds):
                            return
                        connection.sendall(b" ")
            except OSError:
                continue

    worker = threading.Thread(target=serve, daemon=True)
    worker.start()
    try:
        yield f"https://127.0.0.1:{listener.getsockname()[1]}", cert_file
    finally:
        stop.set()
        worker.join(5)
        listener.close()


def test_document_dribbled_slowly_is_refused_within_one_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(documents, "FETCH_TIMEOUT_SECONDS", 1.0)
    with dribbling_server(tmp_path, pause_seconds=0.3, length=20) as (url, ca_file):
        monkeypatch.setenv("SSL_CERT_FILE", str(ca_file))
        started = time.monotonic()
        with pytest.raises(OAuthError) as refused:
            fetch_document(url + "/client.json", frozenset({"127.0.0.1"}))
        elapsed = time.monotonic() - started
    assert refused.value.error == "invalid_client"
    assert elapsed < 2.0  # per read it would take 20 x 0.3 s
