"""The canned DynamoDB of the rest bench: a ``before-send`` hook answering from in-memory tables.

It stands in for the HTTP exchange only; botocore still validates, serialises, signs and parses.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

#: Hash key of each canned table.
HASH_KEYS = {"KeysTable": "key_id", "PrincipalsTable": "principal_id", "ProductsTable": "sku"}


class CannedOperationError(RuntimeError):
    """A request the canned DynamoDB does not emulate (an operation or an update action)."""


class CannedBody:
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
        return AWSResponse(request.url, 200, headers, CannedBody(payload))

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
            raise CannedOperationError(
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


def canned_response(request: Any, status: int, answer: dict[str, Any]) -> Any:
    """The botocore response DynamoDB would send with ``answer`` (for canned transports' writes)."""
    from botocore.awsrequest import AWSResponse

    payload, headers = _encoded(answer)
    return AWSResponse(request.url, status, headers, CannedBody(payload))


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
                raise CannedOperationError(f"the canned DynamoDB does not apply {verb} actions")
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
