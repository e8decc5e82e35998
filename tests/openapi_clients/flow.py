"""The README's REST flow through a client openapi-python-client generated from the stack's
/v1/openapi.json (the package ``toolfront_client``, found on PYTHONPATH). Run with .venv-openapi's
Python by tests/http/test_openapi_clients.py, in two phases, each printing one JSON line:

- ``flow.py hold URL KEY SKU``: a keyed create and its retry, reads (the product, an export's and a
  label's content blocks), then a delete, which is held (202 pending_approval);
- ``flow.py settle URL KEY SKU APPROVAL_ID``, once a person decided: polls ``system.get_approval``
  to the end, reads ``GET /v1/approvals/{id}``, and reads the product again.

Every answer is narrowed by its type (``isinstance``), the way code using the client does.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from toolfront_client import AuthenticatedClient
from toolfront_client.api.api import get_approval
from toolfront_client.api.catalogue import (
    catalogue_create_product,
    catalogue_delete_product,
    catalogue_export_products,
    catalogue_get_product,
    catalogue_get_product_label,
)
from toolfront_client.api.core import system_get_approval
from toolfront_client.models import (
    ApprovalEnvelope,
    ApprovalStatus,
    CatalogueCreateProductBody,
    CatalogueCreateProductEnvelope,
    CatalogueDeleteProductBody,
    CatalogueExportProductsBody,
    CatalogueExportProductsEnvelope,
    CatalogueGetProductBody,
    CatalogueGetProductEnvelope,
    CatalogueGetProductLabelBody,
    CatalogueGetProductLabelEnvelope,
    EmbeddedResource,
    ErrorEnvelope,
    PendingEnvelope,
    SystemGetApprovalBody,
    SystemGetApprovalEnvelope,
)

FINAL = {
    ApprovalStatus.SUCCEEDED,
    ApprovalStatus.FAILED,
    ApprovalStatus.REJECTED,
    ApprovalStatus.EXPIRED,
    ApprovalStatus.CANCELLED,
}


def hold(client: AuthenticatedClient, sku: str) -> dict[str, Any]:
    body = CatalogueCreateProductBody(
        sku=sku, name="Generated mug", price_cents=1500, currency="EUR", idempotency_key=f"create-{sku}"
    )
    first = catalogue_create_product.sync_detailed(client=client, body=body)
    again = catalogue_create_product.sync_detailed(client=client, body=body)  # the same call, retried
    assert isinstance(first.parsed, CatalogueCreateProductEnvelope), first.content
    assert isinstance(again.parsed, CatalogueCreateProductEnvelope), again.content
    got = catalogue_get_product.sync_detailed(client=client, body=CatalogueGetProductBody(sku=sku))
    assert isinstance(got.parsed, CatalogueGetProductEnvelope), got.content
    exported = catalogue_export_products.sync_detailed(client=client, body=CatalogueExportProductsBody())
    assert isinstance(exported.parsed, CatalogueExportProductsEnvelope), exported.content
    label = catalogue_get_product_label.sync_detailed(
        client=client, body=CatalogueGetProductLabelBody(sku=sku)
    )
    assert isinstance(label.parsed, CatalogueGetProductLabelEnvelope), label.content
    deleted = catalogue_delete_product.sync_detailed(client=client, body=CatalogueDeleteProductBody(sku=sku))
    assert isinstance(deleted.parsed, PendingEnvelope), deleted.content
    resources = [block for block in exported.parsed.content or [] if isinstance(block, EmbeddedResource)]
    return {
        "created": {"status": int(first.status_code), "product": first.parsed.data.product.to_dict()},
        "retried": {
            "status": int(again.status_code),
            "replayed": again.headers.get("idempotent-replayed"),
            "same": again.parsed.to_dict() == first.parsed.to_dict(),
        },
        "got": got.parsed.data.product.to_dict(),
        "exported": {
            "count": exported.parsed.data.count,
            "blocks": [type(block).__name__ for block in exported.parsed.content or []],
            "mime_types": [block.resource.mime_type for block in resources],
        },
        "label": {
            "sku": label.parsed.data.sku,
            "blocks": [type(block).__name__ for block in label.parsed.content or []],
        },
        "held": {
            "status": int(deleted.status_code),
            "data_status": deleted.parsed.data.status,
            "approval_id": deleted.parsed.data.approval_id,
        },
    }


def settle(client: AuthenticatedClient, sku: str, approval_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 20
    while True:
        polled = system_get_approval.sync_detailed(
            client=client, body=SystemGetApprovalBody(approval_id=approval_id)
        )
        assert isinstance(polled.parsed, SystemGetApprovalEnvelope), polled.content
        approval = polled.parsed.data
        if approval.status in FINAL or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    route = get_approval.sync_detailed(approval_id, client=client)
    assert isinstance(route.parsed, ApprovalEnvelope), route.content
    gone = catalogue_get_product.sync_detailed(client=client, body=CatalogueGetProductBody(sku=sku))
    assert isinstance(gone.parsed, ErrorEnvelope), gone.content
    return {
        "status": str(approval.status),
        "result": approval.result,
        "decided_by": None if approval.decided_by is None else str(approval.decided_by.kind),
        "route_status": str(route.parsed.data.status),
        "after": {"status": int(gone.status_code), "code": gone.parsed.error.code},
    }


if __name__ == "__main__":
    phase, url, key, sku, *rest = sys.argv[1:]
    client = AuthenticatedClient(base_url=url, token=key, raise_on_unexpected_status=True)
    found = hold(client, sku) if phase == "hold" else settle(client, sku, rest[0])
    print(json.dumps(found))
