"""The sign-in facade in front of Cognito (moto): metadata, registration and its limits, authorize
with PKCE and the consent step. The token exchange and the whole flow run on the local stack
(tests/http/test_oauth_signin.py), where Cognito's managed login has its stand-in."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.conftest import reset_process_state
from tests.oauth import (
    BASE,
    CALLBACK,
    CHALLENGE,
    LOGIN,
    READ,
    SCOPES,
    WRITE,
    app_clients,
    authorize_query,
    body,
    event,
    handle,
    register,
)
from toolfront import wiring
from toolfront.auth.registered import RegisteredClients

# --- metadata -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "route", ["GET /.well-known/oauth-protected-resource", "GET /.well-known/oauth-protected-resource/mcp"]
)
def test_protected_resource_metadata_of_mcp(pool: str, route: str) -> None:
    answer = handle(event(route))
    assert answer["statusCode"] == 200
    assert body(answer) == {
        "resource": f"{BASE}/mcp",
        "authorization_servers": [BASE],
        "scopes_supported": SCOPES,
        "bearer_methods_supported": ["header"],
        "resource_name": "toolfront tools",
    }


def test_protected_resource_metadata_of_a_family_and_of_none(pool: str) -> None:
    route = "GET /.well-known/oauth-protected-resource/mcp/{family}"
    found = body(handle(event(route, pathParameters={"family": "catalogue"})))
    assert found["resource"] == f"{BASE}/mcp/catalogue"
    assert found["scopes_supported"] == [READ, WRITE]  # the catalogue's own
    assert body(handle(event(route, pathParameters={"family": "guest"})))["scopes_supported"] == []
    missing = handle(event(route, pathParameters={"family": "nope"}))
    assert missing["statusCode"] == 404 and body(missing)["error"] == "not_found"


def test_authorization_server_metadata(pool: str) -> None:
    found = body(handle(event("GET /.well-known/oauth-authorization-server")))
    assert found == {
        "issuer": BASE,
        "authorization_endpoint": f"{BASE}/oauth/authorize",
        "token_endpoint": f"{BASE}/oauth/token",
        "registration_endpoint": f"{BASE}/oauth/register",
        "scopes_supported": SCOPES,
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_methods_supported": ["none"],
        "code_challenge_methods_supported": ["S256"],
        "client_id_metadata_document_supported": True,
    }


# --- registration ---------------------------------------------------------------------------------


def test_registration_creates_a_public_code_flow_app_client_with_the_api_scopes(pool: str) -> None:
    answer = register(client_name="Notes agent", grant_types=["authorization_code", "refresh_token"])
    assert answer["statusCode"] == 201
    registered = body(answer)
    assert registered["redirect_uris"] == [CALLBACK]
    assert registered["token_endpoint_auth_method"] == "none"
    assert registered["grant_types"] == ["authorization_code", "refresh_token"]
    assert registered["response_types"] == ["code"]
    (created,) = app_clients(pool)
    assert created["ClientId"] == registered["client_id"]
    assert "ClientSecret" not in created
    assert created["AllowedOAuthFlows"] == ["code"]
    assert created["CallbackURLs"] == [CALLBACK]
    assert sorted(created["AllowedOAuthScopes"]) == SCOPES
    # its tokens now pass every function's audience check
    table = wiring.current().cognito.clients_table  # type: ignore[union-attr]
    assert registered["client_id"] in RegisteredClients(str(table))


@pytest.mark.parametrize(
    ("metadata", "error"),
    [
        ({"redirect_uris": ["http://app.example.net/cb"]}, "invalid_redirect_uri"),  # http off loopback
        ({"redirect_uris": ["https://app.example.net/cb#x"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["https://user:pw@app.example.net/cb"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["cursor://cb"]}, "invalid_redirect_uri"),
        ({"redirect_uris": []}, "invalid_redirect_uri"),
        ({"token_endpoint_auth_method": "client_secret_basic"}, "invalid_client_metadata"),
        ({"grant_types": ["implicit"]}, "invalid_client_metadata"),
        ({"grant_types": ["client_credentials", "authorization_code"]}, "invalid_client_metadata"),
        ({"response_types": ["token"]}, "invalid_client_metadata"),
        ({"client_name": "x" * 101}, "invalid_client_metadata"),
        ({"client_name": "line\nbreak"}, "invalid_client_metadata"),
    ],
)
def test_bad_client_metadata_is_refused_and_creates_nothing(
    pool: str, metadata: dict[str, Any], error: str
) -> None:
    answer = handle(event("POST /oauth/register", body={"redirect_uris": [CALLBACK], **metadata}))
    assert answer["statusCode"] == 400
    assert body(answer)["error"] == error and body(answer)["error_description"]
    assert app_clients(pool) == []


def test_a_body_that_is_not_json_is_invalid_client_metadata(pool: str) -> None:
    answer = handle(event("POST /oauth/register", body="redirect_uris=x"))
    assert (answer["statusCode"], body(answer)["error"]) == (400, "invalid_client_metadata")


def test_loopback_http_redirect_uris_are_accepted(pool: str) -> None:
    answer = register(redirect_uris=["http://127.0.0.1:8976/callback", "http://localhost/cb"])
    assert answer["statusCode"] == 201


def test_registrations_are_limited_per_source_address(pool: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLFRONT_MAX_REGISTRATIONS_PER_IP_PER_HOUR", "2")
    reset_process_state()
    assert [register()["statusCode"] for _ in range(2)] == [201, 201]
    refused = register()
    assert refused["statusCode"] == 429
    assert body(refused)["error"] == "too_many_registrations"
    assert 0 < int(refused["headers"]["retry-after"]) <= 3600
    other = handle(event("POST /oauth/register", body={"redirect_uris": [CALLBACK]}, ip="203.0.113.9"))
    assert other["statusCode"] == 201
    assert len(app_clients(pool)) == 3


def test_registrations_are_capped_and_a_refusal_takes_no_place(
    pool: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLFRONT_MAX_REGISTERED_CLIENTS", "1")
    reset_process_state()
    assert register()["statusCode"] == 201
    refused = register()
    assert (refused["statusCode"], body(refused)["error"]) == (403, "registration_limit_reached")
    assert len(app_clients(pool)) == 1


def test_a_failed_app_client_creation_gives_its_place_back(
    pool: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from botocore.exceptions import ClientError

    from toolfront.aws.clients import client

    monkeypatch.setenv("TOOLFRONT_MAX_REGISTERED_CLIENTS", "1")
    reset_process_state()

    def refuse(**request: Any) -> Any:
        error = {"Error": {"Code": "TooManyRequestsException", "Message": "slow down"}}
        raise ClientError(error, "CreateUserPoolClient")  # type: ignore[arg-type]

    with monkeypatch.context() as patched:
        patched.setattr(client("cognito-idp"), "create_user_pool_client", refuse)
        down = register()
    assert (down["statusCode"], body(down)["error"]) == (503, "temporarily_unavailable")
    assert register()["statusCode"] == 201  # the one place is free again


def test_a_registration_is_audited_and_one_whose_record_fails_is_given_back(
    pool: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import boto3

    from toolfront.audit.trail import read_trail
    from toolfront.aws.clients import dynamodb

    registered = body(register(client_name="Notes agent"))
    (record,) = [r.content for r in read_trail(boto3.client("dynamodb"), "AuditTable").records]
    assert record is not None and (record["event"], record["status"], record["client"]) == (
        "oauth_client.registered",
        "registered",
        "Notes agent",
    )
    assert record["decided_by"] == {"kind": "registration", "id": registered["client_id"]}
    assert record["actor"]["kind"] == "anonymous"  # type: ignore[index]

    def refuse(**request: Any) -> Any:
        from botocore.exceptions import ClientError

        error = {"Error": {"Code": "InternalServerError", "Message": "down"}}
        raise ClientError(error, "TransactWriteItems")  # type: ignore[arg-type]

    with monkeypatch.context() as patched:
        patched.setattr(dynamodb(), "transact_write_items", refuse)
        down = register(client_name="Second agent")
    assert (down["statusCode"], body(down)["error"]) == (503, "temporarily_unavailable")
    assert [c["ClientName"] for c in app_clients(pool)] == ["mcp Notes agent"]  # the second was given back


# --- authorize and consent ------------------------------------------------------------------------


@pytest.fixture
def client_id(pool: str) -> str:
    return str(body(register(client_name="Notes <b>agent</b>"))["client_id"])


def test_the_consent_page_names_the_client_and_binds_the_decision_to_the_browser(client_id: str) -> None:
    page = handle(event("GET /oauth/authorize", query=authorize_query(client_id)))
    assert page["statusCode"] == 200
    assert page["headers"]["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in page["headers"]["content-security-policy"]
    assert page["headers"]["cache-control"] == "no-store"
    html = page["body"]
    assert "Notes &lt;b&gt;agent&lt;/b&gt;" in html and "<b>agent</b>" not in html
    assert "app.example.net" in html and "not checked" in html
    (cookie,) = page["cookies"]
    assert cookie.startswith("__Secure-toolfront-consent=")
    assert all(a in cookie for a in ("HttpOnly", "SameSite=Strict", "Secure", "Path=/oauth/authorize;"))


def consent(client_id: str, **overrides: str | None) -> tuple[str, str]:
    page = handle(event("GET /oauth/authorize", query=authorize_query(client_id, **overrides)))
    consent_id = page["body"].split('name="consent_id" value="')[1].split('"')[0]
    return consent_id, page["cookies"][0].split(";")[0]


def decide(consent_id: str, cookie: str | None, decision: str = "allow", **extra: Any) -> dict[str, Any]:
    cookies = {"cookies": [cookie]} if cookie else {}
    form = f"consent_id={consent_id}&decision={decision}"
    return handle(event("POST /oauth/authorize", body=form, form=True, **cookies, **extra))


def test_allow_sends_the_person_to_cognito_with_state_and_pkce_untouched(client_id: str) -> None:
    consent_id, cookie = consent(client_id, state="opaque/+= state")
    answer = decide(consent_id, cookie)
    assert answer["statusCode"] == 302
    location = urlsplit(answer["headers"]["location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == f"{LOGIN}/oauth2/authorize"
    assert parse_qs(location.query) == {
        "response_type": ["code"],
        "client_id": [client_id],
        "redirect_uri": [CALLBACK],
        "code_challenge": [CHALLENGE],
        "code_challenge_method": ["S256"],
        "scope": [READ],
        "state": ["opaque/+= state"],
    }


def test_a_decision_is_taken_once_and_only_from_the_browser_shown_the_page(client_id: str) -> None:
    consent_id, cookie = consent(client_id)
    assert decide(consent_id, cookie)["statusCode"] == 302
    again = decide(consent_id, cookie)
    assert again["statusCode"] == 400 and "location" not in again["headers"]
    other_id, _ = consent(client_id)
    forged = decide(other_id, "toolfront-consent=someone-elses")
    assert forged["statusCode"] == 400 and "location" not in forged["headers"]
    assert "did not come from the browser" in forged["body"]
    missing = decide(consent(client_id)[0], None)
    assert missing["statusCode"] == 400


def test_a_decision_posted_from_another_site_is_refused(client_id: str) -> None:
    consent_id, cookie = consent(client_id)
    answer = decide(consent_id, cookie, headers={"origin": "https://evil.example"})
    assert answer["statusCode"] == 403 and "location" not in answer["headers"]


def test_deny_goes_back_to_the_client_with_access_denied(client_id: str) -> None:
    consent_id, cookie = consent(client_id)
    location = decide(consent_id, cookie, "deny")["headers"]["location"]
    assert location == f"{CALLBACK}?error=access_denied&state=st-42"


@pytest.mark.parametrize(
    "overrides",
    [
        {"client_id": "not-a-client"},
        {"client_id": None},
        {"redirect_uri": "https://attacker.example/callback"},
        {"redirect_uri": "https://app.example.net/callback/extra"},
    ],
)
def test_an_unknown_client_or_redirect_uri_is_a_page_never_a_redirect(
    client_id: str, overrides: dict[str, Any]
) -> None:
    answer = handle(event("GET /oauth/authorize", query=authorize_query(client_id, **overrides)))
    assert answer["statusCode"] in (400, 401)
    assert "location" not in answer["headers"]
    assert answer["headers"]["content-type"].startswith("text/html")


@pytest.mark.parametrize(
    ("overrides", "error"),
    [
        ({"code_challenge": None}, "invalid_request"),
        ({"code_challenge_method": "plain"}, "invalid_request"),
        ({"code_challenge_method": None}, "invalid_request"),
        ({"code_challenge": "short"}, "invalid_request"),
        ({"response_type": "token"}, "unsupported_response_type"),
        ({"scope": "toolfront/other.things:read"}, "invalid_scope"),
        ({"resource": "https://elsewhere.example/mcp"}, "invalid_target"),
    ],
)
def test_a_bad_request_of_a_registered_client_goes_back_with_the_error(
    client_id: str, overrides: dict[str, Any], error: str
) -> None:
    answer = handle(event("GET /oauth/authorize", query=authorize_query(client_id, **overrides)))
    assert answer["statusCode"] == 302
    location = urlsplit(answer["headers"]["location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == CALLBACK
    query = parse_qs(location.query)
    assert query["error"] == [error] and query["state"] == ["st-42"]


def test_short_scope_names_are_read_as_the_api_scopes(client_id: str) -> None:
    consent_id, cookie = consent(client_id, scope="catalogue.products:write offline_access")
    query = parse_qs(urlsplit(decide(consent_id, cookie)["headers"]["location"]).query)
    assert query["scope"] == [WRITE]


def test_a_loopback_redirect_uri_may_use_any_port_and_cognito_learns_it(pool: str) -> None:
    registered = body(register(redirect_uris=["http://127.0.0.1/callback"]))["client_id"]
    used = "http://127.0.0.1:53117/callback"
    answer = handle(event("GET /oauth/authorize", query=authorize_query(registered, redirect_uri=used)))
    assert answer["statusCode"] == 200
    (created,) = app_clients(pool)
    assert created["CallbackURLs"] == ["http://127.0.0.1/callback", used]
    other_path = "http://127.0.0.1:53117/elsewhere"
    refused = handle(
        event("GET /oauth/authorize", query=authorize_query(registered, redirect_uri=other_path))
    )
    assert refused["statusCode"] == 400 and "location" not in refused["headers"]


def test_repeated_parameters_are_refused(client_id: str) -> None:
    query = authorize_query(client_id) + "&state=again"
    answer = handle(event("GET /oauth/authorize", query=query))
    assert answer["statusCode"] == 400 and "location" not in answer["headers"]


# --- token (refusals the facade makes itself) ----------------------------------------------------


@pytest.mark.parametrize(
    ("form", "status", "error"),
    [
        ("grant_type=authorization_code&code=c&redirect_uri=x&client_id={id}", 400, "invalid_request"),
        (
            "grant_type=authorization_code&code=c&redirect_uri=x&client_id={id}&code_verifier=short",
            400,
            "invalid_grant",
        ),
        ("grant_type=password&username=a&password=b&client_id={id}", 400, "unsupported_grant_type"),
        ("grant_type=refresh_token&refresh_token=r&client_id=unknown", 401, "invalid_client"),
        (
            "grant_type=refresh_token&refresh_token=r&client_id={id}&resource=https://x.example/mcp",
            400,
            "invalid_target",
        ),
    ],
)
def test_token_requests_the_facade_refuses_itself(client_id: str, form: str, status: int, error: str) -> None:
    answer = handle(event("POST /oauth/token", body=form.format(id=client_id), form=True))
    assert (answer["statusCode"], body(answer)["error"]) == (status, error)
    assert answer["headers"]["cache-control"] == "no-store"


def test_a_token_in_the_url_is_refused(client_id: str) -> None:
    answer = handle(
        event("POST /oauth/token", query="refresh_token=rt-secret-value", body="grant_type=x", form=True)
    )
    assert (answer["statusCode"], body(answer)["error"]) == (400, "invalid_request")
    assert "rt-secret-value" not in answer["body"]
