"""The tool manifest: every family's tool metadata, shipped in the layer as ``manifest.json``.

A function can list (and later route) the tools of every family without importing their code.
The file is generated from the families' declarations (``toolfront manifest``) and a test fails
when it differs from what the code declares, so it cannot drift.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from toolfront.tools.rules import ADMIN_WRITE_COST, ToolRules

if TYPE_CHECKING:  # imported where an entry is read: the approvals function reads only titles
    from toolfront.tools.definition import Annotations

MANIFEST_FILE = "manifest.json"


@dataclass(frozen=True, slots=True)
class ToolInfo(ToolRules):
    """A manifest entry (a tool of any family, read without its code), answering the same rules a
    ``Tool`` answers (``ToolRules``): what MCP, OpenAPI and the docs page decide from."""

    name: str
    audience: str
    annotations: Annotations
    replay: bool
    danger: str | None  # "always", "check" (a danger check) or None
    credentials: tuple[str, ...]
    client_token: str | None
    cost: int | str | None  # an int, "dynamic" (a cost function) or None (the default rule)

    @classmethod
    def of(cls, entry: dict[str, Any]) -> ToolInfo:
        from toolfront.tools.definition import Annotations

        return cls(
            name=str(entry["name"]),
            audience=str(entry["audience"]),
            annotations=Annotations(**entry["annotations"]),
            replay=bool(entry["replay"]),
            danger=entry.get("danger"),
            credentials=tuple(entry.get("credentials") or ()),
            client_token=entry.get("client_token"),
            cost=entry.get("cost"),
        )

    @property
    def documented_cost(self) -> int | str:
        """Units per call as the docs state them: the declared int, "dynamic", or the default rule."""
        if self.cost is not None:
            return self.cost
        return ADMIN_WRITE_COST if self.is_admin_write else 1


@cache
def load_manifest() -> dict[str, Any]:
    """The manifest shipped with this package (read once per process)."""
    text = resources.files("toolfront").joinpath(MANIFEST_FILE).read_text(encoding="utf-8")
    manifest: dict[str, Any] = json.loads(text)
    return manifest


@cache
def _by_name() -> dict[str, dict[str, Any]]:
    return {str(tool["name"]): tool for tool in load_manifest()["tools"]}


def manifest_tool(name: str) -> dict[str, Any]:
    """A family tool's manifest entry by name (one the manifest lacks: its name as its title), read
    once per process: what the approvals function shows of a held call's tool without its code."""
    return _by_name().get(name) or {"name": name, "title": name, "description": ""}


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
    return ToolInfo.of(tool).offers_idempotency


def offered_input_schema(tool: dict[str, Any]) -> dict[str, Any]:
    """The input schema as callers see it (MCP, OpenAPI): with ``idempotency_key`` where offered."""
    schema: dict[str, Any] = tool["input_schema"]
    if not offers_idempotency(tool):
        return schema
    properties = {**schema.get("properties", {}), "idempotency_key": IDEMPOTENCY_KEY_SCHEMA}
    return {**schema, "properties": properties}
