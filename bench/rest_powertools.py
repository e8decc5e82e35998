"""The rest bench's baseline: a Powertools ``APIGatewayHttpResolver`` route written as a Lambda module."""

from __future__ import annotations

import sys
import types
from typing import Any

ROUTE = "/v1/tools/catalogue/get_product"
SKU_PATTERN = "^[A-Za-z0-9][A-Za-z0-9_.-]*$"  # the tool's schema (functions/catalogue/app.py, _SKU)


#: The baseline as a Lambda module: Powertools resolver with validation, a pydantic model of the
#: tool's input schema, the same GetItem through a client made on first use (as toolfront's is).
#: Run as it is in the cold-import subprocess; executed into a module for the in-process rows.
POWERTOOLS_APP = f"""
import os

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from pydantic import BaseModel, ConfigDict, Field

TABLE = os.environ["TOOLFRONT_PRODUCTS_TABLE"]
_clients = {{}}


def dynamodb():
    found = _clients.get("dynamodb")
    if found is None:
        import boto3

        found = _clients["dynamodb"] = boto3.client("dynamodb")
    return found


class GetProductRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sku: str = Field(min_length=1, max_length=64, pattern={SKU_PATTERN!r})


app = APIGatewayHttpResolver(enable_validation=True)


@app.post({ROUTE!r})
def get_product(req: GetProductRequest) -> dict:
    found = dynamodb().get_item(TableName=TABLE, Key={{"sku": {{"S": req.sku}}}}, ConsistentRead=True)
    if "Item" not in found:
        raise NotFoundError(f"no product with sku {{req.sku!r}}")
    item = found["Item"]
    product = {{
        "sku": item["sku"]["S"],
        "name": item["name"]["S"],
        "price_cents": int(item["price_cents"]["N"]),
        "currency": item["currency"]["S"],
    }}
    return {{"data": {{"product": product}}, "request_id": app.current_event.request_context.request_id}}


def lambda_handler(event, context):
    return app.resolve(event, context)
"""


def load_powertools_app(client: Any) -> types.ModuleType:
    """The baseline module, its DynamoDB client set to ``client`` (which carries the canned hook)."""
    module = types.ModuleType("bench_powertools_app")
    sys.modules[module.__name__] = module
    exec(compile(POWERTOOLS_APP, "<bench_powertools_app>", "exec"), module.__dict__)
    module._clients["dynamodb"] = client
    return module
