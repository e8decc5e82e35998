"""Cognito access tokens, verified against a moto user pool's real JWKS and real tokens."""

from __future__ import annotations

import time
from collections.abc import Container, Iterator
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from moto.cognitoidp.models import cognitoidp_backends
from moto.server import ThreadedMotoServer

from tests.helpers import free_port
from toolfront.auth.actors import ActorKind
from toolfront.auth.authenticator import Authenticator
from toolfront.auth.cognito import CognitoVerifier
from toolfront.auth.keystore import DynamoDBKeyStore
from toolfront.auth.registered import RegisteredClients, client_key
from toolfront.errors import UnauthenticatedError
from toolfront.settings import CognitoSettings

PASSWORD = "Correct-Horse-42"


@dataclass
class Pool:
    endpoint: str
    pool_id: str
    client_id: str
    other_client_id: str
    idp: Any
    dynamodb: Any

    def settings(self, **overrides: Any) -> CognitoSettings:
        values = {
            "issuer": f"https://cognito-idp.us-east-1.amazonaws.com/{self.pool_id}",
            "client_ids": frozenset({self.client_id}),
            "jwks_url": f"{self.endpoint}/{self.pool_id}/.well-known/jwks.json",
            "scope_prefix": "toolfront",
        }
        values.update(overrides)
        return CognitoSettings(**values)

    def access_token(
        self, username: str, client_id: str | None = None, scope: str = "toolfront/catalogue.products:read"
    ) -> str:
        """An access token as Cognito's code flow issues it (custom scopes need that flow, which moto
        does not serve), signed by the pool's own key: the one initiate_auth signs with."""
        user_pool = cognitoidp_backends["123456789012"]["us-east-1"].user_pools[self.pool_id]
        user = user_pool._get_user(username)
        groups = {"cognito:groups": [g.group_name for g in user.groups]} if user.groups else {}
        token, _ = user_pool.create_jwt(
            client_id or self.client_id, username, "access", extra_data={"scope": scope, **groups}
        )
        return str(token)

    def tokens(self, username: str, client_id: str | None = None) -> dict[str, str]:
        answer = self.idp.initiate_auth(
            ClientId=client_id or self.client_id,
            AuthFlow="USER_PASSWORD_AUTH",
            AuthParameters={"USERNAME": username, "PASSWORD": PASSWORD},
        )
        result: dict[str, str] = answer["AuthenticationResult"]
        return result


@pytest.fixture(scope="module")
def pool() -> Iterator[Pool]:
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    options = {
        "endpoint_url": endpoint,
        "region_name": "us-east-1",
        "aws_access_key_id": "testing",
        "aws_secret_access_key": "testing",
    }
    idp = boto3.client("cognito-idp", **options)
    dynamodb = boto3.client("dynamodb", **options)
    pool_id = idp.create_user_pool(PoolName="toolfront-test")["UserPool"]["Id"]
    idp.create_resource_server(
        UserPoolId=pool_id,
        Identifier="toolfront",
        Name="tools",
        Scopes=[{"ScopeName": "catalogue.products:read", "ScopeDescription": "read"}],
    )
    flows = ["ALLOW_USER_PASSWORD_AUTH", "ALLOW_REFRESH_TOKEN_AUTH"]
    client_id = idp.create_user_pool_client(UserPoolId=pool_id, ClientName="app", ExplicitAuthFlows=flows)
    other = idp.create_user_pool_client(UserPoolId=pool_id, ClientName="other", ExplicitAuthFlows=flows)
    for user, groups in (("ada@example.org", ["catalogue-admins"]), ("bob@example.org", [])):
        idp.admin_create_user(UserPoolId=pool_id, Username=user, MessageAction="SUPPRESS")
        idp.admin_set_user_password(UserPoolId=pool_id, Username=user, Password=PASSWORD, Permanent=True)
        for group in groups:
            idp.create_group(UserPoolId=pool_id, GroupName=group)
            idp.admin_add_user_to_group(UserPoolId=pool_id, Username=user, GroupName=group)
    for table, key in (("KeysTable", "key_id"), ("PrincipalsTable", "principal_id")):
        dynamodb.create_table(
            TableName=table,
            BillingMode="PAY_PER_REQUEST",
            KeySchema=[{"AttributeName": key, "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": key, "AttributeType": "S"}],
        )
    dynamodb.put_item(
        TableName="PrincipalsTable",
        Item={"principal_id": {"S": "catalogue-admins"}, "permissions": {"SS": ["catalogue"]}},
    )
    ids = client_id["UserPoolClient"]["ClientId"], other["UserPoolClient"]["ClientId"]
    yield Pool(endpoint, pool_id, *ids, idp, dynamodb)
    server.stop()


def authenticator(pool: Pool, registered: Container[str] = frozenset(), **overrides: Any) -> Authenticator:
    store = DynamoDBKeyStore("KeysTable", "PrincipalsTable", pool.dynamodb)
    return Authenticator(store, CognitoVerifier(pool.settings(**overrides), registered))


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def test_access_token_becomes_an_actor_with_group_permissions(pool: Pool) -> None:
    token = pool.access_token("ada@example.org")
    actor = authenticator(pool).authenticate(bearer(token), "")
    assert actor.kind is ActorKind.COGNITO
    assert actor.principal == actor.id  # the sub
    assert actor.permissions == {"catalogue"}
    assert actor.scopes == {"catalogue.products:read"}


def test_user_without_groups_holds_no_permission(pool: Pool) -> None:
    token = pool.access_token("bob@example.org")
    assert authenticator(pool).authenticate(bearer(token), "").permissions == frozenset()


def test_token_without_a_scope_of_this_api_is_refused(pool: Pool) -> None:
    # Cognito's password flow grants only its own scope: such a token is for Cognito's APIs
    token = pool.tokens("ada@example.org")["AccessToken"]
    with pytest.raises(UnauthenticatedError, match="no scope of this API"):
        authenticator(pool).authenticate(bearer(token), "")


def test_token_of_an_app_client_the_facade_registered_is_accepted(pool: Pool) -> None:
    pool.dynamodb.create_table(
        TableName="OAuthClientsTable",
        BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
    )
    registered = RegisteredClients("OAuthClientsTable", pool.dynamodb)
    token = pool.access_token("ada@example.org", pool.other_client_id)
    with pytest.raises(UnauthenticatedError, match="another app client"):  # not registered yet
        authenticator(pool, registered).authenticate(bearer(token), "")
    pool.dynamodb.put_item(
        TableName="OAuthClientsTable", Item={**client_key(pool.other_client_id), "kind": {"S": "registered"}}
    )
    actor = authenticator(pool, registered).authenticate(bearer(token), "")
    assert actor.scopes == {"catalogue.products:read"}


def test_custom_scopes_come_from_the_scope_claim_without_prefix(pool: Pool) -> None:
    # Custom scopes need Cognito's OAuth flows, which moto does not serve; the pool's own signer
    # (the one initiate_auth uses) issues the token here instead of a hand-made one.
    user_pool = cognitoidp_backends["123456789012"]["us-east-1"].user_pools[pool.pool_id]
    token, _ = user_pool.create_jwt(
        pool.client_id,
        "ada@example.org",
        "access",
        extra_data={"scope": "openid toolfront/catalogue.products:read other/x:y"},
    )
    actor = authenticator(pool).authenticate(bearer(token), "")
    assert actor.scopes == {"catalogue.products:read"}


def test_id_token_is_refused(pool: Pool) -> None:
    token = pool.tokens("ada@example.org")["IdToken"]
    with pytest.raises(UnauthenticatedError, match="access token is required"):
        authenticator(pool).authenticate(bearer(token), "")


def test_token_of_another_app_client_is_refused(pool: Pool) -> None:
    token = pool.access_token("ada@example.org", pool.other_client_id)
    with pytest.raises(UnauthenticatedError, match="another app client"):
        authenticator(pool).authenticate(bearer(token), "")


def test_token_of_another_issuer_is_refused(pool: Pool) -> None:
    token = pool.access_token("ada@example.org")
    wrong = authenticator(pool, issuer="https://cognito-idp.us-east-1.amazonaws.com/us-east-1_other")
    with pytest.raises(UnauthenticatedError, match="invalid or expired"):
        wrong.authenticate(bearer(token), "")


def test_tampered_token_is_refused(pool: Pool) -> None:
    token = pool.access_token("ada@example.org")
    header, payload, signature = token.split(".")
    forged = f"{header}.{payload[:-4]}AAAA.{signature}"
    with pytest.raises(UnauthenticatedError):
        authenticator(pool).authenticate(bearer(forged), "")


def test_expired_token_is_refused(pool: Pool) -> None:
    user_pool = cognitoidp_backends["123456789012"]["us-east-1"].user_pools[pool.pool_id]
    token, _ = user_pool.create_jwt(pool.client_id, "ada@example.org", "access", expires_in=-120)
    with pytest.raises(UnauthenticatedError, match="invalid or expired"):
        authenticator(pool).authenticate(bearer(token), "")


def test_jwks_is_fetched_once_and_cached(pool: Pool, monkeypatch: pytest.MonkeyPatch) -> None:
    import jwt

    fetches: list[float] = []
    original = jwt.PyJWKClient.fetch_data

    def counted(self: Any) -> Any:
        fetches.append(time.monotonic())
        return original(self)

    monkeypatch.setattr(jwt.PyJWKClient, "fetch_data", counted)
    authn = authenticator(pool)
    for _ in range(3):
        authn.authenticate(bearer(pool.access_token("ada@example.org")), "")
    assert len(fetches) == 1


def test_key_only_deployment_refuses_tokens(pool: Pool) -> None:
    store = DynamoDBKeyStore("KeysTable", "PrincipalsTable", pool.dynamodb)
    token = pool.access_token("ada@example.org")
    with pytest.raises(UnauthenticatedError):
        Authenticator(store).authenticate(bearer(token), "")


@pytest.mark.parametrize(
    "claims",
    [
        {"cognito:groups": "catalogue-admins"},  # a string is not a list of groups
        {"cognito:groups": [["catalogue-admins"]]},
        {"scope": ["toolfront/catalogue.products:read"]},
    ],
)
def test_claims_of_another_shape_are_a_401_never_a_500(pool: Pool, claims: dict[str, Any]) -> None:
    user_pool = cognitoidp_backends["123456789012"]["us-east-1"].user_pools[pool.pool_id]
    token, _ = user_pool.create_jwt(pool.client_id, "ada@example.org", "access", extra_data=claims)
    with pytest.raises(UnauthenticatedError, match="claims are not those of a Cognito access token"):
        authenticator(pool).authenticate(bearer(token), "")


def test_a_client_id_claim_that_is_a_list_is_a_401(pool: Pool) -> None:
    user_pool = cognitoidp_backends["123456789012"]["us-east-1"].user_pools[pool.pool_id]
    token, _ = user_pool.create_jwt(
        pool.client_id, "ada@example.org", "access", extra_data={"client_id": [pool.client_id]}
    )
    with pytest.raises(UnauthenticatedError, match="another app client"):
        authenticator(pool).authenticate(bearer(token), "")
