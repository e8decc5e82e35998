"""The running local stack over real HTTP and against moto: routes, tables, environment, dev.json."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.dev.conftest import Fetch
from toolfront_dev.aws import create_tables, dynamodb_client, moto_client
from toolfront_dev.cognito import USER_POOL, create_user_pools
from toolfront_dev.errors import StackError
from toolfront_dev.intrinsics import Intrinsics
from toolfront_dev.stack import LocalStack
from toolfront_dev.template import (
    AttributeDefinition,
    KeyElement,
    ResourceSpec,
    SecondaryIndex,
    TableSpec,
    load_template,
)

PROJECT_DIR = Path(__file__).resolve().parents[2]


def test_health_get_answers_200_with_status_ok_and_request_id(stack: LocalStack, fetch: Fetch) -> None:
    reply = fetch(f"{stack.api_url}/health")

    assert reply.status == 200
    assert reply.json()["data"] == {"status": "ok"}
    assert reply.headers["x-request-id"]
    assert reply.json()["request_id"] == reply.headers["x-request-id"]


def test_health_two_requests_get_distinct_request_ids(stack: LocalStack, fetch: Fetch) -> None:
    first = fetch(f"{stack.api_url}/health").headers["x-request-id"]
    second = fetch(f"{stack.api_url}/health").headers["x-request-id"]

    assert first != second


def test_api_unknown_path_answers_404_not_found_in_the_envelope(stack: LocalStack, fetch: Fetch) -> None:
    reply = fetch(f"{stack.api_url}/no/such/route")

    assert reply.status == 404
    assert json.loads(reply.body)["error"]["code"] == "not_found"  # the template's $default route


def test_api_wrong_method_on_known_path_answers_405_with_allow(stack: LocalStack, fetch: Fetch) -> None:
    reply = fetch(f"{stack.api_url}/health", method="POST", body=b"{}")
    assert (reply.status, reply.headers.get("allow")) == (405, "GET")


def test_catalogue_route_reaches_catalogue_handler(stack: LocalStack, fetch: Fetch) -> None:
    reply = fetch(
        f"{stack.api_url}/v1/tools/catalogue/get_product",
        method="POST",
        body=b'{"sku": "MUG-01"}',
        headers=[("Content-Type", "application/json")],
    )

    # Whatever the catalogue answers today, an answer carrying this request's id came from its
    # handler, not from the gateway's own 404 or 500.
    assert reply.status not in (404, 500)
    assert reply.json()["request_id"] == reply.headers["apigw-requestid"]


def test_tables_every_template_table_exists_with_its_key_schema(stack: LocalStack) -> None:
    dynamodb = dynamodb_client(stack.moto_endpoint)
    template = stack.template

    assert {"KeysTable", "ProductsTable"} <= {table.logical_id for table in template.tables}
    assert {t.logical_id for t in template.tables} == {
        t.logical_id for t in load_template(PROJECT_DIR / "template.yaml").tables
    }
    for table in template.tables:
        described = dynamodb.describe_table(TableName=stack.table_names[table.logical_id])["Table"]
        expected = [{"AttributeName": k.attribute_name, "KeyType": k.key_type} for k in table.key_schema]
        assert described["KeySchema"] == expected
        assert described["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"


def test_tables_ttl_status_matches_template(stack: LocalStack) -> None:
    dynamodb = dynamodb_client(stack.moto_endpoint)

    for table in stack.template.tables:
        ttl = dynamodb.describe_time_to_live(TableName=stack.table_names[table.logical_id])
        description = ttl["TimeToLiveDescription"]
        if table.time_to_live is not None and table.time_to_live.enabled:
            assert description["TimeToLiveStatus"] == "ENABLED"
            assert description["AttributeName"] == table.time_to_live.attribute_name
        else:
            assert description["TimeToLiveStatus"] == "DISABLED"


def test_tables_physical_names_follow_stage_pattern(stack: LocalStack) -> None:
    assert stack.table_names["KeysTable"] == "toolfront-local-KeysTable"
    assert stack.table_names["ProductsTable"] == "toolfront-local-ProductsTable"


def test_dev_json_written_with_tables_moto_lists(stack: LocalStack) -> None:
    written = json.loads(stack.dev_json_path.read_text(encoding="utf-8"))
    in_moto = set(dynamodb_client(stack.moto_endpoint).list_tables()["TableNames"])

    assert written["api_url"] == stack.api_url
    assert written["moto_endpoint"] == stack.moto_endpoint
    assert written["region"] == "us-east-1"
    assert written["stage"] == "local"
    assert set(written["tables"].values()) <= in_moto  # other tests may add tables of their own
    assert set(written["tables"]) == {table.logical_id for table in stack.template.tables}


def test_environment_points_functions_at_moto_and_physical_tables(stack: LocalStack) -> None:
    assert os.environ["AWS_ENDPOINT_URL"] == stack.moto_endpoint
    assert os.environ["MOTO_PORT"] == stack.moto_endpoint.rsplit(":", 1)[1]
    assert os.environ["AWS_DEFAULT_REGION"] == "us-east-1"
    assert os.environ["AWS_EC2_METADATA_DISABLED"] == "true"
    assert os.environ["TOOLFRONT_KEYS_TABLE"] == stack.table_names["KeysTable"]
    assert os.environ["TOOLFRONT_PRODUCTS_TABLE"] == stack.table_names["ProductsTable"]
    assert os.environ["TOOLFRONT_STAGE"] == "local"


def test_moto_config_enables_step_functions_execution(stack: LocalStack, fetch: Fetch) -> None:
    from moto.core.config import default_user_config

    # GET /moto-api/config only reports lambda and batch; the server runs in this process, so the
    # Step Functions switch is read where moto keeps it.
    assert fetch(f"{stack.moto_endpoint}/moto-api/config").json()["lambda"] == {"use_docker": False}
    assert default_user_config["stepfunctions"] == {"execute_state_machine": True}


def test_stack_second_start_in_same_process_raises(stack: LocalStack, tmp_path: Path) -> None:
    other = LocalStack(PROJECT_DIR, "127.0.0.1", 0, 0, dev_json_path=tmp_path / "dev.json")

    with pytest.raises(StackError, match="already running"):
        other.start()
    assert os.environ["AWS_ENDPOINT_URL"] == stack.moto_endpoint
    assert not (tmp_path / "dev.json").exists()


def test_user_pools_of_template_exist_in_moto_and_reach_environment(stack: LocalStack) -> None:
    pools = [r.logical_id for r in stack.template.resources if r.type == USER_POOL]
    if not pools:
        pytest.skip("template.yaml declares no Cognito user pool")
    cognito = moto_client(stack.moto_endpoint, "cognito-idp")

    assert set(stack.info.user_pools) == set(pools)
    for pool_id in stack.info.user_pools.values():
        assert cognito.describe_user_pool(UserPoolId=pool_id)["UserPool"]["Id"] == pool_id
    if len(pools) == 1:
        [pool_id] = stack.info.user_pools.values()
        assert (
            os.environ["TOOLFRONT_COGNITO_JWKS_URL"]
            == f"{stack.moto_endpoint}/{pool_id}/.well-known/jwks.json"
        )


def test_create_user_pools_resolves_client_pool_ref_and_scopes(stack: LocalStack) -> None:
    resources = [
        ResourceSpec(
            "Client",
            "AWS::Cognito::UserPoolClient",
            {
                "UserPoolId": {"Ref": "Pool"},
                "ClientName": {"Fn::Sub": "client-${Stage}"},
                "GenerateSecret": False,
                "AllowedOAuthFlowsUserPoolClient": True,
                "AllowedOAuthFlows": ["code"],
                "AllowedOAuthScopes": ["tests/things:read"],
                "CallbackURLs": ["http://localhost:9/callback"],
            },
        ),
        ResourceSpec(
            "Server",
            "AWS::Cognito::UserPoolResourceServer",
            {
                "UserPoolId": {"Ref": "Pool"},
                "Identifier": "tests",
                "Name": "tests",
                "Scopes": [{"ScopeName": "things:read", "ScopeDescription": "Read things"}],
            },
        ),
        ResourceSpec("Pool", "AWS::Cognito::UserPool", {"UsernameAttributes": ["email"]}),
        ResourceSpec("Queue", "AWS::SQS::Queue", {}),
    ]

    ids = create_user_pools(stack.moto_endpoint, resources, Intrinsics({"Stage": "t"}), stage="t")

    assert set(ids) == {"Pool", "Server", "Client"}
    cognito = moto_client(stack.moto_endpoint, "cognito-idp")
    pool = cognito.describe_user_pool(UserPoolId=ids["Pool"])["UserPool"]
    client = cognito.describe_user_pool_client(UserPoolId=ids["Pool"], ClientId=ids["Client"])[
        "UserPoolClient"
    ]
    assert pool["Name"] == "toolfront-t-Pool"
    assert client["ClientName"] == "client-t"
    assert client["AllowedOAuthScopes"] == ["tests/things:read"]


def test_dev_json_lists_user_pools_and_clients(stack: LocalStack) -> None:
    written = json.loads(stack.dev_json_path.read_text(encoding="utf-8"))

    assert written["user_pools"] == dict(stack.info.user_pools)
    assert written["user_pool_clients"] == dict(stack.info.user_pool_clients)


def test_create_tables_global_secondary_index_created(stack: LocalStack) -> None:
    table = TableSpec(
        logical_id="OrdersTable",
        key_schema=(KeyElement("pk", "HASH"),),
        attribute_definitions=(AttributeDefinition("pk", "S"), AttributeDefinition("owner", "S")),
        global_secondary_indexes=(
            SecondaryIndex("by-owner", (KeyElement("owner", "HASH"),), "KEYS_ONLY", ()),
        ),
        time_to_live=None,
    )

    create_tables(stack.moto_endpoint, [table], {"OrdersTable": "tests-OrdersTable"})

    described = dynamodb_client(stack.moto_endpoint).describe_table(TableName="tests-OrdersTable")["Table"]
    [index] = described["GlobalSecondaryIndexes"]
    assert index["IndexName"] == "by-owner"
    assert index["KeySchema"] == [{"AttributeName": "owner", "KeyType": "HASH"}]
    assert index["Projection"] == {"ProjectionType": "KEYS_ONLY"}


def test_create_user_pools_domain_ref_is_its_prefix_and_names_its_pool(stack: LocalStack) -> None:
    resources = [
        ResourceSpec("Pool", "AWS::Cognito::UserPool", {}),
        ResourceSpec(
            "Domain",
            "AWS::Cognito::UserPoolDomain",
            {
                "UserPoolId": {"Ref": "Pool"},
                "Domain": {"Fn::Sub": "tests-${Stage}"},
                "ManagedLoginVersion": 2,
            },
        ),
    ]

    ids = create_user_pools(stack.moto_endpoint, resources, Intrinsics({"Stage": "d"}), stage="d")

    assert ids["Domain"] == "tests-d"
    described = moto_client(stack.moto_endpoint, "cognito-idp").describe_user_pool_domain(Domain="tests-d")
    assert described["DomainDescription"]["UserPoolId"] == ids["Pool"]
