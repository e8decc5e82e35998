"""The peer bench's fair peer: toolfront's two catalogue routes written with Powertools alone.

What a careful team would write on AWS Lambda Powertools for Python to do the work toolfront does on
``POST /v1/tools/catalogue/get_product`` and ``create_product``:

- ``APIGatewayHttpResolver(enable_validation=True)``, a pydantic model of each tool's input schema
  (the catalogue's JSON Schema: lengths, patterns, bounds, no extra fields);
- a global middleware authenticating the API key (``tfk_<id>_<secret>``): one GetItem on the keys
  table (key id -> owner, scopes, SHA-256 of the secret), the hash compared with
  ``hmac.compare_digest``, the tool's scope checked; then a rate limit: one conditional UpdateItem on
  a fixed-window bucket item (owner and minute), refused over the limit;
- ``idempotent_function`` with ``IdempotencyConfig`` + ``DynamoDBPersistenceLayer`` around the write,
  the key read from the body's ``idempotency_key`` (no key: no record), the rest of the input checked
  against the stored one (``payload_validation_jmespath``), the record scoped to the key's owner;
- the handler's own DynamoDB call: GetItem for the read, a conditional PutItem for the write.

It writes no audit record and logs no line per call. Every request goes through one boto3 client,
made at import (the idempotency layer takes it then); the bench swaps in its own (``use_client``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import time
import warnings
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.exceptions import (
    BadRequestError,
    NotFoundError,
    ServiceError,
    UnauthorizedError,
)
from aws_lambda_powertools.utilities.idempotency import (
    DynamoDBPersistenceLayer,
    IdempotencyConfig,
    idempotent_function,
)
from botocore.exceptions import ClientError
from pydantic import BaseModel, ConfigDict, Field

KEYS_TABLE = os.environ["TOOLFRONT_KEYS_TABLE"]
PRODUCTS_TABLE = os.environ["TOOLFRONT_PRODUCTS_TABLE"]
RATE_TABLE = os.environ["PEER_RATE_LIMITS_TABLE"]
IDEMPOTENCY_TABLE = os.environ["PEER_IDEMPOTENCY_TABLE"]
RATE_PER_MINUTE = int(os.environ.get("PEER_RATE_PER_MINUTE", "1000000000"))
SKU_PATTERN = "^[A-Za-z0-9][A-Za-z0-9_.-]*$"  # functions/catalogue/app.py, _SKU
SCOPES = {"get_product": "catalogue.products:read", "create_product": "catalogue.products:write"}
ROUTE = "/v1/tools/catalogue/"

_clients: dict[str, Any] = {}


def dynamodb() -> Any:
    found = _clients.get("dynamodb")
    if found is None:
        import boto3

        found = _clients["dynamodb"] = boto3.client("dynamodb")
    return found


class TooManyRequestsError(ServiceError):
    def __init__(self, msg: str) -> None:
        super().__init__(429, msg)


class GetProductRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sku: str = Field(min_length=1, max_length=64, pattern=SKU_PATTERN)


class CreateProductRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sku: str = Field(min_length=1, max_length=64, pattern=SKU_PATTERN)
    name: str = Field(min_length=1, max_length=200)
    price_cents: int = Field(ge=0, le=100_000_000)
    currency: str = Field(pattern="^[A-Z]{3}$")
    idempotency_key: str | None = Field(default=None, min_length=1, max_length=255)


# The key is optional: a write without one is a new write (Powertools warns on each otherwise).
warnings.filterwarnings("ignore", message="No idempotency key value found")
app = APIGatewayHttpResolver(enable_validation=True)
persistence = DynamoDBPersistenceLayer(table_name=IDEMPOTENCY_TABLE, boto3_client=dynamodb())
config = IdempotencyConfig(
    event_key_jmespath="idempotency_key && [owner, idempotency_key]",  # no key: no record
    payload_validation_jmespath="[sku, name, price_cents, currency]",
    raise_on_no_idempotency_key=False,
    expires_after_seconds=24 * 3600,
)


def authenticate(headers: dict[str, str], tool: str) -> dict[str, Any]:
    """The key's owner and scopes: one GetItem, the secret's hash compared in constant time."""
    presented = headers.get("authorization", "").removeprefix("Bearer ")
    prefix, _, rest = presented.partition("_")
    key_id, _, secret = rest.partition("_")
    if prefix != "tfk" or len(key_id) != 12 or len(secret) != 32:
        raise UnauthorizedError("a valid API key is required")
    item = (
        dynamodb()
        .get_item(TableName=KEYS_TABLE, Key={"key_id": {"S": key_id}}, ConsistentRead=True)
        .get("Item")
    )
    digest = hashlib.sha256(secret.encode()).digest()
    stored = item["secret_hash"]["S"] if item else ""
    if not item or not hmac.compare_digest(base64.urlsafe_b64encode(digest).decode().rstrip("="), stored):
        raise UnauthorizedError("a valid API key is required")
    scopes = [s["S"] for s in item.get("scopes", {}).get("L", [])]
    need = SCOPES[tool]
    if not any(s == need or (s.endswith(".*") and need.startswith(s[:-1])) for s in scopes):
        raise UnauthorizedError(f"the key has no scope {need}")
    return {"owner": item["owner"]["S"], "scopes": scopes}


def rate_limit(owner: str) -> None:
    """A fixed window per owner and minute: one conditional UpdateItem, refused over the limit."""
    now = int(time.time())
    window = now // 60
    try:
        dynamodb().update_item(
            TableName=RATE_TABLE,
            Key={"bucket": {"S": f"{owner}#{window}"}},
            UpdateExpression="SET expires_at = if_not_exists(expires_at, :ttl) ADD used :one",
            ConditionExpression="attribute_not_exists(used) OR used < :limit",
            ExpressionAttributeValues={
                ":one": {"N": "1"},
                ":limit": {"N": str(RATE_PER_MINUTE)},
                ":ttl": {"N": str((window + 2) * 60)},
            },
        )
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
            raise TooManyRequestsError(f"over the rate limit of {RATE_PER_MINUTE} per minute") from exc
        raise


def admit(app: APIGatewayHttpResolver, next_middleware: Any) -> Response:
    """Global middleware: authenticate the key for the route's tool, then spend one unit."""
    tool = app.current_event.path.rpartition("/")[2]
    if tool not in SCOPES:
        raise NotFoundError(f"no tool {tool}")
    actor = authenticate(app.current_event.headers, tool)
    rate_limit(actor["owner"])
    app.append_context(actor=actor)
    return next_middleware(app)


app.use(middlewares=[admit])


def _product(item: dict[str, Any]) -> dict[str, Any]:
    return {
        "sku": item["sku"]["S"],
        "name": item["name"]["S"],
        "price_cents": int(item["price_cents"]["N"]),
        "currency": item["currency"]["S"],
    }


@app.post(ROUTE + "get_product")
def get_product(req: GetProductRequest) -> dict[str, Any]:
    found = dynamodb().get_item(TableName=PRODUCTS_TABLE, Key={"sku": {"S": req.sku}}, ConsistentRead=True)
    if "Item" not in found:
        raise NotFoundError(f"no product with sku {req.sku!r}")
    return {
        "data": {"product": _product(found["Item"])},
        "request_id": app.current_event.request_context.request_id,
    }


@idempotent_function(data_keyword_argument="request", persistence_store=persistence, config=config)
def create(request: dict[str, Any]) -> dict[str, Any]:
    item = {
        "sku": {"S": request["sku"]},
        "name": {"S": request["name"]},
        "price_cents": {"N": str(request["price_cents"])},
        "currency": {"S": request["currency"]},
    }
    try:
        dynamodb().put_item(
            TableName=PRODUCTS_TABLE, Item=item, ConditionExpression="attribute_not_exists(sku)"
        )
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
            raise BadRequestError(f"a product with sku {request['sku']!r} already exists") from exc
        raise
    return {"data": {"product": _product(item)}, "request_id": app.current_event.request_context.request_id}


@app.post(ROUTE + "create_product")
def create_product(req: CreateProductRequest) -> dict[str, Any]:
    request = {**req.model_dump(), "owner": app.context["actor"]["owner"]}  # the record's scope
    return create(request=request)


def use_client(client: Any) -> None:
    """Send every request of the app and its idempotency layer through ``client`` (the bench's)."""
    from aws_lambda_powertools.shared import user_agent

    _clients["dynamodb"] = persistence.client = client
    user_agent.register_feature_to_client(client=client, feature="idempotency")


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    config.register_lambda_context(context)
    return app.resolve(event, context)
