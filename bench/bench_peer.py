"""toolfront against a fair peer built from AWS Lambda Powertools, on the same routes, side by side.

The peer (``peer_app``): Powertools' ``APIGatewayHttpResolver(enable_validation=True)`` with a
pydantic model of each tool's input schema; a middleware looking the API key up (one GetItem on the
keys table, the secret's SHA-256 compared with ``hmac.compare_digest``, the scope checked) and
spending one unit of a fixed-window rate limit (one conditional UpdateItem); ``idempotent_function``
+ ``DynamoDBPersistenceLayer`` around the write (key: the body's ``idempotency_key``, scoped to the
key's owner, the rest of the input checked against the stored one); then the handler's own GetItem
(read) or conditional PutItem (write). No audit record, no log line.

toolfront: ``lambda_handler`` of ``functions/catalogue/app.py`` on ``POST /v1/tools/catalogue/
get_product`` and ``create_product``, auditing ON (``TOOLFRONT_AUDIT_TABLE`` set: every write and
every replay writes a hash-chained audit record), its one log line per call to a null stream.

Both sides run in this process against the same canned transport (``PeerCanned``, a
``before-send.dynamodb`` hook: only the network is gone, no moto). The peer's requests pass through
botocore, which still validates, serialises, signs, checks the CRC32 and parses; toolfront's go
through its own ``aws.wire`` (the same JSON, SigV4-signed, the CRC32 checked, offered to the same
hook), which is toolfront's to choose, as the requests it makes are. The transport extends the rest
bench's ``CannedDynamoDB`` as ``bench_audit``'s ``CannedWrites`` does, and keeps the idempotency
tables: a conditional Put (or a transaction's Put) on a record that exists fails as DynamoDB fails it
(``ConditionalCheckFailedException`` / ``TransactionCanceledException`` with the old item), so a
replay is answered from the stored record on both sides. Other writes succeed (no condition
evaluated, the rate buckets updated).

Figures per call, for a read, a write with an idempotency key (a new key per call, made untimed), a
write without one, and a replay (the keyed write sent again): CPU µs (median of 3 interleaved
rounds; toolfront's rows have the peer's as baseline, target 0.5) and DynamoDB requests (counted
with ``provide-client-params.dynamodb`` on each side's client; toolfront's rows target no more than
the peer).
"""

from __future__ import annotations

import copy
import importlib
import itertools
import json
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from harness import Row, Section, Spec, canary, link_ratios, run_group
from rest_canned import CannedDynamoDB, _apply_update, _canonical, canned_response
from rest_fixture import (
    BENCH_DIR,
    PRODUCT,
    FakeContext,
    bench_environment,
    bench_tables,
    counting,
    counts_text,
    environment,
    load_event,
    load_family,
    log_stream,
)
from rest_rows import count_row

AUDIT_TABLE = "AuditTable"
PEER_ENV = {
    "PEER_RATE_LIMITS_TABLE": "PeerRateLimitsTable",
    "PEER_IDEMPOTENCY_TABLE": "PeerIdempotencyTable",
    "AWS_LAMBDA_FUNCTION_NAME": "peer-catalogue",
}
WRITE_PATH = "/v1/tools/catalogue/create_product"
FULL_N = 800  # calls per round and row (8 rows, 3 rounds)
QUICK_N = 100
CPU_TARGET = 0.5
REQUEST_TARGET = 1.0  # toolfront makes no more requests than the peer
KINDS = {
    "read": "read: get_product",
    "keyed": "write: create_product, idempotency key",
    "plain": "write: create_product, no key",
    "replay": "replay: the keyed write again",
}


class PeerCanned(CannedDynamoDB):
    """The rest bench's canned DynamoDB, answering both sides' writes too.

    Idempotency tables (``IDEMPOTENCY``: table -> key attribute) are kept: a Put, alone or in a
    transaction, on a record that exists fails (``ReturnValuesOnConditionCheckFailure`` honoured); an
    Update (``SET``) is applied to the record; a Delete removes it; a read that names a record (a
    keyed call reads its key and its record together) answers it as kept now. Every other PutItem
    and every TransactWriteItems item elsewhere succeeds with an empty answer (parsed, not kept);
    UpdateItem elsewhere (the rate buckets) and the other reads are ``CannedDynamoDB``'s.
    """

    def __init__(self, tables: dict[str, list[dict[str, Any]]], idempotency: dict[str, str]) -> None:
        super().__init__(tables)
        self.idempotency = idempotency
        self.records: dict[str, dict[str, dict[str, Any]]] = {table: {} for table in idempotency}

    def __call__(self, request: Any, **kwargs: Any) -> Any:
        target = request.headers["X-Amz-Target"]
        operation = (target.decode() if isinstance(target, bytes) else target).rpartition(".")[2]
        body = request.body if isinstance(request.body, bytes) else str(request.body).encode()
        if operation in self.READS:
            asked = json.loads(body)
            if not set(asked.get("RequestItems") or [asked.get("TableName")]) & set(self.records):
                return super().__call__(request, **kwargs)
            return canned_response(request, 200, self._read_records(operation, asked))
        parsed = json.loads(body)
        if operation == "TransactWriteItems":
            return self._transaction(request, parsed["TransactItems"])
        table = parsed["TableName"]
        if operation == "UpdateItem" and table not in self.records:
            return super().__call__(request, **kwargs)  # a rate bucket: applied, answered
        if operation == "PutItem" and table in self.records:
            old = self._put(table, parsed["Item"])
            if old is not None:
                error: dict[str, Any] = {"message": "The conditional request failed"}
                if parsed.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD":
                    error["Item"] = old
                return canned_response(
                    request, 400, {"__type": _ERROR + "ConditionalCheckFailedException", **error}
                )
        elif operation == "UpdateItem":
            self._update(table, parsed)
        elif operation == "DeleteItem" and table in self.records:
            self.records[table].pop(_canonical(parsed["Key"]), None)
        elif operation not in ("PutItem", "DeleteItem"):
            return super().__call__(request, **kwargs)  # raises, naming the operation
        return canned_response(request, 200, {})

    def _read_records(self, operation: str, request: dict[str, Any]) -> dict[str, Any]:
        """A read that names an idempotency record: answered from the tables as they are now."""

        def get(table: str, key: dict[str, Any]) -> dict[str, Any] | None:
            if table in self.records:
                return self.records[table].get(_canonical(key))
            return self._get(table, key)

        if operation == "GetItem":
            item = get(request["TableName"], request["Key"])
            return {"Item": item} if item is not None else {}
        responses = {
            table: [i for i in (get(table, key) for key in spec["Keys"]) if i is not None]
            for table, spec in request["RequestItems"].items()
        }
        return {"Responses": responses, "UnprocessedKeys": {}}

    def _put(self, table: str, item: dict[str, Any]) -> dict[str, Any] | None:
        """Keep ``item`` unless its record exists: then the record, unchanged."""
        name = self.idempotency[table]
        key = _canonical({name: item[name]})
        old = self.records[table].get(key)
        if old is None:
            self.records[table][key] = item
        return old

    def _update(self, table: str, request: dict[str, Any]) -> None:
        key = _canonical(request["Key"])
        record = self.records[table].setdefault(key, dict(request["Key"]))
        _apply_update(
            record,
            request["UpdateExpression"],
            request.get("ExpressionAttributeNames", {}),
            request.get("ExpressionAttributeValues", {}),
        )

    def _transaction(self, request: Any, items: list[dict[str, Any]]) -> Any:
        reasons: list[dict[str, Any]] = []
        for entry in items:
            ((kind, spec),) = entry.items()
            old = None
            if kind == "Put" and spec["TableName"] in self.records:
                name = self.idempotency[spec["TableName"]]
                old = self.records[spec["TableName"]].get(_canonical({name: spec["Item"][name]}))
            reasons.append(
                {"Code": "None"} if old is None else {"Code": "ConditionalCheckFailed", "Item": old}
            )
        if any(r["Code"] != "None" for r in reasons):
            answer = {
                "__type": _ERROR + "TransactionCanceledException",
                "Message": "Transaction cancelled, please refer cancellation reasons for specific reasons",
                "CancellationReasons": reasons,
            }
            return canned_response(request, 400, answer)
        for entry in items:
            ((kind, spec),) = entry.items()
            if spec["TableName"] not in self.records:
                continue  # a rate bucket, an audit record: accepted, not kept
            if kind == "Put":
                self._put(spec["TableName"], spec["Item"])
            elif kind == "Update":
                self._update(spec["TableName"], spec)
        return canned_response(request, 200, {})


_ERROR = "com.amazonaws.dynamodb.v20120810#"


# --- the two sides ----------------------------------------------------------------------------


@contextmanager
def _environment() -> Iterator[None]:
    """The rest bench's environment, auditing on, and the peer's tables."""
    with bench_environment(), environment({"TOOLFRONT_AUDIT_TABLE": AUDIT_TABLE, **PEER_ENV}):
        yield


def _load_peer(client: Any) -> Any:
    if str(BENCH_DIR) not in sys.path:
        sys.path.insert(0, str(BENCH_DIR))
    module = importlib.import_module("peer_app")
    module.use_client(client)
    return module


def _write_event(base: dict[str, Any], body: dict[str, Any], request_id: str) -> dict[str, Any]:
    event = copy.deepcopy(base)
    text = json.dumps(body)
    event["rawPath"] = event["requestContext"]["http"]["path"] = WRITE_PATH
    event["pathParameters"] = {"verb_noun": "create_product"}
    event["requestContext"]["requestId"] = request_id
    event["headers"]["content-length"] = str(len(text.encode()))
    event["body"] = text
    return event


def _product_of(response: dict[str, Any]) -> Any:
    if response["statusCode"] != 200:
        return None
    return json.loads(response["body"]).get("data", {}).get("product")


def _checked(
    handler: Callable[..., Any], event: dict[str, Any], ctx: Any, client: Any, want: Any
) -> list[str]:
    """The operations of one call, which must answer the product ``want``."""
    with counting(client) as seen:
        response = handler(event, ctx)
    if _product_of(response) != want:
        raise RuntimeError(f"the call answered {response['statusCode']}: {response['body'][:400]}")
    return sorted(seen.elements())


def run(quick: bool = False) -> Section:
    section = Section("peer (toolfront vs a Powertools peer, same work)", canary_before=canary())
    n = QUICK_N if quick else FULL_N
    with _environment(), open(os.devnull, "w", encoding="utf-8") as null, log_stream(null):
        import boto3

        from toolfront.aws import clients as aws

        base = load_event()
        canned = PeerCanned(
            bench_tables(base),
            {"IdempotencyTable": "pk", PEER_ENV["PEER_IDEMPOTENCY_TABLE"]: "id"},
        )
        clients = {"toolfront": aws.client("dynamodb"), "peer": boto3.client("dynamodb")}
        for client in clients.values():
            canned.install(client)
        try:
            handlers = {
                "toolfront": load_family("catalogue").lambda_handler,
                "peer": _load_peer(clients["peer"]).lambda_handler,
            }
            rows, requests = _measure(n, base, handlers, clients)
        finally:
            for client in clients.values():
                canned.uninstall(client)
    section.rows = rows
    section.canary_after = canary()
    section.extra.update({"n": n, "requests": requests, "audit": "on (toolfront)"})
    section.extra["summary"] = summary(section, requests)
    return section


def _measure(
    n: int, base: dict[str, Any], handlers: dict[str, Callable[..., Any]], clients: dict[str, Any]
) -> tuple[list[Row], dict[str, dict[str, list[str]]]]:
    ctx = FakeContext()
    serial = itertools.count()
    plain = _write_event(base, dict(PRODUCT), "peer-0000-0000-0000-000000000000")

    def keyed() -> dict[str, Any]:
        return _write_event(
            base, {**PRODUCT, "idempotency_key": f"bench-peer-{next(serial)}"}, f"peer-{next(serial)}"
        )

    events = {"read": lambda: base, "keyed": keyed, "plain": lambda: plain}
    requests: dict[str, dict[str, list[str]]] = {}
    replays: dict[str, dict[str, Any]] = {}
    for side, handler in handlers.items():
        client = clients[side]
        _checked(handler, base, ctx, client, PRODUCT)  # warm: clients made, the actor known
        _checked(handler, plain, ctx, client, PRODUCT)
        found = {kind: _checked(handler, make(), ctx, client, PRODUCT) for kind, make in events.items()}
        replays[side] = keyed()
        first = handler(replays[side], ctx)
        found["replay"] = _checked(handler, replays[side], ctx, client, PRODUCT)
        again = handler(replays[side], ctx)
        if json.loads(again["body"]) != json.loads(first["body"]):
            raise RuntimeError(f"{side}: the keyed write sent again was not answered with the first answer")
        requests[side] = found
    if requests["toolfront"]["replay"].count("PutItem") or requests["peer"]["replay"].count("UpdateItem") > 1:
        raise RuntimeError(f"a replay ran the handler again: {requests}")

    group: list[Spec] = []
    for kind, what in KINDS.items():
        for side in ("peer", "toolfront"):
            handler = handlers[side]
            spec = Spec(
                f"peer.cpu.{kind}.{side}",
                f"{side}: {what}",
                lambda e, h=handler: h(e, ctx),
                n,
                note=f"{counts_text(Counter(requests[side][kind]))}; canned DynamoDB",
            )
            if kind == "keyed":
                spec.setup = keyed
            else:
                spec.arg = replays[side] if kind == "replay" else events[kind]()
            if side == "toolfront":
                spec.baseline, spec.target = f"peer.cpu.{kind}.peer", CPU_TARGET
            group.append(spec)
    rows = run_group(group)
    rows += request_rows(requests)
    link_ratios(rows)
    return rows, requests


def request_rows(requests: dict[str, dict[str, list[str]]]) -> list[Row]:
    rows = []
    for kind, what in KINDS.items():
        for side in ("peer", "toolfront"):
            count = float(len(requests[side][kind]))
            rows.append(
                count_row(
                    f"peer.requests.{kind}.{side}",
                    f"{side}: DynamoDB requests, {what}",
                    count,
                    kind=Row,
                    baseline=f"peer.requests.{kind}.peer" if side == "toolfront" else None,
                    target=REQUEST_TARGET if side == "toolfront" else None,
                    note=counts_text(Counter(requests[side][kind])) + "; provide-client-params.dynamodb",
                )
            )
    return rows


def summary(section: Section, requests: dict[str, dict[str, list[str]]]) -> list[str]:
    lines = []
    for kind, what in KINDS.items():
        tf, peer = section.row(f"peer.cpu.{kind}.toolfront"), section.row(f"peer.cpu.{kind}.peer")
        lines.append(
            f"peer: {what}: CPU toolfront {tf.median:.0f} µs vs peer {peer.median:.0f} µs ({tf.ratio:.3f}x);"
            f" requests toolfront {counts_text(Counter(requests['toolfront'][kind]))}"
            f" vs peer {counts_text(Counter(requests['peer'][kind]))}"
        )
    lines.append(
        "peer: toolfront audits every write and replay (a hash-chained record, in the answer's transaction"
        " when keyed) and writes one log line per call; the peer audits nothing and logs nothing."
    )
    return lines


if __name__ == "__main__":
    from harness import format_table

    result = run(quick="--quick" in sys.argv)
    print(format_table([result]))
    print("\n".join(result.extra["summary"]))
