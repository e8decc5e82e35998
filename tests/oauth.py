"""The sign-in facade in front of Cognito (moto) as unit tests drive it: the stack's settings, a
hand-made API Gateway event per request, and what Cognito then holds."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from tests.aws import template_enforcement, template_tables
from tests.conftest import reset_process_state
from toolfront import wiring
from toolfront.tools.manifest import load_manifest
from toolfront_dev.families import tool_scopes
from toolfront_dev.iam.enforcement import enforce, running_as

BASE = "https://tools.example.com"
LOGIN = "https://login.example.com"
CALLBACK = "https://app.example.net/callback"
CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"  # RFC 7636 appendix B
READ, WRITE = "toolfront/catalogue.products:read", "toolfront/catalogue.products:write"
#: Every scope of the API: the shipped families' and any a project added (`toolfront new family`).
SCOPES = sorted(f"toolfront/{scope}" for scope in tool_scopes(load_manifest()))


def facade_pool(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A user pool with the stack's own app client, and the facade's settings pointing at it."""
    idp = boto3.client("cognito-idp")
    pool_id = idp.create_user_pool(PoolName="toolfront-test")["UserPool"]["Id"]
    own = idp.create_user_pool_client(UserPoolId=pool_id, ClientName="own")["UserPoolClient"]["ClientId"]
    for name, value in {
        "TOOLFRONT_PUBLIC_URL": BASE,
        "TOOLFRONT_COGNITO_ISSUER": f"https://cognito-idp.us-east-1.amazonaws.com/{pool_id}",
        "TOOLFRONT_COGNITO_CLIENT_IDS": own,
        "TOOLFRONT_COGNITO_USER_POOL_ID": pool_id,
        "TOOLFRONT_COGNITO_DOMAIN_URL": LOGIN,
        "TOOLFRONT_CLIENT_METADATA_HOSTS": "claude.ai",
    }.items():
        monkeypatch.setenv(name, value)
    reset_process_state()
    # The facade runs as the OAuth function, whose role names this pool: IAM as the template grants it.
    previous = enforce(template_enforcement({t: t for t in template_tables()}, user_pool=pool_id))
    try:
        yield pool_id
    finally:
        enforce(previous)
    reset_process_state()


def event(
    route: str, *, query: str = "", body: Any = None, form: bool = False, **extra: Any
) -> dict[str, Any]:
    method, path = route.split(" ", 1)
    headers = dict(extra.pop("headers", {}))
    if body is not None and not isinstance(body, str):
        body = json.dumps(body)
        headers.setdefault("content-type", "application/json")
    if form:
        headers["content-type"] = "application/x-www-form-urlencoded"
    return {
        "routeKey": route,
        "rawPath": path,
        "rawQueryString": query,
        "headers": headers,
        "body": body,
        "requestContext": {"http": {"method": method, "sourceIp": extra.pop("ip", "198.51.100.7")}},
        **extra,
    }


def handle(e: dict[str, Any]) -> dict[str, Any]:
    with running_as("OAuthFunction"):  # as functions/oauth/app.py runs it
        return wiring.sign_in_facade().handle(e)


def body(answer: dict[str, Any]) -> Any:
    return json.loads(answer["body"])


def register(**metadata: Any) -> dict[str, Any]:
    return handle(event("POST /oauth/register", body={"redirect_uris": [CALLBACK], **metadata}))


def app_clients(pool_id: str) -> list[dict[str, Any]]:
    idp = boto3.client("cognito-idp")
    listed = idp.list_user_pool_clients(UserPoolId=pool_id, MaxResults=60)["UserPoolClients"]
    return [
        idp.describe_user_pool_client(UserPoolId=pool_id, ClientId=c["ClientId"])["UserPoolClient"]
        for c in listed
        if c["ClientName"] != "own"
    ]


def authorize_query(registered: str, **overrides: str | None) -> str:
    from urllib.parse import urlencode

    fields: dict[str, str | None] = {
        "response_type": "code",
        "client_id": registered,
        "redirect_uri": CALLBACK,
        "code_challenge": CHALLENGE,
        "code_challenge_method": "S256",
        "state": "st-42",
        "scope": READ,
        "resource": f"{BASE}/mcp/catalogue",
    }
    fields.update(overrides)
    return urlencode({k: v for k, v in fields.items() if v is not None})
