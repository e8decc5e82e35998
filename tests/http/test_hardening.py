"""What an outside probe found, held shut over real HTTP against the local stack."""

from __future__ import annotations

import urllib.parse
import uuid

from tests.http.conftest import Api, wait_for
from toolfront_dev.outbox import outbox_links
from toolfront_dev.stack import LocalStack

FORGED = {"X-Forwarded-Proto": "https://evil.example/?", "X-Forwarded-Host": "evil.example"}


def test_the_approvers_link_ignores_host_and_forwarded_headers(
    api: Api, stack: LocalStack, key: str, sku: str
) -> None:
    headers = {**FORGED, "Host": "evil.example"}
    held = api.call("catalogue.delete_product", {"sku": sku}, key=key, headers=headers)
    assert held.status == 202, held.body
    approval_id = held.json()["data"]["approval_id"]
    link = wait_for(lambda: outbox_links(stack.outbox_path).get(approval_id))
    assert "evil" not in link
    parts = urllib.parse.urlsplit(link)
    assert f"{parts.scheme}://{parts.netloc}" == stack.api_url
    assert parts.path == f"/approvals/{approval_id}"


def test_the_openapi_server_is_the_configured_address(api: Api, stack: LocalStack) -> None:
    reply = api.request("GET", "/v1/openapi.json", headers={**FORGED, "Host": f"evil-{uuid.uuid4().hex[:4]}"})
    assert reply.status == 200
    assert reply.json()["servers"] == [{"url": stack.api_url}]
