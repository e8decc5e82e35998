"""One REST call end to end: the catalogue function against a Powertools route (perf-anchors 2-4).

In-process rows, interleaved, every DynamoDB request answered by a canned ``before-send.dynamodb``
hook (botocore still validates, serialises, SigV4-signs, checks the CRC32 and parses; only the
network is gone):

- toolfront: ``lambda_handler(event, ctx)`` of ``functions/catalogue/app.py`` for
  ``catalogue.get_product`` with a valid admin key, warm (1 BatchGetItem for key and principal,
  1 UpdateItem for the rate limit, 1 GetItem for the product), its one Powertools Logger line
  written to a null stream at INFO;
- baseline: Powertools ``APIGatewayHttpResolver(enable_validation=True)`` serving the same route with
  a pydantic model of the tool's input schema and the same GetItem (no authentication at all);
- botocore's client-side cost per request, for each request the warm call makes (recorded with its
  parameters), on the same client with the same hook; subtracted from both totals it leaves
  toolfront's *core time* and Powertools' *own time*. A cross-check measures both directly, with
  the client's methods replaced by functions returning the parsed answers.

Fresh subprocesses (interleaved, median of 10): the cold import of each function's module beyond
``import boto3; boto3.client("dynamodb")``, ``-X importtime`` offenders, the garbage collection
inside the import, and the first calls after a cold import.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import re
import statistics
import sys
import time
import types
import zlib
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from harness import ROUNDS, Row, Section, Spec, canary, link_ratios, percentile, run_group

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
LAYER_DIR = ROOT / "layers" / "core"
FUNCTIONS_DIR = ROOT / "functions"
EVENT_PATH = ROOT / "events" / "catalogue_get_product.json"
ROUTE = "/v1/tools/catalogue/get_product"
TOOL = "catalogue.get_product"
SKU_PATTERN = "^[A-Za-z0-9][A-Za-z0-9_.-]*$"  # the tool's schema (functions/catalogue/app.py, _SKU)

#: What the bench's processes see: table names, a region, dummy credentials, no endpoint override.
ENV = {
    "TOOLFRONT_KEYS_TABLE": "KeysTable",
    "TOOLFRONT_PRINCIPALS_TABLE": "PrincipalsTable",
    "TOOLFRONT_PRODUCTS_TABLE": "ProductsTable",
    # Not read by the committed path; set so that settings which require them still load, and so
    # that a rate limit keeps the bench's actor (thousands of calls a second) under its limit.
    "TOOLFRONT_IDEMPOTENCY_TABLE": "IdempotencyTable",
    "TOOLFRONT_RATE_LIMITS_TABLE": "RateLimitsTable",
    "TOOLFRONT_RATE_ADMIN_PER_MINUTE": "1000000000",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_EC2_METADATA_DISABLED": "true",
}
UNSET = (
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_DYNAMODB",
    "TOOLFRONT_COGNITO_ISSUER",
    "POWERTOOLS_LOG_LEVEL",
    "AWS_LAMBDA_LOG_LEVEL",
)
#: Hash key of each canned table.
HASH_KEYS = {"KeysTable": "key_id", "PrincipalsTable": "principal_id", "ProductsTable": "sku"}
PRODUCT = {"sku": "MUG-01", "name": "Stoneware mug", "price_cents": 1250, "currency": "EUR"}
OWNER = "events-admin"

#: Requests per warm call the subtraction expects (counted with ``before-call.dynamodb``).
#: Warm: the actor (key and principal in one BatchGetItem), the rate limit's conditional
#: UpdateItem (since b7c5c0d; no idempotency key is sent, so no claim), the product's GetItem.
EXPECTED_WARM = {"BatchGetItem": 1, "UpdateItem": 1, "GetItem": 1}
#: First: the key (GetItem), then its owner (BatchGetItem), the rate limit, the product.
EXPECTED_FIRST = {"GetItem": 2, "BatchGetItem": 1, "UpdateItem": 1}
EXPECTED_ACTOR = {"BatchGetItem": 1}
EXPECTED_POWERTOOLS = {"GetItem": 1}
#: The cold-import budget over the boto3-and-client floor (perf-anchors, "What ratios..." item 5).
COLD_BUDGET_MS = 55.0
TOP_OFFENDERS = 8

FULL_N = 2_500  # per round, as the anchors' DynamoDB variants
QUICK_N = 150
FULL_REPEATS = 10
QUICK_REPEATS = 1
RESULT_PREFIX = "BENCH_REST_RESULT "


# --- canned DynamoDB ----------------------------------------------------------------------------


class _Body:
    """The raw side of a response: what botocore reads ``AWSResponse.content`` from."""

    __slots__ = ("_data",)

    def __init__(self, data: bytes) -> None:
        self._data = data

    def stream(self, **_: Any) -> Iterator[bytes]:
        return iter((self._data,))


class CannedDynamoDB:
    """A ``before-send.dynamodb`` hook answering from in-memory tables, in place of the HTTP exchange.

    botocore has already validated, serialised and signed the request, and still checks the answer's
    CRC32 and parses it. Reads (GetItem, BatchGetItem) are answered once per distinct request body
    and the answer kept, so repeating one costs a dict lookup and an ``AWSResponse``. UpdateItem
    (``SET`` and ``ADD`` actions) is applied to the tables on every request; its condition is not
    evaluated, so every write succeeds. Any other operation raises, naming itself.
    """

    UNIQUE_ID = "toolfront-bench-canned-dynamodb"
    READS = frozenset({"GetItem", "BatchGetItem"})

    def __init__(self, tables: dict[str, list[dict[str, Any]]]) -> None:
        self._tables: dict[str, dict[str, dict[str, Any]]] = {}
        for table, items in tables.items():
            for item in items:
                key = {HASH_KEYS[table]: item[HASH_KEYS[table]]}
                self._tables.setdefault(table, {})[_canonical(key)] = item
        self._answers: dict[tuple[str, bytes], tuple[bytes, dict[str, str]]] = {}
        self._answer_tables: dict[tuple[str, bytes], frozenset[str]] = {}

    def __call__(self, request: Any, **_: Any) -> Any:
        from botocore.awsrequest import AWSResponse

        target = request.headers["X-Amz-Target"]
        operation = (target.decode() if isinstance(target, bytes) else target).rpartition(".")[2]
        body = request.body if isinstance(request.body, bytes) else str(request.body).encode()
        if operation in self.READS:
            answer = self._answers.get((operation, body))
            if answer is None:
                request_json = json.loads(body)
                answer = self._answers[(operation, body)] = _encoded(self._read(operation, request_json))
                tables = request_json.get("RequestItems") or [request_json["TableName"]]
                self._answer_tables[(operation, body)] = frozenset(tables)
        else:
            answer = _encoded(self._write(operation, json.loads(body)))
        payload, headers = answer
        return AWSResponse(request.url, 200, headers, _Body(payload))

    def _read(self, operation: str, request: dict[str, Any]) -> dict[str, Any]:
        if operation == "GetItem":
            item = self._get(request["TableName"], request["Key"])
            return {"Item": item} if item is not None else {}
        responses = {
            table: [i for i in (self._get(table, key) for key in spec["Keys"]) if i is not None]
            for table, spec in request["RequestItems"].items()
        }
        return {"Responses": responses, "UnprocessedKeys": {}}

    def _write(self, operation: str, request: dict[str, Any]) -> dict[str, Any]:
        if operation != "UpdateItem":
            raise NotImplementedError(
                f"the canned DynamoDB answers GetItem, BatchGetItem and UpdateItem, not {operation}"
                f" (on {request.get('TableName', '?')}): the call path makes a request this bench does"
                " not model yet"
            )
        table, key = request["TableName"], request["Key"]
        old = self._get(table, key)
        new = dict(old or key)
        updated = _apply_update(
            new,
            request["UpdateExpression"],
            request.get("ExpressionAttributeNames", {}),
            request.get("ExpressionAttributeValues", {}),
        )
        self._tables.setdefault(table, {})[_canonical(key)] = new
        for kept in [k for k, tables in self._answer_tables.items() if table in tables]:
            del self._answers[kept], self._answer_tables[kept]  # a kept read of this table is stale
        attributes = {
            "ALL_NEW": new,
            "ALL_OLD": old or {},
            "UPDATED_NEW": {name: new[name] for name in updated},
            "UPDATED_OLD": {name: old[name] for name in updated if old and name in old},
        }.get(request.get("ReturnValues", "NONE"))
        return {"Attributes": attributes} if attributes else {}

    def _get(self, table: str, key: dict[str, Any]) -> dict[str, Any] | None:
        return self._tables.get(table, {}).get(_canonical(key))

    def install(self, client: Any) -> None:
        client.meta.events.register("before-send.dynamodb", self, unique_id=self.UNIQUE_ID)

    def uninstall(self, client: Any) -> None:
        client.meta.events.unregister("before-send.dynamodb", unique_id=self.UNIQUE_ID)


def _encoded(answer: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
    """The body and headers DynamoDB sends with ``answer``."""
    payload = json.dumps(answer, separators=(",", ":")).encode()
    headers = {
        "content-type": "application/x-amz-json-1.0",
        "content-length": str(len(payload)),
        "x-amzn-requestid": "BENCH0000000000000000000000000000000000000000000000000",
        "x-amz-crc32": str(zlib.crc32(payload) & 0xFFFFFFFF),
    }
    return payload, headers


_CLAUSE = re.compile(r"\b(SET|ADD|REMOVE|DELETE)\b", re.IGNORECASE)
_IF_NOT_EXISTS = re.compile(r"if_not_exists\s*\(\s*([^,\s]+)\s*,\s*(.+?)\s*\)")


def _apply_update(
    item: dict[str, Any], expression: str, names: dict[str, str], values: dict[str, Any]
) -> list[str]:
    """Apply the ``SET`` and ``ADD`` actions of an update expression to ``item``; the names updated."""
    parts = _CLAUSE.split(expression)
    updated: list[str] = []
    for verb, actions in zip(parts[1::2], parts[2::2], strict=True):
        for action in _split_actions(actions):
            if verb.upper() == "SET":
                target, _, operand = action.partition("=")
                name = names.get(target.strip(), target.strip())
                item[name] = _operand(operand.strip(), item, names, values)
            elif verb.upper() == "ADD":
                target, operand = action.split(None, 1)
                name = names.get(target, target)
                item[name] = _number(item.get(name, {"N": "0"}), values[operand.strip()], 1)
            else:
                raise NotImplementedError(f"the canned DynamoDB does not apply {verb} actions")
            updated.append(name)
    return updated


def _split_actions(actions: str) -> list[str]:
    """Comma-separated actions, commas inside parentheses (``if_not_exists(a, :v)``) kept."""
    found, depth, current = [], 0, ""
    for char in actions:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            found.append(current.strip())
            current = ""
        else:
            current += char
    return [a for a in [*found, current.strip()] if a]


def _operand(expression: str, item: dict[str, Any], names: dict[str, str], values: dict[str, Any]) -> Any:
    """``:value``, ``name``, ``if_not_exists(name, operand)``, or two of those joined by + or -."""
    for sign, factor in ((" + ", 1), (" - ", -1)):
        left, found, right = expression.rpartition(sign)
        if found and left.count("(") == left.count(")"):
            a = _operand(left.strip(), item, names, values)
            return _number(a, _operand(right.strip(), item, names, values), factor)
    if expression.startswith(":"):
        return values[expression]
    match = _IF_NOT_EXISTS.fullmatch(expression)
    if match:
        name = names.get(match[1], match[1])
        return item[name] if name in item else _operand(match[2], item, names, values)
    return item[names.get(expression, expression)]


def _number(a: dict[str, str], b: dict[str, str], factor: int) -> dict[str, str]:
    return {"N": str(Decimal(a["N"]) + factor * Decimal(b["N"]))}


def _canonical(key: dict[str, Any]) -> str:
    return json.dumps(key, sort_keys=True)


def bench_tables(event: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The key of ``event``, its owner with the catalogue permission, and the product it asks for."""
    from toolfront.keys import hash_secret, parse_key

    parsed = parse_key(event["headers"]["authorization"].split(" ", 1)[1])
    if parsed is None:
        raise RuntimeError("the event's authorization header carries no key in the key format")
    key_item = {
        "key_id": {"S": parsed.key_id},
        "owner": {"S": OWNER},
        "secret_hash": {"S": hash_secret(parsed.secret)},
        "scopes": {"L": [{"S": "catalogue.*"}]},
        "requires_approval": {"BOOL": False},
        "created_at": {"S": "2026-11-01T09:00:00+00:00"},
        "description": {"S": "bench admin key"},
    }
    principal_item = {
        "principal_id": {"S": OWNER},
        "permissions": {"SS": ["catalogue"]},
        "updated_at": {"S": "2026-11-01T09:00:00+00:00"},
    }
    product_item = {
        "sku": {"S": PRODUCT["sku"]},
        "name": {"S": PRODUCT["name"]},
        "price_cents": {"N": str(PRODUCT["price_cents"])},
        "currency": {"S": PRODUCT["currency"]},
    }
    return {"KeysTable": [key_item], "PrincipalsTable": [principal_item], "ProductsTable": [product_item]}


@contextmanager
def counting(client: Any) -> Iterator[Counter[str]]:
    """Count the DynamoDB operations ``client`` makes while the block runs (``before-call``)."""
    seen: Counter[str] = Counter()

    def record(model: Any, **_: Any) -> None:
        seen[model.name] += 1

    client.meta.events.register("before-call.dynamodb", record)
    try:
        yield seen
    finally:
        client.meta.events.unregister("before-call.dynamodb", record)


class FakeContext:
    """The Lambda context's attributes (neither side reads more than these)."""

    function_name = "toolfront-catalogue"
    function_version = "$LATEST"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:toolfront-catalogue"
    memory_limit_in_mb = 512
    aws_request_id = "5f1c3d2e-0000-4000-8000-000000000000"
    log_group_name = "/aws/lambda/toolfront-catalogue"
    log_stream_name = "2026/11/30/[$LATEST]0123456789abcdef"

    def get_remaining_time_in_millis(self) -> int:
        return 10_000


def load_event() -> dict[str, Any]:
    event: dict[str, Any] = json.loads(EVENT_PATH.read_text(encoding="utf-8"))
    return event


# --- the two apps -------------------------------------------------------------------------------

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


def load_family(name: str) -> types.ModuleType:
    """``functions/<name>/app.py`` under a name of its own, as the tests load it."""
    import importlib.util

    path = FUNCTIONS_DIR / name / "app.py"
    spec = importlib.util.spec_from_file_location(f"bench_family_{name}_app", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def load_powertools_app(client: Any) -> types.ModuleType:
    """The baseline module, its DynamoDB client set to ``client`` (which carries the canned hook)."""
    module = types.ModuleType("bench_powertools_app")
    sys.modules[module.__name__] = module
    exec(compile(POWERTOOLS_APP, "<bench_powertools_app>", "exec"), module.__dict__)
    module._clients["dynamodb"] = client
    return module


@contextmanager
def bench_environment() -> Iterator[None]:
    """The bench's environment variables, and toolfront's per-process state fresh before and after."""
    saved = {name: os.environ.get(name) for name in (*ENV, *UNSET)}
    os.environ.update(ENV)
    for name in UNSET:
        os.environ.pop(name, None)
    _reset_toolfront()
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        _reset_toolfront()


def _reset_toolfront() -> None:
    from toolfront import aws, service, settings

    aws.reset_clients()
    settings.current.cache_clear()
    for name in ("authenticator", "admission"):  # the process's memories (admission: if it exists)
        cached = getattr(service, name, None)
        if cached is not None:
            cached.cache_clear()


@contextmanager
def log_stream(stream: Any) -> Iterator[None]:
    """Point toolfront's logs at ``stream``: its Powertools Logger (kept at INFO) and the per-call
    line, which toolfront.logs writes to stdout itself."""
    from toolfront.logs import logger

    handler = logger.registered_handler
    if not isinstance(handler, logging.StreamHandler):
        raise RuntimeError(f"toolfront's logger has no stream handler: {handler!r}")
    level = logger.log_level
    logger.setLevel(logging.INFO)
    old = handler.setStream(stream)
    old_stdout, sys.stdout = sys.stdout, stream
    try:
        yield
    finally:
        sys.stdout = old_stdout
        handler.setStream(old)
        logger.setLevel(level)


# --- sanity checks ------------------------------------------------------------------------------


def _status_and_body(response: dict[str, Any]) -> tuple[int, Any]:
    return response["statusCode"], json.loads(response["body"])


def sanity_check(
    tf_app: Any, pt_app: Any, client: Any, event: dict[str, Any], ctx: FakeContext
) -> dict[str, Any]:
    """Fail loudly unless both sides answer the product, refuse a bad sku, and count as expected."""
    import io

    from toolfront import service

    found: dict[str, Any] = {}
    bad = {**event, "body": json.dumps({"sku": "-not a sku"})}

    # First call of a fresh handler and authenticator: the key's owner is not known yet.
    service.authenticator.cache_clear()
    fresh = load_family("catalogue")
    lines = io.StringIO()
    with log_stream(lines), counting(client) as seen:
        status, body = _status_and_body(fresh.lambda_handler(event, ctx))
    if status != 200 or body.get("data") != {"product": PRODUCT}:
        raise RuntimeError(f"toolfront answered {status}: {body}; its log: {lines.getvalue()[-3000:]}")
    found["toolfront_first_call_requests"] = dict(seen)

    tf_app.lambda_handler(event, ctx)  # the bench's handler: its first call
    lines = io.StringIO()
    with log_stream(lines), counting(client) as seen:
        status, body = _status_and_body(tf_app.lambda_handler(event, ctx))
    if status != 200 or body.get("data") != {"product": PRODUCT}:
        raise RuntimeError(f"toolfront answered {status}: {body}; its log: {lines.getvalue()[-3000:]}")
    found["toolfront_warm_requests"] = dict(seen)
    log_lines = lines.getvalue().splitlines()
    if len(log_lines) != 1 or json.loads(log_lines[0]).get("message") != "tool call":
        raise RuntimeError(f"expected one 'tool call' log line per call, got {log_lines}")
    found["toolfront_log_line"] = json.loads(log_lines[0])

    with log_stream(io.StringIO()):
        status, body = _status_and_body(tf_app.lambda_handler(bad, ctx))
    if status != 422:
        raise RuntimeError(f"toolfront should refuse an invalid sku with 422, answered {status}: {body}")

    authenticate = service.authenticator().authenticate
    with counting(client) as seen:
        actor = authenticate(_headers(event), event["requestContext"]["http"]["sourceIp"])
    if "catalogue" not in actor.permissions:
        raise RuntimeError(f"the bench actor lacks the catalogue permission: {actor}")
    found["toolfront_actor_requests"] = dict(seen)

    with counting(client) as seen:
        status, body = _status_and_body(pt_app.lambda_handler(event, ctx))
    if status != 200 or body.get("data") != {"product": PRODUCT}:
        raise RuntimeError(f"Powertools answered {status}: {body}")
    found["powertools_requests"] = dict(seen)
    status, body = _status_and_body(pt_app.lambda_handler(bad, ctx))
    if status != 422:
        raise RuntimeError(f"Powertools should refuse an invalid sku with 422, answered {status}: {body}")

    expected = {
        "toolfront_first_call_requests": EXPECTED_FIRST,
        "toolfront_warm_requests": EXPECTED_WARM,
        "toolfront_actor_requests": EXPECTED_ACTOR,
        "powertools_requests": EXPECTED_POWERTOOLS,
    }
    found["requests_as_expected"] = all(found[k] == v for k, v in expected.items())
    if not found["requests_as_expected"]:
        counted = {k: found[k] for k in expected}
        print(f"warning: DynamoDB requests {counted}, expected {expected}", file=sys.stderr)
    return found


@contextmanager
def answering_at_once(client: Any, answers: dict[str, dict[str, Any]]) -> Iterator[None]:
    """Shadow the client's methods named in ``answers`` by functions returning those answers."""
    for name, answer in answers.items():
        setattr(client, name, lambda _answer=answer, **_: _answer)
    try:
        yield
    finally:
        for name in answers:
            delattr(client, name)


def core_profile(call: Any, calls: int) -> list[dict[str, Any]]:
    """Where a call's own time goes: cProfile's cumulative share of the call, by function.

    Taken with the client's methods answering at once, so the shares are of the core time. Only the
    public functions of toolfront and of the function's module are listed, not the pipeline's own
    steps that call them; shares nest (``log_call`` includes its ``redact``). cProfile weighs small
    functions heavily: read the shares as a ranking, not as µs.
    """
    import cProfile
    import pstats

    profile = cProfile.Profile()
    profile.enable()
    for _ in range(calls):
        call()
    profile.disable()
    entries = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    top = max(ct for _cc, _nc, _tt, ct, _callers in entries.values())
    steps = {"pipeline.py", "service.py"}
    shares = []
    for (path, line, name), (_cc, _nc, _tt, ct, _callers) in entries.items():
        parts = Path(path).parts
        ours = "toolfront" in parts[-2:] or "functions" in parts[-3:]
        if (
            not ours
            or name.startswith(("_", "<"))
            or parts[-1] in steps
            or name == "handle"
            or ct < top * 0.02
        ):
            continue
        where = "/".join(parts[-2:])
        shares.append({"function": f"{where}:{line}({name})", "share": round(ct / top, 3)})
    return sorted(shares, key=lambda e: -e["share"])[:12]


@contextmanager
def timing_requests(client: Any, names: list[str]) -> Iterator[list[int]]:
    """Wrap the client's methods ``names`` so that ``spent[0]`` adds up the ns spent inside them."""
    clock = time.perf_counter_ns
    spent = [0]

    def timed(method: Any) -> Any:
        def call(**params: Any) -> Any:
            start = clock()
            try:
                return method(**params)
            finally:
                spent[0] += clock() - start

        return call

    for name in names:
        setattr(client, name, timed(getattr(client, name)))
    try:
        yield spent
    finally:
        for name in names:
            delattr(client, name)


def in_situ_rows(
    specs: list[tuple[str, str, Any, str | None, str]], arg: Any, spent: list[int], n: int
) -> list[Row]:
    """Per call: its time minus the time spent inside the client's methods; rounds interleaved."""
    clock = time.perf_counter_ns
    stats: dict[str, list[tuple[float, float, float]]] = {key: [] for key, *_ in specs}
    for _ in range(ROUNDS):
        for key, _label, fn, _baseline, _note in specs:
            for count, keep in ((max(50, n // 10), False), (n, True)):
                samples = [0] * count
                for i in range(count):
                    spent[0] = 0
                    start = clock()
                    fn(arg)
                    samples[i] = clock() - start - spent[0]
                if keep:
                    samples.sort()
                    stats[key].append(
                        (samples[0] / 1000, statistics.median(samples) / 1000, percentile(samples, 99) / 1000)
                    )
    return [
        Row(
            key=key,
            label=label,
            unit="µs",
            n=n,
            rounds=ROUNDS,
            median=statistics.median(m for _, m, _ in stats[key]),
            min=min(lo for lo, _, _ in stats[key]),
            p99=statistics.median(p for _, _, p in stats[key]),
            round_medians=[m for _, m, _ in stats[key]],
            baseline=baseline,
            note=note,
        )
        for key, label, _fn, baseline, note in specs
    ]


def _headers(event: dict[str, Any]) -> dict[str, str]:
    from toolfront.rest import headers_of

    return headers_of(event)


# --- in-process rows ----------------------------------------------------------------------------


@dataclass
class DerivedRow(Row):
    """A row computed round by round from other rows' round medians (no samples: no min or p99)."""

    def as_dict(self) -> dict[str, Any]:
        found = super().as_dict() if self.min is not None else self._as_dict_without_samples()
        found["derived"] = True
        return found

    def _as_dict_without_samples(self) -> dict[str, Any]:
        minimum, p99 = self.min, self.p99
        self.min = self.p99 = 0.0
        try:
            found = super().as_dict()
        finally:
            self.min, self.p99 = minimum, p99
        found["min"] = found["p99"] = None
        return found


@dataclass
class BudgetRow(Row):
    """A row with an absolute budget: ``target`` is in the row's unit, not a ratio."""

    @property
    def status(self) -> str:
        if self.target is None:
            return ""
        return "PASS" if self.median <= self.target else "MISS"

    def as_dict(self) -> dict[str, Any]:
        found = super().as_dict()
        found["target_kind"] = f"absolute ({self.unit})"
        return found


def derived(
    key: str,
    label: str,
    total: Row,
    minus: dict[str, int],
    rows: dict[str, Row],
    *,
    baseline: str | None = None,
    target: float | None = None,
    note: str = "",
) -> DerivedRow:
    """``total`` minus ``count`` times each row of ``minus``, round by round; the median of the rounds."""
    per_round = [
        t - sum(count * rows[name].round_medians[i] for name, count in minus.items())
        for i, t in enumerate(total.round_medians)
    ]
    return DerivedRow(
        key=key,
        label=label,
        unit=total.unit,
        n=total.n,
        rounds=total.rounds,
        median=statistics.median(per_round),
        min=None,  # type: ignore[arg-type]
        p99=None,  # type: ignore[arg-type]
        round_medians=per_round,
        baseline=baseline,
        target=target,
        note=note,
    )


def in_process_rows(quick: bool) -> tuple[list[Row], dict[str, Any]]:
    """Measure both apps and botocore's per-request cost side by side; derive the own times."""
    from toolfront import aws

    event = load_event()
    ctx = FakeContext()
    client = aws.client("dynamodb")
    canned = CannedDynamoDB(bench_tables(event))
    canned.install(client)
    with open(os.devnull, "w", encoding="utf-8") as null, log_stream(null):
        try:
            return _measure(quick, client, event, ctx)
        finally:
            canned.uninstall(client)


def _measure(
    quick: bool, client: Any, event: dict[str, Any], ctx: FakeContext
) -> tuple[list[Row], dict[str, Any]]:
    from botocore import xform_name

    from toolfront import service
    from toolfront.logs import log_call
    from toolfront.pipeline import CallResult
    from toolfront.rest import call_of

    n = QUICK_N if quick else FULL_N
    tf_app = load_family("catalogue")
    pt_app = load_powertools_app(client)
    found = sanity_check(tf_app, pt_app, client, event, ctx)

    tf_handler, pt_handler = tf_app.lambda_handler, pt_app.lambda_handler
    authenticate = service.authenticator().authenticate
    headers = _headers(event)
    source_ip = event["requestContext"]["http"]["sourceIp"]
    call = call_of(event, TOOL, event["requestContext"]["requestId"])
    result = CallResult(200, data={"product": PRODUCT}, actor=authenticate(headers, source_ip))

    # The very requests a warm call makes, with their parameters: each gets a per-request row.
    with recording(client) as asked:
        tf_handler(event, ctx)
        pt_handler(event, ctx)
    requests: dict[str, dict[str, Any]] = {}
    for operation, params in asked:
        requests.setdefault(operation, params)
    missing = {*found["toolfront_warm_requests"], *found["powertools_requests"]} - set(requests)
    if missing:
        raise RuntimeError(f"counted requests that were not recorded: {sorted(missing)}")

    def per_request(operation: str) -> Spec:
        method = getattr(client, xform_name(operation))
        return Spec(
            f"bc_{xform_name(operation)}",
            f"botocore {xform_name(operation)} (canned send), per request",
            lambda params: method(**params),
            n,
            arg=requests[operation],
            note=_describe_request(operation, requests[operation]),
        )

    warm = found["toolfront_warm_requests"]
    group = [
        Spec(
            "pt_total",
            "Powertools resolver+validation, 1 GetItem: total",
            lambda ev: pt_handler(ev, ctx),
            n,
            arg=event,
            note="APIGatewayHttpResolver(enable_validation=True), pydantic body model; no authentication",
        ),
        Spec(
            "tf_total",
            "toolfront lambda_handler get_product: total",
            lambda ev: tf_handler(ev, ctx),
            n,
            arg=event,
            baseline="pt_total",
            note=f"warm call: {_counts(warm)}; one log line",
        ),
        *(per_request(operation) for operation in requests),
        Spec(
            "tf_actor_total",
            "toolfront actor (authenticate, warm): total",
            lambda h: authenticate(h, source_ip),
            n,
            arg=headers,
            note=f"{_counts(found['toolfront_actor_requests'])}: key and principal together",
        ),
        Spec(
            "ref_log_line",
            "ref: toolfront log_call (1 Logger line, null stream)",
            lambda c: log_call(c, result, duration_ms=0.5),
            n,
            arg=call,
        ),
    ]
    measured = run_group(group)

    # Cross-checks of the subtraction. In situ: each call's time minus the time it spent inside the
    # client's methods (botocore as it runs among the handler's own code).
    with timing_requests(client, [xform_name(op) for op in requests]) as spent:
        in_situ = in_situ_rows(
            [
                (
                    "pt_in_situ",
                    "ref: Powertools own time, in situ",
                    lambda ev: pt_handler(ev, ctx),
                    None,
                    "each call's time minus its time inside client.get_item",
                ),
                (
                    "tf_in_situ",
                    "ref: toolfront core, in situ",
                    lambda ev: tf_handler(ev, ctx),
                    "pt_in_situ",
                    "each call's time minus its time inside the client's methods",
                ),
            ],
            event,
            spent,
            n,
        )
    # Directly: the client's methods replaced by functions answering the parsed answers at once.
    answers = {xform_name(op): getattr(client, xform_name(op))(**params) for op, params in requests.items()}
    with answering_at_once(client, answers):
        if _status_and_body(tf_handler(event, ctx))[1].get("data") != {"product": PRODUCT}:
            raise RuntimeError("toolfront does not answer the product with the client methods replaced")
        found["core_profile"] = core_profile(lambda: tf_handler(event, ctx), 500 if quick else 5000)
        direct = run_group(
            [
                Spec(
                    "pt_direct",
                    "ref: Powertools own time, measured directly",
                    lambda ev: pt_handler(ev, ctx),
                    n,
                    arg=event,
                    note="client.get_item replaced by a function returning the parsed answer",
                ),
                Spec(
                    "tf_direct",
                    "ref: toolfront core, measured directly",
                    lambda ev: tf_handler(ev, ctx),
                    n,
                    arg=event,
                    baseline="pt_direct",
                    note="the client's methods replaced by functions returning the parsed answers",
                ),
            ]
        )
    by_key = {r.key: r for r in measured}

    def minus(counts: dict[str, int]) -> dict[str, int]:
        return {f"bc_{xform_name(op)}": count for op, count in counts.items()}

    pt_minus = minus(found["powertools_requests"])
    tf_minus = minus(warm)
    pt_own = derived(
        "pt_own",
        f"Powertools own time = total - {_terms(found['powertools_requests'])}",
        by_key["pt_total"],
        pt_minus,
        by_key,
        note="baseline of the core-time target; Powertools authenticates no one",
    )
    tf_core = derived(
        "tf_core",
        f"toolfront core = total - {_terms(warm)}",
        by_key["tf_total"],
        tf_minus,
        by_key,
        baseline="pt_own",
        target=0.4,
        note="auth, routing, body, validation, envelope and the log line, without botocore",
    )
    actor_core = derived(
        "tf_actor_core",
        f"toolfront actor core = total - {_terms(found['toolfront_actor_requests'])}",
        by_key["tf_actor_total"],
        minus(found["toolfront_actor_requests"]),
        by_key,
        baseline="pt_own",
    )
    rows: list[Row] = [
        by_key["pt_total"],
        by_key["tf_total"],
        *(by_key[f"bc_{xform_name(op)}"] for op in requests),
        pt_own,
        tf_core,
        by_key["tf_actor_total"],
        actor_core,
        *in_situ,
        *direct,
        by_key["ref_log_line"],
    ]
    link_ratios(rows)
    found["subtracted"] = {"toolfront": tf_minus, "powertools": pt_minus}
    found["requests"] = requests
    return rows, found


@contextmanager
def recording(client: Any) -> Iterator[list[tuple[str, dict[str, Any]]]]:
    """Record each operation ``client`` is asked for and its parameters while the block runs."""
    asked: list[tuple[str, dict[str, Any]]] = []

    def record(params: dict[str, Any], model: Any, **_: Any) -> None:
        asked.append((model.name, copy.deepcopy(params)))

    client.meta.events.register("before-parameter-build.dynamodb", record)
    try:
        yield asked
    finally:
        client.meta.events.unregister("before-parameter-build.dynamodb", record)


def _describe_request(operation: str, params: dict[str, Any]) -> str:
    if operation == "BatchGetItem":
        tables = params["RequestItems"]
        return "one request, " + " + ".join(f"{len(spec['Keys'])} key of {t}" for t, spec in tables.items())
    return f"on {params.get('TableName', '?')}"


def _counts(counts: dict[str, int]) -> str:
    return " + ".join(f"{count} {op}" for op, count in sorted(counts.items())) or "no request"


def _terms(counts: dict[str, int]) -> str:
    return " - ".join(op if count == 1 else f"{count} {op}" for op, count in sorted(counts.items()))


# --- fresh subprocesses -------------------------------------------------------------------------

FLOOR = "import boto3; boto3.client('dynamodb', region_name='us-east-1')"


def _import_app(function: str) -> str:
    """The floor, then ``functions/<function>/app.py`` imported as Lambda does (``app``, layer on path)."""
    paths = [str(FUNCTIONS_DIR / function), str(LAYER_DIR)]
    return f"{FLOOR}\nimport sys\nsys.path[:0] = {paths!r}\nimport app"


FIRST_CALL = f"""{FLOOR}
import gc, sys, time
gc_log = []
gc_started = [0]


def gc_watch(phase, info):
    if phase == "start":
        gc_started[0] = time.perf_counter_ns()
    else:
        gc_log.append((info["generation"], (time.perf_counter_ns() - gc_started[0]) / 1e6))


gc.callbacks.append(gc_watch)
t0 = time.perf_counter_ns()
sys.path[:0] = {[str(FUNCTIONS_DIR / "catalogue"), str(LAYER_DIR)]!r}
import app
t1 = time.perf_counter_ns()
gc_import = list(gc_log)
sys.path.insert(0, {str(BENCH_DIR)!r})
import bench_rest
bench_rest.child_first_call(app, (t1 - t0) / 1e6, gc_import, gc_log)
"""

COMMANDS: dict[str, str | None] = {
    "pass": "pass",
    "floor": FLOOR,
    "catalogue": _import_app("catalogue"),
    "gateway": _import_app("gateway"),
    "powertools": f"{FLOOR}\n{POWERTOOLS_APP}",
    "first_call": FIRST_CALL,
}


def child_first_call(
    app_module: Any, import_ms: float, gc_import: list[tuple[int, float]], gc_log: list[tuple[int, float]]
) -> None:
    """In a fresh process after ``import app``: make toolfront's client, then time 3 calls (ms).

    ``gc_import`` holds the collections (generation, ms) during the import; ``gc_log`` keeps growing.
    """
    from toolfront import aws

    clock = time.perf_counter_ns
    t0 = clock()
    client = aws.client("dynamodb")  # what the first call would otherwise create itself
    client_ms = (clock() - t0) / 1e6
    event = load_event()
    CannedDynamoDB(bench_tables(event)).install(client)
    ctx = FakeContext()
    calls = []
    with counting(client) as seen:
        for _ in range(3):
            seen.clear()
            collected = len(gc_log)
            start = clock()
            response = app_module.lambda_handler(event, ctx)
            elapsed = (clock() - start) / 1e6
            gc_ms = sum(ms for _, ms in gc_log[collected:])
            calls.append({"ms": elapsed, "gc_ms": gc_ms, "requests": dict(seen)})
            if response["statusCode"] != 200:
                raise SystemExit(f"the call answered {response['statusCode']}: {response['body']}")
    result = {
        "import_ms": import_ms,
        "import_gc_ms": sum(ms for _, ms in gc_import),
        "import_gc_collections": [g for g, _ in gc_import],
        "client_ms": client_ms,
        "calls": calls,
    }
    print(RESULT_PREFIX + json.dumps(result))


def _child_result(stdout: str) -> dict[str, Any]:
    for line in reversed(stdout.splitlines()):
        if line.startswith(RESULT_PREFIX):
            found: dict[str, Any] = json.loads(line[len(RESULT_PREFIX) :])
            return found
    raise RuntimeError(f"the first-call child printed no result: {stdout[-2000:]}")


@dataclass(frozen=True)
class Imported:
    """One line of a ``-X importtime`` report."""

    name: str
    depth: int
    self_ms: float
    cumulative_ms: float
    parent: str | None


def parse_importtime_all(stderr: str) -> list[Imported]:
    """Every module of a ``-X importtime`` report, with its depth and the module that imported it."""
    raw: list[tuple[str, int, float, float]] = []
    for line in stderr.splitlines():
        if not line.startswith("import time:"):
            continue
        parts = line[len("import time:") :].split("|")
        if len(parts) != 3 or not parts[1].strip().isdigit():
            continue
        name = parts[2].rstrip()
        depth = (len(name) - len(name.lstrip()) - 1) // 2
        raw.append((name.strip(), depth, int(parts[0]) / 1000, int(parts[1]) / 1000))
    # The report is post-order (children first): walking it backwards, the last module seen one
    # level up is the importer.
    found: list[Imported] = []
    stack: list[str] = []
    for name, depth, self_ms, cumulative_ms in reversed(raw):
        del stack[depth:]
        found.append(Imported(name, depth, self_ms, cumulative_ms, stack[depth - 1] if depth else None))
        stack.append(name)
    found.reverse()
    return found


def offenders(floor_runs: list[str], app_runs: list[str]) -> dict[str, Any]:
    """The modules the app imports beyond the floor: top by cumulative and by self time, by package."""
    cumulative: dict[str, list[float]] = {}
    own: dict[str, list[float]] = {}
    where: dict[str, Imported] = {}
    by_package: list[Counter[str]] = []
    top_level: list[float] = []
    for floor_stderr, app_stderr in zip(floor_runs, app_runs, strict=True):
        already = {m.name for m in parse_importtime_all(floor_stderr)}
        packages: Counter[str] = Counter()
        total = 0.0
        for m in parse_importtime_all(app_stderr):
            if m.name in already:
                continue
            cumulative.setdefault(m.name, []).append(m.cumulative_ms)
            own.setdefault(m.name, []).append(m.self_ms)
            where.setdefault(m.name, m)
            packages[m.name.split(".")[0]] += m.self_ms
            if m.depth == 0:
                total += m.cumulative_ms
        by_package.append(packages)
        top_level.append(total)

    def describe(name: str) -> dict[str, Any]:
        return {
            "module": name,
            "cumulative_ms": round(statistics.median(cumulative[name]), 3),
            "self_ms": round(statistics.median(own[name]), 3),
            "depth": where[name].depth,
            "imported_by": where[name].parent,
        }

    def median_of(values: list[float]) -> float:
        return statistics.median(values) if values else 0.0

    names = list(cumulative)
    packages = {p for c in by_package for p in c}
    package_ms = {p: round(median_of([c.get(p, 0.0) for c in by_package]), 3) for p in packages}
    return {
        "top_cumulative": [
            describe(n) for n in sorted(names, key=lambda n: -median_of(cumulative[n]))[:TOP_OFFENDERS]
        ],
        "top_self": [describe(n) for n in sorted(names, key=lambda n: -median_of(own[n]))[:TOP_OFFENDERS]],
        "self_ms_by_package": dict(sorted(package_ms.items(), key=lambda kv: -kv[1])),
        "new_modules": len(names),
        "top_level_cumulative_ms": [round(v, 3) for v in top_level],
    }


def subprocess_rows(quick: bool) -> tuple[list[Row], dict[str, Any]]:
    """Cold imports and first calls in fresh interpreters, the commands interleaved per repeat."""
    from bench_registry import _run, _subprocess_row

    repeats = QUICK_REPEATS if quick else FULL_REPEATS
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON") and k not in UNSET}
    env.update(ENV)
    commands = {key: [sys.executable, "-c", code] for key, code in COMMANDS.items() if code}
    importtime = {
        "floor": [sys.executable, "-X", "importtime", "-c", FLOOR],
        "catalogue": [sys.executable, "-X", "importtime", "-c", _import_app("catalogue")],
        "gateway": [sys.executable, "-X", "importtime", "-c", _import_app("gateway")],
    }
    for cmd in commands.values():  # warm the .pyc caches; unmeasured
        _run(cmd, env)
    walls: dict[str, list[float]] = {k: [] for k in commands}
    first: list[dict[str, Any]] = []
    reports: dict[str, list[str]] = {k: [] for k in importtime}
    for _ in range(repeats):
        for key, cmd in commands.items():
            wall, out, _err = _run(cmd, env)
            walls[key].append(wall)
            if key == "first_call":
                first.append(_child_result(out))
        for key, cmd in importtime.items():
            reports[key].append(_run(cmd, env)[2])

    def minus(key: str, base: str) -> list[float]:
        return [w - b for w, b in zip(walls[key], walls[base], strict=True)]

    found = offenders(reports["floor"], reports["catalogue"])
    gateway = offenders(reports["floor"], reports["gateway"])
    calls = [[c["calls"][i]["ms"] for c in first] for i in range(3)]
    client_ms = [c["client_ms"] for c in first]
    budget = f"budget {COLD_BUDGET_MS:g} ms over the floor"
    rows = [
        _subprocess_row("cold_floor", "cold: boto3 + dynamodb client, wall - pass", minus("floor", "pass")),
        _subprocess_row(
            "cold_powertools",
            "ref cold: Powertools route module - floor",
            minus("powertools", "floor"),
            note="the baseline app above as a module (resolver, pydantic model, route); no client made",
        ),
    ]
    for key, label in (("catalogue", "catalogue app.py"), ("gateway", "gateway app.py")):
        row = _subprocess_row(f"cold_{key}", f"cold: import {label} - floor", minus(key, "floor"))
        paired = [a / b for a, b in zip(minus(key, "floor"), minus("powertools", "floor"), strict=True)]
        fields = {"target": COLD_BUDGET_MS, "baseline": "cold_powertools", "note": budget}
        rows.append(BudgetRow(**{**row.__dict__, **fields, "round_ratios": paired}))
    rows += [
        _subprocess_row(
            "cold_catalogue_importtime",
            "cold: catalogue -X importtime beyond the floor",
            found["top_level_cumulative_ms"],
        ),
        _subprocess_row(
            "cold_catalogue_in_process",
            "cold: catalogue import timed in-process",
            [c["import_ms"] for c in first],
            note="perf_counter around `import app` after the floor: no interpreter start or exit",
        ),
        _subprocess_row(
            "cold_catalogue_gc",
            "cold: of which garbage collection",
            [c["import_gc_ms"] for c in first],
            note="collections the import's allocations trigger, boto3's models being in memory already",
        ),
        _subprocess_row(
            "cold_gateway_importtime",
            "cold: gateway -X importtime beyond the floor",
            gateway["top_level_cumulative_ms"],
        ),
        _subprocess_row(
            "first_call",
            "first call after cold import (client made before)",
            calls[0],
            note="lazy first-use work in toolfront, botocore and Powertools Logger",
        ),
        _subprocess_row(
            "first_client",
            "toolfront dynamodb client creation (1st call pays it)",
            client_ms,
            note="a new boto3 Session: the service model is loaded again",
        ),
        _subprocess_row(
            "first_call_with_client",
            "first call incl. client creation",
            [a + b for a, b in zip(calls[0], client_ms, strict=True)],
        ),
        _subprocess_row("second_call", "second call (the key's owner known)", calls[1]),
        _subprocess_row("third_call", "third call", calls[2]),
    ]
    link_ratios(rows)
    extra = {
        "repeats": repeats,
        "importtime_catalogue": {k: v for k, v in found.items() if k != "top_level_cumulative_ms"},
        "importtime_gateway": {k: v for k, v in gateway.items() if k != "top_level_cumulative_ms"},
        "first_call_requests": [c["requests"] for c in first[0]["calls"]],
        "first_call_gc_ms": [[round(c["gc_ms"], 3) for c in f["calls"]] for f in first],
        "import_gc_collections": [f["import_gc_collections"] for f in first],
        "import_gc_ms": [round(f["import_gc_ms"], 3) for f in first],
        "samples_ms": {
            "wall": {k: [round(v, 3) for v in vs] for k, vs in walls.items()},
            "calls": [[round(v, 3) for v in vs] for vs in calls],
            "client": [round(v, 3) for v in client_ms],
        },
        "python_c_pass_ms_median": round(statistics.median(walls["pass"]), 3),
    }
    return rows, extra


# --- the section --------------------------------------------------------------------------------


def run(quick: bool = False) -> Section:
    """The in-process rows, then the subprocess rows, in one section named ``rest``."""
    section = Section("rest", canary_before=canary())
    with bench_environment():
        rows, found = in_process_rows(quick)
        cold_rows, cold = subprocess_rows(quick)
    section.rows = rows + cold_rows
    section.canary_after = canary()
    section.extra.update({"n": QUICK_N if quick else FULL_N, "sanity": found, "cold": cold})
    section.extra["summary"] = summary(found, cold)
    return section


def summary(found: dict[str, Any], cold: dict[str, Any]) -> list[str]:
    """Lines printed under the table: request counts and what the catalogue import spends most on."""

    lines = [
        "rest: DynamoDB requests per call (before-call.dynamodb):"
        f" toolfront warm {_counts(found['toolfront_warm_requests'])}"
        f" (actor: {_counts(found['toolfront_actor_requests'])}, key and principal together);"
        f" toolfront first call {_counts(found['toolfront_first_call_requests'])};"
        f" Powertools {_counts(found['powertools_requests'])} (it authenticates no one)."
    ]
    if not found["requests_as_expected"]:
        lines.append(
            f"rest: NOT THE EXPECTED REQUESTS: a warm call was expected to make {_counts(EXPECTED_WARM)}"
            f" and a first call {_counts(EXPECTED_FIRST)}"
        )
    profile = ", ".join(
        f"{e['function'].rsplit('(', 1)[1].rstrip(')')} {e['share']:.0%}" for e in found["core_profile"][:8]
    )
    lines.append(
        f"rest: toolfront core by function (cProfile cumulative share, client answering at once): {profile}"
    )
    gc_ms = statistics.median(cold["import_gc_ms"])
    lines.append(
        "rest: import of catalogue app.py beyond the floor, -X importtime top cumulative"
        f" (median ms, module <- importer); garbage collection takes {gc_ms:.1f} ms of it (mostly one"
        " generation-2 pass) and counts as self time of whichever module is importing then:"
    )
    for m in cold["importtime_catalogue"]["top_cumulative"]:
        lines.append(
            f"    {m['cumulative_ms']:7.1f}  {m['module']}  (self {m['self_ms']:.1f})"
            f"  <- {m['imported_by'] or '-'}"
        )
    for name in ("catalogue", "gateway"):
        by_package = cold[f"importtime_{name}"]["self_ms_by_package"]
        lines.append(
            f"rest: {name} import, self ms by package: "
            + ", ".join(f"{p} {ms:.1f}" for p, ms in list(by_package.items())[:8])
        )
    return lines


if __name__ == "__main__":
    from harness import format_table

    result = run(quick="--quick" in sys.argv)
    print(format_table([result]))
    print("\n".join(result.extra["summary"]))
