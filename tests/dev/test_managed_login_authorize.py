"""The local managed login's sign-in page (``/_cognito/oauth2/authorize``) over real HTTP, and its stack.

Driven as a browser would (tests/dev/oauth_flow.py), against the shared stack and its one seeded user.
"""

from __future__ import annotations

import os

import pytest

from tests.dev.conftest import USER_EMAIL, USER_PASSWORD, Fetch
from tests.dev.oauth_flow import (
    CALLBACK,
    READ,
    STATE,
    Clients,
    authorize_query,
    authorize_url,
    make_clients,
    parse_form,
    post_form,
    redirect_params,
)
from toolfront_dev.aws import moto_client
from toolfront_dev.payload import LOCAL_ACCOUNT_ID
from toolfront_dev.stack import LocalStack


@pytest.fixture(scope="module")
def clients(stack: LocalStack) -> Clients:
    return make_clients(stack)


# --- the stack: domain, environment, dev.json -----------------------------------------------


def test_stack_points_facade_at_local_managed_login(stack: LocalStack) -> None:
    assert stack.info.managed_login_url == f"{stack.api_url}/_cognito"
    assert os.environ["TOOLFRONT_COGNITO_DOMAIN_URL"] == stack.info.managed_login_url
    assert stack.dev_json_path.read_text(encoding="utf-8").count(
        f'"managed_login_url": "{stack.api_url}/_cognito"'
    )


def test_stack_user_pool_domain_created_in_moto_for_its_pool(stack: LocalStack, clients: Clients) -> None:
    described = moto_client(stack.moto_endpoint, "cognito-idp").describe_user_pool_domain(
        Domain=f"toolfront-local-{LOCAL_ACCOUNT_ID}"
    )

    assert described["DomainDescription"]["UserPoolId"] == clients.pool_id


# --- GET /oauth2/authorize -------------------------------------------------------------------


def test_authorize_get_answers_sign_in_form_posting_to_same_url(
    stack: LocalStack, clients: Clients, fetch: Fetch
) -> None:
    query = authorize_query(clients.main)

    reply = fetch(f"{stack.api_url}/_cognito/oauth2/authorize?{query}")

    assert reply.status == 200
    form = parse_form(reply.body)
    [attributes] = form.forms
    assert attributes["method"] == "post"
    assert attributes["action"] == f"/_cognito/oauth2/authorize?{query}"
    assert set(form.inputs) == {"username", "password"}
    assert form.inputs["password"]["type"] == "password"
    assert reply.headers["cache-control"] == "no-store"
    assert reply.headers["x-frame-options"] == "DENY"
    assert reply.headers["content-security-policy"] == "frame-ancestors 'none'"


def test_authorize_get_escapes_client_name(stack: LocalStack, clients: Clients, fetch: Fetch) -> None:
    body = fetch(authorize_url(stack, clients.main)).body.decode()

    assert "main &lt;app&gt; &amp; co" in body
    assert "<app>" not in body


@pytest.mark.parametrize("redirect_uri", ["http://127.0.0.1:8976/evil", CALLBACK + "/", ""])
def test_authorize_unregistered_redirect_uri_answers_400_page_never_redirects(
    stack: LocalStack, clients: Clients, fetch: Fetch, redirect_uri: str
) -> None:
    url = authorize_url(stack, clients.main, redirect_uri=redirect_uri)

    for reply in (fetch(url), post_form(fetch, url, {"username": USER_EMAIL, "password": USER_PASSWORD})):
        assert reply.status == 400
        assert "location" not in reply.headers
        assert b"redirect_mismatch" in reply.body
        assert reply.headers["x-frame-options"] == "DENY"


def test_authorize_unknown_client_answers_400_page_never_redirects(stack: LocalStack, fetch: Fetch) -> None:
    reply = fetch(authorize_url(stack, "nosuchclient"))

    assert reply.status == 400
    assert "location" not in reply.headers
    assert b"client_id" in reply.body


@pytest.mark.parametrize(
    ("changes", "error"),
    [
        ({"code_challenge": None}, "invalid_request"),
        ({"code_challenge_method": None}, "invalid_request"),
        ({"code_challenge_method": "plain"}, "invalid_request"),
        ({"code_challenge": "short"}, "invalid_request"),
        ({"response_type": "token"}, "unsupported_response_type"),
        ({"scope": f"openid {READ} toolfront/catalogue.orders:read"}, "invalid_scope"),
    ],
)
def test_authorize_refusal_redirects_with_error_and_state(
    stack: LocalStack, clients: Clients, fetch: Fetch, changes: dict[str, str | None], error: str
) -> None:
    params = redirect_params(fetch(authorize_url(stack, clients.main, **changes)))

    assert params == {"error": error, "state": STATE}


def test_authorize_client_without_code_flow_redirects_unauthorized_client(
    stack: LocalStack, clients: Clients, fetch: Fetch
) -> None:
    params = redirect_params(fetch(authorize_url(stack, clients.implicit, state=None)))

    assert params == {"error": "unauthorized_client"}


# --- POST /oauth2/authorize ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("username", "password"),
    [(USER_EMAIL, "Wrong-Password-1"), ("nobody@example.com", USER_PASSWORD), (USER_EMAIL, ""), ("", "")],
)
def test_sign_in_wrong_credentials_answer_400_form_without_password(
    stack: LocalStack, clients: Clients, fetch: Fetch, username: str, password: str
) -> None:
    reply = post_form(fetch, authorize_url(stack, clients.main), {"username": username, "password": password})

    assert reply.status == 400
    assert "location" not in reply.headers
    assert b"Incorrect username or password." in reply.body
    assert set(parse_form(reply.body).inputs) == {"username", "password"}
    if password:
        assert password.encode() not in reply.body
    assert reply.headers["cache-control"] == "no-store"


def test_sign_in_echoes_typed_username_escaped(stack: LocalStack, clients: Clients, fetch: Fetch) -> None:
    typed = '"><script>x</script>@example.com'

    reply = post_form(fetch, authorize_url(stack, clients.main), {"username": typed, "password": "nope"})

    assert reply.status == 400
    assert b"<script>" not in reply.body
    assert parse_form(reply.body).inputs["username"]["value"] == typed


def test_sign_in_right_password_redirects_with_code_and_same_state(
    stack: LocalStack, clients: Clients, fetch: Fetch
) -> None:
    reply = post_form(
        fetch, authorize_url(stack, clients.main), {"username": USER_EMAIL, "password": USER_PASSWORD}
    )

    params = redirect_params(reply)
    assert set(params) == {"code", "state"}
    assert params["state"] == STATE
    assert len(params["code"]) >= 32
    assert reply.headers["cache-control"] == "no-store"


def test_sign_in_without_state_redirects_without_state(
    stack: LocalStack, clients: Clients, fetch: Fetch
) -> None:
    url = authorize_url(stack, clients.main, state=None)

    assert set(
        redirect_params(post_form(fetch, url, {"username": USER_EMAIL, "password": USER_PASSWORD}))
    ) == {"code"}


def test_sign_in_disabled_user_is_refused_like_a_wrong_password(
    stack: LocalStack, clients: Clients, fetch: Fetch
) -> None:
    idp = moto_client(stack.moto_endpoint, "cognito-idp")
    email = "carol@example.com"
    idp.admin_create_user(UserPoolId=clients.pool_id, Username=email, MessageAction="SUPPRESS")
    idp.admin_set_user_password(
        UserPoolId=clients.pool_id, Username=email, Password=USER_PASSWORD, Permanent=True
    )
    idp.admin_disable_user(UserPoolId=clients.pool_id, Username=email)

    reply = post_form(
        fetch, authorize_url(stack, clients.main), {"username": email, "password": USER_PASSWORD}
    )

    assert reply.status == 400
    assert b"Incorrect username or password." in reply.body


def test_managed_login_unknown_path_answers_404(stack: LocalStack, fetch: Fetch) -> None:
    reply = fetch(f"{stack.info.managed_login_url}/login")

    assert reply.status == 404
    assert "apigw-requestid" not in reply.headers  # answered by the managed login, not a function
