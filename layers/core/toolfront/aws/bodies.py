"""Answers too large for one DynamoDB item (400 KB), kept all the same: a completed call's answer
is never lost, and so never run twice, because it was big.

A text is stored as a string when it is small, zlib-compressed as bytes when it is large (JSON with
base64 inside shrinks well), and, when even that does not fit, as ``{"parts": N}`` with the
compressed bytes split into N items of the same table beside it (``<key>#part#<i>``). The parts are
written before the item that names them, so a reader never finds a count without its parts.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolfront.aws.dynamodb import call

INLINE_BYTES = 64 * 1024  # smaller texts stay plain strings (readable in the console, no CPU spent)
PART_BYTES = 300 * 1024  # bytes per part item, well under the item limit with its key and TTL
_LEVEL = 1  # fast: large answers are mostly base64, which any level shrinks by about a quarter


@dataclass(frozen=True, slots=True)
class Packed:
    """A text as one attribute value, and the parts it needs written first (none when it fits)."""

    value: dict[str, Any]
    parts: Sequence[bytes] = field(default=(), repr=False)


def pack(text: str) -> Packed:
    raw = text.encode("utf-8")
    if len(raw) <= INLINE_BYTES:
        return Packed({"S": text})
    compressed = zlib.compress(raw, _LEVEL)
    if len(compressed) <= PART_BYTES:
        return Packed({"B": compressed})
    parts = [compressed[i : i + PART_BYTES] for i in range(0, len(compressed), PART_BYTES)]
    return Packed({"M": {"parts": {"N": str(len(parts))}}}, parts)


def part_key(key: str, index: int) -> str:
    return f"{key}#part#{index}"


def unpack(value: dict[str, Any], read_parts: Callable[[int], list[bytes]]) -> str:
    """The text an attribute value holds; ``read_parts(n)`` answers the n part items' bytes, in order."""
    if "S" in value:
        return str(value["S"])
    if "B" in value:
        return zlib.decompress(bytes(value["B"])).decode("utf-8")
    count = int(value["M"]["parts"]["N"])
    return zlib.decompress(b"".join(read_parts(count))).decode("utf-8")


def write_parts(
    client: Any, table: str, key_name: str, key: str, packed: Packed, extra: dict[str, Any]
) -> None:
    """Put the parts of ``packed`` (``extra``: attributes each part carries too, its TTL)."""
    for index, chunk in enumerate(packed.parts):
        item = {key_name: {"S": part_key(key, index)}, "chunk": {"B": chunk}, **extra}
        call(client, "put_item", TableName=table, Item=item)


def read_parts(client: Any, table: str, key_name: str, key: str, count: int) -> list[bytes]:
    """The bytes of ``count`` parts of ``key``, in order (strongly consistent reads)."""
    found: list[bytes] = []
    for index in range(count):
        request = {"TableName": table, "Key": {key_name: {"S": part_key(key, index)}}, "ConsistentRead": True}
        item = call(client, "get_item", **request).get("Item")
        if item is None:
            raise KeyError(f"part {index} of {key} is missing")
        found.append(bytes(item["chunk"]["B"]))
    return found
