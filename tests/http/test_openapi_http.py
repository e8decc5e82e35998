"""``GET /v1/openapi.json`` and ``GET /v1/docs`` on the local stack."""

from __future__ import annotations

from openapi_spec_validator import validate

from tests.http.conftest import Api
from toolfront_dev.stack import LocalStack


def test_openapi_json_is_a_valid_document_naming_the_stack(api: Api, stack: LocalStack) -> None:
    reply = api.request("GET", "/v1/openapi.json")
    assert reply.status == 200
    assert reply.headers["content-type"].startswith("application/json")
    assert reply.headers["x-request-id"]
    document = reply.json()
    validate(document)
    assert document["servers"][0]["url"] == stack.api_url
    assert "/v1/tools/catalogue/get_product" in document["paths"]
    assert "/v1/tools/system/get_actor" in document["paths"]


def test_docs_is_an_html_page(api: Api) -> None:
    reply = api.request("GET", "/v1/docs")
    assert reply.status == 200
    assert reply.headers["content-type"].startswith("text/html")
    page = reply.body.decode("utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert 'id="op-catalogue_create_product"' in page
