"""The rest bench's sanity checks: both apps answer and refuse alike, with the expected requests."""

from __future__ import annotations

import json
import sys
from typing import Any

from rest_fixture import PRODUCT, FakeContext, counting, event_headers, load_family, log_stream

#: Requests per warm call the subtraction expects (counted with ``provide-client-params.dynamodb``).
#: Warm: the key's one conditional UpdateItem (it authenticates, checks the key is live, that it
#: may call the tool, and spends from its bucket; docs/performance.md, item 10), the product's GetItem.
EXPECTED_WARM = {"UpdateItem": 1, "GetItem": 1}
#: First: the same (nothing is remembered that would save a request).
EXPECTED_FIRST = {"UpdateItem": 1, "GetItem": 1}
#: ``Authenticator.authenticate`` alone (listings, MCP): the key's item, with its owner's permissions.
EXPECTED_ACTOR = {"GetItem": 1}
EXPECTED_POWERTOOLS = {"GetItem": 1}


def status_and_body(response: dict[str, Any]) -> tuple[int, Any]:
    return response["statusCode"], json.loads(response["body"])


def sanity_check(
    tf_app: Any, pt_app: Any, client: Any, event: dict[str, Any], ctx: FakeContext
) -> dict[str, Any]:
    """Fail loudly unless both sides answer the product, refuse a bad sku, and count as expected."""
    import io

    from toolfront import wiring

    found: dict[str, Any] = {}
    bad = {**event, "body": json.dumps({"sku": "-not a sku"})}

    # First call of a fresh handler and authenticator.
    wiring.authenticator.cache_clear()
    fresh = load_family("catalogue")
    lines = io.StringIO()
    with log_stream(lines), counting(client) as seen:
        status, body = status_and_body(fresh.lambda_handler(event, ctx))
    if status != 200 or body.get("data") != {"product": PRODUCT}:
        raise RuntimeError(f"toolfront answered {status}: {body}; its log: {lines.getvalue()[-3000:]}")
    found["toolfront_first_call_requests"] = dict(seen)

    tf_app.lambda_handler(event, ctx)  # the bench's handler: its first call
    lines = io.StringIO()
    with log_stream(lines), counting(client) as seen:
        status, body = status_and_body(tf_app.lambda_handler(event, ctx))
    if status != 200 or body.get("data") != {"product": PRODUCT}:
        raise RuntimeError(f"toolfront answered {status}: {body}; its log: {lines.getvalue()[-3000:]}")
    found["toolfront_warm_requests"] = dict(seen)
    log_lines = lines.getvalue().splitlines()
    if len(log_lines) != 1 or json.loads(log_lines[0]).get("message") != "tool call":
        raise RuntimeError(f"expected one 'tool call' log line per call, got {log_lines}")
    found["toolfront_log_line"] = json.loads(log_lines[0])

    with log_stream(io.StringIO()):
        status, body = status_and_body(tf_app.lambda_handler(bad, ctx))
    if status != 422:
        raise RuntimeError(f"toolfront should refuse an invalid sku with 422, answered {status}: {body}")

    authenticate = wiring.authenticator().authenticate
    with counting(client) as seen:
        actor = authenticate(event_headers(event), event["requestContext"]["http"]["sourceIp"])
    if "catalogue" not in actor.permissions:
        raise RuntimeError(f"the bench actor lacks the catalogue permission: {actor}")
    found["toolfront_actor_requests"] = dict(seen)

    with counting(client) as seen:
        status, body = status_and_body(pt_app.lambda_handler(event, ctx))
    if status != 200 or body.get("data") != {"product": PRODUCT}:
        raise RuntimeError(f"Powertools answered {status}: {body}")
    found["powertools_requests"] = dict(seen)
    status, body = status_and_body(pt_app.lambda_handler(bad, ctx))
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
