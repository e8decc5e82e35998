"""The SAM template and the code it deploys stay in step: runtimes, handlers, layer, tables."""

from __future__ import annotations

import importlib.util
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from cfnlint.decode import decode

ROOT = Path(__file__).resolve().parents[2]
RUNTIMES = {"python3.13"}  # cfn-lint and `sam validate` accept runtimes that do not exist


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    parsed, problems = decode(str(ROOT / "template.yaml"))
    assert not problems
    return parsed


def resources(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {lid: res for lid, res in template["Resources"].items() if res["Type"] == kind}


def function_settings(template: dict[str, Any], props: dict[str, Any], key: str) -> Any:
    return props.get(key, template.get("Globals", {}).get("Function", {}).get(key))


def test_every_function_runs_python313_on_arm64(template: dict[str, Any]) -> None:
    functions = resources(template, "AWS::Serverless::Function")
    assert functions
    for props in (res["Properties"] for res in functions.values()):
        assert function_settings(template, props, "Runtime") in RUNTIMES
        assert function_settings(template, props, "Architectures") == ["arm64"]


def test_every_function_handler_resolves_to_a_callable(template: dict[str, Any]) -> None:
    for logical_id, res in resources(template, "AWS::Serverless::Function").items():
        props = res["Properties"]
        module_name, _, attribute = props["Handler"].rpartition(".")
        path = ROOT / props["CodeUri"] / f"{module_name}.py"
        assert path.is_file(), f"{logical_id}: {path} is missing"
        spec = importlib.util.spec_from_file_location(f"layout_{logical_id}", path)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.path.insert(0, str(path.parent))  # Lambda puts the code folder on the path
        try:
            spec.loader.exec_module(module)
        finally:
            sys.path.remove(str(path.parent))
        assert callable(getattr(module, attribute, None)), f"{logical_id}: {props['Handler']} is not callable"


def test_every_function_uses_the_core_layer_and_the_adot_layer_only_when_given(
    template: dict[str, Any],
) -> None:
    layers = resources(template, "AWS::Serverless::LayerVersion")
    assert list(layers) == ["CoreLayer"]
    adot = {"Fn::If": ["HasOtelLayer", {"Ref": "OtelLayerArn"}, {"Ref": "AWS::NoValue"}]}
    for res in resources(template, "AWS::Serverless::Function").values():
        assert function_settings(template, res["Properties"], "Layers") == [{"Ref": "CoreLayer"}, adot]
    wrapper = template["Globals"]["Function"]["Environment"]["Variables"]["AWS_LAMBDA_EXEC_WRAPPER"]
    assert wrapper == {"Fn::If": ["HasOtelLayer", "/opt/otel-instrument", {"Ref": "AWS::NoValue"}]}


def test_core_layer_ships_the_toolfront_package_built_for_python313(template: dict[str, Any]) -> None:
    layer = template["Resources"]["CoreLayer"]
    content = ROOT / layer["Properties"]["ContentUri"]
    assert (content / "toolfront" / "__init__.py").is_file()
    assert (content / "requirements.txt").is_file()
    assert layer["Metadata"] == {"BuildMethod": "python3.13", "BuildArchitecture": "arm64"}


def test_layer_requirements_pin_what_pyproject_pins() -> None:
    pins = dict(
        line.split("==")
        for line in (ROOT / "layers/core/requirements.txt").read_text().splitlines()
        if line and not line.startswith("#")
    )
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    declared = dict(dep.split("==") for dep in project if "==" in dep)
    assert pins == declared


def test_tables_are_declared_with_ttl_where_records_expire(template: dict[str, Any]) -> None:
    tables = resources(template, "AWS::DynamoDB::Table")
    expected = {"KeysTable", "PrincipalsTable", "IdempotencyTable", "RateLimitsTable", "ApprovalsTable"}
    assert set(tables) >= expected | {"ProductsTable"}
    for logical_id in ("IdempotencyTable", "RateLimitsTable", "ApprovalsTable"):
        ttl = tables[logical_id]["Properties"]["TimeToLiveSpecification"]
        assert ttl == {"AttributeName": "expires_at_epoch", "Enabled": True}
    for props in (t["Properties"] for t in tables.values()):
        assert props["BillingMode"] == "PAY_PER_REQUEST"


def test_catalogue_function_serves_the_catalogue_tool_route(template: dict[str, Any]) -> None:
    events = template["Resources"]["CatalogueFunction"]["Properties"]["Events"]
    routes = {(e["Properties"]["Method"], e["Properties"]["Path"]) for e in events.values()}
    assert ("POST", "/v1/tools/catalogue/{verb_noun}") in routes


def test_family_route_is_served_by_that_familys_function(template: dict[str, Any]) -> None:
    # the route's family name and the function's tool names agree
    for res in resources(template, "AWS::Serverless::Function").values():
        for event in res["Properties"].get("Events", {}).values():
            match = re.fullmatch(
                r"/v1/tools/([a-z][a-z0-9_]*)/\{verb_noun\}", event["Properties"].get("Path", "$default")
            )
            if match:
                family = "gateway" if match.group(1) == "system" else match.group(1)  # core's tools
                assert res["Properties"]["CodeUri"].rstrip("/").endswith(family)
