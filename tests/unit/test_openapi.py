"""The OpenAPI 3.1 document of every tool, its docs page, and ``toolfront openapi``."""

from __future__ import annotations

import copy
import itertools
import json
import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate
from openapi_spec_validator.validation.exceptions import OpenAPIValidationError

from toolfront.adapters.openapi.document import build_document, openapi_document
from toolfront.adapters.openapi.page import docs_page
from toolfront.approvals.desk import WORKFLOW_DOWN
from toolfront.approvals.policy import ConfirmationReason
from toolfront.approvals.records import Approval, ApprovalStatus, Requester
from toolfront.approvals.runner import FAILED_WITHOUT_DETAIL
from toolfront.audit.records import decided_by
from toolfront.tools.manifest import offered_input_schema
from toolfront.tools.system import all_tools
from toolfront_dev.cli import main

ROOT = Path(__file__).resolve().parents[2]
SERVER = "https://api.example.com"
ERROR_STATUSES = ("400", "401", "403", "404", "409", "413", "415", "422", "429", "500", "503")


@pytest.fixture(scope="module")
def tools() -> list[dict[str, Any]]:
    return all_tools()


@pytest.fixture(scope="module")
def document(tools: list[dict[str, Any]]) -> dict[str, Any]:
    return openapi_document(tools, server_url=SERVER)


def operation(document: dict[str, Any], tool: str) -> dict[str, Any]:
    namespace, verb_noun = tool.split(".")
    found: dict[str, Any] = document["paths"][f"/v1/tools/{namespace}/{verb_noun}"]["post"]
    return found


def resolve(document: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        *_, kind, name = node["$ref"].split("/")
        node = document["components"][kind][name]
    return node


# --- the document ---------------------------------------------------------------------------------


def test_document_validates_as_openapi_3_1(document: dict[str, Any]) -> None:
    assert document["openapi"] == "3.1.0"
    validate(document)  # raises on any problem; the 3.1 validator is picked from "openapi"


def test_validator_refuses_a_broken_document(document: dict[str, Any]) -> None:
    broken = copy.deepcopy(document)
    del operation(broken, "catalogue.get_product")["responses"]["200"]["description"]  # required
    with pytest.raises(OpenAPIValidationError):
        validate(broken)


def test_document_names_its_server_only_when_given(tools: list[dict[str, Any]]) -> None:
    assert openapi_document(tools, server_url=SERVER)["servers"] == [{"url": SERVER}]
    assert "servers" not in openapi_document(tools)


def test_every_tool_has_its_operation(document: dict[str, Any], tools: list[dict[str, Any]]) -> None:
    for tool in tools:
        op = operation(document, tool["name"])
        assert op["operationId"] == tool["name"].replace(".", "_")
        assert op["summary"] == tool["title"]
        assert op["description"].startswith(tool["description"])
        assert op["tags"] == [tool["module"]]
        # An absent body is {}: required exactly when the input has required fields.
        assert op["requestBody"]["required"] is bool(tool["input_schema"].get("required")), tool["name"]
        assert op["requestBody"]["content"]["application/json"]["schema"] == offered_input_schema(tool)


def test_admin_tools_require_a_key_and_public_tools_take_one_optionally(
    document: dict[str, Any], tools: list[dict[str, Any]]
) -> None:
    for tool in tools:
        expected = [{"bearerAuth": []}] if tool["audience"] == "admin" else [{}, {"bearerAuth": []}]
        assert operation(document, tool["name"])["security"] == expected, tool["name"]
    scheme = document["components"]["securitySchemes"]["bearerAuth"]
    assert (scheme["type"], scheme["scheme"]) == ("http", "bearer")


def test_extensions_carry_the_manifest_values(document: dict[str, Any], tools: list[dict[str, Any]]) -> None:
    for tool in tools:
        op = operation(document, tool["name"])
        assert op["x-toolfront-scope"] == tool["scope"]
        assert op["x-toolfront-permission"] == tool["permission"]
        assert op["x-toolfront-danger"] == tool["danger"]
        assert op["x-toolfront-audience"] == tool["audience"]
        assert op["x-toolfront-max-items"] == tool["max_items"]
    assert operation(document, "catalogue.delete_product")["x-toolfront-danger"] == "always"
    assert operation(document, "catalogue.discount_products")["x-toolfront-danger"] == "check"
    assert operation(document, "catalogue.set_prices")["x-toolfront-max-items"] == 500


def test_cost_extension_follows_the_default_rule(document: dict[str, Any]) -> None:
    assert operation(document, "catalogue.get_product")["x-toolfront-cost"] == 1
    assert operation(document, "guest.start_session")["x-toolfront-cost"] == 1
    assert (
        operation(document, "catalogue.set_prices")["x-toolfront-cost"] == "max(1, ceil(longest list / 50))"
    )


def test_declared_cost_is_written_as_declared(tools: list[dict[str, Any]]) -> None:
    fixed = [dict(tools[0], cost=7), dict(tools[1], cost="dynamic")]
    built = build_document(fixed)
    assert operation(built, fixed[0]["name"])["x-toolfront-cost"] == 7
    assert operation(built, fixed[1]["name"])["x-toolfront-cost"] == "dynamic"


@pytest.mark.parametrize(
    ("tool", "offered"),
    [
        ("catalogue.create_product", True),
        ("catalogue.set_prices", True),
        ("catalogue.get_product", False),  # read-only
        ("guest.start_session", False),  # replay: false
        ("system.cancel_approval", False),  # replay: false
    ],
)
def test_idempotency_key_is_offered_exactly_where_the_tool_takes_one(
    document: dict[str, Any], tool: str, offered: bool
) -> None:
    op = operation(document, tool)
    schema = op["requestBody"]["content"]["application/json"]["schema"]
    assert ("idempotency_key" in schema["properties"]) is offered
    headers = [p["name"] for p in op.get("parameters", []) if p["in"] == "header"]
    assert headers == (["Idempotency-Key"] if offered else [])
    assert op["x-toolfront-idempotency-key"] is offered


def test_202_only_on_tools_that_write(document: dict[str, Any], tools: list[dict[str, Any]]) -> None:
    for tool in tools:
        responses = operation(document, tool["name"])["responses"]
        holdable = not tool["annotations"]["read_only"] and not tool["name"].startswith("system.")
        assert ("202" in responses) is holdable, tool["name"]  # core's own tools are never held
    pending = document["components"]["schemas"]["PendingApproval"]
    assert pending["properties"]["status"] == {"type": "string", "const": "pending_approval"}
    assert pending["properties"]["expires_at"]["format"] == "date-time"


def test_every_contract_error_status_answers_the_error_envelope(
    document: dict[str, Any], tools: list[dict[str, Any]]
) -> None:
    for tool in tools:
        responses = operation(document, tool["name"])["responses"]
        for status in ERROR_STATUSES:
            answer = resolve(document, responses[status])
            schema = answer["content"]["application/json"]["schema"]
            assert schema == {"$ref": "#/components/schemas/ErrorEnvelope"}, (tool["name"], status)
            assert "X-Request-Id" in answer["headers"]
    envelope = document["components"]["schemas"]["ErrorEnvelope"]
    assert envelope["required"] == ["error", "request_id"]
    assert envelope["additionalProperties"] is False
    assert document["components"]["schemas"]["Error"]["required"] == ["code", "message", "details"]


def test_both_success_forms_are_described_with_the_raw_bytes_of_a_tools_mime_type(
    document: dict[str, Any], tools: list[dict[str, Any]]
) -> None:
    label = operation(document, "catalogue.get_product_label")["responses"]["200"]["content"]
    declared = next(tool for tool in tools if tool["name"] == "catalogue.get_product_label")["mime_type"]
    files = [declared] if isinstance(declared, str) else declared
    assert "image/svg+xml" in files
    assert set(label) == {"application/json", *files}
    for mime_type in files:
        assert label[mime_type]["schema"] == {"type": "string", "format": "binary"}
    envelope = resolve(document, label["application/json"]["schema"])
    assert resolve(document, envelope["properties"]["data"])["required"] == ["sku"]  # the output_schema


def test_headers_of_refusals_are_documented(document: dict[str, Any]) -> None:
    responses = document["components"]["responses"]
    assert responses["Unauthenticated"]["headers"]["WWW-Authenticate"] == {
        "$ref": "#/components/headers/WWW-Authenticate"
    }
    assert responses["RateLimited"]["headers"]["Retry-After"]["required"] is True
    assert "Retry-After" in responses["Conflict"]["headers"]
    ok_headers = operation(document, "catalogue.create_product")["responses"]["200"]["headers"]
    assert {"X-Request-Id", "RateLimit-Policy", "RateLimit", "Idempotent-Replayed"} <= set(ok_headers)


def test_api_routes_are_documented(document: dict[str, Any]) -> None:
    for path in ("/health", "/v1/tools", "/v1/approvals/{id}", "/v1/openapi.json", "/v1/docs"):
        assert "get" in document["paths"][path], path
    approval = document["paths"]["/v1/approvals/{id}"]["get"]["responses"]["200"]
    envelope = resolve(document, approval["content"]["application/json"]["schema"])
    assert envelope["properties"]["data"] == {"$ref": "#/components/schemas/Approval"}


def test_document_is_deterministic_with_sorted_paths(tools: list[dict[str, Any]]) -> None:
    first = json.dumps(build_document(tools, server_url=SERVER))
    again = json.dumps(build_document(list(reversed(tools)), server_url=SERVER))
    assert first == again
    paths = list(json.loads(first)["paths"])
    assert paths == sorted(paths)


def test_document_is_built_once_per_tools_and_server(tools: list[dict[str, Any]]) -> None:
    assert openapi_document(tools, server_url=SERVER) is openapi_document(list(tools), server_url=SERVER)
    assert openapi_document(tools, server_url=SERVER) is not openapi_document(tools, server_url="http://x")


# --- the docs page --------------------------------------------------------------------------------


def test_docs_page_lists_every_operation(document: dict[str, Any], tools: list[dict[str, Any]]) -> None:
    page = docs_page(document)
    assert page.startswith("<!DOCTYPE html>")
    assert 'name="viewport"' in page
    for tool in tools:
        assert f'id="op-{tool["name"].replace(".", "_")}"' in page
        assert f'href="#op-{tool["name"].replace(".", "_")}"' in page  # the table of contents
    assert "curl -X POST &#x27;https://api.example.com/v1/tools/catalogue/create_product&#x27;" in page


def test_docs_page_escapes_what_tools_declare(tools: list[dict[str, Any]]) -> None:
    hostile = dict(tools[0], description='<script>alert("x")</script>', title="<b>bold</b>")
    page = docs_page(build_document([hostile]))
    assert "<script" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert "<b>bold</b>" not in page


def test_docs_page_references_no_external_asset(document: dict[str, Any]) -> None:
    page = docs_page(document)
    assert not re.search(r"<script|<link|<img|<iframe|\bsrc=|@import|url\(", page, re.IGNORECASE)
    assert not re.findall(r'href="(?!#)', page)  # only in-page anchors


def test_docs_page_shows_input_fields_and_badges(document: dict[str, Any]) -> None:
    page = docs_page(document)
    assert "<code>prices[].sku</code>" in page
    assert "max items: 500" in page
    assert '<span class="badge danger">danger: always</span>' in page
    assert "scope: catalogue.products:write" in page


# --- the command ----------------------------------------------------------------------------------


def test_openapi_command_prints_the_document_of_the_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["openapi", "--project", str(ROOT), "--server", SERVER]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == openapi_document(all_tools(), server_url=SERVER)


def test_openapi_command_outside_a_project_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["openapi", "--project", str(tmp_path)]) == 1
    assert "no functions/ folder" in capsys.readouterr().err


# --- the Approval schema against the approvals toolfront answers (N18) -------------------------------


def approval_validator(document: dict[str, Any]) -> Draft202012Validator:
    schema = {"components": document["components"], "$ref": "#/components/schemas/Approval"}
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


def every_kind_of_approval() -> list[Approval]:
    """Approvals in every status, decided every way, with every result and error shape stored."""
    moment = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    base = Approval(
        "apr_" + "0" * 24, "catalogue.delete_product", "fn", {"sku": "A"}, "d" * 64,
        Requester("key", "abcdefghijkl", "alice"), "danger", ApprovalStatus.PENDING,
        moment, moment + timedelta(days=1), "req-1", SERVER,
    )  # fmt: skip
    deciders = [None] + [decided_by(kind, None) for kind in ("link", "system")]
    deciders += [decided_by(kind, "x" * 36) for kind in ("approver", "requester", "client")]
    errors = [None, FAILED_WITHOUT_DETAIL, WORKFLOW_DOWN, {"code": "price_changed", "message": "m"}]
    results: list[dict[str, Any]] = [
        {"result": None},
        {"result": {"deleted": "A"}},
        {"result": {"ok": True}, "result_content": [{"type": "text", "text": "done"}]},
    ]
    found = []
    for status, reason, by, error, result in itertools.product(
        ApprovalStatus, ConfirmationReason, deciders, errors, results
    ):
        decided_at = moment if by is not None else None
        found.append(
            replace(
                base, status=status, reason=str(reason), decided_by=by, decided_at=decided_at, error=error
            )
        )
        found[-1] = replace(found[-1], **result)
    return found


def test_every_kind_of_approval_validates_against_the_published_schema(document: dict[str, Any]) -> None:
    validator = approval_validator(document)
    for approval in every_kind_of_approval():
        described = json.loads(json.dumps(approval.describe()))
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(described)]
        assert not errors, (described, errors)


def test_the_approval_schema_names_every_field_describe_writes(document: dict[str, Any]) -> None:
    schema = document["components"]["schemas"]["Approval"]
    full = every_kind_of_approval()[-1].describe()
    assert set(full) == set(schema["properties"])
    assert set(schema["required"]) <= set(replace(every_kind_of_approval()[0]).describe())
