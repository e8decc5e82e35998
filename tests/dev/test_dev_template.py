"""Reading template.yaml: routes, merged environments, tables, and resolving intrinsics."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolfront_dev.environment import stack_intrinsics
from toolfront_dev.errors import TemplateError
from toolfront_dev.template import Route, Template, TimeToLive, load_template

PROJECT_TEMPLATE = Path(__file__).resolve().parents[2] / "template.yaml"

PROJECT_DIR = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def template() -> Template:
    return load_template(PROJECT_DIR / "template.yaml")


def write_template(folder: Path, resources: str) -> Path:
    path = folder / "template.yaml"
    path.write_text("Transform: AWS::Serverless-2016-10-31\nResources:\n" + resources, encoding="utf-8")
    return path


def test_load_template_project_yields_httpapi_routes_per_function(template: Template) -> None:
    assert Route("GatewayFunction", "GET", "/health") in template.routes
    assert Route("CatalogueFunction", "POST", "/v1/tools/catalogue/{verb_noun}") in template.routes
    assert (
        template.function("CatalogueFunction").routes[0].route_key == "POST /v1/tools/catalogue/{verb_noun}"
    )


def test_load_template_function_code_uri_and_handler_resolved(template: Template) -> None:
    gateway = template.function("GatewayFunction")

    assert gateway.code_uri == PROJECT_DIR / "functions" / "gateway"
    assert (gateway.handler_module, gateway.handler_function) == ("app", "lambda_handler")
    # Globals' memory; its own Timeout (it outwaits the families it invokes), over Globals' 10 s
    assert (gateway.memory_size_mb, gateway.timeout_seconds) == (512, 29)
    catalogue = template.function("CatalogueFunction")
    assert (catalogue.memory_size_mb, catalogue.timeout_seconds) == (512, 10)


def test_load_template_function_environment_merges_over_globals(template: Template) -> None:
    catalogue = template.function("CatalogueFunction").environment
    gateway = template.function("GatewayFunction").environment

    assert catalogue["TOOLFRONT_PRODUCTS_TABLE"] == {"Ref": "ProductsTable"}
    assert catalogue["TOOLFRONT_KEYS_TABLE"] == {"Ref": "KeysTable"}
    assert "TOOLFRONT_PRODUCTS_TABLE" not in gateway
    assert gateway["POWERTOOLS_SERVICE_NAME"] == "toolfront"


def test_load_template_tables_carry_keys_and_ttl(template: Template) -> None:
    tables = {table.logical_id: table for table in template.tables}

    assert {"KeysTable", "ProductsTable", "IdempotencyTable"} <= set(tables)
    assert tables["ProductsTable"].key_schema[0].attribute_name == "sku"
    assert tables["ProductsTable"].time_to_live is None
    assert tables["IdempotencyTable"].time_to_live == TimeToLive("expires_at_epoch", enabled=True)


def test_load_template_missing_file_raises(tmp_path: Path) -> None:
    with pytest.raises(TemplateError, match="no SAM template"):
        load_template(tmp_path / "template.yaml")


def test_load_template_partial_segment_placeholder_raises(tmp_path: Path) -> None:
    path = write_template(
        tmp_path,
        """  Fn:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: fn/
      Handler: app.handler
      Events:
        Bad: {Type: HttpApi, Properties: {Path: "/items/x{id}", Method: GET}}
""",
    )
    with pytest.raises(TemplateError, match="whole segment"):
        load_template(path)


def test_load_template_greedy_not_last_raises(tmp_path: Path) -> None:
    path = write_template(
        tmp_path,
        """  Fn:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: fn/
      Handler: app.handler
      Events:
        Bad: {Type: HttpApi, Properties: {Path: "/{proxy+}/tail", Method: GET}}
""",
    )
    with pytest.raises(TemplateError, match="last segment"):
        load_template(path)


def test_load_template_event_without_path_is_default_route(tmp_path: Path) -> None:
    path = write_template(
        tmp_path,
        """  Fn:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: fn/
      Handler: app.handler
      Events:
        Anything: {Type: HttpApi}
        Rest: {Type: Api, Properties: {Path: /rest, Method: GET}}
""",
    )
    assert load_template(path).routes == (Route("Fn", "ANY", "$default"),)


def test_load_template_conditions_and_other_resources_kept_unevaluated(tmp_path: Path) -> None:
    path = write_template(
        tmp_path,
        """  Pool:
    Type: AWS::Cognito::UserPool
    Condition: WithPool
    Properties: {UserPoolName: !Sub "pool-${Stage}"}
""",
    )
    path.write_text(
        "Parameters: {Stage: {Type: String, Default: dev}}\n"
        "Conditions: {WithPool: !Equals [!Ref Stage, dev]}\n" + path.read_text(encoding="utf-8"),
        encoding="utf-8",
    )
    template = load_template(path)

    assert template.conditions == {"WithPool": {"Fn::Equals": [{"Ref": "Stage"}, "dev"]}}
    assert template.parameter_defaults == {"Stage": "dev"}
    [pool] = template.resources
    assert (pool.logical_id, pool.type, pool.condition) == ("Pool", "AWS::Cognito::UserPool", "WithPool")
    assert pool.properties == {"UserPoolName": {"Fn::Sub": "pool-${Stage}"}}


@pytest.mark.parametrize(
    ("name", "value", "problem"),
    [
        ("MaxPublicHoldsPerIpPerHour", "0", "must be at least 1"),
        ("RateLimitPublicIpGuardPerMinute", "many", "must be a number"),
        ("EnableCognito", "maybe", "must be one of true, false"),
        ("PublicUrl", "ftp://tools.example.com", "must match"),
    ],
)
def test_a_parameter_override_the_template_refuses_names_it(name: str, value: str, problem: str) -> None:
    template = load_template(PROJECT_TEMPLATE)
    with pytest.raises(TemplateError, match=f"parameter {name}='{value}': {problem}"):
        stack_intrinsics(template, "local", {name: value})


def test_a_parameter_override_within_its_constraints_is_taken() -> None:
    template = load_template(PROJECT_TEMPLATE)
    intrinsics = stack_intrinsics(template, "local", {"MaxPublicHoldsPerIpPerHour": "1000"})
    assert intrinsics.value({"Ref": "MaxPublicHoldsPerIpPerHour"}, where="test") == "1000"
