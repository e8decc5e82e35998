"""The OpenAPI document as code generators read it (openapi-python-client, openapi-typescript): every
content-block kind, envelope and tool's data a named component, unions only of ``$ref``s, each tool's
data its output schema, operation ids that read as identifiers, one sentence on confirmation."""

from __future__ import annotations

import re
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate

from tests.unit.test_openapi import SERVER, operation, resolve
from toolfront.adapters.openapi.document import build_document, openapi_document, tool_identifiers
from toolfront.tools.system import all_tools


@pytest.fixture(scope="module")
def tools() -> list[dict[str, Any]]:
    return all_tools()


@pytest.fixture(scope="module")
def document(tools: list[dict[str, Any]]) -> dict[str, Any]:
    return openapi_document(tools, server_url=SERVER)


def test_200_and_202_are_distinct_named_envelopes(document: dict[str, Any]) -> None:
    responses = operation(document, "catalogue.delete_product")["responses"]
    ok = responses["200"]["content"]["application/json"]["schema"]
    held = responses["202"]["content"]["application/json"]["schema"]
    assert ok == {"$ref": "#/components/schemas/CatalogueDeleteProductEnvelope"}
    assert held == {"$ref": "#/components/schemas/PendingEnvelope"}
    assert resolve(document, held)["properties"]["data"] == {"$ref": "#/components/schemas/PendingApproval"}


def test_success_envelope_wraps_the_output_schema_and_request_id(
    document: dict[str, Any], tools: list[dict[str, Any]]
) -> None:
    ok = operation(document, "catalogue.get_product")["responses"]["200"]
    assert ok["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/CatalogueGetProductEnvelope"
    }
    schema = resolve(document, ok["content"]["application/json"]["schema"])
    assert schema["required"] == ["data", "request_id"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["data"] == {"$ref": "#/components/schemas/CatalogueGetProductData"}
    declared = next(tool for tool in tools if tool["name"] == "catalogue.get_product")["output_schema"]
    assert resolve(document, schema["properties"]["data"]) == declared
    assert schema["properties"]["content"] == {
        "type": "array",
        "items": {"$ref": "#/components/schemas/ContentBlock"},
    }


SHARED_DATA = {
    "system.get_approval": "Approval",
    "system.cancel_approval": "Approval",
    "system.confirm_call": "Approval",
    "system.list_tools": "ToolList",
}


def test_every_shipped_tool_answers_its_output_schema_as_data(
    document: dict[str, Any], tools: list[dict[str, Any]]
) -> None:
    for tool in tools:
        assert tool["output_schema"], f"{tool['name']} declares no output_schema"
        ok = operation(document, tool["name"])["responses"]["200"]["content"]["application/json"]["schema"]
        data = resolve(document, ok)["properties"]["data"]
        if tool["name"] in SHARED_DATA:  # core's shapes, components shared with the GET routes
            assert data == {"$ref": f"#/components/schemas/{SHARED_DATA[tool['name']]}"}
        else:
            assert resolve(document, data) == tool["output_schema"], tool["name"]


def test_a_tool_without_an_output_schema_answers_any_object_or_null(tools: list[dict[str, Any]]) -> None:
    bare = dict(next(tool for tool in tools if tool["name"] == "catalogue.get_product"), output_schema=None)
    built = build_document([bare])
    envelope = built["components"]["schemas"]["CatalogueGetProductEnvelope"]
    assert envelope["properties"]["data"] == {
        "anyOf": [{"$ref": "#/components/schemas/CatalogueGetProductData"}, {"type": "null"}]
    }  # a ToolResult may carry no data
    data = built["components"]["schemas"]["CatalogueGetProductData"]
    assert (data["type"], data["additionalProperties"]) == ("object", True)  # never Record<string, never>
    validate(built)


def test_content_blocks_are_named_components_with_a_discriminator_on_type(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]
    block = schemas["ContentBlock"]
    names = ["TextContent", "ImageContent", "AudioContent", "EmbeddedResource", "ResourceLink"]
    assert block["oneOf"] == [{"$ref": f"#/components/schemas/{name}"} for name in names]
    assert block["discriminator"]["propertyName"] == "type"
    mapping = block["discriminator"]["mapping"]
    assert set(mapping) == {
        "text",
        "image",
        "audio",
        "resource",
        "resource_link",
    }  # every kind results builds
    for kind, target in mapping.items():
        variant = resolve(document, {"$ref": target})
        assert variant["properties"]["type"] == {"type": "string", "const": kind}
        assert "type" in variant["required"]
    assert schemas["EmbeddedResource"]["properties"]["resource"] == {
        "$ref": "#/components/schemas/ResourceContents"
    }


def test_wire_blocks_of_every_kind_validate_against_content_block(document: dict[str, Any]) -> None:
    from toolfront import results

    validator = Draft202012Validator(
        {"components": document["components"], "$ref": "#/components/schemas/ContentBlock"}
    )
    blocks = [
        results.text("hi"),
        results.image(b"\x89PNG\r\n\x1a\n", "image/png"),
        results.audio(b"RIFF", "audio/wav"),
        results.embedded_resource("toolfront://x/a.csv", text="a,b", mime_type="text/csv"),
        results.embedded_resource("toolfront://x/a.bin", blob=b"\0", title="t", description="d"),
        results.resource_link("toolfront://x/b", "b", title="t", description="d", mime_type="text/plain"),
    ]
    for block in blocks:
        wired = results.wire(block)
        assert not list(validator.iter_errors(wired)), wired


def _schemas_in(node: Any) -> list[dict[str, Any]]:
    """Every schema object nested anywhere in ``node``."""
    found = []
    if isinstance(node, dict):
        found.append(node)
        for value in node.values():
            found.extend(_schemas_in(value))
    elif isinstance(node, list):
        for value in node:
            found.extend(_schemas_in(value))
    return found


def test_no_union_holds_an_object_a_generator_would_have_to_name(document: dict[str, Any]) -> None:
    for node in _schemas_in(document):
        for key in ("oneOf", "anyOf"):
            for member in node.get(key, []):
                assert "$ref" in member or (member.get("type") != "object" and "properties" not in member), (
                    key,
                    member,
                )


def test_every_json_answer_is_a_named_envelope(document: dict[str, Any]) -> None:
    for path, item in document["paths"].items():
        for answer in item["get" if "get" in item else "post"]["responses"].values():
            schema = resolve(document, answer).get("content", {}).get("application/json", {}).get("schema")
            if schema is not None and path != "/v1/openapi.json":
                assert set(schema) == {"$ref"}, (path, schema)


def test_no_data_is_an_object_without_fields(document: dict[str, Any]) -> None:
    for name, schema in document["components"]["schemas"].items():
        if schema.get("type") == "object":
            assert "properties" in schema or schema.get("additionalProperties") is True, name


def test_operation_ids_read_as_identifiers_and_are_unique(document: dict[str, Any]) -> None:
    ids = [op["operationId"] for item in document["paths"].values() for op in item.values()]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[a-z][a-z0-9_]*", found) for found in ids), ids


def test_tools_whose_names_read_alike_get_distinct_identifiers(tools: list[dict[str, Any]]) -> None:
    alike = [dict(tools[0], name="a_b.c_d"), dict(tools[0], name="a.b_c_d")]
    assert tool_identifiers(alike) == {"a.b_c_d": ("a_b_c_d", "ABCD"), "a_b.c_d": ("a_b_c_d_2", "ABCD2")}
    built = build_document(alike)
    assert {"ABCDEnvelope", "ABCD2Envelope"} <= set(built["components"]["schemas"])
    validate(built)


def test_each_description_says_once_when_a_person_must_confirm(
    document: dict[str, Any], tools: list[dict[str, Any]]
) -> None:
    for tool in tools:
        paragraphs = operation(document, tool["name"])["description"].split("\n\n")
        said = [p for p in paragraphs if p.startswith("Confirmation:")]
        held = not tool["annotations"]["read_only"] or tool["danger"] is not None
        assert len(said) == (1 if held and not tool["name"].startswith("system.") else 0), (
            tool["name"],
            said,
        )
    [delete] = [
        p
        for p in operation(document, "catalogue.delete_product")["description"].split("\n\n")
        if p.startswith("Confirmation:")
    ]
    assert delete.startswith("Confirmation: always held")
    [discount] = [
        p
        for p in operation(document, "catalogue.discount_products")["description"].split("\n\n")
        if p.startswith("Confirmation:")
    ]
    assert (
        "danger check" in discount and "more than 100 items" in discount and "requires approval" in discount
    )
