"""Every kind of content block read by the official MCP clients (Python SDK 2.x and the TypeScript
SDK): the shipped catalogue tools on the local stack (an embedded CSV or JSON resource, a PNG image
with its SVG as a resource, each with an output schema the clients validate ``structuredContent``
against), and a test family on an MCP endpoint of its own for the other kinds (audio, a blob
resource, a resource link)."""

from __future__ import annotations

import base64
import json
import subprocess
import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client
from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

from tests.helpers import family, free_port
from toolfront import Registry, Tool, ToolResult, results
from toolfront.adapters.http import Edge, Route
from toolfront.adapters.mcp.endpoint import McpEndpoint, rpc_refusal
from toolfront.adapters.mcp.results import ToolCatalog
from toolfront.adapters.mcp.router import LocalRouter
from toolfront.admission.admission import Admission
from toolfront.auth.actors import Actor, ActorKind
from toolfront.auth.keystore import DynamoDBKeyStore, issue_key
from toolfront.calls.pipeline import CallPipeline
from toolfront.settings import RateLimits
from toolfront_dev.aws import moto_client
from toolfront_dev.stack import LocalStack

TS_DIR = Path(__file__).resolve().parents[1] / "mcp_ts"
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt "
BLOB = bytes(range(256))


def run(test: Any) -> Any:
    with ThreadPoolExecutor(1) as thread:  # Playwright's sync API keeps an event loop on the main one
        return thread.submit(anyio.run, test).result()


async def call_all(url: str, key: str, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    async with (
        create_mcp_http_client(headers={"Authorization": f"Bearer {key}"}) as http,
        streamable_http_client(url, http_client=http) as (read, write, *_),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        await session.list_tools()  # the SDK validates structuredContent against these outputSchemas
        return [await session.call_tool(name, arguments) for name, arguments in calls]


@pytest.fixture(scope="module")
def reader_key(store: DynamoDBKeyStore) -> str:
    owner = f"content-{uuid.uuid4().hex[:6]}"
    store.grant(owner, ["catalogue"], datetime.now(UTC))
    return issue_key(store, owner=owner, scopes=["catalogue.*"], rate_limit=100_000)[0]


@pytest.fixture(scope="module")
def product(api: Any, reader_key: str) -> dict[str, Any]:
    made = {
        "sku": f"LBL-{uuid.uuid4().hex[:6]}",
        "name": 'Mug "A" & <b>',
        "price_cents": 1205,
        "currency": "EUR",
    }
    assert api.call("catalogue.create_product", made, key=reader_key).status == 200
    return made


def test_the_python_sdk_reads_the_shipped_resource_and_image(
    stack: LocalStack, reader_key: str, product: dict[str, Any]
) -> None:
    calls = [
        ("catalogue-export_products", {}),
        ("catalogue-export_products", {"format": "json"}),
        ("catalogue-get_product_label", {"sku": product["sku"]}),
    ]
    csv_export, json_export, label = run(
        lambda: call_all(f"{stack.api_url}/mcp/catalogue", reader_key, calls)
    )
    for exported in (csv_export, json_export):
        assert exported.is_error is False and exported.structured_content["count"] >= 1
    resource = csv_export.content[0].resource
    assert (str(resource.uri), resource.mime_type) == ("toolfront://catalogue/products.csv", "text/csv")
    assert resource.text.splitlines()[0] == "sku,name,price_cents,currency"
    assert f'{product["sku"]},"Mug ""A"" & <b>",1205,EUR' in resource.text.splitlines()
    listed = json.loads(json_export.content[0].resource.text)
    assert product in listed and json_export.content[0].resource.mime_type == "application/json"
    image, svg = label.content[0], label.content[1].resource
    assert (image.type, image.mime_type) == ("image", "image/png")  # a type model APIs take
    assert base64.b64decode(image.data).startswith(b"\x89PNG\r\n\x1a\n")
    assert (str(svg.uri), svg.mime_type) == (
        f"toolfront://catalogue/labels/{product['sku']}.svg",
        "image/svg+xml",
    )
    assert (
        product["sku"] in svg.text
        and "Mug &quot;A&quot; &amp; &lt;b&gt;" in svg.text
        and "12.05 EUR" in svg.text
    )
    assert label.structured_content == {"sku": product["sku"]}
    assert label.content[-1].type == "text"  # the data as JSON text, for clients without structured output


def test_rest_answers_the_label_as_svg_or_png_bytes_for_an_exact_accept(
    api: Any, reader_key: str, product: dict[str, Any]
) -> None:
    body = json.dumps({"sku": product["sku"]}).encode()

    def label(accept: str) -> Any:
        headers = {"Content-Type": "application/json", "Accept": accept}
        return api.request(
            "POST", "/v1/tools/catalogue/get_product_label", body=body, headers=headers, key=reader_key
        )

    raw = label("image/svg+xml")  # the README's curl
    assert raw.status == 200 and raw.headers["content-type"] == "image/svg+xml"
    assert raw.body.startswith(b"<svg") and product["sku"].encode() in raw.body
    assert raw.headers["x-request-id"]
    assert raw.headers["content-security-policy"] == "default-src 'none'; sandbox"
    png = label("image/png")
    assert png.status == 200 and png.headers["content-type"] == "image/png"
    assert png.body.startswith(b"\x89PNG\r\n\x1a\n")
    refused = label("image/svg+xml;q=0")
    assert refused.headers["content-type"] == "application/json"
    enveloped = api.call("catalogue.get_product_label", {"sku": product["sku"]}, key=reader_key).json()
    assert enveloped["data"] == {"sku": product["sku"]}
    assert [block.get("mimeType") for block in enveloped["content"]] == ["image/png", None]
    assert enveloped["content"][1]["resource"]["mimeType"] == "image/svg+xml"


# --- the other kinds, on a test family's endpoint ----------------------------------------------------


def media_tools() -> list[Tool]:
    reader = {"audience": "public"}
    return [
        Tool.new(
            name="media.play_chime",
            handler=lambda d, c: ToolResult([results.audio(WAV, "audio/wav")]),
            **reader,
        ),
        Tool.new(
            name="media.read_blob",
            handler=lambda d, c: ToolResult(
                [results.embedded_resource("toolfront://media/blob.bin", blob=BLOB, title="Bytes")],
                {"size": 256},
            ),
            output_schema={
                "type": "object",
                "properties": {"size": {"type": "integer"}},
                "required": ["size"],
                "additionalProperties": False,
            },
            **reader,
        ),
        Tool.new(
            name="media.link_report",
            handler=lambda d, c: ToolResult(
                [
                    results.text("the report is ready"),
                    results.resource_link(
                        "https://example.com/reports/7", "report-7", title="Report 7", mime_type="text/html"
                    ),
                ]
            ),
            **reader,
        ),
    ]


@pytest.fixture(scope="module")
def media_url(stack: LocalStack) -> Iterator[str]:
    """An MCP endpoint of the media family (run through the real pipeline on the stack's moto)."""
    actor = Actor(ActorKind.ANONYMOUS, "127.0.0.1")
    registry = Registry.from_modules([family("media", media_tools)])
    client = moto_client(stack.moto_endpoint, "dynamodb")
    tables = stack.table_names
    admission = Admission(
        tables["RateLimitsTable"],
        tables["IdempotencyTable"],
        RateLimits(public_ip_per_minute=10_000),
        client=client,
    )
    pipeline = CallPipeline(registry, lambda headers, ip: actor, admission)
    endpoint = McpEndpoint(
        ToolCatalog([{**tool.describe(), "module": "media"} for tool in registry]),
        LocalRouter(pipeline.run),
        lambda h, ip: actor,
        records=admission.recorded,
    )

    edge = Edge({"POST /mcp": Route(endpoint, rpc_refusal)})

    def app(environ: dict[str, Any], start_response: Any) -> Any:
        request = Request(environ)
        event = {
            "routeKey": "POST /mcp",
            "headers": dict(request.headers),
            "body": request.get_data(as_text=True),
            "requestContext": {
                "http": {"method": request.method, "sourceIp": "127.0.0.1"},
                "requestId": uuid.uuid4().hex,
            },
        }
        answer = edge(event)
        return Response(answer["body"], status=answer["statusCode"], headers=answer["headers"])(
            environ, start_response
        )

    port = free_port()
    server = make_server("127.0.0.1", port, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{port}/mcp"
    server.shutdown()


def test_the_python_sdk_reads_audio_a_blob_resource_and_a_resource_link(media_url: str) -> None:
    calls = [("media-play_chime", {}), ("media-read_blob", {}), ("media-link_report", {})]
    chime, blob, link = run(lambda: call_all(media_url, "unused", calls))
    assert (chime.content[0].type, chime.content[0].mime_type) == ("audio", "audio/wav")
    assert base64.b64decode(chime.content[0].data) == WAV
    assert chime.structured_content is None and len(chime.content) == 1
    resource = blob.content[0].resource
    assert base64.b64decode(resource.blob) == BLOB and resource.mime_type == "application/octet-stream"
    assert blob.structured_content == {"size": 256}
    assert [block.type for block in link.content] == ["text", "resource_link"]
    assert (str(link.content[1].uri), link.content[1].name, link.content[1].mime_type) == (
        "https://example.com/reports/7",
        "report-7",
        "text/html",
    )


def test_the_typescript_sdk_reads_every_kind(
    stack: LocalStack, media_url: str, reader_key: str, product: dict[str, Any]
) -> None:
    def node(url: str, *tools: str) -> dict[str, Any]:
        done = subprocess.run(
            ["node", "content.mjs", url, reader_key, *tools],
            cwd=TS_DIR,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        seen: dict[str, Any] = json.loads(done.stdout)
        return seen

    shipped = node(
        f"{stack.api_url}/mcp/catalogue",
        "catalogue-export_products",
        f"catalogue-get_product_label={json.dumps({'sku': product['sku']})}",
    )
    exported, label = shipped.values()
    assert (
        exported["content"][0]["resource"]["mimeType"] == "text/csv" and exported["structured"]["count"] >= 1
    )
    assert label["content"][0]["type"] == "image" and label["structured"] == {"sku": product["sku"]}
    assert (label["content"][0]["mimeType"], label["content"][1]["type"]) == ("image/png", "resource")
    media = node(media_url, "media-play_chime", "media-read_blob", "media-link_report")
    assert media["media-play_chime"]["content"] == [
        {"type": "audio", "data": base64.b64encode(WAV).decode(), "mimeType": "audio/wav"}
    ]
    assert media["media-read_blob"]["content"][0]["resource"]["blob"] == base64.b64encode(BLOB).decode()
    assert media["media-read_blob"]["structured"] == {"size": 256}
    assert media["media-link_report"]["content"][1] == {
        "type": "resource_link",
        "uri": "https://example.com/reports/7",
        "name": "report-7",
        "title": "Report 7",
        "mimeType": "text/html",
    }
