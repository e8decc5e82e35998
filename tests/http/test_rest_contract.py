"""Actors and REST answers (docs/contract.md) over real HTTP against the local stack (`toolfront dev`)."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from tests.http.conftest import Api
from toolfront.auth.keystore import DynamoDBKeyStore, issue_key

READ = "catalogue.products:read"
WRITE = "catalogue.products:write"


def product(sku: str | None = None, price: int = 1200) -> dict[str, object]:
    return {
        "sku": sku or f"P-{uuid.uuid4().hex[:8]}",
        "name": "Enamel mug",
        "price_cents": price,
        "currency": "EUR",
    }


@pytest.fixture
def owner(store: DynamoDBKeyStore) -> str:
    """A fresh principal holding the catalogue permission."""
    principal = f"owner-{uuid.uuid4().hex[:8]}"
    store.grant(principal, ["catalogue"], datetime.now(UTC))
    return principal


@pytest.fixture
def admin_key(store: DynamoDBKeyStore, owner: str) -> str:
    return issue_key(store, owner=owner, scopes=["catalogue.*"])[0]


def key_for(store: DynamoDBKeyStore, owner: str, *scopes: str, **options: object) -> str:
    return issue_key(store, owner=owner, scopes=list(scopes), **options)[0]  # type: ignore[arg-type]


# --- success --------------------------------------------------------------------------------------


def test_health_is_200(api: Api) -> None:
    reply = api.request("GET", "/health")
    assert (reply.status, reply.json()["data"]) == (200, {"status": "ok"})


def test_call_answers_data_envelope_with_request_id_header(api: Api, admin_key: str) -> None:
    item = product()
    reply = api.call("catalogue.create_product", item, key=admin_key)
    assert reply.status == 200
    assert reply.headers["content-type"] == "application/json"
    body = reply.json()
    assert body == {"data": {"product": item}, "request_id": reply.headers["x-request-id"]}
    got = api.call("catalogue.get_product", {"sku": item["sku"]}, key=admin_key)
    assert got.json()["data"]["product"] == item
    assert got.headers["x-request-id"] != reply.headers["x-request-id"]


def test_x_api_key_header_is_accepted(api: Api, admin_key: str) -> None:
    reply = api.call("catalogue.list_products", {}, headers={"X-Api-Key": admin_key})
    assert reply.status == 200
    assert set(reply.json()["data"]) == {"products", "next_cursor"}


def test_list_products_paginates_with_cursor(api: Api, admin_key: str) -> None:
    for _ in range(3):
        api.call("catalogue.create_product", product(), key=admin_key)
    seen: list[str] = []
    cursor = None
    while True:
        page = api.call(
            "catalogue.list_products", {"limit": 2, **({"cursor": cursor} if cursor else {})}, key=admin_key
        )
        data = page.json()["data"]
        assert len(data["products"]) <= 2
        seen += [p["sku"] for p in data["products"]]
        cursor = data["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == len(set(seen)) >= 3


def test_set_prices_updates_every_listed_product(api: Api, admin_key: str) -> None:
    skus = [
        api.call("catalogue.create_product", product(), key=admin_key).json()["data"]["product"]["sku"]
        for _ in range(2)
    ]
    reply = api.call(
        "catalogue.set_prices", {"prices": [{"sku": s, "price_cents": 99} for s in skus]}, key=admin_key
    )
    assert reply.json()["data"] == {"updated": 2}
    assert (
        api.call("catalogue.get_product", {"sku": skus[1]}, key=admin_key).json()["data"]["product"][
            "price_cents"
        ]
        == 99
    )


# --- tool errors ----------------------------------------------------------------------------------


def test_tool_errors_keep_their_code_and_status(api: Api, admin_key: str) -> None:
    item = product()
    api.call("catalogue.create_product", item, key=admin_key)
    again = api.call("catalogue.create_product", item, key=admin_key)
    assert (again.status, again.error_code) == (409, "already_exists")
    missing = api.call("catalogue.get_product", {"sku": "NOPE-404"}, key=admin_key)
    assert (missing.status, missing.error_code) == (404, "not_found")
    assert set(missing.json()) == {"error", "request_id"}
    assert set(missing.json()["error"]) == {"code", "message", "details"}


# --- 400 / 413 / 415: the request itself ---------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "api_key",
        "key",
        "authorization",
        "access_token",
        "password",
        "secret",
        "code",
        "session_token",
        "Refresh_Token",
    ],
)
def test_credential_in_url_is_400_before_anything_else(api: Api, name: str) -> None:
    reply = api.request("POST", f"/v1/tools/catalogue/no_such_tool?{name}=hunter2", body=b"{")
    assert (reply.status, reply.error_code) == (400, "credential_in_url")
    assert b"hunter2" not in reply.body


def test_harmless_query_parameter_is_ignored(api: Api, admin_key: str) -> None:
    reply = api.request(
        "POST",
        "/v1/tools/catalogue/list_products?verbose=1",
        body=b"{}",
        headers={"Content-Type": "application/json"},
        key=admin_key,
    )
    assert reply.status == 200


@pytest.mark.parametrize("body", [b"{", b"[1]", b'"text"', b"null", b'{"sku": NaN}', b"\xff\xfe"])
def test_malformed_json_or_non_object_is_400(api: Api, admin_key: str, body: bytes) -> None:
    reply = api.request(
        "POST",
        "/v1/tools/catalogue/get_product",
        body=body,
        headers={"Content-Type": "application/json"},
        key=admin_key,
    )
    assert (reply.status, reply.error_code) == (400, "invalid_json")


def test_body_over_one_mebibyte_is_413(api: Api, admin_key: str) -> None:
    body = json.dumps({"sku": "x" * (1024 * 1024)}).encode()
    reply = api.request(
        "POST",
        "/v1/tools/catalogue/get_product",
        body=body,
        headers={"Content-Type": "application/json"},
        key=admin_key,
    )
    assert (reply.status, reply.error_code) == (413, "payload_too_large")


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", None])
def test_body_not_sent_as_json_is_415(api: Api, admin_key: str, content_type: str | None) -> None:
    headers = {"Content-Type": content_type} if content_type else {}
    reply = api.request(
        "POST", "/v1/tools/catalogue/get_product", body=b'{"sku": "A"}', headers=headers, key=admin_key
    )
    assert (reply.status, reply.error_code) == (415, "unsupported_media_type")


def test_json_with_charset_is_accepted(api: Api, admin_key: str) -> None:
    reply = api.request(
        "POST",
        "/v1/tools/catalogue/list_products",
        body=b"{}",
        headers={"Content-Type": "application/json; charset=utf-8"},
        key=admin_key,
    )
    assert reply.status == 200


# --- 401 -------------------------------------------------------------------------------------------------


def assert_unauthenticated(reply: object) -> None:
    from tests.http.conftest import Reply

    assert isinstance(reply, Reply)
    assert (reply.status, reply.error_code) == (401, "unauthenticated")
    assert reply.headers["www-authenticate"].startswith("Bearer")


def test_missing_key_is_401(api: Api) -> None:
    assert_unauthenticated(api.call("catalogue.list_products"))


@pytest.mark.parametrize("key", ["tfk_nope", "tfk_abcdefghijkl_" + "x" * 32, "not-even-a-key"])
def test_invalid_key_is_401(api: Api, key: str) -> None:
    assert_unauthenticated(api.call("catalogue.list_products", key=key))


def test_wrong_secret_is_401(api: Api, admin_key: str) -> None:
    assert_unauthenticated(api.call("catalogue.list_products", key=admin_key[:-4] + "zzzz"))


def test_revoked_key_is_refused_on_the_next_call(api: Api, store: DynamoDBKeyStore, admin_key: str) -> None:
    assert api.call("catalogue.list_products", key=admin_key).status == 200
    store.revoke_key(admin_key.split("_")[1], datetime.now(UTC))
    reply = api.call("catalogue.list_products", key=admin_key)
    assert_unauthenticated(reply)
    assert "revoked" in reply.json()["error"]["message"]


def test_expired_key_is_401(api: Api, store: DynamoDBKeyStore, owner: str) -> None:
    key = key_for(store, owner, "catalogue.*", expires_at=datetime.now(UTC) - timedelta(seconds=1))
    reply = api.call("catalogue.list_products", key=key)
    assert_unauthenticated(reply)
    assert "expired" in reply.json()["error"]["message"]


# --- 403 -------------------------------------------------------------------------------------------------


def test_key_without_the_scope_is_403_missing_scope(api: Api, store: DynamoDBKeyStore, owner: str) -> None:
    key = key_for(store, owner, READ)
    assert api.call("catalogue.list_products", key=key).status == 200
    reply = api.call("catalogue.create_product", product(), key=key)
    assert (reply.status, reply.error_code) == (403, "missing_scope")
    assert reply.json()["error"]["details"] == {"scope": WRITE}


@pytest.mark.parametrize("scope", [WRITE, "catalogue.products:*", "catalogue.*"])
def test_exact_and_wildcard_scopes_grant_the_tool(
    api: Api, store: DynamoDBKeyStore, owner: str, scope: str
) -> None:
    assert api.call("catalogue.create_product", product(), key=key_for(store, owner, scope)).status == 200


def test_owner_without_the_permission_is_403(api: Api, store: DynamoDBKeyStore) -> None:
    key = key_for(store, f"stranger-{uuid.uuid4().hex[:6]}", "catalogue.*")
    reply = api.call("catalogue.list_products", key=key)
    assert (reply.status, reply.error_code) == (403, "missing_permission")


def test_permission_revoked_takes_effect_on_the_next_call(
    api: Api, store: DynamoDBKeyStore, owner: str, admin_key: str
) -> None:
    assert api.call("catalogue.list_products", key=admin_key).status == 200
    store.revoke_permissions(owner, ["catalogue"], datetime.now(UTC))
    assert api.call("catalogue.list_products", key=admin_key).error_code == "missing_permission"
    store.grant(owner, ["catalogue"], datetime.now(UTC))
    assert api.call("catalogue.list_products", key=admin_key).status == 200


# --- 404 / 422 / 501 -------------------------------------------------------------------------------------


def test_unknown_tool_is_404(api: Api, admin_key: str) -> None:
    reply = api.call("catalogue.melt_products", key=admin_key)
    assert (reply.status, reply.error_code) == (404, "unknown_tool")


def test_invalid_input_is_422_listing_every_error(api: Api, admin_key: str) -> None:
    bad = {"prices": [{"sku": "OK-1", "price_cents": -5}, {"sku": "", "price_cents": "x"}], "extra": True}
    reply = api.call("catalogue.set_prices", bad, key=admin_key)
    assert (reply.status, reply.error_code) == (422, "invalid_input")
    found = {(d["path"], d["keyword"]) for d in reply.json()["error"]["details"]}
    assert found == {
        ("/prices/0/price_cents", "minimum"),
        ("/prices/1/sku", "minLength"),
        ("/prices/1/sku", "pattern"),
        ("/prices/1/price_cents", "type"),
        ("", "additionalProperties"),
    }


def test_too_many_items_is_422_before_schema_validation(api: Api, admin_key: str) -> None:
    reply = api.call("catalogue.set_prices", {"prices": [{}] * 501}, key=admin_key)
    assert (reply.status, reply.error_code) == (422, "too_many_items")


def test_dangerous_call_is_held_and_never_runs(api: Api, admin_key: str) -> None:
    item = api.call("catalogue.create_product", product(), key=admin_key).json()["data"]["product"]
    reply = api.call("catalogue.delete_product", {"sku": item["sku"]}, key=admin_key)
    assert reply.status == 202
    assert reply.json()["data"]["status"] == "pending_approval"
    assert api.call("catalogue.get_product", {"sku": item["sku"]}, key=admin_key).status == 200


def test_requires_approval_key_is_held_on_writes_only(api: Api, store: DynamoDBKeyStore, owner: str) -> None:
    key = key_for(store, owner, "catalogue.*", requires_approval=True)
    assert api.call("catalogue.list_products", key=key).status == 200
    held = api.call("catalogue.create_product", product(), key=key)
    assert (held.status, held.json()["data"]["status"]) == (202, "pending_approval")


# --- GET /v1/tools ---------------------------------------------------------------------------------


def test_list_tools_follows_scope_and_permission(api: Api, store: DynamoDBKeyStore, owner: str) -> None:
    reader = key_for(store, owner, READ)
    names = [t["name"] for t in api.request("GET", "/v1/tools", key=reader).json()["data"]["tools"]]
    assert [n for n in names if n.startswith("catalogue.")] == [
        "catalogue.export_products",
        "catalogue.get_product",
        "catalogue.get_product_label",
        "catalogue.list_products",
    ]
    anonymous = api.request("GET", "/v1/tools").json()["data"]["tools"]
    assert all(t["audience"] == "public" for t in anonymous)


def test_list_tools_with_invalid_key_is_401(api: Api) -> None:
    assert_unauthenticated(api.request("GET", "/v1/tools", key="tfk_abcdefghijkl_" + "x" * 32))


# --- Cognito ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cognito_token(stack: object, store: DynamoDBKeyStore) -> str:
    """A real access token from the stack's moto user pool, for a user in group catalogue-admins."""
    from toolfront_dev.aws import moto_client
    from toolfront_dev.stack import LocalStack

    assert isinstance(stack, LocalStack)
    idp = moto_client(stack.moto_endpoint, "cognito-idp")
    pool_id = next(iter(stack.info.user_pools.values()))
    client_id = next(iter(stack.info.user_pool_clients.values()))
    user, password = "ada@example.org", "Correct-Horse-42"
    idp.admin_create_user(UserPoolId=pool_id, Username=user, MessageAction="SUPPRESS")
    idp.admin_set_user_password(UserPoolId=pool_id, Username=user, Password=password, Permanent=True)
    idp.create_group(UserPoolId=pool_id, GroupName="catalogue-admins")
    idp.admin_add_user_to_group(UserPoolId=pool_id, Username=user, GroupName="catalogue-admins")
    store.grant("catalogue-admins", ["catalogue"], datetime.now(UTC))
    answer = idp.admin_initiate_auth(
        UserPoolId=pool_id,
        ClientId=client_id,
        AuthFlow="ADMIN_USER_PASSWORD_AUTH",
        AuthParameters={"USERNAME": user, "PASSWORD": password},
    )
    token: str = answer["AuthenticationResult"]["AccessToken"]
    return token


def test_a_cognito_token_for_cognitos_own_apis_is_refused(api: Api, cognito_token: str) -> None:
    # The password flow grants only aws.cognito.signin.user.admin: a token for Cognito's own APIs,
    # not for this one (the audience check: its scopes must carry the resource server's prefix).
    for reply in (
        api.request("GET", "/v1/tools", key=cognito_token),
        api.call("catalogue.list_products", key=cognito_token),
    ):
        assert reply.status == 401
        assert reply.json()["error"]["message"] == "the token carries no scope of this API"


def test_tampered_cognito_token_is_401(api: Api, cognito_token: str) -> None:
    header, payload, signature = cognito_token.split(".")
    assert_unauthenticated(api.call("catalogue.list_products", key=f"{header}.{payload}x.{signature}"))


def test_cognito_token_with_custom_scope_calls_the_tool(api: Api, stack: object, cognito_token: str) -> None:
    # Custom scopes need Cognito's OAuth flows, which moto does not serve; the pool's own signer
    # (the one its token endpoints use) issues this access token instead of a hand-made one.
    from moto.cognitoidp.models import cognitoidp_backends

    from toolfront_dev.stack import LocalStack

    assert isinstance(stack, LocalStack)
    pool = cognitoidp_backends["123456789012"]["us-east-1"].user_pools[
        next(iter(stack.info.user_pools.values()))
    ]
    client_id = next(iter(stack.info.user_pool_clients.values()))
    token, _ = pool.create_jwt(
        client_id,
        "ada@example.org",
        "access",
        extra_data={"scope": f"toolfront/{READ}", "cognito:groups": ["catalogue-admins"]},
    )
    assert api.call("catalogue.list_products", key=token).status == 200
    reply = api.call("catalogue.create_product", product(), key=token)
    assert (reply.status, reply.error_code) == (403, "missing_scope")


# --- core's system tools over REST --------------------------------------------------------------------


def test_system_get_actor_needs_only_a_valid_key(api: Api, store: DynamoDBKeyStore) -> None:
    bare = issue_key(store, owner="nobody-in-particular", scopes=[])[0]  # no scope, no permission
    actor = api.call("system.get_actor", key=bare)
    assert actor.status == 200
    assert actor.json()["data"]["actor"]["principal"] == "nobody-in-particular"
    assert api.call("system.get_actor").error_code == "unauthenticated"


def test_system_list_tools_is_public_and_follows_the_caller(api: Api, admin_key: str) -> None:
    anonymous = {t["name"] for t in api.call("system.list_tools").json()["data"]["tools"]}
    keyed = {t["name"] for t in api.call("system.list_tools", key=admin_key).json()["data"]["tools"]}
    assert "guest.start_session" in anonymous and "catalogue.get_product" not in anonymous
    assert {"catalogue.get_product", "system.get_actor"} <= keyed


def test_a_whole_number_float_price_is_stored_as_an_integer(api: Api, admin_key: str) -> None:
    # JSON Schema's "integer" accepts 1200.0 (found by schemathesis: it used to break every read)
    item = {**product(), "price_cents": 1200.0}
    created = api.call("catalogue.create_product", item, key=admin_key)
    assert created.json()["data"]["product"]["price_cents"] == 1200
    got = api.call("catalogue.get_product", {"sku": item["sku"]}, key=admin_key)
    assert (got.status, got.json()["data"]["product"]["price_cents"]) == (200, 1200)
    api.call("catalogue.set_prices", {"prices": [{"sku": item["sku"], "price_cents": 1e3}]}, key=admin_key)
    assert api.call("catalogue.get_product", {"sku": item["sku"]}, key=admin_key).status == 200
