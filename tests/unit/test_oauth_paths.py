"""Behind a custom domain or a stage path (``PublicUrl`` with a path): the metadata URLs RFC 9728 and
RFC 8414 (section 3.1 of each) give, the challenge pointing at them, and the facade's path-inserted
routes serving the documents there (404 anywhere else); with no path, the addresses are as before."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import load_family, reset_process_state
from tests.helpers import load_event
from tests.oauth import BASE, body, event, handle
from toolfront.oauth.metadata import (
    base_path,
    challenge,
    resource_metadata_url,
    resource_url,
    server_metadata_url,
    well_known_url,
)

DOMAIN = "https://api.example.com"
TOOLS = f"{DOMAIN}/tools"
PRM = "/.well-known/oauth-protected-resource"
ASM = "/.well-known/oauth-authorization-server"
INSERTED_PRM = f"GET {PRM}/{{proxy+}}"
INSERTED_ASM = f"GET {ASM}/{{proxy+}}"

# --- the URLs -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("base", "family", "expected"),
    [
        (DOMAIN, None, f"{DOMAIN}{PRM}/mcp"),
        (DOMAIN, "catalogue", f"{DOMAIN}{PRM}/mcp/catalogue"),
        (TOOLS, None, f"{DOMAIN}{PRM}/tools/mcp"),
        (TOOLS, "catalogue", f"{DOMAIN}{PRM}/tools/mcp/catalogue"),
        (f"{TOOLS}/", None, f"{DOMAIN}{PRM}/tools/mcp"),
        (f"{DOMAIN}/a/b", "guest", f"{DOMAIN}{PRM}/a/b/mcp/guest"),
        ("http://127.0.0.1:3000/base", None, f"http://127.0.0.1:3000{PRM}/base/mcp"),
    ],
)
def test_resource_metadata_url_inserts_the_well_known_prefix_before_the_path(
    base: str, family: str | None, expected: str
) -> None:
    assert resource_metadata_url(base, family) == expected


@pytest.mark.parametrize(
    ("issuer", "expected"),
    [
        (DOMAIN, f"{DOMAIN}{ASM}"),
        (f"{DOMAIN}/", f"{DOMAIN}{ASM}"),
        (TOOLS, f"{DOMAIN}{ASM}/tools"),
        (f"{TOOLS}/", f"{DOMAIN}{ASM}/tools"),
    ],
)
def test_server_metadata_url_inserts_the_well_known_prefix_before_the_issuer_path(
    issuer: str, expected: str
) -> None:
    assert server_metadata_url(issuer) == expected


def test_well_known_url_keeps_the_query_after_the_path() -> None:
    assert well_known_url(f"{DOMAIN}/r1?tenant=a", PRM) == f"{DOMAIN}{PRM}/r1?tenant=a"


def test_resource_url_and_base_path_ignore_a_terminating_slash() -> None:
    assert resource_url(f"{TOOLS}/", "guest") == f"{TOOLS}/mcp/guest"
    assert (base_path(TOOLS), base_path(f"{TOOLS}/"), base_path(DOMAIN)) == ("/tools", "/tools", "")


def test_challenge_behind_a_path_points_at_the_path_inserted_metadata() -> None:
    found = challenge(TOOLS, "catalogue", scopes=["toolfront/catalogue.products:read"])
    assert found == (
        f'Bearer realm="toolfront", resource_metadata="{DOMAIN}{PRM}/tools/mcp/catalogue", '
        'scope="toolfront/catalogue.products:read"'
    )


# --- the facade's routes --------------------------------------------------------------------------


@pytest.fixture
def behind_path(pool: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The facade of a stack whose PublicUrl is ``https://api.example.com/tools``."""
    monkeypatch.setenv("TOOLFRONT_PUBLIC_URL", TOOLS)
    reset_process_state()
    return pool


def inserted(route: str, rest: str) -> dict[str, Any]:
    path = route.split(" ", 1)[1].replace("{proxy+}", rest)
    return handle(event(route, rawPath=path, pathParameters={"proxy": rest}))


def test_path_inserted_resource_metadata_of_mcp_behind_a_path(behind_path: str) -> None:
    answer = inserted(INSERTED_PRM, "tools/mcp")
    assert answer["statusCode"] == 200
    document = body(answer)
    assert document["resource"] == f"{TOOLS}/mcp"
    assert document["authorization_servers"] == [TOOLS]


def test_path_inserted_resource_metadata_of_a_family_behind_a_path(behind_path: str) -> None:
    document = body(inserted(INSERTED_PRM, "tools/mcp/catalogue"))
    assert document["resource"] == f"{TOOLS}/mcp/catalogue"
    assert document["resource_name"] == "toolfront catalogue tools"


@pytest.mark.parametrize(
    "rest",
    ["tools/mcp/nope", "tools/mcp/catalogue/x", "tools", "tools/mcpx", "other/mcp", "mcp", "toolsx/mcp"],
)
def test_path_inserted_resource_metadata_elsewhere_is_an_oauth_404(behind_path: str, rest: str) -> None:
    answer = inserted(INSERTED_PRM, rest)
    assert answer["statusCode"] == 404
    assert body(answer)["error"] == "not_found"


def test_path_inserted_server_metadata_behind_a_path(behind_path: str) -> None:
    answer = inserted(INSERTED_ASM, "tools")
    assert answer["statusCode"] == 200
    document = body(answer)
    assert document["issuer"] == TOOLS
    assert document["token_endpoint"] == f"{TOOLS}/oauth/token"


@pytest.mark.parametrize("rest", ["other", "tools/mcp", "toolsx"])
def test_path_inserted_server_metadata_elsewhere_is_an_oauth_404(behind_path: str, rest: str) -> None:
    answer = inserted(INSERTED_ASM, rest)
    assert answer["statusCode"] == 404
    assert body(answer)["error"] == "not_found"


def test_the_appended_routes_still_answer_behind_a_path(behind_path: str) -> None:
    """A client that appends the well-known path to the base URL keeps working."""
    assert body(handle(event(f"GET {PRM}/mcp")))["resource"] == f"{TOOLS}/mcp"
    assert body(handle(event(f"GET {ASM}")))["issuer"] == TOOLS


def test_without_a_path_the_inserted_routes_serve_only_the_root_addresses(pool: str) -> None:
    assert body(inserted(INSERTED_PRM, "mcp/catalogue"))["resource"] == f"{BASE}/mcp/catalogue"
    assert inserted(INSERTED_PRM, "tools/mcp")["statusCode"] == 404
    assert inserted(INSERTED_ASM, "tools")["statusCode"] == 404


# --- the MCP endpoint's challenge -----------------------------------------------------------------


def test_a_family_behind_a_path_challenges_with_the_path_inserted_metadata(
    aws: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLFRONT_PUBLIC_URL", TOOLS)
    monkeypatch.setenv(
        "TOOLFRONT_COGNITO_ISSUER", "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_pool"
    )
    monkeypatch.setenv("TOOLFRONT_COGNITO_CLIENT_IDS", "own-client")
    reset_process_state()
    message = {"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {}}
    request = load_event("mcp_tools_call", body=json.dumps(message))
    request["routeKey"] = request["requestContext"]["routeKey"] = "POST /mcp/catalogue"
    request["rawPath"] = "/mcp/catalogue"
    request["headers"] = {
        k: v for k, v in request["headers"].items() if k.lower() not in ("authorization", "x-api-key")
    }
    answer = load_family("catalogue").lambda_handler(request, None)
    assert answer["statusCode"] == 401
    assert f'resource_metadata="{DOMAIN}{PRM}/tools/mcp/catalogue"' in answer["headers"]["www-authenticate"]
