"""The tool manifest: every family's tool metadata, shipped in the layer as ``manifest.json``.

A function can list (and later route) the tools of every family without importing their code.
The file is generated from the families' declarations (``toolfront manifest``) and a test fails
when it differs from what the code declares, so it cannot drift.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

MANIFEST_FILE = "manifest.json"


@cache
def load_manifest() -> dict[str, Any]:
    """The manifest shipped with this package (read once per process)."""
    text = resources.files("toolfront").joinpath(MANIFEST_FILE).read_text(encoding="utf-8")
    manifest: dict[str, Any] = json.loads(text)
    return manifest


IDEMPOTENCY_KEY_SCHEMA = {
    "type": "string",
    "minLength": 1,
    "maxLength": 255,
    "pattern": "^[\\x20-\\x7e]+$",
    "description": "Send the same key again to retry this call safely: a retry with the same input gets "
    "the first answer back (kept 24 hours); the same key with another input is refused.",
}


def offers_idempotency(tool: dict[str, Any]) -> bool:
    """Whether a manifest tool takes an ``idempotency_key`` (writes with ``replay``)."""
    return bool(tool["replay"]) and not tool["annotations"]["read_only"]


def offered_input_schema(tool: dict[str, Any]) -> dict[str, Any]:
    """The input schema as callers see it (MCP, OpenAPI): with ``idempotency_key`` where offered."""
    schema: dict[str, Any] = tool["input_schema"]
    if not offers_idempotency(tool):
        return schema
    properties = {**schema.get("properties", {}), "idempotency_key": IDEMPOTENCY_KEY_SCHEMA}
    return {**schema, "properties": properties}
