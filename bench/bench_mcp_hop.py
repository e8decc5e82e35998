"""MCP ``tools/call`` through a family's own endpoint (``/mcp/catalogue``) against the same call
through ``/mcp`` (the gateway, which invokes the family's function): the hop's cost, in-process.

Both run on moto in this process. The ``/mcp`` path's Lambda invoke is answered by the catalogue's
very ``lambda_handler`` (the event and the answer are encoded and decoded as Lambda would carry
them); no network is timed. The counts are the figures to read: Lambda invocations and DynamoDB
requests per call. The times are dominated by moto's in-process DynamoDB (milliseconds a request),
so they bound the hop's CPU only loosely; the REST bench's canned transport is the tool for
microseconds.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from harness import Section, Spec, canary, run_group
from moto_tables import moto_tables

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.aws import seed  # noqa: E402
from tests.conftest import load_family  # noqa: E402
from toolfront.aws import clients as aws  # noqa: E402

FULL_N, QUICK_N = 200, 20
Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


class InProcessLambda:
    """The Lambda API's ``invoke`` answered by a function's handler in this process."""

    def __init__(self, handler: Handler) -> None:
        self.handler, self.invocations = handler, 0

    def invoke(self, FunctionName: str, Payload: bytes) -> dict[str, Any]:
        self.invocations += 1
        answer = json.dumps(self.handler(json.loads(Payload), None)).encode()
        return {"StatusCode": 200, "Payload": io.BytesIO(answer)}


def _event(path: str, key: str) -> dict[str, Any]:
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "catalogue-get_product", "arguments": {"sku": "H-1"}},
    }
    return {
        "routeKey": f"POST {path}",
        "rawPath": path,
        "headers": {"content-type": "application/json", "authorization": f"Bearer {key}"},
        "body": json.dumps(message),
        "requestContext": {"requestId": "hop", "http": {"method": "POST", "sourceIp": "198.51.100.1"}},
    }


@contextlib.contextmanager
def _stack() -> Iterator[tuple[Handler, Handler, InProcessLambda, str]]:
    with moto_tables():
        key = seed("bench", ["catalogue.*"], permissions=["catalogue"], rate_limit=10_000_000)
        catalogue, gateway = load_family("catalogue").lambda_handler, load_family("gateway").lambda_handler
        create = {"sku": "H-1", "name": "Mug", "price_cents": 1, "currency": "EUR"}
        with contextlib.redirect_stdout(io.StringIO()):
            catalogue(
                {
                    "rawPath": "/v1/tools/catalogue/create_product",
                    "headers": {"content-type": "application/json", "authorization": f"Bearer {key}"},
                    "body": json.dumps(create),
                    "requestContext": {"requestId": "seed", "http": {"sourceIp": "198.51.100.1"}},
                },
                None,
            )
        lambda_api = InProcessLambda(catalogue)
        aws._clients["lambda"] = lambda_api  # the gateway's router invokes through it
        try:
            yield catalogue, gateway, lambda_api, key
        finally:
            aws._clients.pop("lambda", None)


def _counted(handler: Handler, event: dict[str, Any], lambda_api: InProcessLambda) -> dict[str, int]:
    seen: list[str] = []
    client = aws.client("dynamodb")

    def record(model: Any, **_: Any) -> None:
        seen.append(model.name)

    before = lambda_api.invocations
    client.meta.events.register("provide-client-params.dynamodb", record)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            response = handler(event, None)
    finally:
        client.meta.events.unregister("provide-client-params.dynamodb", record)
    result = json.loads(response["body"])["result"]
    if result.get("isError"):
        raise RuntimeError(f"the measured call failed: {result}")
    return {"dynamodb_requests": len(seen), "invocations": lambda_api.invocations - before}


def run(quick: bool = False) -> Section:
    section = Section("mcp_hop (tools/call through /mcp/catalogue vs /mcp)", canary_before=canary())
    n = QUICK_N if quick else FULL_N
    with _stack() as (catalogue, gateway, lambda_api, key):
        own, hop = _event("/mcp/catalogue", key), _event("/mcp", key)
        counts = {
            "/mcp/catalogue": _counted(catalogue, own, lambda_api),
            "/mcp": _counted(gateway, hop, lambda_api),
        }

        def call(handler: Handler, event: dict[str, Any]) -> Callable[[], Any]:
            def once() -> None:
                with contextlib.redirect_stdout(io.StringIO()):
                    handler(event, None)

            return once

        section.rows = run_group(
            [
                Spec(
                    "mcp_family_call",
                    "tools/call via /mcp/catalogue (the family's own function)",
                    call(catalogue, own),
                    n,
                ),
                Spec(
                    "mcp_gateway_call",
                    "tools/call via /mcp (gateway, then the family's function)",
                    call(gateway, hop),
                    n,
                    baseline="mcp_family_call",
                    note="the hop: a second pipeline run's authentication, the event's encoding",
                ),
            ],
            rounds=3 if quick else 7,
        )
    section.canary_after = canary()
    section.extra["counts"] = counts
    section.extra["summary"] = [
        f"mcp_hop: {path}: {c['invocations']} Lambda invocation(s), "
        f"{c['dynamodb_requests']} DynamoDB requests"
        for path, c in counts.items()
    ]
    return section


if __name__ == "__main__":
    from harness import format_table

    done = run("--quick" in sys.argv)
    print(format_table([done]))
    print("\n".join(done.extra["summary"]))
